// Package engine is apimsync's generic sync engine. It owns the flow every kind shares — finalizer,
// provider account, dependencies, one owner per remote object (SoleOwner, after every Resolve, built by
// the table from the kind's scope), the skip when nothing changed, observe/create/update, deletion (and
// the handover of a renamed object's remote object), tenant changes, sync conditions, events, backoff
// and metrics — and asks each kind how to talk to 3scale through one contract, TypedSyncer (typed.go:
// Connect, SystemName, Resolve, Read, Compare, Create, Update, Delete), and the optional parts a kind
// implements when it needs them: Validator (a spec refused before any wait), CacheChecker (Serves: a
// cached snapshot no longer serves), Refresher (periodic work), Noter (what the Synced message adds),
// Explainer (what diff prints) and OwnedBy (owners whose deletion takes the object along). The engine
// finds the optional parts by type assertion; each kind's syncer.go states the ones it means to
// implement in a var block the compiler checks, so a signature that drifts fails the build instead of
// silently switching a behaviour off.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// Reconciler is the generic reconciler of one kind: T its objects, D the desired state its syncer
// resolves, S the remote state it reads.
type Reconciler[T Object, D any, S Snapshot[S]] struct {
	// Client reads and writes Kubernetes objects.
	Client client.Client
	// Kind names the kind in events, logs and metrics.
	Kind string
	// New returns an empty object of the kind.
	New func() T
	// Syncer talks to 3scale for the kind: the one contract between the engine and a kind, typed by its
	// desired state D and remote snapshot S.
	Syncer TypedSyncer[T, D, S]
	// Snapshots caches the kind's remote snapshots under Kind, its name (nil caches nothing: every
	// observation reads 3scale); another kind's syncer may peek at them by that name (Peek).
	Snapshots SnapshotStore
	// Recorder emits an event on each sync state transition.
	Recorder events.EventRecorder
	// Backoff spaces the retries of orphans.
	Backoff *OrphanBackoff
	// DriftCheckPeriod is how often a synced object's remote state is read and repaired; 0 disables it.
	DriftCheckPeriod time.Duration
	// Now returns the time; tests replace it.
	Now func() time.Time
	// States tracks the sync state of each object for the apimsync_objects metric.
	States *StateTracker
	// Credentials checks a changed provider account once per tenant; nil checks nothing.
	Credentials CredentialsChecker
	// QuietWait is how long an expected wait goes without a status write or an event: a new object (no
	// sync condition yet) waiting on a dependency that is itself being synced (Pending; 10 times as
	// long for one not through a sync of its own yet, Queued) or not created yet (Missing), a Synced
	// object whose dependency is synced again, an object being deleted waiting for its dependants, its
	// users or deletions under way (GoingAway). 0 writes Orphan at once. A watch wakes the object;
	// kstatus reads a new object's status as not yet observed (InProgress) meanwhile.
	QuietWait time.Duration
	// InvalidRetryPeriod is the safety net for objects made Invalid by an answer of 3scale (which may
	// have been misclassified or may pass): they are tried again after it. 0 disables it.
	InvalidRetryPeriod time.Duration
	// Dependants, when set, lists the objects that cannot exist without this one (the applications of an
	// account or a plan, the plans of a product). On deletion with the Delete policy the engine deletes
	// them, waits until they are gone (a watch on them should wake this object), and goes last.
	Dependants func(ctx context.Context, obj client.Object) ([]client.Object, error)
	// Users, when set, lists the objects whose use of this one makes 3scale refuse its deletion (the
	// Products using a Backend). On deletion the engine waits until none is left (a watch on them should
	// wake this object) before the remote delete, instead of calling to be refused.
	Users func(ctx context.Context, obj client.Object) ([]client.Object, error)
	// RetainedUnder, when set, names the objects with deletionPolicy: Retain that hold a remote object
	// living under this one's (its owned dependants and theirs). Such an object is kept in 3scale when it
	// is deleted, whatever its own policy: 3scale would refuse its deletion for them (a plan that
	// applications use) or delete them along (a product's plans, an account's applications). A Warning
	// event says so, naming them.
	RetainedUnder func(ctx context.Context, obj client.Object) ([]string, error)
	// OwnersGoing, when set, names the owners of this object being deleted that hold a remote object: a
	// Retain object waits for them to be gone before it lets go, so that each sees it (RetainedUnder) and
	// is kept rather than deleting it along in 3scale.
	OwnersGoing func(ctx context.Context, obj client.Object) ([]string, error)
	// Claimants, when set, lists the objects of this kind in obj's namespace, not being deleted, that hold
	// no remote object (no id, no create in doubt): those that may claim obj's, a GitOps rename's new
	// object. An object being deleted that holds a remote object hands it over, instead of deleting it,
	// to one that resolves to it — the same system name from its spec, the same tenant from its provider
	// account, and the same scope (SameScope) — whatever its status says yet (handOver).
	Claimants func(ctx context.Context, obj client.Object) ([]client.Object, error)
	// SameScope, when set, tells whether other, a claimant, lives in the scope of obj's remote object (a
	// plan's product, an application's account), from other's references; nil for a kind whose remote
	// objects are the tenant's own.
	SameScope func(ctx context.Context, obj, other client.Object) bool
	// SoleOwner, when set, is checked after every successful Resolve: it refuses (Invalid) or holds back
	// (Orphan) obj when another object of the kind owns the same remote object — the same tenant, scope
	// and system name. The table builds it from the kind's scope, the same key the owner-key index is
	// built from, so that no kind computes the key on its own.
	SoleOwner func(ctx context.Context, obj T, s *Session) error
	// DependantGrace is how long an owner being deleted leaves those of its dependants not being deleted
	// yet to whoever deleted the owner: a prune (Argo CD, Flux, kubectl delete -f) deletes them a moment
	// later, and a DELETE of ours as well would be an API server write for nothing. The grace lasts from
	// the owner's deletion and, while Deletions records more in its namespace (a prune under way), from
	// the last of them, up to dependantGraceCap of it in all; then the owner deletes those left itself. 0
	// deletes them at once.
	DependantGrace time.Duration
	// Deletions, when set, records the deletions under way per namespace (all kinds' informers feed it).
	Deletions *Deletions
	// Sharded: a label selector filters this manager's cache (--watch-label-selector), so a dependency
	// missing from it may have been relabelled to another shard rather than deleted: a Synced object
	// waits for it quietly (QuietWait) before it is Orphan, as its own relabelling usually follows.
	Sharded bool

	// rejected remembers, per object, the attempt 3scale refused (types.NamespacedName → rejection):
	// the same attempt is not sent again before InvalidRetryPeriod, whatever wakes the object.
	rejected sync.Map
	// quietSince remembers when this reconciler first waited quietly for each object (its
	// types.NamespacedName → time.Time); forgotten when the object syncs or goes.
	quietSince sync.Map
	// deleting remembers, per owner being deleted (types.NamespacedName → map[string]time.Time), when
	// this reconciler asked for the deletion of each of its dependants, so that a stale cache does not
	// make it ask again and again; forgotten with the owner.
	deleting sync.Map
	// goingSince remembers when this reconciler first saw each owner being deleted
	// (types.NamespacedName → time.Time), for DependantGrace; forgotten with the owner.
	goingSince sync.Map
	// settled remembers, per object (types.NamespacedName → its create-pending marker), the marker this
	// reconciler last settled, until status records it (settle).
	settled sync.Map
	// resolved remembers the objects whose dependencies this reconciler has seen resolve
	// (types.NamespacedName → struct{}): a Synced object not in it waits quietly for a missing
	// dependency (a shard it was just moved to, a manager just started); forgotten with the object.
	resolved sync.Map
	// written remembers our last write of each object (types.NamespacedName → lastWrite), so that a
	// reconcile woken by that write's event does not act on an older cached copy.
	written sync.Map
	// started is when this reconciler first ran: drift checks overdue then are spread over the period
	// after it, not made all at once (a manager back after an outage).
	startOnce sync.Once
	started   time.Time
}

