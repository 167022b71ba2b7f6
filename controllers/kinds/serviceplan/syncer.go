package serviceplan

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Syncer syncs ServicePlans to the service plans of their product. A plan uses the provider account of
// its Product.
type Syncer struct {
	// Fates tells what becomes of its owner in 3scale when this object is deleted (the table gives it).
	Fates kit.Fates
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Lists shares the tenant's service plans (all products') among the ServicePlans looking for theirs
	// in one burst.
	Lists *kit.BurstLists
}

// Desired is what Resolve learns from the plan's Product: its id, and the ids of the features the plan
// enables.
type Desired struct {
	ProductID int64
	// Features are the ids of the features to enable, by system name (the Product's status.featureIDs).
	Features map[string]int64 `json:",omitempty"`
	// ManagesFeatures is true when the plan manages its features (kit.FeaturesManaged): they are read.
	ManagesFeatures bool `json:"-"`
}

// Snapshot is the remote state of one service plan.
type Snapshot struct {
	tsclient.ServicePlan
	// Features are the ids of the features the plan enables, read only for a plan that manages them
	// (nil: not read).
	Features []int64
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Features = slices.Clone(s.Features)
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.ServicePlan, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.ServicePlan, *Snapshot]                = (*Syncer)(nil)
	_ engine.OwnedBy[*v1alpha1.ServicePlan]                         = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                       = (*Syncer)(nil)
)

// productOfPlan is a ServicePlan's spec.productRef.
var productOfPlan = kit.Dependency{Kind: "Product", Field: "spec.productRef", NotFound: v1alpha1.ReasonProductNotFound, Deleting: v1alpha1.ReasonProductDeleting,
	Invalid: v1alpha1.ReasonProductInvalid, NotSynced: v1alpha1.ReasonProductNotSynced}

// Connect implements engine.TypedSyncer: the provider account of the plan's Product; while the plan is
// being deleted, the Secret it was synced with (its Product may be gone already).
func (s *Syncer) Connect(ctx context.Context, p *v1alpha1.ServicePlan) (*engine.Session, error) {
	var product v1alpha1.Product
	return kit.ConnectVia(ctx, s.Accounts, s.Reader, p, p.Spec.ProductRef, &product, product.Spec.ProviderAccountSecretName, productOfPlan)
}

// SystemName is what identifies the plan before it records an id: its name (porta shows a service plan
// without its system name).
func (s *Syncer) SystemName(p *v1alpha1.ServicePlan) string { return p.Spec.Name }

// Resolve implements engine.TypedSyncer: the Product must be Synced on this tenant, and have made the
// features the plan enables; one default plan per product.
func (s *Syncer) Resolve(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	if err := s.soleDefault(ctx, p); err != nil {
		return r, err
	}
	var product v1alpha1.Product
	if err := kit.ReadDependency(ctx, s.Reader, p.Namespace, p.Spec.ProductRef, &product, productOfPlan); err != nil {
		return r, err
	}
	// The features are checked against the Product's spec before waiting for it to sync: a feature of
	// the wrong scope shows at once.
	if err := featuresOf(&product).Check(p.Spec.Features, tsclient.FeatureScopeServicePlan); err != nil {
		return r, err
	}
	if err := kit.ReadyDependency(&product, productOfPlan); err != nil {
		return r, err
	}
	if err := kit.OnTenant(&product, sess.Tenant, productOfPlan); err != nil {
		return r, err
	}
	features, err := featuresOf(&product).IDsOf(p.Spec.Features)
	if err != nil {
		return r, err
	}
	p.Status.ProductID = product.Status.ProductID
	r.Desired = Desired{ProductID: product.Status.ProductID, Features: features,
		ManagesFeatures: kit.FeaturesManaged(len(p.Spec.Features), p.Status.FeatureIDs)}
	spec := p.Spec
	spec.DeletionPolicy, spec.Adoption = "", ""
	r.Hash = sess.HashOf(sess.Tenant, spec, r.Desired)
	return r, nil
}

