package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// reference is one edge of the reference graph: objects of kind From name objects of kind To through a
// spec field, indexed under Index.
type reference struct {
	From, To string
	// Field is the spec field, for messages.
	Field string
	// Index is the field index of From objects by the names of the To objects they reference (or their
	// Key).
	Index string
	// Key, when set, is what From objects' Index holds for a To object instead of its name (a custom
	// policy's name and version), and KeyIndex the field index of To objects by it.
	Key      func(client.Object) string
	KeyIndex string
	// Names returns the names of the To objects a From object references (or their Key): the Index holds
	// them, and a change of the From object wakes them.
	Names func(client.Object) []string
	// List returns an empty list of From objects.
	List func() client.ObjectList
	// Owned: a From object cannot exist without its To object; deleting the To object deletes it first.
	// Otherwise the To object's deletion waits until no From object uses it any more (Blocks: a Backend
	// for its Products) or the reference just dangles (an ActiveDoc's product).
	Owned bool
	// Blocks: 3scale refuses to delete the To object while a From object uses it, so its deletion waits
	// for them here, woken by a watch, instead of calling 3scale to be refused.
	Blocks bool
	// Along: 3scale deletes the From object's remote object along with the To object's (always so for
	// Owned references; also a service's ActiveDocs, which porta destroys with the service): a From
	// object deleted with its To object makes no call of its own, and a Retain one keeps the To object in
	// 3scale (retainedUnder).
	Along bool
}

// refField returns the Names of a reference held in one string field of T objects (none when it is
// empty, or the object is not a T).
func refField[T client.Object](field func(T) string) func(client.Object) []string {
	return func(o client.Object) []string {
		if t, ok := o.(T); ok {
			return kit.Single(field(t))
		}
		return nil
	}
}

// goesAlong reports whether 3scale deletes r's From objects along with its To object.
func (r reference) goesAlong() bool { return r.Owned || r.Along }

// keyOf is what r's From objects' Index holds for the To object obj.
func (r reference) keyOf(obj client.Object) string {
	if r.Key != nil {
		return r.Key(obj)
	}
	return obj.GetName()
}

