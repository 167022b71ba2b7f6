package simulator

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// masterToken is the master account's token of the master tests' harness.
const masterToken = "mtok"

func withMaster(o *Options) { o.MasterToken = masterToken }

// checkAs sends a form as the holder of token and checks the answer's status and, unless empty, its raw
// body.
func (h *harness) checkAs(name, token, method, p string, form url.Values, wantCode int, wantRaw string) result {
	h.t.Helper()
	res := h.sendAs(token, method, p, form)
	if res.code != wantCode || (wantRaw != "" && res.raw != wantRaw) {
		h.t.Errorf("%s: %s %s: %d %s, want %d %s", name, method, p, res.code, res.raw, wantCode, wantRaw)
	}
	return res
}

// tenantSignup makes a tenant through the master API and returns its account id, the Administration
// token's value and the answer's account.
func (h *harness) tenantSignup(org, username, email string) (id int64, token string, account map[string]any) {
	h.t.Helper()
	res := h.sendAs(masterToken, "POST", "/t/master/master/api/providers.json", url.Values{"org_name": {org}, "username": {username},
		"email": {email}, "password": {strongPassword}})
	if res.code != http.StatusCreated {
		h.t.Fatalf("signup %q: %d %s", org, res.code, res.raw)
	}
	signup := res.body.(map[string]any)["signup"].(map[string]any)
	account = signup["account"].(map[string]any)
	return int64(account["id"].(float64)), signup["access_token"].(map[string]any)["value"].(string), account
}

// TestMasterAPIRefusals: the master API is served on master's host only (403 with no body elsewhere),
// to master's token only (401 "unauthorized" as text), with the account_management scope (403 JSON).
func TestMasterAPIRefusals(t *testing.T) {
	h := newHarness(t, withMaster)
	h.sim.AddTenant(MasterTenant, "mtok-registry-only")
	h.sim.SetTokenScopes("mtok-registry-only", scopePolicyRegistry)
	const show = "/master/api/providers/999.json"
	cases := map[string]struct {
		path, token     string
		wantCode        int
		wantRaw, wantCT string
	}{
		"no token":                               {show, "", 401, "unauthorized", "text/plain; charset=utf-8"},
		"an unknown token":                       {show, "nope", 401, "unauthorized", "text/plain; charset=utf-8"},
		"a tenant's token":                       {show, "tok", 403, "", ""},
		"a tenant's token on its host":           {"/t/acme" + show, "tok", 403, "", ""},
		"the master token on a tenant's host":    {"/t/acme" + show, masterToken, 403, "", ""},
		"a tenant's token on master's host":      {"/t/master" + show, "tok", 401, "unauthorized", ""},
		"the master token on master's host":      {"/t/master" + show, masterToken, 404, `{"status":"Not found"}`, ""},
		"the master token without prefix":        {show, masterToken, 404, `{"status":"Not found"}`, ""},
		"the master token as access_token":       {show + "?access_token=" + masterToken, "", 404, `{"status":"Not found"}`, ""},
		"a master token without the scope":       {show, "mtok-registry-only", 403, `{"error":"Your access token does not have the correct permissions"}`, ""},
		"an unknown master API path":             {"/master/api/nothing.json", masterToken, 404, `{"status":"Not found"}`, ""},
		"the master token on its Admin API":      {"/admin/api/accounts.json", masterToken, 200, `{"accounts":[]}`, ""},
		"the master token on a tenant Admin API": {"/t/acme/admin/api/services.json", masterToken, 403, `{"error":"Access denied"}`, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.url+tc.path, nil)
			if tc.token != "" {
				req.SetBasicAuth("", tc.token)
			}
			res := h.roundTrip(req)
			if res.code != tc.wantCode || res.raw != tc.wantRaw {
				t.Errorf("%d %q, want %d %q", res.code, res.raw, tc.wantCode, tc.wantRaw)
			}
			if ct := res.hdr.Get("Content-Type"); tc.wantCT != "" && ct != tc.wantCT {
				t.Errorf("Content-Type %q, want %q", ct, tc.wantCT)
			}
		})
	}
	counted := map[CallKey]int{}
	for _, c := range h.sim.Stats().Calls {
		counted[c.CallKey] = c.Count
	}
	for key, want := range map[CallKey]int{
		{Tenant: MasterTenant, Method: "GET", Endpoint: "/master/api/providers/{id}.json", Code: 401}: 3, // no token, unknown, a tenant's on master's host
		{Tenant: MasterTenant, Method: "GET", Endpoint: "/master/api/providers/{id}.json", Code: 404}: 3,
		{Tenant: MasterTenant, Method: "GET", Endpoint: "/master/api/providers/{id}.json", Code: 403}: 1,
		{Tenant: "acme", Method: "GET", Endpoint: "/master/api/providers/{id}.json", Code: 403}:       3,
	} {
		if counted[key] != want {
			t.Errorf("%+v counted %d times, want %d", key, counted[key], want)
		}
	}

	// Without a master account, no host is master's.
	plain := newHarness(t)
	plain.checkAs("no master", "tok", "GET", show, nil, 403, "")
	plain.checkAs("no master, no token", "", "GET", show, nil, 403, "")
}

