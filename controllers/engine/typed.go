package engine

import (
	"context"
	"reflect"
	"time"
)

// The typed syncer contract: what a kind says about talking to 3scale, with typed desired and remote
// states, and nothing of the snapshot cache, which the engine owns. Typed adapts a TypedSyncer to the
// engine's Syncer.

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

// TypedSyncer says how one kind talks to 3scale. Every call is idempotent; Delete of something already
// gone is success. Errors are classified by Classify, as for Syncer.
type TypedSyncer[T Object, D any, S Snapshot[S]] interface {
	// Connect finds obj's provider account and returns a session with a client for its tenant (Syncer).
	Connect(ctx context.Context, obj T) (*Session, error)
	// SystemName is the effective system name of obj's remote object, from its spec alone. The adapter
	// puts it in the session as it connects, for every call after (Delete too, where Resolve is not
	// called), and the owner-key index finds a waiting object by it (the loser of an ownership
	// conflict, woken when the holder goes).
	SystemName(obj T) string
	// Resolve reads what obj depends on and checks what the schema cannot. It makes no remote call.
	Resolve(ctx context.Context, obj T, s *Session) (Resolved[D], error)
	// Read reads the remote object from 3scale: by the id obj recorded, or by system name (locate). It is
	// called when no cached snapshot serves (none, or a fresh read is due); found is false when there is
	// no remote object.
	Read(ctx context.Context, obj T, s *Session) (snap S, found bool, err error)
	// Compare reports whether the remote object matches obj and want (and what it keeps in Kubernetes
	// matches too: an Application's credentials Secret). It may record in obj's status what the snapshot
	// tells (the ids of its metrics), and refuse what the remote state cannot take (an error, as from
	// Resolve). It makes no remote call.
	Compare(ctx context.Context, obj T, s *Session, want D, snap S) (bool, error)
	// Create creates the remote object, adopting one with its system name rather than making a
	// duplicate, records its id in obj's status as soon as 3scale answers (see Syncer.Create), and returns
	// its state as made; the engine then calls Update unless Compare says it matches.
	Create(ctx context.Context, obj T, s *Session, want D) (Created[S], error)
	// Update makes the remote object match, writing only what differs, and returns its state after (nil
	// when that is not known: nothing is cached). snap is the engine's own copy.
	Update(ctx context.Context, obj T, s *Session, want D, snap S) (S, error)
	// Delete deletes the remote object; 404 is success.
	Delete(ctx context.Context, obj T, s *Session) error
}

