package client

import "context"

// AccountPlan is one of a tenant's account plans: the terms its developer accounts sign up under. porta
// renders it with PlanRepresenter alone (app/representers/account_plan_representer.rb): no system_name,
// which only ApplicationPlanRepresenter adds, and no fees it would take on a write.
type AccountPlan struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	State            string `json:"state"`
	ApprovalRequired bool   `json:"approval_required"`
	Default          bool   `json:"default"`
}

// AccountPlanParams are the writable attributes of an account plan: porta's AccountPlansController
// permits name, state_event and approval_required, and system_name on create (account_plans_controller.rb:
// 53-61); nil and empty ones are not sent.
type AccountPlanParams struct {
	Name             string
	SystemName       string // only on create
	ApprovalRequired *bool
	// StateEvent publishes ("publish") or hides ("hide") the plan.
	StateEvent string
}

func (p AccountPlanParams) form() form {
	return form{}.str("name", p.Name).str("system_name", p.SystemName).boolPtr("approval_required", p.ApprovalRequired).
		str("state_event", p.StateEvent)
}

// ListAccountPlans lists the tenant's account plans (GET /admin/api/account_plans.json).
func (c *Client) ListAccountPlans(ctx context.Context) ([]AccountPlan, error) {
	return list[AccountPlan](ctx, c, "/admin/api/account_plans.json", false)
}

// GetAccountPlan reads one account plan (GET /admin/api/account_plans/{id}.json).
func (c *Client) GetAccountPlan(ctx context.Context, id int64) (*AccountPlan, error) {
	return one[AccountPlan](ctx, c, call{method: "GET", endpoint: "/admin/api/account_plans/{id}.json", args: []any{id}})
}

// CreateAccountPlan creates an account plan (POST /admin/api/account_plans.json). porta's answers carry
// no system name: a create whose answer was lost is settled by the plan's name.
func (c *Client) CreateAccountPlan(ctx context.Context, p AccountPlanParams) (*AccountPlan, error) {
	return settledByName(ctx, c, p.Name, func() (*AccountPlan, error) {
		return one[AccountPlan](ctx, c, call{method: "POST", endpoint: "/admin/api/account_plans.json", form: p.form().values()})
	}, func() (*AccountPlan, error) {
		all, err := c.ListAccountPlans(ctx)
		return first(all, err, func(x AccountPlan) bool { return x.Name == p.Name })
	})
}

// UpdateAccountPlan updates an account plan (PUT /admin/api/account_plans/{id}.json).
func (c *Client) UpdateAccountPlan(ctx context.Context, id int64, p AccountPlanParams) (*AccountPlan, error) {
	p.SystemName = "" // porta takes it on create only
	return one[AccountPlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/account_plans/{id}.json", args: []any{id}, form: p.form().values()})
}

// SetDefaultAccountPlan makes an account plan the tenant's default, the one signups contract (PUT
// /admin/api/account_plans/{id}/default.json). No call unsets a default.
func (c *Client) SetDefaultAccountPlan(ctx context.Context, id int64) (*AccountPlan, error) {
	return one[AccountPlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/account_plans/{id}/default.json", args: []any{id}})
}

// DeleteAccountPlan deletes an account plan (DELETE /admin/api/account_plans/{id}.json); porta refuses
// (403) one that accounts are on.
func (c *Client) DeleteAccountPlan(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/account_plans/{id}.json", args: []any{id}}, nil)
}

// AccountPlanOf reads the account plan an account is on (GET /admin/api/accounts/{account_id}/plan.json).
func (c *Client) AccountPlanOf(ctx context.Context, accountID int64) (*AccountPlan, error) {
	return one[AccountPlan](ctx, c, call{method: "GET", endpoint: "/admin/api/accounts/{account_id}/plan.json", args: []any{accountID}})
}

// ChangeAccountPlan moves an account to another account plan (PUT /admin/api/accounts/{id}/change_plan.json);
// porta answers with the plan.
func (c *Client) ChangeAccountPlan(ctx context.Context, accountID, planID int64) (*AccountPlan, error) {
	return one[AccountPlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{id}/change_plan.json", args: []any{accountID},
		form: form{}.int("plan_id", planID).values()})
}