// soleDefault makes a plan that says default Invalid while an older plan of its Product says it too.
func (s *Syncer) soleDefault(ctx context.Context, p *v1alpha1.ServicePlan) error {
	if !p.Spec.Default {
		return nil
	}
	o, err := kit.OlderDefault(ctx, s.Reader, &v1alpha1.ServicePlanList{}, p, p.Spec.ProductRef, isDefault)
	if err != nil || o == nil {
		return err
	}
	return engine.Invalid(v1alpha1.ReasonInvalidSpec,
		"ServicePlan %q already is the default service plan of Product %q: a product has one default service plan; remove default from one of them", o.GetName(), p.Spec.ProductRef)
}

// finder reads the service plans of one product (shared: the tenant's service plans of all products, in
// one burst).
func (s *Syncer) finder(ctx context.Context, sess *engine.Session, productID int64) kit.RemoteFinder[tsclient.ServicePlan] {
	return kit.RemoteFinder[tsclient.ServicePlan]{Kind: "service plan",
		Get:  func(id int64) (*tsclient.ServicePlan, error) { return sess.Remote.GetServicePlan(ctx, productID, id) },
		List: func() ([]tsclient.ServicePlan, error) { return sess.Remote.ListServicePlans(ctx, productID) },
		Shared: func() ([]tsclient.ServicePlan, error) {
			all, err := kit.SharedList(s.Lists, sess.Tenant+" service plans", func() ([]tsclient.ServicePlan, error) { return sess.Remote.ListAllServicePlans(ctx) })
			return slices.DeleteFunc(slices.Clone(all), func(p tsclient.ServicePlan) bool { return p.ServiceID != productID }), err
		},
		IDName: func(r tsclient.ServicePlan) (int64, string) { return r.ID, r.Name },
	}
}

// Read implements engine.TypedSyncer: the plan by its recorded id, or, before it has one, the product's
// plan of its name.
func (s *Syncer) Read(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	if want.ProductID == 0 {
		return nil, false, nil
	}
	remote, err := kit.Locate(p, sess, s.finder(ctx, sess, want.ProductID))
	if tsclient.IsNotFound(err) || (err == nil && remote == nil) { // none, or the product is gone (its plans with it)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	snap := &Snapshot{ServicePlan: *remote}
	if want.ManagesFeatures {
		if snap.Features, err = kit.ReadEnabledFeatures(ctx, sess.Remote, tsclient.ServicePlans, remote.ID); err != nil {
			return nil, false, err
		}
	}
	return snap, true, nil
}

// Serves implements engine.CacheChecker: a snapshot read before the plan managed its features lacks them.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return !want.ManagesFeatures || snap.Features != nil
}

// featuringOf is what plan p enables of its Product's features.
func featuringOf(p *v1alpha1.ServicePlan, d Desired) kit.Featuring {
	return kit.Featuring{Kind: tsclient.ServicePlans, Want: d.Features, Recorded: &p.Status.FeatureIDs}
}

// terms are what the spec asks of the plan.
func terms(p *v1alpha1.ServicePlan) kit.PlanTerms {
	return kit.PlanTerms{Name: p.Spec.Name, Published: p.Spec.Published, ApprovalRequired: p.Spec.ApprovalRequired}
}

// attributesMatch tells whether the plan's name, state and approval are the spec's.
func attributesMatch(r tsclient.ServicePlan, p *v1alpha1.ServicePlan) bool {
	return terms(p).Match(r.Name, r.State, r.ApprovalRequired)
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, p *v1alpha1.ServicePlan, _ *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	featuring := featuringOf(p, want)
	featuring.Record(snap.Features)
	return attributesMatch(snap.ServicePlan, p) && (!p.Spec.Default || snap.Default) && featuring.Match(snap.Features), nil
}

