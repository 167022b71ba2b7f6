package client

import (
	"context"
	"net/url"
	"testing"
)

// porta's answers for the portal's settings and sign-in providers (app/representers/
// settings_representer.rb, authentication_provider_representer.rb).
const (
	portaSettings = `{"settings":{"useraccountarea_enabled":true,"signups_enabled":false,"account_approval_required":true,"public_search":false,
		"account_plans_ui_visible":false,"change_account_plan_permission":"request","service_plans_ui_visible":false,
		"change_service_plan_permission":"direct","enforce_sso":false}}`
	portaProvider = `{"authentication_provider":{"id":7,"kind":"keycloak","account_type":"developer","name":"SSO","system_name":"sso",
		"client_id":"portal","client_secret":"s3cret","site":"https://sso.example.com/realms/dev","identifier_key":"id","username_key":"login",
		"trust_email":false,"published":true,"skip_ssl_certificate_verification":false,"automatically_approve_accounts":false,
		"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z","callback_url":"https://acme.example.com/auth/sso/callback"}}`
)

var (
	wantSettings = &PortalSettings{UserAccountAreaEnabled: true, AccountApprovalRequired: true, ChangeAccountPlanPermission: "request",
		ChangeServicePlanPermission: "direct"}
	wantProvider = &AuthenticationProvider{ID: 7, Kind: "keycloak", Name: "SSO", SystemName: "sso", ClientID: "portal", ClientSecret: "s3cret",
		Site: "https://sso.example.com/realms/dev", IdentifierKey: "id", UsernameKey: "login", Published: true,
		CallbackURL: "https://acme.example.com/auth/sso/callback"}
)

// portalSettingsContractCases are the contract cases of the portal's settings and sign-in providers.
var portalSettingsContractCases = map[string]exchangeCase{
	"GetPortalSettings": {
		call:       func(ctx context.Context, c *Client) (any, error) { return c.GetPortalSettings(ctx) },
		exchanges:  []exchange{{seenRequest{Method: "GET", Path: "/admin/api/settings.json"}, 200, portaSettings}},
		wantResult: wantSettings,
	},
	"UpdatePortalSettings: only what is given": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdatePortalSettings(ctx, PortalSettingsParams{SignupsEnabled: boolp(false), ChangeServicePlanPermission: strp("direct")})
		},
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/settings.json",
			Form: url.Values{"signups_enabled": {"false"}, "change_service_plan_permission": {"direct"}}}, 200, portaSettings}},
		wantResult: wantSettings,
	},
	"ListAuthenticationProviders": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListAuthenticationProviders(ctx) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/admin/api/authentication_providers.json"}, 200,
			`{"authentication_providers":[` + portaProvider + `]}`}},
		wantResult: []AuthenticationProvider{*wantProvider},
	},
	"CreateAuthenticationProvider": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateAuthenticationProvider(ctx, AuthenticationProviderParams{Kind: "keycloak", Name: "SSO", SystemName: "sso",
				ClientID: strp("portal"), ClientSecret: strp("s3cret"), Site: strp("https://sso.example.com/realms/dev"), Published: boolp(true)})
		},
		exchanges: []exchange{{seenRequest{Method: "POST", Path: "/admin/api/authentication_providers.json", Form: url.Values{"kind": {"keycloak"},
			"name": {"SSO"}, "system_name": {"sso"}, "client_id": {"portal"}, "client_secret": {"s3cret"}, "site": {"https://sso.example.com/realms/dev"},
			"published": {"true"}}}, 201, portaProvider}},
		wantResult: wantProvider,
	},
	"UpdateAuthenticationProvider: what porta lets change, no more": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdateAuthenticationProvider(ctx, 7, AuthenticationProviderParams{Kind: "auth0", Name: "Other", ClientSecret: strp("n3w"), Published: boolp(false)})
		},
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/authentication_providers/7.json",
			Form: url.Values{"client_secret": {"n3w"}, "published": {"false"}}}, 200, portaProvider}},
		wantResult: wantProvider,
	},
}

// TestPortalSettingsCallsContract checks the portal settings' and sign-in providers' calls.
func TestPortalSettingsCallsContract(t *testing.T) {
	runExchangeCases(t, contractAdminURL, portalSettingsContractCases)
}
