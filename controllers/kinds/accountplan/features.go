package accountplan

// The account features an AccountPlan declares and enables (spec.features): made or taken by system
// name, kept as declared, enabled on the plan; one the plan lets go is disabled, and deleted once no
// AccountPlan of the tenant declares it. Only features apimsync enabled are ever disabled or deleted.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
)

// remoteFeature finds the account feature of the spec's feature sys: the one recorded, by id (renamed
// by hand, it is renamed back, not made again beside it), else the one with its system name.
func remoteFeature(a *v1alpha1.AccountPlan, account []tsclient.Feature, sys string) (tsclient.Feature, bool) {
	if id := a.Status.FeatureIDs[sys]; id != 0 {
		if i := slices.IndexFunc(account, func(f tsclient.Feature) bool { return f.ID == id }); i >= 0 {
			return account[i], true
		}
	}
	i := slices.IndexFunc(account, func(f tsclient.Feature) bool { return f.SystemName == sys })
	if i < 0 {
		return tsclient.Feature{}, false
	}
	return account[i], true
}

// declaredAsIs tells whether a remote feature is the spec's feature sys as declared.
func declaredAsIs(f tsclient.Feature, sys string, spec v1alpha1.AccountFeatureSpec) bool {
	return f.SystemName == sys && f.Name == spec.Name && f.Description == spec.Description
}

// wantedIDs are the ids of the declared features 3scale has, by system name, and whether it has them
// all as declared.
func wantedIDs(a *v1alpha1.AccountPlan, account []tsclient.Feature) (map[string]int64, bool) {
	ids, all := map[string]int64{}, true
	for sys, spec := range a.Spec.Features {
		f, found := remoteFeature(a, account, sys)
		if !found {
			all = false
			continue
		}
		ids[sys] = f.ID
		all = all && declaredAsIs(f, sys, spec)
	}
	return ids, all
}

// featuring is what the plan enables of the account features.
func featuring(a *v1alpha1.AccountPlan, want map[string]int64) kit.Featuring {
	return kit.Featuring{Kind: tsclient.AccountPlans, Want: want, Recorded: &a.Status.FeatureIDs}
}

// letGo are the features the plan enabled, no longer declares and no peer declares (kept): to delete.
func letGo(recorded map[string]int64, declared map[string]v1alpha1.AccountFeatureSpec, kept []string) []string {
	var out []string
	for _, sys := range kit.SortedKeys(recorded) {
		if _, d := declared[sys]; !d && !slices.Contains(kept, sys) {
			out = append(out, sys)
		}
	}
	return out
}

// featuresMatch reports whether 3scale has the declared features as declared, enabled on the plan, none
// the plan let go enabled, and none it let go that no peer declares left; it records what the plan
// enables.
func featuresMatch(a *v1alpha1.AccountPlan, d Desired, snap *Snapshot) bool {
	if !d.ManagesFeatures {
		return true
	}
	if snap.Account == nil || snap.Features == nil {
		return false
	}
	want, all := wantedIDs(a, snap.Account)
	for _, sys := range letGo(a.Status.FeatureIDs, a.Spec.Features, d.Kept) {
		id := a.Status.FeatureIDs[sys]
		if slices.ContainsFunc(snap.Account, func(f tsclient.Feature) bool { return f.ID == id }) {
			all = false
		}
	}
	f := featuring(a, want)
	f.Record(snap.Features)
	return all && f.Match(snap.Features)
}

// deleteLetGo deletes the account features of letGo(recorded, declared, kept) (porta takes each off every
// plan that enables it) and answers their ids.
func deleteLetGo(ctx context.Context, c *tsclient.Client, declared map[string]v1alpha1.AccountFeatureSpec, recorded map[string]int64, kept []string) ([]int64, error) {
	var gone []int64
	for _, sys := range letGo(recorded, declared, kept) {
		if err := kit.IgnoreNotFound(c.DeleteAccountFeature(ctx, recorded[sys])); err != nil {
			return gone, fmt.Errorf("cannot delete account feature %q: %w", sys, err)
		}
		gone = append(gone, recorded[sys])
	}
	return gone, nil
}

// syncFeatures deletes what the plan let go and no peer declares, makes or updates the declared
// features, and enables and disables them on the plan; snap follows.
func syncFeatures(ctx context.Context, c *tsclient.Client, a *v1alpha1.AccountPlan, d Desired, snap *Snapshot) error {
	gone, err := deleteLetGo(ctx, c, a.Spec.Features, a.Status.FeatureIDs, d.Kept)
	snap.Account = slices.DeleteFunc(snap.Account, func(f tsclient.Feature) bool { return slices.Contains(gone, f.ID) })
	snap.Features = slices.DeleteFunc(snap.Features, func(id int64) bool { return slices.Contains(gone, id) })
	if err != nil {
		return err
	}
	for _, sys := range kit.SortedKeys(a.Spec.Features) {
		spec := a.Spec.Features[sys]
		params := tsclient.FeatureParams{Name: spec.Name, SystemName: sys, Description: spec.Description}
		f, found := remoteFeature(a, snap.Account, sys)
		switch {
		case found && declaredAsIs(f, sys, spec):
			continue
		case found:
			updated, err := c.UpdateAccountFeature(ctx, f.ID, params)
			if err != nil {
				return fmt.Errorf("cannot update account feature %q: %w", sys, err)
			}
			snap.Account = slices.DeleteFunc(snap.Account, func(x tsclient.Feature) bool { return x.ID == f.ID })
			snap.Account = append(snap.Account, *updated)
		default:
			made, err := createFeature(ctx, c, params)
			if err != nil {
				return err
			}
			snap.Account = append(snap.Account, *made)
		}
	}
	want, _ := wantedIDs(a, snap.Account)
	snap.Features, err = featuring(a, want).Sync(ctx, c, snap.ID, snap.Features)
	return err
}

// createFeature makes an account feature; one another AccountPlan made meanwhile (porta refuses the
// system name as taken) is read and taken.
func createFeature(ctx context.Context, c *tsclient.Client, params tsclient.FeatureParams) (*tsclient.Feature, error) {
	made, err := c.CreateAccountFeature(ctx, params)
	if tsclient.IsInvalid(err) {
		account, lerr := c.ListAccountFeatures(ctx)
		if i := slices.IndexFunc(account, func(f tsclient.Feature) bool { return f.SystemName == params.SystemName }); lerr == nil && i >= 0 {
			return &account[i], nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create account feature %q: %w", params.SystemName, err)
	}
	return made, nil
}
