package simulator

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strongPassword is long enough for porta's strong passwords (15 characters).
const strongPassword = "correct-horse-battery"

// signup signs up an account and returns its id and the id of its admin user.
func (h *harness) signup(org, username string, extra url.Values) (accountID, userID int64) {
	h.t.Helper()
	form := url.Values{"org_name": {org}, "username": {username}, "email": {username + "@example.com"}}
	for k, v := range extra {
		form[k] = v
	}
	accountID = h.create("/admin/api/signup.json", form, "account")
	res := h.send("GET", path("/admin/api/accounts/%d/users.json", accountID), nil)
	users := listed(res.body, "users", "user")
	if len(users) != 1 {
		h.t.Fatalf("account %d has users %v, want its admin", accountID, users)
	}
	return accountID, users[0]
}

// check sends a request and compares the code and the exact body.
func (h *harness) check(name, method, p string, form url.Values, wantCode int, wantRaw string) result {
	h.t.Helper()
	res := h.send(method, p, form)
	if res.code != wantCode || (wantRaw != "" && res.raw != wantRaw) {
		h.t.Errorf("%s: %s %s: %d %s, want %d %s", name, method, p, res.code, res.raw, wantCode, wantRaw)
	}
	return res
}

func TestSignupStates(t *testing.T) {
	h := newHarness(t)
	// With a password and no approval required, the admin is activated, which approves the account.
	acc, admin := h.signup("ACME", "alice", url.Values{"password": {strongPassword}})
	res := h.check("read", "GET", path("/admin/api/accounts/%d.json", acc), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"org_name": "ACME", "state": "approved", "monthly_billing_enabled": true,
		"monthly_charging_enabled": true, "credit_card_stored": false, "users": nil},
		fields(res.body, "account", "org_name", "state", "monthly_billing_enabled", "monthly_charging_enabled", "credit_card_stored", "users")); diff != "" {
		t.Errorf("signed-up account (-want +got):\n%s", diff)
	}
	res = h.check("admin", "GET", path("/admin/api/accounts/%d/users/%d.json", acc, admin), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"username": "alice", "email": "alice@example.com", "role": "admin", "state": "active", "account_id": nil},
		fields(res.body, "user", "username", "email", "role", "state", "account_id")); diff != "" {
		t.Errorf("its admin (-want +got):\n%s", diff)
	}

	// Without a password, the admin stays pending and the account created until the admin is activated.
	acc2, admin2 := h.signup("Beta", "bob", nil)
	if got := fields(h.send("GET", path("/admin/api/accounts/%d.json", acc2), nil).body, "account", "state"); got["state"] != "created" {
		t.Errorf("account signed up without password: %v, want created", got)
	}
	h.check("activate", "PUT", path("/admin/api/accounts/%d/users/%d/activate.json", acc2, admin2), nil, 200, "")
	if got := fields(h.send("GET", path("/admin/api/accounts/%d.json", acc2), nil).body, "account", "state"); got["state"] != "approved" {
		t.Errorf("after the admin's activation: %v, want approved", got)
	}
	h.check("approve an approved account", "PUT", path("/admin/api/accounts/%d/approve.json", acc2), nil, 422,
		`{"errors":{"state":["cannot transition via \"approve\""]}}`)

	// When the account plan requires approval, the admin is not activated; activating makes the account
	// pending; approving it approves it.
	h.sim.SetAccountApprovalRequired("acme", true)
	acc3, admin3 := h.signup("Gamma", "carol", url.Values{"password": {strongPassword}})
	res = h.check("admin of an approval-required signup", "GET", path("/admin/api/accounts/%d/users/%d.json", acc3, admin3), nil, 200, "")
	if got := fields(res.body, "user", "state"); got["state"] != "pending" {
		t.Errorf("admin %v, want pending", got)
	}
	h.check("activate", "PUT", path("/admin/api/accounts/%d/users/%d/activate.json", acc3, admin3), nil, 200, "")
	if got := fields(h.send("GET", path("/admin/api/accounts/%d.json", acc3), nil).body, "account", "state"); got["state"] != "pending" {
		t.Errorf("after the admin's activation: %v, want pending", got)
	}
	res = h.check("approve", "PUT", path("/admin/api/accounts/%d/approve.json", acc3), nil, 200, "")
	if got := fields(res.body, "account", "state"); got["state"] != "approved" {
		t.Errorf("approved: %v", got)
	}
	h.check("reject", "PUT", path("/admin/api/accounts/%d/reject.json", acc3), nil, 200, "")
	h.check("make pending", "PUT", path("/admin/api/accounts/%d/make_pending.json", acc3), nil, 200, "")

	res = h.check("list approved", "GET", "/admin/api/accounts.json?state=approved", nil, 200, "")
	if diff := cmp.Diff([]int64{acc, acc2}, listed(res.body, "accounts", "account")); diff != "" {
		t.Errorf("approved accounts (-want +got):\n%s", diff)
	}
}

func TestSignupRefusals(t *testing.T) {
	h := newHarness(t)
	h.signup("ACME", "alice", nil)
	cases := []struct {
		name    string
		form    url.Values
		wantRaw string
	}{
		{"nothing", url.Values{}, `{"errors":{"org_name":["can't be blank","must contain at least one alphanumeric character"],` +
			`"username":["is too short (minimum is 3 characters)"]}}`},
		{"weak password", url.Values{"org_name": {"B"}, "username": {"bob"}, "password": {"short"}},
			`{"errors":{"password":["is too short (minimum is 15 characters)"]}}`},
		{"username taken", url.Values{"org_name": {"B"}, "username": {"alice"}}, `{"errors":{"username":["has already been taken"]}}`},
		{"bad username", url.Values{"org_name": {"B"}, "username": {"bob smith"}}, `{"errors":{"username":["use only letters, numbers, and .-_@+ please."]}}`},
		{"org name without letters", url.Values{"org_name": {"--"}, "username": {"bob"}},
			`{"errors":{"org_name":["must contain at least one alphanumeric character"]}}`},
	}
	for _, tc := range cases {
		h.check(tc.name, "POST", "/admin/api/signup.json", tc.form, 422, tc.wantRaw)
	}
	// A minimal signup needs no email.
	h.check("no email", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}}, 201, "")
	if n := h.sim.Count("acme", KindAccounts); n != 2 {
		t.Errorf("%d accounts, want 2", n)
	}
}

func TestAccountFindUpdateDelete(t *testing.T) {
	h := newHarness(t)
	acc, _ := h.signup("ACME", "alice", nil)
	other, _ := h.signup("Other", "oscar", nil)
	for _, q := range []string{"username=alice", "email=alice%40example.com"} {
		res := h.check("find "+q, "GET", "/admin/api/accounts/find.json?"+q, nil, 200, "")
		if got := fields(res.body, "account", "id"); got["id"] != float64(acc) {
			t.Errorf("find %s: %v, want %d", q, got, acc)
		}
	}
	h.check("find unknown", "GET", "/admin/api/accounts/find.json?username=nobody", nil, 404, `{"status":"Not found"}`)
	h.check("find without criterion", "GET", "/admin/api/accounts/find.json", nil, 404, `{"status":"Not found"}`)

	h.check("blank org name", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"org_name": {" "}}, 422, `{"errors":{"org_name":["can't be blank"]}}`)
	res := h.check("update", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"org_name": {"ACME Corp"}, "monthly_charging_enabled": {"false"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"org_name": "ACME Corp", "monthly_charging_enabled": false, "monthly_billing_enabled": true},
		fields(res.body, "account", "org_name", "monthly_charging_enabled", "monthly_billing_enabled")); diff != "" {
		t.Errorf("updated (-want +got):\n%s", diff)
	}

	// Deleting an account deletes its users and applications, not the others'.
	svc, _ := h.product("pets")
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	h.create(path("/admin/api/accounts/%d/applications.json", acc), url.Values{"plan_id": {itoa(plan)}}, "application")
	h.create(path("/admin/api/accounts/%d/applications.json", other), url.Values{"plan_id": {itoa(plan)}}, "application")
	h.create(path("/admin/api/accounts/%d/users.json", acc), url.Values{"username": {"bob"}, "email": {"bob@example.com"}}, "user")
	h.check("delete", "DELETE", path("/admin/api/accounts/%d.json", acc), nil, 200, "")
	h.check("deleted", "GET", path("/admin/api/accounts/%d.json", acc), nil, 404, `{"status":"Not found"}`)
	for kind, want := range map[string]int{KindAccounts: 1, KindUsers: 1, KindApplications: 1} {
		if n := h.sim.Count("acme", kind); n != want {
			t.Errorf("%d %s left, want %d", n, kind, want)
		}
	}
	if n := h.sim.Count("other", KindAccounts); n != 0 {
		t.Errorf("tenant other has %d accounts", n)
	}
}

