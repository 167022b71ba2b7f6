package controllers_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// writesSince lists a tenant's writes (method and endpoint template) after the first n of its journal.
func writesSince(tenant string, n int) []string {
	var out []string
	for _, w := range harness.Sim.Writes(tenant)[n:] {
		if w.Method != http.MethodGet {
			out = append(out, w.Method+" "+w.Endpoint)
		}
	}
	return out
}

// TestObserveOnly: a Backend with spec.management Observe finds the backend made by hand, records its id,
// and tells in its status, its condition, the drift metric and kubectl apimsync diff what a full sync
// would write, writing nothing; it holds the finalizer as a Retain object does. Switched to Full, it makes
// exactly the writes it reported. An observed object with nothing to observe waits and creates nothing;
// deleting an observed object deletes nothing.
func TestObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	byHand, err := harness.ByHand(t, ns).CreateBackend(ctx, tsclient.BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://old.internal"})
	if err != nil {
		t.Fatal(err)
	}
	start := len(harness.Sim.Writes(ns))

	b := harness.PetsBackend(ns)
	b.Spec.Management = v1alpha1.ManagementObserve
	b.Spec.Adoption = v1alpha1.AdoptionNever // observing is not adopting
	harness.Create(t, b)
	harness.WaitReason(t, b, v1alpha1.ConditionSynced, v1alpha1.ReasonObservedDifferences)
	if w := writesSince(ns, start); len(w) != 0 {
		t.Fatalf("an observed object wrote to 3scale: %v", w)
	}
	obs := b.Status.Observation
	if b.Status.BackendID != byHand.ID || obs == nil || obs.Differences == 0 || obs.Differences != len(obs.Writes) {
		t.Fatalf("id %d (want %d), observation %+v: want the hand-made backend's id and the writes a sync would make", b.Status.BackendID, byHand.ID, obs)
	}
	if !controllerutil.ContainsFinalizer(b, engine.Finalizer) || b.GetDeletionPolicy() != v1alpha1.DeletionPolicyRetain {
		t.Errorf("finalizers %v, deletion policy %s: an observed object holding an id keeps it as Retain does", b.Finalizers, b.GetDeletionPolicy())
	}
	if got := testutil.ToFloat64(engine.ObservedDrift.WithLabelValues("Backend")); got < 1 {
		t.Errorf("apimsync_observed_drift_objects{kind=Backend} = %v, want the drifting backend counted", got)
	}
	plans, err := controllers.DiffObjects(ctx, harness.K8s, harness.Env.Scheme, ns, []client.Object{b.DeepCopy()}, controllers.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var planned []string
	for _, w := range plans[0].Writes {
		planned = append(planned, w.Method+" "+w.Endpoint)
	}
	if plans[0].Action != "none" || !slices.Equal(planned, obs.Writes) {
		t.Errorf("diff plans %s with %v, want none (observe only) with the status' writes %v", plans[0].Action, planned, obs.Writes)
	}

	// Switched to Full: exactly the writes observed.
	before := len(harness.Sim.Writes(ns))
	harness.EditAndWait(t, b, func() { b.Spec.Management = v1alpha1.ManagementFull })
	if got := writesSince(ns, before); !slices.Equal(got, obs.Writes) {
		t.Errorf("switched to Full, it wrote %v; it had reported %v", got, obs.Writes)
	}
	if b.Status.BackendID != byHand.ID || b.Status.Observation != nil || !controllerutil.ContainsFinalizer(b, engine.Finalizer) {
		t.Errorf("after the switch: id %d (want %d), observation %+v, finalizers %v", b.Status.BackendID, byHand.ID, b.Status.Observation, b.Finalizers)
	}
	if got := testutil.ToFloat64(engine.ObservedDrift.WithLabelValues("Backend")); got != 0 {
		t.Errorf("apimsync_observed_drift_objects{kind=Backend} = %v after the switch, want 0", got)
	}

	// Nothing to observe: it waits, and creates nothing.
	missing := harness.PetsBackend(ns)
	missing.Name, missing.Spec.SystemName, missing.Spec.Management = "missing", "missing", v1alpha1.ManagementObserve
	before = len(harness.Sim.Writes(ns))
	harness.Create(t, missing)
	harness.WaitReason(t, missing, v1alpha1.ConditionOrphan, v1alpha1.ReasonNothingToObserve)
	if w := writesSince(ns, before); len(w) != 0 {
		t.Errorf("an observed object with nothing to observe wrote %v", w)
	}

	// Observed, then deleted: the 3scale object stays.
	if _, err := harness.ByHand(t, ns).CreateBackend(ctx, tsclient.BackendParams{Name: "Kept", SystemName: "kept", PrivateEndpoint: "https://kept.internal"}); err != nil {
		t.Fatal(err)
	}
	kept := harness.PetsBackend(ns)
	kept.Name, kept.Spec.SystemName, kept.Spec.Management = "kept", "kept", v1alpha1.ManagementObserve
	harness.Create(t, kept)
	harness.WaitState(t, v1alpha1.ConditionSynced, kept)
	if err := harness.K8s.Delete(ctx, kept); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, kept)
	if n := harness.Sim.Count(ns, "backend_apis"); n != 2 {
		t.Errorf("%d backends in 3scale, want pets and kept: deleting an observed object deletes nothing", n)
	}
}

