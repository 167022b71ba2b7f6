package client

import (
	"context"
	"strconv"
)

// The tenant's own users — the people who sign in to its admin portal — and their permissions (porta
// app/controllers/admin/api/users_controller.rb, member_permissions_controller.rb; config/abilities/admin.rb).
// They have the shape of a developer account's users (User).

// ListAdminUsers lists the tenant's admin-portal users, admins and members (GET /admin/api/users.json);
// porta does not page them.
func (c *Client) ListAdminUsers(ctx context.Context) ([]User, error) {
	return list[User](ctx, c, "/admin/api/users.json", false)
}

// GetAdminUser reads one of the tenant's users (GET /admin/api/users/{id}.json).
func (c *Client) GetAdminUser(ctx context.Context, id int64) (*User, error) {
	return one[User](ctx, c, call{method: "GET", endpoint: "/admin/api/users/{id}.json", args: []any{id}})
}

// CreateAdminUser adds a user to the tenant, pending, as a member (POST /admin/api/users.json); with no
// password the user signs in once invited or through single sign-on. A lost answer is settled by the
// username, unique among the tenant's users.
func (c *Client) CreateAdminUser(ctx context.Context, p UserParams) (*User, error) {
	return settled(ctx, c, func() (*User, error) {
		return one[User](ctx, c, call{method: "POST", endpoint: "/admin/api/users.json", form: p.form().values()})
	}, func() (*User, error) {
		all, err := c.ListAdminUsers(ctx)
		return first(all, err, func(u User) bool { return u.Username == p.Username })
	})
}

// UpdateAdminUser updates a user's username, email or password (PUT /admin/api/users/{id}.json).
func (c *Client) UpdateAdminUser(ctx context.Context, id int64, p UserParams) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: "/admin/api/users/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteAdminUser deletes a user (DELETE /admin/api/users/{id}.json). porta refuses the token's own user
// (403) and the tenant's last admin.
func (c *Client) DeleteAdminUser(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/users/{id}.json", args: []any{id}}, nil)
}

// The state changes of an admin-portal user (User::States: pending → active ⇄ suspended).
const (
	UserActivate  = "activate"
	UserSuspend   = "suspend"
	UserUnsuspend = "unsuspend"
)

// adminUserActions are the endpoints of the state changes and roles.
var adminUserActions = map[string]string{
	UserActivate:  "/admin/api/users/{id}/activate.json",
	UserSuspend:   "/admin/api/users/{id}/suspend.json",
	UserUnsuspend: "/admin/api/users/{id}/unsuspend.json",
	"admin":       "/admin/api/users/{id}/admin.json",
	"member":      "/admin/api/users/{id}/member.json",
}

// ChangeAdminUser activates, suspends or unsuspends a user (action: UserActivate, UserSuspend,
// UserUnsuspend), or makes it an admin or a member (action: "admin", "member"), with PUT
// /admin/api/users/{id}/{action}.json. porta lets no one change their own role (403), but lets a user
// suspend themselves: the caller must never ask that.
func (c *Client) ChangeAdminUser(ctx context.Context, id int64, action string) (*User, error) {
	return one[User](ctx, c, call{method: "PUT", endpoint: adminUserActions[action], args: []any{id}})
}

// Permissions are what a member may see of the admin portal (app/representers/member_permissions_representer.rb):
// its sections, and the products it may see (nil: all, present and future; empty: none). An admin has
// every section and every product.
type Permissions struct {
	UserID            int64    `json:"user_id"`
	Role              string   `json:"role"`
	AllowedSections   []string `json:"allowed_sections"`
	AllowedServiceIDs []int64  `json:"allowed_service_ids"`
}

// GetAdminUserPermissions reads a user's permissions (GET /admin/api/users/{id}/permissions.json).
func (c *Client) GetAdminUserPermissions(ctx context.Context, id int64) (*Permissions, error) {
	return one[Permissions](ctx, c, call{method: "GET", endpoint: "/admin/api/users/{id}/permissions.json", args: []any{id}})
}

