package product

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Warnings are what a Product's change is warned of at apply time (old nil on create): a metric or method
// removed while a plan limits or prices it, and a Retain deletion policy taken while applications use the
// product's plans.
func Warnings(ctx context.Context, reader client.Reader, old, p *v1alpha1.Product) []string {
	var out []string
	if old != nil {
		removed := kit.RemovedNames(old.Spec.Metrics, p.Spec.Metrics, old.Spec.Methods, p.Spec.Methods)
		out = kit.PlansStillNaming(ctx, reader, p.Namespace, removed, func(plan *v1alpha1.ApplicationPlan, ref v1alpha1.MetricMethodRef) bool {
			return plan.Spec.ProductRef == p.Name && ref.Backend == ""
		})
	}
	retains := p.Spec.EffectiveDeletionPolicy() == v1alpha1.DeletionPolicyRetain
	if retains && (old == nil || old.Spec.EffectiveDeletionPolicy() != v1alpha1.DeletionPolicyRetain) {
		if n := applicationsOf(ctx, reader, p); n > 0 {
			out = append(out, fmt.Sprintf("deletionPolicy Retain while %d Applications use this Product's plans: deleting this resource leaves "+
				"the product in 3scale with those applications' access to it, and apimsync no longer manages it", n))
		}
	}
	return out
}

// applicationsOf counts the Applications of p's namespace on one of its plans.
func applicationsOf(ctx context.Context, reader client.Reader, p *v1alpha1.Product) int {
	var plans v1alpha1.ApplicationPlanList
	if err := reader.List(ctx, &plans, client.InNamespace(p.Namespace), client.MatchingFields{kit.IndexProductRef: p.Name}); err != nil {
		return 0
	}
	n := 0
	for _, plan := range plans.Items {
		var apps v1alpha1.ApplicationList
		if err := reader.List(ctx, &apps, client.InNamespace(p.Namespace), client.MatchingFields{kit.IndexPlanRef: plan.Name}); err == nil {
			n += len(apps.Items)
		}
	}
	return n
}
