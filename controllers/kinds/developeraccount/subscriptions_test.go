package developeraccount_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// subscriptionsOf are the account's service subscriptions in 3scale, by product id: "plan_id/state".
func subscriptionsOf(ns string, accountID int64) map[int64][2]any {
	out := map[int64][2]any{}
	for _, s := range harness.Sim.Objects(ns, simulator.KindServiceSubscriptions) {
		if s["user_account_id"] == accountID {
			out[s["service_id"].(int64)] = [2]any{s["plan_id"], s["state"]}
		}
	}
	return out
}

// servicePlanOf is a published ServicePlan of the petstore Product.
func servicePlanOf(ns, name string, approval bool) *v1alpha1.ServicePlan {
	published := true
	return &v1alpha1.ServicePlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServicePlanSpec{ProductRef: "petstore", Name: strings.ToUpper(name[:1]) + name[1:], Published: &published, ApprovalRequired: &approval}}
}

// TestAccountSubscriptions (issue 44): an account subscribes to a product through the ServicePlan its
// spec names — the subscription approved though the plan requires approval, settled by porta's state
// though the subscribe's answer is lost; an edit moves it in one change_plan call; a plan changed by hand
// comes back on a drift check. Two plans of one product are Invalid with nothing written. A plan let go
// ends the subscription, which porta refuses while the account has a live application on the product:
// the account waits, saying so, and ends it once the application goes.
func TestAccountSubscriptions(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/accounts/{account_id}/service_subscriptions.json", Count: 1, Lose: true})
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	gold, silver := servicePlanOf(ns, "gold", true), servicePlanOf(ns, "silver", false)
	acc, pw := harness.DevAccount(ns, "acme")
	acc.Spec.ServicePlanRefs = []string{"gold"}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, gold, silver, pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, product, gold, silver, acc)
	subs := subscriptionsOf(ns, acc.Status.AccountID)
	if got := subs[product.Status.ProductID]; len(subs) != 1 || got != [2]any{gold.Status.ServicePlanID, "live"} {
		t.Fatalf("subscriptions %v, want one to petstore on Gold (%d), live", subs, gold.Status.ServicePlanID)
	}
	if harness.LostAnswers(ns) != 1 {
		t.Errorf("%d answers lost, want the scripted 1", harness.LostAnswers(ns))
	}
	id := acc.Status.ServiceSubscriptionIDs["petstore"]
	if id == 0 {
		t.Fatalf("status.serviceSubscriptionIDs %v, want petstore's", acc.Status.ServiceSubscriptionIDs)
	}

	// Moved to Silver: one change_plan, the same subscription.
	const changePlan = "/admin/api/accounts/{account_id}/service_subscriptions/{id}/change_plan.json"
	harness.EditAndWait(t, acc, func() { acc.Spec.ServicePlanRefs = []string{"silver"} })
	if got := subscriptionsOf(ns, acc.Status.AccountID)[product.Status.ProductID]; got[0] != silver.Status.ServicePlanID || harness.RequestsTo(ns, http.MethodPut, changePlan) != 1 {
		t.Errorf("after the edit: %v with %d changes, want Silver with 1", got, harness.RequestsTo(ns, http.MethodPut, changePlan))
	}
	if acc.Status.ServiceSubscriptionIDs["petstore"] != id {
		t.Errorf("the subscription changed id: %v, want %d", acc.Status.ServiceSubscriptionIDs, id)
	}

	// Changed by hand: back on the drift check.
	if err := harness.ByHand(t, ns).ChangeSubscriptionPlan(context.Background(), acc.Status.AccountID, id, gold.Status.ServicePlanID); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, acc, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := subscriptionsOf(ns, acc.Status.AccountID)[product.Status.ProductID]; got[0] != silver.Status.ServicePlanID {
			return "the subscription is not back on Silver"
		}
		return ""
	})

	// Two plans of one product: Invalid, nothing written.
	before := harness.WritesTo(ns)
	harness.Update(t, acc, func() { acc.Spec.ServicePlanRefs = []string{"gold", "silver"} })
	harness.WaitReason(t, acc, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, `ServicePlans "gold" and "silver" are both plans of Product "petstore"`) {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the invalid account wrote %d times: %v", n, harness.LastWrites(ns, n))
	}

	// A live application on the product: the subscription let go cannot end yet; it ends once the
	// application goes.
	plan := harness.BasicPlan(ns, "basic", "petstore")
	app := harness.Application(ns, "shop", "acme", "basic")
	harness.Update(t, acc, func() { acc.Spec.ServicePlanRefs = []string{"silver"} })
	harness.Create(t, plan, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, plan, app)
	harness.Update(t, acc, func() { acc.Spec.ServicePlanRefs = nil })
	harness.WaitReason(t, acc, v1alpha1.ConditionOrphan, v1alpha1.ReasonSubscriptionInUse)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, `subscription to Product "petstore" while the account has applications on it`) {
		t.Errorf("the wait does not say why: %q", msg)
	}
	harness.DeleteObjects(t, app)
	harness.WaitGone(t, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if subs := subscriptionsOf(ns, acc.Status.AccountID); len(subs) != 0 || acc.Status.ServiceSubscriptionIDs != nil {
		t.Errorf("after the application went: subscriptions %v, recorded %v; want none", subs, acc.Status.ServiceSubscriptionIDs)
	}
}
