package controllers_test

import (
	"fmt"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestConcurrentSyncsShareSnapshotsSafely: products and their plans sync at the same time while the
// product's and backend's mapping rules and metrics keep changing; plans read the product's and
// backends' cached snapshots meanwhile. Run with -race (make test does), a snapshot changed in place by
// one goroutine while another reads it fails the test; and everything converges to the last spec.
func TestConcurrentSyncsShareSnapshotsSafely(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	objs := []engine.Object{backend, product}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	for i := range 4 {
		plan := harness.BasicPlan(ns, fmt.Sprintf("plan-%d", i), "petstore")
		harness.Create(t, plan)
		objs = append(objs, plan)
	}
	for round := range 8 {
		harness.Update(t, product, func() {
			product.Spec.Metrics = map[string]v1alpha1.MetricSpec{fmt.Sprintf("m%d", round): {FriendlyName: fmt.Sprintf("M%d", round), Unit: "hit"}}
			product.Spec.MappingRules = append(product.Spec.MappingRules[:1], v1alpha1.MappingRuleSpec{
				HTTPMethod: "POST", Pattern: fmt.Sprintf("/r%d", round), MetricMethodRef: fmt.Sprintf("m%d", round), Increment: 1})
		})
		harness.Update(t, backend, func() {
			backend.Spec.Metrics = map[string]v1alpha1.MetricSpec{"photos_mb": {FriendlyName: fmt.Sprintf("Photos %d", round), Unit: "MB"}}
			backend.Spec.MappingRules[2].Increment = int32(round + 1)
		})
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
	if got := harness.Sim.Count(ns, simulator.KindMappingRules); got != 5 {
		t.Errorf("%d mapping rules in 3scale, want 5 (3 of the backend, 2 of the product)", got)
	}
	if got := harness.Sim.Count(ns, simulator.KindLimits); got != 8 {
		t.Errorf("%d limits in 3scale, want 8", got)
	}
}
