package developeraccount_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// accountField is a FieldDefinition of the tenant's accounts.
func accountField(ns, name string, required bool, choices ...string) *v1alpha1.FieldDefinition {
	return &v1alpha1.FieldDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "account-" + name},
		Spec: v1alpha1.FieldDefinitionSpec{Target: v1alpha1.FieldTargetAccount, Name: name, Label: strings.ToUpper(name[:1]) + name[1:],
			Required: required, Choices: choices}}
}

// fieldOf is the account's value of a field in 3scale.
func fieldOf(t *testing.T, ns string, accountID int64, name string) string {
	t.Helper()
	a, err := harness.ByHand(t, ns).GetAccount(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return a.Fields[name]
}

// TestAccountFields (issue 44): an account's spec.fields are fields the tenant defines. One not defined
// yet waits (FieldNotDefined) and nothing is written; the FieldDefinition made, the account is woken and
// signs up with its values. A value changed by hand comes back on a drift check; an edit is one update.
// A value outside the field's choices is Invalid, and nothing is written.
func TestAccountFields(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	acc.Spec.Fields = map[string]string{"tier": "gold"}
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitReason(t, acc, v1alpha1.ConditionOrphan, v1alpha1.ReasonFieldNotDefined)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, `field "tier" is not defined for the tenant's accounts`) {
		t.Errorf("the wait does not say why: %q", msg)
	}
	if n := harness.WritesTo(ns); n != 0 {
		t.Errorf("the account waiting for its field wrote %d times: %v", n, harness.LastWrites(ns, n))
	}

	tier := accountField(ns, "tier", false, "gold", "silver")
	harness.Create(t, tier)
	harness.WaitState(t, v1alpha1.ConditionSynced, tier, acc)
	if got := fieldOf(t, ns, acc.Status.AccountID, "tier"); got != "gold" {
		t.Fatalf("the account's tier %q, want gold (given at signup)", got)
	}

	// Changed by hand: back on the drift check. An edit: one update.
	if _, err := harness.ByHand(t, ns).UpdateAccount(context.Background(), acc.Status.AccountID, tsclient.AccountParams{Fields: map[string]string{"tier": "silver"}}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, acc, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := fieldOf(t, ns, acc.Status.AccountID, "tier"); got != "gold" {
			return "tier " + got
		}
		return ""
	})
	before := harness.WritesTo(ns)
	harness.EditAndWait(t, acc, func() { acc.Spec.Fields["tier"] = "silver" })
	if got, n := fieldOf(t, ns, acc.Status.AccountID, "tier"), harness.WritesTo(ns)-before; got != "silver" || n != 1 {
		t.Errorf("after the edit: tier %q with %d writes, want silver with 1: %v", got, n, harness.LastWrites(ns, n))
	}

	// Outside the choices: Invalid, nothing written.
	before = harness.WritesTo(ns)
	harness.Update(t, acc, func() { acc.Spec.Fields["tier"] = "platinum" })
	harness.WaitReason(t, acc, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, `field "tier" takes one of ["gold" "silver"], not "platinum"`) {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the value outside the choices wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
}

// TestARequiredFieldWithoutAValueIsInvalidAtSignup (issue 44, bad input): the tenant requires a field at
// signup (porta refuses a signup without it); an account that gives no value is Invalid, saying which,
// and nothing is written.
func TestARequiredFieldWithoutAValueIsInvalidAtSignup(t *testing.T) {
	ns := harness.NewNamespace(t)
	vat := accountField(ns, "vat", true)
	harness.Create(t, harness.DefaultSecret(ns), vat)
	harness.WaitState(t, v1alpha1.ConditionSynced, vat)
	acc, pw := harness.DevAccount(ns, "acme")
	acc.Spec.Fields = map[string]string{"vat": ""}
	before := harness.WritesTo(ns)
	harness.Create(t, pw, acc)
	harness.WaitReason(t, acc, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, `field "vat" is required by the tenant at signup`) {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the account without its required field wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	harness.EditAndWait(t, acc, func() { acc.Spec.Fields["vat"] = "ES123" })
	if got := fieldOf(t, ns, acc.Status.AccountID, "vat"); got != "ES123" {
		t.Errorf("the account's vat %q, want ES123", got)
	}
}
