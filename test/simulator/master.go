package simulator

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The master account and its API for tenants, which porta calls providers:
// Master::Api::ProvidersController (app/controllers/master/api/providers_controller.rb, PC below),
// Signup::ProviderAccountManager (app/lib/signup/provider_account_manager.rb) and the provider
// account's states and domains (app/models/account/states.rb, provider_domains.rb). Master keeps its
// tenants as its buyer accounts: a tenant is an account of the master tenant (with its users, the
// tenant's admins), so master's Account Management API (/admin/api/accounts/...) serves them as porta
// does for a master access token, and each is also a simulator tenant of its own, with its objects and
// its access token.

// MasterTenant is the name of the master account's tenant (Options.MasterToken); /t/master addresses
// its admin host, where porta serves the master API.
const MasterTenant = "master"

// DefaultSuperdomain is the superdomain (porta's THREESCALE_SUPERDOMAIN) when Options.Superdomain is
// empty: a tenant's domains are <slug>.<superdomain> and <slug>-admin.<superdomain>.
const DefaultSuperdomain = "simulator.invalid"

// accountScheduledForDeletion is the state DELETE /master/api/providers/{id}.json puts a tenant in
// (Account::States, app/models/account/states.rb:3,90-92).
const accountScheduledForDeletion = "scheduled_for_deletion"

// periodBeforeDeletion is Account::States::PERIOD_BEFORE_DELETION (states.rb:2): a scheduled tenant's
// deletion_date is this long after it was scheduled (states.rb:103-105).
const periodBeforeDeletion = 15 * 24 * time.Hour

// The impersonation admin every tenant gets (Signup::ImpersonationAdminBuilder,
// app/lib/signup/impersonation_admin_builder.rb:5-18; ThreeScale.config.impersonation_admin,
// config/examples/settings.yml:16-18).
const (
	impersonationAdminUsername = "3scaleadmin"
	impersonationAdminDomain   = "3scale.net"
)

// The tenant's first access token (Signup::ResultWithAccessToken, app/lib/signup/result_with_access_token.rb:6-7).
const adminTokenName = "Administration"

var adminTokenScopes = []string{scopeAccountManagement, scopePolicyRegistry}

// defaultAPIBackend is BackendApi.default_api_backend (app/models/backend_api.rb:80-82), the private
// endpoint of a new tenant's first service.
const defaultAPIBackend = "https://echo-api.3scale.net:443"

// providerInfo is what a provider account (a tenant) has in master's books beyond a buyer account.
type providerInfo struct {
	tenant              *tenant // the tenant the account is: its objects and tokens
	domain, adminDomain string
	// scheme of the base URLs: https unless the installation's force_ssl is off (Options.PlainHTTP;
	// provider_methods.rb:198-204,302-308).
	scheme string
	// The emails and the developer portal's access code as the accounts table holds them; the
	// representer shows the readers' values (account_representer.rb:20-29): from_email is the
	// installation's no-reply address, noReply, while NULL (nil here; provider_methods.rb:234-236), the
	// support emails fall back to the first admin's while blank (account.rb:515-522; firstAdminEmail,
	// provider.go), the code is random (account.rb:108,554-556).
	fromEmail                                         *string
	supportEmail, financeSupportEmail, siteAccessCode string
	noReply                                           string
	// adminEmail is the first admin's email of an account whose users no tenant's books hold (a tenant of
	// AddTenant, tenantProvider in provider.go).
	adminEmail  string
	annotations map[string]any
	// stateChangedAt is when the state last changed (after_transition, states.rb:56-58).
	stateChangedAt time.Time
}

// providerJSON adds to a provider account's JSON what AccountRepresenter shows of providers
// (account_representer.rb:16-29): the external domains, the base URLs, the emails, the access code, its
// annotations, and deletion_date while scheduled for deletion.
func (a *account) providerJSON(out map[string]any) {
	p := a.provider
	out["admin_domain"], out["domain"] = p.adminDomain, p.domain
	out["admin_base_url"], out["base_url"] = p.scheme+"://"+p.adminDomain, p.scheme+"://"+p.domain
	out["from_email"], out["site_access_code"] = p.fromEmailShown(), p.siteAccessCode
	// No admin: the readers return nil, which the representer leaves out.
	if v := a.supportEmailOf(p); v != "" {
		out["support_email"] = v
	}
	if v := a.financeSupportEmailOf(p); v != "" {
		out["finance_support_email"] = v
	}
	annotations := make(map[string]any, len(p.annotations))
	for k, v := range p.annotations {
		annotations[k] = v
	}
	out["annotations"] = annotations
	if a.state == accountScheduledForDeletion {
		out["deletion_date"] = p.stateChangedAt.Add(periodBeforeDeletion).UTC().Format(time.RFC3339)
	}
}

