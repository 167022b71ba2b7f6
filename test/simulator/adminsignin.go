package simulator

import (
	"strings"
)

// The admin portal's sign-in providers (SSO for the tenant's own users), as porta's admin API serves
// them: Admin::Api::Account::AuthenticationProvidersController
// (app/controllers/admin/api/account/authentication_providers_controller.rb, APC below), the same
// AuthenticationProvider model as the developer portal's (portal_settings.go) with account_type
// "provider" (the tenant's self_authentication_providers), rendered by AuthenticationProviderRepresenter
// through ProviderOAuthFlowPresenter (app/presenters/provider_oauth_flow_presenter.rb).
//
// The two kinds live in one table: the developer portal's list and reads never show an admin-portal
// provider, nor these a developer one (404), but a system_name is unique across both
// (has_system_name uniqueness_scope: [:account_id], authentication_provider.rb:15).

// adminProviderKinds are AuthenticationProvider::AVAILABLE for the provider account type
// (authentication_provider.rb:42-45): Keycloak and Auth0; any other kind builds a Custom one, which
// verify_valid_kind_for_account_type refuses (:148-154).
var adminProviderKinds = []string{providerKeycloak, providerAuth0}

// Parameters of APC: DEFAULT_PARAMS (APC:62), and kind, system_name and name on create (APC:64-70).
var (
	adminProviderText       = []string{"client_id", "client_secret", "site"}
	adminProviderFlags      = []string{"skip_ssl_certificate_verification", "published"}
	adminProviderCreateText = append([]string{"system_name", "name"}, adminProviderText...)
	adminProviderAll        = append(append([]string{"kind"}, adminProviderCreateText...), adminProviderFlags...)
)

func (p *signInProvider) forDevelopers() bool { return !p.admin }
func (p *signInProvider) forAdmins() bool     { return p.admin }

// accountType is the account_type column: "provider" for the admin portal's, "developer" otherwise.
func (p *signInProvider) accountType() string {
	if p.admin {
		return "provider"
	}
	return "developer"
}

// adminSSOPublished: the tenant has a published admin-portal provider, what EnforceSSOValidator needs
// (account.self_authentication_providers.published, enforce_sso_validator.rb:58-60).
func (t *tenant) adminSSOPublished() bool {
	for _, p := range t.signIn {
		if p.admin && p.flags["published"] {
			return true
		}
	}
	return false
}

// adminBase is the admin portal's URL, the callback's endpoint of its providers
// (ThreeScale::Domain.callback_endpoint with the request's host, app/lib/three_scale/domain.rb:15-20;
// ProviderOAuthFlowPresenter#account_domain is the request's host): the tenant's admin domain.
func adminBase(r *request) string {
	if a := r.t.account; a != nil && a.provider != nil {
		return a.provider.scheme + "://" + a.provider.adminDomain
	}
	return r.sim.scheme + "://" + r.sim.adminDomain(r.t.name)
}

// adminSignInRoutes are routes.rb:522-527: resources :authentication_providers, except: new edit
// destroy, with a member PUT change_published, under namespace :account.
func adminSignInRoutes() []route {
	const base = "/admin/api/account/authentication_providers"
	return []route{
		// APC#index (APC:30-33): the tenant's admin-portal providers, whole (not paginated).
		handle("GET", base+".json", func(r *request) answer {
			return wrapList("authentication_providers", "authentication_provider", r.t.signIn, (*signInProvider).forAdmins, (*signInProvider).json, r.form, false)
		}),
		handle("POST", base+".json", createAdminSignIn),
		handle("GET", base+"/{id}.json", func(r *request) answer {
			return withAdminSignIn(r, func(p *signInProvider) answer { return ok("authentication_provider", p.json()) })
		}),
		handle("PUT", base+"/{id}.json", updateAdminSignIn),
		// change_published has a route but no action in APC: Rails raises AbstractController::ActionNotFound,
		// a 404. The admin portal publishes through Provider::Admin::Account::AuthenticationProviderPublishingController.
		handle("PUT", base+"/{id}/change_published.json", func(*request) answer { return notFound() }),
		// No destroy route: porta's router answers 404.
		handle("DELETE", base+"/{id}.json", func(*request) answer { return notFound() }),
	}
}

