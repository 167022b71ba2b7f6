package simulator

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The developer portal's settings and its sign-in providers, as porta's admin API serves them:
// Admin::Api::SettingsController (app/controllers/admin/api/settings_controller.rb; app/models/settings.rb;
// app/representers/settings_representer.rb) and Admin::Api::AuthenticationProvidersController
// (app/controllers/admin/api/authentication_providers_controller.rb; app/models/authentication_provider.rb
// and authentication_provider/*.rb; app/representers/authentication_provider_representer.rb;
// app/presenters/oauth_flow_presenter.rb).
//
// JSON only. Porta answers settings.xml 406 (the controller responds to json only, settings_controller.rb:5-6)
// and serves the providers in XML too (AuthenticationProvidersRepresenter::XML); here a .xml path has no
// route: 404.

// portalSettings is a tenant's Settings row, the columns the API shows (db/schema.rb, create_table
// "settings"). The nullable boolean columns are pointers, nil for NULL, which the representer leaves out.
// account_approval_required is not here: it is the default account plan's (tenant.accountApprovalRequired, accountplans.go).
type portalSettings struct {
	useraccountareaEnabled, hideService, signupsEnabled *bool
	accountPlansUIVisible, servicePlansUIVisible        *bool
	publicSearch, enforceSSO                            bool // NOT NULL
	changeAccountPlanPermission                         string
	changeServicePlanPermission                         string
}

// newPortalSettings has the columns' defaults: useraccountarea_enabled and signups_enabled true,
// public_search and the *_ui_visible flags false, both permissions "request", enforce_sso false,
// hide_service NULL.
func newPortalSettings() *portalSettings {
	yes, no := true, false
	return &portalSettings{useraccountareaEnabled: &yes, signupsEnabled: &yes, accountPlansUIVisible: &no, servicePlansUIVisible: &no,
		changeAccountPlanPermission: "request", changeServicePlanPermission: "request"}
}

// nullable are the nullable boolean columns by parameter name.
func (ps *portalSettings) nullable() map[string]**bool {
	return map[string]**bool{"useraccountarea_enabled": &ps.useraccountareaEnabled, "hide_service": &ps.hideService,
		"signups_enabled": &ps.signupsEnabled, "account_plans_ui_visible": &ps.accountPlansUIVisible,
		"service_plans_ui_visible": &ps.servicePlansUIVisible}
}

// json is SettingsRepresenter's properties, nil ones left out; account_approval_required is
// default_account_plan.approval_required (settings.rb:56-58).
func (ps *portalSettings) json(t *tenant) map[string]any {
	out := map[string]any{"account_approval_required": t.accountApprovalRequired(), "public_search": ps.publicSearch,
		"enforce_sso": ps.enforceSSO, "change_account_plan_permission": ps.changeAccountPlanPermission,
		"change_service_plan_permission": ps.changeServicePlanPermission}
	for name, v := range ps.nullable() {
		if *v != nil {
			out[name] = **v
		}
	}
	return out
}

// settingsFields are SettingsController::ALLOWED_PARAMS (settings_controller.rb:18-22).
var settingsFields = []string{"useraccountarea_enabled", "hide_service", "signups_enabled", "account_approval_required",
	"public_search", "account_plans_ui_visible", "change_account_plan_permission", "service_plans_ui_visible",
	"change_service_plan_permission", "enforce_sso"}

// planPermissions are the values the two *_permission columns accept (settings.rb:8).
var planPermissions = []string{"request", "none", "credit_card", "request_credit_card", "direct"}

// msgEnforceSSO is EnforceSSOValidator's message when no published admin-portal provider exists
// (app/validators/enforce_sso_validator.rb:44-48).
const msgEnforceSSO = "Password-based authentication could not be disabled. No published authentication providers."

