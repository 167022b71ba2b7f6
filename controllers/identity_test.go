package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestLoserOfAConflictDeletesNothingRemotely: two namespaces on one tenant, a Product "shop" in each: the
// second is Invalid; deleting it leaves the first one's product and plans untouched in 3scale.
func TestLoserOfAConflictDeletesNothingRemotely(t *testing.T) {
	ns, other := harness.NewNamespace(t), harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.SystemName = "shop"
	plans := []engine.Object{harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plans[0], plans[1])
	harness.WaitState(t, v1alpha1.ConditionSynced, append([]engine.Object{backend, product}, plans...)...)

	loser := harness.PetstoreProduct(other)
	loser.Spec.SystemName = "shop"
	harness.Create(t, harness.ProviderSecret(other, v1alpha1.DefaultProviderAccountSecret, adminURL, token), loser)
	harness.WaitReason(t, loser, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteOwnedByOtherResource)
	harness.DeleteObjects(t, loser)
	harness.WaitGone(t, loser)

	if got := harness.Sim.Count(ns, simulator.KindServices); got != 1 {
		t.Errorf("%d services in 3scale after deleting the loser, want 1 (the winner's)", got)
	}
	if got := harness.Sim.Count(ns, simulator.KindPlans); got != 2 {
		t.Errorf("%d plans in 3scale after deleting the loser, want 2", got)
	}
	if _, err := harness.ByHand(t, ns).GetProduct(context.Background(), product.Status.ProductID); err != nil {
		t.Errorf("the winner's product %d is gone: %v", product.Status.ProductID, err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, append([]engine.Object{product}, plans...)...)
}

// TestSimultaneousClaimsHaveOneOwner: two new resources claiming the same (tenant, kind, system name) in
// the same instant: exactly one owns it, the other is Invalid; 20 times.
func TestSimultaneousClaimsHaveOneOwner(t *testing.T) {
	ns, other := harness.NewNamespace(t), harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	harness.Create(t, harness.DefaultSecret(ns), harness.ProviderSecret(other, v1alpha1.DefaultProviderAccountSecret, adminURL, token))
	for i := range 20 {
		a, b := harness.PetsBackend(ns), harness.PetsBackend(other)
		a.Name, b.Name = fmt.Sprintf("race-%d", i), fmt.Sprintf("race-%d", i)
		var wg sync.WaitGroup
		for _, o := range []*v1alpha1.Backend{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := harness.K8s.Create(context.Background(), o); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		harness.Eventually(t, harness.WaitTimeout, func() string {
			sa, _, _ := harness.SyncState(t, a)
			sb, _, _ := harness.SyncState(t, b)
			states := map[string]int{sa: 1}
			states[sb]++
			if states[v1alpha1.ConditionSynced] != 1 || states[v1alpha1.ConditionInvalid] != 1 {
				return fmt.Sprintf("round %d: %s and %s, want one Synced and one Invalid", i, sa, sb)
			}
			return ""
		})
	}
	n := 0
	for _, o := range harness.Sim.Objects(ns, simulator.KindBackendAPIs) {
		if strings.HasPrefix(fmt.Sprint(o["system_name"]), "race-") {
			n++
		}
	}
	if n != 20 {
		t.Errorf("%d race-* backends in 3scale, want 20 (one per claimed system name)", n)
	}
}

// TestAdoptionIsAnnouncedAndCanBeRefused: a Product finding an existing service with its system name
// adopts it with an Event and a word in its condition; with spec.adoption Never it is Invalid instead.
func TestAdoptionIsAnnouncedAndCanBeRefused(t *testing.T) {
	ns := harness.NewNamespace(t)
	c := harness.ByHand(t, ns)
	existing, err := c.CreateProduct(context.Background(), tsclient.ProductParams{Name: "Old", SystemName: "petstore"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProduct(context.Background(), tsclient.ProductParams{Name: "Keep", SystemName: "keep"}); err != nil {
		t.Fatal(err)
	}
	product := harness.PetstoreProduct(ns)
	refusing := harness.PetstoreProduct(ns)
	refusing.Name, refusing.Spec.SystemName, refusing.Spec.Adoption = "keep", "keep", v1alpha1.AdoptionNever
	harness.Create(t, harness.DefaultSecret(ns), product, refusing)
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	if product.Status.ProductID != existing.ID {
		t.Errorf("product id %d, want the adopted %d", product.Status.ProductID, existing.ID)
	}
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, fmt.Sprintf("adopted the existing Product %d", existing.ID)) {
		t.Errorf("Synced condition does not tell the adoption: %q", msg)
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if ev := strings.Join(harness.EventsOf(t, product), "\n"); !strings.Contains(ev, fmt.Sprintf("adopted existing Product %d", existing.ID)) {
			return "no adoption event: " + ev
		}
		return ""
	})
	harness.WaitReason(t, refusing, v1alpha1.ConditionInvalid, v1alpha1.ReasonAdoptionRefused)
	if got := harness.Sim.Count(ns, simulator.KindServices); got != 2 {
		t.Errorf("%d services, want 2", got)
	}
}

// TestProviderAccountMovedToAnotherTenant: an id is bound to its tenant. Pointing the Secret at another
// tenant re-resolves there (an Event says so) and leaves the first tenant's object untouched, also when
// the resource is then deleted.
func TestProviderAccountMovedToAnotherTenant(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	secret := harness.DefaultSecret(ns)
	harness.Create(t, secret, backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	second := ns + "-b"
	adminURL, token := harness.TenantOf(second)
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"adminURL": adminURL, "token": token} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := harness.Sim.Count(second, simulator.KindBackendAPIs); got != 1 {
			return fmt.Sprintf("%d backends on the new tenant", got)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	harness.WantEvent(t, backend, v1alpha1.ReasonTenantChanged)
	harness.DeleteObjects(t, backend)
	harness.WaitGone(t, backend)
	if got := harness.Sim.Count(ns, simulator.KindBackendAPIs); got != 1 {
		t.Errorf("the first tenant has %d backends, want its 1 untouched", got)
	}
	if got := harness.Sim.Count(second, simulator.KindBackendAPIs); got != 0 {
		t.Errorf("the second tenant has %d backends after deletion, want 0", got)
	}
}

// TestForeignFinalizerSurvives: removing apimsync's finalizer never drops another controller's.
func TestForeignFinalizerSurvives(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	harness.Update(t, backend, func() { backend.Finalizers = append(backend.Finalizers, "example.com/keep") })
	harness.DeleteObjects(t, backend)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(backend), backend); err != nil {
			return err.Error()
		}
		if strings.Join(backend.Finalizers, ",") != "example.com/keep" {
			return fmt.Sprintf("finalizers %v, want only example.com/keep", backend.Finalizers)
		}
		return ""
	})
	if got := harness.Sim.Count(ns, simulator.KindBackendAPIs); got != 0 {
		t.Errorf("%d backends left in 3scale", got)
	}
	harness.Update(t, backend, func() { backend.Finalizers = nil })
	harness.WaitGone(t, backend)
}

