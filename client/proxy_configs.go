package client

import (
	"context"
	"encoding/json"
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

// ProxyConfigContent is what of a configuration's content (Apicast::ProxySource with the proxy rules of
// the product then of its backends, app/services/apicast_v2_deployment_service.rb:24-29) apimsync checks
// a deploy by: the authentication mode, the proxy's attributes, its policy chain and its mapping rules.
type ProxyConfigContent struct {
	BackendVersion string `json:"backend_version"`
	Proxy          struct {
		Attributes  map[string]json.RawMessage `json:"-"`
		PolicyChain []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"policy_chain"`
		ProxyRules []ConfigRule `json:"proxy_rules"`
	} `json:"proxy"`
}

// ConfigRule is a mapping rule as a configuration holds it: a backend's under the backend usage's path
// (ProxyRuleDecorator#pattern), with its metric's system name.
type ConfigRule struct {
	HTTPMethod       string `json:"http_method"`
	Pattern          string `json:"pattern"`
	MetricID         int64  `json:"metric_id"`
	MetricSystemName string `json:"metric_system_name"`
	Delta            int64  `json:"delta"`
	Last             bool   `json:"last"`
}

// LatestProxyConfigContent reads the latest configuration of an environment with its content (the GET
// of LatestProxyConfig); nil when the environment has none (404).
func (c *Client) LatestProxyConfigContent(ctx context.Context, serviceID int64, env string) (*ProxyConfig, *ProxyConfigContent, error) {
	type withContent struct {
		ProxyConfig
		Content json.RawMessage `json:"content"`
	}
	got, err := one[withContent](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/proxy/configs/{environment}/latest.json",
		args: []any{serviceID, env}})
	if IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	content := &ProxyConfigContent{}
	raw := []byte(got.Content)
	var text string
	if json.Unmarshal(raw, &text) == nil { // a content sent as a JSON string holds the JSON document
		raw = []byte(text)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return &got.ProxyConfig, content, nil // nothing to check a deploy by: it holds nothing
	}
	var attrs struct {
		Proxy map[string]json.RawMessage `json:"proxy"`
	}
	if err := json.Unmarshal(raw, content); err != nil || json.Unmarshal(raw, &attrs) != nil {
		return nil, nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: "/admin/api/services/{service_id}/proxy/configs/{environment}/latest.json",
			Message: "cannot decode the configuration's content"}
	}
	content.Proxy.Attributes = attrs.Proxy
	return &got.ProxyConfig, content, nil
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
