package applicationplan

// The features an ApplicationPlan enables (spec.features): its Product's, by the ids the Product
// recorded (status.featureIDs). Only features apimsync enabled are ever disabled.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// checkPlanFeatures checks the features a plan enables against its Product's spec: what the spec alone
// shows, at once, before any wait for the Product.
func checkPlanFeatures(a *v1alpha1.ApplicationPlan, p *v1alpha1.Product) error {
	for _, name := range a.Spec.Features {
		f, found := p.Spec.Features[name]
		switch {
		case !found:
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "feature %q is not one of Product %q's features (spec.features)", name, p.Name)
		case kit.FeatureScope(f) != tsclient.FeatureScopeApplicationPlan:
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "feature %q of Product %q has scope %s: only its service plans can enable it", name, p.Name, f.Scope)
		}
	}
	return nil
}

// planFeatureIDs are the ids of the features a plan enables, by system name, as its Product (Synced)
// recorded them.
func planFeatureIDs(a *v1alpha1.ApplicationPlan, p *v1alpha1.Product) (map[string]int64, error) {
	if len(a.Spec.Features) == 0 {
		return nil, nil
	}
	ids := map[string]int64{}
	for _, name := range a.Spec.Features {
		id := p.Status.FeatureIDs[name]
		if id == 0 {
			return nil, engine.Waiting(v1alpha1.ReasonProductNotSynced, "waiting for Product %q to make feature %q in 3scale", p.Name, name)
		}
		ids[name] = id
	}
	return ids, nil
}

// planFeaturesManaged tells whether the plan manages its features: it enables some, or enabled some that
// are still to be disabled.
func planFeaturesManaged(a *v1alpha1.ApplicationPlan) bool {
	return len(a.Spec.Features) > 0 || len(a.Status.FeatureIDs) > 0
}

// enabledFeaturesMatch reports whether the plan enables every feature wanted and none of those apimsync
// enabled that left the spec.
func enabledFeaturesMatch(a *v1alpha1.ApplicationPlan, want map[string]int64, enabled []int64) bool {
	if !planFeaturesManaged(a) {
		return true
	}
	if enabled == nil { // not read
		return false
	}
	for _, id := range want {
		if !slices.Contains(enabled, id) {
			return false
		}
	}
	for name, id := range a.Status.FeatureIDs {
		if _, kept := want[name]; !kept && slices.Contains(enabled, id) {
			return false
		}
	}
	return true
}

// recordEnabledFeatures records in status the features wanted that the plan enables, and keeps those
// apimsync enabled that left the spec and are still enabled (to be disabled).
func recordEnabledFeatures(a *v1alpha1.ApplicationPlan, want map[string]int64, enabled []int64) {
	if enabled == nil {
		return
	}
	ids := map[string]int64{}
	for name, id := range want {
		if slices.Contains(enabled, id) {
			ids[name] = id
		}
	}
	for name, id := range a.Status.FeatureIDs {
		if _, kept := want[name]; !kept && slices.Contains(enabled, id) {
			ids[name] = id
		}
	}
	if len(ids) == 0 {
		ids = nil
	}
	a.Status.FeatureIDs = ids
}

// syncEnabledFeatures enables what is wanted and disables what apimsync enabled that left the spec;
// snap.Features follows.
func syncEnabledFeatures(ctx context.Context, c *tsclient.Client, a *v1alpha1.ApplicationPlan, want map[string]int64, snap *Snapshot) error {
	id := snap.Plan.ID
	enabled := slices.Clone(snap.Features)
	if enabled == nil {
		enabled = []int64{}
	}
	defer func() { snap.Features = enabled; recordEnabledFeatures(a, want, enabled) }()
	for _, name := range kit.SortedKeys(want) {
		if fid := want[name]; !slices.Contains(enabled, fid) {
			if err := c.EnablePlanFeature(ctx, id, fid); err != nil {
				return fmt.Errorf("cannot enable feature %q on plan %d: %w", name, id, err)
			}
			enabled = append(enabled, fid)
		}
	}
	for _, name := range kit.SortedKeys(a.Status.FeatureIDs) {
		fid := a.Status.FeatureIDs[name]
		if _, kept := want[name]; kept || !slices.Contains(enabled, fid) {
			continue
		}
		if err := kit.IgnoreNotFound(c.DisablePlanFeature(ctx, id, fid)); err != nil {
			return fmt.Errorf("cannot disable feature %q on plan %d: %w", name, id, err)
		}
		enabled = slices.DeleteFunc(enabled, func(x int64) bool { return x == fid })
	}
	return nil
}

// readEnabledFeatures lists the ids of the features a plan enables.
func readEnabledFeatures(ctx context.Context, c *tsclient.Client, planID int64) ([]int64, error) {
	fs, err := c.ListPlanFeatures(ctx, planID)
	if err != nil {
		return nil, fmt.Errorf("cannot list the features of plan %d: %w", planID, err)
	}
	ids := make([]int64, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	return ids, nil
}
