package kit

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// What every syncer's Resolve asks of the objects it depends on: that they exist, are not being
// deleted, are not Invalid, and have synced their current generation.

// Dependency describes one reference of an object to another: the kind it names, the spec field that
// names it, and the condition reasons of each way it may not be ready.
type Dependency struct {
	Kind                                   string
	Field                                  string // "" when the message names no field
	NotFound, Deleting, Invalid, NotSynced string
	// DeletingHint, when set, ends the message of a dependency being deleted (what to do about it).
	DeletingHint string
	// WhileDeleting is the wait for a dependency being deleted; default ownerGoing (it takes the object
	// along, or it is Orphan at once under Retain).
	WhileDeleting func(dep engine.Object, reason, format string, args ...any) error
}

// WaitingFor is a WhileDeleting that makes the object Orphan at once.
func WaitingFor(_ engine.Object, reason, format string, args ...any) error {
	return engine.Waiting(reason, format, args...)
}

// ReadDependency reads the object named name into dep and checks that it exists, is not being deleted
// and is not Invalid (whose message it passes on).
func ReadDependency(ctx context.Context, reader client.Reader, namespace, name string, into engine.Object, d Dependency) error {
	return d.State(into, reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, into), name)
}

// State is ReadDependency's check of a dependency already read (getErr: the read's error).
func (d Dependency) State(into engine.Object, getErr error, name string) error {
	if getErr != nil {
		if apierrors.IsNotFound(getErr) {
			if d.Field == "" {
				return engine.Missing(d.NotFound, "waiting for %s %q to be created", d.Kind, name)
			}
			return engine.Missing(d.NotFound, "waiting for %s %q (%s) to be created", d.Kind, name, d.Field)
		}
		return getErr
	}
	if !into.GetDeletionTimestamp().IsZero() {
		wait, format := d.WhileDeleting, "%s %q is being deleted"
		if wait == nil {
			wait = ownerGoing
		}
		if d.DeletingHint != "" {
			format += "; " + d.DeletingHint
		}
		return wait(into, d.Deleting, format, d.Kind, name)
	}
	if c := meta.FindStatusCondition(into.GetSyncStatus().Conditions, v1alpha1.ConditionInvalid); c != nil && c.Status == metav1.ConditionTrue {
		return engine.Invalid(d.Invalid, "%s %q is invalid: %s", d.Kind, name, c.Message)
	}
	return nil
}

// ReadyDependency checks that a dependency read by ReadDependency can be built upon (Usable), or says
// how long to wait for it (notSyncedYet).
func ReadyDependency(dep engine.Object, d Dependency) error {
	if !Usable(dep, *dep.GetSyncStatus(), dep.GetRemoteID()) {
		return notSyncedYet(dep, *dep.GetSyncStatus(), d.NotSynced, "waiting for %s %q to be Synced", d.Kind, dep.GetName())
	}
	return nil
}

// OnTenant checks that a usable dependency whose ids an object writes by is synced on the object's
// tenant: one whose provider account moved has ids of the old tenant until it syncs on the new one, and
// they are never used there — the object waits (quietly: the dependency is about to sync).
func OnTenant(dep engine.Object, tenant string, d Dependency) error {
	if host := dep.GetSyncStatus().TenantHost; host != tenant {
		return engine.Pending(d.NotSynced, "waiting for %s %q to be Synced on tenant %s: its ids are tenant %s's", d.Kind, dep.GetName(), tenant, host)
	}
	return nil
}

// CheckDependency is ReadDependency, then ReadyDependency.
func CheckDependency(ctx context.Context, reader client.Reader, namespace, name string, into engine.Object, d Dependency) error {
	if err := ReadDependency(ctx, reader, namespace, name, into, d); err != nil {
		return err
	}
	return ReadyDependency(into, d)
}

