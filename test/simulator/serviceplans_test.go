package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServicePlans: service plans as porta answers them (service_plans_controller.rb, service.rb,
// service_plan.rb, service_plan_representer.rb).
func TestServicePlans(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	other, _ := h.product("other")
	base := path("/admin/api/services/%d/service_plans", svc)
	// Every new service has a "Default" service plan, published, not its default (service.rb:41,528-536).
	res := h.check("list", "GET", base+".json", nil, 200, "")
	defaults := listed(res.body, "plans", "service_plan")
	if len(defaults) != 1 {
		t.Fatalf("a new service's service plans: %s", res.raw)
	}
	premium := h.create(base+".json", url.Values{"service_plan[name]": {"Premium"}, "service_plan[approval_required]": {"1"}}, "service_plan")

	cases := []fieldCase{
		{"the Default one", "GET", path("%s/%d.json", base, defaults[0]), nil, 200, "service_plan", []string{"name", "state", "default"},
			map[string]any{"name": "Default", "state": "published", "default": false}},
		// ServicePlanRepresenter: PlanRepresenter's fields and the service and self links.
		{"read", "GET", path("%s/%d.json", base, premium), nil, 200, "service_plan", []string{"name", "state", "approval_required", "setup_fee", "system_name", "links"},
			map[string]any{"name": "Premium", "state": "hidden", "approval_required": true, "setup_fee": 0.0, "system_name": nil, "links": []any{
				map[string]any{"rel": "service", "href": fmt.Sprintf("%s/admin/api/services/%d", linkBase, svc)},
				map[string]any{"rel": "self", "href": fmt.Sprintf("%s/admin/api/services/%d/service_plans/%d", linkBase, svc, premium)}}}},
		{"of another service", "GET", path("/admin/api/services/%d/service_plans/%d.json", other, premium), nil, 404, "", []string{"status"},
			map[string]any{"status": "Not found"}},
		{"system name per service", "POST", base + ".json", url.Values{"name": {"Premium"}}, 422, "errors", []string{"system_name"},
			map[string]any{"system_name": []any{"has already been taken"}}},
		{"same name in another service", "POST", path("/admin/api/services/%d/service_plans.json", other), url.Values{"name": {"Premium"}}, 201, "service_plan",
			[]string{"name"}, map[string]any{"name": "Premium"}},
		{"make default", "PUT", path("%s/%d/default.json", base, premium), nil, 200, "service_plan", []string{"default"}, map[string]any{"default": true}},
	}
	checkFields(t, h, cases)
	res = h.check("all services'", "GET", "/admin/api/service_plans.json", nil, 200, "")
	if n := len(listed(res.body, "plans", "service_plan")); n != 4 {
		t.Errorf("%d service plans listed, want 4: %s", n, res.raw)
	}

	// A signup subscribes to each service's default service plan, pending as it requires approval
	// (plans_with_defaults.rb:70-84, contract.rb:333-341); the other service, whose Default plan is no
	// default, gets nothing without a default application plan.
	acc, _ := h.signup("ACME", "alice", nil)
	subs := path("/admin/api/accounts/%d/service_subscriptions", acc)
	res = h.check("subscriptions", "GET", subs+".json", nil, 200, "")
	got := listed(res.body, "service_subscriptions", "service_subscription")
	if len(got) != 1 {
		t.Fatalf("subscriptions after the signup: %s", res.raw)
	}
	sub := got[0]
	checkFields(t, h, []fieldCase{
		{"the subscription", "GET", path("%s/%d.json", subs, sub), nil, 200, "service_subscription",
			[]string{"plan_id", "user_account_id", "service_id", "state", "type", "setup_fee", "accepted_at"},
			map[string]any{"plan_id": float64(premium), "user_account_id": float64(acc), "service_id": float64(svc), "state": "pending",
				"type": "ServiceContract", "setup_fee": "0.0", "accepted_at": nil}},
		{"approve", "PUT", path("%s/%d/approve.json", subs, sub), nil, 200, "service_subscription", []string{"state"}, map[string]any{"state": "live"}},
		{"approve again", "PUT", path("%s/%d/approve.json", subs, sub), nil, 422, "errors", []string{"state"},
			map[string]any{"state": []any{`cannot transition via "accept"`}}},
		{"one per service", "POST", subs + ".json", url.Values{"plan_id": {itoa(defaults[0])}}, 422, "errors", []string{"base"},
			map[string]any{"base": []any{"already subscribed to this service"}}},
		{"change plan", "PUT", path("%s/%d/change_plan.json", subs, sub), url.Values{"plan_id": {itoa(defaults[0])}}, 200, "service_plan", []string{"id"},
			map[string]any{"id": float64(defaults[0])}},
	})
	otherPlans := listed(h.send("GET", path("/admin/api/services/%d/service_plans.json", other), nil).body, "plans", "service_plan")
	h.check("change to another service's plan", "PUT", path("%s/%d/change_plan.json", subs, sub), url.Values{"plan_id": {itoa(otherPlans[0])}}, 422,
		`{"errors":{"plan":["must belong to the same product"]}}`)
	h.check("subscribe without plan_id", "POST", subs+".json", url.Values{}, 400, "Required parameter missing: service_subscription")
	h.check("subscribe to an unknown plan", "POST", subs+".json", url.Values{"plan_id": {"424242"}}, 404, `{"status":"Not found"}`)
	h.check("subscribe", "POST", subs+".json", url.Values{"plan_id": {itoa(otherPlans[0])}}, 201, "")

	// A plan with a contract cannot be deleted (plan.rb:174-186, en.yml:2056); the other can.
	h.check("delete in use", "DELETE", path("%s/%d.json", base, defaults[0]), nil, 403,
		`{"errors":{"base":["This service plan cannot be deleted! At least one contract depends on it."]}}`)
	h.check("delete unused", "DELETE", path("%s/%d.json", base, premium), nil, 200, "")

	// An application makes its account subscribe when it is not (buyers_applications_controller.rb:131-135);
	// a live application blocks unsubscribing (service_subscription_service.rb:8-27).
	acc2, _ := h.signup("Beta", "bob", nil)
	appPlan := h.create(path("/admin/api/services/%d/application_plans.json", other), url.Values{"name": {"Basic"}}, "application_plan")
	h.create(path("/admin/api/accounts/%d/applications.json", acc2), url.Values{"plan_id": {itoa(appPlan)}, "name": {"App"}, "description": {"d"}}, "application")
	subs2 := path("/admin/api/accounts/%d/service_subscriptions", acc2)
	var onOther int64
	for _, o := range h.sim.Objects("acme", KindServiceSubscriptions) {
		if o["user_account_id"] == acc2 && o["service_id"] == other {
			onOther = o["id"].(int64)
		}
	}
	if onOther == 0 {
		t.Fatalf("no subscription to the application's service: %v", h.sim.Objects("acme", KindServiceSubscriptions))
	}
	h.check("unsubscribe with a live application", "DELETE", path("%s/%d.json", subs2, onOther), nil, 403,
		`{"errors":{"base":["There is 1 unsuspended application subscribed to the service"]}}`)
	app := h.sim.Objects("acme", KindApplications)[0]["id"]
	h.check("suspend", "PUT", path("/admin/api/accounts/%d/applications/%v/suspend.json", acc2, app), nil, 200, "")
	h.check("unsubscribe", "DELETE", path("%s/%d.json", subs2, onOther), nil, 200, "")
	if n := h.sim.Count("acme", KindApplications); n != 0 {
		t.Errorf("%d applications left after unsubscribing, want 0 (the suspended one goes)", n)
	}

	// Deleting a service takes its service plans and their contracts.
	h.send("DELETE", path("/admin/api/services/%d.json", other), nil)
	for _, p := range h.sim.Objects("acme", KindServicePlans) {
		if p["service_id"] == other {
			t.Errorf("service plan %v left after its service's deletion", p)
		}
	}
	res = h.check("the bought service plans", "GET", path("/admin/api/accounts/%d/service_plans.json", acc), nil, 200, "")
	if diff := cmp.Diff([]int64{defaults[0]}, listed(res.body, "plans", "service_plan")); diff != "" {
		t.Errorf("bought service plans (-want +got):\n%s", diff)
	}
}

// TestSignupServicePlans: which service plan a signup contracts (plans_with_defaults.rb:62-84).
func TestSignupServicePlans(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	appPlan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	h.check("default application plan", "PUT", path("/admin/api/services/%d/application_plans/%d/default.json", svc, appPlan), nil, 200, "")
	// With a default application plan and no default service plan, the first published service plan.
	acc, _ := h.signup("ACME", "alice", nil)
	subs := h.sim.Objects("acme", KindServiceSubscriptions)
	if len(subs) != 1 || subs[0]["user_account_id"] != acc || subs[0]["state"] != "live" {
		t.Errorf("subscriptions %v, want one live of account %d", subs, acc)
	}
	// With no published service plan, the application plan has no service plan: 404
	// (plans_with_defaults.rb:103-109, signups_controller.rb:27).
	sp := listed(h.send("GET", path("/admin/api/services/%d/service_plans.json", svc), nil).body, "plans", "service_plan")[0]
	h.check("hide", "PUT", path("/admin/api/services/%d/service_plans/%d.json", svc, sp), url.Values{"state_event": {"hide"}}, 200, "")
	h.check("no service plan", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}}, 404, `{"status":"Not found"}`)
	// service_plan_id chooses it (signups_controller.rb:42-52).
	h.check("service_plan_id", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}, "service_plan_id": {itoa(sp)}}, 201, "")
}
