package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/openapi"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// What kubectl apimsync runs against the table of kinds: diff plans the given objects kind by kind in
// creation order, each with its kind's own syncer; export reads a tenant with each kind's Export in the
// same order. Their machinery, which knows no kind, is in package plugin.

// DiffOptions tune DiffObjects.
type DiffOptions struct {
	// InstallationAdminURL, when set, replaces the admin URL a 3scale installation implies (as
	// ProviderAccounts.InstallationAdminURL; a test points it at its simulator).
	InstallationAdminURL func(tenantName, wildcardDomain string) string
	// RefusePrivateAdminURLs refuses provider accounts on loopback, private or cluster-internal addresses,
	// as the manager does without --allow-private-admin-urls (the webhook's check against 3scale); the
	// plugin, run by a person on their own machine, allows them.
	RefusePrivateAdminURLs bool
}

// DiffObjects plans objs (see plugin.Plan for what diff does) (apimsync objects, their namespace set to namespace) against 3scale, with the
// namespace's objects, Secrets and ConfigMaps read from cluster behind them. It never writes to 3scale or
// to the cluster. An OpenAPI is planned as "none" (or the wait or invalid it would be) with the operations
// its document adds, changes and removes in Details, and what it would generate is planned with the
// rest; objects of other kinds (Tenant) are planned as "none" with a word why; the
// Secrets and ConfigMaps among objs are read by the others, not planned. Without apimsync's CRDs in the
// cluster, the error says so in one line.
func DiffObjects(ctx context.Context, cluster client.Reader, scheme *runtime.Scheme, namespace string, objs []client.Object, opts DiffOptions) ([]plugin.Plan, error) {
	mem, err := plugin.Memory(ctx, cluster, scheme, namespace, objs, plugin.MemoryKinds{Lists: append(plannedLists(), openapi.NewList()), WithStatus: append(syncedKinds(), openapi.New()),
		Indexes: func(b *fake.ClientBuilder) *fake.ClientBuilder {
			for _, ix := range fieldIndexes() {
				b = b.WithIndex(ix.obj, ix.index, ix.names)
			}
			return b
		}})
	if err != nil {
		return nil, err
	}
	var current *plugin.Plan // the plan being made, whose writes are recorded
	accounts := &kit.ProviderAccounts{Reader: mem, Pool: cache.NewClientPool(16, 0, 0, 0), AllowPrivate: !opts.RefusePrivateAdminURLs,
		InstallationAdminURL: opts.InstallationAdminURL,
		DryRun: func(w tsclient.Write) {
			if current != nil {
				current.Writes = append(current.Writes, w)
			}
		}}
	if cluster != nil {
		accounts.Installations = cluster // APIManagers are not in mem: read where the manager reads them
	}
	writer := plugin.ClusterRecorder{Client: mem, Record: func(write string) {
		if current != nil {
			current.ClusterWrites = append(current.ClusterWrites, write)
		}
	}}
	deps := kindDeps{Reader: mem, Writer: writer, Accounts: accounts, Snapshots: cache.NewSnapshots(1024), Lists: &kit.BurstLists{}, Dry: true}
	// An OpenAPI's plan says what its document changes; what it generates is planned with the rest.
	openAPIPlans := map[string]plugin.Plan{}
	given := objs
	for _, obj := range objs {
		if engine.KindOf(obj) != "OpenAPI" {
			continue
		}
		o := obj.DeepCopyObject().(client.Object)
		if err := mem.Get(ctx, client.ObjectKeyFromObject(obj), o); err != nil {
			return nil, err
		}
		plan := plugin.Plan{Kind: "OpenAPI", Name: o.GetName(), Action: "none", Message: "not synced to 3scale itself: what it generates is planned"}
		generated, details, err := openapi.Expand(ctx, mem, o)
		plan.Details = details
		for _, g := range generated {
			if !slices.ContainsFunc(given, func(x client.Object) bool { return engine.KindOf(x) == engine.KindOf(g) && x.GetName() == g.GetName() }) {
				given = append(given, g)
			}
		}
		if err != nil {
			var reasoned *engine.ReasonedError
			if !errors.As(err, &reasoned) {
				return nil, fmt.Errorf("OpenAPI %s: %w", o.GetName(), err)
			}
			plan.Action, plan.Reason, plan.Message = "wait", reasoned.Reason, reasoned.Message
			if class, _, _ := engine.Classify(err); class == engine.ClassInvalid {
				plan.Action = "invalid"
			}
		}
		openAPIPlans[o.GetName()] = plan
	}
	objs = given
	run := func(obj client.Object, plan *plugin.Plan) error {
		current = plan
		defer func() { current = nil }()
		if k := kindNamed(engine.KindOf(obj)); k != nil && k.Planned() {
			return k.plan(ctx, mem, deps, obj, plan)
		}
		if p, ok := openAPIPlans[obj.GetName()]; ok && engine.KindOf(obj) == "OpenAPI" {
			*plan = p
			return nil
		}
		plan.Action, plan.Message = "none", "not synced to 3scale itself (a Tenant's master API): not planned"
		return nil
	}
	order, err := creationOrder(referenceGraph)
	if err != nil {
		return nil, err
	}
	var plans []plugin.Plan
	actions := map[string]string{} // each planned object's action, by kind/name
	for _, kind := range append(order, "") {
		for _, given := range objs {
			k := engine.KindOf(given)
			if (kind != "" && k != kind) || (kind == "" && slices.Contains(order, k)) || !plugin.IsApimsyncObject(given) {
				continue // another pass's kind, or a Secret or ConfigMap the objects read
			}
			obj := given.DeepCopyObject().(client.Object)
			if err := mem.Get(ctx, client.ObjectKeyFromObject(given), obj); err != nil {
				return nil, err
			}
			plan := plugin.Plan{Kind: k, Name: obj.GetName()}
			if err := run(obj, &plan); err != nil {
				return nil, fmt.Errorf("%s %s: %w", k, obj.GetName(), err)
			}
			if plan.Action == "wait" {
				created, err := createdDependencies(ctx, mem, obj, plan.Reason, actions)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", k, obj.GetName(), err)
				}
				if len(created) > 0 {
					plan.Action = "after"
					plan.Message = fmt.Sprintf("synced after %s, which this diff creates (what it writes is known only then)", strings.Join(created, ", "))
				}
			}
			actions[k+"/"+obj.GetName()] = plan.Action
			plans = append(plans, plan)
		}
	}
	return plans, nil
}