// TestMasterSignup: a new tenant as porta makes it — approved, its admin pending, the impersonation
// admin active, a first service "API" — whose Administration token works on its own admin host only.
func TestMasterSignup(t *testing.T) {
	h := newHarness(t, withMaster)
	res := h.checkAs("signup", masterToken, "POST", "/t/master/master/api/providers.json", url.Values{"org_name": {"Globex Corp."},
		"username": {"admin"}, "email": {"admin@globex.example"}, "password": {strongPassword}, "annotations[managed_by]": {"operator"}}, 201, "")
	signup := res.body.(map[string]any)["signup"].(map[string]any)
	account := signup["account"].(map[string]any)
	id := account["id"].(float64)
	if diff := cmp.Diff(map[string]any{"org_name": "Globex Corp.", "state": "approved", "admin_domain": "globex-corp-admin.simulator.invalid",
		"domain": "globex-corp.simulator.invalid", "admin_base_url": "https://globex-corp-admin.simulator.invalid",
		"base_url": "https://globex-corp.simulator.invalid", "from_email": "no-reply@simulator.invalid", "support_email": "admin@globex.example",
		"finance_support_email": "admin@globex.example", "annotations": map[string]any{"managed_by": "operator"}, "deletion_date": nil,
		"monthly_billing_enabled": true, "monthly_charging_enabled": true, "credit_card_stored": false},
		fields(account, "", "org_name", "state", "admin_domain", "domain", "admin_base_url", "base_url", "from_email", "support_email",
			"finance_support_email", "annotations", "deletion_date", "monthly_billing_enabled", "monthly_charging_enabled", "credit_card_stored")); diff != "" {
		t.Errorf("tenant (-want +got):\n%s", diff)
	}
	if code, _ := account["site_access_code"].(string); !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(code) {
		t.Errorf("site_access_code %q, want 10 hex digits", code)
	}
	token := signup["access_token"].(map[string]any)
	value, _ := token["value"].(string)
	if diff := cmp.Diff(map[string]any{"name": "Administration", "scopes": []any{"account_management", "policy_registry"}, "permission": "rw"},
		fields(token, "", "name", "scopes", "permission")); diff != "" || len(value) != 64 || token["id"] == nil {
		t.Errorf("access token %v (-want +got):\n%s", token, diff)
	}

	// The token works on the new tenant's admin host, which has porta's first service, "API", on a
	// backend of the default API backend.
	res = h.checkAs("the new tenant's services", value, "GET", "/t/globex-corp/admin/api/services.json", nil, 200, "")
	if got := listed(res.body, "services", "service"); len(got) != 1 {
		t.Errorf("services %s, want the first one", res.raw)
	}
	first := res.body.(map[string]any)["services"].([]any)[0]
	if diff := cmp.Diff(map[string]any{"name": "API", "system_name": "api"}, fields(first, "service", "name", "system_name")); diff != "" {
		t.Errorf("first service (-want +got):\n%s", diff)
	}
	b := h.sim.Objects("globex-corp", KindBackendAPIs)
	if len(b) != 1 || b[0]["private_endpoint"] != "https://echo-api.3scale.net:443" || len(h.sim.Objects("globex-corp", KindBackendUsages)) != 1 {
		t.Errorf("backends %v, want the default API backend, used by the first service", b)
	}
	h.checkAs("the token on another tenant's host", value, "GET", "/t/acme/admin/api/services.json", nil, 403, `{"error":"Access denied"}`)
	h.checkAs("the token on master's API", value, "GET", path("/master/api/providers/%d.json", int64(id)), nil, 403, "")

	// Master sees the tenant as its developer account, with its users: the admin pending, the
	// impersonation admin active.
	res = h.checkAs("the tenant's users", masterToken, "GET", path("/admin/api/accounts/%d/users.json", int64(id)), nil, 200, "")
	users := res.body.(map[string]any)["users"].([]any)
	var got []map[string]any
	for _, u := range users {
		got = append(got, fields(u, "user", "username", "email", "role", "state"))
	}
	if diff := cmp.Diff([]map[string]any{
		{"username": "admin", "email": "admin@globex.example", "role": "admin", "state": "pending"},
		{"username": "3scaleadmin", "email": "3scaleadmin+globex-corp.simulator.invalid@3scale.net", "role": "admin", "state": "active"},
	}, got); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	adminID := int64(fields(users[0], "user", "id")["id"].(float64))
	res = h.checkAs("activate the admin", masterToken, "PUT", path("/admin/api/accounts/%d/users/%d/activate.json", int64(id), adminID), nil, 200, "")
	if s := fields(res.body, "user", "state")["state"]; s != "active" {
		t.Errorf("activated admin: %s", res.raw)
	}
	res = h.checkAs("find the tenant by its admin", masterToken, "GET", "/admin/api/accounts/find.json?username=admin", nil, 200, "")
	if f := fields(res.body, "account", "id", "admin_domain"); f["id"] != id || f["admin_domain"] != "globex-corp-admin.simulator.invalid" {
		t.Errorf("found %s", res.raw)
	}
	h.checkAs("find by email", masterToken, "GET", "/admin/api/accounts/find.json?email=admin@globex.example", nil, 200, "")
	res = h.checkAs("master's accounts", masterToken, "GET", "/admin/api/accounts.json", nil, 200, "")
	if ids := listed(res.body, "accounts", "account"); len(ids) != 1 || float64(ids[0]) != id {
		t.Errorf("master's accounts %s, want the tenant", res.raw)
	}
	// A user of the tenant may share a username with another tenant's, not with one of its own
	// (User#uniqueness_scope).
	h.checkAs("a second admin name in the tenant", masterToken, "POST", path("/admin/api/accounts/%d/users.json", int64(id)),
		url.Values{"username": {"admin"}, "email": {"other@globex.example"}}, 422, `{"errors":{"username":["has already been taken"]}}`)

	counted := false
	for _, c := range h.sim.Stats().Calls {
		counted = counted || c.CallKey == CallKey{Tenant: MasterTenant, Method: "POST", Endpoint: "/master/api/providers.json", Code: 201}
	}
	if !counted {
		t.Errorf("the signup is not counted under master: %+v", h.sim.Stats().Calls)
	}
}

