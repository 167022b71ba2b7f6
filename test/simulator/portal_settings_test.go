package simulator

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	portalSettingsPath = "/admin/api/settings.json"
	signInProviders    = "/admin/api/authentication_providers"
)

// TestPortalSettings: the developer portal's settings as porta shows and updates them.
func TestPortalSettings(t *testing.T) {
	h := newHarness(t)
	res := h.send("GET", portalSettingsPath, nil)
	want := map[string]any{"settings": map[string]any{"useraccountarea_enabled": true, "signups_enabled": true,
		"account_approval_required": false, "public_search": false, "account_plans_ui_visible": false,
		"change_account_plan_permission": "request", "service_plans_ui_visible": false,
		"change_service_plan_permission": "request", "enforce_sso": false}}
	if diff := cmp.Diff(want, res.body); res.code != 200 || diff != "" {
		t.Fatalf("a new tenant's settings: %d (-want +got, hide_service left out while NULL):\n%s", res.code, diff)
	}

	all := []string{"useraccountarea_enabled", "hide_service", "signups_enabled", "account_approval_required", "public_search",
		"account_plans_ui_visible", "change_account_plan_permission", "service_plans_ui_visible", "change_service_plan_permission", "enforce_sso"}
	cases := []fieldCase{
		{"top-level, booleans as Rails casts them", "PUT", portalSettingsPath, url.Values{"hide_service": {"1"}, "signups_enabled": {"0"},
			"public_search": {"true"}, "unknown": {"x"}}, 200, "settings", []string{"hide_service", "signups_enabled", "public_search", "unknown"},
			map[string]any{"hide_service": true, "signups_enabled": false, "public_search": true, "unknown": nil}},
		{"wrapped, PATCH as PUT", "PATCH", portalSettingsPath, url.Values{"settings[change_account_plan_permission]": {"direct"},
			"settings[account_approval_required]": {"true"}}, 200, "settings", []string{"change_account_plan_permission", "account_approval_required"},
			map[string]any{"change_account_plan_permission": "direct", "account_approval_required": true}},
		{"a permission out of the list", "PUT", portalSettingsPath, url.Values{"change_service_plan_permission": {"always"}, "public_search": {"false"}},
			422, "errors", []string{"change_service_plan_permission"}, map[string]any{"change_service_plan_permission": []any{"is not included in the list"}}},
		{"nothing of the refused update stuck", "GET", portalSettingsPath, nil, 200, "settings", []string{"change_service_plan_permission", "public_search"},
			map[string]any{"change_service_plan_permission": "request", "public_search": true}},
		{"blank: NOT NULL columns kept, a nullable one NULL", "PUT", portalSettingsPath, url.Values{"change_account_plan_permission": {""},
			"public_search": {""}, "hide_service": {""}}, 200, "settings", []string{"change_account_plan_permission", "public_search", "hide_service"},
			map[string]any{"change_account_plan_permission": "direct", "public_search": true, "hide_service": nil}},
		{"enforce_sso without an admin-portal provider", "PUT", portalSettingsPath, url.Values{"enforce_sso": {"1"}}, 422, "errors", []string{"enforce_sso"},
			map[string]any{"enforce_sso": []any{msgEnforceSSO}}},
		{"enforce_sso false is allowed", "PUT", portalSettingsPath, url.Values{"enforce_sso": {"false"}}, 200, "settings", []string{"enforce_sso"},
			map[string]any{"enforce_sso": false}},
	}
	checkFields(t, h, cases)
	if res := h.send("PUT", portalSettingsPath, url.Values{"bg_colour": {"red"}}); res.code != 400 || res.raw != "Required parameter missing: settings" {
		t.Errorf("an update with no allowed attribute: %d %q, want 400 (params.require(:settings))", res.code, res.raw)
	}
	res = h.sendJSON("PUT", portalSettingsPath, `{"settings":{"account_plans_ui_visible":true,"service_plans_ui_visible":null}}`)
	if diff := cmp.Diff(map[string]any{"account_plans_ui_visible": true, "service_plans_ui_visible": nil},
		fields(res.body, "settings", "account_plans_ui_visible", "service_plans_ui_visible")); res.code != 200 || diff != "" {
		t.Errorf("a JSON body: %d (-want +got):\n%s", res.code, diff)
	}
	got := h.sim.Objects("acme", KindPortalSettings)
	if len(got) != 1 || got[0]["account_approval_required"] != true || got[0]["change_account_plan_permission"] != "direct" {
		t.Errorf("dump: %v", got)
	}
	// hide_service, NULL again since the blank update, and service_plans_ui_visible, NULL since the JSON
	// null, are left out; every other field is there.
	wantKeys := []string{}
	for _, k := range all {
		if k != "hide_service" && k != "service_plans_ui_visible" {
			wantKeys = append(wantKeys, k)
		}
	}
	sort.Strings(wantKeys)
	if diff := cmp.Diff(wantKeys, keysOf(res.body.(map[string]any)["settings"])); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if other := h.sim.Objects("other", KindPortalSettings); other[0]["change_account_plan_permission"] != "request" {
		t.Errorf("another tenant's settings changed: %v", other)
	}
	if res := h.send("GET", "/admin/api/settings.xml", nil); res.code != 404 {
		t.Errorf("settings.xml: %d, want 404 (JSON only here)", res.code)
	}
}