// portalSettingsRoutes are /admin/api/settings.json (routes.rb:731, resource :settings, only: [:show,
// :update]; PATCH as PUT, see match) and the developer portal's sign-in providers (routes.rb:520).
func portalSettingsRoutes() []route {
	return []route{
		handle("GET", "/admin/api/settings.json", func(r *request) answer { return ok("settings", r.t.settings.json(r.t)) }),
		handle("PUT", "/admin/api/settings.json", updatePortalSettings),

		// Not paginated: the index renders current_account.authentication_providers whole.
		handle("GET", "/admin/api/authentication_providers.json", func(r *request) answer {
			return wrapList("authentication_providers", "authentication_provider", r.t.signIn, (*signInProvider).forDevelopers, (*signInProvider).json, r.form, false)
		}),
		handle("POST", "/admin/api/authentication_providers.json", createSignInProvider),
		handle("GET", "/admin/api/authentication_providers/{id}.json", func(r *request) answer {
			return withSignInProvider(r, func(p *signInProvider) answer { return ok("authentication_provider", p.json()) })
		}),
		handle("PUT", "/admin/api/authentication_providers/{id}.json", updateSignInProvider),
		// resources :authentication_providers, except: %i[new edit destroy]: porta has no such route, and
		// its router answers 404 (here the path is known, which would be 405 without this).
		handle("DELETE", "/admin/api/authentication_providers/{id}.json", func(*request) answer { return notFound() }),
	}
}

