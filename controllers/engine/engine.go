// Package engine is apimsync's generic sync engine. It owns the flow every kind shares — finalizer,
// provider account, dependencies, the skip when nothing changed, observe/create/update, deletion,
// lifecycle conditions, events, backoff and metrics — and asks a small per-kind Syncer how to talk to
// 3scale.
package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// Finalizer is put on every synced object before its first remote create; it goes once the remote side
// is cleaned up (or retained).
const Finalizer = "capabilities.apimsync.io/remote-cleanup"

// Object is what the engine syncs: a Kubernetes object with apimsync's common status.
type Object interface {
	client.Object
	v1alpha1.SyncedObject
}

// Session is what one reconcile of one object talks to 3scale with, filled in by Connect and Resolve.
type Session struct {
	// Remote is the client of the object's tenant.
	Remote *tsclient.Client
	// Tenant is the host of the tenant's admin portal.
	Tenant string
	// SecretName is the provider-account Secret used.
	SecretName string
	// SystemName is the effective system name of the remote object.
	SystemName string
	// Hash covers everything the remote state derives from (spec, tenant, dependencies' remote ids).
	// When it equals status.syncedHash the object is in sync without asking 3scale.
	Hash string
	// Desired is kind-specific state computed by Resolve (dependency ids...), for Observe/Create/Update.
	Desired any
	// ForceRead tells Observe to read 3scale rather than trust cached snapshots (drift check, sync-now).
	ForceRead bool
	// AccountVersion identifies the provider-account Secret's content (a keyed hash of its data), never
	// its values: when it changes, the credentials are checked once per tenant (CredentialsChecker).
	AccountVersion string
	// LegacyAccountVersion is the same Secret as earlier apimsync versions recorded it
	// (UID/resourceVersion): a status holding it was synced with this very Secret, unchanged since, so an
	// upgrade checks nothing and rewrites no status; the next change of the Secret records AccountVersion.
	LegacyAccountVersion string
	// HashKey keys Hash, so that a hash in status reveals nothing of the values it covers (policy
	// configurations, issuer URLs with client secrets) to whoever can read the resource. Connect derives it
	// from the provider account's token.
	HashKey []byte
	// CreatePending is true when an earlier reconcile sent a create for this object on this tenant and
	// may have lost its answer: finding the object by system name then is finding our own.
	CreatePending bool
	// WentWithOwner is set by a syncer's Delete that made no call because the remote object goes with
	// its owner's (a plan with its product, an application with its account): the owner's deletion is
	// the remote deletion, and says so.
	WentWithOwner bool
	// DeletionGrace, set by the engine before a syncer's Delete, is what is left of the object's
	// deletion grace (Reconciler.DependantGrace, extended by the deletions under way in its namespace): a
	// syncer whose remote object would go with an owner that is not being deleted yet may wait that long
	// for a prune to reach the owner too (OwnerMayFollow), instead of a call of its own.
	DeletionGrace time.Duration
	// Adopted is set by a syncer that took over an existing remote object it did not create (found by
	// system name); the engine announces it in an Event and the Synced condition.
	Adopted int64
	// PeriodicDue, set by Resolve, asks for Observe even though nothing changed: the syncer has periodic
	// work (a usage report). PeriodicIn, when positive, is when that work is due next: the engine
	// requeues the object by then.
	PeriodicDue bool
	PeriodicIn  time.Duration
	// Note, set by the syncer, is added to the Synced condition's message.
	Note string
}

// HashOf returns the keyed hash of values (see HashKey): the fingerprint of everything a remote object
// derives from.
func (s *Session) HashOf(values ...any) string { return keyedHash(s.HashKey, values...) }

// Observation is what Observe learnt of the remote object.
type Observation struct {
	// Exists is false when the remote object is not there (never created, or deleted behind our back).
	Exists bool
	// UpToDate is true when the remote object matches the spec.
	UpToDate bool
	// Diff is kind-specific and handed to Update.
	Diff any
}

