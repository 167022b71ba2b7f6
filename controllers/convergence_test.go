package controllers_test

import (
	"context"
	"math/rand"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/argocd"
	"github.com/apimsync/apimsync/test/testenv"
)

// TestWorstOrderConverges applies plans, then the product, then the backend, then the Secret: every
// object waits (Orphan, naming what it waits for) and all converge once the Secret comes.
func TestWorstOrderConverges(t *testing.T) {
	ns := harness.NewNamespace(t)
	plan := harness.BasicPlan(ns, "basic", "petstore")
	product := harness.PetstoreProduct(ns, "pets")
	backend := harness.PetsBackend(ns)
	harness.Create(t, plan)
	harness.WaitReason(t, plan, v1alpha1.ConditionOrphan, v1alpha1.ReasonProductNotFound)
	harness.Create(t, product)
	harness.WaitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonProviderAccountNotFound)
	harness.Create(t, backend)
	harness.WaitReason(t, backend, v1alpha1.ConditionOrphan, v1alpha1.ReasonProviderAccountNotFound)
	start := time.Now()
	harness.Create(t, harness.DefaultSecret(ns))
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	t.Logf("converged %s after the Secret appeared", time.Since(start).Round(time.Millisecond))

	want := map[string]int{"backend_apis": 1, "services": 1, "application_plans": 1, "limits": 2, "pricing_rules": 2, "backend_usages": 1,
		"mapping_rules": 4, "metrics": 6} // hits×2, photos_mb, list_pets, get_pet, search
	for kind, n := range want {
		if got := harness.Sim.Count(ns, kind); got != n {
			t.Errorf("3scale has %d %s, want %d", got, kind, n)
		}
	}
	if backend.Status.BackendID == 0 || product.Status.ProductID == 0 || plan.Status.PlanID == 0 {
		t.Errorf("remote ids missing from status: %d %d %d", backend.Status.BackendID, product.Status.ProductID, plan.Status.PlanID)
	}
	if backend.Status.SystemName != "pets" || !strings.HasSuffix(backend.Status.TenantHost, "/t/"+ns) {
		t.Errorf("status systemName %q tenantHost %q", backend.Status.SystemName, backend.Status.TenantHost)
	}
}

// TestRandomOrdersConverge applies the same objects in several random orders.
func TestRandomOrdersConverge(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		ns := harness.NewNamespace(t)
		objs := []client.Object{harness.DefaultSecret(ns), harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")}
		rand.New(rand.NewSource(seed)).Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		for _, o := range objs {
			harness.Create(t, o)
			time.Sleep(50 * time.Millisecond)
		}
		var synced []engine.Object
		for _, o := range objs {
			if s, ok := o.(engine.Object); ok {
				synced = append(synced, s)
			}
		}
		harness.WaitState(t, v1alpha1.ConditionSynced, synced...)
		if got := harness.Sim.Count(ns, "application_plans"); got != 2 {
			t.Errorf("seed %d: %d plans in 3scale, want 2", seed, got)
		}
	}
}