// TestRepairReachesDependants: a backend metric and a product mapping rule deleted in 3scale by hand
// (porta also deletes the plan limit on that metric), then sync-now on both: the metric and rule come
// back, and so does the plan's limit; every repair is an Event and counted.
func TestRepairReachesDependants(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	plan.Spec.Limits = append(plan.Spec.Limits, v1alpha1.LimitSpec{Period: "month", Value: 50,
		MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "photos_mb", Backend: "pets"}})
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	limits := harness.Sim.Count(ns, simulator.KindLimits)
	repairsBefore := driftRepairs(t)

	c := harness.ByHand(t, ns)
	ctx := context.Background()
	metrics, err := c.ListMetrics(ctx, tsclient.BackendScope(backend.Status.BackendID))
	if err != nil {
		t.Fatal(err)
	}
	// porta keeps a metric its latest gateway configuration counts: by hand, its rule goes first, then a
	// deploy, then the metric.
	backendRules, err := c.ListMappingRules(ctx, tsclient.BackendScope(backend.Status.BackendID))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metrics {
		if m.SystemName != "photos_mb" {
			continue
		}
		for _, r := range backendRules {
			if r.MetricID == m.ID {
				if err := c.DeleteMappingRule(ctx, tsclient.BackendScope(backend.Status.BackendID), r.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := c.DeployProxy(ctx, product.Status.ProductID); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteMetric(ctx, tsclient.BackendScope(backend.Status.BackendID), m.ID); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := c.ListMappingRules(ctx, tsclient.ProductScope(product.Status.ProductID))
	if err != nil || len(rules) == 0 {
		t.Fatalf("product rules %v, %v", rules, err)
	}
	if err := c.DeleteMappingRule(ctx, tsclient.ProductScope(product.Status.ProductID), rules[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := harness.Sim.Count(ns, simulator.KindLimits); got != limits-1 {
		t.Fatalf("the simulator did not cascade the metric's deletion to its limit: %d limits, want %d", got, limits-1)
	}
	// The product first: once the backend is repaired, its gateway revision moves and the product's next
	// sync is a sync of a changed dependency (no DriftRepaired of its own), whatever it finds.
	for _, o := range []client.Object{product, backend} {
		harness.Update(t, o, func() { o.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "1"}) })
		harness.WantEvent(t, o, v1alpha1.ReasonDriftRepaired)
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := harness.Sim.Count(ns, simulator.KindLimits); got != limits {
			return fmt.Sprintf("%d limits in 3scale, want %d (the plan's limit on the re-created metric)", got, limits)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	// The backend's repair reaches the gateway too: staging runs the rule put back, though no spec changed.
	harness.StagingRuns(t, product, `"pattern":"/pets/{id}/photo"`)
	if got := driftRepairs(t) - repairsBefore; got < 2 {
		t.Errorf("drift repairs metric grew by %v, want at least 2", got)
	}
}

// TestRefusedTokenShowsAtOnce: replacing the token with one 3scale refuses makes every object using the
// Secret Invalid within seconds, with one call for all of them; a good token brings them back.
func TestRefusedTokenShowsAtOnce(t *testing.T) {
	ns := harness.NewNamespace(t)
	secret := harness.DefaultSecret(ns)
	objs := []engine.Object{harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")}
	harness.Create(t, secret)
	for _, o := range objs {
		harness.Create(t, o)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
	adminURL, token := harness.TenantOf(ns)
	before, refusedBefore := harness.RemoteCalls(ns), harness.RefusedCalls(ns)
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"adminURL": adminURL, "token": "wrong"} })
	for _, o := range objs {
		harness.WaitReason(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonUnauthorized)
	}
	// One probe with the new token answers for the 4 objects. A reconcile already past its credentials
	// check when the Secret changed may make one call of its own with the new token (seen once in CI), so
	// 2 is tolerated; a check per object makes 4 or more (11 when the shared check is bypassed).
	if got := harness.RefusedCalls(ns) - refusedBefore; got < 1 || got > 2 {
		t.Errorf("%d calls with the refused token, want 1 (2 at most) for the tenant, not one per object", got)
	}
	if got := harness.RemoteCalls(ns) - before; got > 1+1 {
		t.Errorf("%d calls reached the tenant meanwhile, want the probe and at most 1 more", got)
	}
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"adminURL": adminURL, "token": token} })
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
}

// driftRepairs sums apimsync_drift_repairs_total over the kinds.
func driftRepairs(t *testing.T) float64 {
	t.Helper()
	sum := 0.0
	for _, kind := range []string{"Backend", "Product", "ApplicationPlan"} {
		sum += testutil.ToFloat64(engine.DriftRepairs.WithLabelValues(kind))
	}
	return sum
}

// TestTwoSpellingsOfOneAdminURLAreOneTenant: an admin URL spelled with another case, the default port or
// a trailing slash is the same tenant: the owner check sees the conflict.
func TestTwoSpellingsOfOneAdminURLAreOneTenant(t *testing.T) {
	ns, other := harness.NewNamespace(t), harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	owner := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), owner)
	harness.WaitState(t, v1alpha1.ConditionSynced, owner)
	respelled := "HTTP://" + strings.TrimPrefix(adminURL, "http://") + "/"
	intruder := harness.PetsBackend(other)
	harness.Create(t, harness.ProviderSecret(other, v1alpha1.DefaultProviderAccountSecret, respelled, token), intruder)
	harness.WaitReason(t, intruder, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteOwnedByOtherResource)
	if intruder.Status.TenantHost != owner.Status.TenantHost {
		t.Errorf("tenant %q and %q: one tenant spelled twice", intruder.Status.TenantHost, owner.Status.TenantHost)
	}
}

