package client

import (
	"context"
	"encoding/json"
	"net/url"
)

// Account is a developer (buyer) account of the tenant.
type Account struct {
	ID      int64  `json:"id"`
	OrgName string `json:"org_name"`
	// State is created (signed up, its admin not yet active), pending (awaiting approval), approved,
	// rejected, suspended or scheduled_for_deletion (porta app/models/account/states.rb:3).
	State                  string `json:"state"`
	MonthlyBillingEnabled  bool   `json:"monthly_billing_enabled"`
	MonthlyChargingEnabled bool   `json:"monthly_charging_enabled"`
	CreditCardStored       bool   `json:"credit_card_stored"`
	// Fields are the values of the account's defined fields other than org_name — built in (vat_code,
	// telephone_number...) and extra — by name: porta renders each as a property of the account
	// (FieldsRepresenter, ExtraFieldsRepresenter); nil when it has none.
	Fields map[string]string `json:"-"`
}

// accountProperties are the properties of an account's JSON that are no field of it
// (AccountRepresenter).
var accountProperties = map[string]bool{"org_name": true, "state": true, "created_at": true, "updated_at": true, "deletion_date": true,
	"admin_domain": true, "domain": true, "admin_base_url": true, "base_url": true, "from_email": true, "support_email": true,
	"finance_support_email": true, "site_access_code": true, "credit_card_partial_number": true, "credit_card_expires_on": true}

// UnmarshalJSON decodes an account and collects its fields' values.
func (a *Account) UnmarshalJSON(b []byte) error {
	type plain Account
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(b, &props); err != nil {
		return err
	}
	a.Fields = nil
	for k, raw := range props {
		var v string
		if accountProperties[k] || json.Unmarshal(raw, &v) != nil {
			continue
		}
		if a.Fields == nil {
			a.Fields = map[string]string{}
		}
		a.Fields[k] = v
	}
	return nil
}

// SignupParams create an account with its first (admin) user in one call. Porta wants a Password of 15
// characters at least (strong passwords, app/lib/authentication/by_password.rb:7,19); without one, the
// admin stays pending and the account "created" until the admin is activated.
type SignupParams struct {
	OrgName  string
	Username string
	Email    string
	Password string
	// AccountPlanID signs the account up on that account plan (0: the tenant's default).
	AccountPlanID int64
	// Fields are values of the account's defined fields, by name.
	Fields map[string]string
}

func (p SignupParams) form() form {
	return withFields(form{}.str("org_name", p.OrgName).str("username", p.Username).str("email", p.Email).str("password", p.Password).
		int("account_plan_id", p.AccountPlanID), p.Fields)
}

// withFields adds the values of an account's fields to f, each under its name, as porta's description
// declares them (additionalProperties of SignupExpressRequest and AccountUpdateRequest; porta assigns
// them, fields.rb:118-130, and keeps only the fields the tenant defines). A field's name cannot be one of
// the account's columns (FieldsDefinition#allowed_fields_definition_name), so none collides with another
// parameter.
func withFields(f form, fields map[string]string) form {
	for name, v := range fields {
		f.values().Set(name, v)
	}
	return f
}

// AccountParams are the writable attributes of an account; nil and empty ones are not sent.
type AccountParams struct {
	OrgName                string
	MonthlyBillingEnabled  *bool
	MonthlyChargingEnabled *bool
	// Fields are values of the account's defined fields, by name ("" clears one).
	Fields map[string]string
}

func (p AccountParams) form() form {
	return withFields(form{}.str("org_name", p.OrgName).boolPtr("monthly_billing_enabled", p.MonthlyBillingEnabled).
		boolPtr("monthly_charging_enabled", p.MonthlyChargingEnabled), p.Fields)
}

// Signup creates a developer account and its first user, an admin (POST /admin/api/signup.json). Porta
// answers the account alone: list its users to learn the admin's id. With a password and a default
// account plan that needs no approval, the admin is active and the account approved; otherwise the
// admin is pending and the account created (Signup::DeveloperAccountManager, User#activate_on_minimal?).
func (c *Client) Signup(ctx context.Context, p SignupParams) (*Account, error) {
	return one[Account](ctx, c, call{method: "POST", endpoint: "/admin/api/signup.json", form: p.form().values()})
}

// ListAccounts lists the tenant's developer accounts (GET /admin/api/accounts.json, paginated).
func (c *Client) ListAccounts(ctx context.Context) ([]Account, error) {
	return list[Account](ctx, c, "/admin/api/accounts.json", true)
}

// GetAccount reads one developer account (GET /admin/api/accounts/{id}.json).
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

// ApproveAccount approves a created, pending or rejected account (PUT /admin/api/accounts/{id}/approve.json);
// porta refuses (422, state "cannot transition via \"approve\"") an account already approved.
func (c *Client) ApproveAccount(ctx context.Context, id int64) (*Account, error) {
	return one[Account](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{id}/approve.json", args: []any{id}})
}

// DeleteAccount deletes an account with its users and applications (DELETE /admin/api/accounts/{id}.json).
func (c *Client) DeleteAccount(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{id}.json", args: []any{id}}, nil)
}
