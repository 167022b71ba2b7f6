package custompolicy

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's policy registry to "custom-policies", unless only backends are asked for
// (products' policy chains may name custom policies; backends' never do).
func Export(ctx context.Context, x *plugin.Exporter) error {
	if len(x.Options.Backends) > 0 && len(x.Options.Products) == 0 {
		return nil
	}
	policies, err := x.Client.ListCustomPolicies(ctx)
	if err != nil {
		if tsclient.IsForbidden(err) || tsclient.IsNotFound(err) {
			x.Leave("the policy registry: the token may not read it (the policy_registry scope): custom policies not exported")
			return nil
		}
		return fmt.Errorf("cannot list the custom policies: %w", err)
	}
	for _, pol := range policies {
		x.Add("custom-policies", &v1alpha1.CustomPolicyDefinition{TypeMeta: plugin.TypeMeta("CustomPolicyDefinition"),
			ObjectMeta: metav1.ObjectMeta{Name: plugin.ObjectName(pol.Name + "-" + pol.Version)},
			Spec:       v1alpha1.CustomPolicyDefinitionSpec{Name: pol.Name, Version: pol.Version, Schema: apiextensionsv1.JSON{Raw: pol.Schema}}})
	}
	return nil
}

// Inventory lists the tenant's custom policies for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListCustomPolicies(ctx)
	return plugin.Items("CustomPolicyDefinition", "custom policies", all, err, func(r tsclient.CustomPolicy) (int64, string, string) { return r.ID, r.Name + "-" + r.Version, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteCustomPolicy(ctx, it.ID)
}
