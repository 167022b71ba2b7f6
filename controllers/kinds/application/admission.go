package application

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// OnPlans counts the Applications of namespace on one of plans, for a warning at apply time.
func OnPlans(ctx context.Context, reader client.Reader, namespace string, plans []string) int {
	n := 0
	for _, plan := range plans {
		var apps v1alpha1.ApplicationList
		if err := reader.List(ctx, &apps, client.InNamespace(namespace), client.MatchingFields{kit.IndexPlanRef: plan}); err == nil {
			n += len(apps.Items)
		}
	}
	return n
}