// TestObserveOnlyApplicationsAndOwners: an Application switched to Observe with a new description reports
// exactly the one update a full sync makes (an update's echo carries what 3scale holds, so no plan change
// or state change is invented) and leaves its credentials Secret as it is; switched back, it makes that
// write. A Product deleted while one of its plans is only observed is kept in 3scale with the plan, as
// under a plan with deletionPolicy Retain.
func TestObserveOnlyApplicationsAndOwners(t *testing.T) {
	ctx := context.Background()
	ns := harness.NewNamespace(t)
	account, passwords := harness.DevAccount(ns, "acme")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	app := harness.Application(ns, "app", "acme", "basic")
	harness.Create(t, harness.DefaultSecret(ns), passwords, backend, product, plan, account, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan, account, app)
	var creds corev1.Secret
	if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-credentials"}, &creds); err != nil {
		t.Fatal(err)
	}

	start := len(harness.Sim.Writes(ns))
	harness.Update(t, app, func() {
		app.Spec.Management = v1alpha1.ManagementObserve
		app.Spec.Description = "a new description"
	})
	harness.WaitReason(t, app, v1alpha1.ConditionSynced, v1alpha1.ReasonObservedDifferences)
	want := []string{"PUT /admin/api/accounts/{account_id}/applications/{id}.json"}
	if !slices.Equal(app.Status.Observation.Writes, want) {
		t.Errorf("observed writes %v, want %v", app.Status.Observation.Writes, want)
	}
	if w := writesSince(ns, start); len(w) != 0 {
		t.Errorf("an observed application wrote %v", w)
	}
	var after corev1.Secret
	if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(&creds), &after); err != nil || after.ResourceVersion != creds.ResourceVersion {
		t.Errorf("the credentials Secret was written by a look (%v)", err)
	}
	before := len(harness.Sim.Writes(ns))
	harness.EditAndWait(t, app, func() { app.Spec.Management = v1alpha1.ManagementFull })
	if got := writesSince(ns, before); !slices.Equal(got, want) {
		t.Errorf("switched to Full, it wrote %v, want %v", got, want)
	}

	// The plan only observed: deleting its Product keeps both in 3scale.
	harness.Update(t, plan, func() { plan.Spec.Management = v1alpha1.ManagementObserve })
	harness.WaitReason(t, plan, v1alpha1.ConditionSynced, v1alpha1.ReasonObserved)
	if err := harness.K8s.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, app)
	if err := harness.K8s.Delete(ctx, product); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, product)
	if n, p := harness.Sim.Count(ns, "services"), harness.Sim.Count(ns, "application_plans"); n != 1 || p < 1 {
		t.Errorf("%d products and %d plans in 3scale after the Product's deletion: an observed plan keeps its product, as Retain does", n, p)
	}
}
