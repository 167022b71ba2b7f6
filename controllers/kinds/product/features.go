package product

// A Product's features (spec.features): made, updated and deleted in 3scale, their ids recorded in
// status.featureIDs for the plans that enable them. Only features apimsync made or took are ever deleted.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
)

// featuresManaged tells whether the Product manages its features: it declares some, or made some that
// are still to be deleted. A Product that never declared any reads nothing of them.
func featuresManaged(p *v1alpha1.Product) bool {
	return len(p.Spec.Features) > 0 || len(p.Status.FeatureIDs) > 0
}

// remoteScope is the scope of a remote feature as a spec's (kit.FeatureScope), which porta renders
// underscored.
func remoteScope(f tsclient.Feature) string {
	if f.Scope == "service_plan" {
		return tsclient.FeatureScopeServicePlan
	}
	return tsclient.FeatureScopeApplicationPlan
}

func featureBySystemName(remote []tsclient.Feature, systemName string) (tsclient.Feature, bool) {
	i := slices.IndexFunc(remote, func(f tsclient.Feature) bool { return f.SystemName == systemName })
	if i < 0 {
		return tsclient.Feature{}, false
	}
	return remote[i], true
}

func featureByID(remote []tsclient.Feature, id int64) bool {
	return slices.ContainsFunc(remote, func(f tsclient.Feature) bool { return f.ID == id })
}

// specFeature finds the remote feature of the spec's feature sys: the one apimsync recorded, by id (its
// system name may have been changed by hand: it is renamed back, not made again beside it), else the
// one with its system name.
func specFeature(p *v1alpha1.Product, remote []tsclient.Feature, sys string) (tsclient.Feature, bool) {
	if id := p.Status.FeatureIDs[sys]; id != 0 {
		if i := slices.IndexFunc(remote, func(f tsclient.Feature) bool { return f.ID == id }); i >= 0 {
			return remote[i], true
		}
	}
	return featureBySystemName(remote, sys)
}

// featuresMatch reports whether 3scale holds the spec's features as declared, and none of those apimsync
// made that left the spec.
func featuresMatch(p *v1alpha1.Product, remote []tsclient.Feature) bool {
	if !featuresManaged(p) {
		return true
	}
	if remote == nil { // not read
		return false
	}
	for sys, want := range p.Spec.Features {
		got, found := specFeature(p, remote, sys)
		if !found || got.SystemName != sys || got.Name != want.Name || got.Description != want.Description || remoteScope(got) != kit.FeatureScope(want) {
			return false
		}
	}
	for sys, id := range p.Status.FeatureIDs {
		if _, kept := p.Spec.Features[sys]; !kept && featureByID(remote, id) {
			return false
		}
	}
	return true
}

// recordFeatures records in status the ids of the spec's features 3scale holds, and keeps those of the
// features apimsync made that left the spec and are still there (to be deleted).
func recordFeatures(p *v1alpha1.Product, remote []tsclient.Feature) {
	if remote == nil {
		return
	}
	ids := map[string]int64{}
	for sys := range p.Spec.Features {
		if f, found := specFeature(p, remote, sys); found {
			ids[sys] = f.ID
		}
	}
	for sys, id := range p.Status.FeatureIDs {
		if _, kept := p.Spec.Features[sys]; !kept && featureByID(remote, id) {
			ids[sys] = id
		}
	}
	if len(ids) == 0 {
		ids = nil
	}
	p.Status.FeatureIDs = ids
}

// syncFeatures writes what differs: a missing feature is made (one of that system name made by hand is
// taken), a changed one updated, one whose scope changed made again (porta cannot change a scope), and
// one apimsync made that left the spec deleted. snap.Features follows.
func syncFeatures(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product, snap *Snapshot) error {
	id := snap.Product.ID
	remote := slices.Clone(snap.Features)
	defer func() { snap.Features = remote; recordFeatures(p, remote) }()
	for _, sys := range kit.SortedKeys(p.Spec.Features) {
		want := p.Spec.Features[sys]
		params := tsclient.FeatureParams{Name: want.Name, SystemName: sys, Description: want.Description, Scope: kit.FeatureScope(want)}
		got, found := specFeature(p, remote, sys)
		switch {
		case found && remoteScope(got) != params.Scope:
			if err := kit.IgnoreNotFound(c.DeleteProductFeature(ctx, id, got.ID)); err != nil {
				return fmt.Errorf("cannot delete feature %q of product %d to change its scope: %w", sys, id, err)
			}
			remote = slices.DeleteFunc(remote, func(f tsclient.Feature) bool { return f.ID == got.ID })
			found = false
		case found && (got.SystemName != sys || got.Name != want.Name || got.Description != want.Description):
			updated, err := c.UpdateProductFeature(ctx, id, got.ID, params)
			if err != nil {
				return fmt.Errorf("cannot update feature %q of product %d: %w", sys, id, err)
			}
			remote[slices.IndexFunc(remote, func(f tsclient.Feature) bool { return f.ID == got.ID })] = *updated
		}
		if !found {
			made, err := c.CreateProductFeature(ctx, id, params)
			if tsclient.HasAlreadyBeenTaken(err, "system_name") {
				// Made by hand since the features were last read: taken, and updated if it differs.
				made, err = takeFeature(ctx, c, id, params)
			}
			if err != nil {
				return fmt.Errorf("cannot create feature %q of product %d: %w", sys, id, err)
			}
			remote = append(remote, *made)
		}
	}
	for sys, fid := range p.Status.FeatureIDs {
		if _, kept := p.Spec.Features[sys]; kept || !featureByID(remote, fid) {
			continue
		}
		if err := kit.IgnoreNotFound(c.DeleteProductFeature(ctx, id, fid)); err != nil {
			return fmt.Errorf("cannot delete feature %q of product %d: %w", sys, id, err)
		}
		remote = slices.DeleteFunc(remote, func(f tsclient.Feature) bool { return f.ID == fid })
	}
	return nil
}

// takeFeature takes the product's feature of params' system name, which porta said exists, and updates
// it to params when it differs (its scope aside: a scope that differs is found at the next read).
func takeFeature(ctx context.Context, c *tsclient.Client, productID int64, params tsclient.FeatureParams) (*tsclient.Feature, error) {
	fs, err := c.ListProductFeatures(ctx, productID)
	if err != nil {
		return nil, err
	}
	f, found := featureBySystemName(fs, params.SystemName)
	if !found {
		return nil, fmt.Errorf("3scale said feature %q exists, and does not list it", params.SystemName)
	}
	if f.Name == params.Name && f.Description == params.Description {
		return &f, nil
	}
	return c.UpdateProductFeature(ctx, productID, f.ID, params)
}
