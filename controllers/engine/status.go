package engine

// Status writing: conditions, events, the one status write per reconcile, stale-cache detection.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// fail turns an error into conditions and a result, by its class: waiting (Orphan, backoff), invalid
// (Invalid, terminal) or retryable (InSync, workqueue backoff or Retry-After).
func (r *Reconciler[T, D, S]) fail(ctx context.Context, obj T, err error) (ctrl.Result, error) {
	class, reason, message := Classify(err)
	if !obj.GetDeletionTimestamp().IsZero() && reason != v1alpha1.ReasonDeletingDependants { // that one says "deleting" already
		message = deletingPrefix + message
	}
	key := client.ObjectKeyFromObject(obj)
	switch class {
	case ClassWaiting:
		r.transition(obj, v1alpha1.ConditionOrphan, reason, message)
		delay := r.Backoff.Next(key)
		if d, ok := retryAfter(err); ok && d < delay {
			delay = d
		}
		return ctrl.Result{RequeueAfter: delay}, nil
	case ClassInvalid:
		r.transition(obj, v1alpha1.ConditionInvalid, reason, message)
		// Invalid for good at this generation: nothing is retried until the spec or a dependency changes
		// (watches bring the object back then). It is the user's to fix, so it is an event and a
		// condition, not an error log with a stack trace on every watch event.
		obj.GetSyncStatus().ObservedGeneration = obj.GetGeneration()
		r.Backoff.Reset(key)
		log.FromContext(ctx).V(1).Info("invalid", "reason", reason, "message", message)
		if fromRemote(err) && r.InvalidRetryPeriod > 0 {
			// 3scale said no; that may pass (or be misclassified): try again, slowly.
			return ctrl.Result{RequeueAfter: r.InvalidRetryPeriod}, nil
		}
		return ctrl.Result{}, nil
	default:
		r.transition(obj, v1alpha1.ConditionInSync, reason, message)
		if d, ok := retryAfter(err); ok {
			log.FromContext(ctx).V(1).Info("rate limited by 3scale", "retryAfter", d)
			return ctrl.Result{RequeueAfter: d}, nil
		}
		return ctrl.Result{}, err
	}
}

// transition sets the sync state and emits an Event when it changed, but for a first sync and a Synced
// object whose message changed.
func (r *Reconciler[T, D, S]) transition(obj T, state, reason, message string) {
	previous := SyncState(obj.GetSyncStatus())
	if !SetSyncState(obj.GetSyncStatus(), state, reason, message, obj.GetGeneration()) {
		return
	}
	if state == v1alpha1.ConditionSynced && (previous == "" || previous == v1alpha1.ConditionSynced) {
		// A first sync, or a Synced message that changed: the condition says it, and it is what kstatus,
		// Flux and Argo CD read. Events are for what a person acts on or learns from: into and out of
		// waiting, Invalid and retries, and the acts (adoption, deletion, repair) that have their own.
		// At 5,000 objects, this Event was one write in four of a cold start.
		return
	}
	eventType := "Normal"
	if state == v1alpha1.ConditionInvalid || state == v1alpha1.ConditionInSync {
		eventType = "Warning"
	}
	r.event(obj, eventType, reason, state, "%s", message)
}

func (r *Reconciler[T, D, S]) event(obj T, eventType, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, eventType, reason, action, format, args...)
	}
}

// statusWriter writes an object's status at the end of a reconcile when it changed since it was last
// read or written (before is that object; a metadata update, such as the create-pending marker's,
// moves it on). A merge patch (no resourceVersion) never conflicts.
type statusWriter[T Object, D any, S Snapshot[S]] struct {
	r      *Reconciler[T, D, S]
	before T
	// done: nothing more is written in this pass (the object is gone, or the pass did nothing worth
	// recording).
	done bool
}

func (w *statusWriter[T, D, S]) write(ctx context.Context, obj T) error {
	// The whole objects first: a reconcile that changed nothing (most of them, in a burst) costs no
	// encoding; the statuses as JSON then, so that only a difference that shows is written.
	if w.done || equality.Semantic.DeepEqual(w.before, obj) {
		return nil
	}
	patch, err := statusPatch(w.before, obj)
	if err != nil || patch == nil {
		return err
	}
	if err := w.r.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	w.r.wrote(obj)
	w.before = obj.DeepCopyObject().(T)
	return nil
}

// lastWrite is what staleCache compares a cached copy with: the resourceVersion of our last write of
// the object, or, once we removed its finalizer, the UID of the object that is gone.
type lastWrite struct {
	rv   uint64
	gone bool
	uid  types.UID
}

// wrote remembers the resourceVersion of our last write of obj, for staleCache.
func (r *Reconciler[T, D, S]) wrote(obj T) {
	if rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil {
		r.written.Store(client.ObjectKeyFromObject(obj), lastWrite{rv: rv})
	}
}

// finalized remembers that obj's finalizer was removed: the API server deletes it then, and answers with
// the resourceVersion it had, so any copy of this object (this UID) the cache still holds is stale.
func (r *Reconciler[T, D, S]) finalized(obj T) {
	r.written.Store(client.ObjectKeyFromObject(obj), lastWrite{gone: true, uid: obj.GetUID()})
}

// staleCache reports whether obj, as the cache has it, is older than our own last write of it. Resource
// versions are compared as numbers: the API server's are etcd revisions, comparable as integers
// (Kubernetes' comparable resource versions, KEP-5504); one that does not parse is never called stale.
func (r *Reconciler[T, D, S]) staleCache(key types.NamespacedName, obj T) bool {
	v, ok := r.written.Load(key)
	if !ok {
		return false
	}
	last := v.(lastWrite)
	if last.gone {
		// A copy of that object that still holds our finalizer is from before its removal; one without it
		// is current: another finalizer keeps the object, and there is nothing left for us to do (no
		// requeue: its own changes wake it).
		return obj.GetUID() == last.uid && controllerutil.ContainsFinalizer(obj, Finalizer)
	}
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	return err == nil && rv < last.rv
}

// statusPatch is the JSON merge patch from before's status to after's (both of one kind), nil when they
// encode alike. Only the statuses are encoded: the status subresource ignores the rest of an object, and
// encoding two whole objects (spec, metadata) to diff them was most of the patch's cost to the manager.
func statusPatch(before, after client.Object) ([]byte, error) {
	from, err := statusJSON(before)
	if err != nil {
		return nil, err
	}
	to, err := statusJSON(after)
	if err != nil || bytes.Equal(from, to) {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(from, to)
}

// statusJSON encodes obj's status field as {"status": ...}.
func statusJSON(obj client.Object) ([]byte, error) {
	status := statusField(obj)
	if status == nil {
		return nil, fmt.Errorf("a %T has no status field", obj)
	}
	return json.Marshal(struct {
		Status any `json:"status"`
	}{status})
}

// statusField is obj's status (every kind's object is a pointer to a struct with a Status field); nil
// for an object without one.
func statusField(obj client.Object) any {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	if status := v.Elem().FieldByName("Status"); status.IsValid() {
		return status.Interface()
	}
	return nil
}
