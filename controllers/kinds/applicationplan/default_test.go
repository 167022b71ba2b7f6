package applicationplan_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// defaultCall is porta's one call that makes a plan its product's default (ApplicationPlansController#default,
// app/controllers/admin/api/application_plans_controller.rb:49-52); there is none that unsets one.
const defaultCall = "/admin/api/services/{service_id}/application_plans/{id}/default.json"

// defaultPlans lists the system names of a tenant's plans that 3scale has as their product's default.
func defaultPlans(ns string) []string {
	var out []string
	for _, p := range harness.Sim.Objects(ns, simulator.KindPlans) {
		if p["default"] == true {
			out = append(out, p["system_name"].(string))
		}
	}
	return out
}

// TestDefaultPlan (issue 44): default makes a plan its product's default in one call, a default moved
// by hand comes back on a drift check, and removing default writes nothing (porta cannot unset one) but
// says in the Synced message that 3scale still has it.
func TestDefaultPlan(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	basic.Spec.Default = true
	harness.Create(t, harness.DefaultSecret(ns), backend, product, basic, gold)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, basic, gold)
	if got := defaultPlans(ns); len(got) != 1 || got[0] != "basic" {
		t.Fatalf("default plans in 3scale: %v, want [basic]", got)
	}
	if n := harness.RequestsTo(ns, http.MethodPut, defaultCall); n != 1 {
		t.Errorf("%d calls made the plan default, want 1", n)
	}

	// A person makes gold the default: a drift check of basic puts it back, one call.
	if _, err := harness.ByHand(t, ns).SetDefaultPlan(context.Background(), product.Status.ProductID, gold.Status.PlanID); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, basic, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, basic)
	if got := defaultPlans(ns); len(got) != 1 || got[0] != "basic" {
		t.Errorf("default plans after the drift check: %v, want [basic]", got)
	}
	if n := harness.RequestsTo(ns, http.MethodPut, defaultCall); n != 3 {
		t.Errorf("%d calls made a plan default, want 3 (apimsync's, the person's, the repair)", n)
	}

	// default removed: nothing to write (no call unsets it), and the Synced message says 3scale keeps it.
	before := harness.WritesTo(ns)
	harness.EditAndWait(t, basic, func() { basic.Spec.Default = false })
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("removing default wrote %d times, want 0: %v", n, harness.LastWrites(ns, n))
	}
	if _, _, msg := harness.SyncState(t, basic); !strings.Contains(msg, "porta's API cannot unset a default") {
		t.Errorf("the Synced message does not say 3scale still has the plan as default: %q", msg)
	}
	if got := defaultPlans(ns); len(got) != 1 || got[0] != "basic" {
		t.Errorf("default plans after default was removed: %v, want [basic] (kept in 3scale)", got)
	}
}

// TestASecondDefaultPlanIsInvalid (issue 44, bad input): a second plan of a product that says default is
// Invalid naming the first and writes nothing, not even the plan; once the first lets go, the second
// is woken, made, and made the default.
func TestASecondDefaultPlanIsInvalid(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic := harness.BasicPlan(ns, "basic", "petstore")
	basic.Spec.Default = true
	harness.Create(t, harness.DefaultSecret(ns), backend, product, basic)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, basic)
	before := harness.WritesTo(ns)

	gold := harness.BasicPlan(ns, "gold", "petstore")
	gold.Spec.Default = true
	harness.Create(t, gold)
	harness.WaitReason(t, gold, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, gold); !strings.Contains(msg, `"basic" already is the default plan of Product "petstore"`) {
		t.Errorf("the refusal does not name the default plan: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the second default plan wrote %d times, want 0: %v", n, harness.LastWrites(ns, n))
	}

	harness.EditAndWait(t, basic, func() { basic.Spec.Default = false })
	harness.WaitState(t, v1alpha1.ConditionSynced, gold)
	if got := defaultPlans(ns); len(got) != 1 || got[0] != "gold" {
		t.Errorf("default plans once the first let go: %v, want [gold]", got)
	}
}
