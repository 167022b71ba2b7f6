package simulator

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAccountPlans: account plans as porta answers them (account_plans_controller.rb, plan.rb,
// plan_representer.rb).
func TestAccountPlans(t *testing.T) {
	h := newHarness(t)
	// A new tenant has the sample data's "Default" account plan, hidden, its default
	// (app/lib/logic/provider_signup.rb:30-31).
	res := h.check("list", "GET", "/admin/api/account_plans.json", nil, 200, "")
	seeded := listed(res.body, "plans", "account_plan")
	if len(seeded) != 1 {
		t.Fatalf("a new tenant's account plans: %s, want the Default one", res.raw)
	}
	gold := h.create("/admin/api/account_plans.json", url.Values{"name": {"Gold"}, "setup_fee": {"5"}, "description": {"x"}}, "account_plan")
	base := "/admin/api/account_plans"

	cases := []fieldCase{
		{"the seeded default", "GET", path("%s/%d.json", base, seeded[0]), nil, 200, "account_plan", []string{"name", "state", "default"},
			map[string]any{"name": "Default", "state": "hidden", "default": true}},
		// PlanRepresenter (plan_representer.rb:4-35): no system_name, no description, no links; fees as
		// floats, whatever was sent (only name, state_event, approval_required, system_name are permitted,
		// account_plans_controller.rb:53-61).
		{"read", "GET", path("%s/%d.json", base, gold), nil, 200, "account_plan",
			[]string{"name", "state", "setup_fee", "cost_per_month", "trial_period_days", "cancellation_period", "approval_required", "default", "system_name", "description", "links"},
			map[string]any{"name": "Gold", "state": "hidden", "setup_fee": 0.0, "cost_per_month": 0.0, "trial_period_days": 0.0, "cancellation_period": 0.0,
				"approval_required": false, "default": false, "system_name": nil, "description": nil, "links": nil}},
		{"publish", "PUT", path("%s/%d.json", base, gold), url.Values{"state_event": {"publish"}, "approval_required": {"true"}}, 200, "account_plan",
			[]string{"state", "approval_required"}, map[string]any{"state": "published", "approval_required": true}},
		{"blank name", "PUT", path("%s/%d.json", base, gold), url.Values{"name": {""}}, 422, "errors", []string{"name"},
			map[string]any{"name": []any{"can't be blank"}}},
		// system_name unique among the tenant's account plans (plan.rb:17); the seeded one is "default".
		{"duplicate system name", "POST", base + ".json", url.Values{"name": {"Default"}}, 422, "errors", []string{"system_name"},
			map[string]any{"system_name": []any{"has already been taken"}}},
		{"make default", "PUT", path("%s/%d/default.json", base, gold), nil, 200, "account_plan", []string{"default"}, map[string]any{"default": true}},
		{"the former default", "GET", path("%s/%d.json", base, seeded[0]), nil, 200, "account_plan", []string{"default"}, map[string]any{"default": false}},
		{"unknown", "GET", base + "/424242.json", nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
	}
	checkFields(t, h, cases)
	// params.require(:account_plan) (account_plans_controller.rb:55-61) with wrap_parameters.
	h.check("no plan attribute", "POST", base+".json", url.Values{"unrelated": {"1"}}, 400, "Required parameter missing: account_plan")

	// A signup contracts the default account plan, which now requires approval: the admin stays pending
	// (User#activate_on_minimal?, app/models/user/states.rb:78-80).
	acc, admin := h.signup("ACME", "alice", url.Values{"password": {strongPassword}})
	h.check("the account's plan", "GET", path("/admin/api/accounts/%d/plan.json", acc), nil, 200, "")
	if got := fields(h.send("GET", path("/admin/api/accounts/%d/plan.json", acc), nil).body, "account_plan", "id"); got["id"] != float64(gold) {
		t.Errorf("account plan %v, want %d", got, gold)
	}
	if got := fields(h.send("GET", path("/admin/api/accounts/%d/users/%d.json", acc, admin), nil).body, "user", "state"); got["state"] != "pending" {
		t.Errorf("admin %v, want pending (the plan requires approval)", got)
	}
	// The portal's account_approval_required is the default account plan's (settings.rb:56-58).
	if got := fields(h.send("GET", "/admin/api/settings.json", nil).body, "settings", "account_approval_required"); got["account_approval_required"] != true {
		t.Errorf("settings %v, want account_approval_required true", got)
	}

	// A plan an account has cannot be deleted (plan.rb:174-186, en.yml:2050): 403.
	h.check("delete in use", "DELETE", path("%s/%d.json", base, gold), nil, 403,
		`{"errors":{"base":["This account plan cannot be deleted! At least one account depends on it."]}}`)
	// change_plan (accounts_controller.rb:64-71) answers the plan.
	res = h.check("change plan", "PUT", path("/admin/api/accounts/%d/change_plan.json", acc), url.Values{"plan_id": {itoa(seeded[0])}}, 200, "")
	if got := fields(res.body, "account_plan", "id", "name"); !cmp.Equal(got, map[string]any{"id": float64(seeded[0]), "name": "Default"}) {
		t.Errorf("change_plan answered %s", res.raw)
	}
	h.check("change to another tenant's kind of id", "PUT", path("/admin/api/accounts/%d/change_plan.json", acc), url.Values{"plan_id": {"424242"}}, 404, `{"status":"Not found"}`)
	h.check("delete once free", "DELETE", path("%s/%d.json", base, gold), nil, 200, "")
	if n := h.sim.Count("acme", KindAccountPlans); n != 1 {
		t.Errorf("%d account plans left, want 1", n)
	}
	// No default account plan any more: a signup finds no plan, 404 (signups_controller.rb:27,
	// plans_with_defaults.rb:95-98)...
	h.check("signup without a default account plan", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}}, 404, `{"status":"Not found"}`)
	// ...unless account_plan_id names one (signups_controller.rb:42-52).
	h.check("signup with account_plan_id", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}, "account_plan_id": {itoa(seeded[0])}}, 201, "")
}

