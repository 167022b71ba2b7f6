package simulator

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// The tenant's own settings as its Admin API serves them, JSON only:
//
//   - its provider account: Admin::Api::ProvidersController (app/controllers/admin/api/providers_controller.rb,
//     PRC below; routes, config/routes.rb:517-518), rendered by AccountRepresenter
//     (app/representers/account_representer.rb) as master's API renders it (account.json, providerJSON);
//   - its web hook: Admin::Api::WebHooksController (app/controllers/admin/api/web_hooks_controller.rb,
//     WHC below; routes, config/routes.rb:728-730), the WebHook model (app/models/web_hook.rb) and
//     WebHookRepresenter (app/representers/web_hook_representer.rb).
//
// The provider account is the one the simulator already holds: for a tenant master made, its account
// in master's books (tenant.account), so that master's API and the tenant's own see one account; for a
// tenant of Options.Tenants or AddTenant, which master's books lack, one made on first use
// (tenantProvider).
//
// Not modeled: XML (porta answers provider.xml with Account#to_xml and webhooks.xml 406, WHC:3-4; here
// .xml paths have no route), conditional GETs (Stale, ETag and 304), the 422 "Wrong type for parameter:
// account" of a scalar account=... (ApiSupport::Params#wrap_parameters_check,
// app/lib/api_support/params.rb:25-35), the query string not being wrapped (Rails wraps the body's
// parameters only; here, as elsewhere in the simulator, the query's count too), and the web hook's
// deliveries and failures (/admin/api/webhooks/failures).

func providerRoutes() []route {
	return []route{
		// show: respond_with current_account (PRC:9-11), 200 {"account":{...}} (wraps_resource,
		// account_representer.rb:8).
		handle("GET", "/admin/api/provider.json", func(r *request) answer {
			return ok("account", r.sim.tenantProvider(r.t).json())
		}),
		handle("PUT", "/admin/api/provider.json", updateOwnProvider),
		// porta routes no show for the web hook (resource :webhooks, only: [:update], config/routes.rb:728):
		// Rails finds no route and its public exceptions app answers the .json request 404 with
		// {"status":404,"error":"Not Found"} (ActionDispatch::PublicExceptions; porta sets no
		// exceptions_app). The web hook can be read only from a PUT's answer.
		handle("GET", "/admin/api/webhooks.json", func(*request) answer {
			return answer{http.StatusNotFound, map[string]any{"status": http.StatusNotFound, "error": "Not Found"}}
		}),
		handle("PUT", "/admin/api/webhooks.json", updateWebHook),
	}
}

// tenantProvider is the tenant's provider account: its account in master's books, or for a tenant master
// did not make, the one it got on first use (tenant.ownAccount): id tenantAccountID, org_name the tenant's
// name, approved, with the domains and base URLs portalBase uses, no from_email (the no-reply address
// shows), a random access code (account.rb:108,554-556) and an admin, admin@<domain>, whose email the
// support emails fall back to (account.rb:515-522). Its fields follow master's definitions
// (fields_definitions_source_root, app/lib/fields/fields.rb:181-204) when there is a master. s.mu held.
func (s *Simulator) tenantProvider(t *tenant) *account {
	if t.account != nil {
		return t.account
	}
	if t.ownAccount == nil {
		domain := t.name + "." + s.superdomain
		t.ownAccount = &account{id: t.ownAccountID, orgName: t.name, state: accountApproved, monthlyBillingEnabled: true,
			monthlyChargingEnabled: true, owner: s.master, stamps: newStamps(),
			provider: &providerInfo{tenant: t, domain: domain, adminDomain: s.adminDomain(t.name), scheme: s.scheme,
				noReply: "no-reply@" + s.superdomain, adminEmail: "admin@" + domain, siteAccessCode: randomHex(5),
				annotations: map[string]any{}}}
	}
	return t.ownAccount
}

