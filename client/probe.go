package client

import (
	"context"
	"net/http"
	"net/url"
)

// ProbeCredentials makes the cheapest authenticated call there is — the first product of the tenant
// (GET /admin/api/services.json with per_page=1) — to learn whether 3scale accepts the token. It answers
// nil, or an error classified as usual (Unauthorized/Forbidden for a refused token).
func (c *Client) ProbeCredentials(ctx context.Context) error {
	return c.do(ctx, call{method: http.MethodGet, endpoint: "/admin/api/services.json",
		query: url.Values{"page": {"1"}, "per_page": {"1"}}}, nil)
}
