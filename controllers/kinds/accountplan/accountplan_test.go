package accountplan_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// accountPlan is an AccountPlan of the namespace's tenant.
func accountPlan(ns, name, display string, published, def bool) *v1alpha1.AccountPlan {
	return &v1alpha1.AccountPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AccountPlanSpec{Name: display, Published: &published, Default: def}}
}

// remotePlans are a tenant's account plans in 3scale, by name.
func remotePlans(ns string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range harness.Sim.Objects(ns, simulator.KindAccountPlans) {
		out[p["name"].(string)] = p
	}
	return out
}

// TestAccountPlans (issue 44): an AccountPlan makes the tenant's account plan, published and made the
// default in as few calls as porta takes; a hand edit comes back on a drift check; an edit is one
// update; the tenant's own "Default" plan, seeded by porta, is adopted by name and says so; deleting a
// plan deletes it in 3scale.
func TestAccountPlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	partners := accountPlan(ns, "partners", "Partners", true, true)
	approval := true
	partners.Spec.ApprovalRequired = &approval
	harness.Create(t, harness.DefaultSecret(ns), partners)
	harness.WaitState(t, v1alpha1.ConditionSynced, partners)
	p := remotePlans(ns)["Partners"]
	if p == nil || p["state"] != "published" || p["approval_required"] != true || p["default"] != true {
		t.Fatalf("the Partners plan in 3scale: %v, want published, approval required, default", p)
	}
	if n := harness.WritesTo(ns); n != 2 { // the create (published), the default
		t.Errorf("%d writes to make the plan, want 2: %v", n, harness.LastWrites(ns, n))
	}

	// A hand edit: the drift check puts the name back, one call.
	if _, err := harness.ByHand(t, ns).UpdateAccountPlan(context.Background(), partners.Status.AccountPlanID, tsclient.AccountPlanParams{Name: "Renamed"}); err != nil {
		t.Fatal(err)
	}
	before := harness.WritesTo(ns)
	harness.SyncNow(t, partners, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, partners)
	if remotePlans(ns)["Partners"] == nil || harness.WritesTo(ns)-before != 1 {
		t.Errorf("after the drift check: plans %v, %d writes; want Partners back in one write", remotePlans(ns), harness.WritesTo(ns)-before)
	}

	// An edit: one update.
	before = harness.WritesTo(ns)
	harness.EditAndWait(t, partners, func() { *partners.Spec.Published = false })
	if got := harness.LastWrites(ns, harness.WritesTo(ns)-before); len(got) != 1 || got[0] != "PUT /admin/api/account_plans/{id}.json" {
		t.Errorf("writes of the edit: %v, want one update", got)
	}

	// porta's own "Default" plan is adopted by its name, with an Event, and nothing written.
	seeded := accountPlan(ns, "default", "Default", false, false)
	before = harness.WritesTo(ns)
	harness.Create(t, seeded)
	harness.WaitState(t, v1alpha1.ConditionSynced, seeded)
	harness.WantEvent(t, seeded, "Adopted")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("adopting the seeded plan wrote %d times: %v", n, harness.LastWrites(ns, n))
	}

	// An account on the plan (moved there by hand): porta refuses the deletion, which waits, saying so,
	// until the account moves off.
	byHand := harness.ByHand(t, ns)
	acc, err := byHand.Signup(context.Background(), tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example", Password: "a-long-enough-password"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := byHand.ChangeAccountPlan(context.Background(), acc.ID, partners.Status.AccountPlanID); err != nil {
		t.Fatal(err)
	}
	harness.DeleteObjects(t, partners)
	harness.WaitReason(t, partners, v1alpha1.ConditionOrphan, v1alpha1.ReasonDeletionBlocked)
	if _, _, msg := harness.SyncState(t, partners); !strings.Contains(msg, "while accounts are on it") {
		t.Errorf("the blocked deletion does not say why: %q", msg)
	}
	if _, err := byHand.ChangeAccountPlan(context.Background(), acc.ID, seeded.Status.AccountPlanID); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, partners)
	if remotePlans(ns)["Partners"] != nil {
		t.Errorf("the deleted AccountPlan's plan is still in 3scale")
	}
}

// TestASecondDefaultAccountPlanIsInvalid (issue 44, bad input): a second AccountPlan of a tenant saying
// default is Invalid naming the first and writes nothing; when the first lets go, the second is woken,
// made and made the default.
func TestASecondDefaultAccountPlanIsInvalid(t *testing.T) {
	ns := harness.NewNamespace(t)
	first := accountPlan(ns, "partners", "Partners", true, true)
	harness.Create(t, harness.DefaultSecret(ns), first)
	harness.WaitState(t, v1alpha1.ConditionSynced, first)
	before := harness.WritesTo(ns)
	second := accountPlan(ns, "resellers", "Resellers", true, true)
	harness.Create(t, second)
	harness.WaitReason(t, second, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, second); !strings.Contains(msg, `AccountPlan "partners" already is the tenant's default account plan`) {
		t.Errorf("the refusal does not name the default plan: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the second default plan wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	harness.EditAndWait(t, first, func() { first.Spec.Default = false })
	harness.WaitState(t, v1alpha1.ConditionSynced, second)
	if p := remotePlans(ns)["Resellers"]; p == nil || p["default"] != true {
		t.Errorf("Resellers in 3scale: %v, want the default", p)
	}
}

// TestLostAccountPlanCreateAnswers: the answers to an account plan's create and to its default are lost
// (porta made both); the plan is settled from 3scale's state, by its name: one plan, made the default,
// no duplicate.
func TestLostAccountPlanCreateAnswers(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/account_plans.json", Count: 1, Lose: true})
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "PUT", Template: "/admin/api/account_plans/{id}/default.json", Count: 1, Lose: true})
	partners := accountPlan(ns, "partners", "Partners", true, true)
	harness.Create(t, harness.DefaultSecret(ns), partners)
	harness.WaitState(t, v1alpha1.ConditionSynced, partners)
	if harness.LostAnswers(ns) != 2 {
		t.Fatalf("%d answers lost, want 2: the test did not exercise recovery", harness.LostAnswers(ns))
	}
	n := 0
	for _, p := range harness.Sim.Objects(ns, simulator.KindAccountPlans) {
		if p["name"] == "Partners" {
			n++
			if p["default"] != true || p["id"] != partners.Status.AccountPlanID {
				t.Errorf("the Partners plan %v, want the default, id %d", p, partners.Status.AccountPlanID)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d Partners plans in 3scale, want 1", n)
	}
}
