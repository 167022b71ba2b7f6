package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The master API for tenants, which porta calls providers (Master::Api::ProvidersController,
// app/controllers/master/api/providers_controller.rb; described in porta's doc/active_docs/master_api.json),
// and the tenants' users through master's Account Management API, where master's developer accounts
// are its tenants. These calls need a Client made with the master portal's admin URL
// (https://master.<wildcard domain>; porta serves the master API on no other host, 403) and the master
// access token (system-seed's MASTER_ACCESS_TOKEN). Porta answers a token that is not master's with 401
// and the text "unauthorized" (IsUnauthorized), and one without the account_management scope with 403
// {"error":"Your access token does not have the correct permissions"} (IsForbidden).

// Tenant is a tenant (porta: a provider account) as master sees it.
type Tenant struct {
	ID      int64  `json:"id"`
	OrgName string `json:"org_name"`
	// State is "approved" once signed up, "scheduled_for_deletion" after DeleteTenant, or suspended,
	// pending, rejected, created (Account::States, app/models/account/states.rb:3).
	State string `json:"state"`
	// AdminDomain is the host of the tenant's admin portal and Account Management API, e.g.
	// acme-admin.example.com (porta's external admin domain); Domain its developer portal's.
	AdminDomain string `json:"admin_domain"`
	Domain      string `json:"domain"`
	// AdminBaseURL is the admin portal's URL: https:// and AdminDomain (http:// where porta's force_ssl
	// is off).
	AdminBaseURL string `json:"admin_base_url"`
	// DeletionDate is when porta deletes a tenant scheduled for deletion (15 days after DeleteTenant);
	// empty otherwise.
	DeletionDate string `json:"deletion_date"`
}

// TenantSignup is what SignupTenant made: the tenant, its admin's access token and its admin user.
type TenantSignup struct {
	Tenant Tenant
	// AccessToken is the value of the "Administration" token porta made for the tenant's admin
	// (read-write; scopes account_management and policy_registry). Porta shows it in the create answer
	// only, never again: keep it before anything else.
	AccessToken string
	// AdminUserID is the id of the admin user SignupTenant created (pending until ActivateTenantUser).
	// The create answer does not tell it: SignupTenant reads the tenant's users for it, and leaves it 0
	// when that read fails (ListTenantUsers finds it then).
	AdminUserID int64
}

// String describes the signup without its token.
func (s TenantSignup) String() string {
	return fmt.Sprintf("tenant %d (%s), admin user %d", s.Tenant.ID, s.Tenant.AdminDomain, s.AdminUserID)
}

// GoString describes the signup without its token, for %#v.
func (s TenantSignup) GoString() string { return "client.TenantSignup{" + s.String() + "}" }

// TenantParams create a tenant with its first admin user. Porta needs an OrgName with a letter or
// digit, a Username of 3 to 40 characters, an email address, and a Password of 15 characters at least
// (strong passwords); an empty Password is not sent.
type TenantParams struct {
	OrgName  string
	Username string
	Email    string
	Password string
}

func (p TenantParams) form() form {
	return form{}.str("org_name", p.OrgName).str("username", p.Username).str("email", p.Email).str("password", p.Password)
}

// signupAnswer is porta's answer of the master API: {"signup":{"account":{...},"access_token":{...}}}
// (SignupResultWithAccessTokenRepresenter), the token's value only in the create answer.
type signupAnswer struct {
	Signup struct {
		Account     *Tenant `json:"account"`
		AccessToken *struct {
			Value string `json:"value"`
		} `json:"access_token"`
	} `json:"signup"`
}

// SignupTenant creates a tenant (POST /master/api/providers.json, answered 201): an approved provider
// account with the admin user of p, pending until activated (ActivateTenantUser), and an access token
// of that admin, whose value only this answer shows. Porta does not refuse an OrgName another tenant
// has: the new tenant's domains get a "-2" suffix ("-3"...), so a create whose answer was lost and is
// sent again makes a second tenant; FindTenant finds the first. Errors never quote the password.
func (c *Client) SignupTenant(ctx context.Context, p TenantParams) (*TenantSignup, error) {
	r := call{method: http.MethodPost, endpoint: "/master/api/providers.json", form: p.form().values()}
	var body signupAnswer
	if err := c.do(ctx, r, &body); err != nil {
		return nil, withoutSecret(err, p.Password, "[password]")
	}
	account, token := body.Signup.Account, body.Signup.AccessToken
	switch {
	case account == nil || account.ID == 0:
		return nil, &APIError{StatusCode: http.StatusCreated, Method: r.method, Endpoint: r.endpoint, Message: "the answer has no signup.account with an id"}
	case token == nil || token.Value == "":
		return nil, &APIError{StatusCode: http.StatusCreated, Method: r.method, Endpoint: r.endpoint,
			Message: fmt.Sprintf("the answer has no signup.access_token.value; tenant %d was created", account.ID)}
	}
	s := &TenantSignup{Tenant: *account, AccessToken: token.Value}
	if users, err := c.ListTenantUsers(ctx, account.ID); err == nil {
		for _, u := range users {
			if u.Username == p.Username && u.Role == "admin" {
				s.AdminUserID = u.ID
			}
		}
	}
	return s, nil
}

// withoutSecret removes secret, as sent and form-encoded, from the texts of err, should porta (or a
// proxy before it) ever quote what it was sent, or a transport error the request.
func withoutSecret(err error, secret, mark string) error {
	e, ok := asAPIError(err)
	if !ok || secret == "" {
		return err
	}
	hide := strings.NewReplacer(secret, mark, url.QueryEscape(secret), mark, url.PathEscape(secret), mark).Replace
	e.Message = hide(e.Message)
	if cause, ok := e.Cause.(*redactedError); ok {
		cause.text = hide(cause.text)
	}
	for f, msgs := range e.Errors {
		for i := range msgs {
			msgs[i] = hide(msgs[i])
		}
		e.Errors[f] = msgs
	}
	return err
}

// tenantAnswer sends a master API call answered with {"signup":{"account":{...}}} and returns the tenant.
func (c *Client) tenantAnswer(ctx context.Context, r call) (*Tenant, error) {
	var body signupAnswer
	if err := c.do(ctx, r, &body); err != nil {
		return nil, err
	}
	if body.Signup.Account == nil {
		return nil, &APIError{StatusCode: http.StatusOK, Method: r.method, Endpoint: r.endpoint, Message: "the answer has no signup.account"}
	}
	return body.Signup.Account, nil
}

// GetTenant reads a tenant (GET /master/api/providers/{id}.json), a tenant scheduled for deletion
// included (State "scheduled_for_deletion", with its DeletionDate); 404 (IsNotFound) for one that is
// not there, or no longer.
func (c *Client) GetTenant(ctx context.Context, id int64) (*Tenant, error) {
	return c.tenantAnswer(ctx, call{method: http.MethodGet, endpoint: "/master/api/providers/{id}.json", args: []any{id}})
}

// DeleteTenant schedules a tenant for deletion (DELETE /master/api/providers/{id}.json, 200 with no
// body): porta deletes it 15 days later, with everything it has; until then its APIs answer 403 and
// ResumeTenant takes it back. A tenant already scheduled, or unknown, is 404 (IsNotFound).
func (c *Client) DeleteTenant(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: http.MethodDelete, endpoint: "/master/api/providers/{id}.json", args: []any{id}}, nil)
}

