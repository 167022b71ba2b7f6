package simulator

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	providerPath = "/admin/api/provider.json"
	webhooksPath = "/admin/api/webhooks.json"
)

// TestProviderAccount: the tenant's own account as Admin::Api::ProvidersController shows and updates it
// (app/controllers/admin/api/providers_controller.rb), rendered by AccountRepresenter for a provider.
func TestProviderAccount(t *testing.T) {
	h := newHarness(t)
	res := h.check("show", "GET", providerPath, nil, 200, "")
	account, _ := res.body.(map[string]any)["account"].(map[string]any)
	// account_representer.rb:8-57 for a provider: id and timestamps, the domains and base URLs, the
	// emails and the access code, the billing flags, credit_card_stored, state, annotations and the
	// defined field org_name. Links are left out.
	if diff := cmp.Diff([]string{"admin_base_url", "admin_domain", "annotations", "base_url", "created_at", "credit_card_stored",
		"domain", "finance_support_email", "from_email", "id", "monthly_billing_enabled", "monthly_charging_enabled", "org_name",
		"site_access_code", "state", "support_email", "updated_at"}, keysOf(account)); diff != "" {
		t.Fatalf("keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"id": float64(h.sim.AccountID("acme")), "org_name": "acme", "state": "approved",
		"admin_domain": "acme-admin.simulator.invalid", "domain": "acme.simulator.invalid",
		"admin_base_url": "https://acme-admin.simulator.invalid", "base_url": "https://acme.simulator.invalid",
		// from_email: noreply_email while NULL (provider_methods.rb:234-236); the support emails: the
		// first admin's while blank (account.rb:515-522).
		"from_email": "no-reply@simulator.invalid", "support_email": "admin@acme.simulator.invalid",
		"finance_support_email": "admin@acme.simulator.invalid", "annotations": map[string]any{},
		"monthly_billing_enabled": true, "monthly_charging_enabled": true, "credit_card_stored": false},
		fields(account, "", "id", "org_name", "state", "admin_domain", "domain", "admin_base_url", "base_url", "from_email",
			"support_email", "finance_support_email", "annotations", "monthly_billing_enabled", "monthly_charging_enabled",
			"credit_card_stored")); diff != "" {
		t.Errorf("a tenant's account (-want +got):\n%s", diff)
	}
	// SecureRandom.hex(5) before create (account.rb:108,554-556).
	code, _ := account["site_access_code"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(code) {
		t.Errorf("site_access_code %q, want 10 hex digits", code)
	}
	if diff := cmp.Diff(account, jsonRoundTrip(t, h.sim.Objects("acme", KindProvider))[0]); diff != "" {
		t.Errorf("Objects(KindProvider) is not what GET shows (-GET +Objects):\n%s", diff)
	}

	emails := []string{"from_email", "support_email", "finance_support_email", "site_access_code"}
	cases := []fieldCase{
		// provider_params permits the four (providers_controller.rb:22-24), wrapped by wrap_parameters
		// Account (:3) when sent top-level.
		{"top-level", "PUT", providerPath, url.Values{"from_email": {"noreply@acme.example"}, "support_email": {"help@acme.example"},
			"finance_support_email": {"billing@acme.example"}, "site_access_code": {"s3cret"}}, 200, "account", emails,
			map[string]any{"from_email": "noreply@acme.example", "support_email": "help@acme.example",
				"finance_support_email": "billing@acme.example", "site_access_code": "s3cret"}},
		{"wrapped, PATCH as PUT", "PATCH", providerPath, url.Values{"account[support_email]": {"support@acme.example"}}, 200, "account",
			[]string{"support_email", "finance_support_email"},
			map[string]any{"support_email": "support@acme.example", "finance_support_email": "billing@acme.example"}},
		// org_name is an Account attribute, so it is wrapped, but not permitted: dropped, 200.
		{"org_name is not permitted", "PUT", providerPath, url.Values{"org_name": {"ACME Inc."}, "state": {"suspended"}}, 200, "account",
			[]string{"org_name", "state", "support_email"},
			map[string]any{"org_name": "acme", "state": "approved", "support_email": "support@acme.example"}},
		// account.rb:287-290: RE_EMAIL_OK, "should look like an email address" (authentication.rb:20-21).
		{"a malformed support email", "PUT", providerPath, url.Values{"support_email": {"support.acme.example"},
			"finance_support_email": {"billing at acme"}, "site_access_code": {"other"}}, 422, "errors",
			[]string{"support_email", "finance_support_email"},
			map[string]any{"support_email": []any{msgEmailBad}, "finance_support_email": []any{msgEmailBad}}},
		{"nothing of the refused update stuck", "GET", providerPath, nil, 200, "account", emails,
			map[string]any{"from_email": "noreply@acme.example", "support_email": "support@acme.example",
				"finance_support_email": "billing@acme.example", "site_access_code": "s3cret"}},
		// from_email has no format (account.rb:271-290 validate only its length).
		{"from_email is not checked as an email", "PUT", providerPath, url.Values{"from_email": {"ACME <noreply at acme>"}}, 200, "account",
			[]string{"from_email"}, map[string]any{"from_email": "ACME <noreply at acme>"}},
		// Blank values are stored; the readers fall back: the support email to the first admin's, the
		// finance one to the support email (account.rb:515-522). from_email's reader falls back only
		// on NULL (provider_methods.rb:234-236: "" is truthy): "" shows. A blank access code is "no
		// access code" (access_code_protection.rb:36-43).
		{"blanks", "PUT", providerPath, url.Values{"from_email": {""}, "support_email": {""}, "finance_support_email": {" "},
			"site_access_code": {""}}, 200, "account", emails,
			map[string]any{"from_email": "", "support_email": "admin@acme.simulator.invalid",
				"finance_support_email": "admin@acme.simulator.invalid", "site_access_code": ""}},
		{"the finance email follows a set support email", "PUT", providerPath, url.Values{"support_email": {"desk@acme.example"}}, 200,
			"account", []string{"support_email", "finance_support_email"},
			map[string]any{"support_email": "desk@acme.example", "finance_support_email": "desk@acme.example"}},
		// account.rb:271-276: 255 characters at most.
		{"too long", "PUT", providerPath, url.Values{"site_access_code": {strings.Repeat("x", 256)}, "from_email": {strings.Repeat("é", 255)}},
			422, "errors", []string{"site_access_code", "from_email"},
			map[string]any{"site_access_code": []any{msgTooLong255}, "from_email": nil}},
	}
	checkFields(t, h, cases)

	// params.required(:account) (providers_controller.rb:23): nothing wrapped, 400 as text
	// (application_controller.rb:50-52). annotations are no Account attribute, so not wrapped.
	h.check("nothing wrapped", "PUT", providerPath, url.Values{"annotations[managed_by]": {"operator"}}, 400,
		"Required parameter missing: account")
	h.check("no parameter", "PUT", providerPath, nil, 400, "Required parameter missing: account")
	res = h.sendJSON("PUT", providerPath, `{"account":{"support_email":"json@acme.example","org_name":"JSON"}}`)
	if diff := cmp.Diff(map[string]any{"support_email": "json@acme.example", "org_name": "acme"},
		fields(res.body, "account", "support_email", "org_name")); res.code != 200 || diff != "" {
		t.Errorf("a JSON body: %d (-want +got):\n%s", res.code, diff)
	}
	if got := h.sim.Objects("acme", KindProvider)[0]; got["support_email"] != "json@acme.example" || got["from_email"] != "" {
		t.Errorf("Objects(KindProvider) after the updates: %v", got)
	}
	if other := h.sim.Objects("other", KindProvider); len(other) != 1 || other[0]["support_email"] != "admin@other.simulator.invalid" ||
		other[0]["id"] != h.sim.AccountID("other") {
		t.Errorf("the other tenant's account: %v", other)
	}
	if n := h.sim.Count("acme", KindProvider); n != 1 {
		t.Errorf("Count(KindProvider) = %d, want 1", n)
	}
	if res := h.send("GET", "/admin/api/provider.xml", nil); res.code != 404 {
		t.Errorf("provider.xml: %d, want 404 (JSON only here)", res.code)
	}
}

// TestProviderAccountOfMastersTenant: a tenant master made sees, and changes, its account in master's
// books: one account, whichever API shows it; its support email follows its first admin's email while
// blank (account.rb:515-518).
func TestProviderAccountOfMastersTenant(t *testing.T) {
	h := newHarness(t, withMaster)
	id, token, _ := h.tenantSignup("Globex", "admin", "admin@globex.example")
	own := "/t/globex" + providerPath
	res := h.checkAs("show", token, "GET", own, nil, 200, "")
	if diff := cmp.Diff(map[string]any{"id": float64(id), "org_name": "Globex", "domain": "globex.simulator.invalid",
		"support_email": "admin@globex.example", "from_email": "no-reply@simulator.invalid"},
		fields(res.body, "account", "id", "org_name", "domain", "support_email", "from_email")); diff != "" {
		t.Errorf("own account (-want +got):\n%s", diff)
	}
	h.checkAs("update", token, "PUT", own, url.Values{"from_email": {"hello@globex.example"}, "finance_support_email": {"ar@globex.example"}}, 200, "")
	master := h.checkAs("master's view", masterToken, "GET", path("/t/master/master/api/providers/%d.json", id), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"from_email": "hello@globex.example", "finance_support_email": "ar@globex.example",
		"support_email": "admin@globex.example"},
		fields(master.body.(map[string]any)["signup"], "account", "from_email", "finance_support_email", "support_email")); diff != "" {
		t.Errorf("master's view of the account (-want +got):\n%s", diff)
	}
	// The admin's email changes in master's books: the blank support email follows it.
	users := h.checkAs("users", masterToken, "GET", path("/t/master/admin/api/accounts/%d/users.json", id), nil, 200, "")
	adminID := listed(users.body, "users", "user")[0] // the admin signed up with, then 3scaleadmin
	h.checkAs("admin's email", masterToken, "PUT", path("/t/master/admin/api/accounts/%d/users/%d.json", id, adminID),
		url.Values{"email": {"boss@globex.example"}}, 200, "")
	res = h.checkAs("show again", token, "GET", own, nil, 200, "")
	if diff := cmp.Diff(map[string]any{"support_email": "boss@globex.example", "finance_support_email": "ar@globex.example"},
		fields(res.body, "account", "support_email", "finance_support_email")); diff != "" {
		t.Errorf("after the admin's email changed (-want +got):\n%s", diff)
	}
	if got := h.sim.Objects("globex", KindProvider); len(got) != 1 || got[0]["id"] != id {
		t.Errorf("Objects(KindProvider): %v", got)
	}
}

