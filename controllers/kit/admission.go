package kit

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// What an object's change is warned of at apply time (admission warnings): legal, but risky.

// RemovedNames are the names of old's metrics and methods that now's lack (old nil: none).
func RemovedNames(old, now map[string]v1alpha1.MetricSpec, oldMethods, nowMethods map[string]v1alpha1.MethodSpec) []string {
	var out []string
	for name := range old {
		if _, ok := now[name]; !ok {
			out = append(out, name)
		}
	}
	for name := range oldMethods {
		if _, ok := nowMethods[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// PlansStillNaming warns of the ApplicationPlans of namespace that limit or price one of removed, a metric
// or method of the object their references name (on: a plan's limit or pricing rule names that object).
func PlansStillNaming(ctx context.Context, reader client.Reader, namespace string, removed []string,
	on func(p *v1alpha1.ApplicationPlan, ref v1alpha1.MetricMethodRef) bool) []string {
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
			if slices.ContainsFunc(refs, func(r v1alpha1.MetricMethodRef) bool { return r.SystemName == name && on(p, r) }) {
				out = append(out, fmt.Sprintf("metric or method %q is removed while ApplicationPlan %q limits or prices it: "+
					"that plan becomes Invalid until it no longer names it (3scale would delete its limits and pricing rules with the metric)", name, p.Name))
			}
		}
	}
	return out
}
