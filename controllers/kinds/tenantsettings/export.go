package tenantsettings

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's settings to "settings", unless a filter is given: the provider account's
// details as 3scale shows them (an empty one left out). The webhook is not exported: porta's API cannot
// read it.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if !x.WholeTenant() {
		return nil
	}
	p, err := x.Client.GetProvider(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the provider account: %w", err)
	}
	details := &v1alpha1.ProviderDetails{}
	for _, f := range []struct {
		v    string
		into **string
	}{{p.FromEmail, &details.FromEmail}, {p.SupportEmail, &details.SupportEmail}, {p.FinanceSupportEmail, &details.FinanceSupportEmail}, {p.SiteAccessCode, &details.SiteAccessCode}} {
		if f.v != "" {
			v := f.v
			*f.into = &v
		}
	}
	x.Add("settings", &v1alpha1.TenantSettings{TypeMeta: plugin.TypeMeta("TenantSettings"), ObjectMeta: metav1.ObjectMeta{Name: "tenant-settings"},
		Spec: v1alpha1.TenantSettingsSpec{Account: details}})
	return nil
}

// Inventory lists the admin portal's sign-in providers for `kubectl apimsync diff --unmanaged` (one
// list); the webhook is not listed: porta's API cannot read it.
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAdminAuthenticationProviders(ctx)
	items, err := plugin.Items("TenantSettings", "admin portal's sign-in providers", all, err, func(p tsclient.AuthenticationProvider) (int64, string, string) {
		return p.ID, p.SystemName, ""
	})
	for i := range items {
		items[i].Collection = adminSignInCollection
	}
	return items, err
}

// adminSignInCollection is the collection of the admin portal's sign-in providers.
const adminSignInCollection = "admin-signin"

// Holds are the admin-portal sign-in providers a TenantSettings holds, as "collection/id".
func Holds(t *v1alpha1.TenantSettings) []string {
	var out []string
	for _, id := range t.Status.AdminSignIn {
		out = append(out, adminSignInCollection+"/"+strconv.FormatInt(id, 10))
	}
	return out
}
