package client

import "context"

// Product is a 3scale product, called "service" in the API.
type Product struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	SystemName       string `json:"system_name"`
	Description      string `json:"description"`
	State            string `json:"state"`
	DeploymentOption string `json:"deployment_option"`
	// BackendVersion is the authentication mode: "1" user key, "2" app id + key, "oidc".
	BackendVersion string `json:"backend_version"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

// ProductParams are the writable attributes of a product; empty ones are not sent.
type ProductParams struct {
	Name        string
	SystemName  string // only on create: porta keeps it immutable
	Description *string
	// DeploymentOption: "hosted" or "self_managed".
	DeploymentOption string
	// BackendVersion: "1", "2" or "oidc".
	BackendVersion string
}

func (p ProductParams) form() form {
	return form{}.str("name", p.Name).str("system_name", p.SystemName).strPtr("description", p.Description).
		str("deployment_option", p.DeploymentOption).str("backend_version", p.BackendVersion)
}

// ListProducts lists all products of the tenant (GET /admin/api/services.json, paginated).
func (c *Client) ListProducts(ctx context.Context) ([]Product, error) {
	return list[Product](ctx, c, "/admin/api/services.json", true)
}

// GetProduct reads one product (GET /admin/api/services/{id}.json).
func (c *Client) GetProduct(ctx context.Context, id int64) (*Product, error) {
	return one[Product](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{id}.json", args: []any{id}})
}

// CreateProduct creates a product (POST /admin/api/services.json); 3scale adds its hits metric.
// A create whose answer was lost is settled by its system name (settle.go).
func (c *Client) CreateProduct(ctx context.Context, p ProductParams) (*Product, error) {
	return settledByName(ctx, c, p.SystemName, func() (*Product, error) {
		return one[Product](ctx, c, call{method: "POST", endpoint: "/admin/api/services.json", form: p.form().values()})
	}, func() (*Product, error) {
		all, err := c.ListProducts(ctx)
		return first(all, err, func(x Product) bool { return x.SystemName == p.SystemName })
	})
}

// UpdateProduct updates a product (PUT /admin/api/services/{id}.json).
func (c *Client) UpdateProduct(ctx context.Context, id int64, p ProductParams) (*Product, error) {
	p.SystemName = "" // immutable in 3scale: never sent on update
	return one[Product](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteProduct deletes a product with its plans, metrics, mapping rules and backend usages
// (DELETE /admin/api/services/{id}.json).
func (c *Client) DeleteProduct(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/services/{id}.json", args: []any{id}}, nil)
}
