package client

import "context"

// Backend is a 3scale backend API.
type Backend struct {
	ID              int64  `json:"id"`
	Name            string `json:"name"`
	SystemName      string `json:"system_name"`
	Description     string `json:"description"`
	PrivateEndpoint string `json:"private_endpoint"`
	AccountID       int64  `json:"account_id"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

// BackendParams are the writable attributes of a backend API; empty ones are not sent.
type BackendParams struct {
	Name            string
	SystemName      string // only on create
	Description     *string
	PrivateEndpoint string
}

func (p BackendParams) form() form {
	return form{}.str("name", p.Name).str("system_name", p.SystemName).strPtr("description", p.Description).
		str("private_endpoint", p.PrivateEndpoint)
}

// ListBackends lists all backend APIs of the tenant (GET /admin/api/backend_apis.json, paginated).
func (c *Client) ListBackends(ctx context.Context) ([]Backend, error) {
	return list[Backend](ctx, c, "/admin/api/backend_apis.json", true)
}

// GetBackend reads one backend API (GET /admin/api/backend_apis/{id}.json).
func (c *Client) GetBackend(ctx context.Context, id int64) (*Backend, error) {
	return one[Backend](ctx, c, call{method: "GET", endpoint: "/admin/api/backend_apis/{id}.json", args: []any{id}})
}

// CreateBackend creates a backend API (POST /admin/api/backend_apis.json); 3scale adds its hits metric.
// A create whose answer was lost is settled by its system name (settle.go).
func (c *Client) CreateBackend(ctx context.Context, p BackendParams) (*Backend, error) {
	return settledByName(ctx, c, p.SystemName, func() (*Backend, error) {
		return one[Backend](ctx, c, call{method: "POST", endpoint: "/admin/api/backend_apis.json", form: p.form().values()})
	}, func() (*Backend, error) {
		all, err := c.ListBackends(ctx)
		return first(all, err, func(x Backend) bool { return x.SystemName == p.SystemName })
	})
}

// UpdateBackend updates a backend API (PUT /admin/api/backend_apis/{id}.json).
func (c *Client) UpdateBackend(ctx context.Context, id int64, p BackendParams) (*Backend, error) {
	p.SystemName = "" // immutable in 3scale: never sent on update
	return one[Backend](ctx, c, call{method: "PUT", endpoint: "/admin/api/backend_apis/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteBackend deletes a backend API (DELETE /admin/api/backend_apis/{id}.json). porta refuses with 403
// while a product uses it: see IsInUse.
func (c *Client) DeleteBackend(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/backend_apis/{id}.json", args: []any{id}}, nil)
}
