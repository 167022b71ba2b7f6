package accountplan

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Syncer syncs AccountPlans to the tenant's account plans.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Lists shares the tenant's list of account plans among the AccountPlans looking for theirs in one
	// burst.
	Lists *kit.BurstLists
}

// Desired is what Resolve learns beyond the spec: whether the plan manages features, and which of the
// features it let go other AccountPlans of the tenant still declare (those stay in 3scale).
type Desired struct {
	// ManagesFeatures is true when the plan declares features or enabled some (kit.FeaturesManaged):
	// they are read.
	ManagesFeatures bool `json:"-"`
	// Kept are the features the plan enabled and no longer declares that another AccountPlan of the
	// tenant declares: disabled on this plan, not deleted.
	Kept []string `json:",omitempty"`
}

// Snapshot is the remote state of one account plan.
type Snapshot struct {
	tsclient.AccountPlan
	// Features are the ids of the features the plan enables, and Account the tenant's account features;
	// both read only for a plan that manages features (nil: not read).
	Features []int64
	Account  []tsclient.Feature
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Features, c.Account = slices.Clone(s.Features), slices.Clone(s.Account)
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.AccountPlan, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.AccountPlan, *Snapshot]                = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                       = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, a *v1alpha1.AccountPlan) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, a.Namespace, kit.SecretForSession(a, a.Spec.ProviderAccountSecretName()))
}

// SystemName is what identifies the plan before it records an id: its name. porta shows an account plan
// without its system name (PlanRepresenter), so the name is what a lost create or an adoption finds it by,
// and what the one-owner check keys it by.
func (s *Syncer) SystemName(a *v1alpha1.AccountPlan) string { return a.Spec.Name }

// Resolve implements engine.TypedSyncer: one default plan per tenant; a feature declared alike by every
// AccountPlan of the tenant that declares it.
func (s *Syncer) Resolve(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	peers, err := s.peers(ctx, a, sess.Tenant)
	if err != nil {
		return r, err
	}
	if err := soleDefault(a, peers); err != nil {
		return r, err
	}
	if err := alikeFeatures(a, peers); err != nil {
		return r, err
	}
	r.Desired = Desired{ManagesFeatures: kit.FeaturesManaged(len(a.Spec.Features), a.Status.FeatureIDs), Kept: kept(a.Spec.Features, a.Status.FeatureIDs, peers)}
	spec := a.Spec
	spec.CommonSpec = v1alpha1.CommonSpec{}
	r.Hash = sess.HashOf(sess.Tenant, spec, r.Desired)
	return r, nil
}

// peers are the other AccountPlans of a's tenant (any namespace: their recorded tenant, or this
// namespace and provider account) that are not being deleted.
func (s *Syncer) peers(ctx context.Context, a *v1alpha1.AccountPlan, tenant string) ([]*v1alpha1.AccountPlan, error) {
	var plans v1alpha1.AccountPlanList
	if err := s.Reader.List(ctx, &plans); err != nil {
		return nil, err
	}
	var out []*v1alpha1.AccountPlan
	for i := range plans.Items {
		o := &plans.Items[i]
		sameTenant := o.Status.TenantHost == tenant || (o.Namespace == a.Namespace && o.Spec.ProviderAccountSecretName() == a.Spec.ProviderAccountSecretName())
		if o.UID != a.UID && o.DeletionTimestamp.IsZero() && sameTenant {
			out = append(out, o)
		}
	}
	return out, nil
}

// who names another AccountPlan in a message: by name only in a's namespace.
func who(a, o *v1alpha1.AccountPlan) string {
	if o.Namespace == a.Namespace {
		return fmt.Sprintf("AccountPlan %q", o.Name)
	}
	return "an AccountPlan in another namespace"
}

