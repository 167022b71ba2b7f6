package client

import "context"

// The developer portal's settings and its "sign in with …" providers (porta
// app/controllers/admin/api/settings_controller.rb, authentication_providers_controller.rb).

// PortalSettings are a tenant's portal settings (app/representers/settings_representer.rb, under
// "settings"); HideService is nil until set.
type PortalSettings struct {
	UserAccountAreaEnabled      bool   `json:"useraccountarea_enabled"`
	HideService                 *bool  `json:"hide_service"`
	SignupsEnabled              bool   `json:"signups_enabled"`
	AccountApprovalRequired     bool   `json:"account_approval_required"`
	PublicSearch                bool   `json:"public_search"`
	AccountPlansUIVisible       bool   `json:"account_plans_ui_visible"`
	ChangeAccountPlanPermission string `json:"change_account_plan_permission"`
	ServicePlansUIVisible       bool   `json:"service_plans_ui_visible"`
	ChangeServicePlanPermission string `json:"change_service_plan_permission"`
	EnforceSSO                  bool   `json:"enforce_sso"`
}

// PortalSettingsParams are the settings to write; nil ones are not sent. (enforce_sso, about the admin
// portal's own sign-in, is not the developer portal's: it is never sent.)
type PortalSettingsParams struct {
	UserAccountAreaEnabled, HideService, SignupsEnabled, AccountApprovalRequired, PublicSearch *bool
	AccountPlansUIVisible, ServicePlansUIVisible                                               *bool
	ChangeAccountPlanPermission, ChangeServicePlanPermission                                   *string
}

func (p PortalSettingsParams) form() form {
	return form{}.boolPtr("useraccountarea_enabled", p.UserAccountAreaEnabled).boolPtr("hide_service", p.HideService).
		boolPtr("signups_enabled", p.SignupsEnabled).boolPtr("account_approval_required", p.AccountApprovalRequired).
		boolPtr("public_search", p.PublicSearch).boolPtr("account_plans_ui_visible", p.AccountPlansUIVisible).
		boolPtr("service_plans_ui_visible", p.ServicePlansUIVisible).strPtr("change_account_plan_permission", p.ChangeAccountPlanPermission).
		strPtr("change_service_plan_permission", p.ChangeServicePlanPermission)
}

// GetPortalSettings reads the portal's settings (GET /admin/api/settings.json).
func (c *Client) GetPortalSettings(ctx context.Context) (*PortalSettings, error) {
	return one[PortalSettings](ctx, c, call{method: "GET", endpoint: "/admin/api/settings.json"})
}

// UpdatePortalSettings writes the portal's settings (PUT /admin/api/settings.json) and returns them all.
func (c *Client) UpdatePortalSettings(ctx context.Context, p PortalSettingsParams) (*PortalSettings, error) {
	return one[PortalSettings](ctx, c, call{method: "PUT", endpoint: "/admin/api/settings.json", form: p.form().values()})
}

// AuthenticationProvider is one of the developer portal's "sign in with …" providers
// (app/representers/authentication_provider_representer.rb). porta answers with its client secret in
// clear: never log or show one.
type AuthenticationProvider struct {
	ID                             int64  `json:"id"`
	Kind                           string `json:"kind"`
	Name                           string `json:"name"`
	SystemName                     string `json:"system_name"`
	ClientID                       string `json:"client_id"`
	ClientSecret                   string `json:"client_secret"`
	Site                           string `json:"site"`
	TokenURL                       string `json:"token_url"`
	UserInfoURL                    string `json:"user_info_url"`
	AuthorizeURL                   string `json:"authorize_url"`
	IdentifierKey                  string `json:"identifier_key"`
	UsernameKey                    string `json:"username_key"`
	TrustEmail                     bool   `json:"trust_email"`
	Published                      bool   `json:"published"`
	SkipSSLCertificateVerification bool   `json:"skip_ssl_certificate_verification"`
	AutomaticallyApproveAccounts   bool   `json:"automatically_approve_accounts"`
	CallbackURL                    string `json:"callback_url"`
}

// AuthenticationProviderParams are a provider's attributes; empty and nil ones are not sent. porta
// takes Kind, Name, SystemName, TokenURL, UserInfoURL, AuthorizeURL, IdentifierKey, UsernameKey and
// TrustEmail on create only (update drops them).
type AuthenticationProviderParams struct {
	Kind, Name, SystemName, TokenURL, UserInfoURL, AuthorizeURL, IdentifierKey, UsernameKey string
	ClientID, ClientSecret, Site                                                            *string
	TrustEmail, Published, SkipSSLCertificateVerification, AutomaticallyApproveAccounts     *bool
}

func (p AuthenticationProviderParams) form(create bool) form {
	f := form{}.strPtr("client_id", p.ClientID).strPtr("client_secret", p.ClientSecret).strPtr("site", p.Site).
		boolPtr("published", p.Published).boolPtr("skip_ssl_certificate_verification", p.SkipSSLCertificateVerification).
		boolPtr("automatically_approve_accounts", p.AutomaticallyApproveAccounts)
	if create {
		f = f.str("kind", p.Kind).str("name", p.Name).str("system_name", p.SystemName).str("token_url", p.TokenURL).
			str("user_info_url", p.UserInfoURL).str("authorize_url", p.AuthorizeURL).str("identifier_key", p.IdentifierKey).
			str("username_key", p.UsernameKey).boolPtr("trust_email", p.TrustEmail)
	}
	return f
}

// ListAuthenticationProviders lists the developer portal's sign-in providers
// (GET /admin/api/authentication_providers.json); porta does not page them.
func (c *Client) ListAuthenticationProviders(ctx context.Context) ([]AuthenticationProvider, error) {
	return list[AuthenticationProvider](ctx, c, "/admin/api/authentication_providers.json", false)
}

// CreateAuthenticationProvider creates a sign-in provider (POST /admin/api/authentication_providers.json).
// A lost answer is settled by its kind, unique in the tenant.
func (c *Client) CreateAuthenticationProvider(ctx context.Context, p AuthenticationProviderParams) (*AuthenticationProvider, error) {
	return settled(ctx, c, func() (*AuthenticationProvider, error) {
		return one[AuthenticationProvider](ctx, c, call{method: "POST", endpoint: "/admin/api/authentication_providers.json", form: p.form(true).values()})
	}, func() (*AuthenticationProvider, error) {
		all, err := c.ListAuthenticationProviders(ctx)
		return first(all, err, func(a AuthenticationProvider) bool { return a.Kind == p.Kind })
	})
}

// UpdateAuthenticationProvider updates what porta lets change of a sign-in provider
// (PUT /admin/api/authentication_providers/{id}.json). porta has no route to delete one.
func (c *Client) UpdateAuthenticationProvider(ctx context.Context, id int64, p AuthenticationProviderParams) (*AuthenticationProvider, error) {
	return one[AuthenticationProvider](ctx, c, call{method: "PUT", endpoint: "/admin/api/authentication_providers/{id}.json", args: []any{id},
		form: p.form(false).values()})
}
