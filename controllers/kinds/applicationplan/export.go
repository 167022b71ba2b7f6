package applicationplan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the application plans of the exported products, with their limits, pricing rules and
// the features they enable, each to its product's file.
func Export(ctx context.Context, x *plugin.Exporter) error {
	for _, p := range x.Products {
		if err := export(ctx, x, p); err != nil {
			return err
		}
	}
	return nil
}

// export exports the plans of one product.
func export(ctx context.Context, x *plugin.Exporter, p plugin.ExportedProduct) error {
	plans, err := x.Client.ListPlans(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot list the plans of product %q: %w", p.SystemName, err)
	}
	for _, plan := range plans {
		published, approval := plan.State == "published", plan.ApprovalRequired
		trial := int32(plan.TrialPeriodDays)
		spec := v1alpha1.ApplicationPlanSpec{ProductRef: p.Name, Name: plan.Name, SystemName: plan.SystemName, Published: &published,
			ApprovalRequired: &approval, TrialPeriodDays: &trial, SetupFee: string(plan.SetupFee), CostMonth: string(plan.CostPerMonth),
			Default: plan.Default}
		limits, err := x.Client.ListLimits(ctx, plan.ID)
		if err != nil {
			return fmt.Errorf("cannot list the limits of plan %q: %w", plan.SystemName, err)
		}
		for _, l := range limits {
			ref, ok := x.MetricRefs[l.MetricID]
			if !ok {
				x.Leave("ApplicationPlan %q: a limit on metric %d, of a backend not exported, is left out", plan.SystemName, l.MetricID)
				continue
			}
			spec.Limits = append(spec.Limits, v1alpha1.LimitSpec{Period: v1alpha1.LimitPeriod(l.Period), Value: l.Value, MetricMethodRef: ref})
		}
		rules, err := x.Client.ListPricingRules(ctx, plan.ID)
		if err != nil {
			return fmt.Errorf("cannot list the pricing rules of plan %q: %w", plan.SystemName, err)
		}
		for _, r := range rules {
			ref, ok := x.MetricRefs[r.MetricID]
			if !ok {
				x.Leave("ApplicationPlan %q: a pricing rule on metric %d, of a backend not exported, is left out", plan.SystemName, r.MetricID)
				continue
			}
			spec.PricingRules = append(spec.PricingRules, v1alpha1.PricingRuleSpec{From: r.Min, To: r.Max, PricePerUnit: string(r.CostPerUnit), MetricMethodRef: ref})
		}
		if spec.Features, err = p.EnabledFeatures(ctx, x.Client, tsclient.ApplicationPlans, plan.ID); err != nil {
			return err
		}
		name := kit.CutString(p.Name+"-"+plugin.ObjectName(plan.SystemName), 253)
		x.PlanNames[plan.ID] = name
		x.Add(p.File, &v1alpha1.ApplicationPlan{TypeMeta: plugin.TypeMeta("ApplicationPlan"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	return nil
}

// Inventory lists the tenant's application plans for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAllPlans(ctx)
	return plugin.Items("ApplicationPlan", "application plans", all, err, func(r tsclient.ApplicationPlan) (int64, string, string) {
		return r.ID, r.SystemName, plugin.Parent("product", r.ServiceID)
	})
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeletePlan(ctx, it.ParentID, it.ID)
}
