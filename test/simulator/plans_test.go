package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlans(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	other, _ := h.product("other")
	base := path("/admin/api/services/%d/application_plans", svc)
	plan := h.create(base+".json", url.Values{"name": {"Basic plan"}, "cost_per_month": {"10.5"}}, "application_plan")
	h.create(path("/admin/api/services/%d/application_plans.json", other), url.Values{"name": {"Basic plan"}}, "application_plan") // per service

	cases := []fieldCase{
		{"read", "GET", path("%s/%d.json", base, plan), nil, 200, "application_plan", []string{"name", "system_name", "state", "cost_per_month", "service_id", "links"},
			// No service_id in porta's JSON: the product is in the "service" link.
			map[string]any{"name": "Basic plan", "system_name": "basic_plan", "state": "hidden", "cost_per_month": 10.5, "service_id": nil, "links": []any{
				map[string]any{"rel": "service", "href": fmt.Sprintf("%s/admin/api/services/%d", linkBase, svc)},
				map[string]any{"rel": "self", "href": fmt.Sprintf("%s/admin/api/services/%d/application_plans/%d", linkBase, svc, plan)}}}},
		{"publish", "PUT", path("%s/%d.json", base, plan), url.Values{"state_event": {"publish"}, "trial_period_days": {"7"}}, 200, "application_plan", []string{"state", "trial_period_days"},
			map[string]any{"state": "published", "trial_period_days": float64(7)}},
		{"hide", "PATCH", path("%s/%d.json", base, plan), url.Values{"state_event": {"hide"}}, 200, "application_plan", []string{"state"}, map[string]any{"state": "hidden"}},
		{"bad event", "PUT", path("%s/%d.json", base, plan), url.Values{"state_event": {"explode"}}, 422, "errors", []string{"state_event"},
			map[string]any{"state_event": []any{"is invalid"}}},
		{"duplicate in the service", "POST", base + ".json", url.Values{"name": {"Basic plan"}}, 422, "errors", []string{"system_name"},
			map[string]any{"system_name": []any{"has already been taken"}}},
		{"name required", "POST", base + ".json", url.Values{"system_name": {"x1"}}, 422, "errors", []string{"name"},
			map[string]any{"name": []any{"can't be blank"}}},
		{"plan of another service", "GET", path("/admin/api/services/%d/application_plans/%d.json", other, plan), nil, 404, "", []string{"status"},
			map[string]any{"status": "Not found"}},
	}
	checkFields(t, h, cases)
	res := h.send("GET", base+".json", nil)
	if diff := cmp.Diff([]int64{plan}, listed(res.body, "plans", "application_plan")); diff != "" {
		t.Errorf("list {\"plans\":[{\"application_plan\":...}]} (-want +got):\n%s", diff)
	}
	if res := h.send("DELETE", path("%s/%d.json", base, plan), nil); res.code != 200 || h.sim.Count("acme", KindPlans) != 1 {
		t.Errorf("DELETE: %d %s, %d plans left", res.code, res.raw, h.sim.Count("acme", KindPlans))
	}
}

