package engine

import (
	"context"
	"reflect"
	"time"
)

// The contract between the engine and the per-kind syncers: what a kind says about talking to 3scale,
// with typed desired and remote states, and nothing of the snapshot cache, which the engine owns.

// Resolved is what a TypedSyncer's Resolve found.
type Resolved[D any] struct {
	// Hash is the keyed hash (Session.HashOf) of everything the remote state derives from.
	Hash string
	// Desired is what Create, Compare and Update work towards (dependencies' ids, documents, passwords).
	Desired D
	// PeriodicDue asks for Observe even though nothing changed: the kind has periodic work (a usage
	// report; see Refresher). PeriodicIn, when positive, is when that work is due next: the engine
	// requeues the object by then.
	PeriodicDue bool
	PeriodicIn  time.Duration
}

// Snapshot is the remote state of one object. A cached snapshot is shared and never changed: Update is
// handed the engine's own copy (Clone).
type Snapshot[S any] interface {
	// RemoteID is the id of the remote object it describes.
	RemoteID() int64
	// Clone returns a copy that can be changed without touching the receiver.
	Clone() S
}

// SnapshotStore caches snapshots by tenant, kind and remote id (cache.Snapshots).
type SnapshotStore interface {
	Lookup(tenant, kind string, id int64) (any, bool)
	Put(tenant, kind string, id int64, snapshot any)
	Forget(tenant, kind string, id int64)
}

// TypedSyncer says how one kind talks to 3scale: the one contract between the engine and a kind, with
// the kind's desired state D and remote snapshot S typed end to end. Every call is idempotent; Delete of
// something already gone is success. Errors are classified by Classify: use Waiting and Invalid for the
// non-retryable ones.
type TypedSyncer[T Object, D any, S Snapshot[S]] interface {
	// Connect finds obj's provider account and returns a session with a client for its tenant. It makes
	// no remote call. On deletion it must work from status alone when the spec's references are gone.
	Connect(ctx context.Context, obj T) (*Session, error)
	// SystemName is the effective system name of obj's remote object, from its spec alone. The engine
	// puts it in the session as it connects, for every call after (Delete too, where Resolve is not
	// called), and the owner-key index finds a waiting object by it (the loser of an ownership
	// conflict, woken when the holder goes).
	SystemName(obj T) string
	// Resolve reads what obj depends on, checks what the schema cannot (what the spec alone tells may be
	// a Validator's), and returns the desired state and its hash. It makes no remote call.
	Resolve(ctx context.Context, obj T, s *Session) (Resolved[D], error)
	// Read reads the remote object from 3scale: by the id obj recorded, or by system name (locate), for
	// want (what Resolve returned). It is called when no cached snapshot serves (none, or a fresh read is
	// due); found is false when there is no remote object.
	Read(ctx context.Context, obj T, s *Session, want D) (snap S, found bool, err error)
	// Compare reports whether the remote object matches obj and want (and what it keeps in Kubernetes
	// matches too: an Application's credentials Secret). It may record in obj's status what the snapshot
	// tells (the ids of its metrics), and refuse what the remote state cannot take (an error, as from
	// Resolve). It makes no remote call.
	Compare(ctx context.Context, obj T, s *Session, want D, snap S) (bool, error)
	// Create creates the remote object, adopting one with its system name rather than making a
	// duplicate, records its id in obj's status as soon as 3scale answers, and returns its state as made;
	// the engine then calls Update unless Compare says it matches. The engine keeps its create-pending
	// marker after a failure only while the create may have made something (see create): an error is
	// taken to mean nothing was made when no id is recorded and it is a ReasonedError, NothingMade, a
	// 4xx, or a request never sent; so a decision returned as a ReasonedError must come before any write
	// that may have made the object.
	Create(ctx context.Context, obj T, s *Session, want D) (Created[S], error)
	// Update makes the remote object match, writing only what differs, and returns its state after (nil
	// when that is not known: nothing is cached). snap is the engine's own copy.
	Update(ctx context.Context, obj T, s *Session, want D, snap S) (S, error)
	// Delete deletes the remote object; 404 is success.
	Delete(ctx context.Context, obj T, s *Session) error
}

