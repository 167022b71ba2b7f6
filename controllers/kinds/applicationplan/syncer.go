package applicationplan

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// Snapshot is the remote state of one application plan with its limits and pricing rules.
type Snapshot struct {
	Plan         tsclient.ApplicationPlan
	Limits       []tsclient.Limit
	PricingRules []tsclient.PricingRule
	// MetricIDs maps metric references ("backend/system_name", "/system_name" for the product's) to ids.
	MetricIDs map[string]int64
	// DepsMetrics is Desired.DepsMetrics when the snapshot was read: a snapshot read before a
	// metric was re-created (with a new id) is stale.
	DepsMetrics string
	// Features are the ids of the features the plan enables, read only for a plan that manages them
	// (nil otherwise).
	Features []int64
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.Plan.ID }

// Desired is what Resolve learnt from the plan's Product and Backends.
type Desired struct {
	ProductID int64
	// Lifecycle is the Product's: it hides the plan unless Published (or Draft with allowInDraft).
	Lifecycle v1alpha1.ProductLifecycle
	// Backends maps Backend object names to backend ids.
	Backends map[string]int64
	// DepsMetrics fingerprints the remote ids of the product's and backends' metrics (their
	// status.metricsHash).
	DepsMetrics string
	// RecordedIDs are the metric ids the Product ("") and the Backends (by name) recorded in their status
	// (status.MetricIDs), for when their snapshots are not cached. Not hashed: DepsMetrics covers them.
	RecordedIDs map[string]map[string]int64 `json:"-"`
	// Features are the ids of the features to enable, by system name (the Product's status.featureIDs);
	// left out of the hash when none, so that a plan without features hashes as it did before them.
	Features map[string]int64 `json:",omitempty"`
	// ManagesFeatures is true when the plan manages its features (planFeaturesManaged): they are read.
	ManagesFeatures bool `json:"-"`
}

// Syncer syncs ApplicationPlans to the application plans of their product, with limits and pricing
// rules. A plan uses the provider account of its Product.
type Syncer struct {
	// Fates tells what becomes of its owner in 3scale when this object is deleted (the table gives it).
	Fates kit.Fates
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Peers reads the Product's and Backends' cached snapshots (their metrics' ids), never written here.
	Peers engine.SnapshotReader
	// Lists shares the tenant's list of plans (all products') among the plans looking for theirs in one
	// burst.
	Lists *kit.BurstLists
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.ApplicationPlan, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.ApplicationPlan]                       = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                           = (*Syncer)(nil)
	_ engine.OwnedBy[*v1alpha1.ApplicationPlan]                         = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.ApplicationPlan, *Snapshot]                = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer: the provider account of the plan's Product; while the plan is being
// deleted, the Secret it was synced with (its Product may be gone already).
func (s *Syncer) Connect(ctx context.Context, a *v1alpha1.ApplicationPlan) (*engine.Session, error) {
	var p v1alpha1.Product
	return kit.ConnectVia(ctx, s.Accounts, s.Reader, a, a.Spec.ProductRef, &p, p.Spec.ProviderAccountSecretName, productOfPlan)
}

// productOfPlan is an ApplicationPlan's spec.productRef.
var productOfPlan = kit.Dependency{Kind: "Product", Field: "spec.productRef", NotFound: v1alpha1.ReasonProductNotFound, Deleting: v1alpha1.ReasonProductDeleting,
	Invalid: v1alpha1.ReasonProductInvalid, NotSynced: v1alpha1.ReasonProductNotSynced}

// backendOfPlan is a Backend whose metrics a plan's limits or pricing rules name. Its metrics go with it
// in 3scale, and their limits and pricing rules with them: one being deleted is waited for (quietly for a
// while: mostly it goes with the rest) until it is gone or back.
var backendOfPlan = kit.Dependency{Kind: "Backend", NotFound: v1alpha1.ReasonBackendNotFound, Deleting: v1alpha1.ReasonBackendDeleting, Invalid: v1alpha1.ReasonBackendInvalid,
	NotSynced: v1alpha1.ReasonBackendNotSynced, DeletingHint: "remove it from the limits and pricing rules, or delete this plan too",
	WhileDeleting: func(dep engine.Object, reason, format string, args ...any) error {
		return engine.GoingAway(dep.GetDeletionTimestamp().Time, reason, format, args...)
	}}

