package controllers

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// shared is what every kind's controller is built with.
type shared struct {
	mgr    ctrl.Manager
	opts   Options
	reader client.Reader
	states *engine.StateTracker
	creds  *kit.CredentialChecks
	// deletions records the deletions under way per namespace, of all kinds.
	deletions *engine.Deletions
	ctrlOpts  func() controller.Options
	// installations is true when the APIManager CRD is there to watch.
	installations bool
}

// kindController builds the generic reconciler of one kind, its controller and its watches: Secrets it
// reads, the objects it references (wake it when they change), and the objects that reference it
// (wake it while it waits for them on deletion).
func kindController[T engine.Object, D any, S engine.Snapshot[S]](sh shared, r *engine.Reconciler[T, D, S], list client.ObjectList, watches ...watch) error {
	kind, newObj := r.Kind, r.New
	r.Client = sh.mgr.GetClient()
	r.Recorder = sh.mgr.GetEventRecorder("apimsync-" + strings.ToLower(kind))
	r.Backoff = engine.NewOrphanBackoff(sh.opts.OrphanBackoffInitial, sh.opts.OrphanBackoffMax)
	r.DriftCheckPeriod, r.States, r.Credentials = sh.opts.DriftCheckPeriod, sh.states, sh.creds
	r.InvalidRetryPeriod, r.QuietWait = max(sh.opts.InvalidRetryPeriod, 0), max(sh.opts.QuietWait, 0)
	r.Sharded = sh.opts.WatchLabelSelector != nil
	r.DependantGrace, r.Deletions = max(sh.opts.DependantGrace, 0), sh.deletions
	r.Dependants = ownedDependants(sh.reader, referenceGraph, kind)
	r.Users = blockingUsers(sh.reader, referenceGraph, kind)
	r.RetainedUnder = retainedUnder(sh.reader, referenceGraph)
	r.OwnersGoing = ownersGoing(sh.reader, referenceGraph)
	r.Claimants = claimants(sh.reader, list)
	b := ctrl.NewControllerManagedBy(sh.mgr).For(newObj()).Named(strings.ToLower(kind)).WithOptions(sh.ctrlOpts()).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(readingSecret(sh.reader, list))).
		// Its own kind: its deletions are recorded (a prune under way, DependantGrace), and the objects
		// that resolve to the same remote object are woken when one changes or goes (ownership conflicts).
		Watches(newObj(), sh.deletions.Handler()).
		Watches(newObj(), handler.EnqueueRequestsFromMapFunc(sameRemoteObject(sh.reader, list)))
	for _, ref := range referenceGraph {
		switch kind {
		case ref.From: // wake it when what it references changes
			b = b.Watches(newKind(ref.To), handler.EnqueueRequestsFromMapFunc(kit.ReferencingKey(sh.reader, list, ref.Index, ref.keyOf)))
		case ref.To: // wake it when what references it changes or goes
			b = b.Watches(newKind(ref.From), handler.EnqueueRequestsFromMapFunc(referenced(sh.reader, ref)))
		}
	}
	if sh.installations {
		// A 3scale installation appearing, changing or going: the objects that would use it, or do.
		manager := &unstructured.Unstructured{}
		manager.SetGroupVersionKind(kit.APIManagerGVK)
		b = b.Watches(manager, handler.EnqueueRequestsFromMapFunc(usingInstallation(sh.reader, list)))
	}
	for _, w := range watches {
		if isDataKind(w.obj) {
			b = b.WatchesMetadata(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapFunc))
		} else {
			b = b.Watches(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapFunc))
		}
	}
	return b.Complete(r)
}

// sameRemoteObject maps an object to the other objects of its kind that resolve to the same remote object
// (the owner key index): when the one that holds it changes or goes, the ones waiting for it (Invalid as
// losers of the conflict, Orphan while it is being deleted) look again.
func sameRemoteObject(reader client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		keys := ownerKeyOf(obj)
		if len(keys) == 0 {
			return nil
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.MatchingFields{kit.IndexOwnerKey: keys[0]}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var out []reconcile.Request
		_ = kit.ForEachItem(l, func(o client.Object) {
			if o.GetUID() != obj.GetUID() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		})
		return out
	}
}