// Created is what a TypedSyncer's Create made or found.
type Created[S Snapshot[S]] struct {
	// Snapshot is the remote object's state as made (or as found).
	Snapshot S
	// Existing is true when 3scale refused the create because the object was there already (its system
	// name or credentials taken) and Create took that one: the object's own, made by a create whose answer
	// was lost (Session.CreatePending), or else adopted (the engine announces it).
	Existing bool
}

// Noter is an optional part of a TypedSyncer: Note is what the Synced condition adds about obj and its
// remote state as last read or written (an account 3scale cannot charge, who still uses a deprecated
// product), or "".
type Noter[T Object, S any] interface {
	Note(obj T, snap S) string
}

// StatusRecorder is an optional part of a TypedSyncer: RecordStatus keeps in obj's status what its remote
// state as last read or written tells (where a product's gateways serve it).
type StatusRecorder[T Object, S any] interface {
	RecordStatus(obj T, snap S)
}

// CacheChecker is an optional part of a TypedSyncer: it tells whether a cached snapshot still serves the
// desired state (a plan's snapshot holds the ids of metrics that may have been re-created since).
type CacheChecker[D, S any] interface {
	Serves(want D, snap S) bool
}

// Refresher is an optional part of a TypedSyncer with periodic work (Resolved.PeriodicDue): Refresh does
// it with the snapshot Observe found and returns the snapshot Compare and Update are to see, which is
// not cached (a product's usage report, and the applications its retirement sweep is to suspend).
type Refresher[T Object, S any] interface {
	Refresh(ctx context.Context, obj T, s *Session, snap S) (S, error)
}

// SnapshotReader reads cached snapshots (of other kinds: a plan reads its product's metric ids).
type SnapshotReader interface {
	Lookup(tenant, kind string, id int64) (any, bool)
}

// Peek returns another kind's cached snapshot, if there is one of type S.
func Peek[S any](r SnapshotReader, tenant, kind string, id int64) (S, bool) {
	var zero S
	if r == nil {
		return zero, false
	}
	v, ok := r.Lookup(tenant, kind, id)
	if !ok {
		return zero, false
	}
	snap, ok := v.(S)
	return snap, ok
}

// Amend applies change to a copy of the cached snapshot of kind id on tenant and caches the copy, so
// that the kind's own syncer need not read again what another kind's write changed (a product's
// retirement suspends its applications). A snapshot that is not cached, or not an S, is forgotten.
func Amend[S Snapshot[S]](store SnapshotStore, tenant, kind string, id int64, change func(S)) {
	if v, ok := store.Lookup(tenant, kind, id); ok {
		if snap, ok := v.(S); ok {
			next := snap.Clone() // copy on write: snapshots handed out are never changed in place
			change(next)
			store.Put(tenant, kind, id, next)
			return
		}
	}
	store.Forget(tenant, kind, id)
}

// observation is what the engine learnt of the remote object in one sync.
type observation[S any] struct {
	// Exists is false when the remote object is not there (never created, or deleted behind our back).
	Exists bool
	// UpToDate is true when the remote object matches the spec.
	UpToDate bool
	// snapshot is the remote state read, handed (a copy) to Update.
	snapshot S
	// Report is what the read tells the Synced condition (an adoption, a note).
	Report
}

// connect is the syncer's Connect, with the system name put in the session for every call after (Delete
// too, where Resolve is not called).
func (r *Reconciler[T, D, S]) connect(ctx context.Context, obj T) (*Session, error) {
	s, err := r.Syncer.Connect(ctx, obj)
	if s != nil {
		s.SystemName = r.Syncer.SystemName(obj)
	}
	return s, err
}

// validate is the syncer's Validator, when it has one: what obj's spec alone refuses.
func (r *Reconciler[T, D, S]) validate(obj T) error {
	if v, ok := r.Syncer.(Validator[T]); ok {
		return v.Validate(obj)
	}
	return nil
}

