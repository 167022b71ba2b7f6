package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Diff (kubectl apimsync diff) tells what syncing objects would do to 3scale now, with the syncers' own
// code: Connect, Resolve, Read and Compare as a sync runs them, then Update with a dry-run client, which
// reads 3scale but hands every write to a recorder instead of sending it. The writes listed are the ones
// a sync would make. The objects are read from an in-memory copy of the namespace (its apimsync objects,
// Secrets and ConfigMaps) with the given objects over it (a given object that exists keeps its status: its
// recorded identity), in the order objects are created; each one diffed is then taken as synced, so that
// its dependants resolve.

// Plan is what syncing one object would do.
type Plan struct {
	Kind, Name string
	// Action is "none" (in sync), "update" (Writes), "create", "wait" (a dependency is missing or would be
	// created first) or "invalid" (the spec cannot work); Message says more.
	Action  string
	Message string
	Writes  []tsclient.Write
}

// Changes reports whether a plan would change 3scale.
func (p Plan) Changes() bool { return p.Action == "update" || p.Action == "create" }

// diffKinds are the kinds diff handles, in the order objects are created (an object after what it
// references).
var diffKinds = []string{"CustomPolicyDefinition", "Backend", "Product", "ApplicationPlan", "DeveloperAccount", "Application", "ActiveDoc"}

// DiffObjects plans objs (apimsync objects, their namespace set to namespace) against 3scale, with the
// namespace's objects, Secrets and ConfigMaps read from cluster behind them. It never writes to 3scale or
// to the cluster. Objects of other kinds (OpenAPI, Tenant) are planned as "none" with a word why.
func DiffObjects(ctx context.Context, cluster client.Reader, scheme *runtime.Scheme, namespace string, objs []client.Object) ([]Plan, error) {
	mem, err := memoryOf(ctx, cluster, scheme, namespace, objs)
	if err != nil {
		return nil, err
	}
	var writes *[]tsclient.Write
	accounts := &ProviderAccounts{Reader: mem, Pool: cache.NewClientPool(16, 0, 0, 0), AllowPrivate: true,
		DryRun: func(w tsclient.Write) {
			if writes != nil {
				*writes = append(*writes, w)
			}
		}}
	snapshots, lists := cache.NewSnapshots(1024), &BurstLists{}
	claims := func() *Claims { return &Claims{Reader: mem} }
	run := func(obj client.Object, plan *Plan) error {
		writes = &plan.Writes
		defer func() { writes = nil }()
		switch o := obj.(type) {
		case *v1alpha1.Backend:
			return planOne(ctx, mem, engine.Typed(snapshotKindBackend, snapshots, &BackendSyncer{Reader: mem, Accounts: accounts, Claims: claims(), Lists: lists}), o, plan)
		case *v1alpha1.Product:
			return planOne(ctx, mem, engine.Typed(snapshotKindProduct, snapshots, &ProductSyncer{Reader: mem, Accounts: accounts, Applications: snapshots,
				Claims: claims(), Lists: lists}), o, plan)
		case *v1alpha1.ApplicationPlan:
			return planOne(ctx, mem, engine.Typed(snapshotKindPlan, snapshots, &ApplicationPlanSyncer{Reader: mem, Accounts: accounts, Peers: snapshots,
				Claims: claims(), Lists: lists}), o, plan)
		case *v1alpha1.DeveloperAccount:
			return planOne(ctx, mem, engine.Typed(snapshotKindAccount, snapshots, &DeveloperAccountSyncer{Reader: mem, Accounts: accounts, Claims: claims(),
				Sent: &SentPasswords{}}), o, plan)
		case *v1alpha1.Application:
			return planOne(ctx, mem, engine.Typed(snapshotKindApplication, snapshots, &ApplicationSyncer{Reader: mem, Writer: mem, Accounts: accounts,
				Claims: claims()}), o, plan)
		case *v1alpha1.ActiveDoc:
			return planOne(ctx, mem, engine.Typed(snapshotKindActiveDoc, snapshots, &ActiveDocSyncer{Reader: mem, Accounts: accounts, Claims: claims()}), o, plan)
		case *v1alpha1.CustomPolicyDefinition:
			return planOne(ctx, mem, engine.Typed(snapshotKindCustomPolicy, snapshots, &CustomPolicyDefinitionSyncer{Reader: mem, Accounts: accounts,
				Claims: claims()}), o, plan)
		}
		plan.Action, plan.Message = "none", "not synced to 3scale itself (an OpenAPI's generated resources, a Tenant's master API): not planned"
		return nil
	}
	var plans []Plan
	for _, kind := range append(diffKinds, "") {
		for _, given := range objs {
			k := engine.KindOf(given)
			if (kind != "" && k != kind) || (kind == "" && contains(diffKinds, k)) {
				continue
			}
			obj := given.DeepCopyObject().(client.Object)
			if err := mem.Get(ctx, client.ObjectKeyFromObject(given), obj); err != nil {
				return nil, err
			}
			plan := Plan{Kind: k, Name: obj.GetName()}
			if err := run(obj, &plan); err != nil {
				return nil, fmt.Errorf("%s %s: %w", k, obj.GetName(), err)
			}
			plans = append(plans, plan)
		}
	}
	return plans, nil
}

