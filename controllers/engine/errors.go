package engine

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	tsclient "github.com/apimsync/apimsync/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// Class says what happens after an error: the three error classes of the engine.
type Class int

const (
	// ClassRetryable errors (5xx, 429, timeouts, conflicts on write) leave the object InSync and are retried by
	// the workqueue's rate-limited backoff, or after Retry-After.
	ClassRetryable Class = iota
	// ClassWaiting errors mean a dependency is missing or not ready: the object is Orphan and is retried with
	// its own exponential backoff, and woken at once by a watch when the dependency changes.
	ClassWaiting
	// ClassInvalid errors are terminal: the spec (or the Secret) cannot work; the object is Invalid and is not
	// retried until something it depends on changes.
	ClassInvalid
)

// ReasonedError is an error with a condition reason and a message for a person.
type ReasonedError struct {
	class   Class
	Reason  string
	Message string
	// RetryAfter, when set on a waiting error, caps the backoff delay (e.g. a backend still in use).
	RetryAfter time.Duration
	// quiet marks a waiting error that is expected to pass by itself: an object waits without a status
	// write or an event of its own for Reconciler.QuietWait (see Pending and GoingAway).
	quiet quietness
	// since is when a GoingAway wait began (the deletion it waits for).
	since time.Time
	// recheck, when set on a quiet wait, is when the object is looked at again even within QuietWait
	// (an owner's DependantGrace ends).
	recheck time.Duration
	// remote marks an Invalid decision on what 3scale holds (see Refused).
	remote bool
}

// quietness says which quiet wait a waiting error is.
type quietness int

const (
	_ quietness = iota // not quiet
	// quietNew: a new object, or a Synced one, waits for a dependency that is itself being synced.
	quietNew
	// quietGoing: the wait ends with deletions already under way.
	quietGoing
	// quietQueued: quietNew, for a dependency that has not been through a sync of its own yet.
	quietQueued
	// quietMissing: a new object, or a Synced one whose dependencies never resolved here, waits for a
	// dependency that does not exist yet.
	quietMissing
)

// queuedWaitFactor is how many QuietWaits a new object waits quietly for a dependency that has not been
// through a sync of its own yet (Queued).
const queuedWaitFactor = 10

// Error implements error.
func (e *ReasonedError) Error() string { return e.Reason + ": " + e.Message }

// Waiting returns an error that makes the object Orphan with the given reason and message.
func Waiting(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Pending returns a waiting error for a dependency that exists and is itself being synced (not stuck
// waiting on something of its own). A new object waiting on it is not marked Orphan during its first
// Reconciler.QuietWait: in a burst (a GitOps sync applying products and their plans at once) the
// dependency is usually there a moment later, and the Orphan condition and event would be one API server
// write and one event per object, for nothing. Nor is a Synced object whose dependency is synced again
// (an edit of a Product, for its plans): it stays Synced, as it is, during QuietWait from when this
// reconciler first met the wait, and is looked at again when the dependency is done; if what it derives
// from did not change, that costs no remote call. Past QuietWait, it is Orphan like any waiting object.
// A dependency being deleted that a mass deletion will take this object with is waited for the same way
// (a Product's Backend).
func Pending(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: reason, Message: fmt.Sprintf(format, args...), quiet: quietNew}
}

// Queued is Pending for a dependency that has never synced yet (its turn has not come, it waits quietly
// itself, or a passing failure such as a 429 put it off). In a large burst (thousands of objects
// applied at once, each tenant serving as fast as its pacer allows) that turn may come later than
// QuietWait after the object was created, and the Orphan written then would be two more status writes
// and two more events per object, for a wait that was only a queue. A new object waiting on it stays
// quiet up to queuedWaitFactor × QuietWait from its creation (5 minutes by default): bounded, so that a dependency no
// manager ever syncs (another shard's label, a manager down) still shows. The dependency's own condition
// ends the extension: Synced wakes the object; Orphan makes it Orphan at once, Invalid Invalid.
func Queued(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: reason, Message: fmt.Sprintf(format, args...), quiet: quietQueued}
}

// Missing returns a waiting error for a dependency that does not exist (yet). A new object waiting on it
// is not marked Orphan during its first Reconciler.QuietWait: a GitOps sync applies an application's
// objects in an order of its own (Argo CD applies the custom resources of one sync wave sorted by name),
// so a plan often comes a moment before its Product, and the dependency's watch wakes it. A Synced
// object whose dependencies this reconciler has never seen resolve waits the same way: a shard it was
// just relabelled to sees it before its dependencies, relabelled a moment later, and an Orphan then would
// be a status write, an event and a resync of remote state for nothing; so does any Synced object of a
// shard (Reconciler.Sharded), whose dependency may have been relabelled away a moment before the object.
// Past QuietWait, and for a Synced object of an unsharded reconciler whose dependencies resolved here
// before (its dependency went away), it is Orphan at once, as with Waiting.
func Missing(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: reason, Message: fmt.Sprintf(format, args...), quiet: quietMissing}
}

// GoingAway returns a waiting error that deletions already under way since the given time will end: an
// object whose owner is being deleted and deletes it too (a plan of a product deleted with the Delete
// policy); the engine's own waits of an object being deleted, for its dependants or its users, are too.
// Within Reconciler.QuietWait of since the object waits without a status write or an event (in a mass
// deletion they would be one each per object, for a state that lasts a moment); past it, it is Orphan
// like any waiting object, so that a deletion that stalls shows.
func GoingAway(since time.Time, reason, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: reason, Message: fmt.Sprintf(format, args...), quiet: quietGoing, since: since}
}

