package controllers_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kinds/product"
)

// dashboard is the part of a Grafana dashboard the test reads: each panel's queries.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var (
	metricName = regexp.MustCompile(`\b(?:apimsync|controller_runtime|workqueue|rest_client)_[a-z_]+\b`)
	byLabels   = regexp.MustCompile(`\bby \(([^)]*)\)`)
	matchers   = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	descName   = regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// TestDashboardQueriesWhatTheManagerExposes (issue 46): every query of config/grafana's dashboard names
// metrics the manager really exposes — gathered from its registry after a sync, or described by
// apimsync's own collectors for those that have no sample until something happens (a drift repair, a
// deprecated product) — and groups and filters them by labels those metrics have. The pacer's gauges are
// gathered: they exist once a tenant was called.
func TestDashboardQueriesWhatTheManagerExposes(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)

	labels := map[string][]string{} // metric → its labels
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels[f.GetName()], l.GetName()) {
					labels[f.GetName()] = append(labels[f.GetName()], l.GetName())
				}
			}
		}
		if _, ok := labels[f.GetName()]; !ok {
			labels[f.GetName()] = nil
		}
	}
	for _, gauge := range []string{"apimsync_remote_learnt_rate", "apimsync_remote_concurrency_limit"} {
		if !slices.Contains(labels[gauge], "tenant") {
			t.Errorf("the manager exposes no %s by tenant after a sync", gauge)
		}
	}
	for _, c := range []prometheus.Collector{engine.ObjectsByState, engine.UnmanagedObjects, engine.DriftRepairs, engine.RemoteCalls,
		engine.RetryAfterCapped, engine.RemoteCallSeconds, product.DeprecatedProductApplications, product.ProductLifecycleChanged} {
		ch := make(chan *prometheus.Desc, 4)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			name, vars := descName.FindStringSubmatch(d.String()), descLabels.FindStringSubmatch(d.String())
			if name == nil || vars == nil {
				t.Fatalf("cannot read %s", d)
			}
			labels[name[1]] = strings.Split(vars[1], ",")
		}
	}

	raw, err := os.ReadFile("../config/grafana/apimsync-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if len(d.Panels) < 10 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			names := metricName.FindAllString(q.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q names no metric", p.Title, q.Expr)
			}
			for _, n := range names {
				family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				have, ok := labels[family]
				if !ok {
					t.Errorf("panel %q: the manager exposes no %s", p.Title, n)
					continue
				}
				var used []string
				for _, by := range byLabels.FindAllStringSubmatch(q.Expr, -1) {
					for _, l := range strings.Split(by[1], ",") {
						used = append(used, strings.TrimSpace(l))
					}
				}
				for _, m := range matchers.FindAllStringSubmatch(q.Expr, -1) {
					used = append(used, m[1])
				}
				for _, l := range used {
					if l != "le" && !slices.Contains(have, l) {
						t.Errorf("panel %q: %s has no label %q (it has %v)", p.Title, family, l, have)
					}
				}
			}
		}
	}
}
