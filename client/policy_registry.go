package client

import (
	"context"
	"encoding/json"
)

// CustomPolicy is a custom APIcast policy of the tenant's policy registry: a name and version, and the
// policy's manifest (its JSON schema: name, version, summary, configuration...). A product's policy
// chain names it by name and version.
type CustomPolicy struct {
	ID      int64           `json:"id"`
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Schema  json.RawMessage `json:"schema"`
}

// CustomPolicyParams are the writable attributes of a custom policy. Porta requires the schema on every
// write, an update included; its version must equal Version. Empty Name and Version are not sent.
type CustomPolicyParams struct {
	Name    string
	Version string
	Schema  json.RawMessage
}

// form sends the schema as JSON text, as porta's API description declares it (a string, parsed by
// porta's Policy#schema=).
func (p CustomPolicyParams) form() form {
	return form{}.str("name", p.Name).str("version", p.Version).str("schema", string(p.Schema))
}

// ListCustomPolicies lists the tenant's custom policies (GET /admin/api/registry/policies.json; not
// paginated).
func (c *Client) ListCustomPolicies(ctx context.Context) ([]CustomPolicy, error) {
	return list[CustomPolicy](ctx, c, "/admin/api/registry/policies.json", false)
}

// GetCustomPolicy reads one custom policy (GET /admin/api/registry/policies/{id}.json).
func (c *Client) GetCustomPolicy(ctx context.Context, id int64) (*CustomPolicy, error) {
	return one[CustomPolicy](ctx, c, call{method: "GET", endpoint: "/admin/api/registry/policies/{id}.json", args: []any{id}})
}

// CreateCustomPolicy adds a custom policy to the registry (POST /admin/api/registry/policies.json).
func (c *Client) CreateCustomPolicy(ctx context.Context, p CustomPolicyParams) (*CustomPolicy, error) {
	return one[CustomPolicy](ctx, c, call{method: "POST", endpoint: "/admin/api/registry/policies.json", form: p.form().values()})
}

// UpdateCustomPolicy changes a custom policy (PUT /admin/api/registry/policies/{id}.json). Porta refuses
// to change the name, version or schema of a policy that a product's policy chain uses with 422 (the
// base error "This policy is currently being used in one of your APIs and cannot be modified.").
func (c *Client) UpdateCustomPolicy(ctx context.Context, id int64, p CustomPolicyParams) (*CustomPolicy, error) {
	return one[CustomPolicy](ctx, c, call{method: "PUT", endpoint: "/admin/api/registry/policies/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteCustomPolicy removes a custom policy from the registry (DELETE /admin/api/registry/policies/{id}.json).
// Porta refuses with 403 while a product's policy chain uses it: see IsInUse. A token without the
// policy_registry scope is refused with 403 too, which is IsForbidden.
func (c *Client) DeleteCustomPolicy(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/registry/policies/{id}.json", args: []any{id}}, nil)
}
