package engine

import (
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

// SetSyncState makes state (one of the sync condition types) the only True sync condition, with
// the reason and message given, and keeps Ready, Reconciling and Stalled consistent with it for kstatus:
// Ready is True iff Synced, Reconciling iff InSync or Orphan, Stalled iff Invalid. Every condition is
// stamped with generation. It reports whether the sync state, reason or message changed.
func SetSyncState(st *v1alpha1.CommonStatus, state, reason, message string, generation int64) bool {
	before := meta.FindStatusCondition(st.Conditions, state)
	changed := SyncState(st) != state || before == nil || before.Reason != reason || before.Message != message
	for _, t := range v1alpha1.SyncConditions {
		c := metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: message, ObservedGeneration: generation}
		if t == state {
			c.Status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, c)
	}
	// Ready is always present; Reconciling and Stalled only while True, as kstatus and Flux read them.
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: boolStatus(state == v1alpha1.ConditionSynced),
		Reason: state, Message: message, ObservedGeneration: generation})
	setOrRemove(st, v1alpha1.ConditionReconciling, state == v1alpha1.ConditionInSync || state == v1alpha1.ConditionOrphan, state, message, generation)
	setOrRemove(st, v1alpha1.ConditionStalled, state == v1alpha1.ConditionInvalid, state, message, generation)
	return changed
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
