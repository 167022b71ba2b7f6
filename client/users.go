package client

import "context"

// User is a user of a developer account.
type User struct {
	ID       int64  `json:"id" xml:"id"`
	Username string `json:"username" xml:"username"`
	Email    string `json:"email" xml:"email"`
	Role     string `json:"role" xml:"role"`   // admin or member
	State    string `json:"state" xml:"state"` // pending, active, suspended (or email_unverified)
}

// UserParams are the writable attributes of a user; empty ones are not sent. A Password needs 15
// characters at least (porta's strong passwords).
type UserParams struct {
	Username string
	Email    string
	Password string
}

func (p UserParams) form() form {
	return form{}.str("username", p.Username).str("email", p.Email).str("password", p.Password)
}

// ListUsers lists the users of an account (GET /admin/api/accounts/{account_id}/users.json).
func (c *Client) ListUsers(ctx context.Context, accountID int64) ([]User, error) {
	return list[User](ctx, c, "/admin/api/accounts/{account_id}/users.json", false, accountID)
}

// UsersOfAccount reads the users of an account from the account's XML (GET /admin/api/accounts/{id}.xml,
// Account#to_xml lists them; the JSON does not). Porta serves it whatever the tenant's multiple_users
// switch, which ListUsers needs (403 without).
func (c *Client) UsersOfAccount(ctx context.Context, accountID int64) ([]User, error) {
	var doc struct {
		Users []User `xml:"users>user"`
	}
	if err := c.do(ctx, call{method: "GET", endpoint: "/admin/api/accounts/{id}.xml", args: []any{accountID}, xml: true}, &doc); err != nil {
		return nil, err
	}
	return doc.Users, nil
}

// CreateUser adds a user to an account, as a pending member (POST /admin/api/accounts/{account_id}/users.json).
func (c *Client) CreateUser(ctx context.Context, accountID int64, p UserParams) (*User, error) {
	return one[User](ctx, c, call{method: "POST", endpoint: "/admin/api/accounts/{account_id}/users.json", args: []any{accountID}, form: p.form().values()})
}

// UpdateUser updates a user (PUT /admin/api/accounts/{account_id}/users/{id}.json).
func (c *Client) UpdateUser(ctx context.Context, accountID, id int64, p UserParams) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/users/{id}.json", args: []any{accountID, id}, form: p.form().values()})
}

// ActivateUser activates a pending user (PUT /admin/api/accounts/{account_id}/users/{id}/activate.json); an
// active one is answered as is, a suspended one refused (422). Activating a user of a "created" account
// approves the account (or makes it pending when its plan requires approval).
func (c *Client) ActivateUser(ctx context.Context, accountID, id int64) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/users/{id}/activate.json", args: []any{accountID, id}})
}

// SuspendUser suspends a user: they can no longer sign in to the developer portal (PUT
// /admin/api/accounts/{account_id}/users/{id}/suspend.json); porta refuses (422) a pending user.
func (c *Client) SuspendUser(ctx context.Context, accountID, id int64) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/users/{id}/suspend.json", args: []any{accountID, id}})
}

// UnsuspendUser makes a suspended user active again (PUT
// /admin/api/accounts/{account_id}/users/{id}/unsuspend.json); porta refuses (422) a user that is not
// suspended.
func (c *Client) UnsuspendUser(ctx context.Context, accountID, id int64) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: "/admin/api/accounts/{account_id}/users/{id}/unsuspend.json", args: []any{accountID, id}})
}

// SetUserRole makes a user an admin or a member (PUT /admin/api/accounts/{account_id}/users/{id}/admin.json
// or member.json). Porta refuses (403, IsForbidden) to change the role of an account's only admin.
func (c *Client) SetUserRole(ctx context.Context, accountID, id int64, role string) (*User, error) {
	endpoint := "/admin/api/accounts/{account_id}/users/{id}/member.json"
	if role == "admin" {
		endpoint = "/admin/api/accounts/{account_id}/users/{id}/admin.json"
	}
	return one[User](ctx, c, call{method: "PUT", endpoint: endpoint, args: []any{accountID, id}})
}

// DeleteUser deletes a user (DELETE /admin/api/accounts/{account_id}/users/{id}.json). Porta refuses (403
// with errors, IsInUse) to delete an account's last admin.
func (c *Client) DeleteUser(ctx context.Context, accountID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/accounts/{account_id}/users/{id}.json", args: []any{accountID, id}}, nil)
}
