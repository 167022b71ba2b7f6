package client

import "context"

// Limit caps a metric's usage per period in a plan.
type Limit struct {
	ID       int64  `json:"id"`
	MetricID int64  `json:"metric_id"`
	PlanID   int64  `json:"plan_id"`
	Period   string `json:"period"`
	Value    int64  `json:"value"`
}

// LimitParams are the writable attributes of a limit.
type LimitParams struct {
	Period string
	Value  int64
}

func (p LimitParams) form() form {
	f := form{}.str("period", p.Period)
	f.values().Set("value", itoa64(p.Value)) // 0 is a real limit: always sent
	return f
}

// ListLimits lists all limits of a plan (GET /admin/api/application_plans/{application_plan_id}/limits.json),
// page by page: porta pages them with the common filter, at most 500 a page (porta
// app/controllers/admin/api/application_plan_limits_controller.rb:7), whatever its description says (50).
func (c *Client) ListLimits(ctx context.Context, planID int64) ([]Limit, error) {
	return list[Limit](ctx, c, "/admin/api/application_plans/{application_plan_id}/limits.json", true, planID)
}

// CreateLimit creates a limit on a metric
// (POST /admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json).
func (c *Client) CreateLimit(ctx context.Context, planID, metricID int64, p LimitParams) (*Limit, error) {
	return settled(ctx, c, func() (*Limit, error) {
		return one[Limit](ctx, c, call{method: "POST", endpoint: "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json",
			args: []any{planID, metricID}, form: p.form().values()})
	}, func() (*Limit, error) {
		ls, err := c.ListLimits(ctx, planID)
		return first(ls, err, func(l Limit) bool { return l.MetricID == metricID && l.Period == p.Period })
	})
}

// UpdateLimit updates a limit (PUT /admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json).
func (c *Client) UpdateLimit(ctx context.Context, planID, metricID, id int64, p LimitParams) (*Limit, error) {
	return one[Limit](ctx, c, call{method: "PUT", endpoint: "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json",
		args: []any{planID, metricID, id}, form: p.form().values()})
}

// DeleteLimit deletes a limit (DELETE /admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json).
func (c *Client) DeleteLimit(ctx context.Context, planID, metricID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json",
		args: []any{planID, metricID, id}}, nil)
}