// resolve is the syncer's Resolve: the desired state, returned, and the hash and periodic work, put in
// the session; then, its dependencies resolved (a plan's Product gives its scope), the one-owner check.
func (r *Reconciler[T, D, S]) resolve(ctx context.Context, obj T, s *Session) (D, error) {
	s.SystemName = r.Syncer.SystemName(obj)
	res, err := r.Syncer.Resolve(ctx, obj, s)
	s.PeriodicDue, s.PeriodicIn = res.PeriodicDue, res.PeriodicIn
	if err != nil {
		var zero D
		return zero, err
	}
	if r.SoleOwner != nil {
		if err := r.SoleOwner(ctx, obj, s); err != nil {
			var zero D
			return zero, err
		}
	}
	s.Hash = res.Hash
	return res.Desired, nil
}

// cached is the kind's cached snapshot of id on tenant, if there is one.
func (r *Reconciler[T, D, S]) cached(tenant string, id int64) (S, bool) {
	var zero S
	if r.Snapshots == nil {
		return zero, false
	}
	v, ok := r.Snapshots.Lookup(tenant, r.Kind, id)
	if !ok {
		return zero, false
	}
	snap, ok := v.(S)
	return snap, ok
}

// remember caches snap as the kind's remote state on tenant.
func (r *Reconciler[T, D, S]) remember(tenant string, snap S) {
	if r.Snapshots != nil {
		r.Snapshots.Put(tenant, r.Kind, snap.RemoteID(), snap)
	}
}

// unknown forgets the kind's cached snapshot of id on tenant: a write under way leaves it unknown.
func (r *Reconciler[T, D, S]) unknown(tenant string, id int64) {
	if r.Snapshots != nil && id != 0 {
		r.Snapshots.Forget(tenant, r.Kind, id)
	}
}

// observe reads the remote object: from the cache unless a fresh read is due (or the cached snapshot
// does not serve want: CacheChecker), else with the syncer's Read, whose snapshot it caches.
func (r *Reconciler[T, D, S]) observe(ctx context.Context, obj T, s *Session, want D) (observation[S], error) {
	id := obj.GetRemoteID()
	if id != 0 && !s.ForceRead {
		if snap, ok := r.cached(s.Tenant, id); ok && r.serves(want, snap) {
			return r.observed(ctx, obj, s, want, snap, Report{})
		}
	}
	snap, found, err := r.Syncer.Read(ctx, obj, s, want)
	if err != nil || !found {
		if id != 0 && obj.GetRemoteID() == 0 { // its recorded object is gone from 3scale
			r.unknown(s.Tenant, id)
		}
		return observation[S]{}, err
	}
	r.remember(s.Tenant, snap)
	var report Report
	if id == 0 && !s.CreatePending {
		// Read found by system name an object that no create of this resource made: an adoption.
		report.Adopted = snap.RemoteID()
	}
	return r.observed(ctx, obj, s, want, snap, report)
}

// note records in obj's status what snap tells (StatusRecorder) and returns the Noter's note on it, if
// the syncer has them and snap is known: both follow each read or write of the remote object.
func (r *Reconciler[T, D, S]) note(obj T, snap S) string {
	if isNil(snap) {
		return ""
	}
	if rec, ok := r.Syncer.(StatusRecorder[T, S]); ok {
		rec.RecordStatus(obj, snap)
	}
	if n, ok := r.Syncer.(Noter[T, S]); ok {
		return n.Note(obj, snap)
	}
	return ""
}

// serves tells whether a cached snapshot serves the desired state (CacheChecker).
func (r *Reconciler[T, D, S]) serves(want D, snap S) bool {
	c, ok := r.Syncer.(CacheChecker[D, S])
	return !ok || c.Serves(want, snap)
}

// observed is what observe tells of an existing remote object, after the periodic work if it is due.
func (r *Reconciler[T, D, S]) observed(ctx context.Context, obj T, s *Session, want D, snap S, report Report) (observation[S], error) {
	if p, ok := r.Syncer.(Refresher[T, S]); ok && s.PeriodicDue && !s.DryRun && obj.GetRemoteID() != 0 {
		var err error
		if snap, err = p.Refresh(ctx, obj, s, snap); err != nil {
			return observation[S]{}, err
		}
	}
	upToDate, err := r.Syncer.Compare(ctx, obj, s, want, snap)
	if err != nil {
		return observation[S]{}, err
	}
	report.Note = r.note(obj, snap)
	return observation[S]{Exists: true, UpToDate: upToDate, snapshot: snap, Report: report}, nil
}