// updatePortalSettings is SettingsController#update:
//   - params.require(:settings): none of ALLOWED_PARAMS, top-level (wrap_parameters) or under settings[...],
//     is 400; other keys are dropped silently (permit, no forbid_params).
//   - validate_enforcing_sso_allowed runs first (settings_controller.rb:12,47-57): enforce_sso cast true
//     is refused unless the tenant has a published admin-portal provider (EnforceSSOValidator, not strict
//     without a user session: authentication_providers_exist only, enforce_sso_validator.rb:22,42-45,58-60).
//   - Settings#update writes account_approval_required to the default account plan before the save
//     (settings.rb:44-48,112-115), so it sticks even when the rest is refused; porta does so only when the
//     tenant has exactly one non-custom account plan, which the simulator's tenant stands for. A blank value
//     is ignored.
//   - sanitize_attributes drops a blank value for a NOT NULL column (settings.rb:40-42,117-120); a blank
//     nullable boolean becomes NULL. Booleans are cast as ActiveModel::Type::Boolean does (railsBool).
//   - The permissions must be in planPermissions: 422 "is not included in the list" (settings.rb:8).
func updatePortalSettings(r *request) answer {
	if !anyOf(r, settingsFields) && !r.top["settings"] {
		return parameterMissing("settings")
	}
	if b := railsBool(r.form.Get("enforce_sso")); has(r, "enforce_sso") && b != nil && *b && !r.t.adminSSOPublished() {
		return unprocessable("enforce_sso", msgEnforceSSO)
	}
	if b := railsBool(r.form.Get("account_approval_required")); has(r, "account_approval_required") && b != nil {
		r.t.setAccountApprovalRequired(*b)
	}
	next := *r.t.settings
	for name, to := range next.nullable() {
		if has(r, name) {
			*to = railsBool(r.form.Get(name))
		}
	}
	for name, to := range map[string]*bool{"public_search": &next.publicSearch, "enforce_sso": &next.enforceSSO} {
		if b := railsBool(r.form.Get(name)); has(r, name) && b != nil {
			*to = *b
		}
	}
	errs := fieldErrors{}
	for name, to := range map[string]*string{"change_account_plan_permission": &next.changeAccountPlanPermission,
		"change_service_plan_permission": &next.changeServicePlanPermission} {
		if v := r.form.Get(name); has(r, name) && v != "" {
			*to = v
			if !slices.Contains(planPermissions, v) {
				errs.add(name, "is not included in the list")
			}
		}
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	*r.t.settings = next
	return ok("settings", r.t.settings.json(r.t))
}

// signInProvider is an AuthenticationProvider of account_type "developer": the developer portal's
// sign-in with Keycloak (Red Hat Single Sign-On), Auth0, GitHub or another OAuth2 server (Custom).
//
// An admin-portal provider (adminsignin.go) is the same model with account_type "provider" (admin).
type signInProvider struct {
	id int64
	// admin: account_type "provider", a sign-in provider of the admin portal (the tenant's
	// self_authentication_providers); else "developer".
	admin bool
	kind  string // as sent, lower-cased (build_by_kind); the class is providerClass(kind)
	// text are the string columns by their JSON names, absent when NULL: name, system_name, client_id,
	// client_secret, site, token_url, user_info_url, authorize_url, identifier_key, username_key,
	// branding_state.
	text map[string]string
	// flags are the boolean columns, absent when NULL: trust_email, published,
	// skip_ssl_certificate_verification, automatically_approve_accounts.
	flags map[string]bool
	// accountID is the tenant's account id (tenantAccountID), the representer's account_id
	// (authentication_provider_representer.rb:22); base is the developer portal's URL, the callback's
	// endpoint (ThreeScale::Domain.callback_endpoint), taken when the provider is made.
	accountID int64
	base      string
	stamps
}

// The provider classes (AuthenticationProvider::AVAILABLE for developers, authentication_provider.rb:45-65):
// any kind but these three is a Custom one.
const (
	providerKeycloak = "keycloak"
	providerAuth0    = "auth0"
	providerGitHub   = "github"
	providerCustom   = "custom"
)

func providerClass(kind string) string {
	switch kind {
	case providerKeycloak, providerAuth0, providerGitHub:
		return kind
	}
	return providerCustom
}

// providerHumanKind is the class's human_kind, the default name (config/locales/en.yml:287-290,2198-2201).
var providerHumanKind = map[string]string{providerKeycloak: "Red Hat Single Sign-On", providerAuth0: "Auth0",
	providerGitHub: "GitHub", providerCustom: "OAuth2"}

// json is AuthenticationProviderRepresenter, nil values left out. client_secret is rendered in clear, as
// porta does, in every answer. authorize_url is the stored one only: porta computes one from the OAuth
// client when it is NULL (oauth_flow_presenter.rb:40-42), the simulator leaves it out. callback_url is
// sso_integration_callback_url (oauth_flow_presenter.rb:21-33): <portal>/auth/<system_name>/callback,
// and for Auth0 also <portal>/auth/invitations/auth0/<system_name>/callback after ", "; none for a
// 3scale-branded GitHub provider, whose callback is master's (representer :31-34), never made here.
func (p *signInProvider) json() map[string]any {
	out := map[string]any{"id": p.id, "kind": p.kind, "account_type": p.accountType(), "created_at": p.created, "updated_at": p.updated}
	for k, v := range p.text {
		out[k] = v
	}
	for k, v := range p.flags {
		out[k] = v
	}
	out["account_id"] = p.accountID
	if p.text["branding_state"] != "threescale_branded" {
		sn := p.text["system_name"]
		cb := p.base + "/auth/" + sn + "/callback"
		if p.kind == providerAuth0 {
			cb += ", " + p.base + "/auth/invitations/auth0/" + sn + "/callback"
		}
		out["callback_url"] = cb
	}
	return out
}

// oauthConfigRequired is oauth_config_required?: always, but for a 3scale-branded GitHub provider.
func (p *signInProvider) oauthConfigRequired() bool {
	return p.text["branding_state"] != "threescale_branded"
}

// Parameters of AuthenticationProvidersController: authentication_provider_create_params (:67-75, less
// branding_state_event, which the simulator drops) and authentication_provider_update_params (:77-82).
var (
	providerTextFields   = []string{"name", "system_name", "client_id", "client_secret", "token_url", "user_info_url", "authorize_url", "site", "identifier_key", "username_key"}
	providerFlagFields   = []string{"trust_email", "published", "skip_ssl_certificate_verification", "automatically_approve_accounts"}
	providerCreateFields = append(append([]string{"kind", "branding_state_event"}, providerTextFields...), providerFlagFields...)
	providerUpdateText   = []string{"client_id", "client_secret", "site"}
	providerUpdateFlags  = []string{"published", "skip_ssl_certificate_verification", "automatically_approve_accounts"}
)

func withSignInProvider(r *request, f func(*signInProvider) answer) answer {
	p, found := r.t.signIn[r.params["id"]]
	if !found || p.admin { // current_account.authentication_providers: the developer ones only
		return notFound()
	}
	return f(p)
}

// assign sets the sent text and boolean attributes among those listed: a string as sent (blank stays
// blank), a boolean cast as Rails does (blank is NULL).
func (p *signInProvider) assign(r *request, text, flags []string) {
	for _, f := range text {
		if has(r, f) {
			p.text[f] = r.form.Get(f)
		}
	}
	for _, f := range flags {
		if !has(r, f) {
			continue
		}
		if b := railsBool(r.form.Get(f)); b != nil {
			p.flags[f] = *b
		} else {
			delete(p.flags, f)
		}
	}
}

// createSignInProvider is AuthenticationProvidersController#create:
//   - params.require(:authentication_provider), then attributes.require(:kind): 400 when none of the
//     attributes is sent, then when kind is missing or blank.
//   - build_by_kind lower-cases the kind and picks the class (providerClass). The columns' defaults:
//     identifier_key "id", username_key "login", the booleans false (db/schema.rb).
//   - GitHub's after_initialize sets system_name "github" and name "GitHub" when not given
//     (github.rb:41-44), and starts custom_branded, not published: the simulator has no 3scale GitHub
//     OAuth credentials (branded_available?, authentication_provider.rb:140-147), so its client id and
//     secret are required as any other's. branding_state_event is dropped.
//   - Then, before validation, generate_system_name (app/lib/system_name.rb:41-56): a blank system_name
//     is name.parameterize.underscore, or "<class>_<12 hex>" when that is blank; and set_defaults
//     (authentication_provider.rb:160-163): name defaults to the class's human_kind when not given.
//   - The tenant's switches (branding for GitHub, iam_tools for the others) are taken as allowed: the
//     simulator has no switches, so porta's 403 {"status":"Forbidden"} never happens here.
func createSignInProvider(r *request) answer {
	if !anyOf(r, providerCreateFields) && !r.top["authentication_provider"] {
		return parameterMissing("authentication_provider")
	}
	if strings.TrimSpace(r.form.Get("kind")) == "" {
		return parameterMissing("kind")
	}
	p := &signInProvider{kind: strings.ToLower(r.form.Get("kind")), text: map[string]string{"identifier_key": "id", "username_key": "login"},
		flags:     map[string]bool{"trust_email": false, "published": false, "skip_ssl_certificate_verification": false, "automatically_approve_accounts": false},
		accountID: tenantAccountID(r.t), base: portalBase(r), stamps: newStamps()}
	p.assign(r, providerTextFields, providerFlagFields)
	class := providerClass(p.kind)
	if class == providerGitHub { // after_initialize
		p.text["branding_state"] = "custom_branded"
		setDefault(p.text, "system_name", "github")
		setDefault(p.text, "name", providerHumanKind[class])
	}
	if strings.TrimSpace(p.text["system_name"]) == "" { // before_validation: generate_system_name
		sn := strings.ReplaceAll(parameterize(strings.TrimSpace(p.text["name"])), "-", "_")
		if sn == "" {
			sn = class + "_" + randomHex(6)
		}
		p.text["system_name"] = sn
	}
	setDefault(p.text, "name", providerHumanKind[class]) // then set_defaults
	if a := validateSignInProvider(r.t, p); a.code != 0 {
		return a
	}
	p.id = r.t.id()
	r.t.signIn[p.id] = p
	return created("authentication_provider", p.json())
}

// setDefault is Ruby's attr ||= v: only a NULL (absent) attribute takes v; a blank one stays.
func setDefault(text map[string]string, key, v string) {
	if _, set := text[key]; !set {
		text[key] = v
	}
}

// updateSignInProvider is AuthenticationProvidersController#update: only client_id, client_secret,
// published, site, skip_ssl_certificate_verification and automatically_approve_accounts are taken, any
// other attribute is dropped silently (kind and type are attr_readonly besides); none of the model's
// attributes sent is 400 (params.require). The validations are create's.
func updateSignInProvider(r *request) answer {
	return withSignInProvider(r, func(p *signInProvider) answer {
		if !anyOf(r, providerCreateFields) && !r.top["authentication_provider"] {
			return parameterMissing("authentication_provider")
		}
		return p.update(r, providerUpdateText, providerUpdateFlags)
	})
}

// update assigns the text and flag parameters given to a copy of p, validates it as create does, and
// keeps it when valid (a refused update changes nothing).
func (p *signInProvider) update(r *request, text, flags []string) answer {
	next := *p
	next.text, next.flags = maps.Clone(p.text), maps.Clone(p.flags)
	next.assign(r, text, flags)
	if a := validateSignInProvider(r.t, &next); a.code != 0 {
		return a
	}
	next.touch()
	*p = next
	return ok("authentication_provider", p.json())
}

// reservedProviderNames are the system names porta keeps for its own providers (authentication_provider.rb:24-27).
var reservedProviderNames = []string{"redhat-customer-portal", "service-discovery"}

// providerURLPattern stands for URI::DEFAULT_PARSER.make_regexp(%w[http https]), which Rails' format
// validator matches unanchored: somewhere an "http:" or "https:" followed by a URI character.
var providerURLPattern = regexp.MustCompile(`https?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]`)

// validateSignInProvider is AuthenticationProvider's validations (authentication_provider.rb:15-40) and its
// class's (keycloak.rb, auth0.rb):
//   - kind unique among the tenant's developer providers; system_name present, well formed
//     (system_name.rb:15: "invalid"), unique in the tenant, not reserved;
//   - name and identifier_key present; strings of at most 255 characters;
//   - client_id and client_secret present unless a 3scale-branded GitHub one;
//   - site, token_url, authorize_url and user_info_url http(s) URLs when not blank: "Invalid URL format"
//     (config/locales/en.yml:1956);
//   - Keycloak and Auth0: site present and without whitespace (en.yml:1978).
func validateSignInProvider(t *tenant, p *signInProvider) answer {
	errs := fieldErrors{}
	blank := func(f string) bool { return strings.TrimSpace(p.text[f]) == "" }
	for _, o := range t.signIn {
		// kind: uniqueness scope [account_id, account_type], if: :developer? (authentication_provider.rb:16).
		if o.id != p.id && o.kind == p.kind && !p.admin && !o.admin {
			errs.add("kind", "has already been taken")
			break
		}
	}
	sn := p.text["system_name"]
	switch {
	case blank("system_name"):
		errs.add("system_name", "can't be blank")
	case !systemNamePattern.MatchString(sn):
		errs.add("system_name", "invalid")
	}
	if sn != "" {
		for _, o := range t.signIn {
			if o.id != p.id && o.text["system_name"] == sn {
				errs.add("system_name", "has already been taken")
				break
			}
		}
	}
	if slices.Contains(reservedProviderNames, sn) {
		errs.add("system_name", "is reserved")
	}
	for _, f := range []string{"name", "identifier_key"} {
		if blank(f) {
			errs.add(f, "can't be blank")
		}
	}
	if p.oauthConfigRequired() {
		for _, f := range []string{"client_id", "client_secret"} {
			if blank(f) {
				errs.add(f, "can't be blank")
			}
		}
	}
	for _, f := range []string{"site", "token_url", "authorize_url", "user_info_url"} {
		if !blank(f) && !providerURLPattern.MatchString(p.text[f]) {
			errs.add(f, "Invalid URL format")
		}
	}
	// verify_valid_kind_for_account_type (authentication_provider.rb:42-45,148-154): an admin-portal
	// provider is Keycloak or Auth0 only (en.yml:1980).
	if p.admin && !slices.Contains(adminProviderKinds, p.kind) {
		errs.add("kind", "unavailable for this account type")
	}
	if c := providerClass(p.kind); c == providerKeycloak || c == providerAuth0 {
		if blank("site") {
			errs.add("site", "can't be blank")
		}
		if strings.ContainsAny(p.text["site"], " \t\n\r\f\v") {
			errs.add("site", "can't contain whitespaces")
		}
	}
	for _, f := range providerTextFields {
		if utf8.RuneCountInString(p.text[f]) > 255 {
			errs.add(f, "is too long (maximum is 255 characters)")
		}
	}
	return errs.answer()
}

// tenantAccountID is the tenant's own account id: its account in master's books for a tenant master
// made, else the one AddTenant gave it (tenant.ownAccountID).
func tenantAccountID(t *tenant) int64 {
	if t.account != nil {
		return t.account.id
	}
	return t.ownAccountID
}

// AccountID is the tenant's own account id, which its sign-in providers carry as account_id; 0 for an
// unknown tenant.
func (s *Simulator) AccountID(tenantName string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.names[tenantName]; t != nil {
		return tenantAccountID(t)
	}
	return 0
}

// portalBase is the developer portal's URL: the request's scheme (https unless Options.PlainHTTP) and
// the tenant's domain, <slug>.<superdomain> (master's books have it for a tenant master made).
func portalBase(r *request) string {
	if a := r.t.account; a != nil && a.provider != nil {
		return a.provider.scheme + "://" + a.provider.domain
	}
	return r.sim.scheme + "://" + r.t.name + "." + r.sim.superdomain
}
