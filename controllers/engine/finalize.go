package engine

// Deletion: the remote cleanup, dependants deleted first (with their grace), users waited for.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// finalize handles an object being deleted: remote cleanup per the deletion policy, then the finalizer
// goes. Only a remote object this resource holds is deleted: by the id in its status, or by system name
// right after its own create whose answer was lost (create-pending marker), and only on the tenant the
// id belongs to. A resource that never held one (it lost an ownership conflict, was Orphan or Invalid
// all along) deletes nothing remotely.
func (r *Reconciler[T, D, S]) finalize(ctx context.Context, obj T, w *statusWriter[T, D, S]) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	if obj.GetDeletionPolicy() == v1alpha1.DeletionPolicyRetain && obj.GetRemoteID() != 0 && r.OwnersGoing != nil {
		// Its owners being deleted must see it, and be kept in 3scale, before it lets go.
		going, err := r.OwnersGoing(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(going) > 0 {
			return r.failQuietly(ctx, obj, w, &ReasonedError{class: ClassWaiting, Reason: v1alpha1.ReasonWaitingForOwner, RetryAfter: 5 * time.Second,
				Message: fmt.Sprintf("deletionPolicy is Retain: waiting for %s, being deleted, to be kept in 3scale for this %s first", strings.Join(going, " and "), r.Kind),
				quiet:   quietGoing, since: obj.GetDeletionTimestamp().Time})
		}
	}
	var retained []string
	if obj.GetDeletionPolicy() == v1alpha1.DeletionPolicyDelete {
		if r.RetainedUnder != nil && obj.GetRemoteID() != 0 {
			var err error
			if retained, err = r.RetainedUnder(ctx, obj); err != nil {
				return ctrl.Result{}, err
			}
		}
		// Before a handover too: a dependant being deleted with it takes its fate from this object
		// while it is here (it goes along, with no call of its own), and so stays in 3scale with it.
		if err := r.deleteDependants(ctx, obj); err != nil {
			return r.failQuietly(ctx, obj, w, err)
		}
	}
	handed, err := r.handOver(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if handed {
		obj.SetRemoteID(0) // the claimant's now: nothing of it is deleted below
		retained = nil
	}
	st := obj.GetSyncStatus()
	id := obj.GetRemoteID()
	pending := PendingCreate(obj)
	if len(retained) > 0 {
		r.event(obj, "Warning", v1alpha1.ReasonKeptForRetained, "Delete",
			"left the %s in 3scale (id %d): %s with deletionPolicy Retain keep remote objects under it, which 3scale would refuse to delete it for or delete along with it; to delete it in 3scale too, set their deletionPolicy to Delete before deleting",
			r.Kind, id, strings.Join(retained, ", "))
	} else if !handed && obj.GetDeletionPolicy() == v1alpha1.DeletionPolicyDelete && (id != 0 || pending != "") {
		if err := r.waitForUsers(ctx, obj); err != nil {
			return r.failQuietly(ctx, obj, w, err)
		}
		s, err := r.connect(ctx, obj)
		if err != nil {
			return r.fail(ctx, obj, err)
		}
		bound := st.TenantHost
		if id == 0 {
			bound = pending
		}
		if bound == s.Tenant {
			s.CreatePending = id == 0
			var owners []Owner
			if o, ok := r.Syncer.(OwnedBy[T]); ok {
				owners = o.Owners(ctx, obj, s)
			}
			left, wentWithOwner, err := leaveToOwners(obj, r.deletionGraceLeft(obj), owners)
			if err == nil && !left {
				err = r.deleteRemote(ctx, obj, s)
			}
			if err != nil {
				return r.failQuietly(ctx, obj, w, err)
			}
			// The object no longer holds a remote one: should the finalizer patch below fail, the status
			// written at the end of this reconcile says so, and the next try does not delete again.
			obj.SetRemoteID(0)
			r.settle(obj)
			if !wentWithOwner {
				// The deletion asked for is done: said in the log, not in an Event. The object is gone a
				// moment later, and in a mass deletion (a prune, a namespace) an Event per object was a
				// fifth of the API server's writes.
				log.FromContext(ctx).Info("deleted the remote object", "kind", r.Kind, "tenant", s.Tenant, "id", id)
			}
		} else {
			r.event(obj, "Warning", v1alpha1.ReasonTenantChanged, "Delete",
				"the provider account now points at tenant %s: the %s on tenant %s was left there untouched", s.Tenant, r.Kind, bound)
		}
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		if apierrors.IsConflict(err) {
			// The object changed meanwhile (e.g. another controller's finalizer): read it again.
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The API server deletes the object now: a status write would only be answered 404.
	w.done = true
	r.forget(client.ObjectKeyFromObject(obj))
	// Until the cache sees the object gone, a reconcile may still get the copy from before this patch,
	// with the finalizer and the remote id: remembering it is gone makes it wait instead of deleting
	// again. The memory goes when a reconcile finds the object gone.
	r.finalized(obj)
	return ctrl.Result{}, nil
}

// handOver hands the remote object obj holds over to a claimant (Claimants: a resource of the same kind
// in obj's namespace, not being deleted, that holds none and resolves, from its spec, to the same tenant,
// scope and system name — before any sync of its own, so the order of events does not matter)
// instead of deleting it — a GitOps rename: one file deleted and one applied with the same systemName, in
// one commit. The remote object, its id and everything under it (a product's plans, applications and
// their keys) are kept; obj deletes nothing, and the claimant adopts the object by its system name once
// obj is gone (the owner-key watch wakes it), then applies its own spec as an update. Decided from what
// the cluster holds now, so the order in which the two reach the manager, a restart or a retry end alike;
// a claimant whose spec refuses adoption (adoption: Never) is not one. GitOps tools apply before they
// prune, and one kind's events reach the manager in the order the API server made them, so a claimant
// applied before the old object's deletion is always seen; with none, the deletion goes on at once, as
// before. It reports whether obj handed its object over.
func (r *Reconciler[T, D, S]) handOver(ctx context.Context, obj T) (bool, error) {
	if r.Claimants == nil || (obj.GetRemoteID() == 0 && PendingCreate(obj) == "") {
		return false, nil
	}
	claimants, err := r.Claimants(ctx, obj)
	if err != nil {
		return false, err
	}
	st := obj.GetSyncStatus()
	for _, c := range claimants {
		claimant, ok := c.(T)
		if !ok || claimant.GetAdoptionPolicy() == v1alpha1.AdoptionNever || r.Syncer.SystemName(claimant) != st.SystemName ||
			(r.SameScope != nil && !r.SameScope(ctx, obj, claimant)) {
			continue
		}
		if s, err := r.connect(ctx, claimant); err != nil || s.Tenant != st.TenantHost {
			continue // its provider account is not there yet, or is another tenant's
		}
		what := fmt.Sprintf("%s %d on tenant %s", r.Kind, obj.GetRemoteID(), obj.GetSyncStatus().TenantHost)
		if obj.GetRemoteID() == 0 {
			what = fmt.Sprintf("%s %q on tenant %s (its create in doubt)", r.Kind, obj.GetSyncStatus().SystemName, obj.GetSyncStatus().TenantHost)
		}
		r.event(obj, "Normal", v1alpha1.ReasonHandedOver, "Delete",
			"handed the %s over to %q, which claims the same system name in this namespace: deleted nothing in 3scale", what, claimant.GetName())
		if r.Recorder != nil {
			r.Recorder.Eventf(claimant, nil, "Normal", v1alpha1.ReasonHandedOver, "Adopt",
				"takes over the %s from %q, deleted: everything under it is kept", what, obj.GetName())
		}
		return true, nil
	}
	return false, nil
}

// deleteDependants deletes the objects that cannot exist without obj and, while any is left, returns a
// waiting error that counts and names them by kind ("deleting 3 applications first: a, b, c"), and says
// why those whose deletion fails are stuck, what those waiting for their own dependants wait for, and
// which other finalizers keep those apimsync is done with. The wait is a quiet one (GoingAway) from
// obj's own deletion: the deletions it waits for are under way, and usually done in a moment; in a
// mass deletion a condition and an event per owner, each time the count changes, would be API server
// writes for nothing. Past QuietWait the owner says what it waits for, so that a stuck one shows. For
// DependantGrace from its deletion, the owner leaves the dependants not being deleted yet to whoever
// deleted it (a prune deletes them a moment later), and looks again when the grace ends.
func (r *Reconciler[T, D, S]) deleteDependants(ctx context.Context, obj T) error {
	deps, err := related(ctx, r.Dependants, obj)
	if err != nil || len(deps) == 0 {
		return err
	}
	var kinds []string
	names := map[string][]string{}
	grace := r.deletionGraceLeft(obj)
	for _, d := range deps {
		name := d.GetName()
		if d.GetDeletionTimestamp().IsZero() {
			// Within the grace, whoever deleted obj may be deleting d too: its deletion wakes obj (a watch).
			if grace == 0 {
				if err := r.deleteDependant(ctx, obj, d); err != nil {
					return fmt.Errorf("cannot delete %s: %w", nameOf(d), err)
				}
			}
		} else if so, ok := d.(v1alpha1.SyncedObject); ok && so.GetDeletionPolicy() == v1alpha1.DeletionPolicyRetain &&
			so.GetRemoteID() != 0 && controllerutil.ContainsFinalizer(d, Finalizer) && r.OwnersGoing != nil {
			continue // kept in 3scale, it waits for this owner to go first (OwnersGoing)
		} else if !controllerutil.ContainsFinalizer(d, Finalizer) {
			// Done here: what keeps it is another controller's finalizer.
			if f := d.GetFinalizers(); len(f) > 0 {
				name += fmt.Sprintf(" (waiting for finalizer %s)", strings.Join(f, ", "))
			}
		} else if so, ok := d.(v1alpha1.SyncedObject); ok {
			if state := SyncState(so.GetSyncStatus()); state == v1alpha1.ConditionOrphan || state == v1alpha1.ConditionInvalid {
				for _, c := range so.GetSyncStatus().Conditions {
					switch {
					case c.Type != state || c.Status != metav1.ConditionTrue:
					case c.Reason == v1alpha1.ReasonWaitingForOwner: // not stuck: waiting a moment for its owner (this one)
					case c.Reason == v1alpha1.ReasonDeletingDependants: // not stuck: waiting for its own dependants
						name += fmt.Sprintf(" (%s)", c.Message)
					case strings.HasPrefix(c.Message, deletingPrefix): // its deletion failed, not its sync before
						name += fmt.Sprintf(" (stuck: %s)", strings.TrimPrefix(c.Message, deletingPrefix))
					}
				}
			}
		}
		kind := KindOf(d)
		if names[kind] == nil {
			kinds = append(kinds, kind)
		}
		names[kind] = append(names[kind], name)
	}
	if len(kinds) == 0 {
		return nil // only Retain dependants are left, waiting for this owner to go
	}
	retry := 5 * time.Second
	if grace > 0 {
		retry = min(retry, grace) // then the owner deletes those left
	}
	return &ReasonedError{class: ClassWaiting, Reason: v1alpha1.ReasonDeletingDependants, RetryAfter: retry,
		Message: dependantsMessage(kinds, names), quiet: quietGoing, since: obj.GetDeletionTimestamp().Time, recheck: grace}
}

// deletionGraceLeft is how much is left of DependantGrace for an object being deleted: an owner leaves
// its dependants to whoever deleted it meanwhile, a dependant waits for its owner; none for an object
// apimsync deleted itself (Deletions.Ours). It begins at the earlier of its deletion timestamp (an old
// deletion met after a restart is not waited for again) and when this reconciler first saw it going
// (the timestamp is the API server's clock); it lasts DependantGrace from then, or from the last
// deletion seen in its namespace since, and never more than dependantGraceCap times DependantGrace from
// its beginning.
func (r *Reconciler[T, D, S]) deletionGraceLeft(obj T) time.Duration {
	if r.DependantGrace <= 0 || r.Deletions.IsOurs(obj.GetUID()) {
		return 0 // deleted by its owner's cascade: no prune to wait for, and its owner is going
	}
	now := r.now()
	first, _ := r.goingSince.LoadOrStore(client.ObjectKeyFromObject(obj), now)
	began := first.(time.Time)
	// The timestamp has whole seconds: the deletion was up to a second after it.
	if deleted := obj.GetDeletionTimestamp().Add(time.Second); deleted.Before(began) {
		began = deleted
	}
	end := began.Add(r.DependantGrace)
	if last := r.Deletions.Last(obj.GetNamespace()); last.After(began) {
		end = last.Add(r.DependantGrace)
	}
	if limit := began.Add(dependantGraceCap * r.DependantGrace); end.After(limit) {
		end = limit
	}
	return max(end.Sub(now), 0)
}

// dependantGraceCap bounds an owner's DependantGrace while deletions go on in its namespace, in
// DependantGraces: a namespace where objects are deleted all the time does not hold its owners back
// for long.
const dependantGraceCap = 10

// deleteDependant deletes a dependant, unless this reconciler asked for it in the last few seconds: the
// cache may not show its deletion yet, and every change of the owner's dependants wakes the owner again
// (in a mass deletion, several DELETEs of each for one that is needed).
func (r *Reconciler[T, D, S]) deleteDependant(ctx context.Context, owner T, d client.Object) error {
	now := r.now()
	// One owner is reconciled by one worker at a time: its map needs no lock of its own.
	v, _ := r.deleting.LoadOrStore(client.ObjectKeyFromObject(owner), map[string]time.Time{})
	asked := v.(map[string]time.Time)
	key := KindOf(d) + "/" + d.GetName() + "/" + string(d.GetUID())
	if at, ok := asked[key]; ok && now.Sub(at) < dependantDeleteMemory {
		return nil
	}
	r.Deletions.Ours(d.GetUID()) // before the DELETE: its informer event may come before the answer
	if err := r.Client.Delete(ctx, d); client.IgnoreNotFound(err) != nil {
		return err
	}
	asked[key] = now
	return nil
}

// dependantDeleteMemory is how long a dependant's deletion, once asked for, is not asked for again.
const dependantDeleteMemory = 10 * time.Second

// dependantsMessage counts and names the dependants an owner waits for, by kind, each kind's names
// sorted: "deleting 3 applications first: a, b, c", or with several kinds "deleting 2 applications (a,
// b) and 1 application plan (p) first".
func dependantsMessage(kinds []string, names map[string][]string) string {
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		slices.Sort(names[k])
		parts = append(parts, countOf(len(names[k]), k))
	}
	if len(kinds) == 1 {
		return fmt.Sprintf("deleting %s first: %s", parts[0], listNames(names[kinds[0]]))
	}
	for i, k := range kinds {
		parts[i] += " (" + listNames(names[k]) + ")"
	}
	return "deleting " + strings.Join(parts, " and ") + " first"
}

// maxNamedDependants bounds the names a DeletingDependants message lists per kind, so that an owner of
// thousands of objects keeps its condition within the API's message size.
const maxNamedDependants = 10

// listNames joins names, the first maxNamedDependants of them and how many more.
func listNames(names []string) string {
	if len(names) <= maxNamedDependants {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedDependants], ", "), len(names)-maxNamedDependants)
}

