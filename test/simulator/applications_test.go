package simulator

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex8  = regexp.MustCompile(`^[0-9a-f]{8}$`)
)

// productWith creates a service with a backend version and a plan on it; it returns both ids.
func (h *harness) productWith(systemName, backendVersion string, plan url.Values) (svc, planID int64) {
	h.t.Helper()
	svc = h.create("/admin/api/services.json", url.Values{"name": {systemName}, "system_name": {systemName}, "backend_version": {backendVersion}}, "service")
	if plan == nil {
		plan = url.Values{}
	}
	if plan.Get("name") == "" {
		plan.Set("name", "Basic")
	}
	return svc, h.create(path("/admin/api/services/%d/application_plans.json", svc), plan, "application_plan")
}

func appOf(body any) map[string]any {
	m, _ := body.(map[string]any)["application"].(map[string]any)
	return m
}

func TestApplicationCredentialsAndStates(t *testing.T) {
	h := newHarness(t)
	acc, _ := h.signup("ACME", "alice", nil)
	apps := path("/admin/api/accounts/%d/applications", acc)
	_, ukPlan := h.productWith("uk", "1", nil)
	_, idPlan := h.productWith("appid", "2", nil)
	_, oidcPlan := h.productWith("oidc", "oidc", nil)
	_, approvalPlan := h.productWith("approval", "1", url.Values{"approval_required": {"true"}})

	// User key product: a generated 32-hex user_key, no application_id, no name when none is sent.
	res := h.check("user key app without name", "POST", apps+".json", url.Values{"plan_id": {itoa(ukPlan)}}, 201, "")
	uk := appOf(res.body)
	if _, shown := uk["redirect_url"]; shown {
		t.Errorf("a user-key application shows redirect_url: %v", uk)
	}
	if _, hasAppID := uk["application_id"]; hasAppID || !hex32.MatchString(uk["user_key"].(string)) || uk["state"] != "live" || uk["enabled"] != true {
		t.Errorf("user key application %v", uk)
	}
	if _, hasName := uk["name"]; hasName {
		t.Errorf("application created without a name shows one: %v", uk)
	}
	ukID := int64(uk["id"].(float64))
	if diff := cmp.Diff(map[string]any{"account_id": float64(acc), "org_name": "ACME", "plan_id": float64(ukPlan), "plan_name": "Basic", "service_name": "uk"},
		fields(uk, "", "account_id", "org_name", "plan_id", "plan_name", "service_name")); diff != "" {
		t.Errorf("user key application (-want +got):\n%s", diff)
	}

	// App id/key product: an 8-hex application_id and one generated key.
	res = h.check("app id application", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "name": {"Shop"}}, 201, "")
	idApp := appOf(res.body)
	idAppID := int64(idApp["id"].(float64))
	if _, hasUserKey := idApp["user_key"]; hasUserKey || !hex8.MatchString(idApp["application_id"].(string)) {
		t.Errorf("app id application %v", idApp)
	}
	keys := h.check("generated key", "GET", path("%s/%d/keys.json", apps, idAppID), nil, 200, "")
	if ks, _ := keys.body.(map[string]any)["keys"].([]any); len(ks) != 1 || !hex32.MatchString(fields(ks[0], "key", "value")["value"].(string)) {
		t.Errorf("keys %s, want one generated key", keys.raw)
	}

	// A blank credential is not "generate one": porta keeps it and refuses it.
	h.check("blank user_key", "POST", apps+".json", url.Values{"plan_id": {itoa(ukPlan)}, "user_key": {""}}, 422,
		`{"errors":{"user_key":["invalid"]}}`)
	h.check("blank application_id", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "application_id": {""}}, 422,
		`{"errors":{"application_id":["is too short (minimum is 4 characters)","invalid"]}}`)

	// Given credentials; they are unique in the tenant and well formed.
	res = h.check("given credentials", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "application_id": {"my-app-1"},
		"application_key": {"secret-1"}}, 201, "")
	given := int64(appOf(res.body)["id"].(float64))
	ks := h.check("given keys", "GET", path("%s/%d/keys.json", apps, given), nil, 200, "")
	if diff := cmp.Diff([]string{"secret-1"}, listedKeys(ks.body)); diff != "" {
		t.Errorf("keys of an application created with one (-want +got):\n%s", diff)
	}
	h.check("application_id taken", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "application_id": {"my-app-1"}}, 422,
		`{"errors":{"application_id":["has already been taken"]}}`)
	h.check("application_id too short", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "application_id": {"abc"}}, 422,
		`{"errors":{"application_id":["is too short (minimum is 4 characters)"]}}`)
	h.check("key too short", "POST", apps+".json", url.Values{"plan_id": {itoa(idPlan)}, "application_key": {"k1"}}, 422,
		`{"errors":{"application_keys":["is invalid"]}}`)
	h.check("user_key invalid", "PUT", path("%s/%d.json", apps, ukID), url.Values{"user_key": {"a key"}}, 422, `{"errors":{"user_key":["invalid"]}}`)
	h.check("unknown plan", "POST", apps+".json", url.Values{"plan_id": {"999999"}}, 404, `{"status":"Not found"}`)

	// Keys: the API's own refusals.
	keysPath := path("%s/%d/keys", apps, given)
	h.check("key too short", "POST", keysPath+".json", url.Values{"key": {"k2"}}, 422, `{"errors":{"value":["is too short (minimum is 5 characters)"]}}`)
	h.check("key taken", "POST", keysPath+".json", url.Values{"key": {"SECRET-1"}}, 422, `{"errors":{"value":["has already been taken"]}}`)
	h.check("add a key", "POST", keysPath+".json", url.Values{"key": {"secret-2"}}, 201, "")
	h.check("generate a key", "POST", keysPath+".json", nil, 201, "")
	h.check("remove a key", "DELETE", keysPath+"/secret-1.json", nil, 200, "")
	h.check("remove an unknown key", "DELETE", keysPath+"/secret-1.json", nil, 404, `{"status":"Not found"}`)
	// The admin API removes the last key of an app id/key application too: remove! has no can_remove?
	// check (application_key.rb:49-54; only the portals' remove keeps the last one, :45-47,66-68).
	for _, k := range listedKeys(h.check("keys left", "GET", keysPath+".json", nil, 200, "").body) {
		h.check("remove key "+k, "DELETE", keysPath+"/"+k+".json", nil, 200, "")
	}
	if left := listedKeys(h.check("no key left", "GET", keysPath+".json", nil, 200, "").body); len(left) != 0 {
		t.Errorf("keys %v left after removing them all", left)
	}
	// porta takes keys with dots (any printable character), and its route addresses them: the key
	// segment is constrained to ([^/]+?)(?=\.json|\.xml|$|/) (config/routes.rb:603), so the format is
	// only the last extension.
	h.check("add a dotted key", "POST", keysPath+".json", url.Values{"key": {"dotted.key"}}, 201, "")
	h.check("remove a dotted key", "DELETE", keysPath+"/dotted.key.json", nil, 200, "")

	// An OIDC application shows client_id and client_secret and may hold one key only.
	res = h.check("oidc application", "POST", apps+".json", url.Values{"plan_id": {itoa(oidcPlan)}}, 201, "")
	oidc := appOf(res.body)
	if oidc["client_id"] != oidc["application_id"] || !hex32.MatchString(oidc["client_secret"].(string)) || oidc["oidc_configuration"] == nil {
		t.Errorf("oidc application %v", oidc)
	}
	// redirect_url is null until one is sent, then stripped (cinstance.rb:78-80); shown only for
	// OAuth/OIDC applications (cinstance_representer.rb:35-39).
	if v, shown := oidc["redirect_url"]; !shown || v != nil {
		t.Errorf("a new OIDC application's redirect_url: %v (shown %v), want null", v, shown)
	}
	res = h.check("set a redirect URL", "PUT", path("%s/%d.json", apps, int64(oidc["id"].(float64))), url.Values{"redirect_url": {"  https://app.example.com/cb \n"}}, 200, "")
	if got := appOf(res.body)["redirect_url"]; got != "https://app.example.com/cb" {
		t.Errorf("redirect_url %q, want it stripped", got)
	}
	oidcKeys := path("%s/%d/keys", apps, int64(oidc["id"].(float64)))
	h.check("second key of an OIDC application", "POST", oidcKeys+".json", url.Values{"key": {"another-key"}}, 422, `{"errors":{"base":["Limit reached"]}}`)

	// States: pending on a plan requiring approval; accept, suspend, resume, each from its state only.
	res = h.check("pending application", "POST", apps+".json", url.Values{"plan_id": {itoa(approvalPlan)}}, 201, "")
	pending := int64(appOf(res.body)["id"].(float64))
	if s := appOf(res.body)["state"]; s != "pending" || appOf(res.body)["enabled"] != false {
		t.Errorf("application on a plan requiring approval: %v", appOf(res.body))
	}
	h.check("suspend a pending application", "PUT", path("%s/%d/suspend.json", apps, pending), nil, 422, `{"errors":{"state":["cannot transition via \"suspend\""]}}`)
	h.check("accept", "PUT", path("%s/%d/accept.json", apps, pending), nil, 200, "")
	h.check("accept again", "PUT", path("%s/%d/accept.json", apps, pending), nil, 422, `{"errors":{"state":["cannot transition via \"accept\""]}}`)
	h.check("resume a live application", "PUT", path("%s/%d/resume.json", apps, pending), nil, 422, `{"errors":{"state":["cannot transition via \"resume\""]}}`)
	res = h.check("suspend", "PUT", path("%s/%d/suspend.json", apps, pending), nil, 200, "")
	if got := fields(appOf(res.body), "", "state", "enabled"); got["state"] != "suspended" || got["enabled"] != false {
		t.Errorf("suspended application %v", got)
	}
	h.check("resume", "PUT", path("%s/%d/resume.json", apps, pending), nil, 200, "")

	res = h.check("list by state", "GET", apps+".json?state=live", nil, 200, "")
	if n := len(listed(res.body, "applications", "application")); n != 5 {
		t.Errorf("%d live applications, want 5: %s", n, res.raw)
	}
	for _, q := range []string{"user_key=" + uk["user_key"].(string), "app_id=my-app-1"} {
		res := h.check("find "+q, "GET", "/admin/api/applications/find.json?"+q, nil, 200, "")
		if appOf(res.body) == nil {
			t.Errorf("find %s: %s", q, res.raw)
		}
	}
	h.check("find an unknown app id", "GET", "/admin/api/applications/find.json?app_id=nothing", nil, 404, `{"status":"Not found"}`)
	h.check("find a user key as an app id", "GET", "/admin/api/applications/find.json?app_id="+uk["user_key"].(string), nil, 404, "")
}