// withAdminSignIn finds {id} among the tenant's admin-portal providers (self_authentication_providers.find,
// APC:49-51): a developer one is 404 here.
func withAdminSignIn(r *request, f func(*signInProvider) answer) answer {
	p, found := r.t.signIn[r.params["id"]]
	if !found || !p.admin {
		return notFound()
	}
	return f(p)
}

// createAdminSignIn is APC#create (APC:13-18):
//   - params.require(:authentication_provider), then attributes.require(:kind): 400 when none of the
//     permitted attributes is sent, then when kind is missing or blank;
//   - only kind, system_name, name, client_id, client_secret, site, skip_ssl_certificate_verification
//     and published are taken (token_url, identifier_key, trust_email... are dropped); the columns'
//     defaults: identifier_key "id", username_key "login", the booleans false (db/schema.rb);
//   - build_kind lower-cases the kind; keycloak and auth0 are the classes allowed, any other kind is 422
//     {"errors":{"kind":["unavailable for this account type"]}} (en.yml:1980);
//   - system_name, when blank, from the name (generate_system_name), name defaulting to the class's
//     human_kind (set_defaults), as the developer portal's; then the validations of
//     validateSignInProvider (site required for Keycloak and Auth0, client id and secret required,
//     system_name unique across the tenant's providers of both kinds);
//   - the provider_sso rolling update (authorize_rolling_update, APC:57-59) is taken as on.
func createAdminSignIn(r *request) answer {
	if !anyOf(r, adminProviderAll) && !r.top["authentication_provider"] {
		return parameterMissing("authentication_provider")
	}
	if strings.TrimSpace(r.form.Get("kind")) == "" {
		return parameterMissing("kind")
	}
	p := &signInProvider{admin: true, kind: strings.ToLower(r.form.Get("kind")), text: map[string]string{"identifier_key": "id", "username_key": "login"},
		flags:     map[string]bool{"trust_email": false, "published": false, "skip_ssl_certificate_verification": false, "automatically_approve_accounts": false},
		accountID: tenantAccountID(r.t), base: adminBase(r), stamps: newStamps()}
	p.assign(r, adminProviderCreateText, adminProviderFlags)
	class := providerCustom
	for _, k := range adminProviderKinds {
		if p.kind == k {
			class = k
		}
	}
	if strings.TrimSpace(p.text["system_name"]) == "" { // before_validation: generate_system_name
		sn := strings.ReplaceAll(parameterize(strings.TrimSpace(p.text["name"])), "-", "_")
		if sn == "" {
			sn = class + "_" + randomHex(6)
		}
		p.text["system_name"] = sn
	}
	setDefault(p.text, "name", providerHumanKind[class])
	if a := validateSignInProvider(r.t, p); a.code != 0 {
		return a
	}
	p.id = r.t.id()
	r.t.signIn[p.id] = p
	return created("authentication_provider", p.json())
}

// updateAdminSignIn is APC#update (APC:22-26): authorize_changes first (APC:61-64): while the tenant
// enforces SSO, a published provider cannot be changed at all, 403 {"status":"Forbidden"}
// (CanCan::AccessDenied); then only client_id, client_secret, site, skip_ssl_certificate_verification
// and published are taken, none of the permitted sent is 400 (params.require). The validations are
// create's.
func updateAdminSignIn(r *request) answer {
	return withAdminSignIn(r, func(p *signInProvider) answer {
		if r.t.settings.enforceSSO && p.flags["published"] {
			return forbidden()
		}
		if !anyOf(r, adminProviderAll) && !r.top["authentication_provider"] {
			return parameterMissing("authentication_provider")
		}
		return p.update(r, adminProviderText, adminProviderFlags)
	})
}