// SetAdminUserPermissions replaces a member's permissions (PUT /admin/api/users/{id}/permissions.json).
// allServices gives every product, present and future; otherwise serviceIDs are the products (none when
// empty). porta drops the ids of products not the tenant's without a word, and refuses an admin's (403).
func (c *Client) SetAdminUserPermissions(ctx context.Context, id int64, sections []string, allServices bool, serviceIDs []int64) (*Permissions, error) {
	f := form{}
	// allowed_sections[]= (one blank, dropped by porta) empties the sections; the same for the products,
	// and allowed_service_ids= (not a list) gives them all (member_permissions_controller_test.rb:74-104).
	for _, s := range append([]string{""}, sections...) {
		f.values().Add("allowed_sections[]", s)
	}
	switch {
	case allServices:
		f.values().Set("allowed_service_ids", "")
	case len(serviceIDs) == 0:
		f.values().Set("allowed_service_ids[]", "")
	default:
		for _, sid := range serviceIDs {
			f.values().Add("allowed_service_ids[]", strconv.FormatInt(sid, 10))
		}
	}
	return one[Permissions](ctx, c, call{method: "PUT", endpoint: "/admin/api/users/{id}/permissions.json", args: []any{id}, form: f.values()})
}

// ListAdminAuthenticationProviders lists the admin portal's sign-in providers
// (GET /admin/api/account/authentication_providers.json); porta does not page them.
func (c *Client) ListAdminAuthenticationProviders(ctx context.Context) ([]AuthenticationProvider, error) {
	return list[AuthenticationProvider](ctx, c, "/admin/api/account/authentication_providers.json", false)
}

// CreateAdminAuthenticationProvider creates an admin-portal sign-in provider (POST
// /admin/api/account/authentication_providers.json; porta takes kind, name, system_name, client_id,
// client_secret, site, skip_ssl_certificate_verification and published). A lost answer is settled by the
// system name.
func (c *Client) CreateAdminAuthenticationProvider(ctx context.Context, p AuthenticationProviderParams) (*AuthenticationProvider, error) {
	return settledByName(ctx, c, p.SystemName, func() (*AuthenticationProvider, error) {
		return one[AuthenticationProvider](ctx, c, call{method: "POST", endpoint: "/admin/api/account/authentication_providers.json", form: p.adminForm(true).values()})
	}, func() (*AuthenticationProvider, error) {
		all, err := c.ListAdminAuthenticationProviders(ctx)
		return first(all, err, func(a AuthenticationProvider) bool { return a.SystemName == p.SystemName })
	})
}

// UpdateAdminAuthenticationProvider updates an admin-portal sign-in provider's client, site, certificate
// check and publication (PUT /admin/api/account/authentication_providers/{id}.json). porta refuses (403) to
// change a published one while the admin portal enforces single sign-on; it has no route to delete one.
func (c *Client) UpdateAdminAuthenticationProvider(ctx context.Context, id int64, p AuthenticationProviderParams) (*AuthenticationProvider, error) {
	return one[AuthenticationProvider](ctx, c, call{method: "PUT", endpoint: "/admin/api/account/authentication_providers/{id}.json", args: []any{id},
		form: p.adminForm(false).values()})
}

// adminForm is the form of an admin-portal provider: the controller permits fewer parameters than the
// developer portal's (authentication_providers_controller.rb, DEFAULT_PARAMS | kind system_name name).
func (p AuthenticationProviderParams) adminForm(create bool) form {
	f := form{}.strPtr("client_id", p.ClientID).strPtr("client_secret", p.ClientSecret).strPtr("site", p.Site).
		boolPtr("published", p.Published).boolPtr("skip_ssl_certificate_verification", p.SkipSSLCertificateVerification)
	if create {
		f = f.str("kind", p.Kind).str("name", p.Name).str("system_name", p.SystemName)
	}
	return f
}