// TestPlanFeatures: the account's features and their enabling on account plans
// (account_features_controller.rb, account_plan_features_controller.rb, feature.rb:62-80), and a
// service's features on its service plans (service_plan_features_controller.rb).
func TestPlanFeatures(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	svcPlan := listed(h.send("GET", path("/admin/api/services/%d/service_plans.json", svc), nil).body, "plans", "service_plan")[0]
	accPlan := listed(h.send("GET", "/admin/api/account_plans.json", nil).body, "plans", "account_plan")[0]
	// An account feature's scope is AccountPlan whatever is sent (try_to_set_scope, feature.rb:62-67).
	vip := h.create("/admin/api/features.json", url.Values{"name": {"VIP"}, "scope": {"ServicePlan"}}, "feature")
	portal := h.create(path("/admin/api/services/%d/features.json", svc), url.Values{"name": {"Portal"}, "scope": {"ServicePlan"}}, "feature")
	gold := h.create(path("/admin/api/services/%d/features.json", svc), url.Values{"name": {"Gold"}}, "feature")
	checkFields(t, h, []fieldCase{
		{"account feature", "GET", path("/admin/api/features/%d.json", vip), nil, 200, "feature", []string{"system_name", "scope"},
			map[string]any{"system_name": "vip", "scope": "account_plan"}},
		{"rename", "PUT", path("/admin/api/features/%d.json", vip), url.Values{"name": {"V.I.P."}}, 200, "feature", []string{"name"}, map[string]any{"name": "V.I.P."}},
		{"a service's is not the account's", "GET", path("/admin/api/features/%d.json", portal), nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
		{"enable on the account plan", "POST", path("/admin/api/account_plans/%d/features.json", accPlan), url.Values{"feature_id": {itoa(vip)}}, 201, "feature",
			[]string{"id"}, map[string]any{"id": float64(vip)}},
		{"a service's on the account plan", "POST", path("/admin/api/account_plans/%d/features.json", accPlan), url.Values{"feature_id": {itoa(portal)}}, 404, "",
			[]string{"status"}, map[string]any{"status": "Not found"}},
		{"enable on the service plan", "POST", path("/admin/api/service_plans/%d/features.json", svcPlan), url.Values{"feature_id": {itoa(portal)}}, 201, "feature",
			[]string{"id"}, map[string]any{"id": float64(portal)}},
		{"an application plans' one", "POST", path("/admin/api/service_plans/%d/features.json", svcPlan), url.Values{"feature_id": {itoa(gold)}}, 422, "errors",
			[]string{"plan_type"}, map[string]any{"plan_type": []any{"mismatch"}}},
		{"unknown service plan", "GET", "/admin/api/service_plans/424242/features.json", nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
	})
	if res := h.send("GET", path("/admin/api/account_plans/%d/features.json", accPlan), nil); !cmp.Equal(listed(res.body, "features", "feature"), []int64{vip}) {
		t.Errorf("the account plan's features: %s", res.raw)
	}
	if res := h.send("GET", "/admin/api/features.json", nil); !cmp.Equal(listed(res.body, "features", "feature"), []int64{vip}) {
		t.Errorf("the account's features: %s", res.raw)
	}
	h.check("disable", "DELETE", path("/admin/api/service_plans/%d/features/%d.json", svcPlan, portal), nil, 200, "")
	h.check("delete the account feature", "DELETE", path("/admin/api/features/%d.json", vip), nil, 200, "")
	if n := h.sim.Count("acme", KindPlanFeatures); n != 0 {
		t.Errorf("%d enablings left, want 0", n)
	}
}
