package controllers_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
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
// would write, writing nothing and holding no finalizer. Switched to Full, it makes exactly the writes it
// reported, and takes its finalizer. An observed object with nothing to observe waits and creates nothing;
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
	if controllerutil.ContainsFinalizer(b, engine.Finalizer) {
		t.Errorf("an observed object holds the finalizer: deleting it would wait for a deletion that never comes")
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
