package controllers_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kinds/applicationplan"
	"github.com/apimsync/apimsync/controllers/kinds/backend"
	productkind "github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/controllers/kit/children"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// applySamples creates samples/ in ns, its provider account pointed at ns's simulator tenant, and
// returns the synced objects.
func applySamples(t *testing.T, ns string) []engine.Object {
	t.Helper()
	rendered, err := testenv.Render("samples")
	if err != nil {
		t.Fatal(err)
	}
	adminURL, token := harness.TenantOf(ns)
	var out []engine.Object
	for _, u := range rendered {
		u.SetNamespace(ns)
		if u.GetKind() == "Secret" && u.GetName() == v1alpha1.DefaultProviderAccountSecret {
			u.Object["stringData"] = map[string]any{"adminURL": adminURL, "token": token, "allowInsecureHTTP": "true"}
			delete(u.Object, "data")
		}
		if err := harness.K8s.Create(context.Background(), u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if obj := typedSynced(t, u); obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

// typedSynced is an empty object of u's kind, named as u, when the table of kinds syncs that kind.
func typedSynced(_ *testing.T, u *unstructured.Unstructured) engine.Object {
	k := controllers.KindNamed(u.GetKind())
	if k == nil {
		return nil
	}
	obj := k.New().(engine.Object)
	obj.SetNamespace(u.GetNamespace())
	obj.SetName(u.GetName())
	return obj
}

// TestDriftChecksOfTheSamplesWriteNothing: porta stores some values in its own form (explicit ports,
// the apicast policy appended to chains); after convergence, drift checks of every sample object read
// 3scale and write nothing, and report no repair.
func TestDriftChecksOfTheSamplesWriteNothing(t *testing.T) {
	ns := harness.NewNamespace(t)
	objs := applySamples(t, ns)
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
	// What the samples' OpenAPI generates is synced too before the count starts: its first sync is no
	// drift check's write.
	harness.Eventually(t, harness.WaitTimeout, func() string {
		var list v1alpha1.OpenAPIList
		if err := harness.K8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		for _, o := range list.Items {
			if c := meta.FindStatusCondition(o.Status.Conditions, v1alpha1.ConditionSynced); c == nil || c.Status != metav1.ConditionTrue ||
				o.Status.ObservedGeneration != o.Generation {
				return fmt.Sprintf("OpenAPI %s: what it generates is not Synced yet", o.Name)
			}
		}
		return ""
	})
	t.Logf("first sync of the %d samples: %d calls, %d writes", len(objs), harness.RemoteCalls(ns), harness.WritesTo(ns))
	before := harness.WritesTo(ns)
	statsBefore := map[simulator.CallKey]int{}
	for _, c := range harness.Sim.Stats().Calls {
		statsBefore[c.CallKey] = c.Count
	}
	for round := 1; round <= 3; round++ {
		value := fmt.Sprint(round)
		for _, o := range objs {
			harness.Update(t, o, func() { o.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: value}) })
		}
		harness.Eventually(t, harness.WaitTimeout, func() string {
			for _, o := range objs {
				if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
					return err.Error()
				}
				if o.GetSyncStatus().SyncNow != value {
					return fmt.Sprintf("%s has not acted on sync-now %s", o.GetName(), value)
				}
			}
			return ""
		})
	}
	if got := harness.WritesTo(ns) - before; got != 0 {
		t.Errorf("3 drift checks of the samples made %d writes, want 0", got)
		for _, c := range harness.Sim.Stats().Calls {
			if n := c.Count - statsBefore[c.CallKey]; c.Tenant == ns && c.Method != "GET" && n > 0 {
				t.Logf("%s %s %d: %d", c.Method, c.Endpoint, c.Code, n)
			}
		}
	}
	for _, o := range objs {
		if ev := strings.Join(harness.EventsOf(t, o), "\n"); strings.Contains(ev, v1alpha1.ReasonDriftRepaired) {
			t.Errorf("%s reported a repair: %s", o.GetName(), ev)
		}
	}
}

