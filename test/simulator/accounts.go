package simulator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Developer (buyer) accounts and their users, as porta's admin API serves them:
// app/controllers/admin/api/{signups,accounts,buyers_users}_controller.rb. Paths to porta's files below
// are relative to its repository; line numbers are of the revision the simulator was checked against.

// Account states (Account::States, app/models/account/states.rb:3,13: the machine starts in "created").
const (
	accountCreated   = "created"
	accountPending   = "pending"
	accountApproved  = "approved"
	accountRejected  = "rejected"
	accountSuspended = "suspended"
)

// User states and roles (User::States, app/models/user/states.rb:10-14; User::Roles, roles.rb:5).
const (
	userPending   = "pending"
	userActive    = "active"
	userSuspended = "suspended"
	roleAdmin     = "admin"
	roleMember    = "member"
)

type account struct {
	id                                            int64
	orgName, state                                string
	monthlyBillingEnabled, monthlyChargingEnabled bool
	// provider: the account is a tenant, in master's books (master.go); nil for a developer account.
	provider *providerInfo
	// planID is the account plan a developer account bought (its AccountContract); not in its JSON
	// (AccountRepresenter has no plan), read with GET /admin/api/accounts/{id}/plan.json.
	planID int64
	// owner is the tenant whose fields definitions the account's fields follow (its provider,
	// fields_definitions_source_root, app/lib/fields/fields.rb:185-204); fields its values of extra and
	// optional built-in fields (fields.go).
	owner  *tenant
	fields fieldValues
	stamps
}

// json is AccountRepresenter (app/representers/account_representer.rb): id, timestamps,
// credit_card_stored, the billing flags (Settings, whose columns default to true, db/schema.rb:1249,1276,
// created lazily for every account, app/models/account.rb:226-227), state, annotations and the defined
// fields, org_name among them (FieldsRepresenter; Account's default fields, app/models/account.rb:20);
// for a tenant (an account of master's), its domains and provider fields too (providerJSON); the other
// defined fields with a value, extra fields among them, as top-level keys (renderFields). Links are left
// out.
func (a *account) json() map[string]any {
	out := map[string]any{"id": a.id, "org_name": a.orgName, "state": a.state, "monthly_billing_enabled": a.monthlyBillingEnabled,
		"monthly_charging_enabled": a.monthlyChargingEnabled, "credit_card_stored": false, "annotations": map[string]any{},
		"created_at": a.created, "updated_at": a.updated}
	if a.provider != nil {
		a.providerJSON(out)
	}
	if a.owner != nil {
		a.owner.renderFields(targetAccount, &a.fields, out)
	}
	return out
}

