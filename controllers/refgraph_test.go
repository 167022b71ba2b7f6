package controllers

import (
	"slices"
	"testing"
)

// TestDeletionOrderFollowsTheGraph: every kind comes before the kinds it references; a cycle is refused
// naming the cycle, and only it.
// TestCreationOrderFollowsTheGraph: every kind of the table of kinds is created after the kinds it
// references (diff plans them in that order, so that dependants resolve), ties in the table's order; a
// cycle fails as for the deletion order.
func TestCreationOrderFollowsTheGraph(t *testing.T) {
	order, err := creationOrder(referenceGraph)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != len(kinds) {
		t.Fatalf("creation order %v, want every kind of the table (%d)", order, len(kinds))
	}
	for _, r := range referenceGraph {
		if slices.Index(order, r.From) < slices.Index(order, r.To) {
			t.Errorf("%s goes before %s, which it references (%s): order %v", r.From, r.To, r.Field, order)
		}
	}
	want := []string{"CustomPolicyDefinition", "Backend", "Product", "ApplicationPlan", "ServicePlan", "FieldDefinition", "AccountPlan", "DeveloperAccount", "Application", "ActiveDoc", "TenantSettings", "AdminUser", "DeveloperPortal", "Tenant"}
	if !slices.Equal(order, want) {
		t.Errorf("creation order %v, want %v", order, want)
	}
	if _, err := creationOrder(append(slices.Clone(referenceGraph), reference{From: "Backend", To: "Backend", Field: "spec.x"})); err == nil {
		t.Error("creation order of a graph with a cycle: no error")
	}
}

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