// ResumeTenant takes back a tenant scheduled for deletion, or a suspended one (PUT
// /master/api/providers/{id}.json with account[state_event]=resume): it is approved again. Porta
// refuses with 422 (IsInvalid, "State event cannot transition when approved") a tenant in another
// state. The event is sent wrapped in account[...]: of a tenant scheduled for deletion, porta's update
// takes only account[state_event] (ProvidersController#update_account_params).
func (c *Client) ResumeTenant(ctx context.Context, id int64) (*Tenant, error) {
	return c.tenantAnswer(ctx, call{method: http.MethodPut, endpoint: "/master/api/providers/{id}.json", args: []any{id},
		form: url.Values{"account[state_event]": {"resume"}}})
}

// ListTenantUsers lists the users of a tenant through master (GET
// /admin/api/accounts/{account_id}/users.json on the master host, with the master token): its admins
// and members, and porta's impersonation admin "3scaleadmin", active, that every tenant has.
func (c *Client) ListTenantUsers(ctx context.Context, tenantID int64) ([]User, error) {
	return list[User](ctx, c, "/admin/api/accounts/{account_id}/users.json", false, tenantID)
}

// ActivateTenantUser activates a pending user of a tenant through master (PUT
// /admin/api/accounts/{account_id}/users/{id}/activate.json on the master host): the admin
// SignupTenant made can then sign in. An active user is answered as is; a suspended one is refused
// (422).
func (c *Client) ActivateTenantUser(ctx context.Context, tenantID, userID int64) error {
	return c.do(ctx, call{method: http.MethodPut, endpoint: "/admin/api/accounts/{account_id}/users/{id}/activate.json",
		args: []any{tenantID, userID}}, nil)
}

// ListTenants lists master's developer accounts, which are the tenants, those scheduled for deletion
// included (GET /admin/api/accounts.json on the master host, paginated).
func (c *Client) ListTenants(ctx context.Context) ([]Tenant, error) {
	return list[Tenant](ctx, c, "/admin/api/accounts.json", true)
}

// FindTenant finds the tenant one of whose users has this username and this email (either may be
// empty, not both), for a SignupTenant whose answer was lost: porta does not refuse a second tenant of
// the same org name, so the caller looks before signing up again. It relies on master's Account Find
// (GET /admin/api/accounts/find.json on the master host), which looks among the users of master's
// developer accounts — the tenants — by username, or else by email, and answers the account of the
// first it meets (AccountsController#find_buyer_account). Usernames and emails are unique within a
// tenant only, so a candidate is checked by listing its users: when the one found by username has no
// user with both, the one found by email is tried. When several tenants have such a user, it is one of
// them (ListTenants lists them all). A NotFound error when none is found.
func (c *Client) FindTenant(ctx context.Context, username, email string) (*Tenant, error) {
	const endpoint = "/admin/api/accounts/find.json"
	for _, by := range [][2]string{{"username", username}, {"email", email}} {
		if by[1] == "" {
			continue
		}
		found, err := one[Tenant](ctx, c, call{method: http.MethodGet, endpoint: endpoint, query: url.Values{by[0]: {by[1]}}})
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		users, err := c.ListTenantUsers(ctx, found.ID)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if (username == "" || u.Username == username) && (email == "" || u.Email == email) {
				return found, nil
			}
		}
	}
	return nil, &APIError{StatusCode: http.StatusNotFound, Method: http.MethodGet, Endpoint: endpoint,
		Message: "no tenant has a user with this username and email"}
}
