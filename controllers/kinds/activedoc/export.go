package activedoc

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the ActiveDocs, each with its document in a ConfigMap beside it: those bound to an
// exported product to the product's file, and, when no product or backend filter is given, those bound
// to no product to "activedocs". The tenant's ActiveDocs are listed once.
func Export(ctx context.Context, x *plugin.Exporter) error {
	docs, err := x.Client.ListActiveDocs(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the ActiveDocs: %w", err)
	}
	products := map[int64]plugin.ExportedProduct{}
	for _, p := range x.Products {
		products[p.ID] = p
	}
	for _, d := range docs {
		file, product := "activedocs", ""
		if p, ok := products[d.ServiceID]; ok {
			file, product = p.File, p.Name
		} else if d.ServiceID != 0 || !x.Everything() {
			continue // bound to a product not exported, or unbound when only some products are
		}
		name := plugin.ObjectName(d.SystemName)
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name + "-openapi"},
			Data: map[string]string{"openapi.json": d.Body}}
		x.Add(file, cm)
		x.Add(file, &v1alpha1.ActiveDoc{TypeMeta: plugin.TypeMeta("ActiveDoc"), ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ActiveDocSpec{Name: d.Name, SystemName: d.SystemName, Description: d.Description, Published: d.Published,
				SkipSwaggerValidations: d.SkipSwaggerValidations, ProductRef: product,
				DocumentRef: &v1alpha1.DocumentRef{ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: cm.Name, Key: "openapi.json"}}}})
	}
	return nil
}

// Inventory lists the tenant's ActiveDocs for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListActiveDocs(ctx)
	return plugin.Items("ActiveDoc", "ActiveDocs", all, err, func(r tsclient.ActiveDoc) (int64, string, string) { return r.ID, r.SystemName, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteActiveDoc(ctx, it.ID)
}
