package fielddefinition_test

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

// field is a FieldDefinition of the namespace's tenant.
func field(ns, name string, target v1alpha1.FieldTarget, field, label string, choices ...string) *v1alpha1.FieldDefinition {
	return &v1alpha1.FieldDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.FieldDefinitionSpec{Target: target, Name: field, Label: label, Choices: choices}}
}

// remoteFields are the tenant's field definitions in 3scale, by "target/name".
func remoteFields(ns string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, f := range harness.Sim.Objects(ns, simulator.KindFieldsDefinitions) {
		out[f["target"].(string)+"/"+f["name"].(string)] = f
	}
	return out
}

// TestFieldDefinitions (issue 44): a FieldDefinition makes an extra field of the tenant's accounts, with
// its choices; a label changed by hand comes back on a drift check. A built-in field (porta made it with
// the tenant) is taken over, announced, and its label set; porta keeps it required whatever the spec
// says, and the Synced message says so. Deleting the extra field deletes it; deleting the built-in one
// deletes nothing (porta refuses to).
func TestFieldDefinitions(t *testing.T) {
	ns := harness.NewNamespace(t)
	tier := field(ns, "account-tier", v1alpha1.FieldTargetAccount, "tier", "Partner tier", "gold", "silver")
	org := field(ns, "account-org-name", v1alpha1.FieldTargetAccount, "org_name", "Company")
	harness.Create(t, harness.DefaultSecret(ns), tier, org)
	harness.WaitState(t, v1alpha1.ConditionSynced, tier, org)
	got := remoteFields(ns)
	if f := got["Account/tier"]; f == nil || f["label"] != "Partner tier" || len(f["choices"].([]any)) != 2 {
		t.Fatalf("the tier field in 3scale: %v, want labelled, with 2 choices", f)
	}
	if f := got["Account/org_name"]; f == nil || f["label"] != "Company" || f["required"] != true || f["id"] != org.Status.FieldDefinitionID {
		t.Errorf("org_name in 3scale: %v, want the built-in one, labelled Company, required", f)
	}
	harness.WantEvent(t, org, "Adopted")
	if _, _, msg := harness.SyncState(t, org); !strings.Contains(msg, "3scale requires field org_name of every Account") {
		t.Errorf("the Synced message does not say porta requires org_name: %q", msg)
	}

	// A hand edit: back on the drift check.
	if _, err := harness.ByHand(t, ns).UpdateFieldDefinition(context.Background(), tier.Status.FieldDefinitionID,
		tsclient.FieldDefinitionParams{Target: "Account", Label: "Hacked", Choices: []string{"gold", "silver"}}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, tier, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if f := remoteFields(ns)["Account/tier"]; f["label"] != "Partner tier" {
			return "label " + f["label"].(string)
		}
		return ""
	})

	// Deleted: the extra field goes; org_name stays, and no DELETE is sent for it.
	harness.DeleteObjects(t, tier, org)
	harness.WaitGone(t, tier, org)
	got = remoteFields(ns)
	if got["Account/tier"] != nil || got["Account/org_name"] == nil {
		t.Errorf("after the deletions: tier %v, org_name %v; want tier gone, org_name kept", got["Account/tier"], got["Account/org_name"])
	}
	if n := harness.RequestsTo(ns, "DELETE", "/admin/api/fields_definitions/{id}.json"); n != 1 {
		t.Errorf("%d DELETEs of field definitions, want 1 (tier's)", n)
	}
}

// TestNarrowedChoicesAreRefused (issue 44, bad input): choices that leave out a value an account holds
// are Invalid, naming the account and its value, and nothing is written (porta would keep the value but
// the portal's drop-down could not show it); once the value is among the choices, the field syncs.
func TestNarrowedChoicesAreRefused(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	ctx, byHand := context.Background(), harness.ByHand(t, ns)
	if _, err := byHand.CreateFieldDefinition(ctx, tsclient.FieldDefinitionParams{Target: "Account", Name: "tier", Label: "Tier"}); err != nil {
		t.Fatal(err)
	}
	acc, err := byHand.Signup(ctx, tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example",
		Password: "a-long-enough-password", Fields: map[string]string{"tier": "bronze"}})
	if err != nil {
		t.Fatal(err)
	}
	before := harness.WritesTo(ns)
	tier := field(ns, "account-tier", v1alpha1.FieldTargetAccount, "tier", "Tier", "gold", "silver")
	harness.Create(t, tier)
	harness.WaitReason(t, tier, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, tier); !strings.Contains(msg, `choices leave out values accounts hold for field "tier": Globex ("bronze")`) {
		t.Errorf("the refusal does not name the account and its value: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the narrowing wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	if a, err := byHand.GetAccount(ctx, acc.ID); err != nil || a.Fields["tier"] != "bronze" {
		t.Errorf("the account's value: %v (%v), want bronze kept", a, err)
	}
	harness.EditAndWait(t, tier, func() { tier.Spec.Choices = []string{"gold", "silver", "bronze"} })
	if f := remoteFields(ns)["Account/tier"]; len(f["choices"].([]any)) != 3 {
		t.Errorf("the tier field in 3scale: %v, want 3 choices", f)
	}
}

// TestRequiredAndHiddenIsRefusedAtApply: porta refuses a field both required and hidden (or read-only);
// the API server refuses it at apply time, with porta's reason.
func TestRequiredAndHiddenIsRefusedAtApply(t *testing.T) {
	ns := harness.NewNamespace(t)
	f := field(ns, "secret", v1alpha1.FieldTargetUser, "badge", "Badge")
	f.Spec.Required, f.Spec.Hidden = true, true
	err := harness.K8s.Create(context.Background(), f)
	if err == nil || !strings.Contains(err.Error(), "a field cannot be required and hidden or read-only") {
		t.Errorf("creating a required hidden field: %v, want refused saying why", err)
	}
}

// TestLostFieldDefinitionCreateAnswer: the create of a field is applied but its answer lost; the field is
// settled from 3scale's state by its target and name: one field, recorded, no duplicate.
func TestLostFieldDefinitionCreateAnswer(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/fields_definitions.json", Count: 1, Lose: true})
	tier := field(ns, "account-tier", v1alpha1.FieldTargetAccount, "tier", "Tier", "gold", "silver")
	harness.Create(t, harness.DefaultSecret(ns), tier)
	harness.WaitState(t, v1alpha1.ConditionSynced, tier)
	if harness.LostAnswers(ns) != 1 {
		t.Fatalf("%d answers lost, want 1: the test did not exercise recovery", harness.LostAnswers(ns))
	}
	n := 0
	for _, f := range harness.Sim.Objects(ns, simulator.KindFieldsDefinitions) {
		if f["target"] == "Account" && f["name"] == "tier" {
			n++
			if f["id"] != tier.Status.FieldDefinitionID {
				t.Errorf("recorded id %d, want the field's %v", tier.Status.FieldDefinitionID, f["id"])
			}
		}
	}
	if n != 1 {
		t.Errorf("%d tier fields in 3scale, want 1", n)
	}
}
