// Package prometheus checks config/prometheus: the rules parse with Prometheus' own rule parser, name
// the metrics apimsync exports, and the deprecation alert's threshold is set without editing its PromQL.
package prometheus

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/test/testenv"
)

const (
	alertName     = "APIProductDeprecatedInUse"
	thresholdName = "apimsync:deprecated_product_alert_after_seconds"
)

// parseRules feeds a PrometheusRule's spec to Prometheus' rule parser (which parses the PromQL and the
// templates too).
func parseRules(t *testing.T, raw []byte) *rulefmt.RuleGroups {
	t.Helper()
	var rule struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &rule); err != nil || rule.Kind != "PrometheusRule" {
		t.Fatalf("not a PrometheusRule: %v", err)
	}
	groups, err := yaml.Marshal(rule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	parsed, errs := rulefmt.Parse(groups, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.Default())
	if len(errs) > 0 {
		t.Fatalf("the rules do not parse: %v", errs)
	}
	return parsed
}

// deprecationRules returns the threshold's recording rule and the deprecation alert.
func deprecationRules(t *testing.T, parsed *rulefmt.RuleGroups) (threshold, alert rulefmt.Rule) {
	t.Helper()
	for _, g := range parsed.Groups {
		for _, r := range g.Rules {
			switch {
			case r.Alert == alertName:
				alert = r
			case r.Record == thresholdName:
				threshold = r
			}
		}
	}
	if alert.Alert == "" || threshold.Record == "" {
		t.Fatalf("no %s alert or %s rule", alertName, thresholdName)
	}
	return threshold, alert
}

// TestPrometheusRuleParses: the PrometheusRule's groups are valid Prometheus rules, the deprecation alert
// is there, and its expression uses the metrics the manager exports and the threshold rule.
func TestPrometheusRuleParses(t *testing.T) {
	raw, err := os.ReadFile("../../config/prometheus/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	threshold, alert := deprecationRules(t, parseRules(t, raw))
	for _, metric := range []string{product.DeprecatedProductApplicationsName, product.ProductLifecycleChangedName, thresholdName} {
		if !strings.Contains(alert.Expr, metric) {
			t.Errorf("the alert's expression does not use %s: %s", metric, alert.Expr)
		}
	}
	if threshold.Expr != "vector(2592000)" {
		t.Errorf("the default threshold is %q, want 30 days (vector(2592000))", threshold.Expr)
	}
}

// TestDeprecationAlertThresholdIsConfigurable: built with kustomize, config/prometheus keeps the 30-day
// threshold and the example overlay sets 14 days, without touching the alert's PromQL; both still parse.
func TestDeprecationAlertThresholdIsConfigurable(t *testing.T) {
	cases := map[string]struct {
		dir       string
		threshold string
	}{
		"default":       {dir: "config/prometheus", threshold: "vector(2592000)"},
		"14-day policy": {dir: "config/examples/prometheus-deprecated-14d", threshold: "vector(1209600)"},
	}
	_, defaultAlert := func() (rulefmt.Rule, rulefmt.Rule) {
		raw, err := os.ReadFile("../../config/prometheus/rules.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return deprecationRules(t, parseRules(t, raw))
	}()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := testenv.Render(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 {
				t.Fatalf("%s renders %d objects, want the PrometheusRule", tc.dir, len(objs))
			}
			raw, err := yaml.Marshal(objs[0].Object)
			if err != nil {
				t.Fatal(err)
			}
			threshold, alert := deprecationRules(t, parseRules(t, raw))
			if threshold.Expr != tc.threshold {
				t.Errorf("threshold %q, want %q", threshold.Expr, tc.threshold)
			}
			if alert.Expr != defaultAlert.Expr {
				t.Errorf("the overlay changed the alert's PromQL:\n%s", alert.Expr)
			}
		})
	}
}