// TestSteadyStateCostsNoRemoteCall: after convergence, resyncs and a manager restart make no remote call;
// one edited mapping rule costs at most 2 (the update and the deploy).
func TestSteadyStateCostsNoRemoteCall(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	firstSync := harness.RemoteCalls(ns)
	t.Logf("first sync of 1 backend, 1 product, 1 plan: %d remote calls", firstSync)

	// Resyncs: touch a label on every object 5 times (each a reconcile), then wait.
	base := harness.RemoteCalls(ns)
	for i := range 5 {
		for _, o := range []engine.Object{backend, product, plan} {
			if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
				t.Fatal(err)
			}
			patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
			o.SetLabels(map[string]string{"resync": string(rune('a' + i))})
			if err := harness.K8s.Patch(context.Background(), o, patch); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(2 * time.Second)
	if got := harness.RemoteCalls(ns) - base; got != 0 {
		t.Errorf("15 resyncs made %d remote calls, want 0", got)
	}

	// A metadata-only change of the provider-account Secret (a GitOps tool's label) is no new content:
	// no credentials check, and no object writes its status again.
	versions := resourceVersions(t, backend, product, plan)
	secret := harness.DefaultSecret(ns)
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.SetLabels(map[string]string{"argocd.argoproj.io/instance": "pets"})
	if err := harness.K8s.Patch(context.Background(), secret, patch); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if got := harness.RemoteCalls(ns) - base; got != 0 {
		t.Errorf("a label on the provider-account Secret made %d remote calls, want 0", got)
	}
	if got := resourceVersions(t, backend, product, plan); !slices.Equal(got, versions) {
		t.Errorf("a label on the provider-account Secret made objects write their status: resourceVersions %v, before %v", got, versions)
	}

	// A manager restart: fresh caches, every object reconciled again.
	harness.StopManager()
	if err := harness.StartManager(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	if got := harness.RemoteCalls(ns) - base; got != 0 {
		t.Errorf("a manager restart made %d remote calls, want 0", got)
	}

	// One edited mapping rule. The product's plan waits quietly while it syncs, and stays Synced as it
	// is: its product's metrics did not change, so it costs no call.
	base, planBase := harness.RemoteCalls(ns), planCalls(ns)
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(plan), plan); err != nil {
		t.Fatal(err)
	}
	planSynced := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionSynced).LastTransitionTime
	harness.EditAndWait(t, product, func() { product.Spec.MappingRules[0].Increment = 3 })
	edit := harness.RemoteCalls(ns) - base
	t.Logf("one edited mapping rule after a restart: %d remote calls", edit)
	if got := planCalls(ns) - planBase; got != 0 {
		t.Errorf("the product's plan made %d remote calls while the product was edited, want 0", got)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, plan)
	if c := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionSynced); !c.LastTransitionTime.Equal(&planSynced) {
		t.Errorf("the product's plan left Synced while the product was edited (Synced again at %v, before at %v)", c.LastTransitionTime, planSynced)
	}

	// After a restart the snapshot cache is empty, so the edit reads the product once; edit again now
	// that it is warm.
	base = harness.RemoteCalls(ns)
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	product.Spec.MappingRules[0].Increment = 4
	if err := harness.K8s.Update(context.Background(), product); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	time.Sleep(time.Second)
	if got := harness.RemoteCalls(ns) - base; got > 2 {
		t.Errorf("one edited mapping rule made %d remote calls, want at most 2", got)
	} else {
		t.Logf("one edited mapping rule (warm cache): %d remote calls", got)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(plan), plan); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := harness.SyncState(t, plan); s != v1alpha1.ConditionSynced {
		t.Errorf("plan is %s after the product edit", s)
	}
}

// TestPlanResolvesMetricIDsFromStatus: Products and Backends record their metrics' and methods' ids in
// status; a plan edited right after a restart (nothing cached) takes the ids from there and reads no
// metric, method or mapping rule of its product or backend: the edit costs the plan's own reads and the
// write.
func TestPlanResolvesMetricIDsFromStatus(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	for o, names := range map[engine.Object][]string{backend: {"hits", "photos_mb", "list_pets", "get_pet"}, product: {"hits", "search"}} {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		ids := o.GetSyncStatus().MetricIDs
		for _, name := range names {
			if ids[name] == 0 {
				t.Errorf("%T %s records metric ids %v, want one for %q", o, o.GetName(), ids, name)
			}
		}
	}

	harness.StopManager()
	if err := harness.StartManager(); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	base, reads := harness.RemoteCalls(ns), metricReads(ns)
	harness.EditAndWait(t, plan, func() { plan.Spec.Limits[0].Value = 20 })
	if got := metricReads(ns) - reads; got != 0 {
		t.Errorf("a plan edited after a restart read the metrics, methods or mapping rules of its product or backend %d times, want 0", got)
	}
	t.Logf("one edited limit after a restart: %d remote calls", harness.RemoteCalls(ns)-base)
}

// planCalls counts a tenant's calls to application plans' endpoints (the plans, their limits and pricing
// rules).
func planCalls(tenant string) int {
	n := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == tenant && strings.Contains(c.Endpoint, "application_plan") {
			n += c.Count
		}
	}
	return n
}

// metricReads counts a tenant's reads of the metrics, methods and mapping rules of products and backends.
func metricReads(tenant string) int {
	n := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == tenant && c.Method == http.MethodGet &&
			(strings.HasSuffix(c.Endpoint, "/metrics.json") || strings.HasSuffix(c.Endpoint, "/methods.json") || strings.HasSuffix(c.Endpoint, "/mapping_rules.json")) {
			n += c.Count
		}
	}
	return n
}

