package client

import "context"

// BackendUsage says that a product routes a path to a backend API.
type BackendUsage struct {
	ID        int64  `json:"id"`
	Path      string `json:"path"`
	ServiceID int64  `json:"service_id"`
	BackendID int64  `json:"backend_id"`
}

// BackendUsageParams are the writable attributes of a backend usage; BackendAPIID only on create.
type BackendUsageParams struct {
	BackendAPIID int64
	Path         string
}

// ListBackendUsages lists the backends a product uses (GET /admin/api/services/{service_id}/backend_usages.json).
// Porta answers a bare array, paginated (paginate only: :index, per_page at most 500: porta
// app/controllers/admin/api/services/backend_usages_controller.rb:14,19), read page by page.
func (c *Client) ListBackendUsages(ctx context.Context, serviceID int64) ([]BackendUsage, error) {
	return list[BackendUsage](ctx, c, "/admin/api/services/{service_id}/backend_usages.json", true, serviceID)
}

// CreateBackendUsage adds a backend to a product (POST /admin/api/services/{service_id}/backend_usages.json).
func (c *Client) CreateBackendUsage(ctx context.Context, serviceID int64, p BackendUsageParams) (*BackendUsage, error) {
	f := form{}.int("backend_api_id", p.BackendAPIID).str("path", p.Path)
	return settled(ctx, c, func() (*BackendUsage, error) {
		return one[BackendUsage](ctx, c, call{method: "POST", endpoint: "/admin/api/services/{service_id}/backend_usages.json", args: []any{serviceID}, form: f.values()})
	}, func() (*BackendUsage, error) {
		us, err := c.ListBackendUsages(ctx, serviceID)
		return first(us, err, func(u BackendUsage) bool { return u.BackendID == p.BackendAPIID })
	})
}

// UpdateBackendUsage changes the path of a backend usage (PUT /admin/api/services/{service_id}/backend_usages/{id}.json).
func (c *Client) UpdateBackendUsage(ctx context.Context, serviceID, id int64, p BackendUsageParams) (*BackendUsage, error) {
	f := form{}.str("path", p.Path)
	return one[BackendUsage](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/backend_usages/{id}.json", args: []any{serviceID, id}, form: f.values()})
}

// DeleteBackendUsage removes a backend from a product (DELETE /admin/api/services/{service_id}/backend_usages/{id}.json).
func (c *Client) DeleteBackendUsage(ctx context.Context, serviceID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/services/{service_id}/backend_usages/{id}.json", args: []any{serviceID, id}}, nil)
}
