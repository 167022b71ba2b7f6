package controllers

import (
	"slices"
	"strings"
	"testing"
)

// TestDeletionOrderFollowsTheGraph: every kind comes before the kinds it references; a cycle is refused
// with its kinds named.
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
	cyclic := append(slices.Clone(referenceGraph), reference{From: "Product", To: "Application", Field: "spec.x"})
	if _, err := deletionOrder(cyclic); err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "Application") {
		t.Errorf("a cycle gave %v", err)
	}
}