// accountAttributes are Account.attribute_names (db/schema.rb:38-105, and id), which wrap_parameters
// Account wraps under "account" (PRC:3; ApiSupport::Params wraps form and JSON bodies alike,
// app/lib/api_support/params.rb:7).
var accountAttributes = []string{"id", "org_name", "org_legaladdress", "created_at", "updated_at", "provider", "buyer", "country_id",
	"provider_account_id", "domain", "telephone_number", "site_access_code", "credit_card_partial_number", "credit_card_expires_on",
	"credit_card_auth_code", "master", "billing_address_name", "billing_address_address1", "billing_address_address2",
	"billing_address_city", "billing_address_state", "billing_address_country", "billing_address_zip", "billing_address_phone",
	"org_legaladdress_cont", "city", "state_region", "state", "paid", "paid_at", "signs_legal_terms", "timezone", "delta",
	"from_email", "primary_business", "business_category", "zip", "extra_fields", "vat_code", "fiscal_code", "vat_rate",
	"invoice_footnote", "vat_zero_text", "default_account_plan_id", "default_service_id",
	"credit_card_authorize_net_payment_profile_token", "tenant_id", "self_domain", "s3_prefix", "prepared_assets_version",
	"sample_data", "proxy_configs_file_size", "proxy_configs_updated_at", "proxy_configs_content_type", "proxy_configs_file_name",
	"support_email", "finance_support_email", "billing_address_first_name", "billing_address_last_name", "email_all_users",
	"partner_id", "proxy_configs_conf_file_name", "proxy_configs_conf_content_type", "proxy_configs_conf_file_size",
	"proxy_configs_conf_updated_at", "hosted_proxy_deployed_at", "po_number", "state_changed_at"}

// providerPermitted are what PRC#provider_params permits of the account (PRC:22-24): neither org_name nor
// annotations nor the state, which only master's API changes.
var providerPermitted = []string{"from_email", "support_email", "finance_support_email", "site_access_code"}

// wrappedParams reads the parameters a controller gets under wrapper (params.require(wrapper) or
// params.fetch(wrapper)): the wrapper[...] keys or a JSON body's wrapper object when the wrapper was
// sent (Rails then wraps nothing); otherwise the top-level parameters that are among attributes, which
// wrap_parameters puts under it. sent is whether the wrapper holds anything; the values are those of
// permitted.
func wrappedParams(r *request, wrapper string, attributes, permitted []string) (values url.Values, sent bool) {
	values = url.Values{}
	if r.top[wrapper] {
		for _, k := range permitted {
			if v, found := r.form[wrapper+"["+k+"]"]; found {
				values[k] = v
			} else if v, found := r.form[k]; found {
				values[k] = v // a JSON body's {"<wrapper>":{...}}, which readForm flattens
			}
		}
		return values, true
	}
	for _, k := range attributes {
		if r.top[k] {
			sent = true
		}
	}
	for _, k := range permitted {
		if v, found := r.form[k]; found && sent {
			values[k] = v
		}
	}
	return values, sent
}

// updateOwnProvider is PRC#update (PRC:15-18): current_account.update(provider_params), where the
// account is params.required(:account) (400 "Required parameter missing: account" as text when no
// parameter is wrapped, application_controller.rb:50-52) and only from_email, support_email,
// finance_support_email and site_access_code are taken (others, org_name among them, are dropped
// silently). A value is stored as sent, a blank one too (no normalisation); what the representer then
// shows is the readers': a blank support_email shows the first admin's email, a blank
// finance_support_email the support email (account.rb:515-522); from_email shows the no-reply address
// only while never set, NULL (provider_methods.rb:234-236: `||`, so "" stays ""); a blank
// site_access_code is "no access code" (lib/developer_portal/lib/access_code_protection.rb:36-43).
// Validations (providerInfo.validate) failing: 422 {"errors":{"<attribute>":["..."]}} (the responder's
// resource errors, app/lib/three_scale/api/responder.rb:50-75) and nothing changes. Otherwise 200
// {"account":{...}} (responder.rb:12-13).
func updateOwnProvider(r *request) answer {
	a := r.sim.tenantProvider(r.t)
	params, sent := wrappedParams(r, "account", accountAttributes, providerPermitted)
	if !sent {
		return parameterMissing("account")
	}
	next := *a.provider
	for _, k := range providerPermitted {
		vs, set := params[k]
		if !set || len(vs) == 0 {
			continue
		}
		switch v := vs[0]; k {
		case "from_email":
			next.fromEmail = &v
		case "support_email":
			next.supportEmail = v
		case "finance_support_email":
			next.financeSupportEmail = v
		case "site_access_code":
			next.siteAccessCode = v
		}
	}
	if errs := a.validateProvider(&next); len(errs) > 0 {
		return errs.answer()
	}
	changed := next.supportEmail != a.provider.supportEmail || next.financeSupportEmail != a.provider.financeSupportEmail ||
		next.siteAccessCode != a.provider.siteAccessCode || (next.fromEmail == nil) != (a.provider.fromEmail == nil) ||
		(next.fromEmail != nil && *next.fromEmail != *a.provider.fromEmail)
	if changed {
		*a.provider = next
		a.touch() // Rails saves, and touches updated_at, only when an attribute changed
	}
	return ok("account", a.json())
}

