package controllers

import (
	"context"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// fieldIndex is one field index: of objects like obj, under index, by what names returns.
type fieldIndex struct {
	obj   client.Object
	index string
	names func(client.Object) []string
}

// registerIndexes adds the field indexes the watches and checks use.
func registerIndexes(ctx context.Context, mgr ctrl.Manager) error {
	for _, ix := range fieldIndexes() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, ix.obj, ix.index, ix.names); err != nil {
			return err
		}
	}
	return nil
}

// fieldIndexes are the field indexes the watches and checks use (registerIndexes; diff's in-memory
// reader has the same): the Secrets and the remote object of every kind of the table, each edge of the
// reference graph (and the key its To objects are found by), and each row's own (the generators' too).
func fieldIndexes() []fieldIndex {
	var out []fieldIndex
	for _, r := range rows() {
		obj := r.New()
		out = append(out, fieldIndex{obj, kit.IndexSecretRefs, secretRefs})
		if _, synced := r.(kindRow); synced {
			out = append(out, fieldIndex{obj, kit.IndexOwnerKey, ownerKeyOf})
		}
		out = append(out, r.indexes()...)
	}
	for _, r := range referenceGraph {
		out = append(out, fieldIndex{newKind(r.From), r.Index, r.Names})
		if r.KeyIndex != "" {
			key := r.Key
			out = append(out, fieldIndex{newKind(r.To), r.KeyIndex, func(o client.Object) []string { return kit.Single(key(o)) }})
		}
	}
	return out
}

// secretRefs lists the Secrets an object reads: what its row says (its provider account by spec, policy
// configurations, documents, passwords, an OpenAPI's document...), and the provider account it was last
// synced with.
func secretRefs(o client.Object) []string {
	set := map[string]bool{}
	if k := rowNamed(engine.KindOf(o)); k != nil {
		for _, name := range k.secrets(o) {
			set[name] = true
		}
	}
	if s, ok := o.(v1alpha1.SyncedObject); ok && s.GetSyncStatus().ProviderAccountSecret != "" {
		set[s.GetSyncStatus().ProviderAccountSecret] = true
	}
	return kit.SortedKeys(set)
}

// ownerKeyOf indexes an object by the remote object it owns, from its status.
func ownerKeyOf(o client.Object) []string {
	s, ok := o.(v1alpha1.SyncedObject)
	k := kindNamed(engine.KindOf(o))
	if !ok || k == nil {
		return nil
	}
	st := s.GetSyncStatus()
	if st.TenantHost == "" || st.SystemName == "" {
		return nil
	}
	return []string{kit.OwnerKey(st.TenantHost, k.ownerScope(o), st.SystemName)}
}

func itoa(i int) string { return strconv.Itoa(i) }