func masterRoutes() []route {
	return []route{
		handle("POST", "/master/api/providers.json", signupProvider),
		// show and update find the tenant among master's providers, scheduled ones included; destroy
		// without them (PC:88-103): an unknown id, or a second DELETE, is 404.
		handle("GET", "/master/api/providers/{id}.json", func(r *request) answer {
			return withProvider(r, true, func(a *account) answer { return ok("signup", map[string]any{"account": a.json()}) })
		}),
		handle("PUT", "/master/api/providers/{id}.json", updateProvider),
		// destroy: schedule_for_deletion! (PC:58-61; states.rb:90-92), answered 200 with no body
		// (responder.rb:16-17). The tenant is deleted 15 days later (PurgeScheduledTenants).
		handle("DELETE", "/master/api/providers/{id}.json", func(r *request) answer {
			return withProvider(r, false, func(a *account) answer {
				setProviderState(a, accountScheduledForDeletion)
				return deleted()
			})
		}),
	}
}

// withProvider finds the path's {id} among master's providers (current_account.providers, PC:88-90),
// those scheduled for deletion only when withScheduled: 404 {"status":"Not found"} otherwise.
func withProvider(r *request, withScheduled bool, f func(*account) answer) answer {
	a, found := r.t.accounts[r.params["id"]]
	if !found || a.provider == nil || (!withScheduled && a.state == accountScheduledForDeletion) {
		return notFound()
	}
	return f(a)
}

// setProviderState moves a tenant to state, recording when.
func setProviderState(a *account, state string) {
	a.state = state
	a.provider.stateChangedAt = time.Now()
	a.touch()
}