// TestMasterSignupSuffixesTheSlug: porta never refuses an org name another tenant has; the new tenant's
// domains take the first free suffix, -2, -3... (Signup::DomainsBuilder#generate_subdomain).
func TestMasterSignupSuffixesTheSlug(t *testing.T) {
	h := newHarness(t, withMaster)
	tokens := map[string]string{}
	for _, tc := range []struct{ org, wantSlug string }{
		{"Globex", "globex"},
		{"Globex", "globex-2"},   // the same org name
		{"globex", "globex-3"},   // the same slug
		{"Globex-2", "globex-4"}, // taken: its sequence goes on from the base
		{"Globex Admin", "globex-admin-2"},
		{"Acme", "acme-2"},     // a tenant of Options.Tenants has the name
		{"Master", "master-2"}, // master's
		{"Example.com", "example-com"},
		{"Foo_Bar baz!", "foo-bar-baz"},
		{"Über Straße", "uber-strasse"},
		{"日本 Corp", "corp"},
	} {
		_, token, account := h.tenantSignup(tc.org, "admin", "admin@example.com")
		if got := account["admin_domain"]; got != tc.wantSlug+"-admin.simulator.invalid" {
			t.Errorf("org %q: admin_domain %v, want slug %s", tc.org, got, tc.wantSlug)
			continue
		}
		if account["org_name"] != tc.org {
			t.Errorf("org %q: org_name %v", tc.org, account["org_name"])
		}
		tokens[tc.wantSlug] = token
	}
	h.checkAs("globex-2's token on its host", tokens["globex-2"], "GET", "/t/globex-2/admin/api/services.json", nil, 200, "")
	h.checkAs("globex's token on globex-2's host", tokens["globex"], "GET", "/t/globex-2/admin/api/services.json", nil, 403, `{"error":"Access denied"}`)
	h.checkAs("the original acme is untouched", "tok", "GET", "/t/acme/admin/api/services.json", nil, 200, `{"services":[]}`)
	if n := h.sim.Count(MasterTenant, KindAccounts); n != 11 {
		t.Errorf("%d tenants in master's books, want 11", n)
	}
}