func TestLimitsAndPricingRules(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("pets")
	b, bhits := h.backend("b1")
	_, unused := h.backend("b2")
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	limits := func(metric int64) string {
		return path("/admin/api/application_plans/%d/metrics/%d/limits", plan, metric)
	}
	pricing := func(metric int64) string {
		return path("/admin/api/application_plans/%d/metrics/%d/pricing_rules", plan, metric)
	}
	l1 := h.create(limits(hits)+".json", url.Values{"period": {"minute"}, "value": {"10"}}, "limit")
	h.create(pricing(hits)+".json", url.Values{"min": {"1"}, "max": {"100"}, "cost_per_unit": {"0.5"}}, "pricing_rule")

	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantRaw            string // exact body, or empty to check the code only
	}{
		{"limit read", "GET", path("%s/%d.json", limits(hits), l1), nil, 200, ""},
		{"limit update", "PUT", path("%s/%d.json", limits(hits), l1), url.Values{"value": {"20"}}, 200, ""},
		{"period enum", "POST", limits(hits) + ".json", url.Values{"period": {"fortnight"}, "value": {"1"}}, 422, `{"errors":{"period":["is invalid"]}}`},
		{"one limit per period", "POST", limits(hits) + ".json", url.Values{"period": {"minute"}, "value": {"1"}}, 422, `{"errors":{"period":["has already been taken"]}}`},
		{"negative value is 0", "POST", limits(hits) + ".json", url.Values{"period": {"hour"}, "value": {"-5"}}, 201, ""},
		{"backend not used yet", "POST", limits(bhits) + ".json", url.Values{"period": {"day"}, "value": {"1"}}, 404, `{"status":"Not found"}`},
		{"use the backend", "POST", path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, 201, ""},
		{"backend metric limit", "POST", limits(bhits) + ".json", url.Values{"period": {"day"}, "value": {"1"}}, 201, ""},
		{"backend metric pricing", "POST", pricing(bhits) + ".json", url.Values{"min": {"1"}, "cost_per_unit": {"1"}}, 201, ""},
		{"unused backend's metric", "POST", limits(unused) + ".json", url.Values{"period": {"day"}, "value": {"1"}}, 404, `{"status":"Not found"}`},
		{"overlap", "POST", pricing(hits) + ".json", url.Values{"min": {"100"}, "max": {"200"}, "cost_per_unit": {"0.1"}}, 422, `{"errors":{"min":["overlaps with other pricing rule"]}}`},
		{"max below min", "POST", pricing(hits) + ".json", url.Values{"min": {"300"}, "max": {"200"}, "cost_per_unit": {"0.1"}}, 422, `{"errors":{"max":["must be greater than min"]}}`},
		{"min from 1", "POST", pricing(hits) + ".json", url.Values{"min": {"0"}, "max": {"0"}, "cost_per_unit": {"0.1"}}, 422, `{"errors":{"min":["must be greater than or equal to 1"]}}`},
		{"cost is a number", "POST", pricing(hits) + ".json", url.Values{"min": {"101"}, "cost_per_unit": {"cheap"}}, 422, `{"errors":{"cost_per_unit":["is not a number"]}}`},
		{"adjacent range", "POST", pricing(hits) + ".json", url.Values{"min": {"101"}, "cost_per_unit": {"0.1"}}, 201, ""},
		{"open range blocks above", "POST", pricing(hits) + ".json", url.Values{"min": {"5000"}, "max": {"6000"}, "cost_per_unit": {"0.1"}}, 422, `{"errors":{"min":["overlaps with other pricing rule"]}}`},
	}
	for _, tc := range cases {
		res := h.send(tc.method, tc.path, tc.form)
		if res.code != tc.wantCode || (tc.wantRaw != "" && res.raw != tc.wantRaw) {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, res.code, res.raw, tc.wantCode, tc.wantRaw)
		}
	}

	res := h.send("GET", path("/admin/api/application_plans/%d/limits.json", plan), nil)
	got := map[string]any{}
	for _, it := range res.body.(map[string]any)["limits"].([]any) {
		l := it.(map[string]any)["limit"].(map[string]any)
		got[fmt.Sprintf("%v/%v", l["metric_id"], l["period"])] = l["value"]
	}
	want := map[string]any{fmt.Sprintf("%d/minute", hits): float64(20), fmt.Sprintf("%d/hour", hits): float64(0), fmt.Sprintf("%d/day", bhits): float64(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan limits (-want +got):\n%s", diff)
	}
	res = h.send("GET", path("/admin/api/application_plans/%d/pricing_rules.json", plan), nil)
	if n := len(listed(res.body, "pricing_rules", "pricing_rule")); n != 3 {
		t.Errorf("%d pricing rules listed, want 3: %s", n, res.raw)
	}

	// Removing the backend usage removes the plan's limits on the backend's metrics.
	usage := h.sim.Objects("acme", KindBackendUsages)[0]["id"]
	h.send("DELETE", path("/admin/api/services/%d/backend_usages/%v.json", svc, usage), nil)
	if n := h.sim.Count("acme", KindLimits); n != 2 {
		t.Errorf("%d limits after the backend usage went, want 2", n)
	}
	// Deleting a limit.
	if res := h.send("DELETE", path("%s/%d.json", limits(hits), l1), nil); res.code != 200 || h.sim.Count("acme", KindLimits) != 1 {
		t.Errorf("DELETE limit: %d, %d left", res.code, h.sim.Count("acme", KindLimits))
	}
}
