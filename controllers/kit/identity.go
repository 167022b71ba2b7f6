package kit

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// RemoteFinder says how to read one kind of remote object: by id, and all of them (to find one by system
// name). Get answers a tsclient NotFound error when the object is gone.
type RemoteFinder[R any] struct {
	Kind string
	Get  func(id int64) (*R, error)
	List func() ([]R, error)
	// Shared, when set, lists through BurstLists: used to look for an object this resource never
	// created, never after its own create whose answer may be lost, nor after a collision.
	Shared func() ([]R, error)
	IDName func(R) (int64, string)
	// Forget, when set, drops what is cached of an object whose recorded id is gone from 3scale.
	Forget func(id int64)
	// UniqueField is the field 3scale answers "has already been taken" on when a create collides with an
	// existing object (default system_name).
	UniqueField string
}

// TenantFinder reads one kind of object of the whole tenant, known by system name there (backends,
// products). With lists, the search for an object this resource never created lists once per burst
// (BurstLists), shared by every resource looking.
func TenantFinder[R any](kind string, sess *engine.Session, lists *BurstLists, get func(int64) (*R, error), list func() ([]R, error),
	idName func(R) (int64, string)) RemoteFinder[R] {
	f := RemoteFinder[R]{Kind: kind, Get: get, List: list, IDName: idName}
	if lists != nil {
		f.Shared = func() ([]R, error) { return SharedList(lists, sess.Tenant+" "+kind+"s", list) }
	}
	return f
}

// Locate returns the remote object obj may touch, or nil when there is none: the one whose id obj
// recorded; else one with obj's system name that obj created itself (its create answer was lost: the
// create-pending marker) or adopts on purpose (the engine announces it; refused by spec.adoption:
// Never). An object whose recorded id is gone from 3scale was deleted behind our back: nil,
// so that it is created again (drift repair). It never finds anything for an object being deleted that
// holds no id and no create-pending marker.
func Locate[R any](obj engine.Object, sess *engine.Session, f RemoteFinder[R]) (*R, error) {
	return locateWith(obj, sess, f, false)
}

