package applicationplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// remoteFeatures lists a tenant's features as "system_name:scope" and the enablings as
// "plan_id/system_name".
func remoteFeatures(ns string) (features, enabled []string) {
	names := map[int64]string{}
	for _, f := range harness.Sim.Objects(ns, simulator.KindFeatures) {
		names[f["id"].(int64)] = f["system_name"].(string)
		features = append(features, f["system_name"].(string)+":"+f["scope"].(string))
	}
	for _, e := range harness.Sim.Objects(ns, simulator.KindPlanFeatures) {
		enabled = append(enabled, kit.Itoa64(e["plan_id"].(int64))+"/"+names[e["feature_id"].(int64)])
	}
	slices.Sort(features)
	slices.Sort(enabled)
	return features, enabled
}

// TestPlanFeatures: a Product's features are made in 3scale and the plans enable theirs; one changed by
// hand is repaired; an edit updates them in place; what leaves a spec leaves 3scale; what a person made
// or enabled by hand is left alone.
func TestPlanFeatures(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	product := harness.PetstoreProduct(ns, backend.Name)
	product.Spec.Features = map[string]v1alpha1.FeatureSpec{
		"gold":   {Name: "Gold support", Description: "24/7"},
		"portal": {Name: "Portal", Scope: "ServicePlan"},
	}
	plan := harness.BasicPlan(ns, "basic", product.Name)
	plan.Spec.Features = []string{"gold"}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	planID := kit.Itoa64(plan.Status.PlanID)
	features, enabled := remoteFeatures(ns)
	if want := []string{"gold:application_plan", "portal:service_plan"}; !slices.Equal(features, want) {
		t.Errorf("features in 3scale %v, want %v", features, want)
	}
	if want := []string{planID + "/gold"}; !slices.Equal(enabled, want) {
		t.Errorf("enabled %v, want %v", enabled, want)
	}
	if product.Status.FeatureIDs["gold"] == 0 || plan.Status.FeatureIDs["gold"] != product.Status.FeatureIDs["gold"] {
		t.Errorf("recorded ids: product %v, plan %v", product.Status.FeatureIDs, plan.Status.FeatureIDs)
	}

	// Renamed by hand in the admin portal, system name and all: put back at the next drift check (here
	// asked for: sync-now), the same feature, not made again beside it.
	adminURL, token := harness.TenantOf(ns)
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: token, Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	goldID := product.Status.FeatureIDs["gold"]
	if _, err := c.UpdateProductFeature(ctx, product.Status.ProductID, goldID, tsclient.FeatureParams{Name: "Hacked", SystemName: "hacked"}); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, product, func() { product.Annotations = map[string]string{v1alpha1.SyncNowAnnotation: "1"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		for _, f := range harness.Sim.Objects(ns, simulator.KindFeatures) {
			if f["id"] == goldID && (f["name"] != "Gold support" || f["description"] != "24/7" || f["system_name"] != "gold") {
				return "gold not repaired yet"
			}
		}
		return ""
	})
	if features, _ := remoteFeatures(ns); !slices.Equal(features, []string{"gold:application_plan", "portal:service_plan"}) {
		t.Errorf("features after the repair %v, want gold and portal only", features)
	}

	// A person adds a feature and enables it by hand: apimsync leaves both.
	manual, err := c.CreateProductFeature(ctx, product.Status.ProductID, tsclient.FeatureParams{Name: "Manual", SystemName: "manual", Scope: tsclient.FeatureScopeApplicationPlan})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnablePlanFeature(ctx, tsclient.ApplicationPlans, plan.Status.PlanID, manual.ID); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, product, func() { product.Spec.Features["gold"] = v1alpha1.FeatureSpec{Name: "Gold", Description: "24/7"} })
	harness.Update(t, plan, func() { plan.Spec.Features = nil })
	harness.WaitState(t, v1alpha1.ConditionSynced, product, plan)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, enabled := remoteFeatures(ns); !slices.Equal(enabled, []string{planID + "/manual"}) {
			return "enabled " + strings.Join(enabled, ",") + ", want the manual one only"
		}
		return ""
	})
	if f := harness.Sim.Objects(ns, simulator.KindFeatures); !slices.ContainsFunc(f, func(m map[string]any) bool { return m["id"] == goldID && m["name"] == "Gold" }) {
		t.Errorf("gold not renamed in place: %v", f)
	}

	// Removed from the Product: deleted in 3scale; the manual one stays.
	harness.Update(t, product, func() { delete(product.Spec.Features, "gold") })
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if features, _ := remoteFeatures(ns); !slices.Equal(features, []string{"manual:application_plan", "portal:service_plan"}) {
			return "features " + strings.Join(features, ",")
		}
		return ""
	})
	if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	if _, kept := product.Status.FeatureIDs["gold"]; kept {
		t.Errorf("status still records the deleted feature: %v", product.Status.FeatureIDs)
	}
}

