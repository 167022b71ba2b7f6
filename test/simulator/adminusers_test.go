package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const adminUsers = "/admin/api/users"

func userPath(id int64, action string) string {
	if action == "" {
		return fmt.Sprintf("%s/%d.json", adminUsers, id)
	}
	return fmt.Sprintf("%s/%d/%s.json", adminUsers, id, action)
}

// TestAdminUsersFirstAdmin: a tenant starts with its first admin, whose token AddTenant's is; the
// tenant's users are apart from the developer accounts' users and from other tenants'.
func TestAdminUsersFirstAdmin(t *testing.T) {
	h := newHarness(t)
	admin := h.sim.FirstAdminID("acme")
	if admin <= ownUserBase || admin == h.sim.FirstAdminID("other") {
		t.Fatalf("first admins: acme %d, other %d", admin, h.sim.FirstAdminID("other"))
	}
	res := h.check("list", "GET", adminUsers+".json", nil, 200, "")
	want := []int64{admin}
	if got := listed(res.body, "users", "user"); !cmp.Equal(want, got) {
		t.Fatalf("users: %v, want %v", got, want)
	}
	u := res.body.(map[string]any)["users"].([]any)[0].(map[string]any)["user"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"id": float64(admin), "username": "admin", "email": "admin@acme.simulator.invalid", "role": "admin",
		"state": "active"}, fields(map[string]any{"user": u}, "user", "id", "username", "email", "role", "state")); diff != "" {
		t.Errorf("the first admin (-want +got):\n%s", diff)
	}
	h.check("another tenant's user", "GET", userPath(h.sim.FirstAdminID("other"), ""), nil, 404, `{"status":"Not found"}`)
	h.signup("Dev", "dev", nil)
	if n := len(h.sim.Objects("acme", KindAdminUsers)); n != 1 {
		t.Errorf("admin users after a developer signup: %d, want 1", n)
	}
	for _, u := range h.sim.Objects("acme", KindUsers) {
		if u["id"] == admin {
			t.Errorf("the admin among the developers' users")
		}
	}
}

