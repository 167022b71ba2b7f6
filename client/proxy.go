package client

import (
	"context"
	"net/url"
	"sort"
)

// Proxy holds a product's gateway settings: public base URLs, credentials, the secret token, gateway
// error responses and OIDC issuer.
type Proxy struct {
	ServiceID                  int64  `json:"service_id"`
	Endpoint                   string `json:"endpoint"`
	SandboxEndpoint            string `json:"sandbox_endpoint"`
	APIBackend                 string `json:"api_backend,omitempty"`
	CredentialsLocation        string `json:"credentials_location"`
	AuthUserKey                string `json:"auth_user_key"`
	AuthAppID                  string `json:"auth_app_id"`
	AuthAppKey                 string `json:"auth_app_key"`
	HostnameRewrite            string `json:"hostname_rewrite"`
	SecretToken                string `json:"secret_token"`
	ErrorStatusAuthFailed      int    `json:"error_status_auth_failed"`
	ErrorHeadersAuthFailed     string `json:"error_headers_auth_failed"`
	ErrorAuthFailed            string `json:"error_auth_failed"`
	ErrorStatusAuthMissing     int    `json:"error_status_auth_missing"`
	ErrorHeadersAuthMissing    string `json:"error_headers_auth_missing"`
	ErrorAuthMissing           string `json:"error_auth_missing"`
	ErrorStatusNoMatch         int    `json:"error_status_no_match"`
	ErrorHeadersNoMatch        string `json:"error_headers_no_match"`
	ErrorNoMatch               string `json:"error_no_match"`
	ErrorStatusLimitsExceeded  int    `json:"error_status_limits_exceeded"`
	ErrorHeadersLimitsExceeded string `json:"error_headers_limits_exceeded"`
	ErrorLimitsExceeded        string `json:"error_limits_exceeded"`
	OIDCIssuerEndpoint         string `json:"oidc_issuer_endpoint"`
	OIDCIssuerType             string `json:"oidc_issuer_type"`
	JWTClaimWithClientID       string `json:"jwt_claim_with_client_id"`
	JWTClaimWithClientIDType   string `json:"jwt_claim_with_client_id_type"`
	DeploymentOption           string `json:"deployment_option,omitempty"`
	UpdatedAt                  string `json:"updated_at,omitempty"`
}

// ProxyParams are proxy attributes to write, by porta's names (endpoint, sandbox_endpoint,
// credentials_location, auth_user_key, error_status_auth_failed, oidc_issuer_endpoint...). Only the
// attributes given are sent.
type ProxyParams map[string]string

// GetProxy reads a product's proxy (GET /admin/api/services/{service_id}/proxy.json).
func (c *Client) GetProxy(ctx context.Context, serviceID int64) (*Proxy, error) {
	return one[Proxy](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/proxy.json", args: []any{serviceID}})
}

// UpdateProxy writes proxy attributes (PATCH /admin/api/services/{service_id}/proxy.json).
func (c *Client) UpdateProxy(ctx context.Context, serviceID int64, p ProxyParams) (*Proxy, error) {
	f := url.Values{}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.Set(k, p[k])
	}
	return one[Proxy](ctx, c, call{method: "PATCH", endpoint: "/admin/api/services/{service_id}/proxy.json", args: []any{serviceID}, form: f})
}

// DeployProxy promotes the product's current configuration to the staging gateway
// (POST /admin/api/services/{service_id}/proxy/deploy.json).
func (c *Client) DeployProxy(ctx context.Context, serviceID int64) error {
	return c.do(ctx, call{method: "POST", endpoint: "/admin/api/services/{service_id}/proxy/deploy.json", args: []any{serviceID}, form: url.Values{}}, nil)
}

// OIDCConfiguration says which OAuth 2.0 flows a product's OIDC clients allow.
type OIDCConfiguration struct {
	StandardFlowEnabled       bool `json:"standard_flow_enabled"`
	ImplicitFlowEnabled       bool `json:"implicit_flow_enabled"`
	ServiceAccountsEnabled    bool `json:"service_accounts_enabled"`
	DirectAccessGrantsEnabled bool `json:"direct_access_grants_enabled"`
}

// GetOIDCConfiguration reads the OIDC flows (GET /admin/api/services/{service_id}/proxy/oidc_configuration.json).
func (c *Client) GetOIDCConfiguration(ctx context.Context, serviceID int64) (*OIDCConfiguration, error) {
	return one[OIDCConfiguration](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/proxy/oidc_configuration.json", args: []any{serviceID}})
}

// UpdateOIDCConfiguration writes the OIDC flows (PATCH /admin/api/services/{service_id}/proxy/oidc_configuration.json).
func (c *Client) UpdateOIDCConfiguration(ctx context.Context, serviceID int64, o OIDCConfiguration) (*OIDCConfiguration, error) {
	f := form{}.boolPtr("standard_flow_enabled", &o.StandardFlowEnabled).boolPtr("implicit_flow_enabled", &o.ImplicitFlowEnabled).
		boolPtr("service_accounts_enabled", &o.ServiceAccountsEnabled).boolPtr("direct_access_grants_enabled", &o.DirectAccessGrantsEnabled)
	return one[OIDCConfiguration](ctx, c, call{method: "PATCH", endpoint: "/admin/api/services/{service_id}/proxy/oidc_configuration.json", args: []any{serviceID}, form: f.values()})
}
