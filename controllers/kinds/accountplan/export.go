package accountplan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's account plans to "account-plans", unless only products or backends are
// asked for.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if len(x.Options.Backends) > 0 || len(x.Options.Products) > 0 || len(x.Options.Accounts) > 0 {
		return nil
	}
	plans, err := x.Client.ListAccountPlans(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the account plans: %w", err)
	}
	for _, p := range plans {
		published, approval := p.State == "published", p.ApprovalRequired
		x.Add("account-plans", &v1alpha1.AccountPlan{TypeMeta: plugin.TypeMeta("AccountPlan"),
			ObjectMeta: metav1.ObjectMeta{Name: plugin.ObjectName(p.Name)},
			Spec:       v1alpha1.AccountPlanSpec{Name: p.Name, Published: &published, ApprovalRequired: &approval, Default: p.Default}})
	}
	return nil
}
