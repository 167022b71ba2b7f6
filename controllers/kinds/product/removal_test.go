package product_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// TestAMetricAPlanUsesIsKept: 3scale deletes a metric's limits and pricing rules with it. A Product's
// method that an ApplicationPlan limits, and a Backend's method it prices, removed from their specs, stay
// in 3scale: each object waits (MetricStillLimited) naming the plan, with everything else written, and
// the plan still syncs (the wait is usable to it). Once the plan lets go, each removal goes on.
func TestAMetricAPlanUsesIsKept(t *testing.T) {
	ns, backend, product := syncedPetstore(t)
	plan := harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, plan)

	harness.Update(t, product, func() {
		delete(product.Spec.Methods, "search")
		product.Spec.MappingRules = nil
	})
	harness.Update(t, backend, func() {
		delete(backend.Spec.Methods, "list_pets")
		backend.Spec.MappingRules = slices.DeleteFunc(backend.Spec.MappingRules, func(r v1alpha1.MappingRuleSpec) bool { return r.MetricMethodRef == "list_pets" })
	})
	for obj, want := range map[engine.Object]string{product: `plan "basic" limits or prices method "search"`, backend: `plan "basic" limits or prices method "list_pets"`} {
		harness.WaitReason(t, obj, v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricStillLimited)
		if _, _, msg := harness.SyncState(t, obj); !strings.Contains(msg, want) {
			t.Errorf("%s's message %q, want %q", obj.GetName(), msg, want)
		}
	}
	if !metricNamed(ns, "search") || !metricNamed(ns, "list_pets") {
		t.Fatal("a method a plan uses was deleted")
	}

	// The plan lets go of both: both removals go on.
	harness.Update(t, plan, func() {
		plan.Spec.Limits = slices.DeleteFunc(plan.Spec.Limits, func(l v1alpha1.LimitSpec) bool { return l.MetricMethodRef.SystemName == "search" })
		plan.Spec.PricingRules = nil
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, product, backend, plan)
	if metricNamed(ns, "search") || metricNamed(ns, "list_pets") {
		t.Error("a method no plan uses any more is still in 3scale")
	}
}