// rejection is an attempt 3scale refused: what it derived from, and when.
type rejection struct {
	hash       string
	generation int64
	syncNow    string
	at         time.Time
}

// Reconcile implements reconcile.Reconciler: it brings one object and its remote counterpart in line.
func (r *Reconciler[T, D, S]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.startOnce.Do(func() { r.started = r.now() })
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if r.staleCache(req.NamespacedName, obj) {
		// The cache has not caught up with our own last write of this object yet (the event of an earlier
		// write, such as the create-pending marker's update, woke it): acting on the old status would redo what
		// was just done. Look again in a moment.
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	st := &statusWriter[T, D, S]{r: r, before: obj.DeepCopyObject().(T)}
	r.recallSettled(req.NamespacedName, obj)

	var res ctrl.Result
	var err error
	if !obj.GetDeletionTimestamp().IsZero() {
		res, err = r.finalize(ctx, obj, st)
	} else {
		res, err = r.sync(ctx, obj, st)
	}
	if perr := st.write(ctx, obj); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	r.track(req.NamespacedName, obj)
	return res, err
}

// sync handles an object that is not being deleted.
func (r *Reconciler[T, D, S]) sync(ctx context.Context, obj T, w *statusWriter[T, D, S]) (ctrl.Result, error) {
	if err := r.validate(obj); err != nil {
		return r.fail(ctx, obj, err)
	}
	st := obj.GetSyncStatus()
	observing := obj.ObserveOnly()
	// An object observed until now reads 3scale afresh for its first full sync: the snapshot its last look
	// cached may be a drift period old, and it is to make the writes that look reported.
	wasObserved := !observing && st.Observation != nil
	if wasObserved {
		st.Observation = nil
		trackDrift(r.Kind, client.ObjectKeyFromObject(obj), false)
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) && (obj.GetRemoteID() != 0 || PendingCreate(obj) != "") {
		// The object holds a remote one, or may: its finalizer must be there (an object from before the
		// finalizer went on with the first create, or one whose finalizer was removed by hand). A new
		// object gets it with its create-pending marker, in the one update made before its first create.
		if err := r.updateMetadata(ctx, obj, w, addFinalizer); err != nil {
			return r.metadataNotWritten(w, err)
		}
	}

	s, err := r.connect(ctx, obj)
	if err != nil {
		return r.failQuietly(ctx, obj, w, err)
	}
	rebound := r.rebindTenant(obj, s)
	st.TenantHost, st.ProviderAccountSecret = s.Tenant, s.SecretName
	if err := r.checkCredentials(ctx, st, s); err != nil {
		return r.fail(ctx, obj, err)
	}
	want, err := r.resolve(ctx, obj, s)
	if err != nil {
		if s.SystemName != "" {
			// Recorded even when the sync cannot go on: the owner-key index finds a waiting object by it
			// (the loser of an ownership conflict, woken when the holder goes).
			st.SystemName = s.SystemName
		}
		if rebound { // the tenant change is recorded (and announced) once, now
			return r.fail(ctx, obj, err)
		}
		return r.failQuietly(ctx, obj, w, err)
	}
	st.SystemName = s.SystemName
	s.CreatePending = PendingCreate(obj) == s.Tenant
	r.resolved.LoadOrStore(client.ObjectKeyFromObject(obj), struct{}{})

	now := r.now()
	syncNow := obj.GetAnnotations()[v1alpha1.SyncNowAnnotation]
	// A drift check is due once the object's slot in the period comes (driftDueAt); a first sync reads
	// 3scale anyway, without forcing the syncers to re-read what they share (a plan's product and backends).
	driftDue := r.DriftCheckPeriod > 0 && st.LastSyncTime != nil && !now.Before(r.driftDueAt(obj, st))
	// inSync: the last sync wrote exactly what the spec and dependencies say now.
	inSync := st.SyncedHash == s.Hash && st.ObservedGeneration == obj.GetGeneration() && SyncState(st) == v1alpha1.ConditionSynced
	if inSync && !driftDue && syncNow == st.SyncNow && !s.PeriodicDue {
		// Nothing that the remote state derives from has changed: no remote call.
		r.Backoff.Reset(client.ObjectKeyFromObject(obj))
		r.quietSince.Delete(client.ObjectKeyFromObject(obj)) // a quiet wait for a dependency ended here
		return ctrl.Result{RequeueAfter: r.nextCheck(obj, st, s, now)}, nil
	}
	// Past the return above, an object in sync with no sync-now and no periodic work is here only for
	// its drift check: background work, within the tenant's drift-check budget.
	background := inSync && syncNow == st.SyncNow && !s.PeriodicDue

	key := client.ObjectKeyFromObject(obj)
	attempt := rejection{hash: s.Hash, generation: obj.GetGeneration(), syncNow: syncNow, at: now}
	if wait, ok := r.refusedBefore(key, attempt, SyncState(st)); ok {
		// 3scale refused exactly this attempt a moment ago; nothing changed since: no remote call.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.rejected.Delete(key)

	// Fairness across tenants: a tenant already busy with as much work as its pacer can serve sends this
	// worker to other tenants' objects; this one comes back shortly.
	leave, admitted := admit(s, background)
	if !admitted {
		// Nothing was done: what this pass filled in (the tenant, the system name) is written when the
		// object is admitted, not in a write of its own now (one API server write per deferral, for
		// nothing, when a burst makes a tenant busy); a tenant change is recorded at once.
		w.done = !rebound
		if background { // the budget is spent: later, spread out
			AdmissionDeferrals.WithLabelValues(r.Kind, "drift-check").Inc()
			return ctrl.Result{RequeueAfter: 5 * admissionRetry()}, nil
		}
		AdmissionDeferrals.WithLabelValues(r.Kind, "sync").Inc()
		return ctrl.Result{RequeueAfter: admissionRetry()}, nil
	}
	defer leave()
	if background {
		ctx = tsclient.WithBackground(ctx)
	}

	s.ForceRead = driftDue || syncNow != st.SyncNow || observing || wasObserved
	if observing {
		return r.observeOnly(ctx, obj, w, s, want, syncNow, now)
	}
	ctx, progress := tsclient.WithProgress(ctx)
	obs, err := r.observe(ctx, obj, s, want)
	report := obs.Report
	if err == nil {
		var wrote Report
		switch {
		case !obs.Exists:
			wrote, err = r.create(ctx, obj, s, want, w)
		case !controllerutil.ContainsFinalizer(obj, Finalizer):
			// Observe adopted an existing object: the finalizer goes on before the object is written to
			// or its id recorded.
			if err = r.updateMetadata(ctx, obj, w, addFinalizer); err == nil && !obs.UpToDate {
				wrote, err = r.update(ctx, obj, s, want, obs.snapshot.Clone())
			}
		case !obs.UpToDate:
			wrote, err = r.update(ctx, obj, s, want, obs.snapshot.Clone())
		}
		report = report.after(wrote, !obs.Exists || !obs.UpToDate)
	}
	if errors.Is(err, errObjectChanged) {
		return r.metadataNotWritten(w, err)
	}
	if obj.GetRemoteID() != 0 {
		// Its id is recorded: no create is in doubt any more, whatever failed after (a create's
		// children, an update of the object found under the marker).
		r.settle(obj)
	}
	if err != nil {
		if class, _, _ := Classify(err); class == ClassInvalid && fromRemote(err) {
			r.rejected.Store(key, attempt)
		}
		res, ferr := r.fail(ctx, obj, err)
		if ferr != nil && progress.Load() > 0 {
			// A passing failure after 3scale accepted some of this sync's writes: it got somewhere, and
			// writes are diffs, so the next try has less to do. Try again soon with the workqueue's
			// backoff reset, rather than backing off as if nothing had worked: on a flaky tenant each
			// failure would otherwise double the wait of an object that is nearly there.
			return ctrl.Result{RequeueAfter: progressRetry}, nil
		}
		return res, ferr
	}
	r.settle(obj)
	if inSync && (!obs.Exists || !obs.UpToDate) {
		// Nothing changed on our side, yet 3scale differed: a drift check (periodic or on demand)
		// repaired it.
		DriftRepairs.WithLabelValues(r.Kind).Inc()
		r.event(obj, "Warning", v1alpha1.ReasonDriftRepaired, "Repair",
			"the %s in 3scale had drifted from its spec and was repaired", r.Kind)
	}

	st.SyncedHash, st.SyncNow = s.Hash, syncNow
	st.LastSyncTime = &metav1.Time{Time: now}
	st.ObservedGeneration = obj.GetGeneration()
	message := fmt.Sprintf("%s %q is in sync with tenant %s", r.Kind, s.SystemName, s.Tenant)
	if report.Adopted != 0 {
		message = fmt.Sprintf("%s %q is in sync with tenant %s (adopted the existing %s %d, which this resource did not create)",
			r.Kind, s.SystemName, s.Tenant, r.Kind, report.Adopted)
		r.event(obj, "Normal", v1alpha1.ReasonAdopted, "Adopt", "adopted existing %s %d (system name %q) on tenant %s", r.Kind, report.Adopted, s.SystemName, s.Tenant)
	}
	if report.Note != "" {
		message += "; " + report.Note
	}
	if note := leftBehindNote(r.Kind, st); note != "" {
		message += "; " + note
	}
	r.transition(obj, v1alpha1.ConditionSynced, v1alpha1.ReasonSynced, message)
	r.Backoff.Reset(client.ObjectKeyFromObject(obj))
	r.quietSince.Delete(client.ObjectKeyFromObject(obj))
	return ctrl.Result{RequeueAfter: r.nextCheck(obj, st, s, now)}, nil
}

// progressRetry is how soon a sync that failed after some accepted writes is tried again.
const progressRetry = time.Second
