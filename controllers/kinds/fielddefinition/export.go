package fielddefinition

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// specTarget is a spec's target of porta's class name.
func specTarget(remote string) v1alpha1.FieldTarget {
	if remote == "Cinstance" {
		return v1alpha1.FieldTargetApplication
	}
	return v1alpha1.FieldTarget(remote)
}

// Export exports the tenant's field definitions to "fields", unless only products, backends or accounts
// are asked for: every one, built in or extra, with its position, so that the tenant's forms come back
// as they are.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if len(x.Options.Backends) > 0 || len(x.Options.Products) > 0 || len(x.Options.Accounts) > 0 {
		return nil
	}
	defs, err := x.Client.ListFieldDefinitions(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the field definitions: %w", err)
	}
	for _, d := range defs {
		target := specTarget(d.Target)
		position := int32(d.Position)
		x.Add("fields", &v1alpha1.FieldDefinition{TypeMeta: plugin.TypeMeta("FieldDefinition"),
			ObjectMeta: metav1.ObjectMeta{Name: plugin.ObjectName(string(target) + "-" + d.Name)},
			Spec: v1alpha1.FieldDefinitionSpec{Target: target, Name: d.Name, Label: d.Label, Required: d.Required, Hidden: d.Hidden,
				ReadOnly: d.ReadOnly, Choices: d.Choices, Position: &position}})
	}
	return nil
}

// Inventory lists the tenant's field definitions for `kubectl apimsync diff --unmanaged` (one list), but for the
// fields porta requires, which no tenant can be without.
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListFieldDefinitions(ctx)
	all = slices.DeleteFunc(all, func(f tsclient.FieldDefinition) bool { return forcedRequired(f.Target, f.Name) })
	return plugin.Items("FieldDefinition", "field definitions", all, err, func(r tsclient.FieldDefinition) (int64, string, string) { return r.ID, r.Target + "/" + r.Name, "" })
}

// Prune deletes one of the tenant's field definitions that a TenantSettings' prune found unmanaged
// (plugin.Pruner); the ones porta requires are never listed.
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteFieldDefinition(ctx, it.ID)
}
