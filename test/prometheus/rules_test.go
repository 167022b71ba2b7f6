// Package prometheus checks config/prometheus: the rules parse with Prometheus' own rule parser and name
// the metrics apimsync exports.
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

	"github.com/apimsync/apimsync/controllers/engine"
)

// TestPrometheusRuleParses: the PrometheusRule's groups are valid Prometheus rules, the deprecation alert
// is there, and its expression uses the metrics the manager exports.
func TestPrometheusRuleParses(t *testing.T) {
	raw, err := os.ReadFile("../../config/prometheus/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
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
	found := false
	for _, g := range parsed.Groups {
		for _, r := range g.Rules {
			if r.Alert != "APIProductDeprecatedInUse" {
				continue
			}
			found = true
			for _, metric := range []string{engine.DeprecatedProductApplicationsName, engine.ProductLifecycleChangedName} {
				if !strings.Contains(r.Expr, metric) {
					t.Errorf("the alert's expression does not use %s: %s", metric, r.Expr)
				}
			}
		}
	}
	if !found {
		t.Errorf("no APIProductDeprecatedInUse alert")
	}
}