// Usable reports whether a dependency can be built upon: it holds its remote object and its current
// generation was synced — Synced, or InSync again for a passing reason (a drift check that met a 503) —
// or written but for removals 3scale holds back for the gateway (WaitsOnGatewayOnly); only Orphan,
// Invalid and deletion propagate to dependants.
func Usable(obj client.Object, st v1alpha1.CommonStatus, remoteID int64) bool {
	if remoteID == 0 || !obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	// Before the synced hash: a first sync (an adoption) that wrote everything but a removal 3scale or a
	// plan holds back has no synced hash yet, and its dependants must go on to let the removal end.
	if WaitsOnGatewayOnly(obj, st) {
		return true
	}
	return st.SyncedHash != "" && st.ObservedGeneration == obj.GetGeneration() &&
		(meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionSynced) || meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionInSync))
}

// WaitsOnGatewayOnly reports whether an object's current generation is in 3scale but for metrics or
// methods it keeps for now (Orphan for this generation): while a gateway configuration counts them
// (MetricInUseByGateway), or a plan still limits or prices them (MetricStillLimited). What its
// dependants build upon — ids, mapping rules, what a deploy carries — is written. Those waits are what
// the dependants' own syncs end (a Product's deploy and promotion, a plan dropping its limit), so a
// dependant that waited for them in turn would never let them end.
func WaitsOnGatewayOnly(obj client.Object, st v1alpha1.CommonStatus) bool {
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionOrphan)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration() &&
		(c.Reason == v1alpha1.ReasonMetricInUseByGateway || c.Reason == v1alpha1.ReasonMetricStillLimited)
}

// notSyncedYet is the waiting error for a dependency that exists but cannot be built upon yet: Pending
// (a new object waits quietly) while the dependency is itself being synced, Queued (longer) while it has
// never synced yet, Orphan at once when it is stuck (waiting on something of its own, Invalid) or being
// deleted.
func notSyncedYet(dep client.Object, st v1alpha1.CommonStatus, reason, format string, args ...any) error {
	state := engine.SyncState(&st)
	switch {
	case state == v1alpha1.ConditionOrphan || state == v1alpha1.ConditionInvalid || !dep.GetDeletionTimestamp().IsZero():
		return engine.Waiting(reason, format, args...)
	case st.LastSyncTime == nil: // not through a sync of its own yet: its turn has not come, or was put off (a 429)
		return engine.Queued(reason, format, args...)
	}
	return engine.Pending(reason, format, args...)
}

// ownerGoing is the waiting error for an object whose owner is being deleted: with the Delete policy the
// owner deletes it first (engine: Dependants), so it waits quietly for that (GoingAway); with Retain it
// is Orphan at once, for someone to act upon.
func ownerGoing(owner engine.Object, reason, format string, args ...any) error {
	if owner.GetDeletionPolicy() == v1alpha1.DeletionPolicyDelete {
		return engine.GoingAway(owner.GetDeletionTimestamp().Time, reason, format, args...)
	}
	return engine.Waiting(reason, format, args...)
}

// ConnectVia connects an object that uses the provider account of the object it belongs to (an
// ApplicationPlan its Product's, an Application its DeveloperAccount's): owner, named name, read into
// owner, whose Secret secretOf names. While the object is being deleted it connects with the Secret it
// was synced with (its owner may be gone already).
func ConnectVia(ctx context.Context, accounts *ProviderAccounts, reader client.Reader, obj engine.Object, name string, owner client.Object,
	secretOf func() string, d Dependency) (*engine.Session, error) {
	if st := obj.GetSyncStatus(); !obj.GetDeletionTimestamp().IsZero() && st.ProviderAccountSecret != "" {
		return accounts.Connect(ctx, obj.GetNamespace(), st.ProviderAccountSecret)
	}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, owner); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, engine.Missing(d.NotFound, "waiting for %s %q (%s) to be created", d.Kind, name, d.Field)
		}
		return nil, err
	}
	return accounts.Connect(ctx, obj.GetNamespace(), secretOf())
}

// ScopeOf is the remote id of the object named name in namespace, read into into, as an owner key's
// scope ("0" when it is not there or holds none yet): a claimant's scope read from its references before
// it synced (a plan's Product, an application's account).
func ScopeOf(ctx context.Context, reader client.Reader, namespace, name string, into engine.Object) string {
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, into); err != nil {
		return "0"
	}
	return Itoa64(into.GetRemoteID())
}
