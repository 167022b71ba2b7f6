package bench

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
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
	start, cpu := time.Now(), b.sampleCPU()
	if err := b.apply(ctx, b.allObjects(), floorCreate(b.k8s)); err != nil {
		return err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(_, synced int) bool { return synced == b.work.Size() }); err != nil {
		return err
	}
	b.res.Floor.ColdSeconds = time.Since(start).Seconds()
	b.res.Floor.ColdCPU = b.cpuSince(cpu, b.res.Floor.ColdSeconds)
	profiled()
	profiled = b.profile(ctx, "floor-deletion", "")
	start, cpu = time.Now(), b.sampleCPU()
	if err := b.apply(ctx, b.allObjects(), floorDelete(b.k8s)); err != nil {
		return err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(exist, _ int) bool { return exist == 0 }); err != nil {
		return err
	}
	b.res.Floor.DeletionSeconds = time.Since(start).Seconds()
	b.res.Floor.DeletionCPU = b.cpuSince(cpu, b.res.Floor.DeletionSeconds)
	profiled()
	b.logf("floor: cold %.1fs, deletion %.1fs", b.res.Floor.ColdSeconds, b.res.Floor.DeletionSeconds)
	return nil
}

// floorCreate creates an object, adds a finalizer and writes a Synced status: the three writes.
func floorCreate(c client.Client) func(context.Context, client.Object) error {
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
		st := o.(v1alpha1.SyncedObject).GetSyncStatus()
		st.ObservedGeneration = o.GetGeneration()
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: "Synced", Message: "floor", ObservedGeneration: o.GetGeneration()})
		return c.Status().Patch(ctx, o, client.MergeFrom(before))
	}
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