// TestRemovedFieldsGoBackToPortasDefaults: a gateway error response, a host header rewrite and a plan's
// fees removed from the spec are reset in 3scale to porta's defaults.
func TestRemovedFieldsGoBackToPortasDefaults(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	product.Spec.Authentication.UserKey.Security = &v1alpha1.SecuritySpec{HostHeader: "pets.internal"}
	product.Spec.Authentication.UserKey.GatewayResponse = &v1alpha1.GatewayResponseSpec{
		AuthFailed: &v1alpha1.GatewayErrorResponse{Status: 401, ContentType: "application/json", Body: `{"error":"no"}`}}
	plan.Spec.SetupFee, plan.Spec.CostMonth = "10.00", "99.00"
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	harness.Update(t, product, func() {
		product.Spec.Authentication.UserKey.Security = nil
		product.Spec.Authentication.UserKey.GatewayResponse = nil
	})
	harness.Update(t, plan, func() { plan.Spec.SetupFee, plan.Spec.CostMonth = "", "" })
	harness.WaitState(t, v1alpha1.ConditionSynced, product, plan)
	proxy := harness.Sim.Objects(ns, simulator.KindProxies)[0]
	for k, want := range map[string]any{"error_status_auth_failed": float64(403), "error_headers_auth_failed": "text/plain; charset=us-ascii",
		"error_auth_failed": "Authentication failed", "hostname_rewrite": ""} {
		if got := proxy[k]; fmt.Sprint(got) != fmt.Sprint(want) && !(want == "" && got == nil) {
			t.Errorf("proxy %s = %v, want porta's default %v", k, got, want)
		}
	}
	p := harness.Sim.Objects(ns, simulator.KindPlans)[0]
	if fee, _ := strconv.ParseFloat(fmt.Sprint(p["setup_fee"]), 64); fee != 0 || fmt.Sprint(p["cost_per_month"]) != fmt.Sprint(p["setup_fee"]) {
		t.Errorf("plan fees %v and %v, want 0 and 0", p["setup_fee"], p["cost_per_month"])
	}
}

// rulesByPosition returns the tenant's mapping rules in 3scale by position.
func rulesByPosition(ns string) []map[string]any {
	rules := harness.Sim.Objects(ns, simulator.KindMappingRules)
	slices.SortStableFunc(rules, func(a, b map[string]any) int {
		pa, _ := strconv.ParseFloat(fmt.Sprint(a["position"]), 64)
		pb, _ := strconv.ParseFloat(fmt.Sprint(b["position"]), 64)
		return cmp.Compare(pa, pb)
	})
	return rules
}

// remoteRuleOrder returns the backend's mapping rules in 3scale, "METHOD pattern" by position.
func remoteRuleOrder(ns string) []string {
	rules := rulesByPosition(ns)
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, fmt.Sprintf("%v %v last=%v", r["http_method"], r["pattern"], r["last"]))
	}
	return out
}

