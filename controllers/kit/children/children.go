// Package children syncs what Backends and Products share: their metrics, methods and mapping rules,
// read and written the same way under either scope, and read back into a spec by export.
package children

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// HitsMetric is the system name of the metric 3scale creates with every product and backend.
const HitsMetric = "hits"

// Snapshot is the remote state of the metrics, methods and mapping rules of one product or backend.
type Snapshot struct {
	Metrics map[string]tsclient.Metric // by system name, methods excluded
	Methods map[string]tsclient.Metric // by system name
	Rules   []tsclient.MappingRule
}

// Holder is a snapshot that holds a Snapshot of children (a Product's, a Backend's): a plan reads its
// metrics' ids from the cache through it.
type Holder interface{ ChildrenSnapshot() *Snapshot }

// Spec is the desired state of the metrics, methods and mapping rules of one product or backend.
type Spec struct {
	Metrics map[string]v1alpha1.MetricSpec
	Methods map[string]v1alpha1.MethodSpec
	Rules   []v1alpha1.MappingRuleSpec
}

// HitsID returns the id of the hits metric, 0 if absent.
func (s *Snapshot) HitsID() int64 { return s.Metrics[HitsMetric].ID }

// metricID returns the id of a metric or method by system name, 0 if absent.
func (s *Snapshot) MetricID(systemName string) int64 {
	if m, ok := s.Metrics[systemName]; ok {
		return m.ID
	}
	return s.Methods[systemName].ID
}

// Read reads the metrics, methods and mapping rules of a product or backend.
func Read(ctx context.Context, c *tsclient.Client, scope tsclient.Scope) (*Snapshot, error) {
	snap, err := readMetrics(ctx, c, scope)
	if err != nil {
		return nil, err
	}
	if len(snap.Methods) == 0 && snap.HitsID() != 0 {
		// Some lists leave methods out: read them under hits.
		methods, err := c.ListMethods(ctx, scope, snap.HitsID())
		if err != nil {
			return nil, fmt.Errorf("cannot list methods: %w", err)
		}
		for _, m := range methods {
			snap.Methods[m.SystemName] = m
		}
	}
	rules, err := c.ListMappingRules(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("cannot list mapping rules: %w", err)
	}
	snap.Rules = rules
	return snap, nil
}

// readMetrics reads the metrics (and the methods the list holds) of a product or backend.
func readMetrics(ctx context.Context, c *tsclient.Client, scope tsclient.Scope) (*Snapshot, error) {
	all, err := c.ListMetrics(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("cannot list metrics: %w", err)
	}
	snap := &Snapshot{Metrics: map[string]tsclient.Metric{}, Methods: map[string]tsclient.Metric{}}
	for _, m := range all {
		if m.ParentID != 0 {
			snap.Methods[m.SystemName] = m
		} else {
			snap.Metrics[m.SystemName] = m
		}
	}
	return snap, nil
}

// ReadNew reads the children of a product or backend this reconcile has just created, which
// hold only what 3scale puts in a new one: the hits metric (read for its id) and, for a product, the
// default mapping rule GET / (Proxy#create_default_proxy_rule, read for its id). No methods: nothing to
// list.
func ReadNew(withRules bool) func(context.Context, *tsclient.Client, tsclient.Scope) (*Snapshot, error) {
	return func(ctx context.Context, c *tsclient.Client, scope tsclient.Scope) (*Snapshot, error) {
		snap, err := readMetrics(ctx, c, scope)
		if err != nil {
			return nil, err
		}
		if withRules {
			if snap.Rules, err = c.ListMappingRules(ctx, scope); err != nil {
				return nil, fmt.Errorf("cannot list mapping rules: %w", err)
			}
		}
		return snap, nil
	}
}

// UpToDate reports whether the remote children match the spec.
func UpToDate(snap *Snapshot, want Spec) bool {
	n := 0
	for name, m := range want.Metrics {
		r, ok := snap.Metrics[name]
		if !ok || !metricMatches(r, m.FriendlyName, m.Unit, m.Description) {
			return false
		}
		n++
	}
	if _, listed := want.Metrics[HitsMetric]; !listed {
		n++ // hits is always there and never removed
	}
	if n != len(snap.Metrics) {
		return false
	}
	for name, m := range want.Methods {
		r, ok := snap.Methods[name]
		if !ok || !metricMatches(r, m.FriendlyName, r.Unit, m.Description) {
			return false
		}
	}
	if len(want.Methods) != len(snap.Methods) {
		return false
	}
	if len(want.Rules) != len(snap.Rules) {
		return false
	}
	for i, r := range matchRules(snap, want.Rules) {
		if r == nil || !ruleMatches(*r, want.Rules[i], snap.MetricID(want.Rules[i].MetricMethodRef)) {
			return false
		}
	}
	return !orderMatters(want.Rules) || rulesInOrder(snap.Rules, want.Rules, snap.MetricID) < 0
}