// TestSignInProviders: the developer portal's sign-in providers: defaults, validations, the update's
// whitelist, the secret echoed, no DELETE.
func TestSignInProviders(t *testing.T) {
	h := newHarness(t)
	kc := h.create(signInProviders+".json", url.Values{"kind": {"Keycloak"}, "name": {"Corp SSO"}, "client_id": {"portal"},
		"client_secret": {"s3cret"}, "site": {"https://sso.example.com/auth/realms/corp"}}, "authentication_provider")
	res := h.send("GET", path("%s/%d.json", signInProviders, kc), nil)
	want := map[string]any{"id": float64(kc), "kind": "keycloak", "account_type": "developer", "name": "Corp SSO", "system_name": "corp_sso",
		"client_id": "portal", "client_secret": "s3cret", "site": "https://sso.example.com/auth/realms/corp",
		"skip_ssl_certificate_verification": false, "automatically_approve_accounts": false, "username_key": "login",
		"identifier_key": "id", "trust_email": false, "published": false, "account_id": float64(h.sim.AccountID("acme")),
		"callback_url": "https://acme." + DefaultSuperdomain + "/auth/corp_sso/callback"}
	got, _ := res.body.(map[string]any)["authentication_provider"].(map[string]any)
	for _, stamp := range []string{"created_at", "updated_at"} {
		if s, _ := got[stamp].(string); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(s) {
			t.Errorf("%s %q, want ISO 8601", stamp, s)
		}
		delete(got, stamp)
	}
	if diff := cmp.Diff(want, got); res.code != 200 || diff != "" {
		t.Fatalf("show: %d (-want +got):\n%s", res.code, diff)
	}

	gh := h.create(signInProviders+".json", url.Values{"authentication_provider[kind]": {"github"}, "authentication_provider[client_id]": {"a"},
		"authentication_provider[client_secret]": {"b"}}, "authentication_provider")
	cases := []fieldCase{
		{"GitHub's defaults", "GET", path("%s/%d.json", signInProviders, gh), nil, 200, "authentication_provider",
			[]string{"name", "system_name", "branding_state", "published"},
			map[string]any{"name": "GitHub", "system_name": "github", "branding_state": "custom_branded", "published": false}},
		{"Auth0: site required, two callbacks", "POST", signInProviders + ".json", url.Values{"kind": {"auth0"}, "client_id": {"a"}, "client_secret": {"b"}},
			422, "errors", []string{"site"}, map[string]any{"site": []any{"can't be blank"}}},
		{"Auth0 made", "POST", signInProviders + ".json", url.Values{"kind": {"auth0"}, "name": {"Zero"}, "client_id": {"a"}, "client_secret": {"b"},
			"site": {"https://x.auth0.com"}}, 201, "authentication_provider", []string{"system_name", "callback_url", "authorize_url"},
			map[string]any{"system_name": "zero", "authorize_url": nil, "callback_url": "https://acme." + DefaultSuperdomain + "/auth/zero/callback, https://acme." +
				DefaultSuperdomain + "/auth/invitations/auth0/zero/callback"}},
		{"duplicate kind", "POST", signInProviders + ".json", url.Values{"kind": {"KEYCLOAK"}, "system_name": {"kc2"}, "client_id": {"a"},
			"client_secret": {"b"}, "site": {"https://s"}}, 422, "errors", []string{"kind"}, map[string]any{"kind": []any{"has already been taken"}}},
		{"the rest of create's validations", "POST", signInProviders + ".json", url.Values{"kind": {"keycloak2"}, "system_name": {"corp_sso"},
			"name": {""}, "identifier_key": {""}, "token_url": {"ftp://x"}}, 422, "errors",
			[]string{"system_name", "name", "identifier_key", "client_id", "client_secret", "token_url"},
			map[string]any{"system_name": []any{"has already been taken"}, "name": []any{"can't be blank"}, "identifier_key": []any{"can't be blank"},
				"client_id": []any{"can't be blank"}, "client_secret": []any{"can't be blank"}, "token_url": []any{"Invalid URL format"}}},
		{"a malformed system name", "POST", signInProviders + ".json", url.Values{"kind": {"other"}, "system_name": {"a b"}, "client_id": {"a"}, "client_secret": {"b"}},
			422, "errors", []string{"system_name"}, map[string]any{"system_name": []any{"invalid"}}},
		{"another kind is Custom, named OAuth2", "POST", signInProviders + ".json", url.Values{"kind": {"Unknown"}, "client_id": {"a"}, "client_secret": {"b"}},
			201, "authentication_provider", []string{"kind", "name"}, map[string]any{"kind": "unknown", "name": "OAuth2"}},
		{"update: only the whitelist", "PUT", path("%s/%d.json", signInProviders, kc), url.Values{"name": {"Renamed"}, "kind": {"auth0"},
			"client_secret": {"rotated"}, "published": {"1"}, "site": {"https://sso2.example.com"}}, 200, "authentication_provider",
			[]string{"name", "kind", "client_secret", "published", "site"},
			map[string]any{"name": "Corp SSO", "kind": "keycloak", "client_secret": "rotated", "published": true, "site": "https://sso2.example.com"}},
		{"update: a site with whitespace", "PATCH", path("%s/%d.json", signInProviders, kc), url.Values{"site": {"https://a b"}}, 422, "errors",
			[]string{"site"}, map[string]any{"site": []any{"can't contain whitespaces"}}},
		{"update: the secret not blank", "PUT", path("%s/%d.json", signInProviders, kc), url.Values{"client_secret": {""}}, 422, "errors",
			[]string{"client_secret"}, map[string]any{"client_secret": []any{"can't be blank"}}},
		{"no DELETE route", "DELETE", path("%s/%d.json", signInProviders, kc), nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
		{"still there", "GET", path("%s/%d.json", signInProviders, kc), nil, 200, "authentication_provider", []string{"client_secret"},
			map[string]any{"client_secret": "rotated"}},
	}
	checkFields(t, h, cases)
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no kind", url.Values{"name": {"X"}}, "Required parameter missing: kind"},
		{"blank kind", url.Values{"kind": {" "}}, "Required parameter missing: kind"},
		{"nothing", url.Values{"foo": {"1"}}, "Required parameter missing: authentication_provider"},
	} {
		if res := h.send("POST", signInProviders+".json", tc.form); res.code != 400 || res.raw != tc.want {
			t.Errorf("%s: %d %q, want 400 %q", tc.name, res.code, res.raw, tc.want)
		}
	}
	res = h.send("GET", signInProviders+".json", nil)
	if ids := listed(res.body, "authentication_providers", "authentication_provider"); len(ids) != 4 || ids[0] != kc || ids[1] != gh {
		t.Errorf("index: %s", res.raw)
	}
	dump := h.sim.Objects("acme", KindSignInProviders)
	// With no name, the system name is made before the name defaults: "<class>_<12 hex>".
	if sn, _ := dump[3]["system_name"].(string); !regexp.MustCompile(`^custom_[0-9a-f]{12}$`).MatchString(sn) {
		t.Errorf("a Custom provider's system name %q, want custom_<12 hex>", sn)
	}
	if len(dump) != 4 || dump[0]["client_secret"] != "rotated" || dump[1]["client_secret"] != "b" {
		t.Errorf("dump: %v", dump)
	}
	if n := h.sim.Count("other", KindSignInProviders); n != 0 {
		t.Errorf("another tenant has %d providers", n)
	}
	if res := h.sendJSON("POST", signInProviders+".json", `{"authentication_provider":{"kind":"keycloak3","name":"Ünïcode IdP","client_id":"a","client_secret":"b"}}`); res.code != 201 ||
		fields(res.body, "authentication_provider", "system_name")["system_name"] != "unicode_idp" {
		t.Errorf("a JSON body: %d %s", res.code, res.raw)
	}
}

