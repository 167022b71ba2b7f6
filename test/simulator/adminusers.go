package simulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A tenant's own users, those of its admin portal, as porta's admin API serves them:
// Admin::Api::UsersController (app/controllers/admin/api/users_controller.rb, UC below) and
// Admin::Api::MemberPermissionsController (app/controllers/admin/api/member_permissions_controller.rb,
// MPC below), with the abilities of config/abilities/{admin,provider_any,provider_admin,
// provider_member,switches}.rb, User (app/models/user.rb, user/states.rb, user/roles.rb,
// user/permissions.rb) and AdminSection (app/models/admin_section.rb).
//
// Every access token belongs to a user of its tenant (AccessToken#owner): the current user of a request
// is its token's owner (ApiAuthentication::ByAccessToken#current_user,
// app/lib/api_authentication/by_access_token.rb:7-8), and what porta's abilities let that user do is
// what the request may do.
//
// A tenant of Options.Tenants or AddTenant keeps its users here (tenant.adminUsers); a tenant master made
// has them in master's books, as porta has them: they are the users of its account among master's
// buyers' users (master.go), the same objects.

// ownUserBase is below the ids of the users of the tenants AddTenant makes (ownAccountBase's twin):
// porta's users are one table, so they are numbered across tenants, far above the other ids.
const ownUserBase = 2000000

// firstAdminUsername is the username of a tenant's first admin, as AddTenant makes it.
const firstAdminUsername = "admin"

// staff returns the book holding the tenant's own users and the account id they carry: master's users
// for a tenant master made (its account is one of master's), else the tenant's own adminUsers.
func (t *tenant) staff() (map[int64]*user, int64) {
	if a := t.account; a != nil && a.owner != nil {
		return a.owner.users, a.id
	}
	return t.adminUsers, t.ownAccountID
}

// staffIDs are the ids of the tenant's users kept by keep (all when nil), the impersonation admin left
// out (User.but_impersonation_admin, user.rb:122), in id order.
func (t *tenant) staffIDs(keep func(*user) bool) []int64 {
	book, accountID := t.staff()
	return sortedIDs(book, func(u *user) bool {
		return u.accountID == accountID && u.username != impersonationAdminUsername && (keep == nil || keep(u))
	})
}

// staffUser is the tenant's user of that id, nil if none; the impersonation admin only when withHidden
// (UC#user finds among current_account.users.but_impersonation_admin, UC:117-119; MPC#user among
// current_account.users, MPC:38-40).
func (t *tenant) staffUser(id int64, withHidden bool) *user {
	book, accountID := t.staff()
	u := book[id]
	if u == nil || u.accountID != accountID || (!withHidden && u.username == impersonationAdminUsername) {
		return nil
	}
	return u
}

// firstAdminID is Account#first_admin's id (account.rb:189-195): the first admin, the impersonation
// admin left out; 0 if none.
func (t *tenant) firstAdminID() int64 {
	if ids := t.staffIDs(func(u *user) bool { return u.role == roleAdmin }); len(ids) > 0 {
		return ids[0]
	}
	return 0
}

// newStaffID is a new user's id: master's next id for a tenant master made (its users are in master's
// books), else the next of the users of the tenants AddTenant made. s.mu held.
func (s *Simulator) newStaffID(t *tenant) int64 {
	if a := t.account; a != nil && a.owner != nil {
		return a.owner.id()
	}
	s.ownUsers++
	return ownUserBase + s.ownUsers
}

// addFirstAdmin gives a tenant AddTenant makes its first admin: "admin", active, with an email at the
// tenant's domain (the one its provider account shows as support_email, provider.go). s.mu held.
func (s *Simulator) addFirstAdmin(t *tenant) {
	u := &user{id: s.newStaffID(t), accountID: t.ownAccountID, username: firstAdminUsername,
		email: "admin@" + t.name + "." + s.superdomain, role: roleAdmin, state: userActive, signupType: signupByProvider, stamps: newStamps()}
	t.adminUsers[u.id] = u
}