// Created is what a TypedSyncer's Create made or found.
type Created[S any] struct {
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

// Typed adapts a TypedSyncer to the engine's Syncer: it keeps the kind's snapshots in store under kind,
// reads them unless a fresh read is due, stores what Read, Create and Update return, and forgets them
// before a write (a failed one leaves the remote state unknown) and after a deletion. The syncer's
// Validator and OwnedBy, when it has them, are kept.
func Typed[T Object, D any, S Snapshot[S]](kind string, store SnapshotStore, ts TypedSyncer[T, D, S]) Syncer[T] {
	return &typed[T, D, S]{kind: kind, store: store, ts: ts}
}

type typed[T Object, D any, S Snapshot[S]] struct {
	kind  string
	store SnapshotStore
	ts    TypedSyncer[T, D, S]
}

// Validate implements Validator with the syncer's, if it has one.
func (a *typed[T, D, S]) Validate(obj T) error {
	if v, ok := a.ts.(Validator[T]); ok {
		return v.Validate(obj)
	}
	return nil
}

// Owners implements OwnedBy with the syncer's, if it has one.
func (a *typed[T, D, S]) Owners(ctx context.Context, obj T, s *Session) []Owner {
	if o, ok := a.ts.(OwnedBy[T]); ok {
		return o.Owners(ctx, obj, s)
	}
	return nil
}

func (a *typed[T, D, S]) Connect(ctx context.Context, obj T) (*Session, error) {
	s, err := a.ts.Connect(ctx, obj)
	if s != nil {
		s.SystemName = a.ts.SystemName(obj)
	}
	return s, err
}

func (a *typed[T, D, S]) Resolve(ctx context.Context, obj T, s *Session) error {
	s.SystemName = a.ts.SystemName(obj)
	r, err := a.ts.Resolve(ctx, obj, s)
	s.PeriodicDue, s.PeriodicIn = r.PeriodicDue, r.PeriodicIn
	if err != nil {
		return err
	}
	s.Hash, s.Desired = r.Hash, r.Desired
	return nil
}

// DesiredOf is the desired state Resolve returned, which the session carries into Read (the zero value
// on deletion, where Resolve is not called).
func DesiredOf[D any](s *Session) D {
	d, _ := s.Desired.(D)
	return d
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

func (a *typed[T, D, S]) Observe(ctx context.Context, obj T, s *Session) (Observation, error) {
	id := obj.GetRemoteID()
	if id != 0 && !s.ForceRead {
		if v, ok := a.store.Lookup(s.Tenant, a.kind, id); ok {
			if snap, ok := v.(S); ok && a.serves(s, snap) {
				return a.observed(ctx, obj, s, snap, Report{})
			}
		}
	}
	snap, found, err := a.ts.Read(ctx, obj, s)
	if err != nil || !found {
		if id != 0 && obj.GetRemoteID() == 0 { // its recorded object is gone from 3scale
			a.store.Forget(s.Tenant, a.kind, id)
		}
		return Observation{}, err
	}
	a.store.Put(s.Tenant, a.kind, snap.RemoteID(), snap)
	var report Report
	if id == 0 && !s.CreatePending {
		// Read found by system name an object that no create of this resource made: an adoption.
		report.Adopted = snap.RemoteID()
	}
	return a.observed(ctx, obj, s, snap, report)
}

// note is the Noter's note on snap, if the syncer has one and snap is known.
func (a *typed[T, D, S]) note(obj T, snap S) string {
	if n, ok := a.ts.(Noter[T, S]); ok && !isNil(snap) {
		return n.Note(obj, snap)
	}
	return ""
}

// serves tells whether a cached snapshot serves the session's desired state (CacheChecker).
func (a *typed[T, D, S]) serves(s *Session, snap S) bool {
	c, ok := a.ts.(CacheChecker[D, S])
	return !ok || c.Serves(DesiredOf[D](s), snap)
}

// observed is what Observe tells of an existing remote object, after the periodic work if it is due.
func (a *typed[T, D, S]) observed(ctx context.Context, obj T, s *Session, snap S, report Report) (Observation, error) {
	if r, ok := a.ts.(Refresher[T, S]); ok && s.PeriodicDue && obj.GetRemoteID() != 0 {
		var err error
		if snap, err = r.Refresh(ctx, obj, s, snap); err != nil {
			return Observation{}, err
		}
	}
	upToDate, err := a.ts.Compare(ctx, obj, s, DesiredOf[D](s), snap)
	if err != nil {
		return Observation{}, err
	}
	report.Note = a.note(obj, snap)
	return Observation{Exists: true, UpToDate: upToDate, Snapshot: snap, Report: report}, nil
}

func (a *typed[T, D, S]) Create(ctx context.Context, obj T, s *Session) (Report, error) {
	want := DesiredOf[D](s)
	made, err := a.ts.Create(ctx, obj, s, want)
	if err != nil {
		return Report{}, err
	}
	snap := made.Snapshot
	var report Report
	if made.Existing && !s.CreatePending {
		report.Adopted = snap.RemoteID()
	}
	upToDate, err := a.ts.Compare(ctx, obj, s, want, snap)
	if err != nil {
		return Report{}, err
	}
	if upToDate {
		a.store.Put(s.Tenant, a.kind, snap.RemoteID(), snap)
		report.Note = a.note(obj, snap)
		return report, nil
	}
	updated, err := a.update(ctx, obj, s, want, snap.Clone())
	updated.Adopted = report.Adopted
	return updated, err
}

func (a *typed[T, D, S]) Update(ctx context.Context, obj T, s *Session, o Observation) (Report, error) {
	snap, _ := o.Snapshot.(S) // what Observe returned
	return a.update(ctx, obj, s, DesiredOf[D](s), snap.Clone())
}

func (a *typed[T, D, S]) update(ctx context.Context, obj T, s *Session, want D, snap S) (Report, error) {
	id := snap.RemoteID()
	a.store.Forget(s.Tenant, a.kind, id) // a failed write leaves the remote state unknown: read it next time
	next, err := a.ts.Update(ctx, obj, s, want, snap)
	if err != nil || isNil(next) {
		return Report{}, err
	}
	a.store.Put(s.Tenant, a.kind, next.RemoteID(), next)
	return Report{Note: a.note(obj, next)}, nil
}

func (a *typed[T, D, S]) Delete(ctx context.Context, obj T, s *Session) error {
	before := obj.GetRemoteID()
	if err := a.ts.Delete(ctx, obj, s); err != nil {
		return err
	}
	for _, id := range []int64{before, obj.GetRemoteID()} {
		if id != 0 {
			a.store.Forget(s.Tenant, a.kind, id)
		}
	}
	return nil
}

// isNil tells a nil snapshot (a nil pointer in S).
func isNil(v any) bool {
	r := reflect.ValueOf(v)
	return !r.IsValid() || (r.Kind() == reflect.Pointer && r.IsNil())
}
