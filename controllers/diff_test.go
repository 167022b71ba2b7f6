package controllers

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// asFiles returns objects as files hold them: spec and metadata, no status.
func asFiles(ns string, objs ...client.Object) []client.Object {
	var out []client.Object
	for _, o := range objs {
		c := o.DeepCopyObject().(client.Object)
		c.SetNamespace(ns)
		c.SetResourceVersion("")
		c.SetUID("")
		c.SetFinalizers(nil)
		c.SetAnnotations(nil)
		c.SetGeneration(0)
		c.SetCreationTimestamp(metav1.Time{})
		if s, ok := c.(v1alpha1.SyncedObject); ok {
			*s.GetSyncStatus() = v1alpha1.CommonStatus{}
			s.SetRemoteID(0)
		}
		out = append(out, c)
	}
	return out
}

// plannedWrites adds up the writes of plans, and tells whether any would change 3scale.
func plannedWrites(t *testing.T, ns string, files []client.Object) (int, bool, []Plan) {
	t.Helper()
	plans, err := DiffObjects(context.Background(), k8s, env.Scheme, ns, files)
	if err != nil {
		t.Fatal(err)
	}
	n, changes := 0, false
	for _, p := range plans {
		n += len(p.Writes)
		changes = changes || p.Changes()
	}
	return n, changes, plans
}

// TestDiffIsWhatASyncDoes: diff uses the syncers' own comparison: a diff that finds nothing is followed by
// a sync with no write, and a diff that lists N writes by a sync that makes those N. It never writes to
// 3scale itself, and a new object is a create.
func TestDiffIsWhatASyncDoes(t *testing.T) {
	ns := newNamespace(t)
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	create(t, defaultSecret(ns), backend, product)
	waitState(t, v1alpha1.ConditionSynced, backend, product)
	time.Sleep(time.Second)

	before := writesTo(ns)
	n, changes, plans := plannedWrites(t, ns, asFiles(ns, backend, product))
	if n != 0 || changes {
		t.Errorf("diff of what is synced: %d writes, changes %v: %+v", n, changes, plans)
	}
	if got := writesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}

	// Edits: the product's description and a mapping rule of the backend.
	editedBackend, editedProduct := backend.DeepCopy(), product.DeepCopy()
	editedBackend.Spec.MappingRules = append(editedBackend.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "DELETE", Pattern: "/pets/{id}$", MetricMethodRef: "hits", Increment: 1})
	editedProduct.Spec.Description = "Pets, described"
	extra := petsBackend(ns)
	extra.Name, extra.Spec.SystemName = "more-pets", "more_pets"
	n, changes, plans = plannedWrites(t, ns, asFiles(ns, editedBackend, editedProduct, extra))
	if n == 0 || !changes {
		t.Fatalf("diff of edits: %d writes: %+v", n, plans)
	}
	created := false
	for _, p := range plans {
		created = created || (p.Name == "more-pets" && p.Action == "create")
	}
	if !created {
		t.Errorf("a new Backend is not a create: %+v", plans)
	}
	if got := writesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}
	editAndWait(t, backend, func() { backend.Spec.MappingRules = editedBackend.Spec.MappingRules })
	editAndWait(t, product, func() { product.Spec.Description = editedProduct.Spec.Description })
	if got := writesTo(ns) - before; got != n {
		t.Errorf("the sync made %d writes, the diff listed %d: %+v", got, n, plans)
	}
}
