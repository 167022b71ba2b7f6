package applicationplan

import (
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestValidatePlan covers what the controller checks beyond the schema (for objects admitted by an older
// CRD, or rules CEL cannot afford): one limit per metric and period, no overlapping pricing ranges.
func TestValidatePlan(t *testing.T) {
	ref := func(name, backend string) v1alpha1.MetricMethodRef {
		return v1alpha1.MetricMethodRef{SystemName: name, Backend: backend}
	}
	cases := map[string]struct {
		limits  []v1alpha1.LimitSpec
		pricing []v1alpha1.PricingRuleSpec
		want    string
	}{
		"valid": {
			limits:  []v1alpha1.LimitSpec{{Period: "day", MetricMethodRef: ref("hits", "")}, {Period: "day", MetricMethodRef: ref("hits", "pets")}},
			pricing: []v1alpha1.PricingRuleSpec{{From: 1, To: 10, MetricMethodRef: ref("hits", "")}, {From: 11, To: 20, MetricMethodRef: ref("hits", "")}, {From: 5, To: 8, MetricMethodRef: ref("hits", "pets")}},
		},
		"duplicate limit": {
			limits: []v1alpha1.LimitSpec{{Period: "day", MetricMethodRef: ref("hits", "")}, {Period: "day", MetricMethodRef: ref("hits", "")}},
			want:   "two limits with period \"day\" on metric \"hits\"",
		},
		"overlapping ranges": {
			pricing: []v1alpha1.PricingRuleSpec{{From: 1, To: 10, MetricMethodRef: ref("hits", "")}, {From: 10, To: 20, MetricMethodRef: ref("hits", "")}},
			want:    "pricingRules[1] (10-20) overlaps pricingRules[0] (1-10)",
		},
		"from after to": {
			pricing: []v1alpha1.PricingRuleSpec{{From: 9, To: 2, MetricMethodRef: ref("hits", "")}},
			want:    "from 9 is greater than to 2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := validatePlan(&v1alpha1.ApplicationPlan{Spec: v1alpha1.ApplicationPlanSpec{Limits: tc.limits, PricingRules: tc.pricing}})
			if tc.want == "" {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