// deletionOrder returns the kinds in the order their objects go when everything is deleted at once:
// every kind before the kinds it references (a topological order of the graph). A cycle is an error that
// names it: the manager does not start.
func deletionOrder(graph []reference) ([]string, error) {
	kinds := map[string]bool{}
	refs := map[string]map[string]bool{} // kind -> kinds it references
	pending := map[string]int{}          // kind -> kinds referencing it not yet placed
	for _, r := range graph {
		kinds[r.From], kinds[r.To] = true, true
		if refs[r.From] == nil {
			refs[r.From] = map[string]bool{}
		}
		if !refs[r.From][r.To] {
			refs[r.From][r.To] = true
			pending[r.To]++
		}
	}
	var order, ready []string
	for k := range kinds {
		if pending[k] == 0 {
			ready = append(ready, k)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		k := ready[0]
		ready = ready[1:]
		order = append(order, k)
		for to := range refs[k] {
			if pending[to]--; pending[to] == 0 {
				ready = append(ready, to)
			}
		}
	}
	if len(order) != len(kinds) {
		return nil, fmt.Errorf("the reference graph has a cycle: %s: no deletion order exists", strings.Join(cycleOf(refs, pending), " → "))
	}
	return order, nil
}

// cycleOf returns a cycle among the kinds left unplaced (pending > 0) by deletionOrder, each kind followed
// by a kind it references, starting and ending with the first of them by name: only the cycle, not the
// kinds downstream of it. Each unplaced kind is referenced by an unplaced kind, so walking from referenced
// to referrer among them meets a kind twice.
func cycleOf(refs map[string]map[string]bool, pending map[string]int) []string {
	var left []string
	for k, n := range pending {
		if n > 0 {
			left = append(left, k)
		}
	}
	slices.Sort(left)
	referrer := func(k string) string {
		for _, from := range left {
			if refs[from][k] {
				return from
			}
		}
		return ""
	}
	seen := map[string]int{}
	var walk []string // each kind referenced by the next
	for k := left[0]; k != ""; k = referrer(k) {
		if i, ok := seen[k]; ok {
			walk = walk[i:]
			break
		}
		seen[k] = len(walk)
		walk = append(walk, k)
	}
	slices.Reverse(walk) // each kind references the next
	first := slices.Index(walk, slices.Min(walk))
	return slices.Concat(walk[first:], walk[:first], walk[first:first+1])
}

// ownedDependants returns a function listing the objects that must go before an object of kind: those
// of an Owned reference to it, in its namespace.
func ownedDependants(reader client.Reader, graph []reference, kind string) func(ctx context.Context, obj client.Object) ([]client.Object, error) {
	return referrers(reader, graph, kind, func(r reference) bool { return r.Owned })
}

// blockingUsers returns a function listing the objects whose use of an object of kind makes 3scale refuse
// its deletion (Blocks references to it), in its namespace.
func blockingUsers(reader client.Reader, graph []reference, kind string) func(ctx context.Context, obj client.Object) ([]client.Object, error) {
	return referrers(reader, graph, kind, func(r reference) bool { return r.Blocks })
}

// referrers lists the objects of the references to kind that pick selects, in the object's namespace;
// nil when no reference is selected.
func referrers(reader client.Reader, graph []reference, kind string, pick func(reference) bool, opts ...client.ListOption) func(ctx context.Context, obj client.Object) ([]client.Object, error) {
	var edges []reference
	for _, r := range graph {
		if r.To == kind && pick(r) {
			edges = append(edges, r)
		}
	}
	if len(edges) == 0 {
		return nil
	}
	return func(ctx context.Context, obj client.Object) ([]client.Object, error) {
		var out []client.Object
		for _, r := range edges {
			list := r.List()
			if err := reader.List(ctx, list, append([]client.ListOption{client.InNamespace(obj.GetNamespace()), client.MatchingFields{r.Index: r.keyOf(obj)}}, opts...)...); err != nil {
				return nil, err
			}
			if err := kit.ForEachItem(list, func(o client.Object) { out = append(out, o) }); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// retainedUnder returns a function listing, by kind and name, the objects with deletionPolicy: Retain that
// hold a remote object living under obj's (its owned dependants, and theirs): 3scale would refuse obj's
// deletion for them (a plan with applications) or delete them along (a service's plans, an account's
// applications), so obj is kept in 3scale when it is deleted (engine.Reconciler.RetainedUnder).
func retainedUnder(reader client.Reader, graph []reference) func(ctx context.Context, obj client.Object) ([]string, error) {
	var under func(ctx context.Context, obj client.Object, depth int) ([]string, error)
	under = func(ctx context.Context, obj client.Object, depth int) ([]string, error) {
		if depth > len(graph) { // the graph is acyclic (deletionOrder): never deeper than its edges
			return nil, nil
		}
		// Read only, and run for every dependant a deletion reaches (fateOf): the cache's objects as they
		// are, no copy of each.
		list := referrers(reader, graph, engine.KindOf(obj), reference.goesAlong, client.UnsafeDisableDeepCopy)
		if list == nil {
			return nil, nil // a kind nothing goes along with
		}
		deps, err := list(ctx, obj)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, d := range deps {
			so, ok := d.(engine.Object)
			if !ok || so.GetRemoteID() == 0 || !controllerutil.ContainsFinalizer(d, engine.Finalizer) {
				continue
			}
			if so.GetDeletionPolicy() == v1alpha1.DeletionPolicyRetain {
				out = append(out, engine.KindOf(d)+" "+d.GetName())
				continue
			}
			more, err := under(ctx, d, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	return func(ctx context.Context, obj client.Object) ([]string, error) { return under(ctx, obj, 0) }
}

// ownersGoing returns a function naming the owners of obj (the objects it is an owned dependant of) that
// are being deleted while they hold a remote object with apimsync's finalizer: a Retain object waits for
// them to be gone before it lets go (engine.Reconciler.OwnersGoing), so that they see it and are kept.
func ownersGoing(reader client.Reader, graph []reference) func(ctx context.Context, obj client.Object) ([]string, error) {
	return func(ctx context.Context, obj client.Object) ([]string, error) {
		var out []string
		var visit func(o client.Object, depth int)
		visit = func(o client.Object, depth int) {
			if depth > len(graph) {
				return
			}
			for _, r := range graph {
				if !r.goesAlong() || r.From != engine.KindOf(o) {
					continue
				}
				for _, name := range r.Names(o) { // an owner, which the reference names once
					owner := newKind(r.To).(engine.Object)
					if reader.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, owner) != nil {
						continue
					}
					if !owner.GetDeletionTimestamp().IsZero() && owner.GetRemoteID() != 0 && controllerutil.ContainsFinalizer(owner, engine.Finalizer) {
						out = append(out, r.To+" "+owner.GetName())
					}
					visit(owner, depth+1)
				}
			}
		}
		visit(obj, 0)
		slices.Sort(out)
		return slices.Compact(out), nil
	}
}

// fatesOf tells, reading with reader, the fate of owners: it reads the named owner object into owner and tells its fate (engine.OwnerFate) for a dependant on tenant that
// lives under the owner's remote object held (the id the dependant's status records for it). An owner
// whose remote object is another one (the dependant was moved to it, Invalid, and still lives under the
// old one; the owner re-created since) is no owner of the dependant's remote object: engine.OwnerStays.
func fatesOf(reader client.Reader) kit.Fates {
	return func(ctx context.Context, namespace, name, tenant string, held int64, owner engine.Object) engine.OwnerFate {
		return fateOf(ctx, reader, namespace, name, tenant, held, owner)
	}
}

// fateOf is one owner's fate (fatesOf).
func fateOf(ctx context.Context, reader client.Reader, namespace, name, tenant string, held int64, owner engine.Object) engine.OwnerFate {
	if name == "" || held == 0 || reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, owner) != nil ||
		owner.GetDeletionPolicy() != v1alpha1.DeletionPolicyDelete || owner.GetRemoteID() != held ||
		owner.GetSyncStatus().TenantHost != tenant || !controllerutil.ContainsFinalizer(owner, engine.Finalizer) {
		return engine.OwnerStays
	}
	if kept, err := retainedUnder(reader, referenceGraph)(ctx, owner); err != nil || len(kept) > 0 {
		return engine.OwnerStays // kept in 3scale for a Retain object under it: its deletion takes nothing along
	}
	if owner.GetDeletionTimestamp().IsZero() {
		return engine.OwnerMayGo
	}
	return engine.OwnerGoes
}
