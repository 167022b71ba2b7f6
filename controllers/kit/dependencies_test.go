package kit_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// TestUsableDependency: dependants build on a dependency that holds its remote object at its current
// generation, also while a drift check of it meets a passing failure (InSync); Orphan, Invalid, an
// unsynced generation or deletion stop them — but for a wait on the gateway at the current generation
// (MetricInUseByGateway): what dependants build upon is written then, and their own syncs (deploy,
// promotion) are what ends that wait, so they must not wait for it (issue 42, item 9); and for a wait
// while a plan still limits a metric removed (MetricStillLimited), which the plan's own sync ends, also
// on a first sync that adopted the object.
func TestUsableDependency(t *testing.T) {
	backendWaiting := func(state, reason string, id, observed, conditionGeneration int64, deleting bool) *v1alpha1.Backend {
		b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 2}}
		b.Status.BackendID, b.Status.ObservedGeneration, b.Status.SyncedHash = id, observed, "h"
		meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: state, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: conditionGeneration})
		if deleting {
			b.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return b
	}
	backend := func(state string, id, observed int64, deleting bool) *v1alpha1.Backend {
		return backendWaiting(state, "R", id, observed, 2, deleting)
	}
	gateway := v1alpha1.ReasonMetricInUseByGateway
	cases := map[string]struct {
		b    *v1alpha1.Backend
		want bool
	}{
		"Synced":                               {backend(v1alpha1.ConditionSynced, 7, 2, false), true},
		"InSync after a 503 in a drift check":  {backend(v1alpha1.ConditionInSync, 7, 2, false), true},
		"InSync on a new generation":           {backend(v1alpha1.ConditionInSync, 7, 1, false), false},
		"Orphan":                               {backend(v1alpha1.ConditionOrphan, 7, 2, false), false},
		"Invalid":                              {backend(v1alpha1.ConditionInvalid, 7, 2, false), false},
		"never created":                        {backend(v1alpha1.ConditionInSync, 0, 2, false), false},
		"being deleted":                        {backend(v1alpha1.ConditionSynced, 7, 2, true), false},
		"waiting on the gateway":               {backendWaiting(v1alpha1.ConditionOrphan, gateway, 7, 1, 2, false), true},
		"waiting on the gateway, older gen.":   {backendWaiting(v1alpha1.ConditionOrphan, gateway, 7, 1, 1, false), false},
		"waiting on the gateway, deleted":      {backendWaiting(v1alpha1.ConditionOrphan, gateway, 7, 1, 2, true), false},
		"Orphan for another reason":            {backendWaiting(v1alpha1.ConditionOrphan, v1alpha1.ReasonBackendNotSynced, 7, 1, 2, false), false},
		"waiting while a plan limits a metric": {backendWaiting(v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricStillLimited, 7, 1, 2, false), true},
		// A first sync (an adoption) that wrote all but a removal has no synced hash yet: still usable, or
		// the plan that must drop its limit would wait for it.
		"adopted, waiting while a plan limits a metric": {firstSync(backendWaiting(v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricStillLimited, 7, 0, 2, false)), true},
		"adopted, waiting on the gateway":               {firstSync(backendWaiting(v1alpha1.ConditionOrphan, gateway, 7, 0, 2, false)), true},
		"first sync, Orphan for another reason":         {firstSync(backendWaiting(v1alpha1.ConditionOrphan, v1alpha1.ReasonBackendNotSynced, 7, 0, 2, false)), false},
		"first sync, InSync":                            {firstSync(backend(v1alpha1.ConditionInSync, 7, 2, false)), false},
	}
	for name, tc := range cases {
		if got := kit.Usable(tc.b, tc.b.Status.CommonStatus, tc.b.Status.BackendID); got != tc.want {
			t.Errorf("%s: usable = %v, want %v", name, got, tc.want)
		}
	}
}

// firstSync is b as its first sync left it: no synced hash yet.
func firstSync(b *v1alpha1.Backend) *v1alpha1.Backend {
	b.Status.SyncedHash = ""
	return b
}