// TestPlanFeaturesBadInput: a plan naming a feature its Product does not declare, or one only service
// plans may enable, is Invalid at once with a message that names it.
func TestPlanFeaturesBadInput(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	product := harness.PetstoreProduct(ns, backend.Name)
	product.Spec.Features = map[string]v1alpha1.FeatureSpec{"portal": {Name: "Portal", Scope: "ServicePlan"}}
	unknown := harness.BasicPlan(ns, "unknown", product.Name)
	unknown.Spec.Features = []string{"nope"}
	servicePlans := harness.BasicPlan(ns, "service-plans", product.Name)
	servicePlans.Spec.Features = []string{"portal"}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, unknown, servicePlans)
	harness.WaitReason(t, unknown, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	harness.WaitReason(t, servicePlans, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	for obj, want := range map[*v1alpha1.ApplicationPlan]string{
		unknown:      `feature "nope" is not one of Product "petstore"'s features`,
		servicePlans: `feature "portal" of Product "petstore" has scope ServicePlan`,
	} {
		if _, _, msg := harness.SyncState(t, obj); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to say %q", obj.Name, msg, want)
		}
	}
}

// TestProductTakesAHandMadeFeature: a feature made by hand that the spec then declares is taken (and
// updated), also when the Product's cached features do not show it yet: not a second one, not Invalid.
func TestProductTakesAHandMadeFeature(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	product := harness.PetstoreProduct(ns, backend.Name)
	product.Spec.Features = map[string]v1alpha1.FeatureSpec{"gold": {Name: "Gold"}}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)
	silver, err := harness.TenantClient(t, ns).CreateProductFeature(context.Background(), product.Status.ProductID,
		tsclient.FeatureParams{Name: "Silver (by hand)", SystemName: "silver", Scope: tsclient.FeatureScopeApplicationPlan})
	if err != nil {
		t.Fatal(err)
	}
	harness.Update(t, product, func() { product.Spec.Features["silver"] = v1alpha1.FeatureSpec{Name: "Silver"} })
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	if product.Status.FeatureIDs["silver"] != silver.ID {
		t.Errorf("status.featureIDs %v, want silver's %d (the one made by hand, taken)", product.Status.FeatureIDs, silver.ID)
	}
	features := harness.Sim.Objects(ns, simulator.KindFeatures)
	if len(features) != 2 || !slices.ContainsFunc(features, func(f map[string]any) bool { return f["id"] == silver.ID && f["name"] == "Silver" }) {
		t.Errorf("features in 3scale %v, want gold and the taken silver, renamed", features)
	}
}

// TestFeaturesThroughLostAnswers: the create of a feature and its enabling on a plan are applied but their
// answers lost: the feature is found by its system name and enabling again is taken as done (porta's
// 409): one feature, enabled once, both recorded.
func TestFeaturesThroughLostAnswers(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/features.json", Count: 1, Lose: true})
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/application_plans/{application_plan_id}/features.json", Count: 1, Lose: true})
	backend := harness.PetsBackend(ns)
	product := harness.PetstoreProduct(ns, backend.Name)
	product.Spec.Features = map[string]v1alpha1.FeatureSpec{"gold": {Name: "Gold"}}
	plan := harness.BasicPlan(ns, "basic", product.Name)
	plan.Spec.Features = []string{"gold"}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan)
	features, enabled := remoteFeatures(ns)
	if !slices.Equal(features, []string{"gold:application_plan"}) || !slices.Equal(enabled, []string{kit.Itoa64(plan.Status.PlanID) + "/gold"}) {
		t.Errorf("features %v, enabled %v; want gold once, enabled once", features, enabled)
	}
	if lost := harness.LostAnswers(ns); lost != 2 {
		t.Errorf("%d answers lost, want the 2 scripted", lost)
	}
	if product.Status.FeatureIDs["gold"] == 0 || plan.Status.FeatureIDs["gold"] != product.Status.FeatureIDs["gold"] {
		t.Errorf("recorded: product %v, plan %v", product.Status.FeatureIDs, plan.Status.FeatureIDs)
	}
}
