package controllers

import (
	"slices"
	"testing"
)

// TestDeletionOrderFollowsTheGraph: every kind comes before the kinds it references; a cycle is refused
// naming the cycle, and only it.
func TestDeletionOrderFollowsTheGraph(t *testing.T) {
	order, err := deletionOrder(referenceGraph)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range referenceGraph {
		if slices.Index(order, r.From) > slices.Index(order, r.To) {
			t.Errorf("%s goes after %s, which it references (%s): order %v", r.From, r.To, r.Field, order)
		}
	}
	for _, tc := range []struct {
		extra []reference
		want  string
	}{
		{[]reference{{From: "Product", To: "Application", Field: "spec.x"}}, "Application → ApplicationPlan → Product → Application"},
		{[]reference{{From: "Backend", To: "Backend", Field: "spec.x"}}, "Backend → Backend"},
		{[]reference{{From: "DeveloperAccount", To: "ActiveDoc", Field: "spec.x"}, {From: "ActiveDoc", To: "Application", Field: "spec.y"}},
			"ActiveDoc → Application → DeveloperAccount → ActiveDoc"},
	} {
		_, err := deletionOrder(append(slices.Clone(referenceGraph), tc.extra...))
		// Only the cycle is named, not the kinds it references (Backend, DeveloperAccount...).
		if want := "the reference graph has a cycle: " + tc.want + ": no deletion order exists"; err == nil || err.Error() != want {
			t.Errorf("with %v: %v, want %q", tc.extra, err, want)
		}
	}
}
