package serviceplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// servicePlan is a ServicePlan of the petstore Product.
func servicePlan(ns, name, display string, published, def bool) *v1alpha1.ServicePlan {
	return &v1alpha1.ServicePlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServicePlanSpec{ProductRef: "petstore", Name: display, Published: &published, Default: def}}
}

// remotePlans are a tenant's service plans in 3scale, by name.
func remotePlans(ns string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range harness.Sim.Objects(ns, simulator.KindServicePlans) {
		out[p["name"].(string)] = p
	}
	return out
}

// TestServicePlans (issue 44): a ServicePlan makes its product's service plan, published and made the
// default with porta's calls; a hand edit comes back on a drift check; the "Default" plan porta makes with
// every product is adopted by name with no write; a second default plan of a product is Invalid and
// writes nothing until the first lets go; deleting a plan an account subscribes to waits, saying so; the
// plans go with their product.
func TestServicePlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	gold := servicePlan(ns, "gold", "Gold", true, true)
	approval := true
	gold.Spec.ApprovalRequired = &approval
	harness.Create(t, harness.DefaultSecret(ns), backend, product, gold)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, gold)
	p := remotePlans(ns)["Gold"]
	if p == nil || p["state"] != "published" || p["approval_required"] != true || p["default"] != true {
		t.Fatalf("the Gold plan in 3scale: %v, want published, approval required, default", p)
	}

	// A hand edit: the drift check puts the name back.
	if _, err := harness.ByHand(t, ns).UpdateServicePlan(context.Background(), product.Status.ProductID, gold.Status.ServicePlanID, tsclient.ServicePlanParams{Name: "Renamed"}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, gold, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, gold)
	if remotePlans(ns)["Gold"] == nil {
		t.Errorf("after the drift check: plans %v, want Gold back", remotePlans(ns))
	}

	// porta's own "Default" plan of the product is adopted by its name, nothing written.
	seeded := servicePlan(ns, "default", "Default", true, false)
	before := harness.WritesTo(ns)
	harness.Create(t, seeded)
	harness.WaitState(t, v1alpha1.ConditionSynced, seeded)
	harness.WantEvent(t, seeded, "Adopted")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("adopting the product's Default plan wrote %d times: %v", n, harness.LastWrites(ns, n))
	}

	// A second default: Invalid, nothing written; it takes over once Gold lets go.
	silver := servicePlan(ns, "silver", "Silver", true, true)
	before = harness.WritesTo(ns)
	harness.Create(t, silver)
	harness.WaitReason(t, silver, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, silver); !strings.Contains(msg, `ServicePlan "gold" already is the default service plan of Product "petstore"`) {
		t.Errorf("the refusal does not name the default plan: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the second default plan wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	harness.EditAndWait(t, gold, func() { gold.Spec.Default = false })
	harness.WaitState(t, v1alpha1.ConditionSynced, silver)
	if p := remotePlans(ns)["Silver"]; p == nil || p["default"] != true {
		t.Errorf("Silver in 3scale: %v, want the default", p)
	}

	// An account subscribed to the default plan, Silver, by its signup (porta's signup subscribes to each
	// product's default service plan): Silver's deletion waits, saying why, until the account goes.
	byHand := harness.ByHand(t, ns)
	acc, err := byHand.Signup(context.Background(), tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example", Password: "a-long-enough-password"})
	if err != nil {
		t.Fatal(err)
	}
	harness.DeleteObjects(t, silver)
	harness.WaitReason(t, silver, v1alpha1.ConditionOrphan, v1alpha1.ReasonDeletionBlocked)
	if _, _, msg := harness.SyncState(t, silver); !strings.Contains(msg, "while accounts subscribe to it") {
		t.Errorf("the blocked deletion does not say why: %q", msg)
	}
	if err := byHand.DeleteAccount(context.Background(), acc.ID); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, silver)
	if remotePlans(ns)["Silver"] != nil {
		t.Errorf("the deleted ServicePlan's plan is still in 3scale")
	}

	// The product's deletion takes its plans along: they make no call of their own.
	harness.DeleteObjects(t, product, gold, seeded)
	harness.WaitGone(t, product, gold, seeded)
	done := 0
	for _, d := range harness.RemoteDeletions(ns, 0) {
		if d == "service_plans 200" {
			done++
		}
	}
	if done != 1 {
		t.Errorf("%d service plans deleted by their own call, want 1 (Silver's; the others went with their product): %v", done, harness.RemoteDeletions(ns, 0))
	}
}

// TestLostServicePlanCreateAnswer: the answer to a service plan's create is lost (porta made it); the plan
// is settled from 3scale's state, by its name: one plan, no duplicate.
func TestLostServicePlanCreateAnswer(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/service_plans.json", Count: 1, Lose: true})
	gold := servicePlan(ns, "gold", "Gold", true, false)
	harness.Create(t, gold)
	harness.WaitState(t, v1alpha1.ConditionSynced, gold)
	if harness.LostAnswers(ns) != 1 {
		t.Fatalf("%d answers lost, want 1: the test did not exercise recovery", harness.LostAnswers(ns))
	}
	n := 0
	for _, p := range harness.Sim.Objects(ns, simulator.KindServicePlans) {
		if p["name"] == "Gold" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d Gold plans in 3scale, want 1", n)
	}
}

// enabledOn are the system names of the features 3scale enables on plan id.
func enabledOn(ns string, id int64) []string {
	names := map[int64]string{}
	for _, f := range harness.Sim.Objects(ns, simulator.KindFeatures) {
		names[f["id"].(int64)] = f["system_name"].(string)
	}
	var out []string
	for _, e := range harness.Sim.Objects(ns, simulator.KindPlanFeatures) {
		if e["plan_id"] == id {
			out = append(out, names[e["feature_id"].(int64)])
		}
	}
	slices.Sort(out)
	return out
}

// TestServicePlanFeatures (issue 44): a ServicePlan enables its Product's ServicePlan-scoped features
// (porta's service_plans/{id}/features); one enabled by hand stays, one left out of the spec is
// disabled. A feature of another scope, or one the Product does not declare, is Invalid at once, naming
// it, and nothing is written.
func TestServicePlanFeatures(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.Features = map[string]v1alpha1.FeatureSpec{
		"portal":  {Name: "Portal", Scope: tsclient.FeatureScopeServicePlan},
		"support": {Name: "Support", Scope: tsclient.FeatureScopeServicePlan},
		"gold":    {Name: "Gold"},
	}
	gold := servicePlan(ns, "gold", "Gold", true, false)
	gold.Spec.Features = []string{"portal", "support"}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, gold)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, gold)
	if got := enabledOn(ns, gold.Status.ServicePlanID); !slices.Equal(got, []string{"portal", "support"}) {
		t.Fatalf("features enabled on the Gold plan %v, want portal and support", got)
	}
	if gold.Status.FeatureIDs["portal"] != product.Status.FeatureIDs["portal"] {
		t.Errorf("recorded: plan %v, product %v", gold.Status.FeatureIDs, product.Status.FeatureIDs)
	}

	// Support leaves the spec: disabled. A feature enabled by hand is left as it is.
	extra, err := harness.ByHand(t, ns).CreateProductFeature(context.Background(), product.Status.ProductID,
		tsclient.FeatureParams{Name: "Extra", SystemName: "extra", Scope: tsclient.FeatureScopeServicePlan})
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.ByHand(t, ns).EnablePlanFeature(context.Background(), tsclient.ServicePlans, gold.Status.ServicePlanID, extra.ID); err != nil {
		t.Fatal(err)
	}
	harness.EditAndWait(t, gold, func() { gold.Spec.Features = []string{"portal"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := enabledOn(ns, gold.Status.ServicePlanID); !slices.Equal(got, []string{"extra", "portal"}) {
			return "enabled " + strings.Join(got, ",") + ", want extra (by hand) and portal"
		}
		return ""
	})

	// Bad input: a feature of the ApplicationPlan scope, one the Product does not declare.
	before := harness.WritesTo(ns)
	wrongScope := servicePlan(ns, "wrong-scope", "Wrong scope", false, false)
	wrongScope.Spec.Features = []string{"gold"}
	unknown := servicePlan(ns, "unknown", "Unknown", false, false)
	unknown.Spec.Features = []string{"nope"}
	harness.Create(t, wrongScope, unknown)
	for obj, want := range map[*v1alpha1.ServicePlan]string{
		wrongScope: `feature "gold" of Product "petstore" has scope ApplicationPlan: only plans of that kind can enable it, not this ServicePlan`,
		unknown:    `feature "nope" is not one of Product "petstore"'s features`,
	} {
		harness.WaitReason(t, obj, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
		if _, _, msg := harness.SyncState(t, obj); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to say %q", obj.Name, msg, want)
		}
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the invalid plans wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
}
