package engine

// Scheduling: quiet waits, admission per tenant, refused attempts, drift-check slots, requeue times.

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// quietWait tells whether err is a quiet wait still within its QuietWait (a Pending wait of a new or a
// Synced object, or a GoingAway one), and how long is left of it (the object is looked at again then, if a
// watch has not woken it before).
func (r *Reconciler[T, D, S]) quietWait(obj T, err error) (time.Duration, bool) {
	var re *ReasonedError
	if r.QuietWait <= 0 || !errors.As(err, &re) {
		return 0, false
	}
	var since time.Time
	window := r.QuietWait
	switch re.quiet {
	case quietNew, quietQueued, quietMissing:
		switch state := SyncState(obj.GetSyncStatus()); {
		case state == "": // a new object: since its creation
			since = obj.GetCreationTimestamp().Time
			if re.quiet == quietQueued {
				window *= queuedWaitFactor
			}
		case state == v1alpha1.ConditionSynced && (re.quiet != quietMissing || r.Sharded || !r.hasResolved(obj)):
			// A dependency synced again, or one missing for a shard (relabelled to another, the object
			// follows) or for a reconciler that has never seen this object's dependencies resolve (a
			// shard the object was just moved to: its dependencies are moving too; a manager just
			// started): since this reconciler first met the wait (below).
			since = r.now()
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

// hasResolved tells whether this reconciler has seen obj's dependencies resolve since it started (or
// since the object last left its cache).
func (r *Reconciler[T, D, S]) hasResolved(obj T) bool {
	_, ok := r.resolved.Load(client.ObjectKeyFromObject(obj))
	return ok
}

// failQuietly is fail, except for a quiet wait within its QuietWait: then nothing is written (w) and the
// object is looked at again when the wait ends.
func (r *Reconciler[T, D, S]) failQuietly(ctx context.Context, obj T, w *statusWriter[T, D, S], err error) (ctrl.Result, error) {
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
func (r *Reconciler[T, D, S]) refusedBefore(key types.NamespacedName, attempt rejection, state string) (time.Duration, bool) {
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
func (r *Reconciler[T, D, S]) nextCheck(obj T, st *v1alpha1.CommonStatus, s *Session, now time.Time) time.Duration {
	d := r.untilDriftCheck(obj, st, now)
	if s.PeriodicIn > 0 && (d == 0 || s.PeriodicIn < d) {
		d = s.PeriodicIn
	}
	return d
}

func (r *Reconciler[T, D, S]) untilDriftCheck(obj T, st *v1alpha1.CommonStatus, now time.Time) time.Duration {
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
func (r *Reconciler[T, D, S]) driftDueAt(obj T, st *v1alpha1.CommonStatus) time.Time {
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

func (r *Reconciler[T, D, S]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler[T, D, S]) track(id types.NamespacedName, obj T) {
	if r.States != nil {
		r.States.Set(r.Kind, id, SyncState(obj.GetSyncStatus()))
	}
}

func (r *Reconciler[T, D, S]) forget(id types.NamespacedName) {
	r.Backoff.Reset(id)
	r.quietSince.Delete(id)
	r.deleting.Delete(id)
	r.goingSince.Delete(id)
	r.rejected.Delete(id)
	r.written.Delete(id)
	r.resolved.Delete(id)
	r.settled.Delete(id)
	if r.States != nil {
		r.States.Delete(r.Kind, id)
	}
	trackDrift(r.Kind, id, false)
}