// TestSignInProviderAccountID: a provider carries its tenant's account id (account_id,
// app/representers/authentication_provider_representer.rb:22): the account master holds for a tenant
// it made, else the one the simulator gives each tenant of Options.Tenants, in the order of their names.
func TestSignInProviderAccountID(t *testing.T) {
	h := newHarness(t, withMaster)
	if acme, other := h.sim.AccountID("acme"), h.sim.AccountID("other"); acme != ownAccountBase+1 || other != ownAccountBase+2 {
		t.Errorf("account ids: acme %d, other %d, want %d and %d", acme, other, ownAccountBase+1, ownAccountBase+2)
	}
	if id := h.sim.AccountID("nobody"); id != 0 {
		t.Errorf("an unknown tenant's account id: %d", id)
	}
	form := url.Values{"kind": {"keycloak"}, "client_id": {"a"}, "client_secret": {"b"}, "site": {"https://sso.example.com/auth/realms/x"}}
	res := h.send("POST", signInProviders+".json", form)
	if got := fields(res.body, "authentication_provider", "account_id")["account_id"]; res.code != 201 || got != float64(h.sim.AccountID("acme")) {
		t.Errorf("acme's provider: %d account_id %v, want %d", res.code, got, h.sim.AccountID("acme"))
	}
	accountID, token, _ := h.tenantSignup("Beta Corp", "beta", "beta@example.com")
	res = h.sendAs(token, "POST", "/t/beta-corp"+signInProviders+".json", form)
	if got := fields(res.body, "authentication_provider", "account_id")["account_id"]; res.code != 201 || got != float64(accountID) {
		t.Errorf("a tenant master made: %d %s, want account_id %d", res.code, res.raw, accountID)
	}
	if id := h.sim.AccountID("beta-corp"); id != accountID {
		t.Errorf("AccountID of a tenant master made: %d, want %d", id, accountID)
	}
	res = h.send("GET", signInProviders+".json", nil)
	if !strings.Contains(res.raw, `"account_id":`+itoa(h.sim.AccountID("acme"))) {
		t.Errorf("the index without account_id: %s", res.raw)
	}
}
