package controllers

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
	"github.com/apimsync/apimsync/test/argocd"
	"github.com/apimsync/apimsync/test/testenv"
)

// TestWorstOrderConverges applies plans, then the product, then the backend, then the Secret: every
// object waits (Orphan, naming what it waits for) and all converge once the Secret comes.
func TestWorstOrderConverges(t *testing.T) {
	ns := newNamespace(t)
	plan := basicPlan(ns, "basic", "petstore")
	product := petstoreProduct(ns, "pets")
	backend := petsBackend(ns)
	create(t, plan)
	waitReason(t, plan, v1alpha1.ConditionOrphan, v1alpha1.ReasonProductNotFound)
	create(t, product)
	waitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonProviderAccountNotFound)
	create(t, backend)
	waitReason(t, backend, v1alpha1.ConditionOrphan, v1alpha1.ReasonProviderAccountNotFound)
	start := time.Now()
	create(t, defaultSecret(ns))
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	t.Logf("converged %s after the Secret appeared", time.Since(start).Round(time.Millisecond))

	want := map[string]int{"backend_apis": 1, "services": 1, "application_plans": 1, "limits": 2, "pricing_rules": 2, "backend_usages": 1,
		"mapping_rules": 4, "metrics": 6} // hits×2, photos_mb, list_pets, get_pet, search
	for kind, n := range want {
		if got := sim.Count(ns, kind); got != n {
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
		ns := newNamespace(t)
		objs := []client.Object{defaultSecret(ns), petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore"), basicPlan(ns, "gold", "petstore")}
		rand.New(rand.NewSource(seed)).Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		for _, o := range objs {
			create(t, o)
			time.Sleep(50 * time.Millisecond)
		}
		var synced []engine.Object
		for _, o := range objs {
			if s, ok := o.(engine.Object); ok {
				synced = append(synced, s)
			}
		}
		waitState(t, v1alpha1.ConditionSynced, synced...)
		if got := sim.Count(ns, "application_plans"); got != 2 {
			t.Errorf("seed %d: %d plans in 3scale, want 2", seed, got)
		}
	}
}

// waitReason waits for a sync state with a given reason.
func waitReason(t *testing.T, obj engine.Object, state, reason string) {
	t.Helper()
	eventually(t, waitTimeout, func() string {
		s, r, m := syncState(t, obj)
		if s != state || r != reason {
			return obj.GetName() + " is " + s + "/" + r + ": " + m + "; want " + state + "/" + reason
		}
		return ""
	})
}

// TestSteadyStateCostsNoRemoteCall: after convergence, resyncs and a manager restart make no remote call;
// one edited mapping rule costs at most 2 (the update and the deploy).
func TestSteadyStateCostsNoRemoteCall(t *testing.T) {
	ns := newNamespace(t)
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), backend, product, plan)
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	firstSync := remoteCalls(ns)
	t.Logf("first sync of 1 backend, 1 product, 1 plan: %d remote calls", firstSync)

	// Resyncs: touch a label on every object 5 times (each a reconcile), then wait.
	base := remoteCalls(ns)
	for i := range 5 {
		for _, o := range []engine.Object{backend, product, plan} {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
				t.Fatal(err)
			}
			patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
			o.SetLabels(map[string]string{"resync": string(rune('a' + i))})
			if err := k8s.Patch(context.Background(), o, patch); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(2 * time.Second)
	if got := remoteCalls(ns) - base; got != 0 {
		t.Errorf("15 resyncs made %d remote calls, want 0", got)
	}

	// A metadata-only change of the provider-account Secret (a GitOps tool's label) is no new content:
	// no credentials check, and no object writes its status again.
	versions := resourceVersions(t, backend, product, plan)
	secret := defaultSecret(ns)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.SetLabels(map[string]string{"argocd.argoproj.io/instance": "pets"})
	if err := k8s.Patch(context.Background(), secret, patch); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if got := remoteCalls(ns) - base; got != 0 {
		t.Errorf("a label on the provider-account Secret made %d remote calls, want 0", got)
	}
	if got := resourceVersions(t, backend, product, plan); !slices.Equal(got, versions) {
		t.Errorf("a label on the provider-account Secret made objects write their status: resourceVersions %v, before %v", got, versions)
	}

	// A manager restart: fresh caches, every object reconciled again.
	stopManager()
	if err := startManager(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	if got := remoteCalls(ns) - base; got != 0 {
		t.Errorf("a manager restart made %d remote calls, want 0", got)
	}

	// One edited mapping rule. The product's plan waits quietly while it syncs, and stays Synced as it
	// is: its product's metrics did not change, so it costs no call.
	base, planBase := remoteCalls(ns), planCalls(ns)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(plan), plan); err != nil {
		t.Fatal(err)
	}
	planSynced := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionSynced).LastTransitionTime
	editAndWait(t, product, func() { product.Spec.MappingRules[0].Increment = 3 })
	edit := remoteCalls(ns) - base
	t.Logf("one edited mapping rule after a restart: %d remote calls", edit)
	if got := planCalls(ns) - planBase; got != 0 {
		t.Errorf("the product's plan made %d remote calls while the product was edited, want 0", got)
	}
	waitState(t, v1alpha1.ConditionSynced, plan)
	if c := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionSynced); !c.LastTransitionTime.Equal(&planSynced) {
		t.Errorf("the product's plan left Synced while the product was edited (Synced again at %v, before at %v)", c.LastTransitionTime, planSynced)
	}

	// After a restart the snapshot cache is empty, so the edit reads the product once; edit again now
	// that it is warm.
	base = remoteCalls(ns)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	product.Spec.MappingRules[0].Increment = 4
	if err := k8s.Update(context.Background(), product); err != nil {
		t.Fatal(err)
	}
	waitState(t, v1alpha1.ConditionSynced, product)
	time.Sleep(time.Second)
	if got := remoteCalls(ns) - base; got > 2 {
		t.Errorf("one edited mapping rule made %d remote calls, want at most 2", got)
	} else {
		t.Logf("one edited mapping rule (warm cache): %d remote calls", got)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(plan), plan); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := syncState(t, plan); s != v1alpha1.ConditionSynced {
		t.Errorf("plan is %s after the product edit", s)
	}
}

