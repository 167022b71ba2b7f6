package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
)

// Decimal is an amount porta sends as a JSON number or string, kept as the text porta wrote: a plan's
// setup_fee and cost_per_month are numbers written as Ruby writes a Float ("10.0", "1.0e+16"; porta
// app/representers/plan_representer.rb:21-27), a pricing rule's cost_per_unit a string holding a
// BigDecimal ("1.92", "1.0"; pricing_rule_representer.rb:8). Both kinds are accepted for any field.
// Compare amounts as numbers: "20" sent comes back "20.0".
type Decimal string

// UnmarshalJSON implements json.Unmarshaler.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*d = Decimal(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Decimal(n.String())
	return nil
}

// ApplicationPlan is an application plan of a product.
type ApplicationPlan struct {
	ID               int64   `json:"id"`
	Name             string  `json:"name"`
	SystemName       string  `json:"system_name"`
	State            string  `json:"state"`
	ApprovalRequired bool    `json:"approval_required"`
	TrialPeriodDays  int64   `json:"trial_period_days"`
	SetupFee         Decimal `json:"setup_fee"`
	CostPerMonth     Decimal `json:"cost_per_month"`
	// ServiceID is the plan's product. Porta's JSON has no service_id for a plan (ApplicationPlanRepresenter
	// puts it only in the XML): it is read from the "service" link, .../admin/api/services/{id}.
	ServiceID int64 `json:"-"`
	Default   bool  `json:"default"`
}

// link is a hypermedia link of porta's JSON representers (Roar::Hypermedia).
type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// UnmarshalJSON decodes a plan and takes its product's id from its "service" link.
func (p *ApplicationPlan) UnmarshalJSON(b []byte) error {
	type plain ApplicationPlan
	var raw struct {
		plain
		Links []link `json:"links"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = ApplicationPlan(raw.plain)
	id, err := serviceOfLinks(raw.Links, "plan", p.ID)
	p.ServiceID = id
	return err
}

// serviceOfLinks is the product id a plan's "service" link names (0 when it has none).
func serviceOfLinks(links []link, what string, id int64) (int64, error) {
	for _, l := range links {
		if l.Rel != "service" {
			continue
		}
		u, err := url.Parse(l.Href)
		if err != nil {
			return 0, fmt.Errorf("%s %d: service link %q: %w", what, id, l.Href, err)
		}
		serviceID, err := strconv.ParseInt(path.Base(u.Path), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %d: service link %q names no service id", what, id, l.Href)
		}
		return serviceID, nil
	}
	return 0, nil
}

// PlanParams are the writable attributes of a plan; nil and empty ones are not sent.
type PlanParams struct {
	Name             string
	SystemName       string // only on create
	ApprovalRequired *bool
	TrialPeriodDays  *int64
	SetupFee         string
	CostPerMonth     string
	// StateEvent publishes ("publish") or hides ("hide") the plan.
	StateEvent string
}

func (p PlanParams) form() form {
	return form{}.str("name", p.Name).str("system_name", p.SystemName).boolPtr("approval_required", p.ApprovalRequired).
		intPtr("trial_period_days", p.TrialPeriodDays).str("setup_fee", p.SetupFee).str("cost_per_month", p.CostPerMonth).
		str("state_event", p.StateEvent)
}

// ListPlans lists the application plans of a product (GET /admin/api/services/{service_id}/application_plans.json).
func (c *Client) ListPlans(ctx context.Context, serviceID int64) ([]ApplicationPlan, error) {
	return list[ApplicationPlan](ctx, c, "/admin/api/services/{service_id}/application_plans.json", false, serviceID)
}

// ListAllPlans lists the application plans of every product of the tenant (GET
// /admin/api/application_plans.json); each carries its service_id.
func (c *Client) ListAllPlans(ctx context.Context) ([]ApplicationPlan, error) {
	return list[ApplicationPlan](ctx, c, "/admin/api/application_plans.json", false)
}

// GetPlan reads one plan (GET /admin/api/services/{service_id}/application_plans/{id}.json).
func (c *Client) GetPlan(ctx context.Context, serviceID, id int64) (*ApplicationPlan, error) {
	return one[ApplicationPlan](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/application_plans/{id}.json", args: []any{serviceID, id}})
}

// CreatePlan creates a plan (POST /admin/api/services/{service_id}/application_plans.json).
// A create whose answer was lost is settled by its system name (settle.go).
func (c *Client) CreatePlan(ctx context.Context, serviceID int64, p PlanParams) (*ApplicationPlan, error) {
	return settledByName(ctx, c, p.SystemName, func() (*ApplicationPlan, error) {
		return one[ApplicationPlan](ctx, c, call{method: "POST", endpoint: "/admin/api/services/{service_id}/application_plans.json", args: []any{serviceID}, form: p.form().values()})
	}, func() (*ApplicationPlan, error) {
		all, err := c.ListPlans(ctx, serviceID)
		return first(all, err, func(x ApplicationPlan) bool { return x.SystemName == p.SystemName })
	})
}

// UpdatePlan updates a plan (PUT /admin/api/services/{service_id}/application_plans/{id}.json).
func (c *Client) UpdatePlan(ctx context.Context, serviceID, id int64, p PlanParams) (*ApplicationPlan, error) {
	p.SystemName = "" // immutable in 3scale: never sent on update
	return one[ApplicationPlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/application_plans/{id}.json", args: []any{serviceID, id}, form: p.form().values()})
}

// SetDefaultPlan makes a plan its product's default application plan, the one 3scale's signup contracts
// (PUT /admin/api/services/{service_id}/application_plans/{id}/default.json). porta's API has no call
// that unsets a default (ApplicationPlansController#default only sets one; the admin portal unsets it).
func (c *Client) SetDefaultPlan(ctx context.Context, serviceID, id int64) (*ApplicationPlan, error) {
	return one[ApplicationPlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/application_plans/{id}/default.json", args: []any{serviceID, id}})
}

// DeletePlan deletes a plan (DELETE /admin/api/services/{service_id}/application_plans/{id}.json).
func (c *Client) DeletePlan(ctx context.Context, serviceID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/services/{service_id}/application_plans/{id}.json", args: []any{serviceID, id}}, nil)
}