func TestUsers(t *testing.T) {
	h := newHarness(t)
	acc, alice := h.signup("ACME", "alice", url.Values{"password": {strongPassword}})
	other, oscar := h.signup("Other", "oscar", nil)
	users := path("/admin/api/accounts/%d/users", acc)

	// Role and state are not writable: a created user is a pending member.
	res := h.check("create", "POST", users+".json", url.Values{"username": {"bob"}, "email": {"bob@example.com"}, "role": {"admin"},
		"state": {"active"}, "password": {strongPassword}}, 201, "")
	if diff := cmp.Diff(map[string]any{"username": "bob", "role": "member", "state": "pending"}, fields(res.body, "user", "username", "role", "state")); diff != "" {
		t.Errorf("created user (-want +got):\n%s", diff)
	}
	bob := int64(fields(res.body, "user", "id")["id"].(float64))
	h.check("create without email", "POST", users+".json", url.Values{"username": {"carol"}}, 422, `{"errors":{"email":["should look like an email address"]}}`)
	h.check("create with a taken email", "POST", users+".json", url.Values{"username": {"carol"}, "email": {"oscar@example.com"}}, 422,
		`{"errors":{"email":["has already been taken"]}}`)
	h.check("update", "PUT", path("%s/%d.json", users, bob), url.Values{"email": {"b@example.com"}, "role": {"admin"}}, 200, "")
	if pw, ok := h.sim.PasswordOf("acme", "alice"); !ok || pw != strongPassword {
		t.Errorf("alice's password after signup: %q, %v", pw, ok)
	}
	newPassword := strongPassword + "-rotated"
	h.check("new password", "PUT", path("%s/%d.json", users, alice), url.Values{"password": {newPassword}}, 200, "")
	h.check("blank password sets nothing", "PUT", path("%s/%d.json", users, alice), url.Values{"password": {""}}, 200, "")
	if pw, _ := h.sim.PasswordOf("acme", "alice"); pw != newPassword {
		t.Errorf("alice's password after an update: %q, want %q", pw, newPassword)
	}
	h.check("user of another account", "GET", path("%s/%d.json", users, oscar), nil, 404, `{"status":"Not found"}`)

	h.check("suspend a pending user", "PUT", path("%s/%d/suspend.json", users, bob), nil, 422, "")
	h.check("activate", "PUT", path("%s/%d/activate.json", users, bob), nil, 200, "")
	h.check("activate an active user", "PUT", path("%s/%d/activate.json", users, bob), nil, 200, "")
	h.check("suspend", "PUT", path("%s/%d/suspend.json", users, bob), nil, 200, "")
	res = h.check("activate a suspended user", "PUT", path("%s/%d/activate.json", users, bob), nil, 422, "")
	errObj, _ := res.body.(map[string]any)["error"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"from": "suspended", "event": "activate", "error": `State cannot transition via "activate"`},
		map[string]any{"from": errObj["from"], "event": errObj["event"], "error": errObj["error"]}); diff != "" || fields(errObj["object"], "user", "id")["id"] != float64(bob) {
		t.Errorf("InvalidTransition answer %s (-want +got):\n%s", res.raw, diff)
	}
	h.check("unsuspend", "PUT", path("%s/%d/unsuspend.json", users, bob), nil, 200, "")
	h.check("unsuspend an active user", "PUT", path("%s/%d/unsuspend.json", users, bob), nil, 422, `{"errors":{"state":["cannot transition via \"unsuspend\""]}}`)

	// The only admin can neither change role nor be deleted.
	h.check("make the only admin a member", "PUT", path("%s/%d/member.json", users, alice), nil, 403, `{"status":"Forbidden"}`)
	h.check("make the only admin an admin", "PUT", path("%s/%d/admin.json", users, alice), nil, 403, `{"status":"Forbidden"}`)
	h.check("delete the last admin", "DELETE", path("%s/%d.json", users, alice), nil, 403, `{"errors":{"base":["Can't delete last admin"]}}`)
	h.check("delete the only user", "DELETE", path("/admin/api/accounts/%d/users/%d.json", other, oscar), nil, 403, `{"errors":{"base":["Can't delete last admin"]}}`)
	h.check("make bob admin", "PUT", path("%s/%d/admin.json", users, bob), nil, 200, "")
	h.check("alice is no longer the only admin", "PUT", path("%s/%d/member.json", users, alice), nil, 200, "")
	h.check("delete alice, a member now", "DELETE", path("%s/%d.json", users, alice), nil, 200, "")
	h.check("delete bob, the last admin", "DELETE", path("%s/%d.json", users, bob), nil, 403, "")

	res = h.check("list admins", "GET", users+".json?role=admin", nil, 200, "")
	if diff := cmp.Diff([]int64{bob}, listed(res.body, "users", "user")); diff != "" {
		t.Errorf("admins (-want +got):\n%s", diff)
	}
}