// TestRefusedCreateClaimsNothing: 3scale refuses a Backend's create (porta protects localhost); someone
// then makes a backend with its system name by hand. Fixed, the resource does not take that backend as
// its own (spec.adoption: Never refuses it, once), and deleting the resource leaves it in 3scale.
func TestRefusedCreateClaimsNothing(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	backend.Spec.PrivateBaseURL = "https://localhost:8443"
	backend.Spec.Adoption = v1alpha1.AdoptionNever
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitReason(t, backend, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteRejected)
	if got := engine.PendingCreate(backend); got != "" {
		t.Errorf("create-pending marker on %q after 3scale refused the create (annotation %q, settled %q)", got,
			backend.Annotations[v1alpha1.CreatePendingAnnotation], backend.Status.CreateSettled)
	}

	stranger, err := harness.ByHand(t, ns).CreateBackend(context.Background(), tsclient.BackendParams{Name: "Theirs", SystemName: "pets", PrivateEndpoint: "https://theirs.internal"})
	if err != nil {
		t.Fatal(err)
	}
	harness.Update(t, backend, func() { backend.Spec.PrivateBaseURL = "https://pets.internal:8443" })
	harness.WaitReason(t, backend, v1alpha1.ConditionInvalid, v1alpha1.ReasonAdoptionRefused)
	// Refused on what 3scale holds, the same attempt is not made again at every wake-up (each made a
	// create-pending write, a create refused as taken, and woke the object again).
	writes := len(harness.Sim.Writes(ns))
	time.Sleep(time.Second)
	if got := harness.Sim.Writes(ns)[writes:]; len(got) != 0 {
		t.Errorf("writes after the refused adoption, with nothing changed: %v", got)
	}
	harness.DeleteObjects(t, backend)
	harness.WaitGone(t, backend)
	if got, err := harness.ByHand(t, ns).GetBackend(context.Background(), stranger.ID); err != nil || got.Name != "Theirs" {
		t.Errorf("the backend made by hand after the refused create: %+v, %v; want it untouched", got, err)
	}
}