// soleDefault makes an AccountPlan that says default Invalid while an older one of the same tenant says
// it too: a tenant has one default account plan.
func soleDefault(a *v1alpha1.AccountPlan, peers []*v1alpha1.AccountPlan) error {
	if !a.Spec.Default {
		return nil
	}
	for _, o := range peers {
		if o.Spec.Default && kit.OlderThan(o, a) {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "%s already is the tenant's default account plan: a tenant has one; remove default from one of them", who(a, o))
		}
	}
	return nil
}

// alikeFeatures makes an AccountPlan Invalid that declares a feature an older AccountPlan of the tenant
// declares with another name or description: one account feature cannot be both.
func alikeFeatures(a *v1alpha1.AccountPlan, peers []*v1alpha1.AccountPlan) error {
	for _, sys := range kit.SortedKeys(a.Spec.Features) {
		for _, o := range peers {
			if theirs, declared := o.Spec.Features[sys]; declared && theirs != a.Spec.Features[sys] && kit.OlderThan(o, a) {
				return engine.Invalid(v1alpha1.ReasonInvalidSpec,
					"feature %q is declared by %s with another name or description: an account feature is one for the tenant; declare it alike in both", sys, who(a, o))
			}
		}
	}
	return nil
}

// kept are the features a plan enabled (recorded) and no longer declares that a peer declares.
func kept(declared map[string]v1alpha1.AccountFeatureSpec, recorded map[string]int64, peers []*v1alpha1.AccountPlan) []string {
	var out []string
	for _, sys := range kit.SortedKeys(recorded) {
		if _, declared := declared[sys]; declared {
			continue
		}
		if slices.ContainsFunc(peers, func(o *v1alpha1.AccountPlan) bool { _, d := o.Spec.Features[sys]; return d }) {
			out = append(out, sys)
		}
	}
	return out
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.AccountPlan] {
	return kit.TenantFinder("account plan", sess, s.Lists,
		func(id int64) (*tsclient.AccountPlan, error) { return sess.Remote.GetAccountPlan(ctx, id) },
		func() ([]tsclient.AccountPlan, error) { return sess.Remote.ListAccountPlans(ctx) },
		func(r tsclient.AccountPlan) (int64, string) { return r.ID, r.Name })
}

// Read implements engine.TypedSyncer: the plan by its recorded id, or, before it has one, the tenant's
// plan of its name.
func (s *Syncer) Read(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(a, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap := &Snapshot{AccountPlan: *remote}
	if want.ManagesFeatures {
		if snap.Account, err = sess.Remote.ListAccountFeatures(ctx); err != nil {
			return nil, false, fmt.Errorf("cannot list the account features: %w", err)
		}
		if snap.Features, err = kit.ReadEnabledFeatures(ctx, sess.Remote, tsclient.AccountPlans, remote.ID); err != nil {
			return nil, false, err
		}
	}
	return snap, true, nil
}

// Serves implements engine.CacheChecker: a snapshot read before the plan managed features lacks them.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return !want.ManagesFeatures || (snap.Features != nil && snap.Account != nil)
}

// terms are what the spec asks of the plan.
func terms(a *v1alpha1.AccountPlan) kit.PlanTerms {
	return kit.PlanTerms{Name: a.Spec.Name, Published: a.Spec.Published, ApprovalRequired: a.Spec.ApprovalRequired}
}

// attributesMatch tells whether the plan's name, state and approval are the spec's.
func attributesMatch(r tsclient.AccountPlan, a *v1alpha1.AccountPlan) bool {
	return terms(a).Match(r.Name, r.State, r.ApprovalRequired)
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, a *v1alpha1.AccountPlan, _ *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	return attributesMatch(snap.AccountPlan, a) && (!a.Spec.Default || snap.Default) && featuresMatch(a, want, snap), nil
}

