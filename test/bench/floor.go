package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/test/testenv"
)

// Floor is what this machine's control plane needs for the Kubernetes side of a run alone, measured with
// the manager stopped: the writes any controller that holds a finalizer and reports its objects Synced
// cannot do without, sent with the apply's concurrency. Cold: create, add the finalizer, write a Synced
// status, per object, until the census sees all Synced. Deletion: delete, remove the finalizer, per
// object, until all are gone. No remote call, no event, no read of a dependency: a run on this machine
// cannot be faster, whatever the tenant allows.
type Floor struct {
	ColdSeconds     float64 `json:"coldSeconds"`
	DeletionSeconds float64 `json:"deletionSeconds"`
	// ColdCPU and DeletionCPU are what each process used meanwhile: set beside the runs' own, they show
	// what the manager costs the machine beyond the floor (its own CPU, and the API server's for it).
	ColdCPU     CPU `json:"coldCPU"`
	DeletionCPU CPU `json:"deletionCPU"`
	// ColdRunStatusesSeconds is the cold floor again with each object's status the one the manager
	// wrote in the cold run (the identities and fingerprints apimsync records, every sync condition)
	// instead of a minimal Synced one: how much of the cold run's time beyond the floor is the size of
	// what it stores, rather than its own work. ColdRunStatusesCPU is what each process used meanwhile.
	ColdRunStatusesSeconds float64 `json:"coldRunStatusesSeconds,omitempty"`
	ColdRunStatusesCPU     CPU     `json:"coldRunStatusesCPU"`
	// ColdBeforeSeconds is the cold floor measured just before the cold run on a fresh control plane of
	// its own, as the cold run's is fresh (BENCH_FLOOR_BEFORE); ColdBeforeCPU what each process used
	// meanwhile.
	ColdBeforeSeconds float64 `json:"coldBeforeSeconds,omitempty"`
	ColdBeforeCPU     CPU     `json:"coldBeforeCPU"`
}

// floor measures the Floor once the deletion is done; the manager is stopped for it (a Synced status
// written by the bench would be a lie it acts on) and not started again.
func (b *bench) floor(ctx context.Context) error {
	if !b.cfg.Floor {
		b.logf("floor: skipped")
		return nil
	}
	b.mgr.stop()
	profiled := b.profile(ctx, "floor-cold", "")
	var err error
	if b.res.Floor.ColdSeconds, b.res.Floor.ColdCPU, err = b.timedApply(ctx, b.allObjects(), floorCreate(b.k8s), b.allSynced); err != nil {
		return err
	}
	profiled()
	profiled = b.profile(ctx, "floor-deletion", "")
	if b.res.Floor.DeletionSeconds, b.res.Floor.DeletionCPU, err = b.timedApply(ctx, freshCopies(b.allObjects()), floorDelete(b.k8s), allGone); err != nil {
		return err
	}
	profiled()
	b.logf("floor: cold %.1fs, deletion %.1fs", b.res.Floor.ColdSeconds, b.res.Floor.DeletionSeconds)
	return b.floorWithRunStatuses(ctx)
}

// floorWithRunStatuses measures the cold floor again, each status the one the cold run left
// (Floor.ColdRunStatusesSeconds). Nothing when the cold run left none.
func (b *bench) floorWithRunStatuses(ctx context.Context) error {
	if len(b.runStatuses) == 0 {
		return nil
	}
	var err error
	if b.res.Floor.ColdRunStatusesSeconds, b.res.Floor.ColdRunStatusesCPU, err = b.coldFloor(ctx, b.runStatuses); err != nil {
		return err
	}
	b.logf("floor with the cold run's statuses: cold %.1fs", b.res.Floor.ColdRunStatusesSeconds)
	return nil
}

// floorBefore measures the cold floor (minimal statuses) just before the cold run, on a fresh control
// plane of its own (Floor.ColdBeforeSeconds), stopped after it: the same control plane's cost for the
// same writes rises by about half once a first batch of objects has come and gone (47.8 s, then 67.0,
// 71.0 and 69.1 s, four floors of 5,000 objects in a row), and the cold run is the first batch of the
// bench's own. The floor at the end comes after several batches, and minutes later on a machine whose
// speed drifts.
func (b *bench) floorBefore(ctx context.Context) error {
	if !b.cfg.Floor || !b.cfg.FloorBefore {
		return nil
	}
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	k8s, watch, stopWatch, err := clients(ctx, env)
	if err != nil {
		return err
	}
	defer stopWatch()
	for _, ns := range b.work.Namespaces {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}); err != nil {
			return err
		}
	}
	mainK8s, mainWatch := b.k8s, b.watch
	b.k8s, b.watch = k8s, watch
	defer func() { b.k8s, b.watch = mainK8s, mainWatch }()
	if b.res.Floor.ColdBeforeSeconds, b.res.Floor.ColdBeforeCPU, err = b.coldFloor(ctx, nil); err != nil {
		return err
	}
	b.logf("floor before the cold run, on a fresh control plane: cold %.1fs", b.res.Floor.ColdBeforeSeconds)
	return nil
}