// Syncer says how one kind talks to 3scale. Every call is idempotent; Delete of something already gone
// is success. Errors are classified by Classify: use Waiting and Invalid for the non-retryable ones.
type Syncer[T Object] interface {
	// Connect finds obj's provider account and returns a session with a client for its tenant. It makes
	// no remote call. On deletion it must work from status alone when the spec's references are gone.
	Connect(ctx context.Context, obj T) (*Session, error)
	// Resolve reads what obj depends on, validates what the schema cannot (what the spec alone tells may
	// be a Validator's), and fills in s.SystemName, s.Hash and s.Desired. It makes no remote call.
	Resolve(ctx context.Context, obj T, s *Session) error
	// Observe reads the remote object.
	Observe(ctx context.Context, obj T, s *Session) (Observation, error)
	// Create creates the remote object, adopting one with the same system name rather than making a
	// duplicate, and records its id in obj's status as soon as 3scale answers the create. The engine keeps
	// its create-pending marker after a failure only while the create may have made something (see
	// create): an error is taken to mean nothing was made when no id is recorded and it is a
	// ReasonedError, NothingMade, a 4xx, or a request never sent; so a decision returned as a
	// ReasonedError must come before any write that may have made the object.
	Create(ctx context.Context, obj T, s *Session) error
	// Update makes the remote object match the spec, writing only what differs.
	Update(ctx context.Context, obj T, s *Session, o Observation) error
	// Delete deletes the remote object; 404 is success.
	Delete(ctx context.Context, obj T, s *Session) error
}

// Validator is an optional part of a Syncer: it checks what the object's spec alone can tell (what the
// schema cannot), reading nothing, and returns an Invalid error when the spec cannot work. The engine
// asks it before anything else, so such a spec is Invalid at once, not after a wait for a dependency or
// the provider account that would end in the same refusal (a plan with two limits on one metric and
// period, while its Product is still being synced).
type Validator[T Object] interface {
	Validate(obj T) error
}