// signupProvider is PC#create (PC:37-46) through Signup::ProviderAccountManager: a provider account,
// approved (master's account plan requires no approval), with domains made from org_name; its admin
// (the username, email and password sent), pending until activated; the impersonation admin
// "3scaleadmin", active; an "Administration" access token of the admin, read-write, with the
// account_management and policy_registry scopes, whose value only this answer shows; and a first
// service "API" using a backend on the default API backend (ProviderAccountManager#create_first_service).
// 201 {"signup":{"account":{...},"access_token":{...}}} (SignupResultWithAccessTokenRepresenter).
//
// The same org_name twice makes two tenants: the second's domains get a "-2" suffix, "-3" for a third,
// and so on (Signup::DomainsBuilder#generate_subdomain). Errors are the account's and the admin's full
// messages, 422 {"errors":{"account":[...],"user":[...]}} (Signup::Result#errors, app/lib/signup/result.rb:49-54).
//
// Not modeled: the sample data porta's SignupWorker adds afterwards (plans, a developer account, an
// ActiveDocs spec), the activation email, and master's plans (porta answers 422 "Provider signup not
// enabled." without them, PC:105-109).
func signupProvider(r *request) answer {
	s := r.sim
	orgName := r.form.Get("org_name")
	var accountErrs, userErrs []string
	if strings.TrimSpace(orgName) == "" {
		accountErrs = append(accountErrs, labelOrgName+" can't be blank")
	}
	if !orgNameFormat.MatchString(orgName) {
		accountErrs = append(accountErrs, labelOrgName+" must contain at least one alphanumeric character")
	}
	slug := parameterize(strings.ReplaceAll(orgName, "_", "-"))
	if slug == "" {
		// Without a subdomain no domain is generated (provider_domains.rb:90-94), and validates_presence_of
		// :domain and :self_domain fail (provider_domains.rb:12-13; self_domain's label, en.yml:2216).
		accountErrs = append(accountErrs, "Domain can't be blank", "Admin domain can't be blank")
	} else {
		slug = s.freeSlug(slug)
	}
	admin := &user{username: strings.TrimSpace(r.form.Get("username")), email: r.form.Get("email"), role: roleAdmin, state: userPending,
		signupType: signupByProvider, stamps: newStamps()}
	password := r.form.Get("password")
	errs := fieldErrors{}
	newTenant("").validateUser(admin, password, errs) // a new tenant: no user to clash with (user.rb:366-375)
	if has(r, "password_confirmation") && r.form.Get("password_confirmation") != password {
		errs.add("password_confirmation", "doesn't match Password")
	}
	for _, field := range []string{"username", "email", "password", "password_confirmation"} {
		for _, m := range errs[field] {
			userErrs = append(userErrs, userLabels[field]+" "+m)
		}
	}
	if len(userErrs) > 0 {
		// The account validates the users it is saved with (has_many autosave): "Users invalid".
		accountErrs = append(accountErrs, "Users invalid")
	}
	if len(accountErrs) > 0 {
		body := map[string][]string{"account": accountErrs}
		if len(userErrs) > 0 {
			body["user"] = userErrs
		}
		return answer{http.StatusUnprocessableEntity, map[string]any{"errors": body}}
	}

	m := r.t
	nt := newTenant(slug)
	domain := slug + "." + s.superdomain
	a := &account{id: m.id(), orgName: orgName, state: accountApproved, monthlyBillingEnabled: true, monthlyChargingEnabled: true,
		owner: m, stamps: newStamps(), provider: &providerInfo{tenant: nt, domain: domain, adminDomain: s.adminDomain(slug), scheme: s.scheme,
			noReply: "no-reply@" + s.superdomain, siteAccessCode: randomHex(5), annotations: annotationsOf(r.form, map[string]any{}), stateChangedAt: time.Now()}}
	nt.account = a
	m.accounts[a.id] = a
	admin.id, admin.accountID, admin.password = m.id(), a.id, password
	m.users[admin.id] = admin
	impersonation := &user{id: m.id(), accountID: a.id, username: impersonationAdminUsername,
		email: impersonationAdminUsername + "+" + domain + "@" + impersonationAdminDomain, role: roleAdmin, state: userActive,
		signupType: signupMinimal, stamps: newStamps()}
	m.users[impersonation.id] = impersonation

	token := randomHex(32)
	s.names[slug] = nt
	s.tenants[token] = nt
	s.scopes[token] = append([]string{}, adminTokenScopes...)
	s.owners[token] = admin.id // the token is the admin's (ResultWithAccessToken), its first admin (adminusers.go)
	createService(&request{t: nt, sim: s, form: url.Values{"name": {"API"}}})
	for _, svc := range nt.services {
		if store := setAPIBackend(nt, svc, defaultAPIBackend, fieldErrors{}); store != nil {
			store()
		}
	}
	return created("signup", map[string]any{"account": a.json(),
		"access_token": map[string]any{"id": m.id(), "name": adminTokenName, "scopes": adminTokenScopes, "permission": "rw", "value": token}})
}

// Labels of the attributes in full messages (config/locales/en.yml:2208, humanized attribute names).
const labelOrgName = "Organization/Group Name"

var userLabels = map[string]string{"username": "Username", "email": "Email", "password": "Password",
	"password_confirmation": "Password confirmation"}

// freeSlug is porta's generate_subdomain (app/lib/signup/domains_builder.rb:17-26): the first of slug,
// slug-2, slug-3... whose domains, <slug>.<superdomain> and <slug>-admin.<superdomain>, no account has
// as its domain or admin domain (provider_domains.rb:74-77,171-178). The tenants' names stand for their
// domains; master's is reserved. s.mu held.
func (s *Simulator) freeSlug(slug string) string {
	used := map[string]bool{MasterTenant: true, MasterTenant + "-admin": true}
	for name := range s.names {
		used[name], used[name+"-admin"] = true, true
	}
	for used[slug] || used[slug+"-admin"] {
		m := slugSequence.FindStringSubmatch(slug)
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		slug = fmt.Sprintf("%s-%d", m[1], n+1)
	}
	return slug
}

var slugSequence = regexp.MustCompile(`^(.*?)(?:-(\d+))?$`)

// parameterize is ActiveSupport's String#parameterize (separator "-"): Latin letters transliterated to
// ASCII as I18n does (any other character becomes "?"), every run of characters but ASCII letters,
// digits, "-" and "_" one "-", runs of "-" squeezed, none at the ends, lower case.
func parameterize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch t, known := latinASCII[r]; {
		case r < 0x80:
			b.WriteRune(r)
		case known:
			b.WriteString(t)
		default:
			b.WriteByte('?')
		}
	}
	out := notParameter.ReplaceAllString(b.String(), "-")
	out = dashes.ReplaceAllString(out, "-")
	return strings.ToLower(strings.Trim(out, "-"))
}