// listedKeys returns the values of a keys list.
func listedKeys(body any) []string {
	var out []string
	ks, _ := body.(map[string]any)["keys"].([]any)
	for _, k := range ks {
		out = append(out, fields(k, "key", "value")["value"].(string))
	}
	return out
}

func TestApplicationPlansAndCascades(t *testing.T) {
	h := newHarness(t)
	acc, _ := h.signup("ACME", "alice", nil)
	apps := path("/admin/api/accounts/%d/applications", acc)
	svc, basic := h.productWith("pets", "1", nil)
	gold := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Gold"}}, "application_plan")
	otherSvc, otherPlan := h.productWith("other", "1", nil)
	app := h.create(apps+".json", url.Values{"plan_id": {itoa(basic)}, "name": {"Shop"}}, "application")

	h.check("change to a plan of another product", "PUT", path("%s/%d/change_plan.json", apps, app), url.Values{"plan_id": {itoa(otherPlan)}}, 422,
		`{"errors":{"plan":["not allowed in this context"]}}`)
	h.check("change to an unknown plan", "PUT", path("%s/%d/change_plan.json", apps, app), url.Values{"plan_id": {"999999"}}, 404, "")
	res := h.check("change plan", "PUT", path("%s/%d/change_plan.json", apps, app), url.Values{"plan_id": {itoa(gold)}}, 200, "")
	if got := fields(res.body, "application_plan", "id"); got["id"] != float64(gold) {
		t.Errorf("change_plan answered %s, want the new plan", res.raw)
	}
	h.check("change to the same plan", "PUT", path("%s/%d/change_plan.json", apps, app), url.Values{"plan_id": {itoa(gold)}}, 200, "")

	// A plan with applications cannot be deleted: 403 and porta's message; without them it can.
	planPath := path("/admin/api/services/%d/application_plans/%d.json", svc, gold)
	h.check("delete a plan with an application", "DELETE", planPath, nil, 403,
		`{"errors":{"base":["This application plan cannot be deleted! At least one application depends on it."]}}`)
	h.check("delete the application", "DELETE", path("%s/%d.json", apps, app), nil, 200, "")
	h.check("delete the plan", "DELETE", planPath, nil, 200, "")

	// Deleting a product deletes its plans with their applications, and its ActiveDocs.
	h.create(apps+".json", url.Values{"plan_id": {itoa(otherPlan)}}, "application")
	h.create(apps+".json", url.Values{"plan_id": {itoa(basic)}}, "application")
	h.create("/admin/api/active_docs.json", url.Values{"name": {"Other"}, "body": {minimalOAS}, "service_id": {itoa(otherSvc)}}, "api_doc")
	h.create("/admin/api/active_docs.json", url.Values{"name": {"Unbound"}, "body": {minimalOAS}}, "api_doc")
	h.check("delete a product", "DELETE", path("/admin/api/services/%d.json", otherSvc), nil, 200, "")
	for kind, want := range map[string]int{KindApplications: 1, KindAPIDocs: 1, KindPlans: 1} {
		if n := h.sim.Count("acme", kind); n != want {
			t.Errorf("%d %s left, want %d", n, kind, want)
		}
	}
	res = h.check("all applications of a service", "GET", path("/admin/api/applications.json?service_id=%d", svc), nil, 200, "")
	if n := len(listed(res.body, "applications", "application")); n != 1 {
		t.Errorf("%d applications of the product, want 1", n)
	}
}

