package engine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestKstatusReadsLifecycle checks that Flux / kstatus read the sync conditions the engine writes:
// Synced is Current, InSync and Orphan are InProgress, Invalid is Failed, and a Synced object whose
// generation was not observed yet is InProgress.
func TestKstatusReadsLifecycle(t *testing.T) {
	cases := map[string]struct {
		state       string
		generation  int64
		observedGen int64
		want        status.Status
	}{
		"Synced is Current":                    {state: v1alpha1.ConditionSynced, generation: 2, observedGen: 2, want: status.CurrentStatus},
		"InSync is InProgress":                 {state: v1alpha1.ConditionInSync, generation: 2, observedGen: 1, want: status.InProgressStatus},
		"Orphan is InProgress":                 {state: v1alpha1.ConditionOrphan, generation: 2, observedGen: 1, want: status.InProgressStatus},
		"Invalid is Failed":                    {state: v1alpha1.ConditionInvalid, generation: 2, observedGen: 2, want: status.FailedStatus},
		"Synced at an older generation is not": {state: v1alpha1.ConditionSynced, generation: 3, observedGen: 2, want: status.InProgressStatus},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &v1alpha1.Product{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Product"},
				ObjectMeta: metav1.ObjectMeta{Name: "pets", Namespace: "team-a", Generation: tc.generation},
			}
			SetSyncState(&p.Status.CommonStatus, tc.state, "Reason", "message", tc.observedGen)
			p.Status.ObservedGeneration = tc.observedGen
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := status.Compute(&unstructured.Unstructured{Object: u})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s", res.Status, res.Message, tc.want)
			}
		})
	}
}