// TestAdminUsersLifecycle: create, update, roles and states as porta's users controller answers them.
func TestAdminUsersLifecycle(t *testing.T) {
	h := newHarness(t)
	admin := h.sim.FirstAdminID("acme")
	res := h.check("create without a password", "POST", adminUsers+".json", url.Values{"username": {"bob"}, "email": {"bob@example.com"},
		"role": {"admin"}, "state": {"active"}}, 201, "")
	bob := int64(fields(res.body, "user", "id")["id"].(float64))
	if diff := cmp.Diff(map[string]any{"username": "bob", "role": "member", "state": "pending"},
		fields(res.body, "user", "username", "role", "state")); diff != "" {
		t.Errorf("a new user is a pending member (-want +got):\n%s", diff)
	}
	h.check("taken", "POST", adminUsers+".json", url.Values{"username": {"bob"}, "email": {"admin@acme.simulator.invalid"}}, 422,
		`{"errors":{"email":["has already been taken"],"username":["has already been taken"]}}`)
	h.check("no email", "POST", adminUsers+".json", url.Values{"username": {"carol"}}, 422,
		`{"errors":{"email":["should look like an email address"]}}`)
	h.check("short password, confirmation", "POST", adminUsers+".json", url.Values{"username": {"carol"}, "email": {"carol@example.com"},
		"password": {"short"}, "password_confirmation": {"other"}}, 422,
		`{"errors":{"password":["is too short (minimum is 15 characters)"],"password_confirmation":["doesn't match Password"]}}`)
	// The same username in another tenant is fine.
	if res := h.sendAs("tok2", "POST", adminUsers+".json", url.Values{"username": {"bob"}, "email": {"bob@example.com"}}); res.code != 201 {
		t.Errorf("bob in another tenant: %d %s", res.code, res.raw)
	}

	h.check("suspend a pending user", "PUT", userPath(bob, "suspend"), nil, 422, "")
	h.check("unsuspend a pending user", "PUT", userPath(bob, "unsuspend"), nil, 422, `{"errors":{"state":["cannot transition via \"unsuspend\""]}}`)
	h.check("activate", "PUT", userPath(bob, "activate"), nil, 200, "")
	h.check("activate again", "PUT", userPath(bob, "activate"), nil, 422, `{"errors":{"state":["cannot transition via \"activate\""]}}`)
	h.check("suspend", "PUT", userPath(bob, "suspend"), nil, 200, "")
	h.check("suspend again", "PUT", userPath(bob, "suspend"), nil, 200, "")
	res = h.check("filter", "GET", adminUsers+".json?state=suspended", nil, 200, "")
	if got := listed(res.body, "users", "user"); !cmp.Equal([]int64{bob}, got) {
		t.Errorf("suspended users: %v", got)
	}
	h.check("unsuspend", "PUT", userPath(bob, "unsuspend"), nil, 200, "")
	res = h.check("update", "PUT", userPath(bob, ""), url.Values{"username": {"robert"}, "role": {"admin"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"username": "robert", "role": "member"}, fields(res.body, "user", "username", "role")); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	h.check("admin", "PUT", userPath(bob, "admin"), nil, 200, "")
	res = h.check("filter by role", "GET", adminUsers+".json?role=admin", nil, 200, "")
	if got := listed(res.body, "users", "user"); !cmp.Equal([]int64{admin, bob}, got) {
		t.Errorf("admins: %v", got)
	}

	// The first admin's token: not itself.
	h.check("own role", "PUT", userPath(admin, "member"), nil, 403, `{"status":"Forbidden"}`)
	h.check("destroy itself", "DELETE", userPath(admin, ""), nil, 403, `{"status":"Forbidden"}`)
	h.check("suspend itself is allowed", "PUT", userPath(admin, "suspend"), nil, 200, "")
	h.check("unsuspend itself", "PUT", userPath(admin, "unsuspend"), nil, 200, "")

	// Bob, admin now, with a token of his own.
	h.sim.AddUserToken("acme", bob, "bobtok")
	h.checkAs("bob demotes the first admin", "bobtok", "PUT", userPath(admin, "member"), nil, 200, "")
	h.check("the demoted admin's token lists no more", "GET", adminUsers+".json", nil, 403, "")
	h.checkAs("bob deletes the former admin", "bobtok", "DELETE", userPath(admin, ""), nil, 200, "")
	h.check("the deleted user's token is gone", "GET", adminUsers+".json", nil, 403, `{"error":"Access denied"}`)
	h.checkAs("gone", "bobtok", "GET", userPath(admin, ""), nil, 404, `{"status":"Not found"}`)
}

// TestAdminUsersMembers: what a member's token may do.
func TestAdminUsersMembers(t *testing.T) {
	h := newHarness(t)
	admin := h.sim.FirstAdminID("acme")
	m := h.create(adminUsers+".json", url.Values{"username": {"mem"}, "email": {"mem@example.com"}}, "user")
	other := h.create(adminUsers+".json", url.Values{"username": {"mem2"}, "email": {"mem2@example.com"}}, "user")
	h.sim.AddUserToken("acme", m, "memtok")
	const noScope = `{"error":"` + msgTokenPermissions + `"}`
	h.checkAs("a member without partners", "memtok", "GET", userPath(m, ""), nil, 403, noScope)
	h.check("give partners", "PUT", userPath(m, "permissions"), url.Values{"allowed_sections[]": {"partners"}}, 200, "")
	h.checkAs("list", "memtok", "GET", adminUsers+".json", nil, 200, "")
	h.checkAs("itself", "memtok", "GET", userPath(m, ""), nil, 200, "")
	h.checkAs("another user", "memtok", "GET", userPath(other, ""), nil, 403, `{"status":"Forbidden"}`)
	h.checkAs("create", "memtok", "POST", adminUsers+".json", url.Values{"username": {"x1x"}, "email": {"x@example.com"}}, 403, `{"status":"Forbidden"}`)
	h.checkAs("destroy itself", "memtok", "DELETE", userPath(m, ""), nil, 403, `{"status":"Forbidden"}`)
	h.checkAs("its role", "memtok", "PUT", userPath(m, "admin"), nil, 403, `{"status":"Forbidden"}`)
	h.checkAs("its permissions", "memtok", "PUT", userPath(m, "permissions"), url.Values{"allowed_sections[]": {"portal"}}, 403, `{"status":"Forbidden"}`)
	h.checkAs("an admin's permissions", "memtok", "GET", userPath(admin, "permissions"), nil, 403, `{"status":"Forbidden"}`)
	h.checkAs("activate itself", "memtok", "PUT", userPath(m, "activate"), nil, 200, "")

	h.sim.SetMultipleUsers("acme", false)
	h.check("create without multiple_users", "POST", adminUsers+".json", url.Values{"username": {"x1x"}, "email": {"x@example.com"}}, 403, "")
	h.check("list without multiple_users", "GET", adminUsers+".json", nil, 403, `{"status":"Forbidden"}`)
	h.check("a user without multiple_users", "GET", userPath(m, ""), nil, 200, "")
}

// TestAdminUserPermissions: sections and services as MemberPermissionsController reads and writes them.
func TestAdminUserPermissions(t *testing.T) {
	h := newHarness(t)
	admin := h.sim.FirstAdminID("acme")
	s1, _ := h.product("one")
	s2, _ := h.product("two")
	theirs, _ := h.productOf("tok2", "theirs")
	m := h.create(adminUsers+".json", url.Values{"username": {"mem"}, "email": {"mem@example.com"}}, "user")
	perms := func(res result) map[string]any { return res.body.(map[string]any)["permissions"].(map[string]any) }

	res := h.check("an admin", "GET", userPath(admin, "permissions"), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"user_id": float64(admin), "role": "admin", "allowed_service_ids": nil,
		"allowed_sections": []any{"monitoring", "partners", "plans", "policy_registry", "portal", "settings"}}, perms(res)); diff != "" {
		t.Errorf("an admin's permissions (-want +got):\n%s", diff)
	}
	h.check("an admin's cannot change", "PUT", userPath(admin, "permissions"), url.Values{"allowed_sections[]": {"portal"}}, 403, `{"status":"Forbidden"}`)
	res = h.check("a new member", "GET", userPath(m, "permissions"), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"user_id": float64(m), "role": "member", "allowed_service_ids": nil, "allowed_sections": []any{}}, perms(res)); diff != "" {
		t.Errorf("a new member's permissions (-want +got):\n%s", diff)
	}
	cases := []struct {
		name             string
		form             url.Values
		json             string
		sections, shared any
	}{
		{"sections and services", url.Values{"allowed_sections[]": {"settings", "partners", "finance", "bogus"},
			"allowed_service_ids[]": {fmt.Sprint(s2), "x", fmt.Sprint(theirs), "999999", fmt.Sprint(s1)}}, "",
			[]any{"partners", "settings"}, []any{float64(s2), float64(s1)}},
		{"services only: sections kept", url.Values{"allowed_service_ids[]": {fmt.Sprint(s1)}}, "", []any{"partners", "settings"}, []any{float64(s1)}},
		{"a blank scalar: every service", url.Values{"allowed_service_ids": {""}}, "", []any{"partners", "settings"}, nil},
		{`[""]: none`, url.Values{"allowed_service_ids[]": {""}}, "", []any{"partners", "settings"}, []any{}},
		{`["[]"]: none, wrapped`, url.Values{"permissions[allowed_service_ids][]": {"[]"}}, "", []any{"partners", "settings"}, []any{}},
		{"JSON null: every service, sections cleared", nil, `{"permissions":{"allowed_service_ids":null,"allowed_sections":[]}}`, []any{}, nil},
		{"JSON array", nil, fmt.Sprintf(`{"allowed_service_ids":[%d],"allowed_sections":["plans"]}`, s2), []any{"plans"}, []any{float64(s2)}},
		{"a scalar id changes nothing", url.Values{"allowed_service_ids": {fmt.Sprint(s1)}}, "", []any{"plans"}, []any{float64(s2)}},
	}
	for _, c := range cases {
		var res result
		if c.json != "" {
			res = h.sendJSON("PUT", userPath(m, "permissions"), c.json)
		} else {
			res = h.send("PUT", userPath(m, "permissions"), c.form)
		}
		if res.code != 200 {
			t.Errorf("%s: %d %s", c.name, res.code, res.raw)
			continue
		}
		got := perms(res)
		if diff := cmp.Diff(map[string]any{"sections": c.sections, "services": c.shared},
			map[string]any{"sections": got["allowed_sections"], "services": got["allowed_service_ids"]}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	h.check("nothing to update", "PUT", userPath(m, "permissions"), url.Values{"other": {"x"}}, 400, "Required parameter missing: permissions")
	h.check("the impersonation admin is not a tenant of AddTenant's", "GET", userPath(999, "permissions"), nil, 404, `{"status":"Not found"}`)
	// A deleted service leaves the list.
	h.check("delete two", "DELETE", path("/admin/api/services/%d.json", s2), nil, 200, "")
	res = h.check("after the delete", "GET", userPath(m, "permissions"), nil, 200, "")
	if got := perms(res)["allowed_service_ids"]; !cmp.Equal([]any{}, got) {
		t.Errorf("services after the delete: %v", got)
	}
	// Given on create by an admin.
	res = h.check("create with permissions", "POST", adminUsers+".json", url.Values{"username": {"mem3"}, "email": {"mem3@example.com"},
		"member_permission_ids[]": {"portal"}, "member_permission_service_ids[]": {fmt.Sprint(s1)}}, 201, "")
	m3 := int64(fields(res.body, "user", "id")["id"].(float64))
	res = h.check("its permissions", "GET", userPath(m3, "permissions"), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"user_id": float64(m3), "role": "member", "allowed_sections": []any{"portal"},
		"allowed_service_ids": []any{float64(s1)}}, perms(res)); diff != "" {
		t.Errorf("permissions given on create (-want +got):\n%s", diff)
	}
}