var (
	notParameter = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)
	dashes       = regexp.MustCompile(`-{2,}`)
)

// latinASCII are I18n's default transliterations of the Latin-1 letters (i18n's
// I18n::Backend::Transliterator::HashTransliterator::DEFAULT_APPROXIMATIONS).
var latinASCII = func() map[rune]string {
	m := map[rune]string{}
	for from, to := range map[string]string{"ÀÁÂÃÄÅ": "A", "Æ": "AE", "Ç": "C", "ÈÉÊË": "E", "ÌÍÎÏ": "I", "Ð": "D", "Ñ": "N",
		"ÒÓÔÕÖØ": "O", "×": "x", "ÙÚÛÜ": "U", "Ý": "Y", "Þ": "Th", "ß": "ss", "àáâãäå": "a", "æ": "ae", "ç": "c", "èéêë": "e",
		"ìíîï": "i", "ð": "d", "ñ": "n", "òóôõöø": "o", "ùúûü": "u", "ýÿ": "y", "þ": "th"} {
		for _, r := range from {
			m[r] = to
		}
	}
	return m
}()

// annotationsOf adds the annotations[name]=value (or account[annotations][name]=value) parameters of
// form to into (PC:83,128-134: annotations are an UPDATE_PARAMS hash).
func annotationsOf(form url.Values, into map[string]any) map[string]any {
	for k, vs := range form {
		name, found := strings.CutPrefix(k, "annotations[")
		if !found {
			name, found = strings.CutPrefix(k, "account[annotations][")
		}
		if name, closed := strings.CutSuffix(name, "]"); found && closed && name != "" && len(vs) > 0 {
			into[name] = vs[0]
		}
	}
	return into
}

// accountParams are the update's account attributes as porta reads them (PC:136-139,
// params.require(:account)): the account[...] parameters when there are some; otherwise the top-level
// ones, which wrap_parameters :account wraps (ApiSupport::Params; the controller's model, the
// Provider module, has no attribute names, so every parameter is wrapped).
func accountParams(form url.Values) url.Values {
	wrapped, top := url.Values{}, url.Values{}
	for k, vs := range form {
		if name, found := strings.CutPrefix(k, "account["); found {
			if name, closed := strings.CutSuffix(name, "]"); closed && !strings.Contains(name, "[") {
				wrapped[name] = vs
			}
			continue
		}
		if !strings.Contains(k, "[") {
			top[k] = vs
		}
	}
	if len(wrapped) > 0 {
		return wrapped
	}
	return top
}

// providerEvents are the account events a PUT's state_event fires, with the states each leaves from
// (Account::States, states.rb:63-93); "" stands for any state.
var providerEvents = map[string]struct {
	to   string
	from []string
}{
	"make_pending": {accountPending, []string{accountCreated, accountApproved, accountRejected}},
	"approve":      {accountApproved, []string{accountCreated, accountPending, accountRejected}},
	"reject":       {accountRejected, []string{accountCreated, accountPending, accountApproved}},
	"suspend":      {accountSuspended, []string{""}},
	"resume":       {accountApproved, []string{accountSuspended, accountScheduledForDeletion}},
}

