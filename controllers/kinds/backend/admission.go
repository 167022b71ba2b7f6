package backend

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Warnings are what a Backend's change is warned of at apply time (old nil on create): a metric or method
// removed while a plan limits or prices it.
func Warnings(ctx context.Context, reader client.Reader, old, b *v1alpha1.Backend) []string {
	if old == nil {
		return nil
	}
	removed := kit.RemovedNames(old.Spec.Metrics, b.Spec.Metrics, old.Spec.Methods, b.Spec.Methods)
	return kit.PlansStillNaming(ctx, reader, b.Namespace, removed, func(_ *v1alpha1.ApplicationPlan, ref v1alpha1.MetricMethodRef) bool {
		return ref.Backend == b.Name
	})
}
