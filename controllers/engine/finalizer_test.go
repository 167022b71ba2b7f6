package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestFinalizerRemovalNeverDropsAForeignOne: the reconcile works from a stale copy that predates another
// controller's finalizer (the cache lags); removing ours must not write that stale list back. The
// optimistic lock makes the patch conflict, and the next reconcile, from a fresh copy, removes only ours.
func TestFinalizerRemovalNeverDropsAForeignOne(t *testing.T) {
	h := createdThenDeleted(t)
	stale := h.get()
	fresh := h.get()
	fresh.Finalizers = append(fresh.Finalizers, "example.com/foreign")
	if err := h.client.Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			stale.DeepCopyInto(o.(*v1alpha1.Backend))
			return nil
		}})
	_, _ = h.reconcile() // a conflict: requeued
	if got := h.get().Finalizers; !slices.Contains(got, "example.com/foreign") {
		t.Fatalf("finalizers %v after a reconcile from a stale copy: the foreign one was dropped", got)
	}
	h.rec.Client = h.client
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.get().Finalizers; !slices.Equal(got, []string{"example.com/foreign"}) {
		t.Errorf("finalizers %v, want only the foreign one left", got)
	}
	if h.syncer.calls["Delete"] != 1 {
		t.Errorf("Delete called %d times, want 1", h.syncer.calls["Delete"])
	}
}

// TestDependantsMessageIsBounded: an owner of many dependants names the first ten of each kind and
// counts the rest, so that its condition stays within the API's message size.
func TestDependantsMessageIsBounded(t *testing.T) {
	var names []string
	for i := range 25 {
		names = append(names, fmt.Sprintf("app-%02d", i))
	}
	got := dependantsMessage([]string{"Application"}, map[string][]string{"Application": names})
	want := "deleting 25 applications first: app-00, app-01, app-02, app-03, app-04, app-05, app-06, app-07, app-08, app-09 and 15 more"
	if got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