// updateProvider is PC#update (PC:50-54,136-139): the account's defined fields (org_name) and
// UPDATE_PARAMS (from_email, support_email, finance_support_email, site_access_code, state_event,
// annotations); of a tenant scheduled for deletion only state_event is taken, so that resuming it is
// `account[state_event]=resume`. An event its state does not allow is refused by the state machine's
// validation, 422 {"errors":{"account":["State event cannot transition when <state>"]}}
// (state_machines' invalid_event, config/locales/en.yml:1958), and nothing is changed. 200
// {"signup":{"account":{...}}} without access token.
func updateProvider(r *request) answer {
	return withProvider(r, true, func(a *account) answer {
		params := accountParams(r.form)
		scheduled := a.state == accountScheduledForDeletion
		var errs []string
		next, nextState := *a.provider, a.state
		orgName := a.orgName
		if v, set := params["state_event"]; set && len(v) > 0 && v[0] != "" {
			ev, known := providerEvents[v[0]]
			allowed := false
			for _, from := range ev.from {
				allowed = allowed || from == "" || from == a.state
			}
			switch {
			case !known:
				errs = append(errs, "State event is invalid")
			case !allowed:
				errs = append(errs, "State event cannot transition when "+strings.ReplaceAll(a.state, "_", " "))
			default:
				nextState = ev.to
			}
		}
		if !scheduled {
			for field, dst := range map[string]*string{"support_email": &next.supportEmail,
				"finance_support_email": &next.financeSupportEmail, "site_access_code": &next.siteAccessCode} {
				if v, set := params[field]; set && len(v) > 0 {
					*dst = v[0]
				}
			}
			if v, set := params["from_email"]; set && len(v) > 0 {
				next.fromEmail = &v[0]
			}
			if v, set := params["org_name"]; set && len(v) > 0 {
				orgName = v[0]
				if strings.TrimSpace(orgName) == "" {
					errs = append(errs, labelOrgName+" can't be blank")
				}
			}
			annotations := map[string]any{}
			for k, v := range next.annotations {
				annotations[k] = v
			}
			next.annotations = annotationsOf(r.form, annotations)
		}
		if len(errs) > 0 {
			return answer{http.StatusUnprocessableEntity, map[string]any{"errors": map[string][]string{"account": errs}}}
		}
		*a.provider = next
		a.orgName = orgName
		if nextState != a.state {
			setProviderState(a, nextState)
		}
		a.touch()
		return ok("signup", map[string]any{"account": a.json()})
	})
}

// masterGate answers a master API request as porta does before any action, or returns nil to go on:
// 403 with no body on any host but master's (Master::BaseController#force_master_domain,
// app/controllers/master/base_controller.rb:12-14), and 401 with the text "unauthorized" for a token
// that is not one of master's (PC:9, authenticate_access_token plain: 'unauthorized'). hostTenant is
// the tenant the path's /t/NAME prefix addresses; without one, the host is the one of the token's
// tenant, or master's for a token of nobody's. s.mu held.
func (s *Simulator) masterGate(hostTenant string, t *tenant) *answer {
	if s.master == nil {
		return &answer{http.StatusForbidden, nil} // no master: no host is master's
	}
	onMaster := hostTenant == MasterTenant || (hostTenant == "" && (t == nil || t == s.master))
	switch {
	case !onMaster:
		return &answer{http.StatusForbidden, nil}
	case t != s.master:
		return &answer{http.StatusUnauthorized, plainText("unauthorized")}
	}
	return nil
}

// accountGate answers 403 with no body the Admin API requests of a tenant whose account is not approved
// (scheduled for deletion, suspended...): ApiAuthentication::SuspendedAccount, which the Admin API's base
// controller runs first for the token's account (app/lib/api_authentication/suspended_account.rb:12-16).
// Tenants made by Options.Tenants and AddTenant have no account in master's books and are always served.
func accountGate(t *tenant) *answer {
	if t != nil && t.account != nil && t.account.state != accountApproved {
		return &answer{http.StatusForbidden, nil}
	}
	return nil
}

// dropTenant removes a tenant master deleted, with its objects and tokens, and its account from
// master's books. s.mu held.
func (s *Simulator) dropTenant(a *account) {
	nt := a.provider.tenant
	for token, t := range s.tenants {
		if t == nt {
			delete(s.tenants, token)
			delete(s.scopes, token)
			delete(s.owners, token)
		}
	}
	if s.names[nt.name] == nt {
		delete(s.names, nt.name)
	}
	if s.master != nil {
		s.master.deleteAccount(a.id)
	}
}

// PurgeScheduledTenants deletes every tenant scheduled for deletion, as porta's daily
// FindAndDeleteScheduledAccountsWorker does 15 days after the DELETE
// (app/workers/find_and_delete_scheduled_accounts_worker.rb:6-9): the tenant's objects and tokens go,
// and master's GET of it is 404 from then on. It returns how many went.
func (s *Simulator) PurgeScheduledTenants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.master == nil {
		return 0
	}
	n := 0
	for _, id := range sortedIDs(s.master.accounts, func(a *account) bool {
		return a.provider != nil && a.state == accountScheduledForDeletion
	}) {
		s.dropTenant(s.master.accounts[id])
		n++
	}
	return n
}
