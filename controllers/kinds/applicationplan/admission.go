package applicationplan

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// StillNaming warns, at apply time, of the plans of namespace that limit or price one of removed, a metric
// or method of the object on tells (on: a plan's product and one of its metric references name that
// object).
func StillNaming(ctx context.Context, reader client.Reader, namespace string, removed []string, on func(product string, ref v1alpha1.MetricMethodRef) bool) []string {
	if len(removed) == 0 {
		return nil
	}
	var plans v1alpha1.ApplicationPlanList
	if err := reader.List(ctx, &plans, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var out []string
	for i := range plans.Items {
		p := &plans.Items[i]
		refs := make([]v1alpha1.MetricMethodRef, 0, len(p.Spec.Limits)+len(p.Spec.PricingRules))
		for _, l := range p.Spec.Limits {
			refs = append(refs, l.MetricMethodRef)
		}
		for _, r := range p.Spec.PricingRules {
			refs = append(refs, r.MetricMethodRef)
		}
		for _, name := range removed {
			if slices.ContainsFunc(refs, func(r v1alpha1.MetricMethodRef) bool { return r.SystemName == name && on(p.Spec.ProductRef, r) }) {
				out = append(out, fmt.Sprintf("metric or method %q is removed while ApplicationPlan %q limits or prices it: "+
					"that plan becomes Invalid until it no longer names it (3scale would delete its limits and pricing rules with the metric)", name, p.Name))
			}
		}
	}
	return out
}

// OfProduct names the plans of product in namespace.
func OfProduct(ctx context.Context, reader client.Reader, namespace, product string) []string {
	var plans v1alpha1.ApplicationPlanList
	if err := reader.List(ctx, &plans, client.InNamespace(namespace), client.MatchingFields{kit.IndexProductRef: product}); err != nil {
		return nil
	}
	out := make([]string, 0, len(plans.Items))
	for _, p := range plans.Items {
		out = append(out, p.Name)
	}
	return out
}