// countOf counts objects of a kind in words: "1 application plan", "3 applications".
func countOf(n int, kind string) string {
	var b strings.Builder
	for i, c := range kind {
		if unicode.IsUpper(c) {
			if i > 0 {
				b.WriteByte(' ')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	if n != 1 {
		b.WriteByte('s')
	}
	return fmt.Sprintf("%d %s", n, b.String())
}

// waitForUsers returns a waiting error naming the objects that still use obj (Users), if any. The wait
// is a quiet one (GoingAway) from obj's own deletion, whether its users are being deleted already or not
// yet: in a mass deletion (a namespace, a whole application pruned) they usually are a moment later, and
// the condition and event would be one write each per object for nothing; past QuietWait it is Orphan,
// naming them, for someone to act upon.
func (r *Reconciler[T, D, S]) waitForUsers(ctx context.Context, obj T) error {
	users, err := related(ctx, r.Users, obj)
	if err != nil || len(users) == 0 {
		return err
	}
	names := make([]string, 0, len(users))
	for _, u := range users {
		names = append(names, nameOf(u))
	}
	return &ReasonedError{class: ClassWaiting, Reason: v1alpha1.ReasonDeletionBlocked, RetryAfter: 30 * time.Second,
		Message: fmt.Sprintf("3scale refuses to delete this %s while it is used: waiting for %s to stop using it (change their spec) or to be deleted",
			r.Kind, strings.Join(names, ", ")),
		quiet: quietGoing, since: obj.GetDeletionTimestamp().Time}
}

// related lists the objects list finds for obj (Dependants, Users); none when list is nil.
func related(ctx context.Context, list func(context.Context, client.Object) ([]client.Object, error), obj client.Object) ([]client.Object, error) {
	if list == nil {
		return nil, nil
	}
	return list(ctx, obj)
}

// deletingPrefix starts the condition message of an object being deleted.
const deletingPrefix = "deleting: "

// nameOf names an object by its kind and name, for messages.
func nameOf(obj client.Object) string { return KindOf(obj) + " " + obj.GetName() }

// KindOf names the kind of a typed object (its Go type's name).
func KindOf(obj client.Object) string {
	t := fmt.Sprintf("%T", obj)
	return t[strings.LastIndex(t, ".")+1:]
}
