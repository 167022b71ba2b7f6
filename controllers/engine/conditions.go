package engine

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// SyncState returns the sync condition type that is True (InSync, Orphan, Synced or Invalid), or ""
// when none is set yet.
func SyncState(st *v1alpha1.CommonStatus) string {
	for _, t := range v1alpha1.SyncConditions {
		if meta.IsStatusConditionTrue(st.Conditions, t) {
			return t
		}
	}
	return ""
}

// SetSyncState makes state (one of the sync condition types) the only sync condition, True, with the
// reason and message given (the other three are removed, not kept False: every reader — kstatus, the
// Argo CD health check, kubectl wait, `kubectl apimsync status` — looks for the True one, and three False
// copies of the message were half of each status write's size, which the API server decodes, validates,
// tracks in managedFields and stores at every write), and keeps Ready, Reconciling and Stalled consistent
// with it for kstatus: Ready is True iff Synced, Reconciling iff InSync or Orphan, Stalled iff Invalid.
// Every condition is stamped with generation. It reports whether the sync state, reason or message
// changed.
func SetSyncState(st *v1alpha1.CommonStatus, state, reason, message string, generation int64) bool {
	before := meta.FindStatusCondition(st.Conditions, state)
	changed := SyncState(st) != state || before == nil || before.Reason != reason || before.Message != message
	for _, t := range v1alpha1.SyncConditions {
		setOrRemove(st, t, t == state, reason, message, generation)
	}
	// Ready is always present; Reconciling and Stalled only while True, as kstatus and Flux read them.
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: boolStatus(state == v1alpha1.ConditionSynced),
		Reason: state, Message: message, ObservedGeneration: generation})
	setOrRemove(st, v1alpha1.ConditionReconciling, state == v1alpha1.ConditionInSync || state == v1alpha1.ConditionOrphan, state, message, generation)
	setOrRemove(st, v1alpha1.ConditionStalled, state == v1alpha1.ConditionInvalid, state, message, generation)
	// One order whatever the path: the sync condition, then Ready, Reconciling, Stalled, then any other.
	slices.SortStableFunc(st.Conditions, func(a, b metav1.Condition) int { return conditionRank(a.Type) - conditionRank(b.Type) })
	return changed
}

// conditionOrder is the order of the engine's conditions in a status.
var conditionOrder = append(slices.Clone(v1alpha1.SyncConditions), v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled)

// conditionRank is where a condition of type t goes: its place in conditionOrder, any other last.
func conditionRank(t string) int {
	if i := slices.Index(conditionOrder, t); i >= 0 {
		return i
	}
	return len(conditionOrder)
}

func setOrRemove(st *v1alpha1.CommonStatus, condition string, on bool, reason, message string, generation int64) {
	if !on {
		meta.RemoveStatusCondition(&st.Conditions, condition)
		return
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: condition, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: generation})
}

func boolStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}
