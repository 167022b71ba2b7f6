package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// Observe-only (spec.management: Observe): a sync reads the remote object as usual (by the id recorded,
// or by system name), records its id, and runs the syncer's Update with a session whose client records
// its writes instead of sending them (Session.DryRun: the syncer writes nothing to the cluster either,
// emits no Event, touches no shared state). Those writes are the object's observation
// (status.observation, the condition's message, ObservedDrift); nothing is written to 3scale, and nothing
// the dry run answered is cached or kept in the object's status (Update works on a copy), so a switch to
// Full reads 3scale afresh and makes the writes observed. Its deletion policy counts as Retain: deleting
// it deletes nothing, and the deletion of an owner keeps what it holds.

// maxObservedWrites bounds the writes listed in status.observation.
const maxObservedWrites = 50

// ObservedDrift counts the objects only observed whose 3scale object differs from their spec, by kind.
var ObservedDrift = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "apimsync_observed_drift_objects",
	Help: "Objects only observed (spec.management: Observe) whose 3scale object differs from their spec at their last look, by kind.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(ObservedDrift) }

// drifting holds the observed objects that differ (kind/namespace/name), for ObservedDrift.
var drifting sync.Map

// trackDrift records whether an observed object differs; differs false also forgets an object that is
// no longer observed or is gone.
func trackDrift(kind string, key types.NamespacedName, differs bool) {
	k := kind + "/" + key.String()
	if differs {
		if _, loaded := drifting.LoadOrStore(k, true); !loaded {
			ObservedDrift.WithLabelValues(kind).Inc()
		}
		return
	}
	if _, loaded := drifting.LoadAndDelete(k); loaded {
		ObservedDrift.WithLabelValues(kind).Dec()
	}
}

// observeOnly is the rest of the sync of an object only observed: its remote object is read (from 3scale,
// with a session whose writes are recorded, not sent, and which the syncer knows is a dry run), its id
// recorded, and the syncer's Update run on a copy of it, for the writes a full sync would make.
func (r *Reconciler[T, D, S]) observeOnly(ctx context.Context, obj T, w *statusWriter[T, D, S], s *Session, want D, syncNow string, now time.Time) (ctrl.Result, error) {
	st := obj.GetSyncStatus()
	key := client.ObjectKeyFromObject(obj)
	var writes []string
	s.DryRun = true
	s.Remote = tsclient.Recording(s.Remote, func(wr tsclient.Write) { writes = append(writes, wr.Method+" "+wr.Endpoint) })
	obs, err := r.observe(ctx, obj, s, want)
	if err != nil {
		return r.fail(ctx, obj, err)
	}
	if !obs.Exists {
		trackDrift(r.Kind, key, true)
		st.Observation = &v1alpha1.Observation{Differences: 1, ObservedAt: metav1.Time{Time: now},
			Writes: []string{fmt.Sprintf("create %s %q (with what it holds)", r.Kind, s.SystemName)}}
		return r.fail(ctx, obj, Waiting(v1alpha1.ReasonNothingToObserve,
			"observe only (spec.management: Observe): tenant %s has no %s %q to observe, and none is created; looking again with backoff",
			s.Tenant, r.Kind, s.SystemName))
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		// Found: its finalizer goes on before its id is recorded, as for any object holding one. Its
		// deletion policy counts as Retain, so its deletion deletes nothing; the finalizer makes the
		// deletion of an owner see it, and keep what it holds in 3scale (RetainedUnder, OwnersGoing).
		if err := r.updateMetadata(ctx, obj, w, addFinalizer); err != nil {
			return r.metadataNotWritten(w, err)
		}
	}
	if obj.GetRemoteID() == 0 {
		obj.SetRemoteID(obs.snapshot.RemoteID())
	}
	if !obs.UpToDate {
		scratch := obj.DeepCopyObject().(T)
		if _, err := r.Syncer.Update(ctx, scratch, s, want, obs.snapshot.Clone()); err != nil {
			return r.fail(ctx, obj, err)
		}
	}
	st.Observation = &v1alpha1.Observation{Differences: len(writes), Writes: writes[:min(len(writes), maxObservedWrites)], ObservedAt: metav1.Time{Time: now}}
	trackDrift(r.Kind, key, len(writes) > 0)
	st.SyncedHash, st.SyncNow = s.Hash, syncNow
	st.LastSyncTime = &metav1.Time{Time: now}
	st.ObservedGeneration = obj.GetGeneration()
	reason := v1alpha1.ReasonObserved
	message := fmt.Sprintf("observe only: %s %q (id %d) on tenant %s matches the spec; nothing is written while spec.management is Observe",
		r.Kind, s.SystemName, obj.GetRemoteID(), s.Tenant)
	if len(writes) > 0 {
		reason = v1alpha1.ReasonObservedDifferences
		message = fmt.Sprintf("observe only: %s %q (id %d) on tenant %s differs from the spec: a full sync would make %d writes (status.observation); "+
			"none is made while spec.management is Observe", r.Kind, s.SystemName, obj.GetRemoteID(), s.Tenant, len(writes))
	}
	r.transition(obj, v1alpha1.ConditionSynced, reason, message)
	r.Backoff.Reset(key)
	r.quietSince.Delete(key)
	return ctrl.Result{RequeueAfter: r.nextCheck(obj, st, s, now)}, nil
}