func metricRefKey(r v1alpha1.MetricMethodRef) string { return r.Backend + "/" + r.SystemName }

// SystemName is the system name of the object's remote object, from its spec alone: its spec.systemName, or
// one derived from its name.
func (s *Syncer) SystemName(a *v1alpha1.ApplicationPlan) string {
	return kit.SystemNameOf(a.Spec.SystemName, a.Name)
}

// Resolve implements engine.TypedSyncer: the Product must be Synced (an Invalid one makes the plan
// Invalid); every limit and pricing rule must name a metric of the product or of a backend it uses.
func (s *Syncer) Resolve(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	err := s.resolve(ctx, a, sess, &r)
	return r, err
}

// resolve is Resolve's work: it fills in r's desired state and hash.
func (s *Syncer) resolve(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, r *engine.Resolved[Desired]) error {
	if err := s.soleDefault(ctx, a); err != nil {
		return err
	}
	var p v1alpha1.Product
	if err := kit.ReadDependency(ctx, s.Reader, a.Namespace, a.Spec.ProductRef, &p, productOfPlan); err != nil {
		return err
	}
	// What the plan says of the Product's metrics and backends is checked against their specs before
	// waiting for them to sync: a mistyped metric shows at once, not after that wait.
	refs := make([]v1alpha1.MetricMethodRef, 0, len(a.Spec.Limits)+len(a.Spec.PricingRules))
	for _, l := range a.Spec.Limits {
		refs = append(refs, l.MetricMethodRef)
	}
	for _, r := range a.Spec.PricingRules {
		refs = append(refs, r.MetricMethodRef)
	}
	// Each Backend named is read from the cache once, for both loops below.
	backends, backendErrs := map[string]*v1alpha1.Backend{}, map[string]error{}
	backend := func(name string) (*v1alpha1.Backend, error) {
		if b, read := backends[name]; read {
			return b, backendErrs[name]
		}
		b := &v1alpha1.Backend{}
		err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, b)
		backends[name], backendErrs[name] = b, err
		return b, err
	}
	for _, ref := range refs {
		if ref.Backend == "" {
			if !hasMetric(p.Spec.Metrics, p.Spec.Methods, ref.SystemName) {
				return engine.Invalid(v1alpha1.ReasonInvalidSpec, "metric or method %q is not defined in Product %q (set metricMethodRef.backend for a backend's metric)", ref.SystemName, p.Name)
			}
			continue
		}
		if _, used := p.Spec.BackendUsages[ref.Backend]; !used {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "metric %q names Backend %q, which Product %q does not use (spec.backendUsages)", ref.SystemName, ref.Backend, p.Name)
		}
		if b, err := backend(ref.Backend); err == nil && !hasMetric(b.Spec.Metrics, b.Spec.Methods, ref.SystemName) {
			return engine.Waiting(v1alpha1.ReasonMetricNotFound, "waiting for metric %q to be defined in Backend %q", ref.SystemName, ref.Backend)
		}
	}
	if err := featuresOf(&p).Check(a.Spec.Features, tsclient.FeatureScopeApplicationPlan); err != nil {
		return err
	}
	if err := kit.ReadyDependency(&p, productOfPlan); err != nil {
		return err
	}
	if err := kit.OnTenant(&p, sess.Tenant, productOfPlan); err != nil {
		return err
	}
	features, err := featuresOf(&p).IDsOf(a.Spec.Features)
	if err != nil {
		return err
	}
	a.Status.ProductID = p.Status.ProductID
	desired := &Desired{ProductID: p.Status.ProductID, Backends: map[string]int64{}, Lifecycle: p.Spec.EffectiveLifecycle(),
		RecordedIDs: map[string]map[string]int64{"": p.Status.MetricIDs}, Features: features, ManagesFeatures: kit.FeaturesManaged(len(a.Spec.Features), a.Status.FeatureIDs)}
	// Dependencies' metrics go into the hash, specs and remote ids (desired.DepsMetrics): a metric
	// re-created with a new id there (a repair) means limits to re-create here.
	deps := map[string]any{"": [2]any{p.Spec.Metrics, p.Spec.Methods}}
	metricsHashes := map[string]string{"": p.Status.MetricsHash}
	for _, ref := range refs {
		if _, done := desired.Backends[ref.Backend]; ref.Backend == "" || done {
			continue
		}
		b, err := backend(ref.Backend)
		if err := backendOfPlan.State(b, err, ref.Backend); err != nil {
			return err
		}
		if err := kit.ReadyDependency(b, backendOfPlan); err != nil {
			return err
		}
		if err := kit.OnTenant(b, sess.Tenant, backendOfPlan); err != nil {
			return err
		}
		desired.Backends[ref.Backend] = b.Status.BackendID
		deps[ref.Backend] = [2]any{b.Spec.Metrics, b.Spec.Methods}
		metricsHashes[ref.Backend] = b.Status.MetricsHash
		desired.RecordedIDs[ref.Backend] = b.Status.MetricIDs
	}
	desired.DepsMetrics = engine.HashOf(metricsHashes)
	specForHash := a.Spec
	specForHash.DeletionPolicy, specForHash.Adoption = "", ""
	r.Desired, r.Hash = *desired, sess.HashOf(sess.Tenant, sess.SystemName, specForHash, desired, deps)
	return nil
}

