package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// pruneItem and unsettledIn are pruneBy and unsettled, for the TenantSettings row of the table (which
// they read: set at init to break the initialization cycle).
var (
	pruneItem   plugin.Pruner
	unsettledIn func(reader client.Reader) func(ctx context.Context, tenant, kind string) (string, error)
)

func init() { pruneItem, unsettledIn = pruneBy, unsettled }

// pruneBy deletes one unmanaged object for a TenantSettings' prune, by its kind's row.
func pruneBy(ctx context.Context, c *tsclient.Client, item plugin.RemoteItem) (string, error) {
	k := kindNamed(item.Kind)
	if k == nil || k.prune() == nil {
		return "", fmt.Errorf("kind %s is not pruned", item.Kind)
	}
	return k.prune()(ctx, c, item)
}

// unsettled names an object of kind that may be about to take one of a tenant's objects — it holds no
// remote id yet and is not known to be on another tenant — "" when there is none: until it syncs, what it
// would create or adopt looks unmanaged, so a prune of that kind waits.
func unsettled(reader client.Reader) func(ctx context.Context, tenant, kind string) (string, error) {
	return func(ctx context.Context, tenant, kind string) (string, error) {
		k := kindNamed(kind)
		if k == nil {
			return "", nil
		}
		list := k.NewList()
		if err := reader.List(ctx, list); err != nil {
			return "", fmt.Errorf("cannot list the %s objects: %w", kind, err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			return "", err
		}
		for _, o := range objs {
			obj, ok := o.(engine.Object)
			if !ok || obj.GetRemoteID() != 0 || !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			if host := obj.GetSyncStatus().TenantHost; host == "" || host == tenant {
				return obj.GetNamespace() + "/" + obj.GetName(), nil
			}
		}
		return "", nil
	}
}