// Create implements engine.TypedSyncer: makes the plan (porta derives its system name from its name),
// or adopts the product's plan of its name, then makes it the default when the spec says so.
func (s *Syncer) Create(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.ServicePlan, error) {
		return sess.Remote.CreateServicePlan(ctx, d.ProductID, terms(p).Params("hidden"))
	}, p, sess, s.finder(ctx, sess, d.ProductID))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	p.Status.ServicePlanID = created.ID
	snap, err := s.Update(ctx, p, sess, d, &Snapshot{ServicePlan: *created, Features: []int64{}})
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: the attributes that differ, the default, then the features.
func (s *Syncer) Update(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	c := sess.Remote
	if !attributesMatch(snap.ServicePlan, p) {
		updated, err := c.UpdateServicePlan(ctx, d.ProductID, snap.ID, terms(p).Params(snap.State))
		if err != nil {
			return nil, fmt.Errorf("cannot update service plan %q: %w", p.Spec.Name, err)
		}
		snap.ServicePlan = *updated
	}
	if p.Spec.Default && !snap.Default {
		updated, err := c.SetDefaultServicePlan(ctx, d.ProductID, snap.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot make service plan %q its product's default: %w", p.Spec.Name, err)
		}
		snap.ServicePlan = *updated
	}
	if featuring := featuringOf(p, d); !featuring.Match(snap.Features) {
		var err error
		if snap.Features, err = featuring.Sync(ctx, c, snap.ID, snap.Features); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// Note implements engine.Noter: a plan 3scale has as its product's default though the spec does not say
// default (porta's API cannot unset one).
func (s *Syncer) Note(p *v1alpha1.ServicePlan, snap *Snapshot) string {
	if snap != nil && snap.Default && !p.Spec.Default {
		return "3scale has this plan as its product's default service plan, which its spec does not say: porta's API cannot unset a default; make another plan default"
	}
	return ""
}

// Owners implements engine.OwnedBy: the product's deletion in 3scale takes the plan with it
// (service.rb:55-56).
func (s *Syncer) Owners(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session) []engine.Owner {
	return []engine.Owner{{Kind: "Product", Name: p.Spec.ProductRef,
		Fate: s.Fates.Of(ctx, p.Namespace, p.Spec.ProductRef, sess.Tenant, p.Status.ProductID, &v1alpha1.Product{})}}
}

// Delete implements engine.TypedSyncer. porta refuses (403) to delete a plan accounts subscribe to
// (Plan#can_be_destroyed?, app/models/plan.rb:174-186): that waits, saying so, until they move or go.
func (s *Syncer) Delete(ctx context.Context, p *v1alpha1.ServicePlan, sess *engine.Session) error {
	productID := p.Status.ProductID
	err := kit.DeleteHeld(p, sess, s.finder(ctx, sess, productID), func(id int64) error { return sess.Remote.DeleteServicePlan(ctx, productID, id) })
	if tsclient.IsInUse(err) {
		return engine.Waiting(v1alpha1.ReasonDeletionBlocked, "deleting: 3scale refuses to delete service plan %q while accounts subscribe to it: move their subscriptions or delete them", p.Spec.Name)
	}
	return err
}

// Scope is the scope of a ServicePlan's remote object: its product.
func Scope(p *v1alpha1.ServicePlan) string { return kit.Itoa64(p.Status.ProductID) }

// ClaimScope is Scope read from the plan's Product, before the plan synced ("0" when it is not there).
func ClaimScope(ctx context.Context, reader client.Reader, p *v1alpha1.ServicePlan) string {
	return kit.ScopeOf(ctx, reader, p.Namespace, p.Spec.ProductRef, &v1alpha1.Product{})
}

// DefaultRivals maps a changed ServicePlan to the other plans of its Product that say default.
func DefaultRivals(reader client.Reader) handler.MapFunc {
	return kit.Rivals(reader, &v1alpha1.ServicePlanList{}, kit.IndexProductRef,
		func(o client.Object) string {
			if p, ok := o.(*v1alpha1.ServicePlan); ok {
				return p.Spec.ProductRef
			}
			return ""
		},
		isDefault)
}

// isDefault tells whether o is a ServicePlan that says default.
func isDefault(o client.Object) bool {
	p, ok := o.(*v1alpha1.ServicePlan)
	return ok && p.Spec.Default
}

// featuresOf are a Product's features as its plans see them.
func featuresOf(p *v1alpha1.Product) kit.ProductFeatures {
	return kit.ProductFeatures{Product: p.Name, Declared: p.Spec.Features, IDs: p.Status.FeatureIDs}
}
