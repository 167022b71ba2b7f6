package adminuser

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's users to "users", unless a filter is given: each as 3scale shows it, taken
// over on apply (adoption IfExists) and kept in 3scale when its object is deleted (Retain: a removal of
// exported YAML never deletes a person), with a member's permissions when every product they name was
// exported. Passwords cannot be read: none is exported.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if !x.WholeTenant() {
		return nil
	}
	users, err := x.Client.ListAdminUsers(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the tenant's users: %w", err)
	}
	names := map[int64]string{}
	for _, p := range x.Products {
		names[p.ID] = p.Name
	}
	for _, u := range users {
		if u.State != "active" && u.State != "suspended" {
			// A pending user waits for an invitation to be accepted: an AdminUser would activate it.
			x.Leave("user %q is %s in 3scale: not exported (an AdminUser would activate it)", u.Username, u.State)
			continue
		}
		spec := v1alpha1.AdminUserSpec{Username: u.Username, Email: u.Email, Role: v1alpha1.AdminRole(u.Role), State: v1alpha1.AdminUserActive,
			DeletionPolicy: v1alpha1.DeletionPolicyRetain, Adoption: v1alpha1.AdoptionIfExists}
		if u.State == "suspended" {
			spec.State = v1alpha1.AdminUserSuspended
		}
		if u.Role == "member" {
			if spec.Permissions, err = permissionsOf(ctx, x, u, names); err != nil {
				return err
			}
		}
		x.Add("users", &v1alpha1.AdminUser{TypeMeta: plugin.TypeMeta("AdminUser"), ObjectMeta: metav1.ObjectMeta{Name: "user-" + plugin.ObjectName(u.Username)}, Spec: spec})
	}
	return nil
}

// permissionsOf reads a member's permissions (one call); nil, with a note, when they name a product
// that was not exported.
func permissionsOf(ctx context.Context, x *plugin.Exporter, u tsclient.User, names map[int64]string) (*v1alpha1.AdminPermissions, error) {
	p, err := x.Client.GetAdminUserPermissions(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("cannot read the permissions of user %q: %w", u.Username, err)
	}
	out := &v1alpha1.AdminPermissions{}
	for _, s := range p.AllowedSections {
		out.Sections = append(out.Sections, v1alpha1.AdminSection(s))
	}
	if p.AllowedServiceIDs == nil {
		return out, nil
	}
	refs := []string{}
	for _, id := range p.AllowedServiceIDs {
		name, ok := names[id]
		if !ok {
			x.Leave("user %q: its permissions name product %d, which was not exported; they are left out (not managed)", u.Username, id)
			return nil, nil
		}
		refs = append(refs, name)
	}
	out.ProductRefs = &refs
	return out, nil
}

// Inventory lists the tenant's users for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAdminUsers(ctx)
	return plugin.Items("AdminUser", "tenant's users", all, err, func(r tsclient.User) (int64, string, string) { return r.ID, r.Username, "" })
}

// Prune deletes one of the tenant's users that a TenantSettings' prune found unmanaged (plugin.Pruner):
// members only. An admin is never pruned: it may be the user apimsync's token belongs to, or the last
// one.
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	u, err := c.GetAdminUser(ctx, it.ID)
	if err != nil {
		return "", err
	}
	if u.Role == "admin" {
		return "an admin is never pruned (it may be the user apimsync's token belongs to, or the tenant's last admin)", nil
	}
	return "", c.DeleteAdminUser(ctx, it.ID)
}