// Validate implements engine.Validator: one limit per metric and period, no overlapping pricing ranges.
func (s *Syncer) Validate(a *v1alpha1.ApplicationPlan) error {
	if err := validatePlan(a); err != nil {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "%v", err)
	}
	return nil
}

func hasMetric(metrics map[string]v1alpha1.MetricSpec, methods map[string]v1alpha1.MethodSpec, name string) bool {
	_, isMetric := metrics[name]
	_, isMethod := methods[name]
	return name == children.HitsMetric || isMetric || isMethod
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, a *v1alpha1.ApplicationPlan, _ *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	featuring := featuringOf(a, want)
	featuring.Record(snap.Features)
	return planMatches(snap.Plan, a, want.Lifecycle) && slices.EqualFunc(sortedLimits(snap.Limits), sortedLimits(mustLimits(a, snap)), limitEqual) &&
		pricingMatches(snap.PricingRules, a, snap) && featuring.Match(snap.Features), nil
}

// Serves implements engine.CacheChecker: a snapshot read before a metric it names was re-created is stale.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return snap.DepsMetrics == want.DepsMetrics && (!want.ManagesFeatures || snap.Features != nil)
}

// Read implements engine.TypedSyncer: the plan among its product's, its limits and pricing rules, and
// the ids of the metrics they name.
func (s *Syncer) Read(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	if want.ProductID == 0 {
		return nil, false, nil
	}
	remote, err := kit.Locate(a, sess, s.finder(ctx, sess, want.ProductID))
	if tsclient.IsNotFound(err) || (err == nil && remote == nil) { // none, or the product is gone (its plans with it)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	snap, err := s.readAll(ctx, sess, want, *remote)
	return snap, err == nil, err
}

func (s *Syncer) readAll(ctx context.Context, sess *engine.Session, want Desired, remote tsclient.ApplicationPlan) (*Snapshot, error) {
	c := sess.Remote
	snap := &Snapshot{Plan: remote, DepsMetrics: want.DepsMetrics}
	var err error
	if snap.Limits, err = c.ListLimits(ctx, remote.ID); err != nil {
		return nil, fmt.Errorf("cannot list the limits of plan %d: %w", remote.ID, err)
	}
	if snap.PricingRules, err = c.ListPricingRules(ctx, remote.ID); err != nil {
		return nil, fmt.Errorf("cannot list the pricing rules of plan %d: %w", remote.ID, err)
	}
	if snap.MetricIDs, err = s.MetricIDs(ctx, sess, want); err != nil {
		return nil, err
	}
	if want.ManagesFeatures {
		if snap.Features, err = kit.ReadEnabledFeatures(ctx, c, tsclient.ApplicationPlans, remote.ID); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// MetricIDs maps the metrics and methods of the product and of the backends the plan names to their ids:
// from cached snapshots of the Product and Backend syncers when they are there, else from the ids those
// recorded in their status (status.MetricIDs), else read. A forced read (sync-now) reads them again; a
// drift check (background work) does not: the product's and backends' own drift checks read their
// metrics, and a repair that re-creates one re-syncs the plans that use it.
func (s *Syncer) MetricIDs(ctx context.Context, sess *engine.Session, d Desired) (map[string]int64, error) {
	ids := map[string]int64{}
	add := func(prefix string, scope tsclient.Scope, cached *children.Snapshot) error {
		var known map[string]int64
		switch {
		case sess.ForceRead && !tsclient.IsBackground(ctx):
		case cached != nil:
			known = cached.MetricIDs()
		default:
			known = d.RecordedIDs[prefix]
		}
		if known == nil {
			kids, err := children.Read(ctx, sess.Remote, scope)
			if err != nil {
				return err
			}
			known = kids.MetricIDs()
		}
		for name, id := range known {
			ids[prefix+"/"+name] = id
		}
		return nil
	}
	var cached *children.Snapshot
	if p, ok := engine.Peek[children.Holder](s.Peers, sess.Tenant, "Product", d.ProductID); ok {
		cached = p.ChildrenSnapshot()
	}
	if err := add("", tsclient.ProductScope(d.ProductID), cached); err != nil {
		return nil, err
	}
	for _, name := range kit.SortedKeys(d.Backends) {
		id := d.Backends[name]
		cached = nil
		if b, ok := engine.Peek[children.Holder](s.Peers, sess.Tenant, "Backend", id); ok {
			cached = b.ChildrenSnapshot()
		}
		if err := add(name, tsclient.BackendScope(id), cached); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// finder reads the plans of one product (shared: the tenant's plans of all products, in one burst).
func (s *Syncer) finder(ctx context.Context, sess *engine.Session, productID int64) kit.RemoteFinder[tsclient.ApplicationPlan] {
	return kit.RemoteFinder[tsclient.ApplicationPlan]{Kind: "plan",
		Get:  func(id int64) (*tsclient.ApplicationPlan, error) { return sess.Remote.GetPlan(ctx, productID, id) },
		List: func() ([]tsclient.ApplicationPlan, error) { return sess.Remote.ListPlans(ctx, productID) },
		Shared: func() ([]tsclient.ApplicationPlan, error) {
			all, err := kit.SharedList(s.Lists, sess.Tenant+" plans", func() ([]tsclient.ApplicationPlan, error) { return sess.Remote.ListAllPlans(ctx) })
			var mine []tsclient.ApplicationPlan
			for _, p := range all {
				if p.ServiceID == productID {
					mine = append(mine, p)
				}
			}
			return mine, err
		},
		IDName: func(r tsclient.ApplicationPlan) (int64, string) { return r.ID, r.SystemName },
	}
}

// planState is the state the plan has in 3scale: published when its spec says so and its Product lets
// it — Published, or Draft with allowInDraft; a Deprecated or Retired product hides every plan (no new
// sign-ups in the developer portal).
func planState(a *v1alpha1.ApplicationPlan, lifecycle v1alpha1.ProductLifecycle) string {
	visible := lifecycle == v1alpha1.LifecyclePublished || lifecycle == "" || (lifecycle == v1alpha1.LifecycleDraft && a.Spec.AllowInDraft)
	if visible && a.Spec.Published != nil && *a.Spec.Published {
		return "published"
	}
	return "hidden"
}

// amountOrZero is a plan fee as the spec says it, or porta's default (0, db/schema.rb table plans) when
// the spec leaves it out: a fee removed from the spec goes back to 0.
func amountOrZero(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

func planParams(a *v1alpha1.ApplicationPlan, systemName string) tsclient.PlanParams {
	p := tsclient.PlanParams{Name: a.Spec.Name, SystemName: systemName, ApprovalRequired: a.Spec.ApprovalRequired,
		SetupFee: amountOrZero(a.Spec.SetupFee), CostPerMonth: amountOrZero(a.Spec.CostMonth)}
	if a.Spec.TrialPeriodDays != nil {
		v := int64(*a.Spec.TrialPeriodDays)
		p.TrialPeriodDays = &v
	}
	return p
}

func planMatches(r tsclient.ApplicationPlan, a *v1alpha1.ApplicationPlan, lifecycle v1alpha1.ProductLifecycle) bool {
	return r.Name == a.Spec.Name && r.State == planState(a, lifecycle) && (!a.Spec.Default || r.Default) &&
		(a.Spec.ApprovalRequired == nil || r.ApprovalRequired == *a.Spec.ApprovalRequired) &&
		(a.Spec.TrialPeriodDays == nil || r.TrialPeriodDays == int64(*a.Spec.TrialPeriodDays)) &&
		decimalEqual(amountOrZero(string(r.SetupFee)), amountOrZero(a.Spec.SetupFee)) &&
		decimalEqual(amountOrZero(string(r.CostPerMonth)), amountOrZero(a.Spec.CostMonth))
}

// decimalEqual compares two decimal amounts as numbers ("10" equals "10.00").
func decimalEqual(a, b string) bool {
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	return okx && oky && x.Cmp(y) == 0
}

// mustLimits returns the limits the spec wants, with metric ids from the snapshot (0 when unknown).
func mustLimits(a *v1alpha1.ApplicationPlan, snap *Snapshot) []tsclient.Limit {
	out := make([]tsclient.Limit, 0, len(a.Spec.Limits))
	for _, l := range a.Spec.Limits {
		out = append(out, tsclient.Limit{MetricID: snap.MetricIDs[metricRefKey(l.MetricMethodRef)], Period: string(l.Period), Value: l.Value})
	}
	return out
}

func limitKey(l tsclient.Limit) string { return strconv.FormatInt(l.MetricID, 10) + "@" + l.Period }

func limitEqual(a, b tsclient.Limit) bool {
	return a.MetricID == b.MetricID && a.Period == b.Period && a.Value == b.Value
}

func sortedLimits(ls []tsclient.Limit) []tsclient.Limit {
	out := slices.Clone(ls)
	slices.SortFunc(out, func(a, b tsclient.Limit) int {
		if c := compareStrings(limitKey(a), limitKey(b)); c != 0 {
			return c
		}
		return int(a.Value - b.Value)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pricingKey identifies a pricing rule: porta has no update, so any change is a delete and a create.
func pricingKey(metricID, from, to int64, price string) string {
	r, ok := new(big.Rat).SetString(price)
	if ok {
		price = r.FloatString(4)
	}
	return fmt.Sprintf("%d:%d-%d@%s", metricID, from, to, price)
}

func wantedPricing(a *v1alpha1.ApplicationPlan, snap *Snapshot) map[string]v1alpha1.PricingRuleSpec {
	out := map[string]v1alpha1.PricingRuleSpec{}
	for _, r := range a.Spec.PricingRules {
		out[pricingKey(snap.MetricIDs[metricRefKey(r.MetricMethodRef)], r.From, r.To, r.PricePerUnit)] = r
	}
	return out
}

func pricingMatches(remote []tsclient.PricingRule, a *v1alpha1.ApplicationPlan, snap *Snapshot) bool {
	want := wantedPricing(a, snap)
	if len(remote) != len(want) {
		return false
	}
	for _, r := range remote {
		if _, ok := want[pricingKey(r.MetricID, r.Min, r.Max, string(r.CostPerUnit))]; !ok {
			return false
		}
	}
	return true
}

// Create implements engine.TypedSyncer: creates the plan (adopting it after a lost response); its limits
// and pricing rules follow (Update).
func (s *Syncer) Create(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	params := planParams(a, sess.SystemName)
	if planState(a, d.Lifecycle) == "published" {
		params.StateEvent = "publish"
	}
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName,
		func() (*tsclient.ApplicationPlan, error) { return sess.Remote.CreatePlan(ctx, d.ProductID, params) },
		a, sess, s.finder(ctx, sess, d.ProductID))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	a.Status.PlanID = created.ID
	a.Status.FeatureIDs = nil // those enabled on a plan no longer there, or of another tenant's
	if a.Spec.Default && !created.Default {
		if created, err = sess.Remote.SetDefaultPlan(ctx, d.ProductID, created.ID); err != nil {
			return kit.Made[*Snapshot](nil, fresh, fmt.Errorf("cannot make plan %q its product's default: %w", sess.SystemName, err))
		}
	}
	if !fresh {
		snap, err := s.readAll(ctx, sess, d, *created)
		return kit.Made(snap, false, err)
	}
	// A new plan has no limit and no pricing rule: nothing to read but the metric ids, which come from
	// the product's and backends' snapshots.
	snap := &Snapshot{Plan: *created, DepsMetrics: d.DepsMetrics, Features: []int64{}}
	snap.MetricIDs, err = s.MetricIDs(ctx, sess, d)
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: writes the plan's attributes, limits and pricing rules that differ.
func (s *Syncer) Update(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	c, id := sess.Remote, snap.Plan.ID
	if !planMatches(snap.Plan, a, d.Lifecycle) {
		params := planParams(a, "")
		if want := planState(a, d.Lifecycle); snap.Plan.State != want {
			params.StateEvent = map[string]string{"published": "publish", "hidden": "hide"}[want]
		}
		if !attributesMatch(snap.Plan, a, d.Lifecycle) {
			updated, err := c.UpdatePlan(ctx, d.ProductID, id, params)
			if err != nil {
				return nil, fmt.Errorf("cannot update plan %q: %w", sess.SystemName, err)
			}
			snap.Plan = *updated
		}
		if a.Spec.Default && !snap.Plan.Default {
			updated, err := c.SetDefaultPlan(ctx, d.ProductID, id)
			if err != nil {
				return nil, fmt.Errorf("cannot make plan %q its product's default: %w", sess.SystemName, err)
			}
			snap.Plan = *updated
		}
	}
	if err := s.syncLimits(ctx, a, sess, snap); err != nil {
		return nil, err
	}
	if err := s.syncPricing(ctx, a, sess, snap); err != nil {
		return nil, err
	}
	if featuring := featuringOf(a, d); !featuring.Match(snap.Features) {
		var err error
		if snap.Features, err = featuring.Sync(ctx, c, snap.Plan.ID, snap.Features); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// Owners implements engine.OwnedBy: the product's deletion in 3scale takes the plan with it.
func (s *Syncer) Owners(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session) []engine.Owner {
	return []engine.Owner{{Kind: "Product", Name: a.Spec.ProductRef,
		Fate: s.Fates.Of(ctx, a.Namespace, a.Spec.ProductRef, sess.Tenant, a.Status.ProductID, &v1alpha1.Product{})}}
}

// Delete implements engine.TypedSyncer: deletes the plan this ApplicationPlan holds (by id, or by system
// name after its own lost create); a product gone from 3scale already (404) took it along.
func (s *Syncer) Delete(ctx context.Context, a *v1alpha1.ApplicationPlan, sess *engine.Session) error {
	productID := a.Status.ProductID
	return kit.DeleteHeld(a, sess, s.finder(ctx, sess, productID), func(id int64) error { return sess.Remote.DeletePlan(ctx, productID, id) })
}

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Limits = slices.Clone(s.Limits)
	c.PricingRules = slices.Clone(s.PricingRules)
	c.MetricIDs = maps.Clone(s.MetricIDs)
	c.Features = slices.Clone(s.Features)
	return &c
}

// Scope is the scope of an ApplicationPlan's remote object: its product.
func Scope(a *v1alpha1.ApplicationPlan) string { return kit.Itoa64(a.Status.ProductID) }

// ClaimScope is Scope read from the plan's Product, before the plan synced ("0" when it is not there).
func ClaimScope(ctx context.Context, reader client.Reader, a *v1alpha1.ApplicationPlan) string {
	return kit.ScopeOf(ctx, reader, a.Namespace, a.Spec.ProductRef, &v1alpha1.Product{})
}

// BackendRefs lists the Backends a plan's limits and pricing rules name.
func BackendRefs(o client.Object) []string {
	t, ok := o.(*v1alpha1.ApplicationPlan)
	if !ok {
		return nil
	}
	set := map[string]bool{}
	for _, l := range t.Spec.Limits {
		if l.MetricMethodRef.Backend != "" {
			set[l.MetricMethodRef.Backend] = true
		}
	}
	for _, r := range t.Spec.PricingRules {
		if r.MetricMethodRef.Backend != "" {
			set[r.MetricMethodRef.Backend] = true
		}
	}
	return kit.SortedKeys(set)
}

// attributesMatch tells whether the plan's attributes (all but default, which has its own call) are the
// spec's.
func attributesMatch(r tsclient.ApplicationPlan, a *v1alpha1.ApplicationPlan, lifecycle v1alpha1.ProductLifecycle) bool {
	r.Default = a.Spec.Default
	return planMatches(r, a, lifecycle)
}

// soleDefault makes a plan that says default Invalid while an older plan of its Product (same namespace,
// same productRef, not being deleted) says it too: a product has one default plan. The older one keeps
// it; this one writes nothing until one of them lets go (the table wakes the plans of a product when
// one of them changes).
func (s *Syncer) soleDefault(ctx context.Context, a *v1alpha1.ApplicationPlan) error {
	if !a.Spec.Default {
		return nil
	}
	o, err := kit.OlderDefault(ctx, s.Reader, &v1alpha1.ApplicationPlanList{}, a, a.Spec.ProductRef, isDefault)
	if err != nil || o == nil {
		return err
	}
	return engine.Invalid(v1alpha1.ReasonInvalidSpec,
		"ApplicationPlan %q already is the default plan of Product %q: a product has one default plan; remove default from one of them", o.GetName(), a.Spec.ProductRef)
}

// Note implements engine.Noter: a plan 3scale has as its product's default though the spec does not say
// default (porta's API cannot unset one: a person does, in the admin portal, or another plan takes it).
func (s *Syncer) Note(a *v1alpha1.ApplicationPlan, snap *Snapshot) string {
	if snap != nil && snap.Plan.Default && !a.Spec.Default {
		return "3scale has this plan as its product's default, which its spec does not say: porta's API cannot unset a default; make another plan default, or unset it in the admin portal"
	}
	return ""
}

// DefaultRivals maps a changed plan to the other plans of its Product that say default: one of them
// Invalid while this one was the default is woken when this one lets go, changes product or goes.
func DefaultRivals(reader client.Reader) handler.MapFunc {
	return kit.Rivals(reader, &v1alpha1.ApplicationPlanList{}, kit.IndexProductRef,
		func(o client.Object) string {
			if p, ok := o.(*v1alpha1.ApplicationPlan); ok {
				return p.Spec.ProductRef
			}
			return ""
		},
		isDefault)
}

// isDefault tells whether o is an ApplicationPlan that says default.
func isDefault(o client.Object) bool {
	p, ok := o.(*v1alpha1.ApplicationPlan)
	return ok && p.Spec.Default
}

// featuringOf is what plan a enables of its Product's features.
func featuringOf(a *v1alpha1.ApplicationPlan, d Desired) kit.Featuring {
	return kit.Featuring{Kind: tsclient.ApplicationPlans, Want: d.Features, Recorded: &a.Status.FeatureIDs}
}

// featuresOf are a Product's features as its plans see them.
func featuresOf(p *v1alpha1.Product) kit.ProductFeatures {
	return kit.ProductFeatures{Product: p.Name, Declared: p.Spec.Features, IDs: p.Status.FeatureIDs}
}
