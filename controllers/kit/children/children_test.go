package children

import (
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// rulesSnapshot is a product's children with hits (1), list (2) and photos (3), and the rules given.
func rulesSnapshot(rules ...tsclient.MappingRule) *Snapshot {
	return &Snapshot{Metrics: map[string]tsclient.Metric{"hits": {ID: 1}, "photos": {ID: 3}},
		Methods: map[string]tsclient.Metric{"list": {ID: 2}}, Rules: rules}
}

// TestMatchRules: each spec rule takes the remote rule of its method, pattern and metric first, then a
// leftover one of its method and pattern (a metric change: an update), then a leftover one of its method
// and metric (a path change: an update), then a leftover one of its pattern and metric (a verb change: an
// update); each remote rule serves once.
func TestMatchRules(t *testing.T) {
	get := func(id, metric, position int64) tsclient.MappingRule {
		return tsclient.MappingRule{ID: id, HTTPMethod: "GET", Pattern: "/pets", MetricID: metric, Position: position}
	}
	spec := func(metric string) v1alpha1.MappingRuleSpec {
		return v1alpha1.MappingRuleSpec{HTTPMethod: "GET", Pattern: "/pets", MetricMethodRef: metric}
	}
	for name, c := range map[string]struct {
		remote []tsclient.MappingRule
		want   []v1alpha1.MappingRuleSpec
		ids    []int64 // the remote rule each spec rule gets, 0 for none
	}{
		"exact matches, whatever the order": {[]tsclient.MappingRule{get(10, 3, 1), get(11, 2, 2)}, []v1alpha1.MappingRuleSpec{spec("list"), spec("photos")}, []int64{11, 10}},
		"an exact match is not taken by an earlier fallback": {[]tsclient.MappingRule{get(10, 1, 1), get(11, 2, 2)},
			[]v1alpha1.MappingRuleSpec{spec("photos"), spec("list")}, []int64{10, 11}},
		"a changed metric updates the leftover rule": {[]tsclient.MappingRule{get(10, 1, 1)}, []v1alpha1.MappingRuleSpec{spec("photos")}, []int64{10}},
		"a remote rule serves once":                  {[]tsclient.MappingRule{get(10, 2, 1)}, []v1alpha1.MappingRuleSpec{spec("list"), spec("photos")}, []int64{10, 0}},
		"a copy in 3scale is left over":              {[]tsclient.MappingRule{get(10, 2, 1), get(11, 2, 2)}, []v1alpha1.MappingRuleSpec{spec("list")}, []int64{10}},
		"another pattern of the same metric is an update (a path renamed)": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "GET", Pattern: "/cats", MetricID: 2}},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{10}},
		"another pattern and another metric is no match": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "GET", Pattern: "/cats", MetricID: 3}},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{0}},
		"another verb is no match": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "POST", Pattern: "/cats", MetricID: 2}},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{0}},
		"another verb of the same pattern and metric is an update (a verb changed)": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "POST", Pattern: "/pets", MetricID: 2}},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{10}},
		"the same verb first, then another verb": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "POST", Pattern: "/pets", MetricID: 2}, {ID: 11, HTTPMethod: "GET", Pattern: "/dogs", MetricID: 2}},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{11}},
		"the same pattern first, then the same metric": {[]tsclient.MappingRule{{ID: 10, HTTPMethod: "GET", Pattern: "/cats", MetricID: 2}, get(11, 3, 2)},
			[]v1alpha1.MappingRuleSpec{spec("list")}, []int64{11}},
	} {
		snap := rulesSnapshot(c.remote...)
		got := matchRules(snap, c.want)
		for i, r := range got {
			id := int64(0)
			if r != nil {
				id = r.ID
			}
			if id != c.ids[i] {
				t.Errorf("%s: spec rule %d matched remote rule %d, want %d", name, i, id, c.ids[i])
			}
		}
	}
	// Order: two rules of one pattern swapped are out of order.
	snap := rulesSnapshot(get(10, 2, 1), get(11, 3, 2))
	if i := rulesInOrder(snap.Rules, []v1alpha1.MappingRuleSpec{spec("photos"), spec("list")}, snap.MetricID); i != 0 {
		t.Errorf("swapped rules of one pattern: first out of place %d, want 0", i)
	}
	if i := rulesInOrder(snap.Rules, []v1alpha1.MappingRuleSpec{spec("list"), spec("photos")}, snap.MetricID); i != -1 {
		t.Errorf("rules in order: first out of place %d, want -1", i)
	}
}

// TestSpecOfLeavesOutRulesTheSpecCannotHold: a second rule of the same method, pattern and metric (porta
// keeps copies) and a rule of a metric 3scale does not list are left out of the spec (and of an export), and said.
func TestSpecOfLeavesOutRulesTheSpecCannotHold(t *testing.T) {
	snap := rulesSnapshot(
		tsclient.MappingRule{ID: 10, HTTPMethod: "GET", Pattern: "/pets", MetricID: 2, Delta: 1},
		tsclient.MappingRule{ID: 11, HTTPMethod: "GET", Pattern: "/pets", MetricID: 3, Delta: 1},
		tsclient.MappingRule{ID: 12, HTTPMethod: "GET", Pattern: "/pets", MetricID: 2, Delta: 2},
		tsclient.MappingRule{ID: 13, HTTPMethod: "GET", Pattern: "/gone", MetricID: 99, Delta: 1})
	spec, left := SpecOf(snap, `Product "shop"`)
	rules := spec.Rules
	if len(rules) != 2 || rules[0].MetricMethodRef != "list" || rules[1].MetricMethodRef != "photos" {
		t.Errorf("rules exported: %+v, want GET /pets for list, then for photos", rules)
	}
	if said := strings.Join(left, "\n"); len(left) != 2 || !strings.Contains(said, `counts "list" a second time`) || !strings.Contains(said, "metric 99") {
		t.Errorf("left out: %q, want the copy and the rule of metric 99", left)
	}
}