// TestMasterSignupValidation: porta's full messages of the account and of its admin, 422, and nothing
// made.
func TestMasterSignupValidation(t *testing.T) {
	h := newHarness(t, withMaster)
	valid := func(change map[string]string) url.Values {
		form := url.Values{"org_name": {"Globex"}, "username": {"admin"}, "email": {"admin@globex.example"}, "password": {strongPassword}}
		for k, v := range change {
			form.Set(k, v)
		}
		return form
	}
	cases := map[string]struct {
		form    url.Values
		wantRaw string
	}{
		"no org name": {valid(map[string]string{"org_name": ""}),
			`{"errors":{"account":["Organization/Group Name can't be blank","Organization/Group Name must contain at least one alphanumeric character",` +
				`"Domain can't be blank","Admin domain can't be blank"]}}`},
		"an org name without letters": {valid(map[string]string{"org_name": "!!!"}),
			`{"errors":{"account":["Organization/Group Name must contain at least one alphanumeric character","Domain can't be blank",` +
				`"Admin domain can't be blank"]}}`},
		"no email": {valid(map[string]string{"email": ""}),
			`{"errors":{"account":["Users invalid"],"user":["Email should look like an email address"]}}`},
		"no username": {valid(map[string]string{"username": ""}),
			`{"errors":{"account":["Users invalid"],"user":["Username is too short (minimum is 3 characters)"]}}`},
		"a short password": {valid(map[string]string{"password": "short"}),
			`{"errors":{"account":["Users invalid"],"user":["Password is too short (minimum is 15 characters)"]}}`},
		"a confirmation that does not match": {valid(map[string]string{"password_confirmation": "non-matching-password"}),
			`{"errors":{"account":["Users invalid"],"user":["Password confirmation doesn't match Password"]}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h.checkAs(name, masterToken, "POST", "/master/api/providers.json", tc.form, 422, tc.wantRaw)
		})
	}
	if n := h.sim.Count(MasterTenant, KindAccounts); n != 0 {
		t.Errorf("%d tenants made by refused signups", n)
	}
}

// TestMasterTenantLifecycle: DELETE schedules the tenant for deletion (its APIs then 403), GET still
// shows it with its deletion date, a second DELETE is 404, PUT account[state_event]=resume takes it
// back; 15 days later (PurgeScheduledTenants) it is gone.
func TestMasterTenantLifecycle(t *testing.T) {
	h := newHarness(t, withMaster)
	id, token, _ := h.tenantSignup("Globex", "admin", "admin@globex.example")
	tenantAPI := "/t/globex/admin/api/backend_apis.json"
	provider := path("/master/api/providers/%d.json", id)
	state := func(res result) map[string]any {
		return fields(res.body.(map[string]any)["signup"], "account", "state", "deletion_date", "from_email")
	}

	h.checkAs("delete", masterToken, "DELETE", provider, nil, 200, "")
	scheduledAt := time.Now()
	res := h.checkAs("read the scheduled tenant", masterToken, "GET", provider, nil, 200, "")
	got := state(res)
	if got["state"] != "scheduled_for_deletion" {
		t.Errorf("state %v, want scheduled_for_deletion", got["state"])
	}
	d, err := time.Parse(time.RFC3339, got["deletion_date"].(string))
	if off := d.Sub(scheduledAt) - 15*24*time.Hour; err != nil || off < -time.Minute || off > time.Minute {
		t.Errorf("deletion_date %v, want 15 days from now", got["deletion_date"])
	}
	h.checkAs("the tenant's API while scheduled", token, "GET", tenantAPI, nil, 403, "")
	h.checkAs("delete again", masterToken, "DELETE", provider, nil, 404, `{"status":"Not found"}`)
	res = h.checkAs("only state_event is taken of a scheduled tenant", masterToken, "PUT", provider,
		url.Values{"account[from_email]": {"x@globex.example"}}, 200, "")
	if got := state(res); got["from_email"] != "no-reply@simulator.invalid" || got["state"] != "scheduled_for_deletion" {
		t.Errorf("after an update of a scheduled tenant: %v", got)
	}
	res = h.checkAs("resume", masterToken, "PUT", provider, url.Values{"account[state_event]": {"resume"}}, 200, "")
	if got := state(res); got["state"] != "approved" || got["deletion_date"] != nil {
		t.Errorf("resumed: %v", got)
	}
	h.checkAs("the tenant's API resumed", token, "GET", tenantAPI, nil, 200, "")
	h.checkAs("resume an approved tenant", masterToken, "PUT", provider, url.Values{"account[state_event]": {"resume"}}, 422,
		`{"errors":{"account":["State event cannot transition when approved"]}}`)
	h.checkAs("an unknown event", masterToken, "PUT", provider, url.Values{"state_event": {"explode"}}, 422, `{"errors":{"account":["State event is invalid"]}}`)
	res = h.checkAs("suspend, unwrapped", masterToken, "PUT", provider, url.Values{"state_event": {"suspend"}, "from_email": {"ops@globex.example"},
		"annotations[managed_by]": {"operator"}}, 200, "")
	if got := state(res); got["state"] != "suspended" || got["from_email"] != "ops@globex.example" {
		t.Errorf("suspended: %v", got)
	}
	h.checkAs("the tenant's API suspended", token, "GET", tenantAPI, nil, 403, "")
	h.checkAs("resume the suspended tenant", masterToken, "PUT", provider, url.Values{"state_event": {"resume"}}, 200, "")
	h.checkAs("unknown tenant", masterToken, "GET", "/master/api/providers/999.json", nil, 404, `{"status":"Not found"}`)
	h.checkAs("a developer account is no tenant", masterToken, "PUT", path("/master/api/providers/%d.json", h.masterBuyer()), nil, 404, "")

	// Fifteen days after a DELETE, porta deletes the tenant with everything it has.
	h.checkAs("delete for good", masterToken, "DELETE", provider, nil, 200, "")
	if n := h.sim.PurgeScheduledTenants(); n != 1 {
		t.Errorf("%d tenants purged, want 1", n)
	}
	h.checkAs("read the deleted tenant", masterToken, "GET", provider, nil, 404, `{"status":"Not found"}`)
	h.checkAs("its token", token, "GET", "/admin/api/backend_apis.json", nil, 403, `{"error":"Access denied"}`)
	if n := h.sim.Count("globex", KindServices); n != -1 {
		t.Errorf("the purged tenant still has %d services", n)
	}
	if n := len(h.sim.Objects(MasterTenant, KindUsers)); n != 1 { // the buyer's
		t.Errorf("%d users left in master's books, want the developer's only", n)
	}
	_, _, account := h.tenantSignup("Globex", "admin", "admin@globex.example")
	if account["admin_domain"] != "globex-admin.simulator.invalid" {
		t.Errorf("a tenant of a purged one's name: %v", account["admin_domain"])
	}
}

// masterBuyer signs up a developer account of master's (no tenant) and returns its id.
func (h *harness) masterBuyer() int64 {
	h.t.Helper()
	res := h.checkAs("master's developer", masterToken, "POST", "/admin/api/signup.json", url.Values{"org_name": {"Dev"}, "username": {"dev"},
		"email": {"dev@example.com"}}, 201, "")
	return int64(fields(res.body, "account", "id")["id"].(float64))
}

// TestMasterTenantsAdminDomain: Options.AdminDomain and PlainHTTP make admin_base_url a URL of the
// simulator itself; Superdomain makes the developer portal's.
func TestMasterTenantsAdminDomain(t *testing.T) {
	h := newHarness(t, withMaster, func(o *Options) {
		o.Superdomain = "apps.example.com"
		o.AdminDomain = func(slug string) string { return "127.0.0.1:8080/t/" + slug }
		o.PlainHTTP = true
	})
	_, _, account := h.tenantSignup("Globex", "admin", "admin@globex.example")
	if diff := cmp.Diff(map[string]any{"admin_domain": "127.0.0.1:8080/t/globex", "admin_base_url": "http://127.0.0.1:8080/t/globex",
		"domain": "globex.apps.example.com", "base_url": "http://globex.apps.example.com", "from_email": "no-reply@apps.example.com"},
		fields(account, "", "admin_domain", "admin_base_url", "domain", "base_url", "from_email")); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
}

// TestMasterSignupWithALostAnswer: the tenant is made though its answer never comes, and the token is
// lost with it: master still finds the tenant by its admin.
func TestMasterSignupWithALostAnswer(t *testing.T) {
	h := newHarness(t, withMaster)
	h.sim.SetFaults(Faults{LostResponseRate: 1})
	if res := h.sendAs(masterToken, "POST", "/master/api/providers.json", url.Values{"org_name": {"Globex"}, "username": {"admin"},
		"email": {"admin@globex.example"}, "password": {strongPassword}}); res.err == nil {
		t.Fatalf("the answer came: %d %s", res.code, res.raw)
	}
	h.sim.SetFaults(Faults{})
	res := h.checkAs("find it", masterToken, "GET", "/admin/api/accounts/find.json?email=admin@globex.example", nil, 200, "")
	if got := fields(res.body, "account", "org_name", "state"); !cmp.Equal(map[string]any{"org_name": "Globex", "state": "approved"}, got) {
		t.Errorf("found %v", got)
	}
	if !strings.Contains(res.raw, `"admin_domain":"globex-admin.simulator.invalid"`) {
		t.Errorf("found %s", res.raw)
	}
}