// ownerMayFollow returns a quiet wait, for an object being deleted since the given time, of an owner
// whose deletion in 3scale would take its remote object along and which may be deleted in a moment too
// (a prune deletes dependants and owners in any order): the object is looked at again when grace
// (the object's deletion grace, Reconciler.DependantGrace) ends, or when the owner changes, and makes no call meanwhile.
func ownerMayFollow(since time.Time, grace time.Duration, format string, args ...any) error {
	return &ReasonedError{class: ClassWaiting, Reason: v1alpha1.ReasonWaitingForOwner, Message: fmt.Sprintf(format, args...),
		RetryAfter: grace, quiet: quietGoing, since: since, recheck: grace}
}

// Invalid returns an error that makes the object Invalid with the given reason and message.
func Invalid(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassInvalid, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Refused is Invalid for a decision taken on what 3scale holds rather than on the spec, such as an
// adoption the spec refuses: like a refusal 3scale answers, the same attempt is not made again before
// Reconciler.InvalidRetryPeriod (whatever wakes the object), then is, in case 3scale changed.
func Refused(reason, format string, args ...any) error {
	return &ReasonedError{class: ClassInvalid, Reason: reason, Message: fmt.Sprintf(format, args...), remote: true}
}

// Classify maps any error to its class, a condition reason and a message. Client errors are classified
// by their HTTP meaning: 422 is invalid, 401/403 invalid until the Secret changes, 429/5xx retryable.
func Classify(err error) (Class, string, string) {
	var re *ReasonedError
	if errors.As(err, &re) {
		return re.class, re.Reason, re.Message
	}
	switch {
	case tsclient.IsAddressRefused(err):
		return ClassInvalid, v1alpha1.ReasonProviderAccountInvalid, "the provider account's admin URL cannot be used: " + err.Error()
	case isDeletionRefusal(err):
		return ClassWaiting, v1alpha1.ReasonDeletionBlocked, "3scale refuses to delete it for now (" + err.Error() + "); retrying with backoff"
	case tsclient.IsInvalid(err):
		return ClassInvalid, v1alpha1.ReasonRemoteRejected, "3scale rejected the spec: " + err.Error()
	case tsclient.IsUnauthorized(err), tsclient.IsForbidden(err):
		return ClassInvalid, v1alpha1.ReasonUnauthorized, "the provider account's token was refused by 3scale (" + err.Error() + "); fix the token in the provider-account Secret"
	case tsclient.IsRateLimited(err):
		return ClassRetryable, v1alpha1.ReasonRateLimited, "3scale rate-limited the tenant; retrying: " + err.Error()
	default:
		return ClassRetryable, v1alpha1.ReasonRemoteUnavailable, "sync failed, retrying: " + err.Error()
	}
}

// retryAfter returns the delay a rate-limited or waiting error asks for, if any.
func retryAfter(err error) (time.Duration, bool) {
	var re *ReasonedError
	if errors.As(err, &re) && re.RetryAfter > 0 {
		return re.RetryAfter, true
	}
	return tsclient.RetryAfter(err)
}

// isDeletionRefusal reports 3scale's refusals of a DELETE that can pass — the object is still in use, a
// plan still has applications, an account's default or last product (porta answers these with 403, 409
// or 422 and errors, or 403 without a body): waiting, retried with backoff, never Invalid, so that no
// deletion hangs silently.
func isDeletionRefusal(err error) bool {
	var e *tsclient.APIError
	if !errors.As(err, &e) || e.Method != http.MethodDelete {
		return false
	}
	bodyless403 := e.StatusCode == http.StatusForbidden && e.Message == "" && len(e.Errors) == 0
	return tsclient.IsInUse(err) || e.StatusCode == http.StatusUnprocessableEntity || bodyless403
}

// fromRemote reports whether err is (or wraps) an answer of 3scale or a decision on what it holds
// (Refused), as opposed to a check of the spec.
// FromRemote reports whether err comes from 3scale: an answer of its API, or a decision taken from
// what the tenant holds now (an adoption refused).
func FromRemote(err error) bool { return fromRemote(err) }

func fromRemote(err error) bool {
	var e *tsclient.APIError
	var re *ReasonedError
	return errors.As(err, &e) || errors.As(err, &re) && re.remote
}

// NothingMade marks the error of a create that surely made nothing, though what followed failed (3scale
// said the system name was taken, and the lookup of what holds it failed or refused an adoption): the
// engine settles the create-pending marker.
func NothingMade(err error) error { return nothingMade{err} }

type nothingMade struct{ error }

func (e nothingMade) Unwrap() error { return e.error }

// madeNothing reports whether a failed create surely made nothing in 3scale: 3scale answered 4xx (porta
// validates before it saves, and answers 429 before doing anything; the client sends a write again only
// after a 429, so no earlier try of it made anything either), the request never left (its pacing wait
// ended, or the admin URL policy refused the connection), the syncer said so (NothingMade), or it
// decided against it before any write (a ReasonedError: the syncers record the id as soon as their
// create is answered, so a decision after that is not asked about). A 5xx, a timeout or a lost answer
// may have made it.
func madeNothing(err error) bool {
	var nm nothingMade
	var re *ReasonedError
	var e *tsclient.APIError
	return errors.As(err, &nm) || errors.As(err, &re) || tsclient.NotSent(err) || errors.As(err, &e) && e.StatusCode >= 400 && e.StatusCode < 500
}