// FirstAdminID is the id of the tenant's first admin (the user AddTenant made, or the admin a tenant
// signed up through master was made with, while they stay admin); 0 for an unknown tenant.
func (s *Simulator) FirstAdminID(tenantName string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.names[tenantName]; t != nil {
		return t.firstAdminID()
	}
	return 0
}

// AddUserToken makes token an access token of the tenant's user userID (with every scope unless
// SetTokenScopes restricts it): requests with it act as that user, with that user's abilities. It
// reports whether the tenant and the user exist.
func (s *Simulator) AddUserToken(tenantName string, userID int64, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.names[tenantName]
	if t == nil || t.staffUser(userID, true) == nil {
		return false
	}
	s.tenants[token] = t
	s.owners[token] = userID
	return true
}

// currentUser is the request's token's owner, nil when the token has none (a token of master's signup
// made before owners were known cannot happen; nil is treated as porta treats a provider key: no
// abilities checked, UC#authorize!, UC:101-103).
func (r *request) currentUser() *user {
	return r.t.staffUser(r.sim.owners[r.token], true)
}

// ownerScopesAllow is the owner's share of verify_access_token_scopes (by_access_token.rb:96-98,
// 123-130): the scopes a token may use are the endpoint's among those its owner is allowed,
// User#allowed_access_token_scopes (user.rb:183-185; AccessToken::Scope#permission_name,
// app/models/access_token.rb:35-42): an admin has them all; a member account_management with the
// "partners" permission, policy_registry with "policy_registry", cms with "portal". None left: 403
// {"error":"Your access token does not have the correct permissions"}. s.mu held.
func (s *Simulator) ownerScopesAllow(t *tenant, token, template string) bool {
	owner := t.staffUser(s.owners[token], true)
	if owner == nil || owner.role == roleAdmin {
		return true
	}
	have := map[string]string{scopeAccountManagement: "partners", scopePolicyRegistry: "policy_registry", scopeCMS: "portal"}
	tokenScopes, restricted := s.scopes[token]
	for _, scope := range scopesNeeded(template) {
		if (!restricted || slices.Contains(tokenScopes, scope)) && t.hasPermission(owner, have[scope]) {
			return true
		}
	}
	return false
}

// Abilities a current user has on a user of its tenant.
const (
	canShow           = "show"
	canUpdate         = "update" // update and activate (UC:95-101 authorizes :update)
	canSuspend        = "suspend"
	canUnsuspend      = "unsuspend"
	canDestroy        = "destroy"
	canUpdateRole     = "update_role"
	canUpdatePerms    = "update_permissions"
	canCreate         = "create"
	canManageUserList = "manage_multiple_users"
)

// can is CanCan's answer for the current user cu on the tenant's user u (nil for create and the list):
//   - an admin can :manage every user of its account (admin.rb:8-10) but cannot destroy nor change the
//     role of itself (admin.rb:12-14, provider_admin.rb:43-44): suspending itself is allowed; it can update
//     the permissions of a member of its account, never of an admin (provider_admin.rb:29-31,
//     provider_any.rb:16-17);
//   - a member can :manage itself (provider_any.rb:12) but not destroy nor change its role
//     (provider_any.rb:19-20), nor anyone's permissions (provider_member.rb:76-77); it cannot create a
//     user (no ability grants it);
//   - the list needs :manage, :multiple_users: granted when the user can :admin the switch and the
//     switch is allowed (switches.rb:20-27): every admin (provider_admin.rb:14-16), a member with the
//     "partners" permission (provider_member.rb:20-23).
//
// A token with no owner is not checked (UC:101-103: authorize! is logged_in? without a current_user).
func (t *tenant) can(cu *user, action string, u *user) bool {
	if cu == nil {
		return true
	}
	admin, self := cu.role == roleAdmin, u != nil && u.id == cu.id
	switch action {
	case canManageUserList:
		return !t.multipleUsersDenied && (admin || t.hasPermission(cu, "partners"))
	case canCreate:
		return admin
	case canDestroy, canUpdateRole:
		return admin && !self
	case canUpdatePerms:
		return admin && u.role != roleAdmin
	default:
		return admin || self
	}
}

