package controllers

import (
	"fmt"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestConcurrentSyncsShareSnapshotsSafely: products and their plans sync at the same time while the
// product's and backend's mapping rules and metrics keep changing; plans read the product's and
// backends' cached snapshots meanwhile. Run with -race (make test does), a snapshot changed in place by
// one goroutine while another reads it fails the test; and everything converges to the last spec.
func TestConcurrentSyncsShareSnapshotsSafely(t *testing.T) {
	ns := newNamespace(t)
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	objs := []engine.Object{backend, product}
	create(t, defaultSecret(ns), backend, product)
	for i := range 4 {
		plan := basicPlan(ns, fmt.Sprintf("plan-%d", i), "petstore")
		create(t, plan)
		objs = append(objs, plan)
	}
	for round := range 8 {
		update(t, product, func() {
			product.Spec.Metrics = map[string]v1alpha1.MetricSpec{fmt.Sprintf("m%d", round): {FriendlyName: fmt.Sprintf("M%d", round), Unit: "hit"}}
			product.Spec.MappingRules = append(product.Spec.MappingRules[:1], v1alpha1.MappingRuleSpec{
				HTTPMethod: "POST", Pattern: fmt.Sprintf("/r%d", round), MetricMethodRef: fmt.Sprintf("m%d", round), Increment: 1})
		})
		update(t, backend, func() {
			backend.Spec.Metrics = map[string]v1alpha1.MetricSpec{"photos_mb": {FriendlyName: fmt.Sprintf("Photos %d", round), Unit: "MB"}}
			backend.Spec.MappingRules[2].Increment = int32(round + 1)
		})
	}
	waitState(t, v1alpha1.ConditionSynced, objs...)
	if got := sim.Count(ns, simulator.KindMappingRules); got != 5 {
		t.Errorf("%d mapping rules in 3scale, want 5 (3 of the backend, 2 of the product)", got)
	}
	if got := sim.Count(ns, simulator.KindLimits); got != 8 {
		t.Errorf("%d limits in 3scale, want 8", got)
	}
}
