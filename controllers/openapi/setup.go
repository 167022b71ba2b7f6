package openapi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// SetupWithManager registers the OpenAPI controller: it owns what it generates (woken when one changes,
// to put a hand edit back and to report their state), is woken when a resource of its namespace that no
// OpenAPI owns goes (it may have blocked a generation), and reads its document from a ConfigMap or Secret.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	list := &v1alpha1.OpenAPIList{}
	blockerGone := blockerGone(r.Reader)
	return ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.OpenAPI{}).Named("openapi").WithOptions(opts).
		Owns(&v1alpha1.Backend{}).Owns(&v1alpha1.Product{}).Owns(&v1alpha1.ActiveDoc{}).Owns(&v1alpha1.ApplicationPlan{}).
		Watches(&v1alpha1.Backend{}, blockerGone).Watches(&v1alpha1.Product{}, blockerGone).Watches(&v1alpha1.ActiveDoc{}, blockerGone).
		Watches(&v1alpha1.ApplicationPlan{}, blockerGone).Watches(&v1alpha1.ApplicationPlan{}, handler.EnqueueRequestsFromMapFunc(productOf)).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(kit.Referencing(r.Reader, list, kit.IndexConfigMapRefs))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(kit.Referencing(r.Reader, list, kit.IndexSecretRefs))).
		Complete(r)
}

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

// productOf wakes the OpenAPI a plan's productRef may name: an OpenAPI that waits for a plan to stop
// limiting a method its document no longer has goes on as soon as the plan changes.
func productOf(_ context.Context, obj client.Object) []reconcile.Request {
	if p, ok := obj.(*v1alpha1.ApplicationPlan); ok {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: p.Namespace, Name: p.Spec.ProductRef}}}
	}
	return nil
}