// TestInvalidCascadesAndRecovers: a Backend made Invalid makes its Product and the Product's plans
// Invalid, naming the root; fixing the Backend's Secret brings all back to Synced with no other step.
func TestInvalidCascadesAndRecovers(t *testing.T) {
	ns := harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	broken := harness.ProviderSecret(ns, "backend-account", adminURL, "")
	backend := harness.PetsBackend(ns)
	backend.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "backend-account"}
	product, plan := harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), broken, backend, product, plan)
	harness.WaitReason(t, backend, v1alpha1.ConditionInvalid, v1alpha1.ReasonProviderAccountInvalid)
	harness.WaitReason(t, product, v1alpha1.ConditionInvalid, v1alpha1.ReasonBackendInvalid)
	harness.WaitReason(t, plan, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductInvalid)
	if _, _, msg := harness.SyncState(t, plan); !strings.Contains(msg, "backend-account") {
		t.Errorf("the plan's message does not name the root cause: %q", msg)
	}
	assertHealth(t, "Degraded", status.FailedStatus, plan)

	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(broken), broken); err != nil {
		t.Fatal(err)
	}
	broken.StringData = map[string]string{"token": token}
	if err := harness.K8s.Update(context.Background(), broken); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	assertHealth(t, "Healthy", status.CurrentStatus, backend, product, plan)
}

// TestPlanSpecErrorsShowWhileItsProductWaits: a plan's own mistakes show at once, whatever its Product is
// waiting for (here a Backend not created yet) or whether it exists: a mistyped metric of the product or
// of a backend, a backend the product does not use, overlapping pricing ranges. Once fixed, the plan
// syncs.
func TestPlanSpecErrorsShowWhileItsProductWaits(t *testing.T) {
	ns := harness.NewNamespace(t)
	product := harness.PetstoreProduct(ns, "pets", "later")
	typo, unused, overlap := harness.BasicPlan(ns, "typo", "petstore"), harness.BasicPlan(ns, "unused", "petstore"), harness.BasicPlan(ns, "overlap", "not-yet")
	backendTypo := harness.BasicPlan(ns, "backend-typo", "petstore")
	typo.Spec.Limits[0].MetricMethodRef.SystemName = "serach"
	unused.Spec.Limits[1].MetricMethodRef.Backend = "users"
	overlap.Spec.PricingRules[1].From = 50 // CEL cannot afford this check; the controller does it
	backendTypo.Spec.PricingRules[0].MetricMethodRef.SystemName = "list_petz"
	harness.Create(t, harness.DefaultSecret(ns), harness.PetsBackend(ns), product, typo, unused, overlap, backendTypo)
	for _, tc := range []struct {
		plan          *v1alpha1.ApplicationPlan
		state, reason string
		want          string
	}{
		{typo, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec, `metric or method "serach" is not defined in Product "petstore"`},
		{unused, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec, `names Backend "users", which Product "petstore" does not use`},
		{overlap, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec, `pricingRules[1] (50-1000) overlaps pricingRules[0] (1-100)`},
		{backendTypo, v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricNotFound, `waiting for metric "list_petz" to be defined in Backend "pets"`},
	} {
		harness.WaitReason(t, tc.plan, tc.state, tc.reason)
		if _, _, msg := harness.SyncState(t, tc.plan); !strings.Contains(msg, tc.want) {
			t.Errorf("plan %s: message %q, want it to say %q", tc.plan.Name, msg, tc.want)
		}
	}
	if state, reason, _ := harness.SyncState(t, product); state == v1alpha1.ConditionSynced {
		t.Fatalf("the Product is %s/%s: the plans were not checked while it waited", state, reason)
	}

	later := harness.PetsBackend(ns)
	later.Name = "later"
	harness.Create(t, later)
	harness.Update(t, typo, func() { typo.Spec.Limits[0].MetricMethodRef.SystemName = "search" })
	harness.WaitState(t, v1alpha1.ConditionSynced, product, typo)
}

// assertHealth checks what Argo CD (the shipped Lua health check) and Flux (kstatus) say of live objects.
func assertHealth(t *testing.T, wantArgo string, wantKstatus status.Status, objs ...engine.Object) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := argocd.Script(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		h, err := argocd.Evaluate(script, u)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != wantArgo {
			t.Errorf("Argo CD health of %s = %s (%s), want %s", o.GetName(), h.Status, h.Message, wantArgo)
		}
		res, err := status.Compute(&unstructured.Unstructured{Object: u})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != wantKstatus {
			t.Errorf("kstatus of %s = %s (%s), want %s", o.GetName(), res.Status, res.Message, wantKstatus)
		}
	}
}

// resourceVersions reads the objects' resourceVersions as they are stored now.
func resourceVersions(t *testing.T, objs ...client.Object) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o.GetResourceVersion())
	}
	return out
}