// TestSignupContractsEachDefaultPlan: a signup makes an "API signup" application on the default
// application plan of each service that has one, live unless the plan requires approval.
func TestSignupContractsEachDefaultPlan(t *testing.T) {
	h := newHarness(t)
	svcA, basic := h.productWith("alpha", "1", nil)
	svcB, gated := h.productWith("beta", "2", url.Values{"approval_required": {"true"}})
	h.productWith("gamma", "1", nil) // no default plan: no application
	h.check("default of a", "PUT", path("/admin/api/services/%d/application_plans/%d/default.json", svcA, basic), nil, 200, "")
	res := h.check("default of b", "PUT", path("/admin/api/services/%d/application_plans/%d/default.json", svcB, gated), nil, 200, "")
	if got := fields(res.body, "application_plan", "default"); got["default"] != true {
		t.Errorf("plan made default answers %v", got)
	}
	acc, _ := h.signup("ACME", "alice", url.Values{"password": {strongPassword}})
	res = h.check("its applications", "GET", path("/admin/api/accounts/%d/applications.json", acc), nil, 200, "")
	var got []map[string]any
	for _, item := range res.body.(map[string]any)["applications"].([]any) {
		a := item.(map[string]any)["application"].(map[string]any)
		got = append(got, map[string]any{"service_id": a["service_id"], "plan": a["plan_id"], "name": a["name"],
			"description": a["description"], "state": a["state"]})
	}
	want := []map[string]any{
		{"service_id": float64(svcA), "plan": float64(basic), "name": "API signup", "description": "API signup", "state": "live"},
		{"service_id": float64(svcB), "plan": float64(gated), "name": "API signup", "description": "API signup", "state": "pending"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applications made by the signup (-want +got):\n%s", diff)
	}
}

// TestMultipleUsersSwitch: denied, listing an account's users is 403, every other user call works, and
// the account's XML still lists them.
func TestMultipleUsersSwitch(t *testing.T) {
	h := newHarness(t)
	acc, admin := h.signup("ACME", "alice", url.Values{"password": {strongPassword}})
	h.sim.SetMultipleUsers("acme", false)
	h.check("list", "GET", path("/admin/api/accounts/%d/users.json", acc), nil, 403, `{"status":"Forbidden"}`)
	bob := h.create(path("/admin/api/accounts/%d/users.json", acc), url.Values{"username": {"bob"}, "email": {"bob@example.com"}}, "user")
	h.check("read", "GET", path("/admin/api/accounts/%d/users/%d.json", acc, bob), nil, 200, "")
	res := h.check("account as XML", "GET", path("/admin/api/accounts/%d.xml", acc), nil, 200, "")
	if ct := res.hdr.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	for _, want := range []string{path("<user><id>%d</id>", admin), "<role>admin</role><username>alice</username><email>alice@example.com</email>",
		path("<user><id>%d</id>", bob), "<state>pending</state><role>member</role><username>bob</username>", "<org_name>ACME</org_name>"} {
		if !strings.Contains(res.raw, want) {
			t.Errorf("account XML %s lacks %s", res.raw, want)
		}
	}
	h.sim.SetMultipleUsers("acme", true)
	h.check("list, allowed again", "GET", path("/admin/api/accounts/%d/users.json", acc), nil, 200, "")
}