// productOf creates a product as the holder of token.
func (h *harness) productOf(token, systemName string) (int64, int64) {
	h.t.Helper()
	res := h.sendAs(token, "POST", "/admin/api/services.json", url.Values{"name": {systemName}, "system_name": {systemName}})
	if res.code != 201 {
		h.t.Fatalf("product %s: %d %s", systemName, res.code, res.raw)
	}
	return int64(fields(res.body, "service", "id")["id"].(float64)), 0
}

// TestAdminUsersOfMasterTenant: a tenant signed up through master has its signup admin as first admin,
// the same user master's books show, and its users there.
func TestAdminUsersOfMasterTenant(t *testing.T) {
	h := newHarness(t, withMaster)
	accountID, token, _ := h.tenantSignup("Beta Corp", "boss", "boss@beta.example")
	masterUsers := h.checkAs("master's view", masterToken, "GET", path("/admin/api/accounts/%d/users.json", accountID), nil, 200, "")
	res := h.checkAs("the tenant's view", token, "GET", adminUsers+".json", nil, 200, "")
	ids := listed(res.body, "users", "user")
	if len(ids) != 1 || ids[0] != h.sim.FirstAdminID("beta-corp") {
		t.Fatalf("the tenant's users: %v, first admin %d", ids, h.sim.FirstAdminID("beta-corp"))
	}
	if got := listed(masterUsers.body, "users", "user"); len(got) != 2 || got[0] != ids[0] {
		t.Errorf("master's books: %v (the admin and 3scaleadmin), the tenant's admin %d", got, ids[0])
	}
	h.checkAs("the impersonation admin is hidden", token, "GET", userPath(listed(masterUsers.body, "users", "user")[1], ""), nil, 404, "")
	res = h.checkAs("create", token, "POST", adminUsers+".json", url.Values{"username": {"boss"}, "email": {"x@beta.example"}}, 422, "")
	h.checkAs("create", token, "POST", adminUsers+".json", url.Values{"username": {"dev2"}, "email": {"dev2@beta.example"}}, 201, "")
	res = h.checkAs("master's view after", masterToken, "GET", path("/admin/api/accounts/%d/users.json", accountID), nil, 200, "")
	if got := listed(res.body, "users", "user"); len(got) != 3 {
		t.Errorf("master's books after a create: %v", got)
	}
	if n := len(h.sim.Objects("beta-corp", KindAdminUsers)); n != 2 {
		t.Errorf("KindAdminUsers: %d, want 2", n)
	}
}
