package accountplan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's account plans to "account-plans", with the account features each enables
// (read only when the tenant has any), unless only products or backends are asked for.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if len(x.Options.Backends) > 0 || len(x.Options.Products) > 0 || len(x.Options.Accounts) > 0 {
		return nil
	}
	plans, err := x.Client.ListAccountPlans(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the account plans: %w", err)
	}
	account, err := x.Client.ListAccountFeatures(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the account features: %w", err)
	}
	for _, p := range plans {
		published, approval := p.State == "published", p.ApprovalRequired
		spec := v1alpha1.AccountPlanSpec{Name: p.Name, Published: &published, ApprovalRequired: &approval, Default: p.Default}
		if len(account) > 0 {
			enabled, err := x.Client.ListPlanFeatures(ctx, tsclient.AccountPlans, p.ID)
			if err != nil {
				return fmt.Errorf("cannot list the features of account plan %q: %w", p.Name, err)
			}
			for _, f := range enabled {
				if spec.Features == nil {
					spec.Features = map[string]v1alpha1.AccountFeatureSpec{}
				}
				spec.Features[f.SystemName] = v1alpha1.AccountFeatureSpec{Name: f.Name, Description: f.Description}
			}
		}
		name := plugin.ObjectName(p.Name)
		x.AccountPlanNames[p.ID] = name
		x.Add("account-plans", &v1alpha1.AccountPlan{TypeMeta: plugin.TypeMeta("AccountPlan"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	return nil
}

// Inventory lists the tenant's account plans for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAccountPlans(ctx)
	return plugin.Items("AccountPlan", "account plans", all, err, func(r tsclient.AccountPlan) (int64, string, string) { return r.ID, r.Name, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteAccountPlan(ctx, it.ID)
}