// xml is Account#to_xml (app/models/account.rb:445-491) for a buyer: id, timestamps, state, the
// defined fields and <extra_fields> (fieldsXML), the billing flags, credit_card_stored and its users
// (User#to_xml, app/models/user.rb:289-314: id, timestamps, account_id, state, role, the defined fields
// and <extra_fields>). The bought plans and annotations are left out.
func (a *account) xml(t *tenant) xmlDocument {
	var b strings.Builder
	field := func(name, value string) {
		b.WriteString("<" + name + ">")
		_ = xml.EscapeText(&b, []byte(value))
		b.WriteString("</" + name + ">")
	}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><account>`)
	field("id", strconv.FormatInt(a.id, 10))
	field("created_at", a.created)
	field("updated_at", a.updated)
	field("state", a.state)
	raw := func(s string) { b.WriteString(s) }
	t.fieldsXML(targetAccount, &a.fields, map[string]string{"org_name": a.orgName}, field, raw)
	field("monthly_billing_enabled", strconv.FormatBool(a.monthlyBillingEnabled))
	field("monthly_charging_enabled", strconv.FormatBool(a.monthlyChargingEnabled))
	field("credit_card_stored", "false")
	b.WriteString("<users>")
	for _, id := range sortedIDs(t.users, func(u *user) bool { return u.accountID == a.id }) {
		u := t.users[id]
		b.WriteString("<user>")
		field("id", strconv.FormatInt(u.id, 10))
		field("created_at", u.created)
		field("updated_at", u.updated)
		field("account_id", strconv.FormatInt(u.accountID, 10))
		field("state", u.state)
		field("role", u.role)
		t.fieldsXML(targetUser, &u.fields, map[string]string{"username": u.username, "email": u.email}, field, raw)
		b.WriteString("</user>")
	}
	b.WriteString("</users></account>")
	return xmlDocument(b.String())
}

// signupMinimal and signupByProvider are User#signup_type of a user made by the signup call
// (signups_controller.rb:35, :minimal) and by POST .../users (buyers_users_controller.rb:19).
const (
	signupMinimal    = "minimal"
	signupByProvider = "created_by_provider"
)

type user struct {
	id, accountID                int64
	username, email, role, state string
	signupType                   string
	password                     string // never answered (porta keeps only a digest); PasswordOf reads it
	// owner and fields are as an account's: the tenant whose fields definitions apply, and the values
	// of the user's extra and optional built-in fields (fields.go).
	owner  *tenant
	fields fieldValues
	stamps
}

// json is UserRepresenter (app/representers/user_representer.rb): id, state, role, timestamps and the
// defined fields username and email (User's default fields, app/models/user.rb:11), a nil email left out
// as representable leaves out nil properties, and the other defined fields with a value, extra fields
// among them (renderFields). It has no account_id. Links are left out.
func (u *user) json() map[string]any {
	out := map[string]any{"id": u.id, "username": u.username, "role": u.role, "state": u.state, "created_at": u.created, "updated_at": u.updated}
	if u.email != "" {
		out["email"] = u.email
	}
	if u.owner != nil {
		u.owner.renderFields(targetUser, &u.fields, out)
	}
	return out
}

// randomHex is a random key as porta generates them (SecureRandom.hex(bytes)).
func randomHex(bytes int) string {
	b := make([]byte, bytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// invalidTransition is porta's answer to a state event (without bang) the object's state does not allow:
// state_machines adds :invalid_transition on state (activerecord.errors.messages.invalid_transition,
// config/locales/en.yml:1959) and the responder renders the errors with 422 (responder.rb:67-75).
func invalidTransition(event string) answer {
	return unprocessable("state", `cannot transition via "`+event+`"`)
}

// forbidden is porta's answer to a CanCan::AccessDenied: 403 {"status":"Forbidden"}
// (ErrorHandling#handle_error, app/controllers/concerns/error_handling.rb:26-28,48,59).
func forbidden() answer {
	return answer{http.StatusForbidden, map[string]string{"status": "Forbidden"}}
}

// SetAccountApprovalRequired makes the tenant's default account plan require approval (or not, the
// default): accounts signed up then stay "created" with a pending admin, and become "pending" (not
// "approved") when a user is activated. It reports whether the tenant exists.
func (s *Simulator) SetAccountApprovalRequired(tenantName string, required bool) bool {
	return s.setOn(tenantName, func(t *tenant) { t.setAccountApprovalRequired(required) })
}

// setOn changes the tenant named tenantName with set, under the simulator's lock, and reports whether
// the tenant exists.
func (s *Simulator) setOn(tenantName string, set func(*tenant)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if found {
		set(t)
	}
	return found
}

// SetMandatoryAppKey sets a service's mandatory_app_key, as the admin portal does (the Account
// Management API has no field for it): off, an app id/key application is created without a first key.
// It reports whether the tenant and the service exist.
func (s *Simulator) SetMandatoryAppKey(tenantName string, serviceID int64, mandatory bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if !found || t.services[serviceID] == nil {
		return false
	}
	t.services[serviceID].optionalAppKey = !mandatory
	return true
}

// SetMultipleUsers allows or denies the tenant's multiple_users switch (allowed by default, as on a
// self-managed 3scale, where every switch is allowed). Denied, listing an account's users is 403
// (`authorize! :manage, :multiple_users`, buyers_users_controller.rb:7; the ability is granted only for
// an allowed switch, config/abilities/switches.rb:20-27); every other user call still works. It reports
// whether the tenant exists.
func (s *Simulator) SetMultipleUsers(tenantName string, allowed bool) bool {
	return s.setOn(tenantName, func(t *tenant) { t.multipleUsersDenied = !allowed })
}

func accountRoutes() []route {
	return []route{
		handle("POST", "/admin/api/signup.json", signup),
		// AccountsController#index (accounts_controller.rb:8-21): filtered by state, paged;
		// AccountsRepresenter is a wraps_collection (app/representers/accounts_representer.rb:4).
		handle("GET", "/admin/api/accounts.json", func(r *request) answer {
			keep := func(a *account) bool { return r.form.Get("state") == "" || a.state == r.form.Get("state") }
			return listOf("accounts", "account", sortedIDs(r.t.accounts, keep), jsonOf(r.t.accounts), r.form, pagedWithMetadata)
		}),
		handle("GET", "/admin/api/accounts/find.json", findAccount),
		handle("GET", "/admin/api/accounts/{id}.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer { return ok("account", a.json()) })
		}),
		// The XML of an account lists its users (Account#to_xml, app/models/account.rb:445-491): the one way
		// to read them without the multiple_users switch.
		handle("GET", "/admin/api/accounts/{id}.xml", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer { return answer{http.StatusOK, a.xml(r.t)} })
		}),
		handle("PUT", "/admin/api/accounts/{id}.json", updateAccount),
		// approve, reject and make_pending fire the event without bang (accounts_controller.rb:75-104):
		// a transition the state does not allow is 422 (Account::States events, states.rb:63-79).
		handle("PUT", "/admin/api/accounts/{id}/approve.json", accountEvent("approve", accountApproved, accountCreated, accountPending, accountRejected)),
		handle("PUT", "/admin/api/accounts/{id}/reject.json", accountEvent("reject", accountRejected, accountCreated, accountPending, accountApproved)),
		handle("PUT", "/admin/api/accounts/{id}/make_pending.json", accountEvent("make_pending", accountPending, accountCreated, accountApproved, accountRejected)),
		// AccountsController#destroy destroys the account at once (accounts_controller.rb:54-60); its users
		// and its contracts (applications among them) go with it (after_destroy :destroy_all_users and
		// :destroy_all_contracts, app/models/account.rb:97-100; has_many :users, dependent: :destroy).
		// A tenant master deletes so goes at once, with its objects and tokens (dropTenant).
		handle("DELETE", "/admin/api/accounts/{id}.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer {
				if a.provider != nil {
					r.sim.dropTenant(a)
					return deleted()
				}
				r.t.deleteAccount(a.id)
				return deleted()
			})
		}),

		// BuyersUsersController#index (buyers_users_controller.rb:6-10,112-117): filtered by state and
		// role, not paged, in id order.
		handle("GET", "/admin/api/accounts/{account_id}/users.json", func(r *request) answer {
			if r.t.multipleUsersDenied {
				return forbidden()
			}
			return withAccount(r, "account_id", func(a *account) answer {
				keep := func(u *user) bool {
					return u.accountID == a.id && (!has(r, "state") || u.state == r.form.Get("state")) && (!has(r, "role") || u.role == r.form.Get("role"))
				}
				return listOf("users", "user", sortedIDs(r.t.users, keep), jsonOf(r.t.users), r.form, unpaged)
			})
		}),
		handle("POST", "/admin/api/accounts/{account_id}/users.json", createUser),
		handle("GET", "/admin/api/accounts/{account_id}/users/{id}.json", func(r *request) answer {
			return withUser(r, func(u *user) answer { return ok("user", u.json()) })
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}.json", updateUser),
		// activate: `user.activate! unless user.active?` (buyers_users_controller.rb:94-100): an active user
		// is answered as is; a suspended one raises InvalidTransition, 422 with the error representer.
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/activate.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				switch u.state {
				case userActive:
				case userPending:
					r.t.activateUser(u)
				default:
					return invalidTransitionRaised(u, "activate")
				}
				return ok("user", u.json())
			})
		}),
		// suspend! (buyers_users_controller.rb:74-80) raises on a pending user; unsuspend (without bang,
		// :82-90) adds an error. Transitions: states.rb:36-43.
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/suspend.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				if u.state != userActive && u.state != userSuspended {
					return invalidTransitionRaised(u, "suspend")
				}
				u.state = userSuspended
				u.touch()
				return ok("user", u.json())
			})
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/unsuspend.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				if u.state != userSuspended {
					return invalidTransition("unsuspend")
				}
				u.state = userActive
				u.touch()
				return ok("user", u.json())
			})
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/admin.json", setRole(roleAdmin)),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/member.json", setRole(roleMember)),
		// User's before_destroy refuses to delete the account's last admin (can_be_destroyed? and
		// destroyable?, app/models/user.rb:45,53-56,349-352: the account's admins are exactly [self]) with
		// the base error last_admin (config/locales/en.yml:2078), rendered 403 as every refused DELETE.
		handle("DELETE", "/admin/api/accounts/{account_id}/users/{id}.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				if admins := r.t.admins(u.accountID); u.role == roleAdmin && len(admins) == 1 {
					return refused(msgLastAdmin)
				}
				delete(r.t.users, u.id)
				return deleted()
			})
		}),
	}
}

// msgLastAdmin is User's base error last_admin (config/locales/en.yml:2078).
const msgLastAdmin = "Can't delete last admin"

// signup is Admin::Api::SignupsController#create (signups_controller.rb:7-14) through
// Signup::DeveloperAccountManager (app/lib/signup/developer_account_manager.rb,
// account_manager.rb:11-18,47-56): an account ("created") with its first user, an admin, signed up as
// :minimal. When a password is given and the default account plan does not require approval, the user is
// activated at once (User#activate_on_minimal?, app/models/user/states.rb:78-80), which makes the
// account approved (make_active -> Account#upgrade_state!, states.rb:67-72, account/states.rb:155-161);
// otherwise the user stays pending and the account created. The user's errors are reported as the
// account's (check_creation_errors, signups_controller.rb:23-32): 422 {"errors":{...}}. The answer is
// the account alone (AccountRepresenter renders no users): 201.
//
// The signup also contracts plans (AccountManager#create_contract_plans_for_account!,
// app/lib/signup/account_manager.rb:64-69), those of signupPlansFor: the account plan (the account's
// AccountContract; its approval_required is what User#activate_on_minimal? and Account#upgrade_state!
// read, through bought_account_plan), a service contract per service plan (live unless the plan requires
// approval), and an application named and described "API signup" (signups_controller.rb:38-40) per
// application plan, live unless the plan requires approval. A service's "Default" service plan is
// published (Service#create_default_service_plan, app/models/service.rb:528-536, with
// published_service_plan_signup on, config/examples/rolling_updates.yml:14, and the service_plans switch
// hidden) but not the service's default, so it is the first published one that is contracted
// (plans_with_defaults.rb:62-68,81-83). Without an account plan (none given, no default), or with an
// application plan and no service plan for its service, 404.
func signup(r *request) answer {
	errs := fieldErrors{}
	orgName := r.form.Get("org_name")
	checkOrgName(orgName, true, errs)
	var accountFields fieldValues
	r.t.writeFields(r, targetAccount, &accountFields)
	r.t.validateFields(targetAccount, &accountFields, errs)
	u := &user{username: strings.TrimSpace(r.form.Get("username")), email: r.form.Get("email"), role: roleAdmin, state: userPending,
		signupType: signupMinimal, owner: r.t, stamps: newStamps()}
	password := r.form.Get("password")
	r.t.validateUser(u, password, errs)
	r.t.writeFields(r, targetUser, &u.fields)
	r.t.validateFields(targetUser, &u.fields, errs)
	plans, found := r.t.signupPlansFor(r)
	if !found { // raised before the account's errors are looked at (signups_controller.rb:23-32)
		return notFound()
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	a := &account{id: r.t.id(), orgName: orgName, state: accountCreated, monthlyBillingEnabled: true, monthlyChargingEnabled: true,
		owner: r.t, fields: accountFields, stamps: newStamps()}
	r.t.accounts[a.id] = a
	u.id, u.accountID, u.password = r.t.id(), a.id, password
	r.t.users[u.id] = u
	a.planID = plans.account.id
	for _, sp := range plans.service {
		r.t.subscribe(a, sp)
	}
	if password != "" && !plans.account.approvalRequired {
		r.t.activateUser(u)
	}
	for _, p := range plans.application {
		app := newApplication(a, p)
		app.name, app.nameSet, app.description, app.descriptionSet = "API signup", true, "API signup", true
		r.t.store(app, r.t.services[p.serviceID])
	}
	return created("account", a.json())
}

// signupPlans are the plans a signup contracts.
type signupPlans struct {
	account     *simplePlan
	service     []*simplePlan
	application []*plan
}

// signupPlansFor is Signup::PlansWithDefaults (app/lib/signup/plans_with_defaults.rb) with the plans
// of account_plan_id, service_plan_id and application_plan_id (signups_controller.rb:42-52: the
// tenant's plans with those ids, others ignored): the account plan given, else the default one; for
// each service (in id order), the service plan given, else the default one; then, when the service
// has an application plan given or a default one, that plan, and, without a service plan so far, the
// service's first published service plan (:62-84; published_service_plan_signup on, the service_plans
// switch hidden, as on the simulator's tenants). No account plan, or an application plan without a
// service plan, is an error on :plans (:95-109), which the controller raises as RecordNotFound
// (signups_controller.rb:27): ok false, 404.
func (t *tenant) signupPlansFor(r *request) (signupPlans, bool) {
	var out signupPlans
	if p, found := t.accountPlans[formID(r, "account_plan_id")]; found && has(r, "account_plan_id") {
		out.account = p
	} else {
		out.account = t.defaultAccountPlan()
	}
	givenService, givenApp := t.servicePlans[formID(r, "service_plan_id")], t.plans[formID(r, "application_plan_id")]
	for _, sid := range sortedIDs(t.services, nil) {
		var sp *simplePlan
		if givenService != nil && givenService.serviceID == sid {
			sp = givenService
		}
		for _, id := range sortedIDs(t.servicePlans, func(p *simplePlan) bool { return p.serviceID == sid && p.isDefault }) {
			if sp == nil {
				sp = t.servicePlans[id]
			}
		}
		var ap *plan
		if givenApp != nil && givenApp.serviceID == sid {
			ap = givenApp
		}
		for _, id := range sortedIDs(t.plans, func(p *plan) bool { return p.serviceID == sid && p.isDefault }) {
			if ap == nil {
				ap = t.plans[id]
			}
		}
		if ap != nil && sp == nil {
			for _, id := range sortedIDs(t.servicePlans, func(p *simplePlan) bool { return p.serviceID == sid && p.state == "published" }) {
				if sp == nil {
					sp = t.servicePlans[id]
				}
			}
			if sp == nil {
				return out, false // "Couldn't find a Service Plan for ..." (plans_with_defaults.rb:103-109)
			}
		}
		if sp != nil {
			out.service = append(out.service, sp)
		}
		if ap != nil {
			out.application = append(out.application, ap)
		}
	}
	return out, out.account != nil
}

// checkOrgName validates org_name as Account does (app/models/account.rb:267-268): present, and on
// create with at least one ASCII letter or digit (invalid_format, config/locales/en.yml:2087).
func checkOrgName(orgName string, create bool, errs fieldErrors) {
	if strings.TrimSpace(orgName) == "" {
		errs.add("org_name", "can't be blank")
	}
	if create && !orgNameFormat.MatchString(orgName) {
		errs.add("org_name", "must contain at least one alphanumeric character")
	}
}

var orgNameFormat = regexp.MustCompile(`[a-zA-Z0-9]`)

// findAccount is AccountsController#find (accounts_controller.rb:25-29,141-156): the account of the
// buyer user with this username, else with this user_id, else with this (non-blank) email; 404 when
// there is none or no criterion.
func findAccount(r *request) answer {
	var keep func(u *user) bool
	switch {
	case has(r, "username"):
		keep = func(u *user) bool { return u.username == r.form.Get("username") }
	case has(r, "user_id"):
		keep = func(u *user) bool { return strconv.FormatInt(u.id, 10) == r.form.Get("user_id") }
	case r.form.Get("email") != "":
		keep = func(u *user) bool { return u.email == r.form.Get("email") }
	default:
		return notFound()
	}
	for _, id := range sortedIDs(r.t.users, keep) {
		if a, found := r.t.accounts[r.t.users[id].accountID]; found {
			return ok("account", a.json())
		}
	}
	return notFound()
}

// updateAccount is AccountsController#update (accounts_controller.rb:41-50,135-137): the billing flags
// and the account's defined fields (org_name, and the extra and optional built-in ones, writeFields); a
// blank org_name is 422. validate_fields! is not called (fields.rb:213-215,283-285), so neither required
// extra fields nor choices are checked: a value outside a field's choices is taken.
func updateAccount(r *request) answer {
	return withAccount(r, "id", func(a *account) answer {
		errs := fieldErrors{}
		next := *a
		next.fields = a.fields.clone()
		r.t.writeFields(r, targetAccount, &next.fields)
		if has(r, "org_name") {
			next.orgName = r.form.Get("org_name")
			checkOrgName(next.orgName, false, errs)
		}
		if has(r, "monthly_billing_enabled") {
			next.monthlyBillingEnabled = flag(r.form.Get("monthly_billing_enabled"))
		}
		if has(r, "monthly_charging_enabled") {
			next.monthlyChargingEnabled = flag(r.form.Get("monthly_charging_enabled"))
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		next.touch()
		*a = next
		return ok("account", a.json())
	})
}

// accountEvent fires an account event allowed from the given states.
func accountEvent(event, to string, from ...string) handlerFunc {
	return func(r *request) answer {
		return withAccount(r, "id", func(a *account) answer {
			for _, f := range from {
				if a.state == f {
					a.state = to
					a.touch()
					return ok("account", a.json())
				}
			}
			return invalidTransition(event)
		})
	}
}

// deleteAccount removes an account with its users and applications.
func (t *tenant) deleteAccount(id int64) {
	for uid, u := range t.users {
		if u.accountID == id {
			delete(t.users, uid)
		}
	}
	for aid, app := range t.apps {
		if app.accountID == id {
			delete(t.apps, aid)
		}
	}
	for cid, c := range t.subscriptions {
		if c.accountID == id {
			delete(t.subscriptions, cid)
		}
	}
	delete(t.accounts, id)
}

// activateUser activates a pending user; a "created" account is then upgraded: approved, or pending when
// its plan requires approval (User#make_active, app/models/user/states.rb:67-72; Account#upgrade_state!,
// app/models/account/states.rb:155-161).
func (t *tenant) activateUser(u *user) {
	u.state = userActive
	u.touch()
	if a := t.accounts[u.accountID]; a != nil && a.state == accountCreated {
		a.state = accountApproved
		if p := t.accountPlans[a.planID]; p != nil && p.approvalRequired {
			a.state = accountPending
		}
		a.touch()
	}
}

// admins returns the admins of an account.
func (t *tenant) admins(accountID int64) []*user {
	var out []*user
	for _, id := range sortedIDs(t.users, func(u *user) bool { return u.accountID == accountID && u.role == roleAdmin }) {
		out = append(out, t.users[id])
	}
	return out
}

// createUser is BuyersUsersController#create (buyers_users_controller.rb:14-22,125-127): only the
// defined fields (username, email) and the password are taken, so the user is always a pending member
// (porta's test "create does not creates admins nor active users"), signed up as :created_by_provider.
func createUser(r *request) answer {
	return withAccount(r, "account_id", func(a *account) answer {
		u := &user{accountID: a.id, username: strings.TrimSpace(r.form.Get("username")), email: r.form.Get("email"), role: roleMember,
			state: userPending, signupType: signupByProvider, owner: r.t, stamps: newStamps()}
		r.t.writeFields(r, targetUser, &u.fields)
		errs := fieldErrors{}
		r.t.validateUser(u, r.form.Get("password"), errs)
		if a := errs.answer(); a.code != 0 {
			return a
		}
		u.id, u.password = r.t.id(), r.form.Get("password")
		r.t.users[u.id] = u
		return created("user", u.json())
	})
}

// updateUser is BuyersUsersController#update (buyers_users_controller.rb:35-40): username, email and
// password; role and state are not writable.
func updateUser(r *request) answer {
	return withUser(r, func(u *user) answer {
		next := *u
		next.fields = u.fields.clone()
		r.t.writeFields(r, targetUser, &next.fields)
		if has(r, "username") {
			next.username = strings.TrimSpace(r.form.Get("username"))
		}
		if has(r, "email") {
			next.email = r.form.Get("email")
		}
		errs := fieldErrors{}
		r.t.validateUser(&next, r.form.Get("password"), errs)
		if a := errs.answer(); a.code != 0 {
			return a
		}
		if p := r.form.Get("password"); p != "" { // a blank password sets nothing
			next.password = p
		}
		next.touch()
		*u = next
		return ok("user", u.json())
	})
}

// setRole is BuyersUsersController#admin and #member (buyers_users_controller.rb:54-70): CanCan refuses
// :update_role on the only admin of an account, whichever role is asked (config/abilities/admin.rb:22-27),
// 403 {"status":"Forbidden"}.
func setRole(role string) handlerFunc {
	return func(r *request) answer {
		return withUser(r, func(u *user) answer {
			if u.role == roleAdmin && len(r.t.admins(u.accountID)) <= 1 {
				return forbidden()
			}
			u.role = role
			u.touch()
			return ok("user", u.json())
		})
	}
}

// invalidTransitionRaised is porta's answer to an event with bang the state does not allow:
// StateMachines::InvalidTransition rescued by Admin::Api::BaseController (base_controller.rb:34-36,64-68)
// and rendered by StateMachine::InvalidTransitionRepresenter
// (app/representers/state_machine/invalid_transition_representer.rb), 422
// {"error":{"from","event","error","object":{"user":{...}}}}.
func invalidTransitionRaised(u *user, event string) answer {
	return answer{http.StatusUnprocessableEntity, map[string]any{"error": map[string]any{"from": u.state, "event": event,
		"error": `State cannot transition via "` + event + `"`, "object": map[string]any{"user": u.json()}}}}
}

// Formats of User (app/lib/authentication.rb:5,8,15-21): RE_LOGIN_OK and RE_EMAIL_OK.
var (
	loginFormat = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-@+]+$`)
	emailFormat = regexp.MustCompile(`(?i)^['A-Za-z0-9_.%+\-]+@(?:[A-Z0-9\-]+\.)+[A-Za-z]{2,63}$`)
)