// TestMappingRulesFollowTheSpecOrder: positions in 3scale follow the spec's order, an edited rule keeps
// its place (not re-created at the end), a reordered spec reorders 3scale, and last is honoured.
func TestMappingRulesFollowTheSpecOrder(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	want := func(rules []v1alpha1.MappingRuleSpec) []string {
		out := make([]string, 0, len(rules))
		for _, r := range rules {
			out = append(out, fmt.Sprintf("%s %s last=%v", r.HTTPMethod, r.Pattern, r.Last))
		}
		return out
	}
	check := func(step string) {
		t.Helper()
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(backend), backend); err != nil {
				return err.Error()
			}
			if got, w := remoteRuleOrder(ns), want(backend.Spec.MappingRules); !slices.Equal(got, w) {
				return fmt.Sprintf("%s: rules in 3scale %v, want %v", step, got, w)
			}
			return ""
		})
	}
	check("created")
	harness.Update(t, backend, func() {
		backend.Spec.MappingRules[1].Pattern = "/pets/{id}/details$"
		backend.Spec.MappingRules[1].Last = true
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	check("edited in the middle")
	harness.Update(t, backend, func() {
		r := backend.Spec.MappingRules
		backend.Spec.MappingRules = []v1alpha1.MappingRuleSpec{r[2], r[0], r[1]}
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	check("reordered")
}

// TestOnePatternCountedForSeveralMetrics: 3scale keeps several rules of one method and pattern, each
// counting another metric; a backend with such rules syncs, a change of one rule's metric is one update
// (the rule keeps its place), and swapping two of them writes nothing until one of them is last (the order
// then matters, and 3scale follows the spec's).
func TestOnePatternCountedForSeveralMetrics(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	backend.Spec.MappingRules = append(backend.Spec.MappingRules,
		v1alpha1.MappingRuleSpec{HTTPMethod: "GET", Pattern: "/pets$", MetricMethodRef: "photos_mb", Increment: 3})
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	remote := func() []string {
		names := map[string]string{}
		for _, m := range harness.Sim.Objects(ns, simulator.KindMetrics) {
			name, _, _ := strings.Cut(fmt.Sprint(m["system_name"]), ".")
			names[fmt.Sprint(m["id"])] = name
		}
		rules := rulesByPosition(ns)
		out := make([]string, 0, len(rules))
		for _, r := range rules {
			out = append(out, fmt.Sprintf("%v %v %s", r["http_method"], r["pattern"], names[fmt.Sprint(r["metric_id"])]))
		}
		return out
	}
	want := func() []string {
		out := make([]string, 0, len(backend.Spec.MappingRules))
		for _, r := range backend.Spec.MappingRules {
			out = append(out, fmt.Sprintf("%s %s %s", r.HTTPMethod, r.Pattern, r.MetricMethodRef))
		}
		return out
	}
	if got := remote(); !slices.Equal(got, want()) {
		t.Fatalf("rules in 3scale %v, want %v", got, want())
	}
	before := harness.WritesTo(ns)
	harness.Update(t, backend, func() { backend.Spec.MappingRules[3].MetricMethodRef = "get_pet" })
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	if got := remote(); !slices.Equal(got, want()) {
		t.Errorf("after a rule's metric changed: rules in 3scale %v, want %v", got, want())
	}
	if n := harness.WritesTo(ns) - before; n != 1 {
		t.Errorf("%d writes to change a rule's metric, want 1 (an update): %v", n, harness.LastWrites(ns, n))
	}
	// Without a rule marked last, every rule that matches counts: a swap changes nothing 3scale counts,
	// and nothing is written.
	before = harness.WritesTo(ns)
	harness.Update(t, backend, func() {
		r := backend.Spec.MappingRules
		backend.Spec.MappingRules = []v1alpha1.MappingRuleSpec{r[3], r[1], r[2], r[0]}
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes for a swap of rules none of which is last, want 0: %v", n, harness.LastWrites(ns, n))
	}
	// With one marked last, the order matters and 3scale's becomes the spec's.
	harness.Update(t, backend, func() { backend.Spec.MappingRules[0].Last = true })
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	if got := remote(); !slices.Equal(got, want()) {
		t.Errorf("after a swap and a rule marked last: rules in 3scale %v, want %v", got, want())
	}
}

// TestPlanDriftCheckTrustsItsDependenciesSnapshots: a plan's drift check (background work) takes the
// metric ids of its product and backends from their cached snapshots, which their own drift checks
// refresh; sync-now (a forced read that is not background work) reads them again.
func TestPlanDriftCheckTrustsItsDependenciesSnapshots(t *testing.T) {
	tenant := "plan-drift-deps"
	adminURL, token := harness.TenantOf(tenant)
	remote, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: token,
		Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	snapshots := cache.NewSnapshots(16)
	snapshots.Put(tenant, "Product", 7, &productkind.Snapshot{Children: &children.Snapshot{
		Metrics: map[string]tsclient.Metric{"hits": {ID: 70}}, Methods: map[string]tsclient.Metric{"list": {ID: 71}}}})
	snapshots.Put(tenant, "Backend", 9, &backend.Snapshot{Children: &children.Snapshot{
		Metrics: map[string]tsclient.Metric{"hits": {ID: 90}}}})
	s := &applicationplan.Syncer{Peers: snapshots}
	want := applicationplan.Desired{ProductID: 7, Backends: map[string]int64{"pets": 9}}
	sess := &engine.Session{Remote: remote, Tenant: tenant, ForceRead: true}

	ids, err := s.MetricIDs(tsclient.WithBackground(context.Background()), sess, want)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"/hits": 70, "/list": 71, "pets/hits": 90}; !maps.Equal(ids, want) {
		t.Errorf("metric ids = %v, want %v", ids, want)
	}
	if n := harness.RemoteCalls(tenant); n != 0 {
		t.Errorf("a plan's drift check made %d calls for metric ids its product's and backend's snapshots hold, want 0", n)
	}
	_, _ = s.MetricIDs(context.Background(), sess, want)
	if harness.RemoteCalls(tenant) == 0 {
		t.Errorf("sync-now of a plan did not read its product's and backends' metrics again")
	}
}