// validateProvider is Account's validations of the attributes the provider endpoint changes, with p for
// the account's provider info: each at most 255 characters (account.rb:271-276), and support_email and
// finance_support_email in RE_EMAIL_OK unless blank, for a provider (account.rb:287-290;
// app/lib/authentication.rb:15-21), "should look like an email address". from_email and
// site_access_code have no format. Rails validates what the readers return (read_attribute_for_validation
// sends the attribute's reader), so a blank support email is validated as the admin's email it falls back
// to. The errors are keyed by attribute, in the order porta validates.
func (a *account) validateProvider(p *providerInfo) fieldErrors {
	errs := fieldErrors{}
	values := map[string]string{"site_access_code": p.siteAccessCode, "from_email": p.fromEmailShown(),
		"support_email": a.supportEmailOf(p), "finance_support_email": a.financeSupportEmailOf(p)}
	for _, k := range []string{"site_access_code", "from_email", "support_email", "finance_support_email"} {
		if utf8.RuneCountInString(values[k]) > 255 {
			errs.add(k, msgTooLong255)
		}
	}
	for _, k := range []string{"support_email", "finance_support_email"} {
		if v := values[k]; strings.TrimSpace(v) != "" && !emailFormat.MatchString(v) {
			errs.add(k, msgEmailBad)
		}
	}
	return errs
}

// msgEmailBad is Authentication::MSG_EMAIL_BAD (app/lib/authentication.rb:21).
const msgEmailBad = "should look like an email address"

// fromEmailShown is Account#from_email (provider_methods.rb:234-236): the column, or while it is NULL
// the installation's no-reply address (noreply_email, config/examples/settings.yml:41).
func (p *providerInfo) fromEmailShown() string {
	if p.fromEmail == nil {
		return p.noReply
	}
	return *p.fromEmail
}

// supportEmailOf is Account#support_email (account.rb:515-518): the column unless blank, else the first
// admin's email ("" when there is none: the representer leaves nil out).
func (a *account) supportEmailOf(p *providerInfo) string {
	if strings.TrimSpace(p.supportEmail) != "" {
		return p.supportEmail
	}
	return a.firstAdminEmail()
}

// financeSupportEmailOf is Account#finance_support_email (account.rb:520-522): the column unless blank,
// else the support email.
func (a *account) financeSupportEmailOf(p *providerInfo) string {
	if strings.TrimSpace(p.financeSupportEmail) != "" {
		return p.financeSupportEmail
	}
	return a.supportEmailOf(p)
}

// firstAdminEmail is first_admin&.email (account.rb:189-195): the email of the account's first admin
// user, the impersonation admin left out (user.rb:122,125), among the users of the tenant whose books
// hold the account; for an account no tenant's books hold users of (a tenant of AddTenant), the admin
// the simulator gives it (providerInfo.adminEmail).
func (a *account) firstAdminEmail() string {
	if a.owner != nil {
		ids := sortedIDs(a.owner.users, func(u *user) bool {
			return u.accountID == a.id && u.role == roleAdmin && u.username != impersonationAdminUsername
		})
		if len(ids) > 0 {
			return a.owner.users[ids[0]].email
		}
	}
	return a.provider.adminEmail
}

// webHookSwitches are WebHook.switchable_attributes, the web_hooks columns ending in "_on"
// (web_hook.rb:16-18), in the table's order (db/schema.rb:1465-1486): the events that fire the hook.
var webHookSwitches = []string{"account_created_on", "account_updated_on", "account_deleted_on", "user_created_on", "user_updated_on",
	"user_deleted_on", "application_created_on", "application_updated_on", "application_deleted_on", "account_plan_changed_on",
	"application_plan_changed_on", "application_user_key_updated_on", "application_key_created_on", "application_key_deleted_on",
	"application_suspended_on", "application_key_updated_on"}