// memberPermissions are a member's MemberPermission rows (user/permissions.rb): its admin sections, and
// services: nil while it has no "services" row (every service), else the services allowed.
type memberPermissions struct {
	sections []string
	services *[]int64
}

// adminSections are AdminSection.permissions (admin_section.rb:4,8-14) on a self-managed 3scale,
// where ThreeScale.master_on_premises? holds (onpremises: true, config/examples/settings.yml:78, with a
// master): PERMISSIONS less finance. In porta's order; the API answers them sorted.
var adminSections = []string{"portal", "settings", "partners", "monitoring", "plans", "policy_registry"}

// hasPermission is User#has_permission? (user/permissions.rb:18-25): an admin has every section, a
// member those it was given.
func (t *tenant) hasPermission(u *user, section string) bool {
	if u.role == roleAdmin {
		return true
	}
	p := t.staffPerms[u.id]
	return p != nil && slices.Contains(p.sections, section)
}

// permissionsJSON is MemberPermissionsRepresenter::JSON (app/representers/member_permissions_representer.rb):
// user_id, role, allowed_sections sorted, allowed_service_ids rendered even when null (render_nil). For
// an admin: every section and null services (member_permission_ids and member_permission_service_ids,
// user/permissions.rb:48-50,69-75); for a member: its sections, and null (every service) or the ids it
// was given that are still the tenant's services, in the order given. The user link is left out.
func (t *tenant) permissionsJSON(u *user) map[string]any {
	sections := []string{}
	var services any
	if u.role == roleAdmin {
		sections = append(sections, adminSections...)
	} else if p := t.staffPerms[u.id]; p != nil {
		sections = append(sections, p.sections...)
		if p.services != nil {
			ids := []int64{}
			for _, id := range *p.services {
				if t.services[id] != nil {
					ids = append(ids, id)
				}
			}
			services = ids
		}
	}
	sort.Strings(sections)
	return map[string]any{"user_id": u.id, "role": u.role, "allowed_sections": sections, "allowed_service_ids": services}
}

// permissionValues reads one permissions parameter as Rails would have it: the array form name[] (and
// wrapper[name][]), the scalar name (and wrapper[name]); a JSON array arrives as its JSON text (readForm),
// read as an array. sent reports whether any came; isArray whether it is an array.
func permissionValues(r *request, wrapper, name string) (values []string, isArray, sent bool) {
	for _, k := range []string{name + "[]", wrapper + "[" + name + "][]"} {
		if vs, found := r.form[k]; found {
			return vs, true, true
		}
	}
	for _, k := range []string{name, wrapper + "[" + name + "]"} {
		vs, found := r.form[k]
		if !found {
			continue
		}
		v := ""
		if len(vs) > 0 {
			v = vs[0]
		}
		var arr []any
		if strings.HasPrefix(strings.TrimSpace(v), "[") && json.Unmarshal([]byte(v), &arr) == nil {
			out := make([]string, 0, len(arr))
			for _, x := range arr {
				out = append(out, jsonParam(x))
			}
			return out, true, true
		}
		return []string{v}, false, true
	}
	return nil, false, false
}

