package controllers

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// SecretInUseFinalizer protects a Secret that synced objects still need to clean up 3scale: without it,
// deleting a namespace (or an Argo CD prune) can remove the Secret first and leave every object stuck.
const SecretInUseFinalizer = "capabilities.apimsync.io/in-use"

// SecretReconciler keeps SecretInUseFinalizer on exactly the Secrets that objects with a remote-cleanup
// finalizer read. Patching metadata.finalizers is the only write this controller makes to Secrets; the
// only other Secrets apimsync writes or deletes are the credentials Secrets an Application created and
// controls (application.Syncer).
type SecretReconciler struct {
	// Client patches the Secrets' finalizers and lists the objects that read them.
	Client client.Client
	// Metadata reads the Secrets' metadata (the manager's metadata-only cache); default Client.
	Metadata client.Reader
	// Finalizer is this manager's in-use finalizer (SecretInUseFinalizerFor); default SecretInUseFinalizer.
	Finalizer string
	// Uncached reads every apimsync object of a namespace, whatever shard it is in (the manager's API
	// reader): whether a Secret being deleted is still read by anyone, when it carries another manager's
	// in-use finalizer (retiredFinalizers). Nil: never checked.
	Uncached client.Reader
}

func (r *SecretReconciler) finalizer() string {
	if r.Finalizer == "" {
		return SecretInUseFinalizer
	}
	return r.Finalizer
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch;create;update;delete

// Reconcile adds or removes the in-use finalizer of one Secret.
func (r *SecretReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	reader := r.Metadata
	if reader == nil {
		reader = r.Client
	}
	if err := reader.Get(ctx, req.NamespacedName, secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	inUse, err := r.inUse(ctx, secret)
	if err != nil {
		return ctrl.Result{}, err
	}
	has := controllerutil.ContainsFinalizer(secret, r.finalizer())
	var retired []string
	if !inUse && !secret.DeletionTimestamp.IsZero() {
		if retired, err = r.retiredFinalizers(ctx, secret); err != nil {
			return ctrl.Result{}, err
		}
	}
	if (inUse == has || (inUse && !secret.DeletionTimestamp.IsZero())) && len(retired) == 0 {
		return ctrl.Result{}, nil // a finalizer cannot be added to an object being deleted
	}
	// Optimistic lock: a finalizer list patched from a stale copy must never drop another's finalizer.
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	switch {
	case inUse && secret.DeletionTimestamp.IsZero():
		controllerutil.AddFinalizer(secret, r.finalizer())
	case !inUse:
		controllerutil.RemoveFinalizer(secret, r.finalizer())
	}
	for _, f := range retired {
		controllerutil.RemoveFinalizer(secret, f)
	}
	if err := r.Client.Patch(ctx, secret, patch); err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil // the Secret changed meanwhile: look again
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// inUse reports whether any synced object of the namespace (of any kind of the table) that still has its
// remote-cleanup finalizer reads the Secret.
func (r *SecretReconciler) inUse(ctx context.Context, secret client.Object) (bool, error) {
	for _, k := range kinds {
		list := k.NewList()
		// Read only: the cache's objects as they are, no copy of each.
		if err := r.Client.List(ctx, list, client.InNamespace(secret.GetNamespace()), client.MatchingFields{kit.IndexSecretRefs: secret.GetName()},
			client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		found := false
		_ = kit.ForEachItem(list, func(o client.Object) {
			found = found || controllerutil.ContainsFinalizer(o, engine.Finalizer)
		})
		if found {
			return true, nil
		}
	}
	return false, nil
}

// retiredFinalizers are the other managers' in-use finalizers on a Secret being deleted that no apimsync
// object still needs: those of shards retired (stopped for good, or given another selector) or of the
// manager before sharding, which no live manager would ever remove, and which would keep the Secret
// forever. A finalizer says a manager's objects read the Secret, so it goes only when no object of the
// namespace with its remote-cleanup finalizer reads it, whatever shard it is in: read from the API server,
// not from this shard's cache. Any manager may then remove them; a live one whose objects read the Secret
// keeps its finalizer. None without Uncached, or without such finalizers (no read then).
func (r *SecretReconciler) retiredFinalizers(ctx context.Context, secret client.Object) ([]string, error) {
	var others []string
	for _, f := range secret.GetFinalizers() {
		if f != r.finalizer() && isInUseFinalizer(f) {
			others = append(others, f)
		}
	}
	if len(others) == 0 || r.Uncached == nil {
		return nil, nil
	}
	for _, k := range kinds {
		list := k.NewList()
		if err := r.Uncached.List(ctx, list, client.InNamespace(secret.GetNamespace())); err != nil {
			return nil, err
		}
		used := false
		_ = kit.ForEachItem(list, func(o client.Object) {
			used = used || controllerutil.ContainsFinalizer(o, engine.Finalizer) && slices.Contains(secretRefs(o), secret.GetName())
		})
		if used {
			return nil, nil
		}
	}
	return others, nil
}

// isInUseFinalizer reports whether f is a manager's in-use finalizer: the unsharded manager's, or a
// shard's (SecretInUseFinalizerFor).
func isInUseFinalizer(f string) bool {
	return f == SecretInUseFinalizer || strings.HasPrefix(f, SecretInUseFinalizer+"-")
}