// webHookFlags are the boolean attributes WHC permits (WHC:21-23): active, provider_actions and the
// switches.
var webHookFlags = append([]string{"active", "provider_actions"}, webHookSwitches...)

// webHookAttributes are WebHook.attribute_names (db/schema.rb:1462-1487, and id), which wrap_parameters
// WebHook wraps under "web_hook" (WHC:6).
var webHookAttributes = append([]string{"id", "account_id", "url", "created_at", "updated_at", "tenant_id",
	"push_application_content_type"}, webHookFlags...)

// webHook is a tenant's web_hooks row, the columns the representer shows. url is nil while NULL (a new
// row's); a flag is nil when NULL (a blank value cast by ActiveModel::Type::Boolean), and the
// representer leaves nil properties out.
type webHook struct {
	url   *string
	flags map[string]*bool
}

// newWebHook is current_account.build_web_hook (WHC:17-19): the columns' defaults, every flag false
// (db/schema.rb:1465-1486), url NULL.
func newWebHook() *webHook {
	w := &webHook{flags: map[string]*bool{}}
	for _, f := range webHookFlags {
		no := false
		w.flags[f] = &no
	}
	return w
}

// json is WebHookRepresenter (web_hook_representer.rb:6-12): url, active, provider_actions and the
// switches, nil ones left out; no id nor timestamps.
func (w *webHook) json() map[string]any {
	out := map[string]any{}
	if w.url != nil {
		out["url"] = *w.url
	}
	for k, v := range w.flags {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// updateWebHook is WHC#update (WHC:10-13): the tenant's web hook, or a new one (WHC:17-19), updated with
// params.fetch(:web_hook) permitting url, active, provider_actions and the switches (WHC:21-27). No
// wrapped parameter: 400 "Required parameter missing: web_hook" as text (fetch raises ParameterMissing,
// application_controller.rb:50-52). Booleans are cast as ActiveModel::Type::Boolean does (railsBool: blank
// is NULL). Validations (web_hook.rb:7): while active, url must match URI::DEFAULT_PARSER.make_regexp(%w[http
// https]), "is invalid"; that regexp is not anchored (uri 0.13's RFC2396_Parser#make_regexp,
// /(?=(?-mix:http|https):)X_ABS_URI/x, and X_ABS_URI can match the scheme alone), so porta takes any value holding
// "http:" or "https:", case-sensitively, and refuses the others, a NULL or blank url among them; url at
// most 255 characters, active or not. Refused: 422 {"errors":{"url":[...]}} and nothing is saved (a
// tenant without a web hook still has none). Saved: 200 {"webhook":{...}} (wraps_resource 'webhook',
// web_hook_representer.rb:4), the first successful PUT creating the row, even with nothing permitted in it.
func updateWebHook(r *request) answer {
	params, sent := wrappedParams(r, "web_hook", webHookAttributes, append([]string{"url"}, webHookFlags...))
	if !sent {
		return parameterMissing("web_hook")
	}
	next := newWebHook()
	if w := r.t.webhook; w != nil {
		next.url = w.url
		for k, v := range w.flags {
			next.flags[k] = v
		}
	}
	if vs, set := params["url"]; set && len(vs) > 0 {
		u := vs[0]
		next.url = &u
	}
	for _, k := range webHookFlags {
		if vs, set := params[k]; set && len(vs) > 0 {
			next.flags[k] = railsBool(vs[0])
		}
	}
	errs := fieldErrors{}
	u := ""
	if next.url != nil {
		u = *next.url
	}
	if active := next.flags["active"]; active != nil && *active && !webHookURLMatches(u) {
		errs.add("url", "is invalid")
	}
	if utf8.RuneCountInString(u) > 255 {
		errs.add("url", msgTooLong255)
	}
	if len(errs) > 0 {
		return errs.answer()
	}
	r.t.webhook = next
	return ok("webhook", next.json())
}

// webHookURLMatches is URI::DEFAULT_PARSER.make_regexp(%w[http https]).match?(url) (web_hook.rb:7;
// Rails' FormatValidator matches the unanchored regexp anywhere in the value): the lookahead
// (?=(?-mix:http|https):) then X_ABS_URI, which matches "scheme:" followed by nothing, so what decides is whether
// "http:" or "https:" occurs in the value.
func webHookURLMatches(u string) bool {
	return slices.ContainsFunc([]string{"http:", "https:"}, func(s string) bool { return strings.Contains(u, s) })
}
