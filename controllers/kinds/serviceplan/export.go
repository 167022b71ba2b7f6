package serviceplan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the service plans of the exported products, each to its product's file.
func Export(ctx context.Context, x *plugin.Exporter) error {
	for _, p := range x.Products {
		plans, err := x.Client.ListServicePlans(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("cannot list the service plans of product %q: %w", p.SystemName, err)
		}
		for _, sp := range plans {
			published, approval := sp.State == "published", sp.ApprovalRequired
			x.Add(p.File, &v1alpha1.ServicePlan{TypeMeta: plugin.TypeMeta("ServicePlan"),
				ObjectMeta: metav1.ObjectMeta{Name: kit.CutString(p.Name+"-service-"+plugin.ObjectName(sp.Name), 253)},
				Spec:       v1alpha1.ServicePlanSpec{ProductRef: p.Name, Name: sp.Name, Published: &published, ApprovalRequired: &approval, Default: sp.Default}})
		}
	}
	return nil
}