// claimants lists the objects of obj's kind in its namespace, not being deleted, that hold no remote
// object of their own: those an object being deleted may hand its remote object over to
// (engine.Reconciler.Claimants, which matches them by their spec).
func claimants(reader client.Reader, list client.ObjectList) func(ctx context.Context, obj client.Object) ([]client.Object, error) {
	return func(ctx context.Context, obj client.Object) ([]client.Object, error) {
		l := list.DeepCopyObject().(client.ObjectList)
		// Read only, and once per deletion: the cache's own objects, not copies.
		if err := reader.List(ctx, l, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		var out []client.Object
		err := kit.ForEachItem(l, func(o client.Object) {
			other, ok := o.(engine.Object)
			if ok && other.GetUID() != obj.GetUID() && other.GetDeletionTimestamp().IsZero() && other.GetRemoteID() == 0 && engine.PendingCreate(other) == "" {
				out = append(out, other)
			}
		})
		return out, err
	}
}

// watch is an extra watch of one controller.
type watch struct {
	obj     client.Object
	mapFunc handler.MapFunc
}

// referenced maps an object to the objects of ref.To it names through ref's field (by their Key, read
// through ref.KeyIndex, when ref has one).
func referenced(reader client.Reader, ref reference) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		names := ref.Names(obj)
		if ref.KeyIndex != "" {
			names = kit.NamesByKey(ctx, reader, listOfKind(ref.To), obj.GetNamespace(), ref.KeyIndex, names)
		}
		reqs := make([]reconcile.Request, 0, len(names))
		for _, n := range names {
			if n != "" {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: n}})
			}
		}
		return reqs
	}
}

// secretUseChanged lets through only the events of an object that may change whether the Secrets it
// reads are in use (SecretReconciler.inUse counts the objects holding the engine's finalizer): its creation
// with that finalizer already on (a restore), its deletion, and updates of that finalizer, its deletion or
// the Secrets it names. Its status writes, most of its events, do not (in a burst, each made the Secret's
// controller list every object of the namespace that reads it), nor does its creation without the
// finalizer (it goes on with the first create, an update that passes).
var secretUseChanged = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return controllerutil.ContainsFinalizer(e.Object, engine.Finalizer) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld, e.ObjectNew
		return controllerutil.ContainsFinalizer(before, engine.Finalizer) != controllerutil.ContainsFinalizer(after, engine.Finalizer) ||
			before.GetDeletionTimestamp().IsZero() != after.GetDeletionTimestamp().IsZero() ||
			!slices.Equal(secretRefs(before), secretRefs(after))
	},
}

// readingSecret maps a Secret to the objects of list's kind that read it; the system-seed Secret of a 3scale
// installation, to the objects that use the installation or would (usingInstallation).
func readingSecret(reader client.Reader, list client.ObjectList) handler.MapFunc {
	byName := kit.Referencing(reader, list, kit.IndexSecretRefs)
	installation := usingInstallation(reader, list)
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if obj.GetName() == kit.SystemSeedSecret {
			return installation(ctx, obj)
		}
		return byName(ctx, obj)
	}
}

// usingInstallation maps anything of a namespace's 3scale installation (its APIManager, its system-seed
// Secret) to the objects of list's kind that were synced with it or would be: those that name no
// provider account, the installation being where the default Secret's absence sends them.
func usingInstallation(reader client.Reader, list client.ObjectList) handler.MapFunc {
	byName := kit.Referencing(reader, list, kit.IndexSecretRefs)
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, name := range []string{v1alpha1.DefaultProviderAccountSecret, kit.SystemSeedSecret} {
			named := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
			reqs = append(reqs, byName(ctx, named)...)
		}
		return reqs
	}
}

// secretsOf maps a synced object to the Secrets it reads, for the in-use finalizer.
func secretsOf(_ context.Context, obj client.Object) []reconcile.Request {
	names := secretRefs(obj)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}})
	}
	return reqs
}
