package openapi

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// SetupWithManager registers the OpenAPI controller: it owns what it generates (woken when one changes,
// to put a hand edit back and to report their state), is woken when a resource of its namespace that no
// OpenAPI owns goes (it may have blocked a generation), and reads its document from a ConfigMap or Secret,
// or from the artifact of a Flux source.
//
// It watches the Flux sources an OpenAPI may read its document from (spec.sourceRef) whose CRD is
// installed as the manager starts, and reads those from the cache; without Flux the manager starts all
// the same, and a source is read from the API server (an OpenAPI waiting for one looks again on its
// recheck), only not watched.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	list := &v1alpha1.OpenAPIList{}
	blockerGone := blockerGone(r.Reader)
	b := ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.OpenAPI{}).Named("openapi").WithOptions(opts).
		Owns(&v1alpha1.Backend{}).Owns(&v1alpha1.Product{}).Owns(&v1alpha1.ActiveDoc{}).Owns(&v1alpha1.ApplicationPlan{}).
		Watches(&v1alpha1.Backend{}, blockerGone).Watches(&v1alpha1.Product{}, blockerGone).Watches(&v1alpha1.ActiveDoc{}, blockerGone).
		Watches(&v1alpha1.ApplicationPlan{}, blockerGone).
		Watches(&v1alpha1.ApplicationPlan{}, handler.EnqueueRequestsFromMapFunc(namedBy(r.Reader)), builder.WithPredicates(limitsMayChange)).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(kit.Referencing(r.Reader, list, kit.IndexConfigMapRefs))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(kit.Referencing(r.Reader, list, kit.IndexSecretRefs)))
	r.FluxSources.watched, r.FluxSources.cache = map[string]bool{}, mgr.GetCache()
	for _, kind := range SourceKinds {
		gvk := SourceGroupVersion.WithKind(kind)
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			mgr.GetLogger().WithName("openapi").Info("not watching Flux sources of this kind: its CRD is not installed (spec.sourceRef reads them from the API server)",
				"kind", kind, "apiVersion", SourceGroupVersion.String())
			continue
		}
		src := &unstructured.Unstructured{}
		src.SetGroupVersionKind(gvk)
		b = b.Watches(src, handler.EnqueueRequestsFromMapFunc(readingSource(r.Reader, kind)), builder.WithPredicates(artifactChanged))
		r.FluxSources.watched[kind] = true
	}
	return b.Complete(r)
}

// readingSource maps a Flux source of kind to the OpenAPIs of its namespace whose spec.sourceRef names it.
func readingSource(reader client.Reader, kind string) handler.MapFunc {
	return func(ctx context.Context, src client.Object) []reconcile.Request {
		var openAPIs v1alpha1.OpenAPIList
		if err := reader.List(ctx, &openAPIs, client.InNamespace(src.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, o := range openAPIs.Items {
			if ref := o.Spec.SourceRef; ref != nil && ref.Kind == kind && ref.Name == src.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
			}
		}
		return out
	}
}

// artifactChanged passes a source's creation and deletion, and the updates that change its artifact
// (a new revision, a first artifact, a new URL): not the status writes of its every reconcile.
var artifactChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	artifactOf := func(obj client.Object) any {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			a, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "artifact")
			return a
		}
		return nil
	}
	return !equality.Semantic.DeepEqual(artifactOf(e.ObjectOld), artifactOf(e.ObjectNew))
}}

// blockerGone wakes the OpenAPIs of a namespace when a Backend, Product or ActiveDoc there that no
// OpenAPI controls is deleted: it may have held a name one of them generates (generation is
// all-or-nothing, so a blocked OpenAPI made nothing and owns nothing that would wake it).
func blockerGone(reader client.Reader) handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if owner := metav1.GetControllerOf(e.Object); owner != nil && owner.Kind == "OpenAPI" {
			return
		}
		var openAPIs v1alpha1.OpenAPIList
		if err := reader.List(ctx, &openAPIs, client.InNamespace(e.Object.GetNamespace())); err != nil {
			return
		}
		for _, o := range openAPIs.Items {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
		}
	}}
}

// namedBy wakes the OpenAPIs of the plan's namespace that the plan may name (its productRef, the
// backends of its limits and pricing rules): an OpenAPI that waits for a plan to stop limiting a method
// its document no longer has goes on as soon as the plan changes. Only OpenAPIs the cache holds are
// woken: in a burst of plans, most name a Product no OpenAPI generated, and each would be a reconcile of
// nothing.
func namedBy(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		p, ok := obj.(*v1alpha1.ApplicationPlan)
		if !ok {
			return nil
		}
		names := []string{p.Spec.ProductRef}
		for _, ref := range planRefs(p) { // and the backend-only OpenAPIs of the backends it names
			if ref.Backend != "" {
				names = append(names, ref.Backend)
			}
		}
		var openAPIs v1alpha1.OpenAPIList
		// Read only, for each plan event: the cache's objects as they are, no copy of each.
		if err := reader.List(ctx, &openAPIs, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, o := range openAPIs.Items {
			if slices.Contains(names, o.Name) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
			}
		}
		return out
	}
}

// limitsMayChange passes a plan's creation and deletion, and the updates that may change what it limits
// or prices (its spec: a new generation) or whether it still counts (its deletion begun): an OpenAPI
// reads nothing else of a plan it did not generate (checkNoPlanStillLimits). Its status writes, most of
// its events, do not wake OpenAPIs.
var limitsMayChange = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
		e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
}}
