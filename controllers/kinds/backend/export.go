package backend

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit/children"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the backend APIs the options select (all without a filter; those named, and those the
// products named use) with their metrics, methods and mapping rules, to "backends".
func Export(ctx context.Context, x *plugin.Exporter) error {
	backends, err := x.Client.ListBackends(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the backends: %w", err)
	}
	used := map[int64]bool{} // by a product the options name
	if len(x.Options.Products) > 0 {
		err := x.EachSelectedProduct(ctx, func(_ tsclient.Product, usages []tsclient.BackendUsage) error {
			for _, u := range usages {
				used[u.BackendID] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, b := range backends {
		if x.Everything() || slices.Contains(x.Options.Backends, b.SystemName) || used[b.ID] {
			if err := export(ctx, x, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// export exports one backend API.
func export(ctx context.Context, x *plugin.Exporter, b tsclient.Backend) error {
	kids, err := children.Read(ctx, x.Client, tsclient.BackendScope(b.ID))
	if err != nil {
		return err
	}
	name := plugin.ObjectName(b.SystemName)
	x.BackendNames[b.ID] = name
	x.RecordRefs(kids, name)
	spec := v1alpha1.BackendSpec{Name: b.Name, SystemName: b.SystemName, Description: b.Description, PrivateBaseURL: b.PrivateEndpoint}
	own := x.SpecOf(kids, fmt.Sprintf("Backend %q", b.SystemName))
	spec.Metrics, spec.Methods, spec.MappingRules = own.Metrics, own.Methods, own.Rules
	x.Add("backends", &v1alpha1.Backend{TypeMeta: plugin.TypeMeta("Backend"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	return nil
}

// Inventory lists the tenant's backends for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListBackends(ctx)
	return plugin.Items("Backend", "backends", all, err, func(r tsclient.Backend) (int64, string, string) { return r.ID, r.SystemName, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteBackend(ctx, it.ID)
}
