package applicationplan

// An ApplicationPlan's limits and pricing rules: checked, compared with 3scale's and written.

import (
	"context"
	"fmt"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// validatePlan checks what the schema may not: one limit per metric and period, no overlapping pricing
// ranges on a metric.
func validatePlan(a *v1alpha1.ApplicationPlan) error {
	seen := map[string]bool{}
	for _, l := range a.Spec.Limits {
		k := metricRefKey(l.MetricMethodRef) + "@" + string(l.Period)
		if seen[k] {
			return fmt.Errorf("two limits with period %q on metric %q; keep one", l.Period, l.MetricMethodRef.SystemName)
		}
		seen[k] = true
	}
	for i, r := range a.Spec.PricingRules {
		if r.From > r.To {
			return fmt.Errorf("pricingRules[%d]: from %d is greater than to %d", i, r.From, r.To)
		}
		for j := range i {
			o := a.Spec.PricingRules[j]
			if metricRefKey(o.MetricMethodRef) == metricRefKey(r.MetricMethodRef) && r.From <= o.To && o.From <= r.To {
				return fmt.Errorf("pricingRules[%d] (%d-%d) overlaps pricingRules[%d] (%d-%d) on metric %q", i, r.From, r.To, j, o.From, o.To, r.MetricMethodRef.SystemName)
			}
		}
	}
	return nil
}

func (s *Syncer) syncLimits(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, snap *Snapshot) error {
	c, id := sess.Remote, snap.Plan.ID
	want := map[string]tsclient.Limit{}
	for _, l := range mustLimits(a, snap) {
		if l.MetricID == 0 {
			return fmt.Errorf("a limit names a metric that is not in 3scale yet")
		}
		want[limitKey(l)] = l
	}
	kept := make([]tsclient.Limit, 0, len(want))
	for _, r := range snap.Limits {
		w, ok := want[limitKey(r)]
		switch {
		case !ok:
			if err := kit.IgnoreNotFound(c.DeleteLimit(ctx, id, r.MetricID, r.ID)); err != nil {
				return fmt.Errorf("cannot delete limit %d: %w", r.ID, err)
			}
			continue
		case w.Value != r.Value:
			updated, err := c.UpdateLimit(ctx, id, r.MetricID, r.ID, tsclient.LimitParams{Period: w.Period, Value: w.Value})
			if err != nil {
				return fmt.Errorf("cannot update limit %d: %w", r.ID, err)
			}
			r = *updated
		}
		delete(want, limitKey(r))
		kept = append(kept, r)
	}
	for _, k := range kit.SortedKeys(want) {
		w := want[k]
		created, err := c.CreateLimit(ctx, id, w.MetricID, tsclient.LimitParams{Period: w.Period, Value: w.Value})
		if err != nil {
			return fmt.Errorf("cannot create the %s limit of metric %d: %w", w.Period, w.MetricID, err)
		}
		kept = append(kept, *created)
	}
	snap.Limits = kept
	return nil
}

func (s *Syncer) syncPricing(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, snap *Snapshot) error {
	c, id := sess.Remote, snap.Plan.ID
	want := wantedPricing(a, snap)
	kept := make([]tsclient.PricingRule, 0, len(want))
	// Deletions first: a changed range must not overlap its old self.
	for _, r := range snap.PricingRules {
		k := pricingKey(r.MetricID, r.Min, r.Max, string(r.CostPerUnit))
		if _, ok := want[k]; !ok {
			if err := kit.IgnoreNotFound(c.DeletePricingRule(ctx, id, r.MetricID, r.ID)); err != nil {
				return fmt.Errorf("cannot delete pricing rule %d: %w", r.ID, err)
			}
			continue
		}
		delete(want, k)
		kept = append(kept, r)
	}
	for _, k := range kit.SortedKeys(want) {
		w := want[k]
		metricID := snap.MetricIDs[metricRefKey(w.MetricMethodRef)]
		if metricID == 0 {
			return fmt.Errorf("pricing rule on metric %q: the metric is not in 3scale yet", w.MetricMethodRef.SystemName)
		}
		created, err := c.CreatePricingRule(ctx, id, metricID, tsclient.PricingRuleParams{Min: w.From, Max: w.To, CostPerUnit: w.PricePerUnit})
		if err != nil {
			return fmt.Errorf("cannot create pricing rule %d-%d on metric %q: %w", w.From, w.To, w.MetricMethodRef.SystemName, err)
		}
		kept = append(kept, *created)
	}
	snap.PricingRules = kept
	return nil
}