// planOne plans one object with its kind's syncer (through the engine's adapter), then records it in mem
// as synced (its remote id if it has one), for its dependants to resolve.
func planOne[T engine.Object](ctx context.Context, mem client.Client, syncer engine.Syncer[T], obj T, plan *Plan) error {
	sess, err := syncer.Connect(ctx, obj)
	if err == nil {
		if err = syncer.Resolve(ctx, obj, sess); err == nil {
			sess.ForceRead = true
			var obs engine.Observation
			if obs, err = syncer.Observe(ctx, obj, sess); err == nil {
				switch {
				case !obs.Exists:
					plan.Action, plan.Message = "create", fmt.Sprintf("create %s %q (with what it holds) on tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
				case !obs.UpToDate:
					plan.Action, plan.Message = "update", fmt.Sprintf("update %s %q on tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
					_, err = syncer.Update(ctx, obj, sess, obs)
				default:
					plan.Action, plan.Message = "none", fmt.Sprintf("%s %q is in sync with tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
				}
				if err == nil && obs.Adopted != 0 {
					plan.Message += fmt.Sprintf(" (adopting the existing %s %d)", plan.Kind, obs.Adopted)
				}
			}
		}
	}
	if err != nil {
		class, _, message := engine.Classify(err)
		var reasoned *engine.ReasonedError
		if !errors.As(err, &reasoned) {
			return err
		}
		plan.Action, plan.Message = "wait", message
		if class == engine.ClassInvalid {
			plan.Action = "invalid"
		}
		return nil
	}
	// Taken as synced: what depends on it resolves (with its id; one to be created has none, and its
	// dependants wait for it).
	st := obj.GetSyncStatus()
	st.TenantHost, st.SystemName, st.SyncedHash, st.ObservedGeneration = sess.Tenant, sess.SystemName, sess.Hash, obj.GetGeneration()
	engine.SetSyncState(st, v1alpha1.ConditionSynced, engine.ReasonSynced, "planned", obj.GetGeneration())
	return mem.Status().Update(ctx, obj)
}

// memoryOf is the in-memory namespace diff reads: the cluster's apimsync objects, Secrets and ConfigMaps
// of namespace, with objs over them (an object that exists keeps its status and metadata, and takes objs'
// spec and labels).
func memoryOf(ctx context.Context, cluster client.Reader, scheme *runtime.Scheme, namespace string, objs []client.Object) (client.Client, error) {
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, ix := range fieldIndexes() {
		b = b.WithIndex(ix.obj, ix.index, ix.names)
	}
	b = b.WithStatusSubresource(syncedKinds()...)
	have := map[string]client.Object{}
	lists := []client.ObjectList{&corev1.SecretList{}, &corev1.ConfigMapList{}}
	for _, kind := range diffKinds {
		lists = append(lists, listOfKind(kind))
	}
	if cluster != nil {
		for _, l := range lists {
			if err := cluster.List(ctx, l, client.InNamespace(namespace)); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("cannot list the namespace's %T: %w", l, err)
			}
			_ = forEachItem(l, func(o client.Object) {
				o.SetResourceVersion("")
				have[engine.KindOf(o)+"/"+o.GetName()] = o
			})
		}
	}
	for _, given := range objs {
		key := engine.KindOf(given) + "/" + given.GetName()
		if existing, ok := have[key]; ok {
			merged := given.DeepCopyObject().(client.Object)
			copyStatus(existing, merged)
			merged.SetAnnotations(existing.GetAnnotations())
			merged.SetFinalizers(existing.GetFinalizers())
			merged.SetUID(existing.GetUID())
			merged.SetGeneration(existing.GetGeneration() + 1)
			have[key] = merged
			continue
		}
		have[key] = given.DeepCopyObject().(client.Object)
	}
	for _, o := range have {
		b = b.WithObjects(o)
	}
	return b.Build(), nil
}

// copyStatus copies from's whole status into into (both of one kind): the recorded identity, ids of
// dependencies, password versions.
func copyStatus(from, into client.Object) {
	f, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
	if err != nil {
		return
	}
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(into)
	if err != nil {
		return
	}
	t["status"] = f["status"]
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(t, into)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
