package client

import (
	"context"
	"encoding/json"
	"net/url"
)

// Policy is one policy of a product's APIcast policy chain.
type Policy struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Configuration json.RawMessage `json:"configuration"`
	Enabled       bool            `json:"enabled"`
}

type policiesConfig struct {
	PoliciesConfig []Policy `json:"policies_config"`
}

// GetPolicies reads the policy chain (GET /admin/api/services/{service_id}/proxy/policies.json).
func (c *Client) GetPolicies(ctx context.Context, serviceID int64) ([]Policy, error) {
	var out policiesConfig
	err := c.do(ctx, call{method: "GET", endpoint: "/admin/api/services/{service_id}/proxy/policies.json", args: []any{serviceID}}, &out)
	return out.PoliciesConfig, err
}

// UpdatePolicies replaces the policy chain (PUT /admin/api/services/{service_id}/proxy/policies.json):
// porta takes the chain as a JSON array in the policies_config form field.
func (c *Client) UpdatePolicies(ctx context.Context, serviceID int64, chain []Policy) ([]Policy, error) {
	for i := range chain {
		if len(chain[i].Configuration) == 0 {
			chain[i].Configuration = json.RawMessage(`{}`)
		}
	}
	raw, err := json.Marshal(chain)
	if err != nil {
		return nil, err
	}
	var out policiesConfig
	err = c.do(ctx, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/proxy/policies.json", args: []any{serviceID},
		form: url.Values{"policies_config": {string(raw)}}}, &out)
	return out.PoliciesConfig, err
}
