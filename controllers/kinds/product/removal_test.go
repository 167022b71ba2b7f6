package product_test

import (
	"fmt"
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
	// The Product may first wait for the Backend being synced again, then for the plan: each ends
	// waiting for the plan, naming it.
	for obj, want := range map[engine.Object]string{product: `plan "basic" limits or prices method "search"`, backend: `plan "basic" limits or prices method "list_pets"`} {
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if state, reason, msg := harness.SyncState(t, obj); state != v1alpha1.ConditionOrphan || reason != v1alpha1.ReasonMetricStillLimited || !strings.Contains(msg, want) {
				return fmt.Sprintf("%s is %s (%s) %q, want Orphan (%s) naming %q", obj.GetName(), state, reason, msg, v1alpha1.ReasonMetricStillLimited, want)
			}
			return ""
		})
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
