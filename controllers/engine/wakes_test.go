package engine

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// A change of an object that references this one wakes it only while it may wait on it: not once it is
// Synced at its generation and at rest here.
func TestAttentive(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, newBackend())
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	if !h.rec.Attentive(ctx, h.key) {
		t.Error("an object never synced is not attentive")
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.rec.Attentive(ctx, h.key) {
		t.Error("a Synced object at rest is attentive: every change of what references it would reconcile it")
	}
	if h.rec.Attentive(ctx, types.NamespacedName{Namespace: "team-a", Name: "gone"}) {
		t.Error("an object the cache does not hold is attentive")
	}

	h.rec.Backoff.Next(h.key)
	if !h.rec.Attentive(ctx, h.key) {
		t.Error("an object backing off (a removal held back by a plan's limit) is not attentive")
	}
	h.rec.Backoff.Reset(h.key)
	h.rec.busy.Store(h.key, struct{}{})
	if !h.rec.Attentive(ctx, h.key) {
		t.Error("an object being reconciled now is not attentive: a change it has not read would be lost")
	}
	h.rec.busy.Delete(h.key)

	b := h.get()
	b.Generation = 2
	if err := h.client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if !h.rec.Attentive(ctx, h.key) {
		t.Error("an object whose spec changed since its last sync is not attentive")
	}
	b = h.get()
	b.Generation = 1
	if err := h.client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	b = h.get()
	SetSyncState(&b.Status.CommonStatus, v1alpha1.ConditionOrphan, "ProductNotSynced", "waiting", 1)
	if err := h.client.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if !h.rec.Attentive(ctx, h.key) {
		t.Error("an Orphan object is not attentive")
	}

	if err := h.client.Delete(ctx, h.get()); err != nil {
		t.Fatal(err)
	}
	if b := h.get(); b.DeletionTimestamp.IsZero() || !h.rec.Attentive(ctx, h.key) {
		t.Error("an object being deleted (waiting for what uses it to go) is not attentive")
	}
}

func TestStatusPatchHoldsOnlyTheStatusDifference(t *testing.T) {
	before := newBackend()
	before.Status.BackendID = 42
	before.Status.SystemName = "pets"
	after := before.DeepCopy()
	after.Annotations = map[string]string{"a": "b"}
	if p, err := statusPatch(before, after); err != nil || p != nil {
		t.Errorf("a metadata change only: patch %s, %v; want none", p, err)
	}
	after.Status.SystemName = ""
	after.Status.BackendID = 43
	p, err := statusPatch(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(p), `{"status":{"backendID":43,"systemName":null}}`; got != want {
		t.Errorf("patch %s, want %s", got, want)
	}
}

// What the engine writes before a first create (its finalizer, the create-pending marker) is all a
// dependency's update may change for its dependants to sleep on: its spec, status, labels and deletion
// wake them, and so does another writer's finalizer or annotation.
func TestEngineMetadataOnly(t *testing.T) {
	before := newBackend()
	marked := before.DeepCopy()
	marked.Finalizers = []string{Finalizer}
	marked.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "acme#1#uid"}
	marked.ResourceVersion = "7"
	if !EngineMetadataOnly(before, marked) {
		t.Error("the engine's finalizer and create-pending marker wake the dependants")
	}
	for name, change := range map[string]func(*v1alpha1.Backend){
		"spec":       func(b *v1alpha1.Backend) { b.Generation++ },
		"status":     func(b *v1alpha1.Backend) { b.Status.BackendID = 42 },
		"labels":     func(b *v1alpha1.Backend) { b.Labels = map[string]string{"shard": "b"} },
		"deletion":   func(b *v1alpha1.Backend) { now := metav1.Now(); b.DeletionTimestamp = &now },
		"finalizer":  func(b *v1alpha1.Backend) { b.Finalizers = append(b.Finalizers, "example.com/other") },
		"annotation": func(b *v1alpha1.Backend) { b.Annotations[v1alpha1.SyncNowAnnotation] = "1" },
	} {
		changed := marked.DeepCopy()
		change(changed)
		if EngineMetadataOnly(before, changed) {
			t.Errorf("a change of the %s does not wake the dependants", name)
		}
	}
}