// minPasswordLength is Authentication::ByPassword::STRONG_PASSWORD_MIN_SIZE
// (app/lib/authentication/by_password.rb:7,19,44-48): strong passwords are on unless the installation
// sets strong_passwords_disabled, which production settings do not (config/examples/settings.yml sets it
// for development only).
const minPasswordLength = 15

// validateUser adds to errs what User validates (app/models/user.rb:89-96,108-109,
// app/lib/authentication/by_password.rb:15-19): username of 3 to 40 characters of RE_LOGIN_OK; email
// of 6 to 255 characters, in RE_EMAIL_OK unless the user signed up as :minimal (blank then allowed);
// both unique among the tenant's buyer users, or, for a user of a tenant in master's books, among that
// tenant's users (User#uniqueness_scope, app/models/user.rb:366-375); a new password (a blank one sets
// nothing) of 15 characters at least.
func (t *tenant) validateUser(u *user, password string, errs fieldErrors) {
	switch n := len([]rune(u.username)); {
	case n < 3:
		errs.add("username", "is too short (minimum is 3 characters)")
	case n > 40:
		errs.add("username", "is too long (maximum is 40 characters)")
	}
	if u.username != "" && !loginFormat.MatchString(u.username) {
		errs.add("username", "use only letters, numbers, and .-_@+ please.")
	}
	if n := len([]rune(u.email)); n > 0 && n < 6 {
		errs.add("email", "is too short (minimum is 6 characters)")
	} else if n > 255 {
		errs.add("email", "is too long (maximum is 255 characters)")
	}
	if u.signupType != signupMinimal && !emailFormat.MatchString(u.email) {
		errs.add("email", "should look like an email address")
	}
	a := t.accounts[u.accountID]
	for _, o := range t.users {
		if o.id == u.id || (a != nil && a.provider != nil && o.accountID != u.accountID) {
			continue
		}
		if u.username != "" && o.username == u.username {
			errs.add("username", "has already been taken")
		}
		if u.email != "" && o.email == u.email {
			errs.add("email", "has already been taken")
		}
	}
	if password != "" && len([]rune(password)) < minPasswordLength {
		errs.add("password", "is too short (minimum is 15 characters)")
	}
}

func withAccount(r *request, param string, f func(*account) answer) answer {
	a, found := r.t.accounts[r.params[param]]
	if !found {
		return notFound()
	}
	return f(a)
}

// withUser finds {id} among the users of {account_id} (buyer.users.find, buyers_users_controller.rb:119-121).
func withUser(r *request, f func(*user) answer) answer {
	return withAccount(r, "account_id", func(a *account) answer {
		u, found := r.t.users[r.params["id"]]
		if !found || u.accountID != a.id {
			return notFound()
		}
		return f(u)
	})
}

// PasswordOf returns the password a tenant's user was last given, and whether the user exists: what
// signing in would check.
func (s *Simulator) PasswordOf(tenantName, username string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.names[tenantName]
	if t == nil {
		return "", false
	}
	for _, u := range t.users {
		if u.username == username {
			return u.password, true
		}
	}
	return "", false
}