// locateWith is locate; fresh asks for a list read now rather than a shared one.
func locateWith[R any](obj engine.Object, sess *engine.Session, f RemoteFinder[R], fresh bool) (*R, error) {
	if id := obj.GetRemoteID(); id != 0 {
		remote, err := f.Get(id)
		if err == nil {
			return remote, nil
		}
		if !tsclient.IsNotFound(err) {
			return nil, fmt.Errorf("cannot read %s %d: %w", f.Kind, id, err)
		}
		if f.Forget != nil {
			f.Forget(id)
		}
		obj.SetRemoteID(0)
		return nil, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() && !sess.CreatePending {
		return nil, nil
	}
	list := f.List
	if f.Shared != nil && !fresh && !sess.CreatePending {
		list = f.Shared
	}
	all, err := list()
	if err != nil {
		return nil, fmt.Errorf("cannot list %ss: %w", f.Kind, err)
	}
	for i := range all {
		id, name := f.IDName(all[i])
		if name != sess.SystemName {
			continue
		}
		if !sess.CreatePending && !obj.ObserveOnly() { // observing is what its user asked for: no adoption
			if obj.GetAdoptionPolicy() == v1alpha1.AdoptionNever {
				return nil, engine.Refused(v1alpha1.ReasonAdoptionRefused,
					"a %s with system name %q already exists in 3scale (id %d) and this resource did not create it; spec.adoption is Never: "+
						"give this resource another systemName, delete that %s in 3scale, or set spec.adoption to IfExists to take it over",
					f.Kind, name, id, f.Kind)
			}
		}
		obj.SetRemoteID(id)
		return &all[i], nil
	}
	return nil, nil
}

// CreateOrAdopt creates a remote object; when 3scale answers that its system name is taken — because
// the answer to our earlier create was lost, or someone made it meanwhile — it locates the existing one
// (which announces or refuses an adoption) instead of duplicating it. fresh is true when the object was
// Made by this very call: it then holds only what 3scale puts in a new object, so its children need not
// be read.
func CreateOrAdopt[R any](systemName string, create func() (*R, error), obj engine.Object, sess *engine.Session, f RemoteFinder[R]) (created *R, fresh bool, err error) {
	created, err = create()
	fresh = err == nil
	field := f.UniqueField
	if field == "" {
		field = "system_name"
	}
	if taken := err; tsclient.HasAlreadyBeenTaken(taken, field) {
		created, err = locateWith(obj, sess, f, true)
		if err == nil && created == nil {
			// A resource deleted meanwhile locates nothing by name: what is there is not its own.
			err = fmt.Errorf("3scale says system name %q is taken but lists no such %s", systemName, f.Kind)
		}
		if err != nil {
			// The refused create made nothing, whatever failed after it: the engine drops its
			// create-pending marker.
			err = engine.NothingMade(err)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot create %s %q: %w", f.Kind, systemName, err)
	}
	return created, fresh, nil
}

// Made is a TypedSyncer's Create result for a remote object created (fresh) or found already there by
// CreateOrAdopt.
func Made[S engine.Snapshot[S]](snap S, fresh bool, err error) (engine.Created[S], error) {
	return engine.Created[S]{Snapshot: snap, Existing: !fresh}, err
}

// Claims decides, inside one manager, which of several resources that resolve to the same remote object
// (tenant, kind, scope, system name) owns it, atomically: two resources created in the same instant never
// both create or adopt it. A claim is held by a resource's UID until that resource is gone or claims
// something else. Safe for concurrent use.
type Claims struct {
	// Reader reads the claimants (the manager's cache) to release the claims of resources that are gone.
	Reader client.Reader

	mu     sync.Mutex
	byKey  map[string]claim
	byUIDs map[types.UID]string
}

type claim struct {
	uid  types.UID
	name types.NamespacedName
	kind client.Object
}

// claim makes obj the claimant of key unless another live resource holds it; it returns the holder then.
func (c *Claims) claim(ctx context.Context, obj engine.Object, key string) (types.NamespacedName, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey, c.byUIDs = map[string]claim{}, map[types.UID]string{}
	}
	if held, ok := c.byKey[key]; ok && held.uid != obj.GetUID() && c.alive(ctx, held) {
		return held.name, false
	}
	if old, ok := c.byUIDs[obj.GetUID()]; ok && old != key {
		delete(c.byKey, old)
	}
	// The claimant's kind, as an empty object of its type shared by all claims of the type: a copy of the
	// claimant itself (its spec and status) was kept here once, a few KiB per synced object for nothing.
	c.byKey[key] = claim{uid: obj.GetUID(), name: client.ObjectKeyFromObject(obj), kind: emptyOf(obj)}
	c.byUIDs[obj.GetUID()] = key
	return types.NamespacedName{}, true
}

// emptyOfType holds one empty object per Go type of claimant (reflect.Type → client.Object), never changed.
var emptyOfType sync.Map

// emptyOf returns the shared empty object of obj's type (a pointer to a struct, as every kind is).
func emptyOf(obj client.Object) client.Object {
	t := reflect.TypeOf(obj)
	if e, ok := emptyOfType.Load(t); ok {
		return e.(client.Object)
	}
	e, _ := emptyOfType.LoadOrStore(t, reflect.New(t.Elem()).Interface().(client.Object))
	return e.(client.Object)
}

// alive reports whether the holder of a claim still exists and is not being deleted.
func (c *Claims) alive(ctx context.Context, held claim) bool {
	obj, ok := held.kind.DeepCopyObject().(client.Object)
	if !ok || c.Reader == nil {
		return true
	}
	if err := c.Reader.Get(ctx, held.name, obj); err != nil {
		return !apierrors.IsNotFound(err)
	}
	return obj.GetUID() == held.uid && obj.GetDeletionTimestamp().IsZero()
}

// holdsBefore reports whether a owns the remote object before b by what their status records: a holds
// its id and b does not, or both do (which only an older version could leave) and a is older.
func holdsBefore(a, b engine.Object) bool {
	holdsA, holdsB := a.GetRemoteID() != 0, b.GetRemoteID() != 0
	return holdsA && (!holdsB || OlderThan(a, b))
}

// CheckSoleOwner makes obj Invalid when another resource of the same kind, in any namespace, owns the
// remote object obj resolves to: one that holds its remote id (status) while obj does not, or else the
// one that claimed it first in this manager. While a resource being deleted still holds it (a GitOps
// rename or namespace move: the new one applied, the old one pruned), obj holding none waits (Orphan)
// for that deletion to finish: the old one's deletion may delete the remote object. The watch
// sameRemoteObject wakes obj when the other one changes or goes. list is an empty list of the kind; key is
// obj's owner key; remedy what the refusal tells the user to do ("": change its systemName or remove
// one; a kind with no system name to change says something else). The engine calls it for every kind
// (engine.Reconciler.SoleOwner, built by the table from the kind's scope). It
// reads the manager's cache only. The message names the owner only when it is in obj's namespace, so
// that nobody learns of objects in namespaces they may not read.
func CheckSoleOwner(ctx context.Context, reader client.Reader, claims *Claims, obj engine.Object, list client.ObjectList, key, remedy string) error {
	if remedy == "" {
		remedy = "give this resource another systemName or remove one of them"
	}
	if err := reader.List(ctx, list, client.MatchingFields{IndexOwnerKey: key}); err != nil {
		return err
	}
	var owner, going client.Object
	_ = ForEachItem(list, func(o client.Object) {
		other, ok := o.(engine.Object)
		switch {
		case !ok || other.GetUID() == obj.GetUID():
		case other.GetDeletionTimestamp().IsZero():
			if owner == nil && holdsBefore(other, obj) {
				owner = other
			}
		case going == nil && obj.GetRemoteID() == 0 && controllerutil.ContainsFinalizer(other, engine.Finalizer) &&
			(other.GetRemoteID() != 0 || engine.PendingCreate(other) != ""):
			// Being deleted while it holds the remote object (or may: its create in doubt): its deletion
			// may delete it in a moment. Adopting it now would hold a dead id.
			going = other
		}
	})
	if owner == nil && going != nil {
		return engine.Waiting(v1alpha1.ReasonRemoteBeingDeleted,
			"the same 3scale object (tenant, system name) is held by %s, which is being deleted: waiting for its deletion to finish before creating or adopting it",
			seenFrom(obj, going))
	}
	if owner == nil && claims != nil {
		if holder, ok := claims.claim(ctx, obj, key); !ok {
			owner = obj.DeepCopyObject().(engine.Object) // an object of the same kind, named as the holder
			owner.SetNamespace(holder.Namespace)
			owner.SetName(holder.Name)
		}
	}
	if owner == nil {
		return nil
	}
	return engine.Invalid(v1alpha1.ReasonRemoteOwnedByOtherResource,
		"the same 3scale object (tenant, system name) is already managed by %s; %s; deleting this resource leaves that object untouched",
		seenFrom(obj, owner), remedy)
}

// seenFrom names other for a message on obj: by name in obj's own namespace, where its name is no secret,
// and only as "a resource in another namespace" elsewhere.
func seenFrom(obj, other client.Object) string {
	if other.GetNamespace() == obj.GetNamespace() {
		return fmt.Sprintf("%q in this namespace", other.GetName())
	}
	return "a resource in another namespace"
}

// DeleteHeld deletes the remote object obj holds: by the id in its status, or, after its own create whose
// answer was lost (create-pending), the one locate finds by system name. del deletes by id; 404 is done,
// and so is a parent gone from 3scale (its children went with it).
func DeleteHeld[R any](obj engine.Object, sess *engine.Session, f RemoteFinder[R], del func(id int64) error) error {
	id := obj.GetRemoteID()
	if id == 0 {
		remote, err := Locate(obj, sess, f)
		if err != nil || remote == nil {
			return IgnoreNotFound(err)
		}
		id, _ = f.IDName(*remote)
	}
	if err := IgnoreNotFound(del(id)); err != nil {
		return fmt.Errorf("cannot delete %s %q: %w", f.Kind, sess.SystemName, err)
	}
	if f.Forget != nil {
		f.Forget(id)
	}
	return nil
}

// SystemNameOf returns the system name given in the spec, or one derived from the object's name (which
// never changes): dots become underscores, as 3scale system names take no dots.
func SystemNameOf(specSystemName, objectName string) string {
	if specSystemName != "" {
		return specSystemName
	}
	return strings.ReplaceAll(objectName, ".", "_")
}

// OwnerKey identifies a remote object across the cluster: tenant, scope (e.g. the product of a plan) and
// system name.
func OwnerKey(tenant, scope, systemName string) string {
	return tenant + "|" + scope + "|" + systemName
}

// OlderThan orders two objects by creation, then by namespace and name: the older holds what both claim.
func OlderThan(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// IndexOwnerKey indexes objects by the remote object they own: tenant, scope and system name.
const IndexOwnerKey = "apimsync.ownerKey"