// TestWebHooks: the tenant's web hook as Admin::Api::WebHooksController updates it
// (app/controllers/admin/api/web_hooks_controller.rb), rendered by WebHookRepresenter.
func TestWebHooks(t *testing.T) {
	h := newHarness(t)
	// No show route (config/routes.rb:728): Rails' public exceptions answer 404.
	h.check("no GET", "GET", webhooksPath, nil, 404, `{"error":"Not Found","status":404}`)
	if got := h.sim.Objects("acme", KindWebhooks); len(got) != 0 {
		t.Fatalf("a new tenant's web hook: %v, want none", got)
	}

	// test/integration/api/web_hooks_test.rb:11-18: an active hook with url "example" is refused and no
	// web hook is saved.
	h.check("active, url not a URL", "PUT", webhooksPath, url.Values{"web_hook[url]": {"example"}, "web_hook[active]": {"true"}},
		422, `{"errors":{"url":["is invalid"]}}`)
	if got := h.sim.Objects("acme", KindWebhooks); len(got) != 0 {
		t.Fatalf("after a refused update: %v, want none", got)
	}
	// web_hooks_test.rb:20-24: with an http URL it is saved: every switch false (db/schema.rb:1465-1486).
	res := h.check("active, http URL", "PUT", webhooksPath, url.Values{"web_hook[url]": {"http://example.com"}, "web_hook[active]": {"true"}},
		200, "")
	want := map[string]any{"url": "http://example.com", "active": true, "provider_actions": false}
	for _, s := range webHookSwitches {
		want[s] = false
	}
	if diff := cmp.Diff(map[string]any{"webhook": want}, res.body); diff != "" {
		t.Fatalf("the saved web hook (-want +got):\n%s", diff)
	}
	if len(webHookSwitches) != 16 {
		t.Errorf("%d switches, want the 16 *_on columns", len(webHookSwitches))
	}

	cases := []fieldCase{
		// web_hook.rb:7: format only while active; URI::DEFAULT_PARSER.make_regexp is not anchored.
		{"another scheme", "PUT", webhooksPath, url.Values{"url": {"ftp://hooks.example.com"}}, 422, "errors", []string{"url"},
			map[string]any{"url": []any{"is invalid"}}},
		{"the scheme is case-sensitive", "PUT", webhooksPath, url.Values{"url": {"HTTPS://hooks.example.com"}}, 422, "errors",
			[]string{"url"}, map[string]any{"url": []any{"is invalid"}}},
		{"blank while active", "PUT", webhooksPath, url.Values{"url": {""}}, 422, "errors", []string{"url"},
			map[string]any{"url": []any{"is invalid"}}},
		{"http: anywhere passes", "PUT", webhooksPath, url.Values{"url": {"see http: or not"}}, 200, "webhook", []string{"url"},
			map[string]any{"url": "see http: or not"}},
		{"inactive: any url", "PUT", webhooksPath, url.Values{"url": {"not a url"}, "active": {"0"}}, 200, "webhook",
			[]string{"url", "active"}, map[string]any{"url": "not a url", "active": false}},
		{"too long, even inactive", "PUT", webhooksPath, url.Values{"url": {"https://h.example.com/" + strings.Repeat("a", 234)}}, 422,
			"errors", []string{"url"}, map[string]any{"url": []any{msgTooLong255}}},
		// Booleans cast as ActiveModel::Type::Boolean: blank NULL, which the representer leaves out.
		{"switches", "PUT", webhooksPath, url.Values{"url": {"https://hooks.example.com/3scale"}, "active": {"1"}, "provider_actions": {"true"},
			"account_created_on": {"1"}, "application_key_updated_on": {"on"}, "user_deleted_on": {"false"}, "account_updated_on": {""},
			"push_application_content_type": {"false"}}, 200, "webhook",
			[]string{"url", "active", "provider_actions", "account_created_on", "application_key_updated_on", "user_deleted_on",
				"account_updated_on", "push_application_content_type"},
			map[string]any{"url": "https://hooks.example.com/3scale", "active": true, "provider_actions": true, "account_created_on": true,
				"application_key_updated_on": true, "user_deleted_on": false, "account_updated_on": nil, "push_application_content_type": nil}},
	}
	checkFields(t, h, cases)
	last := h.sim.Objects("acme", KindWebhooks)
	if len(last) != 1 || last[0]["url"] != "https://hooks.example.com/3scale" || last[0]["account_created_on"] != true {
		t.Errorf("Objects(KindWebhooks): %v", last)
	}
	if _, found := last[0]["account_updated_on"]; found {
		t.Errorf("a NULL switch is shown: %v", last[0])
	}

	// params.fetch(:web_hook) (web_hooks_controller.rb:26): nothing wrapped, 400 as text. The answer's root
	// key, webhook, is not the parameters' (web_hook): a JSON body wrapped in it wraps nothing.
	h.check("nothing wrapped", "PUT", webhooksPath, url.Values{"enabled": {"true"}}, 400, "Required parameter missing: web_hook")
	if res := h.sendJSON("PUT", webhooksPath, `{"webhook":{"active":false}}`); res.code != 400 || res.raw != "Required parameter missing: web_hook" {
		t.Errorf("a JSON body under webhook: %d %s, want 400", res.code, res.raw)
	}
	res = h.sendJSON("PUT", webhooksPath, `{"web_hook":{"active":false,"user_created_on":true}}`)
	if diff := cmp.Diff(map[string]any{"active": false, "user_created_on": true, "url": "https://hooks.example.com/3scale"},
		fields(res.body, "webhook", "active", "user_created_on", "url")); res.code != 200 || diff != "" {
		t.Errorf("a JSON body under web_hook: %d (-want +got):\n%s", res.code, diff)
	}

	// A first PUT with nothing permitted saves a web hook with the defaults (build_web_hook then update,
	// web_hooks_controller.rb:11,17-19); its url NULL, left out.
	if other := h.sim.Objects("other", KindWebhooks); len(other) != 0 {
		t.Fatalf("the other tenant's web hook: %v", other)
	}
	res = h.sendAs("tok2", "PUT", webhooksPath, url.Values{"id": {"7"}})
	delete(want, "url")
	want["active"] = false
	if diff := cmp.Diff(map[string]any{"webhook": want}, res.body); res.code != 200 || diff != "" {
		t.Errorf("a first PUT with nothing permitted: %d (-want +got):\n%s", res.code, diff)
	}
	if n := h.sim.Count("other", KindWebhooks); n != 1 {
		t.Errorf("Count(KindWebhooks) of other = %d, want 1", n)
	}
	if res := h.send("PUT", "/admin/api/webhooks.xml", url.Values{"active": {"false"}}); res.code != 404 {
		t.Errorf("webhooks.xml: %d, want 404 (JSON only here)", res.code)
	}
}

// jsonRoundTrip renders objects as JSON and decodes them, as a client would see them.
func jsonRoundTrip(t *testing.T, objs []map[string]any) []map[string]any {
	t.Helper()
	raw, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