// Reconciler is the generic reconciler of one kind.
type Reconciler[T Object] struct {
	// Client reads and writes Kubernetes objects.
	Client client.Client
	// Kind names the kind in events, logs and metrics.
	Kind string
	// New returns an empty object of the kind.
	New func() T
	// Syncer talks to 3scale for the kind.
	Syncer Syncer[T]
	// Recorder emits an event on each lifecycle transition.
	Recorder events.EventRecorder
	// Backoff spaces the retries of orphans.
	Backoff *OrphanBackoff
	// DriftCheckPeriod is how often a synced object's remote state is read and repaired; 0 disables it.
	DriftCheckPeriod time.Duration
	// Now returns the time; tests replace it.
	Now func() time.Time
	// States tracks the lifecycle state of each object for the apimsync_objects metric.
	States *StateTracker
	// Credentials checks a changed provider account once per tenant; nil checks nothing.
	Credentials CredentialsChecker
	// QuietWait is how long an expected wait goes without a status write or an event: a new object (no
	// lifecycle condition yet) waiting on a dependency that is itself being synced (Pending; 10 times as
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
	// DependantGrace is how long an owner being deleted leaves those of its dependants not being deleted
	// yet to whoever deleted the owner: a prune (Argo CD, Flux, kubectl delete -f) deletes them a moment
	// later, and a DELETE of ours as well would be an API server write for nothing. The grace lasts from
	// the owner's deletion and, while Deletions records more in its namespace (a prune under way), from
	// the last of them, up to dependantGraceCap of it in all; then the owner deletes those left itself. 0
	// deletes them at once.
	DependantGrace time.Duration
	// Deletions, when set, records the deletions under way per namespace (all kinds' informers feed it).
	Deletions *Deletions

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

// CredentialsChecker verifies a tenant's credentials with one cheap authenticated call, shared by every
// object of the tenant.
type CredentialsChecker interface {
	Check(ctx context.Context, s *Session) error
}

// Reconcile implements reconcile.Reconciler: it brings one object and its remote counterpart in line.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
	st := &statusWriter[T]{r: r, before: obj.DeepCopyObject().(T)}
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
func (r *Reconciler[T]) sync(ctx context.Context, obj T, w *statusWriter[T]) (ctrl.Result, error) {
	if v, ok := r.Syncer.(Validator[T]); ok {
		if err := v.Validate(obj); err != nil {
			return r.fail(ctx, obj, err)
		}
	}
	st := obj.GetSyncStatus()
	if !controllerutil.ContainsFinalizer(obj, Finalizer) && (obj.GetRemoteID() != 0 || PendingCreate(obj) != "") {
		// The object holds a remote one, or may: its finalizer must be there (an object from before the
		// finalizer went on with the first create, or one whose finalizer was removed by hand). A new
		// object gets it with its create-pending marker, in the one update made before its first create.
		if err := r.updateMetadata(ctx, obj, w, addFinalizer); err != nil {
			return r.metadataNotWritten(w, err)
		}
	}

	s, err := r.Syncer.Connect(ctx, obj)
	if err != nil {
		return r.failQuietly(ctx, obj, w, err)
	}
	rebound := r.rebindTenant(obj, s)
	st.TenantHost, st.ProviderAccountSecret = s.Tenant, s.SecretName
	if err := r.checkCredentials(ctx, st, s); err != nil {
		return r.fail(ctx, obj, err)
	}
	if err := r.Syncer.Resolve(ctx, obj, s); err != nil {
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

	now := r.now()
	syncNow := obj.GetAnnotations()[v1alpha1.SyncNowAnnotation]
	// A drift check is due once the object's slot in the period comes (driftDueAt); a first sync reads
	// 3scale anyway, without forcing the syncers to re-read what they share (a plan's product and backends).
	driftDue := r.DriftCheckPeriod > 0 && st.LastSyncTime != nil && !now.Before(r.driftDueAt(obj, st))
	// inSync: the last sync wrote exactly what the spec and dependencies say now.
	inSync := st.SyncedHash == s.Hash && st.ObservedGeneration == obj.GetGeneration() && Lifecycle(st) == v1alpha1.ConditionSynced
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
	if wait, ok := r.refusedBefore(key, attempt, Lifecycle(st)); ok {
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
			return ctrl.Result{RequeueAfter: 5 * admissionRetry()}, nil
		}
		return ctrl.Result{RequeueAfter: admissionRetry()}, nil
	}
	defer leave()
	if background {
		ctx = tsclient.WithBackground(ctx)
	}

	s.ForceRead = driftDue || syncNow != st.SyncNow
	ctx, progress := tsclient.WithProgress(ctx)
	obs, err := r.Syncer.Observe(ctx, obj, s)
	if err == nil {
		switch {
		case !obs.Exists:
			err = r.create(ctx, obj, s, w)
		case !controllerutil.ContainsFinalizer(obj, Finalizer):
			// Observe adopted an existing object: the finalizer goes on before the object is written to
			// or its id recorded.
			if err = r.updateMetadata(ctx, obj, w, addFinalizer); err == nil && !obs.UpToDate {
				err = r.Syncer.Update(ctx, obj, s, obs)
			}
		case !obs.UpToDate:
			err = r.Syncer.Update(ctx, obj, s, obs)
		}
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
		r.event(obj, "Warning", ReasonDriftRepaired, "Repair",
			"the %s in 3scale had drifted from its spec and was repaired", r.Kind)
	}

	st.SyncedHash, st.SyncNow = s.Hash, syncNow
	st.LastSyncTime = &metav1.Time{Time: now}
	st.ObservedGeneration = obj.GetGeneration()
	message := fmt.Sprintf("%s %q is in sync with tenant %s", r.Kind, s.SystemName, s.Tenant)
	if s.Adopted != 0 {
		message = fmt.Sprintf("%s %q is in sync with tenant %s (adopted the existing %s %d, which this resource did not create)",
			r.Kind, s.SystemName, s.Tenant, r.Kind, s.Adopted)
		r.event(obj, "Normal", ReasonAdopted, "Adopt", "adopted existing %s %d (system name %q) on tenant %s", r.Kind, s.Adopted, s.SystemName, s.Tenant)
	}
	if s.Note != "" {
		message += "; " + s.Note
	}
	r.transition(obj, v1alpha1.ConditionSynced, ReasonSynced, message)
	r.Backoff.Reset(client.ObjectKeyFromObject(obj))
	r.quietSince.Delete(client.ObjectKeyFromObject(obj))
	return ctrl.Result{RequeueAfter: r.nextCheck(obj, st, s, now)}, nil
}

// quietWait tells whether err is a quiet wait still within its QuietWait (a Pending wait of a new or a
// Synced object, or a GoingAway one), and how long is left of it (the object is looked at again then, if a
// watch has not woken it before).
func (r *Reconciler[T]) quietWait(obj T, err error) (time.Duration, bool) {
	var re *ReasonedError
	if r.QuietWait <= 0 || !errors.As(err, &re) {
		return 0, false
	}
	var since time.Time
	window := r.QuietWait
	switch re.quiet {
	case quietNew, quietQueued, quietMissing:
		switch state := Lifecycle(obj.GetSyncStatus()); {
		case state == "": // a new object: since its creation
			since = obj.GetCreationTimestamp().Time
			if re.quiet == quietQueued {
				window *= queuedWaitFactor
			}
		case state == v1alpha1.ConditionSynced && re.quiet != quietMissing:
			since = r.now() // a dependency synced again: since this reconciler first met the wait (below)
		default:
			return 0, false
		}
	case quietGoing:
		since = re.since
	default:
		return 0, false
	}
	now := r.now()
	left := since.Add(window).Sub(now)
	// The timestamps are the API server's and now is ours: should its clock be ahead, the wait would
	// last longer by as much. It also ends QuietWait after this reconciler first waited quietly for the
	// object.
	first, _ := r.quietSince.LoadOrStore(client.ObjectKeyFromObject(obj), now)
	left = min(left, first.(time.Time).Add(window).Sub(now))
	return left, left > 0
}

// failQuietly is fail, except for a quiet wait within its QuietWait: then nothing is written (w) and the
// object is looked at again when the wait ends.
func (r *Reconciler[T]) failQuietly(ctx context.Context, obj T, w *statusWriter[T], err error) (ctrl.Result, error) {
	if wait, ok := r.quietWait(obj, err); ok {
		w.done = true // nothing worth a write: the status stays as it was
		var re *ReasonedError
		if errors.As(err, &re) && re.recheck > 0 {
			wait = min(wait, re.recheck)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	// A quiet wait that ran out ends here: a later one (its deletion, after an Orphan) counts afresh.
	r.quietSince.Delete(client.ObjectKeyFromObject(obj))
	return r.fail(ctx, obj, err)
}

// admit admits one reconcile to the session's tenant (its client's pacer), as background work (a drift
// check) or not; a session without a client is always admitted. leave ends the admission.
func admit(s *Session, background bool) (leave func(), ok bool) {
	if s.Remote == nil || s.Remote.Pacer() == nil {
		return func() {}, true
	}
	pacer := s.Remote.Pacer()
	if background {
		if !pacer.TryAdmitBackground() {
			return nil, false
		}
		return pacer.LeaveBackground, true
	}
	if !pacer.TryAdmit() {
		return nil, false
	}
	return pacer.Leave, true
}

// admissionRetry is when an object whose tenant was too busy to admit it is tried again: soon, jittered
// so that the deferred objects of a tenant do not all come back at once.
func admissionRetry() time.Duration {
	return 200*time.Millisecond + time.Duration(rand.Int64N(int64(300*time.Millisecond)))
}

// refusedBefore tells whether 3scale refused this very attempt (same spec, dependencies and sync-now)
// less than InvalidRetryPeriod ago, and if so how long until it may be tried again.
func (r *Reconciler[T]) refusedBefore(key types.NamespacedName, attempt rejection, state string) (time.Duration, bool) {
	v, ok := r.rejected.Load(key)
	if !ok || state != v1alpha1.ConditionInvalid {
		return 0, false
	}
	prev := v.(rejection)
	if prev.hash != attempt.hash || prev.generation != attempt.generation || prev.syncNow != attempt.syncNow {
		return 0, false
	}
	if r.InvalidRetryPeriod <= 0 {
		return 0, true
	}
	wait := prev.at.Add(r.InvalidRetryPeriod).Sub(attempt.at)
	return wait, wait > 0
}

// nextCheck is when a synced object is looked at again: its drift check, or its syncer's periodic work
// if sooner.
func (r *Reconciler[T]) nextCheck(obj T, st *v1alpha1.CommonStatus, s *Session, now time.Time) time.Duration {
	d := r.untilDriftCheck(obj, st, now)
	if s.PeriodicIn > 0 && (d == 0 || s.PeriodicIn < d) {
		d = s.PeriodicIn
	}
	return d
}

// create creates the remote object. Unless a create is already pending, a create-pending marker is
// written first, with the finalizer in the same update of the object's metadata (one API server write
// for both): if the answer is lost, the next reconcile finds the object by system name as its own
// instead of adopting a stranger's. The marker lasts only as long as that doubt: it is settled (status)
// when the create succeeds, when its id is recorded, and when the create surely made nothing (3scale
// refused it). Left after a refusal, it would make a stranger's object given the same system name later
// look like this resource's own: taken without an adoption, and deleted with the resource. The refusal
// speaks for this try only: should an earlier one whose answer was lost have made the object after all
// (its request still under way in porta when this one looked), the object is later seen as a stranger's,
// adopted with an Event or refused; that is the safe side of the doubt. The marker is metadata: a
// replace of the whole object (kubectl replace, Argo CD's Replace=true) while a create is in doubt drops
// it with the finalizer, and the object created then is later seen as a stranger's too.
func (r *Reconciler[T]) create(ctx context.Context, obj T, s *Session, w *statusWriter[T]) error {
	if !s.CreatePending {
		mark := nextCreateMark(obj, s.Tenant)
		err := r.updateMetadata(ctx, obj, w, func(o client.Object) bool {
			annotations := maps.Clone(o.GetAnnotations())
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[v1alpha1.CreatePendingAnnotation] = mark
			o.SetAnnotations(annotations)
			controllerutil.AddFinalizer(o, Finalizer)
			return true
		})
		if err != nil {
			return fmt.Errorf("cannot record the create-pending marker: %w", err)
		}
	}
	err := r.Syncer.Create(ctx, obj, s)
	if err != nil && madeNothing(err) {
		r.settle(obj)
	}
	return err
}

// metadataNotWritten ends a reconcile whose metadata update failed: nothing was sent to 3scale. A
// conflict (the object changed since it was read: a spec edit, another controller's metadata) is looked
// at again shortly, with no condition and no event (the change's own watch event brings it back too);
// any other error is retried by the workqueue. Nothing is recorded either way.
func (r *Reconciler[T]) metadataNotWritten(w *statusWriter[T], err error) (ctrl.Result, error) {
	w.done = true
	if errors.Is(err, errObjectChanged) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// updateMetadata applies change to obj's metadata and, when it changed anything, writes it (an update
// with optimistic locking: a conflict is returned). The status obj carries, set so far by this
// reconcile, is kept for the status write at its end, and that write then diffs against the object as
// stored now. On failure obj's metadata is as it was; a conflict is errObjectChanged.
func (r *Reconciler[T]) updateMetadata(ctx context.Context, obj T, w *statusWriter[T], change func(client.Object) bool) error {
	// The update is made from the object as last read or written (w.before), not from obj: its answer is
	// decoded into the copy sent without clearing it first, so status obj holds and the API server does
	// not (an id just recorded) would stay in the copy, and the status write that diffs against it would
	// leave it out.
	stored := w.before.DeepCopyObject().(T)
	if !change(stored) {
		return nil
	}
	if err := r.Client.Update(ctx, stored); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("%w: %w", errObjectChanged, err)
		}
		return err
	}
	r.wrote(stored)
	obj.SetAnnotations(stored.GetAnnotations())
	obj.SetFinalizers(stored.GetFinalizers())
	obj.SetResourceVersion(stored.GetResourceVersion())
	obj.SetManagedFields(stored.GetManagedFields())
	// Status patches diff against the object as stored now: against the copy from before the update
	// they would carry its metadata (finalizers, managedFields, the old resourceVersion) too.
	w.before = stored
	return nil
}

// errObjectChanged is updateMetadata's conflict: the object changed since this reconcile read it.
var errObjectChanged = errors.New("the object changed since it was read")

// addFinalizer adds the remote-cleanup finalizer to obj, telling whether it was missing.
func addFinalizer(obj client.Object) bool { return controllerutil.AddFinalizer(obj, Finalizer) }

// nextCreateMark is the create-pending marker of obj's next create on tenant: "<tenant>#<n>#<uid>",
// n one more than any marker obj carries or settled (so that a marker is never written twice, even if
// the annotation was removed meanwhile), uid obj's own (so that the annotation, copied with the object
// into a new one — an export applied again, a restore — means nothing there).
func nextCreateMark(obj Object, tenant string) string {
	_, n, _ := parseCreateMark(obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation])
	_, settled, _ := parseCreateMark(obj.GetSyncStatus().CreateSettled)
	return fmt.Sprintf("%s#%d#%s", tenant, max(n, settled)+1, obj.GetUID())
}

// parseCreateMark splits a create-pending marker into its tenant, count and UID.
func parseCreateMark(mark string) (tenant string, n int, uid types.UID) {
	parts := strings.SplitN(mark, "#", 3)
	if len(parts) != 3 {
		return "", 0, ""
	}
	n, _ = strconv.Atoi(parts[1])
	return parts[0], n, types.UID(parts[2])
}

// PendingCreate is the tenant on which a create of obj's remote object was sent and its answer not seen
// (it may have made the object): the create-pending annotation written for this very object (its UID)
// while status does not record that create settled, or the marker earlier versions kept in status. ""
// when no create is in doubt.
func PendingCreate(obj Object) string {
	st := obj.GetSyncStatus()
	if st.CreatePending != "" {
		return st.CreatePending
	}
	mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]
	if mark == "" || mark == st.CreateSettled {
		return ""
	}
	if tenant, _, uid := parseCreateMark(mark); uid == obj.GetUID() {
		return tenant
	}
	return ""
}