// Create implements engine.TypedSyncer: makes the plan (porta derives its system name from its name),
// or adopts the tenant's plan of its name, then makes it the default when the spec says so.
func (s *Syncer) Create(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.AccountPlan, error) {
		return sess.Remote.CreateAccountPlan(ctx, terms(a).Params("hidden"))
	}, a, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	a.Status.AccountPlanID = created.ID
	snap := &Snapshot{AccountPlan: *created}
	if d.ManagesFeatures { // the account's features; a plan adopted may enable some already
		if snap.Account, err = sess.Remote.ListAccountFeatures(ctx); err != nil {
			return kit.Made[*Snapshot](nil, fresh, fmt.Errorf("cannot list the account features: %w", err))
		}
		snap.Features = []int64{}
		if !fresh {
			if snap.Features, err = kit.ReadEnabledFeatures(ctx, sess.Remote, tsclient.AccountPlans, created.ID); err != nil {
				return kit.Made[*Snapshot](nil, fresh, err)
			}
		}
	}
	snap, err = s.Update(ctx, a, sess, d, snap)
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: the attributes that differ, the default, then the features.
func (s *Syncer) Update(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	c := sess.Remote
	if !attributesMatch(snap.AccountPlan, a) {
		updated, err := c.UpdateAccountPlan(ctx, snap.ID, terms(a).Params(snap.State))
		if err != nil {
			return nil, fmt.Errorf("cannot update account plan %q: %w", a.Spec.Name, err)
		}
		snap.AccountPlan = *updated
	}
	if a.Spec.Default && !snap.Default {
		updated, err := c.SetDefaultAccountPlan(ctx, snap.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot make account plan %q the tenant's default: %w", a.Spec.Name, err)
		}
		snap.AccountPlan = *updated
	}
	if d.ManagesFeatures && !featuresMatch(a, d, snap) {
		if err := syncFeatures(ctx, c, a, d, snap); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// Note implements engine.Noter: a plan 3scale has as the tenant's default though the spec does not say
// default (porta's API cannot unset one).
func (s *Syncer) Note(a *v1alpha1.AccountPlan, snap *Snapshot) string {
	if snap != nil && snap.Default && !a.Spec.Default {
		return "3scale has this plan as the tenant's default account plan, which its spec does not say: porta's API cannot unset a default; make another plan default"
	}
	return ""
}

// Delete implements engine.TypedSyncer. porta refuses (403) to delete a plan accounts are on
// (Plan#can_be_destroyed?, app/models/plan.rb:174-186): that waits, saying so, until they move or go.
// Then the features it enabled that no other AccountPlan of the tenant declares are deleted.
func (s *Syncer) Delete(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session) error {
	err := kit.DeleteHeld(a, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteAccountPlan(ctx, id) })
	if tsclient.IsInUse(err) {
		return engine.Waiting(v1alpha1.ReasonDeletionBlocked, "deleting: 3scale refuses to delete account plan %q while accounts are on it: move them to another plan or delete them", a.Spec.Name)
	}
	if err != nil || len(a.Status.FeatureIDs) == 0 {
		return err
	}
	peers, err := s.peers(ctx, a, sess.Tenant)
	if err != nil {
		return err
	}
	// The plan declares nothing any more: what no peer declares goes.
	_, err = deleteLetGo(ctx, sess.Remote, nil, a.Status.FeatureIDs, kept(nil, a.Status.FeatureIDs, peers))
	return err
}

// SecretRefs lists the Secrets an AccountPlan reads: its provider account.
func SecretRefs(a *v1alpha1.AccountPlan) []string {
	return []string{a.Spec.ProviderAccountSecretName()}
}

// DefaultRivals maps a changed AccountPlan to the others that say default or have features: one of them
// Invalid while this one was the default, or declared a feature otherwise, is woken when this one lets go
// or goes, and one that let a feature go learns whether this one still declares it.
func DefaultRivals(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var plans v1alpha1.AccountPlanList
		if err := reader.List(ctx, &plans); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range plans.Items {
			if o := &plans.Items[i]; o.UID != obj.GetUID() && (o.Spec.Default || kit.FeaturesManaged(len(o.Spec.Features), o.Status.FeatureIDs)) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		}
		return reqs
	}
}
