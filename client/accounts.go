package client

import (
	"context"
	"net/url"
)

// Account is a developer (buyer) account of the tenant.
type Account struct {
	ID                     int64  `json:"id"`
	OrgName                string `json:"org_name"`
	State                  string `json:"state"` // pending, approved, rejected, suspended
	MonthlyBillingEnabled  bool   `json:"monthly_billing_enabled"`
	MonthlyChargingEnabled bool   `json:"monthly_charging_enabled"`
	CreditCardStored       bool   `json:"credit_card_stored"`
}

// SignupParams create an account with its first (admin) user in one call.
type SignupParams struct {
	OrgName  string
	Username string
	Email    string
	Password string
}

func (p SignupParams) form() form {
	return form{}.str("org_name", p.OrgName).str("username", p.Username).str("email", p.Email).str("password", p.Password)
}

// AccountParams are the writable attributes of an account; nil and empty ones are not sent.
type AccountParams struct {
	OrgName                string
	MonthlyBillingEnabled  *bool
	MonthlyChargingEnabled *bool
}

func (p AccountParams) form() form {
	return form{}.str("org_name", p.OrgName).boolPtr("monthly_billing_enabled", p.MonthlyBillingEnabled).
		boolPtr("monthly_charging_enabled", p.MonthlyChargingEnabled)
}

// Signup creates a developer account and its first user, an admin (POST /admin/api/signup.json).
func (c *Client) Signup(ctx context.Context, p SignupParams) (*Account, error) {
	return one[Account](ctx, c, call{method: "POST", endpoint: "/admin/api/signup.json", form: p.form().values()})
}

// GetAccount reads one account (GET /admin/api/accounts/{id}.json).
func (c *Client) GetAccount(ctx context.Context, id int64) (*Account, error) {
	return one[Account](ctx, c, call{method: "GET", endpoint: "/admin/api/accounts/{id}.json", args: []any{id}})
}

// FindAccountByUsername finds the account that has a user with this username (GET
// /admin/api/accounts/find.json?username=); a NotFound error when there is none.
func (c *Client) FindAccountByUsername(ctx context.Context, username string) (*Account, error) {
	return one[Account](ctx, c, call{method: "GET", endpoint: "/admin/api/accounts/find.json", query: url.Values{"username": {username}}})
}

// UpdateAccount updates an account (PUT /admin/api/accounts/{id}.json).
func (c *Client) UpdateAccount(ctx context.Context, id int64, p AccountParams) (*Account, error) {
	return one[Account](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{id}.json", args: []any{id}, form: p.form().values()})
}

// ApproveAccount approves a pending account (PUT /admin/api/accounts/{id}/approve.json).
func (c *Client) ApproveAccount(ctx context.Context, id int64) (*Account, error) {
	return one[Account](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{id}/approve.json", args: []any{id}})
}

// DeleteAccount deletes an account with its users and applications (DELETE /admin/api/accounts/{id}.json).
func (c *Client) DeleteAccount(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{id}.json", args: []any{id}}, nil)
}