// settle is settleCreate, remembered: should the status write that records it fail, the next reconcile
// still knows that the create under this marker made nothing or was settled (recallSettled), and never
// takes a same-named stranger for its own. Forgotten with the object.
func (r *Reconciler[T]) settle(obj T) {
	settleCreate(obj)
	if mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]; mark != "" {
		r.settled.Store(client.ObjectKeyFromObject(obj), mark)
	}
}

// recallSettled settles again, in obj as read, a create this reconciler settled whose status write may
// have failed.
func (r *Reconciler[T]) recallSettled(key types.NamespacedName, obj T) {
	v, ok := r.settled.Load(key)
	if !ok {
		return
	}
	switch mark := v.(string); {
	case obj.GetSyncStatus().CreateSettled == mark:
		r.settled.Delete(key) // recorded: nothing more to remember
	case obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation] == mark:
		settleCreate(obj)
	}
}

// settleCreate records in obj's status that no create of its remote object is in doubt any more.
func settleCreate(obj Object) {
	st := obj.GetSyncStatus()
	st.CreatePending = ""
	if mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]; mark != "" {
		st.CreateSettled = mark
	}
}

// rebindTenant forgets a remote id recorded on another tenant than the one the provider account now
// points at: an id is bound to its tenant and never used against another. The object is then resolved
// by system name on the new tenant; the old remote object is left as it is.
func (r *Reconciler[T]) rebindTenant(obj T, s *Session) (rebound bool) {
	st := obj.GetSyncStatus()
	if pending := PendingCreate(obj); pending != "" && pending != s.Tenant {
		r.settle(obj)
		rebound = true
	}
	id := obj.GetRemoteID()
	if id == 0 || st.TenantHost == "" || st.TenantHost == s.Tenant {
		return rebound
	}
	r.event(obj, "Warning", ReasonTenantChanged, "Rebind",
		"the provider account now points at tenant %s: %s %d on tenant %s is left there untouched, and the %s is looked up by system name on %s",
		s.Tenant, r.Kind, id, st.TenantHost, r.Kind, s.Tenant)
	obj.SetRemoteID(0)
	st.SyncedHash = ""
	return true
}

