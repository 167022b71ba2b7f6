package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const adminSignIn = "/admin/api/account/authentication_providers"

// TestAdminSignInProviders: the admin portal's providers, apart from the developer portal's, and
// enforce_sso accepted once one is published.
func TestAdminSignInProviders(t *testing.T) {
	h := newHarness(t)
	h.check("no kind", "POST", adminSignIn+".json", url.Values{"name": {"x"}}, 400, "Required parameter missing: kind")
	h.check("nothing", "POST", adminSignIn+".json", url.Values{"other": {"x"}}, 400, "Required parameter missing: authentication_provider")
	h.check("github is not for admins", "POST", adminSignIn+".json", url.Values{"kind": {"GitHub"}, "client_id": {"a"}, "client_secret": {"b"}}, 422,
		`{"errors":{"kind":["unavailable for this account type"]}}`)
	h.check("keycloak needs a site", "POST", adminSignIn+".json", url.Values{"kind": {"keycloak"}, "client_id": {"a"}, "client_secret": {"b"}}, 422,
		`{"errors":{"site":["can't be blank"]}}`)
	res := h.check("create", "POST", adminSignIn+".json", url.Values{"kind": {"Keycloak"}, "name": {"Corp SSO"}, "client_id": {"a"},
		"client_secret": {"b"}, "site": {"https://sso.example.com/auth/realms/corp"}, "token_url": {"https://ignored.example"},
		"trust_email": {"true"}}, 201, "")
	id := int64(fields(res.body, "authentication_provider", "id")["id"].(float64))
	got := res.body.(map[string]any)["authentication_provider"].(map[string]any)
	delete(got, "created_at")
	delete(got, "updated_at")
	want := map[string]any{"id": float64(id), "kind": "keycloak", "account_type": "provider", "name": "Corp SSO", "system_name": "corp_sso",
		"client_id": "a", "client_secret": "b", "site": "https://sso.example.com/auth/realms/corp", "identifier_key": "id",
		"username_key": "login", "trust_email": false, "published": false, "skip_ssl_certificate_verification": false,
		"automatically_approve_accounts": false, "account_id": float64(h.sim.AccountID("acme")),
		"callback_url": "https://acme-admin.simulator.invalid/auth/corp_sso/callback"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("an admin-portal provider (-want +got):\n%s", diff)
	}
	// One table: a developer provider may have the same kind, not the same system name.
	h.check("developer, same system name", "POST", signInProviders+".json", url.Values{"kind": {"keycloak"}, "system_name": {"corp_sso"},
		"client_id": {"a"}, "client_secret": {"b"}, "site": {"https://sso.example.com"}}, 422, `{"errors":{"system_name":["has already been taken"]}}`)
	dev := h.create(signInProviders+".json", url.Values{"kind": {"keycloak"}, "client_id": {"a"}, "client_secret": {"b"},
		"site": {"https://sso.example.com"}}, "authentication_provider")
	h.check("a second admin keycloak", "POST", adminSignIn+".json", url.Values{"kind": {"keycloak"}, "name": {"Second"}, "client_id": {"a"},
		"client_secret": {"b"}, "site": {"https://sso2.example.com"}}, 201, "")
	res = h.check("admin list", "GET", adminSignIn+".json", nil, 200, "")
	if ids := listed(res.body, "authentication_providers", "authentication_provider"); len(ids) != 2 || ids[0] != id {
		t.Errorf("admin list: %v", ids)
	}
	res = h.check("developer list", "GET", signInProviders+".json", nil, 200, "")
	if ids := listed(res.body, "authentication_providers", "authentication_provider"); !cmp.Equal([]int64{dev}, ids) {
		t.Errorf("developer list: %v", ids)
	}
	h.check("a developer one here", "GET", fmt.Sprintf("%s/%d.json", adminSignIn, dev), nil, 404, `{"status":"Not found"}`)
	h.check("an admin one there", "GET", fmt.Sprintf("%s/%d.json", signInProviders, id), nil, 404, `{"status":"Not found"}`)
	h.check("change_published has no action", "PUT", fmt.Sprintf("%s/%d/change_published.json", adminSignIn, id), nil, 404, "")

	h.check("enforce_sso before publishing", "PUT", portalSettingsPath, url.Values{"enforce_sso": {"true"}}, 422, "")
	res = h.check("update: name dropped, published", "PUT", fmt.Sprintf("%s/%d.json", adminSignIn, id), url.Values{"name": {"New"},
		"published": {"1"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"name": "Corp SSO", "published": true}, fields(res.body, "authentication_provider", "name", "published")); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	h.check("enforce_sso with a published provider", "PUT", portalSettingsPath, url.Values{"enforce_sso": {"true"}}, 200, "")
	h.check("a published provider while SSO is enforced", "PUT", fmt.Sprintf("%s/%d.json", adminSignIn, id), url.Values{"published": {"0"}},
		403, `{"status":"Forbidden"}`)
	if n := len(h.sim.Objects("acme", KindAdminSignInProviders)); n != 2 || len(h.sim.Objects("acme", KindSignInProviders)) != 1 {
		t.Errorf("objects: %d admin, %d developer", n, len(h.sim.Objects("acme", KindSignInProviders)))
	}
}
