package kit

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// What watches and checks find objects by: the field indexes the manager registers (the table of kinds
// derives which objects each is on) and the map functions that turn a change into the requests of the
// objects it concerns.

// Field indexes the controllers register; watches use them to find the objects a change concerns.
const (
	// IndexSecretRefs indexes objects by the names of the Secrets they read (provider account, policy
	// configuration, OIDC issuer).
	IndexSecretRefs = "apimsync.secretRefs"
	// IndexBackendRefs indexes Products by the Backends of spec.backendUsages, and ApplicationPlans by the
	// Backends their limits and pricing rules name.
	IndexBackendRefs = "apimsync.backendRefs"
	// IndexProductRef indexes ApplicationPlans by spec.productRef.
	IndexProductRef = "apimsync.productRef"
	// IndexServicePlanRefs indexes DeveloperAccounts by spec.servicePlanRefs.
	IndexServicePlanRefs = "apimsync.servicePlanRefs"
	// IndexAccountPlanRef indexes DeveloperAccounts by spec.accountPlanRef.
	IndexAccountPlanRef = "apimsync.accountPlanRef"
	// IndexAccountRef indexes Applications by spec.accountRef.
	IndexAccountRef = "apimsync.accountRef"
	// IndexPlanRef indexes Applications by spec.planRef.
	IndexPlanRef = "apimsync.planRef"
	// IndexConfigMapRefs indexes ActiveDocs by the ConfigMap they read their document from.
	IndexConfigMapRefs = "apimsync.configMapRefs"
	// IndexCustomPolicyRefs indexes Products by the custom policies of their chain (v1alpha1.PolicyKey).
	IndexCustomPolicyRefs = "apimsync.customPolicyRefs"
	// IndexPolicyKey indexes CustomPolicyDefinitions by the policy they define (v1alpha1.PolicyKey).
	IndexPolicyKey = "apimsync.policyKey"
)

// Single is name as a list: none when it is empty.
func Single(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}

// ConfigMapOf is the ConfigMap a document reference names, if it names one.
func ConfigMapOf(r *v1alpha1.DocumentRef) []string {
	if r != nil && r.ConfigMapKeyRef != nil {
		return Single(r.ConfigMapKeyRef.Name)
	}
	return nil
}

// ReferencingThrough maps a changed object to the objects of list's kind that reference (index) the
// objects of via's kind that reference it (viaIndex): two hops of referencing.
func ReferencingThrough(reader client.Reader, via client.ObjectList, viaIndex string, list client.ObjectList, index string) handler.MapFunc {
	first, second := Referencing(reader, via, viaIndex), Referencing(reader, list, index)
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, r := range first(ctx, obj) {
			hop := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}}
			reqs = append(reqs, second(ctx, hop)...)
		}
		return reqs
	}
}

// NamesByKey returns the names of the objects of list's kind in namespace whose index holds one of keys.
func NamesByKey(ctx context.Context, reader client.Reader, list client.ObjectList, namespace, index string, keys []string) []string {
	var names []string
	for _, key := range keys {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.InNamespace(namespace), client.MatchingFields{index: key}, client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		_ = ForEachItem(l, func(o client.Object) { names = append(names, o.GetName()) })
	}
	return names
}

// Referencing maps a changed object to the objects of list's kind, in its namespace, whose index field
// names it.
func Referencing(reader client.Reader, list client.ObjectList, index string) handler.MapFunc {
	return ReferencingKey(reader, list, index, client.Object.GetName)
}

// ReferencingKey maps a changed object to the objects of list's kind, in its namespace, whose index
// field holds its key.
func ReferencingKey(reader client.Reader, list client.ObjectList, index string, key func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index: key(obj)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		return requestsFor(l)
	}
}

// requestsFor is a request for every object of list.
func requestsFor(list client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	_ = ForEachItem(list, func(o client.Object) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	})
	return reqs
}

// Rivals maps a changed object to the other objects of list's kind, in its namespace, whose index field
// holds the same key as its own (key: "" for none) and that want what only one of them may have (wants):
// one refused as the second is woken when the first lets go, changes key or goes.
func Rivals(reader client.Reader, list client.ObjectList, index string, key func(client.Object) string, wants func(client.Object) bool) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		k := key(obj)
		if k == "" {
			return nil
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index: k}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		_ = ForEachItem(l, func(o client.Object) {
			if o.GetUID() != obj.GetUID() && wants(o) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		})
		return reqs
	}
}