// coldFloor times the cold floor's writes with statuses (floorCreateWith) until the census sees every
// object Synced, then deletes the objects again (untimed) and waits until they are gone.
func (b *bench) coldFloor(ctx context.Context, statuses map[string]any) (float64, CPU, error) {
	seconds, used, err := b.timedApply(ctx, b.allObjects(), floorCreateWith(b.k8s, statuses), b.allSynced)
	if err != nil {
		return 0, CPU{}, err
	}
	_, _, err = b.timedApply(ctx, freshCopies(b.allObjects()), floorDelete(b.k8s), allGone)
	return seconds, used, err
}

// timedApply applies write to objs and waits until the census says done, and tells how long that took
// and what each process used meanwhile. The floor's deletions are given copies (freshCopies): a patch's
// answer is decoded into the object it was given, and the workload's own objects must stay as applied.
func (b *bench) timedApply(ctx context.Context, objs []client.Object, write func(context.Context, client.Object) error, done func(exist, synced int) bool) (float64, CPU, error) {
	start, cpu := time.Now(), b.sampleCPU()
	if err := b.apply(ctx, objs, write); err != nil {
		return 0, CPU{}, err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, done); err != nil {
		return 0, CPU{}, err
	}
	seconds := time.Since(start).Seconds()
	return seconds, b.cpuSince(cpu, seconds), nil
}

// allSynced is the census of a workload all Synced; allGone, of one all gone.
func (b *bench) allSynced(_, synced int) bool { return synced == b.work.Size() }

func allGone(exist, _ int) bool { return exist == 0 }

// readRunStatuses reads the statuses of the workload's objects as the cold run left them, by statusKey, as
// unstructured data (read from the census cache).
func (b *bench) readRunStatuses(ctx context.Context) (map[string]any, error) {
	out := map[string]any{}
	for _, l := range censusLists() {
		if err := b.watch.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			o := it.(client.Object)
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return nil, err
			}
			out[statusKey(o)] = runtime.DeepCopyJSONValue(u["status"])
		}
	}
	return out, nil
}

// statusKey names an object across kinds: "Product/team-1/petstore".
func statusKey(o client.Object) string {
	return fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())
}

// floorCreate creates an object, adds a finalizer and writes a Synced status: the three writes.
func floorCreate(c client.Client) func(context.Context, client.Object) error {
	return floorCreateWith(c, nil)
}

// floorCreateWith is floorCreate writing the status statuses has for the object (statusKey), made Synced
// at the object's generation; a minimal Synced status for one it lacks.
func floorCreateWith(c client.Client, statuses map[string]any) func(context.Context, client.Object) error {
	return func(ctx context.Context, o client.Object) error {
		o = fresh(o)
		if err := c.Create(ctx, o); err != nil {
			return err
		}
		controllerutil.AddFinalizer(o, floorFinalizer)
		if err := c.Update(ctx, o); err != nil {
			return err
		}
		before := o.DeepCopyObject().(client.Object)
		if saved, ok := statuses[statusKey(o)]; ok {
			if err := setStatus(o, saved); err != nil {
				return err
			}
		}
		st := o.(v1alpha1.SyncedObject).GetSyncStatus()
		st.ObservedGeneration = o.GetGeneration()
		for i := range st.Conditions {
			st.Conditions[i].ObservedGeneration = o.GetGeneration()
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: "Synced", Message: "floor", ObservedGeneration: o.GetGeneration()})
		return c.Status().Patch(ctx, o, client.MergeFrom(before))
	}
}

// setStatus replaces a typed object's status with status (unstructured data of its kind's status).
func setStatus(o client.Object, status any) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u["status"] = runtime.DeepCopyJSONValue(status)
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u, o)
}

// fresh returns a copy of a workload object as applied: without what the API server set when it was
// created before.
func fresh(o client.Object) client.Object {
	c := o.DeepCopyObject().(client.Object)
	c.SetResourceVersion("")
	c.SetUID("")
	c.SetGeneration(0)
	c.SetCreationTimestamp(metav1.Time{})
	c.SetDeletionTimestamp(nil)
	c.SetFinalizers(nil)
	c.SetManagedFields(nil)
	return c
}

// floorDelete deletes an object and removes its finalizer: the two writes.
func floorDelete(c client.Client) func(context.Context, client.Object) error {
	return func(ctx context.Context, o client.Object) error {
		if err := c.Delete(ctx, o); err != nil {
			return client.IgnoreNotFound(err)
		}
		patch := client.RawPatch("application/json-patch+json", []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`))
		return client.IgnoreNotFound(c.Patch(ctx, o, patch))
	}
}

// floorFinalizer is the finalizer of the floor's objects (not the manager's: it is stopped).
const floorFinalizer = "bench.apimsync.io/floor"
