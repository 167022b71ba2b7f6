package serviceplan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the service plans of the exported products, each to its product's file, with the
// features they enable (read only for a product with features).
func Export(ctx context.Context, x *plugin.Exporter) error {
	for _, p := range x.Products {
		plans, err := x.Client.ListServicePlans(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("cannot list the service plans of product %q: %w", p.SystemName, err)
		}
		for _, sp := range plans {
			published, approval := sp.State == "published", sp.ApprovalRequired
			spec := v1alpha1.ServicePlanSpec{ProductRef: p.Name, Name: sp.Name, Published: &published, ApprovalRequired: &approval, Default: sp.Default}
			if spec.Features, err = p.EnabledFeatures(ctx, x.Client, tsclient.ServicePlans, sp.ID); err != nil {
				return err
			}
			name := kit.CutString(p.Name+"-service-"+plugin.ObjectName(sp.Name), 253)
			x.ServicePlanNames[sp.ID] = name
			x.Add(p.File, &v1alpha1.ServicePlan{TypeMeta: plugin.TypeMeta("ServicePlan"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		}
	}
	return nil
}

// Inventory lists the tenant's service plans for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAllServicePlans(ctx)
	return plugin.Items("ServicePlan", "service plans", all, err, func(r tsclient.ServicePlan) (int64, string, string) {
		return r.ID, r.Name, plugin.Parent("product", r.ServiceID)
	})
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteServicePlan(ctx, it.ParentID, it.ID)
}