// createRemote is the syncer's Create, then its Update unless Compare says the object made matches.
func (r *Reconciler[T, D, S]) createRemote(ctx context.Context, obj T, s *Session, want D) (Report, error) {
	made, err := r.Syncer.Create(ctx, obj, s, want)
	if err != nil {
		return Report{}, err
	}
	snap := made.Snapshot
	report := Report{Adopted: made.AdoptedBy(s)}
	upToDate, err := r.Syncer.Compare(ctx, obj, s, want, snap)
	if err != nil {
		return Report{}, err
	}
	if upToDate {
		r.remember(s.Tenant, snap)
		report.Note = r.note(obj, snap)
		return report, nil
	}
	updated, err := r.update(ctx, obj, s, want, snap.Clone())
	updated.Adopted = report.Adopted
	return updated, err
}

// AdoptedBy is the id of the object a create found already there (Existing) and that no create of this
// resource made (no create was pending on the session): an adoption the engine announces; 0 otherwise.
func (c Created[S]) AdoptedBy(s *Session) int64 {
	if !c.Existing || s.CreatePending || isNil(c.Snapshot) {
		return 0
	}
	return c.Snapshot.RemoteID()
}

// update is the syncer's Update of snap (the engine's own copy), whose result it caches.
func (r *Reconciler[T, D, S]) update(ctx context.Context, obj T, s *Session, want D, snap S) (Report, error) {
	r.unknown(s.Tenant, snap.RemoteID()) // a failed write leaves the remote state unknown: read it next time
	next, err := r.Syncer.Update(ctx, obj, s, want, snap)
	if err != nil || isNil(next) {
		return Report{}, err
	}
	r.remember(s.Tenant, next)
	return Report{Note: r.note(obj, next)}, nil
}

// deleteRemote is the syncer's Delete; the kind's snapshots of what obj held are forgotten.
func (r *Reconciler[T, D, S]) deleteRemote(ctx context.Context, obj T, s *Session) error {
	before := obj.GetRemoteID()
	if err := r.Syncer.Delete(ctx, obj, s); err != nil {
		return err
	}
	r.unknown(s.Tenant, before)
	r.unknown(s.Tenant, obj.GetRemoteID())
	return nil
}

// isNil tells a nil snapshot (a nil pointer in S).
func isNil(v any) bool {
	r := reflect.ValueOf(v)
	return !r.IsValid() || (r.Kind() == reflect.Pointer && r.IsNil())
}

// Preview is what a sync of one object would find, for diff: the session it would use, whether the
// remote object exists and matches, and what it would adopt.
type Preview struct {
	Session  *Session
	Exists   bool
	UpToDate bool
	Adopted  int64
	// Details say what would change, for a person to read (a template's unified diff), from the
	// syncer's Explainer.
	Details []string
}

// Explainer is an optional part of a TypedSyncer: Explain tells a person what a sync of obj would change
// in its remote state snap (diff prints it), in lines or blocks of text; it makes no remote call.
type Explainer[T Object, D, S any] interface {
	Explain(obj T, want D, snap S) []string
}

// Preview connects and resolves obj, reads its remote object from 3scale (never the cache) and, when it
// exists but differs, runs the syncer's Update: with a session whose client records writes instead of
// sending them (diff's), that lists what a sync would write. It changes nothing in Kubernetes.
func (r *Reconciler[T, D, S]) Preview(ctx context.Context, obj T) (Preview, error) {
	if err := r.validate(obj); err != nil {
		return Preview{}, err
	}
	s, err := r.connect(ctx, obj)
	if err != nil {
		return Preview{}, err
	}
	want, err := r.resolve(ctx, obj, s)
	if err != nil {
		return Preview{Session: s}, err
	}
	s.ForceRead = true
	obs, err := r.observe(ctx, obj, s, want)
	p := Preview{Session: s, Exists: obs.Exists, UpToDate: obs.UpToDate, Adopted: obs.Adopted}
	if err == nil && obs.Exists && !obs.UpToDate {
		if e, ok := r.Syncer.(Explainer[T, D, S]); ok {
			p.Details = e.Explain(obj, want, obs.snapshot)
		}
		_, err = r.update(ctx, obj, s, want, obs.snapshot.Clone())
	}
	return p, err
}