// TestPlanResolvesMetricIDsFromStatus: Products and Backends record their metrics' and methods' ids in
// status; a plan edited right after a restart (nothing cached) takes the ids from there and reads no
// metric, method or mapping rule of its product or backend: the edit costs the plan's own reads and the
// write.
func TestPlanResolvesMetricIDsFromStatus(t *testing.T) {
	ns := newNamespace(t)
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), backend, product, plan)
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	for o, names := range map[engine.Object][]string{backend: {"hits", "photos_mb", "list_pets", "get_pet"}, product: {"hits", "search"}} {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		ids := o.GetSyncStatus().MetricIDs
		for _, name := range names {
			if ids[name] == 0 {
				t.Errorf("%T %s records metric ids %v, want one for %q", o, o.GetName(), ids, name)
			}
		}
	}

	stopManager()
	if err := startManager(); err != nil {
		t.Fatal(err)
	}
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	base, reads := remoteCalls(ns), metricReads(ns)
	editAndWait(t, plan, func() { plan.Spec.Limits[0].Value = 20 })
	if got := metricReads(ns) - reads; got != 0 {
		t.Errorf("a plan edited after a restart read the metrics, methods or mapping rules of its product or backend %d times, want 0", got)
	}
	t.Logf("one edited limit after a restart: %d remote calls", remoteCalls(ns)-base)
}

// editAndWait reads obj, changes it, updates it (again on a conflict with the controllers' status
// writes), waits until it is Synced at its new generation, and a second more for any call that follows.
func editAndWait(t *testing.T, obj engine.Object, change func()) {
	t.Helper()
	update(t, obj, change)
	waitState(t, v1alpha1.ConditionSynced, obj)
	time.Sleep(time.Second)
}

// planCalls counts a tenant's calls to application plans' endpoints (the plans, their limits and pricing
// rules).
func planCalls(tenant string) int {
	n := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == tenant && strings.Contains(c.Endpoint, "application_plan") {
			n += c.Count
		}
	}
	return n
}

// metricReads counts a tenant's reads of the metrics, methods and mapping rules of products and backends.
func metricReads(tenant string) int {
	n := 0
	for _, c := range sim.Stats().Calls {
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
	ns := newNamespace(t)
	adminURL, token := tenantOf(ns)
	broken := providerSecret(ns, "backend-account", adminURL, "")
	backend := petsBackend(ns)
	backend.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "backend-account"}
	product, plan := petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), broken, backend, product, plan)
	waitReason(t, backend, v1alpha1.ConditionInvalid, v1alpha1.ReasonProviderAccountInvalid)
	waitReason(t, product, v1alpha1.ConditionInvalid, v1alpha1.ReasonBackendInvalid)
	waitReason(t, plan, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductInvalid)
	if _, _, msg := syncState(t, plan); !strings.Contains(msg, "backend-account") {
		t.Errorf("the plan's message does not name the root cause: %q", msg)
	}
	assertHealth(t, "Degraded", status.FailedStatus, plan)

	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(broken), broken); err != nil {
		t.Fatal(err)
	}
	broken.StringData = map[string]string{"token": token}
	if err := k8s.Update(context.Background(), broken); err != nil {
		t.Fatal(err)
	}
	waitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	assertHealth(t, "Healthy", status.CurrentStatus, backend, product, plan)
}

// TestPlanSpecErrorsShowWhileItsProductWaits: a plan's own mistakes show at once, whatever its Product is
// waiting for (here a Backend not created yet) or whether it exists: a mistyped metric of the product or
// of a backend, a backend the product does not use, overlapping pricing ranges. Once fixed, the plan
// syncs.
func TestPlanSpecErrorsShowWhileItsProductWaits(t *testing.T) {
	ns := newNamespace(t)
	product := petstoreProduct(ns, "pets", "later")
	typo, unused, overlap := basicPlan(ns, "typo", "petstore"), basicPlan(ns, "unused", "petstore"), basicPlan(ns, "overlap", "not-yet")
	backendTypo := basicPlan(ns, "backend-typo", "petstore")
	typo.Spec.Limits[0].MetricMethodRef.SystemName = "serach"
	unused.Spec.Limits[1].MetricMethodRef.Backend = "users"
	overlap.Spec.PricingRules[1].From = 50 // CEL cannot afford this check; the controller does it
	backendTypo.Spec.PricingRules[0].MetricMethodRef.SystemName = "list_petz"
	create(t, defaultSecret(ns), petsBackend(ns), product, typo, unused, overlap, backendTypo)
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
		waitReason(t, tc.plan, tc.state, tc.reason)
		if _, _, msg := syncState(t, tc.plan); !strings.Contains(msg, tc.want) {
			t.Errorf("plan %s: message %q, want it to say %q", tc.plan.Name, msg, tc.want)
		}
	}
	if state, reason, _ := syncState(t, product); state == v1alpha1.ConditionSynced {
		t.Fatalf("the Product is %s/%s: the plans were not checked while it waited", state, reason)
	}

	later := petsBackend(ns)
	later.Name = "later"
	create(t, later)
	update(t, typo, func() { typo.Spec.Limits[0].MetricMethodRef.SystemName = "search" })
	waitState(t, v1alpha1.ConditionSynced, product, typo)
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
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
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
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o.GetResourceVersion())
	}
	return out
}
