package engine

import "testing"

// A status write carries the statuses' difference alone: a field gone is null, a metadata change is no
// write.
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