func TestApplicationEndpointsCountedAndFaulted(t *testing.T) {
	h := newHarness(t)
	acc, _ := h.signup("ACME", "alice", nil)
	_, plan := h.productWith("pets", "2", nil)
	app := h.create(path("/admin/api/accounts/%d/applications.json", acc), url.Values{"plan_id": {itoa(plan)}, "application_key": {"secret-1"}}, "application")
	h.sim.ResetStats()
	h.check("delete key", "DELETE", path("/admin/api/accounts/%d/applications/%d/keys/secret-1.json", acc, app), nil, 200, "")
	h.sim.SetFaults(Faults{ErrorRate: 1})
	h.check("faulted signup", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}}, 503, "")
	h.sim.SetFaults(Faults{})
	want := []CallCount{
		{CallKey{Tenant: "acme", Method: "DELETE", Endpoint: "/admin/api/accounts/{account_id}/applications/{application_id}/keys/{key}.json", Code: 200}, 1},
		{CallKey{Tenant: "acme", Method: "POST", Endpoint: "/admin/api/signup.json", Code: 503}, 1},
	}
	if diff := cmp.Diff(want, h.sim.Stats().Calls); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if n := h.sim.Count("acme", KindAccounts); n != 1 {
		t.Errorf("a faulted signup created an account: %d accounts", n)
	}
}
