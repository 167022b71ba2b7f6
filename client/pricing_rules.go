package client

import (
	"context"
	"strconv"
)

// PricingRule prices a range of units of a metric in a plan.
type PricingRule struct {
	ID       int64 `json:"id"`
	MetricID int64 `json:"metric_id"`
	PlanID   int64 `json:"plan_id"`
	Min      int64 `json:"min"`
	Max      int64 `json:"max"`
	// CostPerUnit is porta's JSON string, e.g. "1.92" (see Decimal).
	CostPerUnit Decimal `json:"cost_per_unit"`
}

// PricingRuleParams are the attributes of a new pricing rule (porta has no update).
type PricingRuleParams struct {
	Min, Max    int64
	CostPerUnit string
}

// ListPricingRules lists all pricing rules of a plan
// (GET /admin/api/application_plans/{application_plan_id}/pricing_rules.json).
func (c *Client) ListPricingRules(ctx context.Context, planID int64) ([]PricingRule, error) {
	return list[PricingRule](ctx, c, "/admin/api/application_plans/{application_plan_id}/pricing_rules.json", false, planID)
}

// CreatePricingRule creates a pricing rule on a metric
// (POST /admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json).
func (c *Client) CreatePricingRule(ctx context.Context, planID, metricID int64, p PricingRuleParams) (*PricingRule, error) {
	f := form{}.int("min", p.Min).int("max", p.Max).str("cost_per_unit", p.CostPerUnit)
	return settled(ctx, c, func() (*PricingRule, error) {
		return one[PricingRule](ctx, c, call{method: "POST", endpoint: "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json",
			args: []any{planID, metricID}, form: f.values()})
	}, func() (*PricingRule, error) {
		rs, err := c.ListPricingRules(ctx, planID)
		return first(rs, err, func(r PricingRule) bool { return r.MetricID == metricID && r.Min == p.Min && r.Max == p.Max })
	})
}

// DeletePricingRule deletes a pricing rule
// (DELETE /admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules/{id}.json).
func (c *Client) DeletePricingRule(ctx context.Context, planID, metricID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules/{id}.json",
		args: []any{planID, metricID, id}}, nil)
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }
