package engine

// What the engine hands a syncer (the session) and what it tells of a sync (the report); the syncer's
// contract itself is TypedSyncer (typed.go).

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// SystemName is the effective system name of the remote object, set as the session is made
	// (TypedSyncer.SystemName), so that every call after has it, Delete included.
	SystemName string
	// Hash covers everything the remote state derives from (spec, tenant, dependencies' remote ids).
	// When it equals status.syncedHash the object is in sync without asking 3scale.
	Hash string
	// ForceRead tells Observe to read 3scale rather than trust cached snapshots (drift check, sync-now).
	ForceRead bool
	// AccountVersion identifies the provider-account Secret's content (a keyed hash of its data), never
	// its values: when it changes, the credentials are checked once per tenant (CredentialsChecker).
	AccountVersion string
	// TokenUser is the username of the tenant's user the token belongs to, as the provider-account
	// Secret says (key tokenUser; the Secrets the Tenant kind writes have it), "" when it does not say:
	// porta's API cannot tell whose a token is, and apimsync never suspends, demotes or deletes that user.
	TokenUser string
	// HashKey keys Hash, so that a hash in status reveals nothing of the values it covers (policy
	// configurations, issuer URLs with client secrets) to whoever can read the resource. Connect derives it
	// from the provider account's token.
	HashKey []byte
	// CreatePending is true when an earlier reconcile sent a create for this object on this tenant and
	// may have lost its answer: finding the object by system name then is finding our own.
	CreatePending bool
	// DryRun: the session's client records its writes instead of sending them (an object only observed).
	// A syncer then writes nothing to the cluster, emits no Event and touches no state shared with other
	// objects (caches of other kinds' snapshots, the memory of passwords sent): what it does is a look.
	DryRun bool
	// PeriodicDue, set by Resolve, asks for Observe even though nothing changed: the syncer has periodic
	// work (a usage report). PeriodicIn, when positive, is when that work is due next: the engine
	// requeues the object by then.
	PeriodicDue bool
	PeriodicIn  time.Duration
}

// HashOf returns the keyed hash of values (see HashKey): the fingerprint of everything a remote object
// derives from.
func (s *Session) HashOf(values ...any) string { return keyedHash(s.HashKey, values...) }

// Report is what a sync produced that the engine tells in the Synced condition, returned by Observe,
// Create and Update.
type Report struct {
	// Adopted is the id of an existing remote object the syncer took over (found by system name, not
	// created by this resource); the engine announces it in an Event and the Synced condition.
	Adopted int64
	// Note is added to the Synced condition's message.
	Note string
}

// after is the report of a sync that read r and then, when wrote is true, wrote with report w: an
// adoption is told by whichever found it; the note is the one of the latest state.
func (r Report) after(w Report, wrote bool) Report {
	if !wrote {
		return r
	}
	if w.Adopted == 0 {
		w.Adopted = r.Adopted
	}
	return w
}

// Validator is an optional part of a TypedSyncer: it checks what the object's spec alone can tell (what the
// schema cannot), reading nothing, and returns an Invalid error when the spec cannot work. The engine
// asks it before anything else, so such a spec is Invalid at once, not after a wait for a dependency or
// the provider account that would end in the same refusal (a plan with two limits on one metric and
// period, while its Product is still being synced).
type Validator[T Object] interface {
	Validate(obj T) error
}

// CredentialsChecker verifies a tenant's credentials with one cheap authenticated call, shared by every
// object of the tenant.
type CredentialsChecker interface {
	Check(ctx context.Context, s *Session) error
}
