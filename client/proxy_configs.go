package client

import (
	"context"
	"net/url"
)

// The environments of a product's proxy configurations, as porta's API description names them (porta
// also takes "staging" for "sandbox" in a path, and answers with "sandbox").
const (
	EnvironmentSandbox    = "sandbox"
	EnvironmentProduction = "production"
)

// ProxyConfig is one version of a product's APIcast configuration in an environment. Porta also sends
// the configuration itself ("content", the whole gateway configuration of the product); it is read and
// dropped.
type ProxyConfig struct {
	ID          int64  `json:"id"`
	Version     int    `json:"version"`
	Environment string `json:"environment"`
}

// LatestProxyConfig reads the highest version of a product's configuration in an environment
// (GET /admin/api/services/{service_id}/proxy/configs/{environment}/latest.json). An environment that
// has none is answered 404: IsNotFound.
func (c *Client) LatestProxyConfig(ctx context.Context, serviceID int64, env string) (*ProxyConfig, error) {
	return one[ProxyConfig](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/proxy/configs/{environment}/latest.json",
		args: []any{serviceID, env}})
}

// ListProxyConfigs lists every version of a product's configuration in an environment, oldest first
// (GET /admin/api/services/{service_id}/proxy/configs/{environment}.json; not paginated).
func (c *Client) ListProxyConfigs(ctx context.Context, serviceID int64, env string) ([]ProxyConfig, error) {
	return list[ProxyConfig](ctx, c, "/admin/api/services/{service_id}/proxy/configs/{environment}.json", false, serviceID, env)
}

// PromoteProxyConfig copies version of a product's configuration in env to the environment to, where it
// keeps its version number (POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json,
// answered 201). Porta refuses with 422 "version has already been taken" when to holds that version
// already (HasAlreadyBeenTaken(err, "version")), e.g. a version promoted twice.
func (c *Client) PromoteProxyConfig(ctx context.Context, serviceID int64, env string, version int, to string) (*ProxyConfig, error) {
	return one[ProxyConfig](ctx, c, call{method: "POST", endpoint: "/admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json",
		args: []any{serviceID, env, version}, form: url.Values{"to": {to}}})
}