// orderMatters reports whether the order of mapping rules changes what 3scale counts: only a rule marked
// last stops the rules after it from matching; without one, every rule that matches a call counts it,
// in whatever order. So 3scale's order is made the spec's only then: a product whose rules were written in
// another order (3scale-operator generates an OpenAPI's rules in Go's random map order) is left as it
// is, with no write.
func orderMatters(want []v1alpha1.MappingRuleSpec) bool {
	return slices.ContainsFunc(want, func(w v1alpha1.MappingRuleSpec) bool { return w.Last })
}

// rulesInOrder compares the order of the remote rules (by position, then id) with the spec's and
// returns the index of the first spec rule out of place, -1 when the order is the spec's. Only the order
// matters: porta renumbers positions as rules come and go.
func rulesInOrder(remote []tsclient.MappingRule, want []v1alpha1.MappingRuleSpec, metricID func(string) int64) int {
	sorted := slices.Clone(remote)
	slices.SortStableFunc(sorted, func(a, b tsclient.MappingRule) int {
		if c := cmp.Compare(a.Position, b.Position); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for i, w := range want {
		if i >= len(sorted) || sorted[i].HTTPMethod != w.HTTPMethod || sorted[i].Pattern != w.Pattern || sorted[i].MetricID != metricID(w.MetricMethodRef) {
			return i
		}
	}
	return -1
}

func metricMatches(r tsclient.Metric, friendlyName, unit, description string) bool {
	return r.FriendlyName == friendlyName && r.Unit == unit && r.Description == description
}

// matchRules pairs each spec rule with a remote rule (nil: none), each remote rule used once. A rule is
// identified by method, pattern and the metric it counts (3scale keeps several rules of one method and
// pattern, for several metrics); a spec rule left over then takes a remote rule of its method and pattern
// left over too, so that changing a rule's metric is an update, not a deletion and a creation; one still
// left over takes a remote rule of its method and metric left over, so that a new path for the same
// operation (an OpenAPI document's path renamed) is one update too; and one still left over takes a
// remote rule of its pattern and metric under another method (an operation's verb changed: porta updates
// a rule's http_method in place).
func matchRules(snap *Snapshot, want []v1alpha1.MappingRuleSpec) []*tsclient.MappingRule {
	out := make([]*tsclient.MappingRule, len(want))
	used := make([]bool, len(snap.Rules))
	passes := []func(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, metricID int64) bool{
		func(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, metricID int64) bool {
			return r.HTTPMethod == w.HTTPMethod && r.Pattern == w.Pattern && r.MetricID == metricID
		},
		func(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, _ int64) bool {
			return r.HTTPMethod == w.HTTPMethod && r.Pattern == w.Pattern
		},
		func(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, metricID int64) bool {
			return r.HTTPMethod == w.HTTPMethod && r.MetricID == metricID
		},
		func(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, metricID int64) bool {
			return r.Pattern == w.Pattern && r.MetricID == metricID
		},
	}
	for _, same := range passes {
		for i, w := range want {
			if out[i] != nil {
				continue
			}
			metricID := snap.MetricID(w.MetricMethodRef)
			for j, r := range snap.Rules {
				if !used[j] && same(r, w, metricID) {
					used[j], out[i] = true, &snap.Rules[j]
					break
				}
			}
		}
	}
	return out
}

func ruleMatches(r tsclient.MappingRule, w v1alpha1.MappingRuleSpec, metricID int64) bool {
	return r.HTTPMethod == w.HTTPMethod && r.Pattern == w.Pattern && r.MetricID == metricID && r.Delta == int64(increment(w)) && r.Last == w.Last
}

func increment(w v1alpha1.MappingRuleSpec) int32 {
	if w.Increment < 1 {
		return 1
	}
	return w.Increment
}

// Upsert makes the remote metrics, methods and mapping rules match the spec but for the removal
// of metrics and methods (Remove), writing only what differs, in an order 3scale accepts: metrics
// and methods first, then rules (rules before the metrics they count go). snap is updated as it goes, so
// it stays a faithful snapshot on success. Callers deploy between the two: porta refuses to delete a
// metric that the latest gateway configuration counts.
func Upsert(ctx context.Context, c *tsclient.Client, scope tsclient.Scope, snap *Snapshot, want Spec) error {
	for _, name := range kit.SortedKeys(want.Metrics) {
		m := want.Metrics[name]
		p := tsclient.MetricParams{SystemName: name, FriendlyName: m.FriendlyName, Unit: m.Unit, Description: m.Description}
		r, ok := snap.Metrics[name]
		switch {
		case !ok:
			created, err := c.CreateMetric(ctx, scope, p)
			if err != nil {
				return fmt.Errorf("cannot create metric %q: %w", name, err)
			}
			snap.Metrics[name] = *created
		case !metricMatches(r, m.FriendlyName, m.Unit, m.Description):
			p.SystemName = "" // immutable in 3scale
			updated, err := c.UpdateMetric(ctx, scope, r.ID, p)
			if err != nil {
				return fmt.Errorf("cannot update metric %q: %w", name, err)
			}
			snap.Metrics[name] = *updated
		}
	}
	hits := snap.HitsID()
	for _, name := range kit.SortedKeys(want.Methods) {
		m := want.Methods[name]
		p := tsclient.MethodParams{SystemName: name, FriendlyName: m.FriendlyName, Description: m.Description}
		r, ok := snap.Methods[name]
		switch {
		case !ok:
			if hits == 0 {
				return fmt.Errorf("cannot create method %q: the hits metric is missing in 3scale", name)
			}
			created, err := c.CreateMethod(ctx, scope, hits, p)
			if err != nil {
				return fmt.Errorf("cannot create method %q: %w", name, err)
			}
			snap.Methods[name] = *created
		case !metricMatches(r, m.FriendlyName, r.Unit, m.Description):
			p.SystemName = ""
			updated, err := c.UpdateMethod(ctx, scope, hits, r.ID, p)
			if err != nil {
				return fmt.Errorf("cannot update method %q: %w", name, err)
			}
			snap.Methods[name] = *updated
		}
	}
	return syncMappingRules(ctx, c, scope, snap, want.Rules)
}

// Written reports whether 3scale holds everything the spec wants, leaving aside the metrics and methods
// it no longer has (removalsPending): what a gateway configuration is built from is in place.
func Written(snap *Snapshot, want Spec) bool {
	if !removalsPending(snap, want) {
		return UpToDate(snap, want)
	}
	kept := snap.Clone()
	for name := range kept.Methods {
		if _, ok := want.Methods[name]; !ok {
			delete(kept.Methods, name)
		}
	}
	for name := range kept.Metrics {
		if _, ok := want.Metrics[name]; !ok && name != HitsMetric {
			delete(kept.Metrics, name)
		}
	}
	return UpToDate(kept, want)
}

// removalsPending reports whether 3scale holds metrics or methods the spec no longer has.
func removalsPending(snap *Snapshot, want Spec) bool {
	for name := range snap.Methods {
		if _, ok := want.Methods[name]; !ok {
			return true
		}
	}
	for name := range snap.Metrics {
		if _, ok := want.Metrics[name]; !ok && name != HitsMetric {
			return true
		}
	}
	return false
}

// Plans lists the application plans that may limit or price a scope's metrics and methods: a product's
// own plans for its metrics, every plan of the tenant for a backend's (any product using it may).
type Plans func(ctx context.Context) ([]tsclient.ApplicationPlan, error)

// Remove deletes the metrics and methods the spec no longer has, methods first. Two things keep one:
//   - a plan still limits or prices it: porta would delete those limits and pricing rules with it
//     (Metric has_many usage_limits and pricing_rules, dependent: :destroy, app/models/metric.rb), so it is
//     kept, and the object waits (reason MetricStillLimited) naming the plans, until none does. Checked
//     from what 3scale holds now, whoever made the plan (an ApplicationPlan, the admin portal): reads
//     the plans' limits and pricing rules, only when something is to be removed.
//   - porta refuses to delete one that the latest staging or production configuration of a product still
//     counts with a mapping rule (Metric#avoid_destruction, app/models/metric.rb:224-242): that refusal is
//     a wait (reason MetricInUseByGateway), never Invalid, whose message says what lets it go.
func Remove(ctx context.Context, c *tsclient.Client, scope tsclient.Scope, snap *Snapshot, want Spec, plans Plans) error {
	removed := map[int64]string{} // id → "method x" / "metric x"
	for name, m := range snap.Methods {
		if _, ok := want.Methods[name]; !ok {
			removed[m.ID] = fmt.Sprintf("method %q", name)
		}
	}
	for name, m := range snap.Metrics {
		if _, ok := want.Metrics[name]; !ok && name != HitsMetric {
			removed[m.ID] = fmt.Sprintf("metric %q", name)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	if err := checkNotLimited(ctx, c, plans, removed); err != nil {
		return err
	}
	hits := snap.HitsID()
	inUse := func(kind, name string, err error) error {
		if tsclient.IsInUse(err) {
			return engine.Waiting(v1alpha1.ReasonMetricInUseByGateway,
				"3scale keeps %s %q while the latest gateway configuration of staging or production still counts it: "+
					"it goes once production runs a configuration built without its mapping rules (see spec.production, or promote in the admin portal)", kind, name)
		}
		return fmt.Errorf("cannot delete %s %q: %w", kind, name, err)
	}
	for _, name := range kit.SortedKeys(snap.Methods) {
		if _, ok := want.Methods[name]; !ok {
			if err := kit.IgnoreNotFound(c.DeleteMethod(ctx, scope, hits, snap.Methods[name].ID)); err != nil {
				return inUse("method", name, err)
			}
			delete(snap.Methods, name)
		}
	}
	for _, name := range kit.SortedKeys(snap.Metrics) {
		if _, ok := want.Metrics[name]; !ok && name != HitsMetric {
			if err := kit.IgnoreNotFound(c.DeleteMetric(ctx, scope, snap.Metrics[name].ID)); err != nil {
				return inUse("metric", name, err)
			}
			delete(snap.Metrics, name)
		}
	}
	return nil
}

// checkNotLimited returns a wait naming the plans that limit or price a metric or method about to be
// removed (by id), nil when none does.
func checkNotLimited(ctx context.Context, c *tsclient.Client, plans Plans, removed map[int64]string) error {
	all, err := plans(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the plans that may limit what is removed: %w", err)
	}
	var held []string
	for _, p := range all {
		limits, err := c.ListLimits(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("cannot list the limits of plan %q: %w", p.SystemName, err)
		}
		rules, err := c.ListPricingRules(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("cannot list the pricing rules of plan %q: %w", p.SystemName, err)
		}
		uses := map[string]bool{}
		for _, l := range limits {
			if what, ok := removed[l.MetricID]; ok {
				uses[what] = true
			}
		}
		for _, r := range rules {
			if what, ok := removed[r.MetricID]; ok {
				uses[what] = true
			}
		}
		for _, what := range kit.SortedKeys(uses) {
			held = append(held, fmt.Sprintf("plan %q limits or prices %s", p.SystemName, what))
		}
	}
	if len(held) == 0 {
		return nil
	}
	slices.Sort(held)
	return engine.Waiting(v1alpha1.ReasonMetricStillLimited, "nothing is removed while a plan still uses it (3scale would delete the plan's limits and pricing rules with it): %s; "+
		"remove those limits and pricing rules from the plan (its ApplicationPlan, or in the admin portal), and the removal goes on", strings.Join(held, ", "))
}

// syncMappingRules creates, updates and deletes mapping rules; a rule is identified by method, pattern and
// metric (matchRules).
func syncMappingRules(ctx context.Context, c *tsclient.Client, scope tsclient.Scope, snap *Snapshot, want []v1alpha1.MappingRuleSpec) error {
	for _, w := range want { // before any write: a rule of a missing metric stops the sync, with nothing half done
		if snap.MetricID(w.MetricMethodRef) == 0 {
			return fmt.Errorf("cannot sync mapping rule %s %s: metric %q is missing in 3scale", w.HTTPMethod, w.Pattern, w.MetricMethodRef)
		}
	}
	kept := make([]tsclient.MappingRule, 0, len(want))
	matched := matchRules(snap, want)
	for i, w := range want {
		metricID := snap.MetricID(w.MetricMethodRef)
		p := tsclient.MappingRuleParams{HTTPMethod: w.HTTPMethod, Pattern: w.Pattern, MetricID: metricID, Delta: int64(increment(w)), Last: &w.Last,
			Position: int64(len(kept) + 1)}
		switch {
		case matched[i] == nil:
			created, err := c.CreateMappingRule(ctx, scope, p)
			if err != nil {
				return fmt.Errorf("cannot create mapping rule %s: %w", ruleName(w), err)
			}
			kept = append(kept, *created)
		case !ruleMatches(*matched[i], w, metricID):
			updated, err := c.UpdateMappingRule(ctx, scope, matched[i].ID, p)
			if err != nil {
				return fmt.Errorf("cannot update mapping rule %s: %w", ruleName(w), err)
			}
			kept = append(kept, *updated)
		default:
			kept = append(kept, *matched[i])
		}
	}
	for _, r := range snap.Rules {
		if !containsRule(kept, r.ID) {
			if err := kit.IgnoreNotFound(c.DeleteMappingRule(ctx, scope, r.ID)); err != nil {
				return fmt.Errorf("cannot delete mapping rule %s %s: %w", r.HTTPMethod, r.Pattern, err)
			}
		}
	}
	// Then the order, where it matters: from the first rule out of place on, each gets its position in the
	// spec (porta moves the rule there and shifts the others, so setting them in spec order leaves the
	// spec's order).
	if first := rulesInOrder(kept, want, snap.MetricID); first >= 0 && orderMatters(want) {
		for i := first; i < len(want); i++ {
			w := want[i]
			p := tsclient.MappingRuleParams{HTTPMethod: w.HTTPMethod, Pattern: w.Pattern, MetricID: kept[i].MetricID, Delta: int64(increment(w)),
				Last: &w.Last, Position: int64(i + 1)}
			updated, err := c.UpdateMappingRule(ctx, scope, kept[i].ID, p)
			if err != nil {
				return fmt.Errorf("cannot move mapping rule %s to position %d: %w", ruleName(w), i+1, err)
			}
			kept[i] = *updated
		}
		for i := range kept {
			kept[i].Position = int64(i + 1) // what porta has now, whatever it answered mid-way
		}
	}
	snap.Rules = kept
	return nil
}

// ruleName names a spec rule in a message: "GET /pets$ (list_pets)".
func ruleName(w v1alpha1.MappingRuleSpec) string {
	return fmt.Sprintf("%s %s (%s)", w.HTTPMethod, w.Pattern, w.MetricMethodRef)
}

func containsRule(rules []tsclient.MappingRule, id int64) bool {
	for _, r := range rules {
		if r.ID == id {
			return true
		}
	}
	return false
}

// Invalid checks what the schema may not have: every rule names a known metric or method.
func Invalid(want Spec) error {
	for _, r := range want.Rules {
		_, isMetric := want.Metrics[r.MetricMethodRef]
		_, isMethod := want.Methods[r.MetricMethodRef]
		if r.MetricMethodRef != HitsMetric && !isMetric && !isMethod {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "mapping rule %s %s counts %q, which is neither a metric nor a method of this object", r.HTTPMethod, r.Pattern, r.MetricMethodRef)
		}
	}
	return nil
}

// SpecOf is the spec of spec.Metrics, spec.Methods and mapping rules that matches s (hits only when
// it differs from porta's; rules in porta's order). A rule the spec cannot hold (the same method,
// pattern and metric as one before it, which porta keeps; a metric porta no longer lists) is left out,
// and said in left.
func SpecOf(s *Snapshot, what string) (spec Spec, left []string) {
	names := map[int64]string{}
	for name, m := range s.Metrics {
		names[m.ID] = name
		if name == HitsMetric {
			continue // always there; UpToDate does not compare an unlisted hits
		}
		if spec.Metrics == nil {
			spec.Metrics = map[string]v1alpha1.MetricSpec{}
		}
		spec.Metrics[name] = v1alpha1.MetricSpec{FriendlyName: m.FriendlyName, Unit: m.Unit, Description: m.Description}
	}
	for name, m := range s.Methods {
		names[m.ID] = name
		if spec.Methods == nil {
			spec.Methods = map[string]v1alpha1.MethodSpec{}
		}
		spec.Methods[name] = v1alpha1.MethodSpec{FriendlyName: m.FriendlyName, Description: m.Description}
	}
	seen := map[string]bool{}
	for _, r := range s.Rules {
		key := r.HTTPMethod + " " + r.Pattern + " " + names[r.MetricID]
		switch {
		case names[r.MetricID] == "":
			left = append(left, fmt.Sprintf("%s: mapping rule %s %s counts metric %d, which 3scale does not list: left out (applying deletes it)",
				what, r.HTTPMethod, r.Pattern, r.MetricID))
		case seen[key]:
			left = append(left, fmt.Sprintf("%s: mapping rule %s %s counts %q a second time: left out (applying deletes the copy)",
				what, r.HTTPMethod, r.Pattern, names[r.MetricID]))
		default:
			seen[key] = true
			spec.Rules = append(spec.Rules, v1alpha1.MappingRuleSpec{HTTPMethod: r.HTTPMethod, Pattern: r.Pattern, MetricMethodRef: names[r.MetricID],
				Increment: int32(r.Delta), Last: r.Last})
		}
	}
	return spec, left
}
