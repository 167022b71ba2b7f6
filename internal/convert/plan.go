package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

var limitPeriods = []string{"eternity", "year", "month", "week", "day", "hour", "minute"}

// convertPlan makes the ApplicationPlan of one entry of a Product's spec.applicationPlans.
func (c *converter) convertPlan(it *item, p *v1alpha1.Product, name, sys string, pl srcPlan) {
	path := "spec.applicationPlans." + sys
	if !validSystemName(sys) {
		c.dropped(it, path, "the plan's system name does not fit apimsync's pattern ^[A-Za-z0-9_][A-Za-z0-9_-]*$: no ApplicationPlan is made for it")
		return
	}
	a := &v1alpha1.ApplicationPlan{TypeMeta: typeMeta("ApplicationPlan"), ObjectMeta: c.meta(it, name)}
	a.Spec = v1alpha1.ApplicationPlanSpec{ProductRef: p.Name, SystemName: sys, DeletionPolicy: v1alpha1.DeletionPolicyDelete,
		Adoption: v1alpha1.AdoptionIfExists, ApprovalRequired: pl.AppsRequireApproval}
	c.info(it, path, "now the ApplicationPlan %q (spec.productRef: %q)", name, p.Name)
	switch {
	case pl.Name == nil || *pl.Name == "":
		a.Spec.Name = sys
		c.changed(it, path+".name", "not set: 3scale-operator named a new plan after its system name and left the name alone since; apimsync manages it: %q "+
			"is written out (set the name the plan has in 3scale if it was renamed there)", sys)
	case tooLong(*pl.Name, 255):
		a.Spec.Name = string([]rune(*pl.Name)[:255])
		c.changed(it, path+".name", "longer than the 255 characters apimsync allows: cut")
	default:
		a.Spec.Name = *pl.Name
	}
	// 3scale-operator hides a plan whose published is not set.
	a.Spec.Published = ptr(pl.Published != nil && *pl.Published)
	if pl.TrialPeriod != nil {
		if *pl.TrialPeriod < 0 || *pl.TrialPeriod > 3650 {
			c.dropped(it, path+".trialPeriod", "%d days is outside the 0 to 3650 apimsync allows: left as 3scale has it", *pl.TrialPeriod)
		} else {
			a.Spec.TrialPeriodDays = ptr(int32(*pl.TrialPeriod))
		}
	}
	a.Spec.SetupFee = c.fee(it, path+".setupFee", pl.SetupFee)
	a.Spec.CostMonth = c.fee(it, path+".costMonth", pl.CostMonth)
	metrics := productMetricNames(p)
	rewritten := map[string]string{}
	type limitKey struct{ period, backend, metric string }
	seen := map[limitKey]int{}
	for i, l := range pl.Limits {
		field := fmt.Sprintf("%s.limits[%d]", path, i)
		ref, ok := c.metricRef(it, field, l.MetricMethodRef, metrics, rewritten)
		switch {
		case !ok:
		case !slices.Contains(limitPeriods, l.Period):
			c.dropped(it, field, "period %q is not one apimsync takes (%s)", l.Period, strings.Join(limitPeriods, ", "))
		case l.Value < 0:
			c.dropped(it, field, "the value %d is negative", l.Value)
		default:
			key := limitKey{l.Period, ref.Backend, ref.SystemName}
			if first, dup := seen[key]; dup {
				c.dropped(it, field, "the same metric and period as limits[%d]: apimsync keeps one limit per metric and period", first)
				continue
			}
			seen[key] = i
			a.Spec.Limits = append(a.Spec.Limits, v1alpha1.LimitSpec{Period: v1alpha1.LimitPeriod(l.Period), Value: l.Value, MetricMethodRef: ref})
		}
	}
	for i, r := range pl.PricingRules {
		field := fmt.Sprintf("%s.pricingRules[%d]", path, i)
		ref, ok := c.metricRef(it, field, r.MetricMethodRef, metrics, rewritten)
		switch {
		case !ok:
		case r.From < 1 || r.To < 1 || r.From > r.To:
			c.dropped(it, field, "the range %d to %d is not one apimsync takes (1 ≤ from ≤ to)", r.From, r.To)
		case !pricePattern.MatchString(string(r.PricePerUnit)):
			c.dropped(it, field, "pricePerUnit %q is not a decimal apimsync takes (up to 10 digits, 4 decimals)", r.PricePerUnit)
		default:
			a.Spec.PricingRules = append(a.Spec.PricingRules, v1alpha1.PricingRuleSpec{From: r.From, To: r.To, PricePerUnit: string(r.PricePerUnit), MetricMethodRef: ref})
		}
	}
	if len(rewritten) > 0 {
		var pairs []string
		for _, sys := range sortedKeys(rewritten) {
			pairs = append(pairs, fmt.Sprintf("%s → %s", sys, rewritten[sys]))
		}
		c.changed(it, path, "metricMethodRef.backend names the Backend object (apimsync), not the backend system name (3scale-operator): %s", strings.Join(pairs, ", "))
	}
	c.emit(it, a)
}

// fee converts setupFee or costMonth.
func (c *converter) fee(it *item, field string, v *srcAmount) string {
	switch {
	case v == nil:
		c.changed(it, field, "not set: 3scale-operator left it as 3scale had it; apimsync sets 0 when it is not set (write the amount 3scale has into the output)")
		return ""
	case !feePattern.MatchString(string(*v)):
		c.dropped(it, field, "%q is not an amount apimsync takes (up to 10 digits, 2 decimals); apimsync sets 0", string(*v))
		return ""
	}
	return string(*v)
}

// productMetricNames are the system names of a product's metrics and methods.
func productMetricNames(p *v1alpha1.Product) map[string]bool {
	names := map[string]bool{"hits": true}
	for k := range p.Spec.Metrics {
		names[k] = true
	}
	for k := range p.Spec.Methods {
		names[k] = true
	}
	return names
}

// metricRef converts the metric or method a limit or pricing rule counts: a product's own must exist
// (3scale-operator checks that too); a backend's is named by Backend object name.
func (c *converter) metricRef(it *item, field string, r srcMetricRef, productMetrics map[string]bool, rewritten map[string]string) (v1alpha1.MetricMethodRef, bool) {
	if r.SystemName == "" || tooLong(r.SystemName, 255) {
		c.dropped(it, field, "metricMethodRef.systemName is empty or longer than 255 characters")
		return v1alpha1.MetricMethodRef{}, false
	}
	if r.Backend == nil || *r.Backend == "" {
		if !productMetrics[r.SystemName] {
			c.dropped(it, field, "metricMethodRef %q names no metric or method of the product (3scale-operator refuses it too)", r.SystemName)
			return v1alpha1.MetricMethodRef{}, false
		}
		return v1alpha1.MetricMethodRef{SystemName: r.SystemName}, true
	}
	name, _ := c.backendName(it, field+".metricMethodRef.backend", *r.Backend)
	if name != *r.Backend {
		rewritten[*r.Backend] = name
	}
	return v1alpha1.MetricMethodRef{SystemName: r.SystemName, Backend: name}, true
}