// checkCredentials checks the provider account once per tenant when its Secret changed since the
// object last synced, so that a refused token shows at once on every object using it.
func (r *Reconciler[T]) checkCredentials(ctx context.Context, st *v1alpha1.CommonStatus, s *Session) error {
	if st.ProviderAccountVersion != "" && st.ProviderAccountVersion == s.LegacyAccountVersion {
		return nil
	}
	if st.ProviderAccountVersion != s.AccountVersion && st.ProviderAccountVersion != "" && r.Credentials != nil {
		if err := r.Credentials.Check(ctx, s); err != nil {
			return err
		}
	}
	st.ProviderAccountVersion = s.AccountVersion
	return nil
}

// finalize handles an object being deleted: remote cleanup per the deletion policy, then the finalizer
// goes. Only a remote object this resource holds is deleted: by the id in its status, or by system name
// right after its own create whose answer was lost (create-pending marker), and only on the tenant the
// id belongs to. A resource that never held one (it lost an ownership conflict, was Orphan or Invalid
// all along) deletes nothing remotely.
func (r *Reconciler[T]) finalize(ctx context.Context, obj T, w *statusWriter[T]) (ctrl.Result, error) {
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
			return r.failQuietly(ctx, obj, w, &ReasonedError{class: ClassWaiting, Reason: ReasonWaitingForOwner, RetryAfter: 5 * time.Second,
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
		if err := r.deleteDependants(ctx, obj); err != nil {
			return r.failQuietly(ctx, obj, w, err)
		}
	}
	st := obj.GetSyncStatus()
	id := obj.GetRemoteID()
	pending := PendingCreate(obj)
	if len(retained) > 0 {
		r.event(obj, "Warning", ReasonKeptForRetained, "Delete",
			"left the %s in 3scale (id %d): %s with deletionPolicy Retain keep remote objects under it, which 3scale would refuse to delete it for or delete along with it; to delete it in 3scale too, set their deletionPolicy to Delete before deleting",
			r.Kind, id, strings.Join(retained, ", "))
	} else if obj.GetDeletionPolicy() == v1alpha1.DeletionPolicyDelete && (id != 0 || pending != "") {
		if err := r.waitForUsers(ctx, obj); err != nil {
			return r.failQuietly(ctx, obj, w, err)
		}
		s, err := r.Syncer.Connect(ctx, obj)
		if err != nil {
			return r.fail(ctx, obj, err)
		}
		bound := st.TenantHost
		if id == 0 {
			bound = pending
		}
		if bound == s.Tenant {
			s.CreatePending, s.DeletionGrace = id == 0, r.deletionGraceLeft(obj)
			if err := r.Syncer.Delete(ctx, obj, s); err != nil {
				return r.failQuietly(ctx, obj, w, err)
			}
			// The object no longer holds a remote one: should the finalizer patch below fail, the status
			// written at the end of this reconcile says so, and the next try does not delete again.
			obj.SetRemoteID(0)
			r.settle(obj)
			if !s.WentWithOwner {
				r.event(obj, "Normal", "RemoteDeleted", "Delete", "deleted the %s from tenant %s", r.Kind, s.Tenant)
			}
		} else {
			r.event(obj, "Warning", ReasonTenantChanged, "Delete",
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

// deleteDependants deletes the objects that cannot exist without obj and, while any is left, returns a
// waiting error that counts and names them by kind ("deleting 3 applications first: a, b, c"), and says
// why those whose deletion fails are stuck, what those waiting for their own dependants wait for, and
// which other finalizers keep those apimsync is done with. The wait is a quiet one (GoingAway) from
// obj's own deletion: the deletions it waits for are under way, and usually done in a moment; in a
// mass deletion a condition and an event per owner, each time the count changes, would be API server
// writes for nothing. Past QuietWait the owner says what it waits for, so that a stuck one shows. For
// DependantGrace from its deletion, the owner leaves the dependants not being deleted yet to whoever
// deleted it (a prune deletes them a moment later), and looks again when the grace ends.
func (r *Reconciler[T]) deleteDependants(ctx context.Context, obj T) error {
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
			if state := Lifecycle(so.GetSyncStatus()); state == v1alpha1.ConditionOrphan || state == v1alpha1.ConditionInvalid {
				for _, c := range so.GetSyncStatus().Conditions {
					switch {
					case c.Type != state || c.Status != metav1.ConditionTrue:
					case c.Reason == ReasonWaitingForOwner: // not stuck: waiting a moment for its owner (this one)
					case c.Reason == ReasonDeletingDependants: // not stuck: waiting for its own dependants
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
	return &ReasonedError{class: ClassWaiting, Reason: ReasonDeletingDependants, RetryAfter: retry,
		Message: dependantsMessage(kinds, names), quiet: quietGoing, since: obj.GetDeletionTimestamp().Time, recheck: grace}
}

// deletionGraceLeft is how much is left of DependantGrace for an object being deleted: an owner leaves
// its dependants to whoever deleted it meanwhile, a dependant waits for its owner; none for an object
// apimsync deleted itself (Deletions.Ours). It begins at the earlier of its deletion timestamp (an old
// deletion met after a restart is not waited for again) and when this reconciler first saw it going
// (the timestamp is the API server's clock); it lasts DependantGrace from then, or from the last
// deletion seen in its namespace since, and never more than dependantGraceCap times DependantGrace from
// its beginning.
func (r *Reconciler[T]) deletionGraceLeft(obj T) time.Duration {
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
func (r *Reconciler[T]) deleteDependant(ctx context.Context, owner T, d client.Object) error {
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

// progressRetry is how soon a sync that failed after some accepted writes is tried again.
const progressRetry = time.Second

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
func (r *Reconciler[T]) waitForUsers(ctx context.Context, obj T) error {
	users, err := related(ctx, r.Users, obj)
	if err != nil || len(users) == 0 {
		return err
	}
	names := make([]string, 0, len(users))
	for _, u := range users {
		names = append(names, nameOf(u))
	}
	return &ReasonedError{class: ClassWaiting, Reason: ReasonDeletionBlocked, RetryAfter: 30 * time.Second,
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

// fail turns an error into conditions and a result, by its class: waiting (Orphan, backoff), invalid
// (Invalid, terminal) or retryable (InSync, workqueue backoff or Retry-After).
func (r *Reconciler[T]) fail(ctx context.Context, obj T, err error) (ctrl.Result, error) {
	class, reason, message := Classify(err)
	if !obj.GetDeletionTimestamp().IsZero() && reason != ReasonDeletingDependants { // that one says "deleting" already
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

// transition sets the lifecycle state and emits an event when it changed.
func (r *Reconciler[T]) transition(obj T, state, reason, message string) {
	if !SetLifecycle(obj.GetSyncStatus(), state, reason, message, obj.GetGeneration()) {
		return
	}
	eventType := "Normal"
	if state == v1alpha1.ConditionInvalid || state == v1alpha1.ConditionInSync {
		eventType = "Warning"
	}
	r.event(obj, eventType, reason, state, "%s", message)
}

func (r *Reconciler[T]) event(obj T, eventType, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, eventType, reason, action, format, args...)
	}
}

// statusWriter writes an object's status at the end of a reconcile when it changed since it was last
// read or written (before is that object; a metadata update, such as the create-pending marker's,
// moves it on). A merge patch (no resourceVersion) never conflicts.
type statusWriter[T Object] struct {
	r      *Reconciler[T]
	before T
	// done: nothing more is written in this pass (the object is gone, or the pass did nothing worth
	// recording).
	done bool
}

func (w *statusWriter[T]) write(ctx context.Context, obj T) error {
	// The whole objects first: a reconcile that changed nothing (most of them, in a burst) costs no
	// conversion; the statuses as unstructured data then, so that only a difference that shows is written.
	if w.done || equality.Semantic.DeepEqual(w.before, obj) || equality.Semantic.DeepEqual(statusOf(w.before), statusOf(obj)) {
		return nil
	}
	if err := w.r.Client.Status().Patch(ctx, obj, client.MergeFrom(w.before)); err != nil {
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
func (r *Reconciler[T]) wrote(obj T) {
	if rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil {
		r.written.Store(client.ObjectKeyFromObject(obj), lastWrite{rv: rv})
	}
}

// finalized remembers that obj's finalizer was removed: the API server deletes it then, and answers with
// the resourceVersion it had, so any copy of this object (this UID) the cache still holds is stale.
func (r *Reconciler[T]) finalized(obj T) {
	r.written.Store(client.ObjectKeyFromObject(obj), lastWrite{gone: true, uid: obj.GetUID()})
}

// staleCache reports whether obj, as the cache has it, is older than our own last write of it. Resource
// versions are compared as numbers: the API server's are etcd revisions, comparable as integers
// (Kubernetes' comparable resource versions, KEP-5504); one that does not parse is never called stale.
func (r *Reconciler[T]) staleCache(key types.NamespacedName, obj T) bool {
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

// statusOf returns the status of any kind as unstructured data, to compare kind-specific fields too.
func statusOf(obj client.Object) any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return u["status"]
}

func (r *Reconciler[T]) untilDriftCheck(obj T, st *v1alpha1.CommonStatus, now time.Time) time.Duration {
	if r.DriftCheckPeriod <= 0 || st.LastSyncTime == nil {
		return 0
	}
	d := r.driftDueAt(obj, st).Sub(now)
	if d < time.Second {
		d = time.Second
	}
	return d
}

// driftDueAt is when obj's next drift check is due. Each object has its own slot in the period (a hash of
// its UID), and is checked at the first of its slots at least half a period after its last sync, and
// not before this reconciler started: then every period, at its slot. So the checks of objects synced
// together (a cold start, a restore) and of objects overdue when the manager starts are spread evenly
// over the period instead of coming all at once, and the call rate stays flat.
func (r *Reconciler[T]) driftDueAt(obj T, st *v1alpha1.CommonStatus) time.Time {
	earliest := st.LastSyncTime.Add(r.DriftCheckPeriod / 2)
	if earliest.Before(r.started) {
		earliest = r.started
	}
	return driftSlot(obj.GetUID(), earliest, r.DriftCheckPeriod)
}

// driftSlot is the first time at or after earliest that falls on uid's slot: its hash modulo the period,
// counted from the Unix epoch.
func driftSlot(uid types.UID, earliest time.Time, period time.Duration) time.Time {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	phase := int64(h.Sum64() % uint64(period))
	p := int64(period)
	from := earliest.UnixNano() - phase
	n := from / p
	if from%p != 0 && from > 0 {
		n++
	}
	return time.Unix(0, n*p+phase)
}

func (r *Reconciler[T]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler[T]) track(id types.NamespacedName, obj T) {
	if r.States != nil {
		r.States.Set(r.Kind, id, Lifecycle(obj.GetSyncStatus()))
	}
}

func (r *Reconciler[T]) forget(id types.NamespacedName) {
	r.Backoff.Reset(id)
	r.quietSince.Delete(id)
	r.deleting.Delete(id)
	r.goingSince.Delete(id)
	r.rejected.Delete(id)
	r.written.Delete(id)
	r.settled.Delete(id)
	if r.States != nil {
		r.States.Delete(r.Kind, id)
	}
}
