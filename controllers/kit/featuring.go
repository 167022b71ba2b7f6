package kit

// The features a plan enables (an ApplicationPlan's or a ServicePlan's spec.features: its Product's; an
// AccountPlan's: the tenant's account features), by the ids recorded for them. Only features apimsync
// enabled are ever disabled.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// ProductFeatures are a Product's features, as a plan of it sees them.
type ProductFeatures struct {
	// Product is the Product object's name.
	Product string
	// Declared are its spec.features; IDs its status.featureIDs (those it made in 3scale).
	Declared map[string]v1alpha1.FeatureSpec
	IDs      map[string]int64
}

// Check checks the features a plan of scope enables against the Product's spec: each one of the
// Product's features, of the plan's scope. What the spec alone shows, at once, before any wait for the
// Product.
func (p ProductFeatures) Check(names []string, scope string) error {
	for _, name := range names {
		f, found := p.Declared[name]
		switch {
		case !found:
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "feature %q is not one of Product %q's features (spec.features)", name, p.Product)
		case FeatureScope(f) != scope:
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "feature %q of Product %q has scope %s: only plans of that kind can enable it, not this %s",
				name, p.Product, FeatureScope(f), scope)
		}
	}
	return nil
}

// IDsOf are the ids of the features a plan enables, by system name, as the Product (Synced) recorded
// them.
func (p ProductFeatures) IDsOf(names []string) (map[string]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	ids := map[string]int64{}
	for _, name := range names {
		id := p.IDs[name]
		if id == 0 {
			return nil, engine.Waiting(v1alpha1.ReasonProductNotSynced, "waiting for Product %q to make feature %q in 3scale", p.Product, name)
		}
		ids[name] = id
	}
	return ids, nil
}

// Featuring is what one plan enables of its issuer's features.
type Featuring struct {
	// Kind is the kind of the plan, for its endpoints.
	Kind tsclient.PlanKind
	// Want are the ids of the features to enable, by system name.
	Want map[string]int64
	// Recorded is the plan's status.featureIDs: the features apimsync enabled, by system name.
	Recorded *map[string]int64
}

// FeaturesManaged tells whether a plan manages its features: it enables some (wanted), or enabled some
// that are still to be disabled (recorded).
func FeaturesManaged(wanted int, recorded map[string]int64) bool {
	return wanted > 0 || len(recorded) > 0
}

// Match reports whether the plan enables every feature wanted and none of those apimsync enabled that
// left the spec; enabled nil is not read.
func (f Featuring) Match(enabled []int64) bool {
	if !FeaturesManaged(len(f.Want), *f.Recorded) {
		return true
	}
	if enabled == nil {
		return false
	}
	for _, id := range f.Want {
		if !slices.Contains(enabled, id) {
			return false
		}
	}
	for name, id := range *f.Recorded {
		if _, kept := f.Want[name]; !kept && slices.Contains(enabled, id) {
			return false
		}
	}
	return true
}

// Record records the features wanted that the plan enables, and keeps those apimsync enabled that left
// the spec and are still enabled (to be disabled).
func (f Featuring) Record(enabled []int64) {
	if enabled == nil {
		return
	}
	ids := map[string]int64{}
	for name, id := range f.Want {
		if slices.Contains(enabled, id) {
			ids[name] = id
		}
	}
	for name, id := range *f.Recorded {
		if _, kept := f.Want[name]; !kept && slices.Contains(enabled, id) {
			ids[name] = id
		}
	}
	if len(ids) == 0 {
		ids = nil
	}
	*f.Recorded = ids
}

// Sync enables on plan planID what is wanted and disables what apimsync enabled that left the spec,
// from enabled; it answers what the plan enables after, and records it.
func (f Featuring) Sync(ctx context.Context, c *tsclient.Client, planID int64, enabled []int64) (after []int64, err error) {
	after = slices.Clone(enabled)
	if after == nil {
		after = []int64{}
	}
	defer func() { f.Record(after) }()
	for _, name := range SortedKeys(f.Want) {
		if fid := f.Want[name]; !slices.Contains(after, fid) {
			if err := c.EnablePlanFeature(ctx, f.Kind, planID, fid); err != nil {
				return after, fmt.Errorf("cannot enable feature %q on plan %d: %w", name, planID, err)
			}
			after = append(after, fid)
		}
	}
	for _, name := range SortedKeys(*f.Recorded) {
		fid := (*f.Recorded)[name]
		if _, kept := f.Want[name]; kept || !slices.Contains(after, fid) {
			continue
		}
		if err := IgnoreNotFound(c.DisablePlanFeature(ctx, f.Kind, planID, fid)); err != nil {
			return after, fmt.Errorf("cannot disable feature %q on plan %d: %w", name, planID, err)
		}
		after = slices.DeleteFunc(after, func(x int64) bool { return x == fid })
	}
	return after, nil
}

// ReadEnabledFeatures lists the ids of the features a plan of kind enables.
func ReadEnabledFeatures(ctx context.Context, c *tsclient.Client, kind tsclient.PlanKind, planID int64) ([]int64, error) {
	fs, err := c.ListPlanFeatures(ctx, kind, planID)
	if err != nil {
		return nil, fmt.Errorf("cannot list the features of plan %d: %w", planID, err)
	}
	ids := make([]int64, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	return ids, nil
}
