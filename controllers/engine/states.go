package engine

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// StateTracker keeps the sync state of every object it saw so that the apimsync_objects gauge counts
// objects by kind and state.
type StateTracker struct {
	mu     sync.Mutex
	states map[string]map[types.NamespacedName]string
}

// NewStateTracker returns an empty tracker.
func NewStateTracker() *StateTracker {
	return &StateTracker{states: map[string]map[types.NamespacedName]string{}}
}

// Set records the state of one object and moves it between the gauge's series.
func (t *StateTracker) Set(kind string, id types.NamespacedName, state string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byID := t.states[kind]
	if byID == nil {
		byID = map[types.NamespacedName]string{}
		t.states[kind] = byID
	}
	old, seen := byID[id]
	if seen && old == state {
		return
	}
	if seen && old != "" {
		ObjectsByState.WithLabelValues(kind, old).Dec()
	}
	byID[id] = state
	if state != "" {
		ObjectsByState.WithLabelValues(kind, state).Inc()
	}
}

// Delete forgets an object that is gone.
func (t *StateTracker) Delete(kind string, id types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.states[kind][id]; ok {
		if old != "" {
			ObjectsByState.WithLabelValues(kind, old).Dec()
		}
		delete(t.states[kind], id)
	}
}
