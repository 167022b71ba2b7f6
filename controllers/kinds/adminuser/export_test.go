package adminuser_test

import (
	"context"
	"testing"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// TestExportedUsersAdoptWithNoWrite (issue 45): the tenant's users exported (its first admin, a member
// seeing every product's partners, a suspended member) and applied are adopted with no write, and a
// drift check writes nothing either.
func TestExportedUsersAdoptWithNoWrite(t *testing.T) {
	ns := harness.NewNamespace(t)
	ctx, c := context.Background(), harness.ByHand(t, ns)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	partner, err := c.CreateAdminUser(ctx, tsclient.UserParams{Username: "partner", Email: "partner@acme.example"})
	must(err)
	_, err = c.ChangeAdminUser(ctx, partner.ID, tsclient.UserActivate)
	must(err)
	_, err = c.SetAdminUserPermissions(ctx, partner.ID, []string{"partners"}, true, nil)
	must(err)
	gone, err := c.CreateAdminUser(ctx, tsclient.UserParams{Username: "gone", Email: "gone@acme.example"})
	must(err)
	_, err = c.ChangeAdminUser(ctx, gone.ID, tsclient.UserActivate)
	must(err)
	_, err = c.ChangeAdminUser(ctx, gone.ID, tsclient.UserSuspend)
	must(err)

	exported, err := controllers.ExportTenant(ctx, harness.TenantClient(t, ns), plugin.ExportOptions{})
	must(err)
	users := exported.Files["users"]
	if len(users) != 3 {
		t.Fatalf("exported users %v, want the first admin, partner and gone", users)
	}
	harness.AdoptsWithNoWrite(t, ns, users, map[string]int{"AdminUser": 3})
}
