package client

import (
	"context"
	"encoding/json"
)

// ServicePlan is one of a product's service plans: the terms a developer account subscribes to the
// product under. porta renders it with PlanRepresenter and the service's link
// (app/representers/service_plan_representer.rb): no system_name, the product's id from the link.
type ServicePlan struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	State            string `json:"state"`
	ApprovalRequired bool   `json:"approval_required"`
	Default          bool   `json:"default"`
	// ServiceID is the plan's product, read from its "service" link.
	ServiceID int64 `json:"-"`
}

// UnmarshalJSON decodes a service plan and takes its product's id from its "service" link.
func (p *ServicePlan) UnmarshalJSON(b []byte) error {
	type plain ServicePlan
	var raw struct {
		plain
		Links []link `json:"links"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = ServicePlan(raw.plain)
	id, err := serviceOfLinks(raw.Links, "service plan", p.ID)
	p.ServiceID = id
	return err
}

// ServicePlanParams are the writable attributes of a service plan: the same porta takes for an account
// plan (ServicePlansController, service_plans_controller.rb:56-64).
type ServicePlanParams = AccountPlanParams

// ListServicePlans lists the service plans of a product (GET /admin/api/services/{service_id}/service_plans.json).
func (c *Client) ListServicePlans(ctx context.Context, serviceID int64) ([]ServicePlan, error) {
	return list[ServicePlan](ctx, c, "/admin/api/services/{service_id}/service_plans.json", false, serviceID)
}

// ListAllServicePlans lists the service plans of every product of the tenant (GET
// /admin/api/service_plans.json): one call for a burst of ServicePlans looking for theirs.
func (c *Client) ListAllServicePlans(ctx context.Context) ([]ServicePlan, error) {
	return list[ServicePlan](ctx, c, "/admin/api/service_plans.json", false)
}

// GetServicePlan reads one service plan (GET /admin/api/services/{service_id}/service_plans/{id}.json).
func (c *Client) GetServicePlan(ctx context.Context, serviceID, id int64) (*ServicePlan, error) {
	return one[ServicePlan](ctx, c, call{method: "GET", endpoint: "/admin/api/services/{service_id}/service_plans/{id}.json", args: []any{serviceID, id}})
}

// CreateServicePlan creates a service plan of a product (POST /admin/api/services/{service_id}/service_plans.json).
// porta's answers carry no system name: a create whose answer was lost is settled by the plan's name.
func (c *Client) CreateServicePlan(ctx context.Context, serviceID int64, p ServicePlanParams) (*ServicePlan, error) {
	return settledByName(ctx, c, p.Name, func() (*ServicePlan, error) {
		return one[ServicePlan](ctx, c, call{method: "POST", endpoint: "/admin/api/services/{service_id}/service_plans.json", args: []any{serviceID}, form: p.form().values()})
	}, func() (*ServicePlan, error) {
		all, err := c.ListServicePlans(ctx, serviceID)
		return first(all, err, func(x ServicePlan) bool { return x.Name == p.Name })
	})
}

// UpdateServicePlan updates a service plan (PUT /admin/api/services/{service_id}/service_plans/{id}.json).
func (c *Client) UpdateServicePlan(ctx context.Context, serviceID, id int64, p ServicePlanParams) (*ServicePlan, error) {
	p.SystemName = "" // porta takes it on create only
	return one[ServicePlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/service_plans/{id}.json", args: []any{serviceID, id}, form: p.form().values()})
}

// SetDefaultServicePlan makes a service plan its product's default, the one a signup subscribes to (PUT
// /admin/api/services/{service_id}/service_plans/{id}/default.json). No call unsets a default.
func (c *Client) SetDefaultServicePlan(ctx context.Context, serviceID, id int64) (*ServicePlan, error) {
	return one[ServicePlan](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/service_plans/{id}/default.json", args: []any{serviceID, id}})
}

// DeleteServicePlan deletes a service plan (DELETE /admin/api/services/{service_id}/service_plans/{id}.json);
// porta refuses (403) one that accounts subscribe to.
func (c *Client) DeleteServicePlan(ctx context.Context, serviceID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/services/{service_id}/service_plans/{id}.json", args: []any{serviceID, id}}, nil)
}

// ServiceSubscription is a developer account's subscription to a product through one of its service
// plans (ServiceSubscriptionRepresenter).
type ServiceSubscription struct {
	ID        int64  `json:"id"`
	PlanID    int64  `json:"plan_id"`
	ServiceID int64  `json:"service_id"`
	State     string `json:"state"` // live, or pending while its plan requires approval
}

// Subscribe subscribes an account to a service plan's product (POST
// /admin/api/accounts/{account_id}/service_subscriptions.json); porta refuses (422) a second subscription
// to one product, so a subscribe whose answer was lost is settled by the account's subscription to the
// plan.
func (c *Client) Subscribe(ctx context.Context, accountID, planID int64) (*ServiceSubscription, error) {
	return settled(ctx, c, func() (*ServiceSubscription, error) {
		return one[ServiceSubscription](ctx, c, call{method: "POST", endpoint: "/admin/api/accounts/{account_id}/service_subscriptions.json", args: []any{accountID},
			form: form{}.int("plan_id", planID).values()})
	}, func() (*ServiceSubscription, error) {
		subs, err := c.ListSubscriptions(ctx, accountID)
		return first(subs, err, func(s ServiceSubscription) bool { return s.PlanID == planID })
	})
}

// Unsubscribe ends an account's subscription (DELETE
// /admin/api/accounts/{account_id}/service_subscriptions/{id}.json); porta refuses (403) while the account
// has live applications on the product.
func (c *Client) Unsubscribe(ctx context.Context, accountID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{account_id}/service_subscriptions/{id}.json", args: []any{accountID, id}}, nil)
}

// ListSubscriptions lists an account's service subscriptions, one per product it subscribes to (GET
// /admin/api/accounts/{account_id}/service_subscriptions.json); porta does not page them.
func (c *Client) ListSubscriptions(ctx context.Context, accountID int64) ([]ServiceSubscription, error) {
	return list[ServiceSubscription](ctx, c, "/admin/api/accounts/{account_id}/service_subscriptions.json", false, accountID)
}

// ChangeSubscriptionPlan moves a subscription to another service plan of its product (PUT
// /admin/api/accounts/{account_id}/service_subscriptions/{id}/change_plan.json); porta refuses (422) a
// plan of another product. porta answers with the plan, so the subscription is read back as changed.
func (c *Client) ChangeSubscriptionPlan(ctx context.Context, accountID, id, planID int64) error {
	return c.do(ctx, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/service_subscriptions/{id}/change_plan.json",
		args: []any{accountID, id}, form: form{}.int("plan_id", planID).values()}, nil)
}

// ApproveSubscription approves a pending subscription (PUT
// /admin/api/accounts/{account_id}/service_subscriptions/{id}/approve.json); porta refuses (422) one
// that is not pending.
func (c *Client) ApproveSubscription(ctx context.Context, accountID, id int64) (*ServiceSubscription, error) {
	return one[ServiceSubscription](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/service_subscriptions/{id}/approve.json",
		args: []any{accountID, id}})
}