// createdDependencies returns, as kind/name, the dependencies this diff creates that obj waits for
// (reason: its wait's), or none when it waits for anything else: a dependency that is missing, or that
// exists but is not synced and is not created here (Orphan, Invalid, or not synced yet in the cluster).
// Such an object is no wait in a pull request that adds it with what it references (a Product with its
// plans): it syncs once they are made. Only a wait for a dependency to be synced (a reason
// <Kind>NotSynced, as kit.Dependency names it) can be that; any other (a Secret missing) is a wait.
// actions are the objects planned so far, in creation order, by kind/name.
func createdDependencies(ctx context.Context, mem client.Reader, obj client.Object, reason string, actions map[string]string) ([]string, error) {
	if !strings.HasSuffix(reason, "NotSynced") {
		return nil, nil
	}
	var created []string
	for _, r := range referenceGraph {
		if r.From != engine.KindOf(obj) || r.Names == nil {
			continue
		}
		for _, name := range r.Names(obj) {
			dep, err := dependencyOf(ctx, mem, r, obj.GetNamespace(), name)
			if err != nil || dep == nil {
				return nil, err // missing: a wait
			}
			switch key := r.To + "/" + dep.GetName(); actions[key] {
			case "create", "after":
				if !slices.Contains(created, key) {
					created = append(created, key)
				}
			default:
				if !kit.Usable(dep, *dep.GetSyncStatus(), dep.GetRemoteID()) {
					return nil, nil // neither synced nor created here
				}
			}
		}
	}
	return created, nil
}

// dependencyOf reads the object of kind r.To that name names in namespace through reference r (its name,
// or r.Key of it); nil when there is none.
func dependencyOf(ctx context.Context, mem client.Reader, r reference, namespace, name string) (engine.Object, error) {
	k := kindNamed(r.To)
	if k == nil {
		return nil, nil
	}
	if r.Key == nil {
		dep := k.New()
		if err := mem.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, dep); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		o, _ := dep.(engine.Object)
		return o, nil
	}
	list := k.NewList()
	if err := mem.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var found engine.Object
	err := kit.ForEachItem(list, func(o client.Object) {
		if eo, ok := o.(engine.Object); ok && found == nil && r.Key(o) == name {
			found = eo
		}
	})
	return found, err
}

// plannedLists returns an empty list of every kind diff plans.
func plannedLists() []client.ObjectList {
	var out []client.ObjectList
	for _, k := range kinds {
		if k.Planned() {
			out = append(out, k.NewList())
		}
	}
	return out
}

// ExportTenant reads the tenant c talks to and returns it as apimsync resources: every kind that exports
// its objects does, in creation order, so that what an object names (a backend, a metric, a plan, an
// account) was exported before it. With OnlyPortal, only the DeveloperPortal's row runs.
func ExportTenant(ctx context.Context, c *tsclient.Client, opts plugin.ExportOptions) (*plugin.Exported, error) {
	order, err := creationOrder(referenceGraph)
	if err != nil {
		return nil, err
	}
	x := plugin.NewExporter(c, opts)
	for _, name := range order {
		if opts.OnlyPortal && name != "DeveloperPortal" {
			continue
		}
		if err := kindNamed(name).export(ctx, x); err != nil {
			return nil, err
		}
	}
	return x.Out, nil
}

// UnmanagedObjects lists the objects of a tenant (tenant: its key, tsclient.NormalizeTenant's) that no
// apimsync object of the cluster holds: for each kind with an inventory, one list of the tenant's
// objects (paged where porta pages), less the ids the kind's objects synced to that tenant record. In
// creation order, then by id.
func UnmanagedObjects(ctx context.Context, cluster client.Reader, c *tsclient.Client, tenant string) ([]plugin.RemoteItem, error) {
	order, err := creationOrder(referenceGraph)
	if err != nil {
		return nil, err
	}
	var out []plugin.RemoteItem
	for _, name := range order {
		k := kindNamed(name)
		inventory, listed := k.remoteItems()
		if !listed {
			continue
		}
		list := k.NewList()
		if err := cluster.List(ctx, list); err != nil {
			return nil, fmt.Errorf("cannot list the %s objects: %w", name, err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		held := map[string]bool{}
		for _, o := range objs {
			if obj, ok := o.(engine.Object); ok && obj.GetSyncStatus().TenantHost == tenant {
				for _, key := range k.heldKeys(obj) {
					held[key] = true
				}
			}
		}
		remote, err := inventory(ctx, c)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(remote, func(a, b plugin.RemoteItem) int { return cmp.Compare(a.ID, b.ID) })
		for _, r := range remote {
			if !held[r.HeldKey()] {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// listUnmanaged is UnmanagedObjects, for the TenantSettings row of the table (which UnmanagedObjects reads:
// set at init to break the initialization cycle).
var listUnmanaged func(ctx context.Context, cluster client.Reader, c *tsclient.Client, tenant string) ([]plugin.RemoteItem, error)

func init() { listUnmanaged = UnmanagedObjects }
