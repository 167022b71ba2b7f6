package client

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// Application is an application of a developer account on an application plan, with its credentials:
// user_key for user-key products, application_id (and keys) for app id/key and OIDC products.
type Application struct {
	ID            int64  `json:"id"`
	State         string `json:"state"` // pending (its plan requires approval), live, suspended
	Enabled       bool   `json:"enabled"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	AccountID     int64  `json:"account_id"`
	ServiceID     int64  `json:"service_id"`
	PlanID        int64  `json:"plan_id"`
	PlanName      string `json:"plan_name"`
	OrgName       string `json:"org_name"`
	UserKey       string `json:"user_key"`
	ApplicationID string `json:"application_id"`
	// RedirectURL is an OAuth/OIDC application's redirect URL; porta shows it only for those
	// (CinstanceRepresenter), null while none was set.
	RedirectURL string `json:"redirect_url"`
	// FirstDailyTrafficAt is the first hit of the latest day the application had traffic (null: never);
	// porta's "active since" (Cinstance.by_active_since) reads it.
	FirstDailyTrafficAt *time.Time `json:"first_daily_traffic_at"`
}

// ApplicationParams are the writable attributes of an application; empty ones are not sent.
type ApplicationParams struct {
	PlanID      int64 // only on create
	Name        string
	Description *string
	// UserKey or ApplicationID (and ApplicationKey) set the credentials instead of letting 3scale
	// generate them (a 32-hex user_key, an 8-hex application_id and, for app id/key and OIDC products,
	// a 32-hex first key). ApplicationID (4 to 255 printable ASCII characters, immutable) and
	// ApplicationKey (5 to 255) only on create; UserKey on update too. An OIDC application holds one key.
	UserKey        string
	ApplicationID  string
	ApplicationKey string
	// RedirectURL is an OAuth/OIDC application's redirect URL (porta strips it).
	RedirectURL *string
}

func (p ApplicationParams) form() form {
	return form{}.int("plan_id", p.PlanID).str("name", p.Name).strPtr("description", p.Description).
		str("user_key", p.UserKey).str("application_id", p.ApplicationID).str("application_key", p.ApplicationKey).
		strPtr("redirect_url", p.RedirectURL)
}

// ApplicationKey is one key of an app id/key (at most 5) or OIDC (at most 1) application.
type ApplicationKey struct {
	Value string `json:"value"`
}

// ListApplications lists the applications of an account (GET /admin/api/accounts/{account_id}/applications.json).
func (c *Client) ListApplications(ctx context.Context, accountID int64) ([]Application, error) {
	return list[Application](ctx, c, "/admin/api/accounts/{account_id}/applications.json", false, accountID)
}

// FindApplication finds the application holding a credential (GET /admin/api/applications/find.json):
// by user_key (user-key products) or else app_id, within service serviceID; a NotFound error when none
// does. The credential travels in the query: errors quote only the endpoint template.
func (c *Client) FindApplication(ctx context.Context, serviceID int64, userKey, appID string) (*Application, error) {
	q := url.Values{"service_id": {strconv.FormatInt(serviceID, 10)}}
	if userKey != "" {
		q.Set("user_key", userKey)
	} else {
		q.Set("app_id", appID)
	}
	return one[Application](ctx, c, call{method: "GET", endpoint: "/admin/api/applications/find.json", query: q})
}

// GetApplication reads one application (GET /admin/api/accounts/{account_id}/applications/{id}.json).
func (c *Client) GetApplication(ctx context.Context, accountID, id int64) (*Application, error) {
	return one[Application](ctx, c, call{method: "GET", endpoint: "/admin/api/accounts/{account_id}/applications/{id}.json", args: []any{accountID, id}})
}

// CreateApplication creates an application (POST /admin/api/accounts/{account_id}/applications.json).
func (c *Client) CreateApplication(ctx context.Context, accountID int64, p ApplicationParams) (*Application, error) {
	return one[Application](ctx, c, call{method: "POST", endpoint: "/admin/api/accounts/{account_id}/applications.json", args: []any{accountID}, form: p.form().values()})
}

// UpdateApplication updates an application's name, description or user key (PUT
// /admin/api/accounts/{account_id}/applications/{id}.json).
func (c *Client) UpdateApplication(ctx context.Context, accountID, id int64, p ApplicationParams) (*Application, error) {
	p.PlanID, p.ApplicationID, p.ApplicationKey = 0, "", ""
	return one[Application](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/applications/{id}.json", args: []any{accountID, id}, form: p.form().values()})
}

// DeleteApplication deletes an application (DELETE /admin/api/accounts/{account_id}/applications/{id}.json).
func (c *Client) DeleteApplication(ctx context.Context, accountID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{account_id}/applications/{id}.json", args: []any{accountID, id}}, nil)
}

// SuspendApplication suspends an application (PUT .../applications/{id}/suspend.json).
func (c *Client) SuspendApplication(ctx context.Context, accountID, id int64) (*Application, error) {
	return one[Application](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/applications/{id}/suspend.json", args: []any{accountID, id}})
}

// ResumeApplication resumes a suspended application (PUT .../applications/{id}/resume.json).
func (c *Client) ResumeApplication(ctx context.Context, accountID, id int64) (*Application, error) {
	return one[Application](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/applications/{id}/resume.json", args: []any{accountID, id}})
}

// ChangeApplicationPlan moves an application to another plan of its product (PUT
// .../applications/{id}/change_plan.json); porta answers with the new plan.
func (c *Client) ChangeApplicationPlan(ctx context.Context, accountID, id, planID int64) error {
	return c.do(ctx, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/applications/{id}/change_plan.json", args: []any{accountID, id},
		form: form{}.int("plan_id", planID).values()}, nil)
}

// ListApplicationKeys lists the keys of an app id/key application (GET .../applications/{application_id}/keys.json).
func (c *Client) ListApplicationKeys(ctx context.Context, accountID, appID int64) ([]ApplicationKey, error) {
	return list[ApplicationKey](ctx, c, "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", false, accountID, appID)
}

// CreateApplicationKey adds a key (POST .../applications/{application_id}/keys.json).
func (c *Client) CreateApplicationKey(ctx context.Context, accountID, appID int64, key string) error {
	return c.do(ctx, call{method: "POST", endpoint: "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", args: []any{accountID, appID},
		form: form{}.str("key", key).values()}, nil)
}

// DeleteApplicationKey removes a key (DELETE .../applications/{application_id}/keys/{key}.json).
func (c *Client) DeleteApplicationKey(ctx context.Context, accountID, appID int64, key string) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{account_id}/applications/{application_id}/keys/{key}.json", args: []any{accountID, appID, key}}, nil)
}

// ListAllApplications lists every application of the tenant, of all products and accounts (GET
// /admin/api/applications.json, paginated).
func (c *Client) ListAllApplications(ctx context.Context) ([]Application, error) {
	return list[Application](ctx, c, "/admin/api/applications.json", true)
}

// ListProductApplications lists every application of a product, of all accounts (GET
// /admin/api/applications.json?service_id=, paginated).
func (c *Client) ListProductApplications(ctx context.Context, serviceID int64) ([]Application, error) {
	return listWith[Application](ctx, c, "/admin/api/applications.json", true, url.Values{"service_id": {strconv.FormatInt(serviceID, 10)}})
}