// writePermissions applies the sections and services parameters to a member's permissions (names: the
// parameters' names, allowed_sections/allowed_service_ids or member_permission_ids/
// member_permission_service_ids, aliases, user/permissions.rb:11-14):
//   - sections (member_permission_ids=, :52-54): the blank values dropped, those not in adminSections
//     dropped silently; the services row kept (admin_sections=, :31-46);
//   - services (member_permission_service_ids=, :56-66): an array keeps its integer values (others
//     dropped, Integer(_, exception: false)) that are ids of the tenant's services (unknown ids and other
//     tenants' dropped silently): [] allows none; a blank scalar (or a JSON null) removes the row: every
//     service; any other scalar changes nothing.
func (t *tenant) writePermissions(r *request, u *user, wrapper, sectionsName, servicesName string) {
	p := t.staffPerms[u.id]
	if p == nil {
		p = &memberPermissions{}
	}
	next := memberPermissions{sections: p.sections, services: p.services}
	if vs, _, sent := permissionValues(r, wrapper, sectionsName); sent {
		next.sections = []string{}
		for _, v := range vs {
			if slices.Contains(adminSections, v) && !slices.Contains(next.sections, v) {
				next.sections = append(next.sections, v)
			}
		}
	}
	if vs, isArray, sent := permissionValues(r, wrapper, servicesName); sent {
		switch {
		case isArray:
			ids := []int64{}
			for _, v := range vs {
				id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err == nil && t.services[id] != nil && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			next.services = &ids
		case strings.TrimSpace(vs[0]) == "":
			next.services = nil
		}
	}
	t.staffPerms[u.id] = &next
}

func adminUserRoutes() []route {
	return []route{
		// UC#index (UC:7-11): :manage, :multiple_users, then the users filtered by state and role
		// (params.slice, exact values), the impersonation admin left out; not paginated.
		handle("GET", "/admin/api/users.json", func(r *request) answer {
			if !r.t.can(r.currentUser(), canManageUserList, nil) {
				return forbidden()
			}
			keep := func(u *user) bool {
				return (!has(r, "state") || u.state == r.form.Get("state")) && (!has(r, "role") || u.role == r.form.Get("role"))
			}
			book, _ := r.t.staff()
			return listOf("users", "user", r.t.staffIDs(keep), jsonOf(book), r.form, unpaged)
		}),
		handle("POST", "/admin/api/users.json", createStaffUser),
		handle("GET", "/admin/api/users/{id}.json", staffAction(canShow, func(r *request, u *user) answer { return ok("user", u.json()) })),
		handle("PUT", "/admin/api/users/{id}.json", staffAction(canUpdate, updateStaffUser)),
		handle("DELETE", "/admin/api/users/{id}.json", staffAction(canDestroy, destroyStaffUser)),
		// UC#member and #admin (UC:53-69): make_member/make_admin is update_attribute (roles.rb:19-24),
		// no validation: 200 with the user.
		handle("PUT", "/admin/api/users/{id}/member.json", staffAction(canUpdateRole, staffRole(roleMember))),
		handle("PUT", "/admin/api/users/{id}/admin.json", staffAction(canUpdateRole, staffRole(roleAdmin))),
		// UC#suspend (UC:73-78): suspend! raises on a pending user (active or suspended -> suspended,
		// states.rb:35-38): 422 with the InvalidTransition representer.
		handle("PUT", "/admin/api/users/{id}/suspend.json", staffAction(canSuspend, staffTransition(userSuspended, func(u *user) answer { return invalidTransitionRaised(u, "suspend") },
			userActive, userSuspended))),
		// UC#unsuspend (UC:82-87): unsuspend without bang, suspended -> active only (states.rb:40-42);
		// otherwise the error on state, 422 {"errors":{"state":[...]}}.
		handle("PUT", "/admin/api/users/{id}/unsuspend.json", staffAction(canUnsuspend, staffTransition(userActive, func(*user) answer { return invalidTransition("unsuspend") }, userSuspended))),
		// UC#activate (UC:91-96): authorize! :update, then activate without bang, pending -> active only
		// (states.rb:31-33): an active or suspended user is 422 {"errors":{"state":[...]}}, unlike the
		// developers' activate, which answers an active user as is.
		handle("PUT", "/admin/api/users/{id}/activate.json", staffAction(canUpdate, staffTransition(userActive, func(*user) answer { return invalidTransition("activate") }, userPending))),
		// MPC#show (MPC:14-18): authorize! :show; the user found among all the account's users, the
		// impersonation admin included (MPC:38-40).
		handle("GET", "/admin/api/users/{id}/permissions.json", func(r *request) answer {
			u := r.t.staffUser(r.params["id"], true)
			if u == nil {
				return notFound()
			}
			if !r.t.can(r.currentUser(), canShow, u) {
				return forbidden()
			}
			return ok("permissions", r.t.permissionsJSON(u))
		}),
		handle("PUT", "/admin/api/users/{id}/permissions.json", updatePermissions),
	}
}

// staffAction finds the path's user among the tenant's (but the impersonation admin: 404
// {"status":"Not found"}), then checks the current user's ability (403 {"status":"Forbidden"},
// CanCan::AccessDenied in Admin::Api::BaseController, ErrorHandling, see forbidden) before f.
// staffTransition moves a user in one of the states from to the state to, answering it, and answers
// refuse for a user in any other state.
func staffTransition(to string, refuse func(*user) answer, from ...string) func(*request, *user) answer {
	return func(_ *request, u *user) answer {
		if !slices.Contains(from, u.state) {
			return refuse(u)
		}
		u.state = to
		u.touch()
		return ok("user", u.json())
	}
}

func staffAction(action string, f func(*request, *user) answer) handlerFunc {
	return func(r *request) answer {
		u := r.t.staffUser(r.params["id"], false)
		if u == nil {
			return notFound()
		}
		if !r.t.can(r.currentUser(), action, u) {
			return forbidden()
		}
		return f(r, u)
	}
}

// staffValidator is a tenant whose users are the tenant's own users, to validate one with
// tenant.validateUser: uniqueness among the users of the same provider account (User#uniqueness_scope,
// user.rb:366-375: account.users for a provider).
func (t *tenant) staffValidator() *tenant {
	book, accountID := t.staff()
	return &tenant{users: book, accounts: map[int64]*account{accountID: {id: accountID, provider: &providerInfo{}}}}
}

// validateStaff adds User's validations (validateUser) and validates_confirmation_of :password,
// allow_blank (by_password.rb:17): a confirmation sent with a password must match it.
func (t *tenant) validateStaff(r *request, u *user) answer {
	errs := fieldErrors{}
	t.staffValidator().validateUser(u, r.form.Get("password"), errs)
	if p := r.form.Get("password"); p != "" && has(r, "password_confirmation") && r.form.Get("password_confirmation") != p {
		errs.add("password_confirmation", "doesn't match Password")
	}
	return errs.answer()
}

// createStaffUser is UC#create (UC:15-24):
//   - before_action can_create (UC:4,121-123): current_account.can_create_user? is the multiple_users
//     switch allowed (and the constraints' max_users, unlimited here, logic/provider_settings.rb:13-16):
//     denied (SetMultipleUsers), head :forbidden, 403 with no body;
//   - authorize! :create: an admin only (403 {"status":"Forbidden"} for a member);
//   - user_params (UC:127-135): the defined fields username and email, password and
//     password_confirmation, and, for an admin, member_permission_ids[] and member_permission_service_ids;
//     any other parameter (role, state...) is dropped: the user is a pending member (set_role,
//     roles.rb:62-64; the state machine's initial pending), signed up :created_by_provider, so a password
//     is not required (validate_password?, by_password.rb:40-43: only a new user signing up by itself),
//     but the email is, in format (user.rb:91-92, not a minimal signup). Validation errors: 422.
func createStaffUser(r *request) answer {
	if r.t.multipleUsersDenied {
		return answer{http.StatusForbidden, nil}
	}
	cu := r.currentUser()
	if !r.t.can(cu, canCreate, nil) {
		return forbidden()
	}
	_, accountID := r.t.staff()
	u := &user{accountID: accountID, username: strings.TrimSpace(r.form.Get("username")), email: r.form.Get("email"), role: roleMember,
		state: userPending, signupType: signupByProvider, password: r.form.Get("password"), stamps: newStamps()}
	if a := r.t.validateStaff(r, u); a.code != 0 {
		return a
	}
	u.id = r.sim.newStaffID(r.t)
	book, _ := r.t.staff()
	book[u.id] = u
	if cu == nil || cu.role == roleAdmin {
		r.t.writePermissions(r, u, "user", "member_permission_ids", "member_permission_service_ids")
	}
	return created("user", u.json())
}

// updateStaffUser is UC#update (UC:35-41): username, email, password (a blank one sets nothing) and, for
// an admin's token, the member_permission_* attributes; role and state are not writable. 422 with the
// errors, nothing changed.
func updateStaffUser(r *request, u *user) answer {
	next := *u
	if has(r, "username") {
		next.username = strings.TrimSpace(r.form.Get("username"))
	}
	if has(r, "email") {
		next.email = r.form.Get("email")
	}
	if a := r.t.validateStaff(r, &next); a.code != 0 {
		return a
	}
	if p := r.form.Get("password"); p != "" {
		next.password = p
	}
	if cu := r.currentUser(); (cu == nil || cu.role == roleAdmin) && u.role != roleAdmin {
		r.t.writePermissions(r, u, "user", "member_permission_ids", "member_permission_service_ids")
	}
	next.touch()
	*u = next
	return ok("user", u.json())
}

// destroyStaffUser is UC#destroy (UC:45-50): User's before_destroy refuses the account's last admin
// (avoid_destruction, destroyable?: account.admins == [self], the impersonation admin left out,
// user.rb:45,53-56,349-352; Account#admins, account.rb:189-191), the base error last_admin rendered 403
// as every refused DELETE (refused). Through a token it cannot happen: only an admin may destroy a user,
// never itself, so another admin is left. The user's access tokens go with it (has_many :access_tokens,
// dependent: :destroy, user.rb:83), and its permissions.
func destroyStaffUser(r *request, u *user) answer {
	if u.role == roleAdmin && len(r.t.staffIDs(func(o *user) bool { return o.role == roleAdmin })) == 1 {
		return refused(msgLastAdmin)
	}
	book, _ := r.t.staff()
	delete(book, u.id)
	delete(r.t.staffPerms, u.id)
	for token, owner := range r.sim.owners {
		if owner == u.id && r.sim.tenants[token] == r.t {
			delete(r.sim.owners, token)
			delete(r.sim.tenants, token)
			delete(r.sim.scopes, token)
		}
	}
	return deleted()
}

// staffRole sets the user's role (make_admin/make_member, update_attribute).
func staffRole(role string) func(*request, *user) answer {
	return func(r *request, u *user) answer {
		u.role = role
		u.touch()
		return ok("user", u.json())
	}
}

// updatePermissions is MPC#update (MPC:20-30):
//   - authorize! :update_permissions: an admin's token on a member of its account; an admin's
//     permissions cannot be changed, a member's token changes none: 403 {"status":"Forbidden"};
//   - params.require(:permissions) with wrap_parameters :permissions, include: allowed_sections and
//     allowed_service_ids (MPC:8): neither sent, top-level nor under permissions[...], 400 text;
//   - permit(:allowed_service_ids, allowed_service_ids: [], allowed_sections: []) (MPC:42-48): how a
//     blank scalar and an array differ, see writePermissions (porta's test sends allowed_service_ids=""
//     for every service and allowed_service_ids[]="" or "[]" for none,
//     test/integration/admin/api/member_permissions_controller_test.rb:74-115);
//   - the user's update cannot fail on these: 200 with the permissions.
func updatePermissions(r *request) answer {
	u := r.t.staffUser(r.params["id"], true)
	if u == nil {
		return notFound()
	}
	if !r.t.can(r.currentUser(), canUpdatePerms, u) {
		return forbidden()
	}
	if !r.top["permissions"] && !r.top["allowed_sections"] && !r.top["allowed_service_ids"] {
		return parameterMissing("permissions")
	}
	r.t.writePermissions(r, u, "permissions", "allowed_sections", "allowed_service_ids")
	u.touch()
	return ok("permissions", r.t.permissionsJSON(u))
}
