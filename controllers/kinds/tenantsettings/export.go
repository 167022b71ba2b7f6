package tenantsettings

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's settings to "settings", unless a filter is given: the provider account's
// details as 3scale shows them (an empty one left out). The webhook is not exported: porta's API cannot
// read it.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if !x.Everything() || len(x.Options.Accounts) > 0 || x.Options.OnlyPortal {
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
