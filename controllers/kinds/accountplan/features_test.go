package accountplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// accountFeatures are the tenant's account features as "system_name=name", and the system names of
// those each account plan enables, by plan id.
func accountFeatures(ns string) (features []string, enabled map[int64][]string) {
	names := map[int64]string{}
	for _, f := range harness.Sim.Objects(ns, simulator.KindFeatures) {
		if f["scope"] == "account_plan" {
			names[f["id"].(int64)] = f["system_name"].(string)
			features = append(features, f["system_name"].(string)+"="+f["name"].(string))
		}
	}
	enabled = map[int64][]string{}
	for _, e := range harness.Sim.Objects(ns, simulator.KindPlanFeatures) {
		if name, ok := names[e["feature_id"].(int64)]; ok {
			enabled[e["plan_id"].(int64)] = append(enabled[e["plan_id"].(int64)], name)
		}
	}
	slices.Sort(features)
	for _, v := range enabled {
		slices.Sort(v)
	}
	return features, enabled
}

// TestAccountPlanFeatures (issue 44): AccountPlans declare the tenant's account features and enable them
// (porta's /admin/api/features and account_plans/{id}/features): two plans declaring one feature alike
// share it; one made by hand with a declared system name is taken and updated; renamed by hand, it comes
// back on a drift check. A feature one plan lets go is disabled on it and stays while the other declares
// it; when no plan declares it, it is deleted. A feature declared with another name by a younger plan is
// Invalid naming the older, and nothing is written.
func TestAccountPlanFeatures(t *testing.T) {
	ns := harness.NewNamespace(t)
	ctx := context.Background()
	harness.Create(t, harness.DefaultSecret(ns))
	byHand := harness.ByHand(t, ns)
	listed, err := byHand.CreateAccountFeature(ctx, tsclient.FeatureParams{Name: "Listed (by hand)", SystemName: "listed"})
	if err != nil {
		t.Fatal(err)
	}
	partners := accountPlan(ns, "partners", "Partners", true, false)
	partners.Spec.Features = map[string]v1alpha1.AccountFeatureSpec{
		"listed":  {Name: "Listed", Description: "In the partner directory"},
		"support": {Name: "Support"},
	}
	resellers := accountPlan(ns, "resellers", "Resellers", true, false)
	resellers.Spec.Features = map[string]v1alpha1.AccountFeatureSpec{"support": {Name: "Support"}}
	harness.Create(t, partners)
	harness.WaitState(t, v1alpha1.ConditionSynced, partners)
	harness.Create(t, resellers)
	harness.WaitState(t, v1alpha1.ConditionSynced, resellers)
	features, enabled := accountFeatures(ns)
	if want := []string{"listed=Listed", "support=Support"}; !slices.Equal(features, want) {
		t.Errorf("account features %v, want %v (listed taken and renamed, support made once)", features, want)
	}
	if got := enabled[partners.Status.AccountPlanID]; !slices.Equal(got, []string{"listed", "support"}) {
		t.Errorf("Partners enables %v, want listed and support", got)
	}
	if got := enabled[resellers.Status.AccountPlanID]; !slices.Equal(got, []string{"support"}) {
		t.Errorf("Resellers enables %v, want support", got)
	}
	if partners.Status.FeatureIDs["listed"] != listed.ID || partners.Status.FeatureIDs["support"] != resellers.Status.FeatureIDs["support"] {
		t.Errorf("recorded: Partners %v, Resellers %v; want listed %d and one support", partners.Status.FeatureIDs, resellers.Status.FeatureIDs, listed.ID)
	}

	// Renamed by hand: the drift check puts it back, the same feature.
	if _, err := byHand.UpdateAccountFeature(ctx, listed.ID, tsclient.FeatureParams{Name: "Hacked", SystemName: "hacked"}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, partners, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if features, _ := accountFeatures(ns); !slices.Equal(features, []string{"listed=Listed", "support=Support"}) {
			return "account features " + strings.Join(features, ",")
		}
		return ""
	})

	// Partners lets support go: disabled on Partners, kept for Resellers.
	harness.EditAndWait(t, partners, func() { delete(partners.Spec.Features, "support") })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		features, enabled := accountFeatures(ns)
		if !slices.Equal(features, []string{"listed=Listed", "support=Support"}) || !slices.Equal(enabled[partners.Status.AccountPlanID], []string{"listed"}) ||
			!slices.Equal(enabled[resellers.Status.AccountPlanID], []string{"support"}) {
			return "features " + strings.Join(features, ",") + "; Partners " + strings.Join(enabled[partners.Status.AccountPlanID], ",")
		}
		return ""
	})

	// A younger plan declaring support otherwise: Invalid, naming the older; nothing written.
	before := harness.WritesTo(ns)
	other := accountPlan(ns, "other", "Other", false, false)
	other.Spec.Features = map[string]v1alpha1.AccountFeatureSpec{"support": {Name: "Premium support"}}
	harness.Create(t, other)
	harness.WaitReason(t, other, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, other); !strings.Contains(msg, `feature "support" is declared by AccountPlan "resellers" with another name or description`) {
		t.Errorf("the refusal does not name the other plan: %q", msg)
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the plan declaring a feature otherwise wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	harness.DeleteObjects(t, other)
	harness.WaitGone(t, other)

	// Resellers is deleted: no plan declares support any more, so it goes; listed stays with Partners.
	harness.DeleteObjects(t, resellers)
	harness.WaitGone(t, resellers)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if features, _ := accountFeatures(ns); !slices.Equal(features, []string{"listed=Listed"}) {
			return "account features " + strings.Join(features, ",")
		}
		return ""
	})
}
