package simulator

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeatures: a product's features and their enabling on application plans, as porta answers them.
func TestFeatures(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	other, _ := h.product("other")
	base := path("/admin/api/services/%d/features", svc)
	gold := h.create(base+".json", url.Values{"name": {"Gold support"}, "description": {"24/7"}}, "feature")
	portal := h.create(base+".json", url.Values{"feature[name]": {"Portal"}, "feature[system_name]": {"portal"}, "feature[scope]": {"ServicePlan"}}, "feature")
	theirs := h.create(path("/admin/api/services/%d/features.json", other), url.Values{"name": {"Gold support"}}, "feature") // per service
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	planFeatures := path("/admin/api/application_plans/%d/features", plan)

	cases := []fieldCase{
		// The system name is the name parameterized; the scope is rendered underscored; visible is true.
		{"read", "GET", path("%s/%d.json", base, gold), nil, 200, "feature", []string{"name", "system_name", "scope", "visible", "description", "service_id"},
			map[string]any{"name": "Gold support", "system_name": "gold_support", "scope": "application_plan", "visible": true, "description": "24/7", "service_id": nil}},
		{"wrapped, of service plans", "GET", path("%s/%d.json", base, portal), nil, 200, "feature", []string{"system_name", "scope"},
			map[string]any{"system_name": "portal", "scope": "service_plan"}},
		{"the scope as rendered is refused", "POST", base + ".json", url.Values{"name": {"X"}, "scope": {"application_plan"}}, 422, "errors", []string{"scope"},
			map[string]any{"scope": []any{"must be ApplicationPlan or ServicePlan"}}},
		{"duplicate in the service", "POST", base + ".json", url.Values{"system_name": {"gold_support"}}, 422, "errors", []string{"system_name"},
			map[string]any{"system_name": []any{"has already been taken"}}},
		{"no name needed", "POST", base + ".json", url.Values{"system_name": {"bare"}}, 201, "feature", []string{"name", "system_name"},
			map[string]any{"name": "", "system_name": "bare"}},
		{"the scope is not updated, silently", "PUT", path("%s/%d.json", base, gold), url.Values{"scope": {"ServicePlan"}, "name": {"Gold"}}, 200, "feature", []string{"name", "scope"},
			map[string]any{"name": "Gold", "scope": "application_plan"}},
		{"the system name is", "PUT", path("%s/%d.json", base, gold), url.Values{"system_name": {"gold"}}, 200, "feature", []string{"system_name"},
			map[string]any{"system_name": "gold"}},
		{"not blank on update", "PUT", path("%s/%d.json", base, gold), url.Values{"system_name": {""}}, 422, "errors", []string{"system_name"},
			map[string]any{"system_name": []any{"can't be blank"}}},
		{"of another service", "GET", path("%s/%d.json", base, theirs), nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
		{"enabled", "POST", planFeatures + ".json", url.Values{"feature_id": {itoa(gold)}}, 201, "feature", []string{"system_name"},
			map[string]any{"system_name": "gold"}},
		{"another service's is not found", "POST", planFeatures + ".json", url.Values{"feature_id": {itoa(theirs)}}, 404, "", []string{"status"},
			map[string]any{"status": "Not found"}},
		{"one of service plans is refused", "POST", planFeatures + ".json", url.Values{"feature_id": {itoa(portal)}}, 422, "errors", []string{"plan_type"},
			map[string]any{"plan_type": []any{"mismatch"}}},
	}
	checkFields(t, h, cases)
	if res := h.send("POST", base+".json", url.Values{"unrelated": {"1"}}); res.code != 400 || res.raw != "Required parameter missing: feature" {
		t.Errorf("a create with no attribute: %d %q, want 400 (params.require(:feature))", res.code, res.raw)
	}
	if res := h.send("POST", planFeatures+".json", url.Values{"feature_id": {itoa(gold)}}); res.code != 409 || res.raw != "" {
		t.Errorf("enabled again: %d %q, want 409 with no body", res.code, res.raw)
	}
	if res := h.send("GET", planFeatures+".json", nil); !cmp.Equal(listed(res.body, "features", "feature"), []int64{gold}) {
		t.Errorf("the plan's features: %s, want {\"features\":[{\"feature\":{\"id\":%d}}]}", res.raw, gold)
	}
	if res := h.send("DELETE", path("%s/%d.json", planFeatures, portal), nil); res.code != 404 {
		t.Errorf("disabling one not enabled: %d, want 404", res.code)
	}
	if res := h.send("DELETE", path("%s/%d.json", planFeatures, gold), nil); res.code != 200 || res.raw != "" || h.sim.Count("acme", KindPlanFeatures) != 0 {
		t.Errorf("disabling: %d %q, %d enabled left", res.code, res.raw, h.sim.Count("acme", KindPlanFeatures))
	}
	// A feature deleted in use leaves the plans that enabled it; a plan deleted, its features.
	h.send("POST", planFeatures+".json", url.Values{"feature_id": {itoa(gold)}})
	if res := h.send("DELETE", path("%s/%d.json", base, gold), nil); res.code != 200 || h.sim.Count("acme", KindPlanFeatures) != 0 {
		t.Errorf("deleting a feature in use: %d %s, %d enablings left", res.code, res.raw, h.sim.Count("acme", KindPlanFeatures))
	}
	for _, f := range h.sim.Objects("acme", KindFeatures) {
		if f["system_name"] == "bare" {
			h.send("POST", planFeatures+".json", url.Values{"feature_id": {itoa(f["id"].(int64))}})
		}
	}
	if h.sim.Count("acme", KindPlanFeatures) != 1 {
		t.Fatalf("%d enablings, want 1", h.sim.Count("acme", KindPlanFeatures))
	}
	h.send("DELETE", path("/admin/api/services/%d/application_plans/%d.json", svc, plan), nil)
	if n := h.sim.Count("acme", KindPlanFeatures); n != 0 {
		t.Errorf("%d enablings left after the plan's deletion, want 0", n)
	}
	h.send("DELETE", path("/admin/api/services/%d.json", svc), nil)
	if n := h.sim.Count("acme", KindFeatures); n != 1 {
		t.Errorf("%d features left after the product's deletion, want 1 (the other product's)", n)
	}
}
