package developeraccount_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// changePlan is porta's move of an account to another account plan (accounts_controller.rb:64-71).
const changePlan = "/admin/api/accounts/{id}/change_plan.json"

// accountPlan is a published AccountPlan of the namespace's provider account (or of secret's).
func accountPlan(ns, name, secret string) *v1alpha1.AccountPlan {
	published := true
	p := &v1alpha1.AccountPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AccountPlanSpec{Name: strings.ToUpper(name[:1]) + name[1:], Published: &published}}
	if secret != "" {
		p.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: secret}
	}
	return p
}

// planOfAccount is the id of the account plan 3scale has the account on.
func planOfAccount(t *testing.T, ns string, accountID int64) int64 {
	t.Helper()
	p, err := harness.ByHand(t, ns).AccountPlanOf(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// TestAccountOnItsAccountPlan (issue 44): an account whose spec names an AccountPlan signs up on it (no
// change_plan after), moves to another in one call, and is moved back when a person changes its plan;
// an AccountPlan of another tenant is Invalid and nothing is written; deleting the AccountPlan an account
// names waits for the account.
func TestAccountOnItsAccountPlan(t *testing.T) {
	ns := harness.NewNamespace(t)
	partners, resellers := accountPlan(ns, "partners", ""), accountPlan(ns, "resellers", "")
	acc, pw := harness.DevAccount(ns, "acme")
	acc.Spec.AccountPlanRef = "partners"
	harness.Create(t, harness.DefaultSecret(ns), pw, acc, partners, resellers)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, partners, resellers)
	if got := planOfAccount(t, ns, acc.Status.AccountID); got != partners.Status.AccountPlanID {
		t.Fatalf("the account is on plan %d, want Partners (%d)", got, partners.Status.AccountPlanID)
	}
	if n := harness.RequestsTo(ns, http.MethodPut, changePlan); n != 0 {
		t.Errorf("%d plan changes after the signup, want 0: the signup names the plan", n)
	}

	harness.EditAndWait(t, acc, func() { acc.Spec.AccountPlanRef = "resellers" })
	if got := planOfAccount(t, ns, acc.Status.AccountID); got != resellers.Status.AccountPlanID || harness.RequestsTo(ns, http.MethodPut, changePlan) != 1 {
		t.Errorf("after the edit: on plan %d with %d changes, want Resellers (%d) with 1", got, harness.RequestsTo(ns, http.MethodPut, changePlan), resellers.Status.AccountPlanID)
	}

	// A person moves it: a drift check moves it back.
	if _, err := harness.ByHand(t, ns).ChangeAccountPlan(context.Background(), acc.Status.AccountID, partners.Status.AccountPlanID); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, acc, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if got := planOfAccount(t, ns, acc.Status.AccountID); got != resellers.Status.AccountPlanID {
		t.Errorf("after the drift check: on plan %d, want Resellers (%d)", got, resellers.Status.AccountPlanID)
	}

	// Deleting the plan the account names waits for the account.
	harness.DeleteObjects(t, resellers)
	harness.WaitReason(t, resellers, v1alpha1.ConditionOrphan, v1alpha1.ReasonDeletionBlocked)
	if _, _, msg := harness.SyncState(t, resellers); !strings.Contains(msg, "acme") {
		t.Errorf("the blocked deletion does not name the account: %q", msg)
	}
	harness.EditAndWait(t, acc, func() { acc.Spec.AccountPlanRef = "partners" })
	harness.WaitGone(t, resellers)

	// An AccountPlan of another tenant: Invalid, nothing written.
	other := harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(other + "-b")
	elsewhere := accountPlan(other, "elsewhere", "tenant-b")
	acc2, pw2 := harness.DevAccount(other, "globex")
	acc2.Spec.AccountPlanRef = "elsewhere"
	harness.Create(t, harness.DefaultSecret(other), harness.ProviderSecret(other, "tenant-b", adminURL, token), elsewhere)
	harness.WaitState(t, v1alpha1.ConditionSynced, elsewhere)
	before := harness.WritesTo(other)
	harness.Create(t, pw2, acc2)
	harness.WaitReason(t, acc2, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, acc2); !strings.Contains(msg, `AccountPlan "elsewhere" is a plan of tenant`) {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	if n := harness.WritesTo(other) - before; n != 0 {
		t.Errorf("an account on another tenant's plan wrote %d times: %v", n, harness.LastWrites(other, n))
	}
}
