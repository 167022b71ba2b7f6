package product

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// Snapshot is the remote state of one product (service) and everything apimsync manages in it.
type Snapshot struct {
	Product  tsclient.Product
	Proxy    map[string]string // proxy attributes by porta name, as strings
	OIDC     *tsclient.OIDCConfiguration
	Policies []tsclient.Policy
	Usages   []tsclient.BackendUsage
	Children *children.Snapshot
	// Retiring, set by Refresh only (never cached), holds the applications of a retired product whose
	// live ones Update suspends (Lifecycle.suspendAll).
	Retiring []tsclient.Application
	// Configs are the latest configuration versions of staging and production, read only for a Product
	// with spec.production (nil otherwise).
	Configs *kit.ConfigVersions
	// Features are the product's features, read only for a Product that manages them (nil otherwise).
	Features []tsclient.Feature
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.Product.ID }

// Desired is what Resolve learnt from the Product's dependencies.
type Desired struct {
	BackendIDs map[int64]string // backend id -> path
	Proxy      map[string]string
	Policies   []tsclient.Policy // nil: the chain is not managed
	OIDC       *tsclient.OIDCConfiguration
	// Promotes is true with spec.production: the configuration versions are read (covered by the hash
	// as spec.production).
	Promotes bool `json:"-"`
	// Features is true when the Product manages its features (featuresManaged): they are read (the
	// hash covers spec.features).
	Features bool `json:"-"`
	// GatewayHash is the keyed hash of everything staging's configuration is built from, the product's
	// and its backends' (product_deploy.go).
	GatewayHash string `json:"-"`
	// Backends is what of each used Backend goes into the configuration: a deploy whose answer was lost
	// is settled by finding it in staging's latest configuration (stagingHolds).
	Backends []backendGateway `json:"-"`
}

// Syncer syncs Products to 3scale services with their proxy settings, authentication, metrics,
// methods, mapping rules, policy chain and backend usages.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Suspended records that the retirement sweep suspended the application appID of tenant (gone: it
	// was deleted), so that its Application's cached snapshot says so (the table gives it).
	Suspended func(tenant string, appID int64, gone bool)
	// Lists shares the tenant's list of services among the Products looking for theirs in one burst.
	Lists *kit.BurstLists
	// Lifecycle keeps the lifecycle bookkeeping and usage reports.
	Lifecycle Lifecycle
}

// Serves implements engine.CacheChecker: a snapshot read without the configuration versions does not
// serve a Product that now has spec.production, nor one read without the features a Product that now
// manages them.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return (!want.Promotes || snap.Configs != nil) && (!want.Features || snap.Features != nil)
}

func productChildren(p *v1alpha1.Product) children.Spec {
	return children.Spec{Metrics: p.Spec.Metrics, Methods: p.Spec.Methods, Rules: p.Spec.MappingRules}
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.Product, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                   = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.Product, *Snapshot]                = (*Syncer)(nil)
	_ engine.Refresher[*v1alpha1.Product, *Snapshot]            = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, p *v1alpha1.Product) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, p.Namespace, kit.SecretForSession(p, p.Spec.ProviderAccountSecretName()))
}

// SystemName is the system name of the object's remote object, from its spec alone: its spec.systemName, or
// one derived from its name.
func (s *Syncer) SystemName(p *v1alpha1.Product) string {
	return kit.SystemNameOf(p.Spec.SystemName, p.Name)
}

// Resolve implements engine.TypedSyncer: every Backend used must exist and be Synced on the same tenant
// (an Invalid one makes the Product Invalid), Secrets of policies and OIDC must exist, and no other
// resource may own the same service. A Deprecated or Retired product's usage report is periodic work.
func (s *Syncer) Resolve(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	r.PeriodicDue, r.PeriodicIn = s.Lifecycle.Track(p)
	err := s.resolve(ctx, p, sess, &r)
	return r, err
}

// resolve is Resolve's work: it fills in r's desired state and hash.
func (s *Syncer) resolve(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, r *engine.Resolved[Desired]) error {
	kids := productChildren(p)
	// Checked here, not in a Validate before everything: the lifecycle is tracked first (an edit
	// that retires the product is dated when it is seen). The schema checks this at admission anyway.
	if err := children.Invalid(kids); err != nil {
		return err
	}
	backendIDs, backends, err := s.resolveBackends(ctx, p, sess.Tenant)
	if err != nil {
		return err
	}
	if err := checkCustomPolicies(ctx, s.Reader, p, sess.Tenant); err != nil {
		return err
	}
	policies, err := s.resolvePolicies(ctx, p)
	if err != nil {
		return err
	}
	proxy, oidc, err := s.resolveProxy(ctx, p)
	if err != nil {
		return err
	}
	desired := Desired{BackendIDs: backendIDs, Proxy: proxy, Policies: policies, OIDC: oidc, Promotes: p.Spec.Production != nil,
		Features: featuresManaged(p)}
	deployment, backendVersion := serviceAttrs(p)
	desired.Backends = backends
	desired.GatewayHash = gatewayHash(sess, gatewayState{Tenant: sess.Tenant, SystemName: sess.SystemName, Deployment: deployment,
		BackendVersion: backendVersion, Children: kids, Usages: backendIDs, Backends: backends, Desired: desired})
	hashed := []any{desired.GatewayHash, p.Spec.Name, p.Spec.Description}
	if p.Spec.Production != nil {
		hashed = append(hashed, p.Spec.Production)
	}
	if len(p.Spec.Features) > 0 { // only then: the hash of a Product without features is what it was
		hashed = append(hashed, p.Spec.Features)
	}
	r.Desired, r.Hash = desired, sess.HashOf(hashed...)
	return nil
}

// backendOfProduct is a Backend in a Product's spec.backendUsages. One being deleted is waited for
// quietly (Pending): in a mass deletion the Product goes a moment later, and a Synced one stays Synced
// meanwhile (the Backend waits for it, in 3scale too); past the quiet wait the Product is Orphan.
var backendOfProduct = kit.Dependency{Kind: "Backend", Field: "in spec.backendUsages", NotFound: v1alpha1.ReasonBackendNotFound, Deleting: v1alpha1.ReasonBackendDeleting,
	Invalid: v1alpha1.ReasonBackendInvalid, NotSynced: v1alpha1.ReasonBackendNotSynced, DeletingHint: "remove it from spec.backendUsages to let it go",
	WhileDeleting: func(_ engine.Object, reason, format string, args ...any) error {
		return engine.Pending(reason, format, args...)
	}}

// resolveBackends returns the ids of the Backends the product uses, with their paths, and what of each
// goes into the product's gateway configuration.
func (s *Syncer) resolveBackends(ctx context.Context, p *v1alpha1.Product, tenant string) (map[int64]string, []backendGateway, error) {
	ids := map[int64]string{}
	var gateway []backendGateway
	for _, name := range kit.SortedKeys(p.Spec.BackendUsages) {
		var b v1alpha1.Backend
		if err := kit.CheckDependency(ctx, s.Reader, p.Namespace, name, &b, backendOfProduct); err != nil {
			return nil, nil, err
		}
		if b.Status.TenantHost != tenant {
			return nil, nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "Backend %q is synced to tenant %s, but this Product to %s; a product can only use backends of its own tenant",
				name, b.Status.TenantHost, tenant)
		}
		ids[b.Status.BackendID] = p.Spec.BackendUsages[name].Path
		gateway = append(gateway, backendGateway{ID: b.Status.BackendID, PrivateBaseURL: b.Spec.PrivateBaseURL, Children: children.Spec{Metrics: b.Spec.Metrics, Methods: b.Spec.Methods, Rules: b.Spec.MappingRules},
			Revision: b.Status.GatewayRevision})
	}
	return ids, gateway, nil
}

// serviceAttrs returns 3scale's deployment_option and backend_version (authentication mode) for the spec.
func serviceAttrs(p *v1alpha1.Product) (deploymentOption, backendVersion string) {
	deploymentOption = "hosted"
	if d := p.Spec.Deployment; d != nil && d.ApicastSelfManaged != nil {
		deploymentOption = "self_managed"
	}
	backendVersion = p.Spec.BackendVersion()
	return deploymentOption, backendVersion
}

// proxyDefaults are porta's defaults of the proxy attributes apimsync manages (porta's db/schema.rb,
// table proxies): a field removed from the spec goes back to its default. hostname_rewrite has none
// (null), so it is emptied. secret_token is not here: porta generates a random one and has no default to
// go back to, so a secret token removed from the spec stays as it is in 3scale.
var proxyDefaults = map[string]string{
	"credentials_location": "query", "auth_user_key": "user_key", "auth_app_id": "app_id", "auth_app_key": "app_key",
	"hostname_rewrite":         "",
	"error_status_auth_failed": "403", "error_headers_auth_failed": "text/plain; charset=us-ascii", "error_auth_failed": "Authentication failed",
	"error_status_auth_missing": "403", "error_headers_auth_missing": "text/plain; charset=us-ascii", "error_auth_missing": "Authentication parameters missing",
	"error_status_no_match": "404", "error_headers_no_match": "text/plain; charset=us-ascii", "error_no_match": "No Mapping Rule matched",
	"error_status_limits_exceeded": "429", "error_headers_limits_exceeded": "text/plain; charset=us-ascii", "error_limits_exceeded": "Usage limit exceeded",
}

// Read implements engine.TypedSyncer: the service (by id, or by system name to adopt one created by a
// lost request) and everything apimsync manages in it.
func (s *Syncer) Read(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(p, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap, err := s.readAll(ctx, sess, want, *remote)
	return snap, err == nil, err
}

// Note implements engine.Noter: a Deprecated or Retired product's Synced message tells its usage report,
// and one with spec.production which configuration production runs.
func (s *Syncer) Note(p *v1alpha1.Product, _ *Snapshot) string {
	var notes []string
	if stage := p.Spec.EffectiveLifecycle(); stage == v1alpha1.LifecycleDeprecated || stage == v1alpha1.LifecycleRetired {
		notes = append(notes, usageNote(p))
	}
	if note := productionNote(p); note != "" {
		notes = append(notes, note)
	}
	return strings.Join(notes, "; ")
}

// RecordStatus implements engine.StatusRecorder: where the product's gateways serve it, as 3scale holds it
// (the proxy's endpoint and sandbox_endpoint, a default port left out): an OpenAPI's ActiveDoc points there.
func (s *Syncer) RecordStatus(p *v1alpha1.Product, snap *Snapshot) {
	if snap.Proxy == nil {
		return
	}
	g := &v1alpha1.ProductGatewayStatus{StagingPublicBaseURL: withoutDefaultPort(snap.Proxy["sandbox_endpoint"]),
		ProductionPublicBaseURL: withoutDefaultPort(snap.Proxy["endpoint"])}
	if *g == (v1alpha1.ProductGatewayStatus{}) {
		g = nil
	}
	p.Status.Gateway = g
}

// withoutDefaultPort is a URL without the port its scheme implies (porta stores "https://x:443").
func withoutDefaultPort(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" || u.Port() != "443") && (u.Scheme != "http" || u.Port() != "80") {
		return s
	}
	u.Host = u.Hostname()
	if strings.Contains(u.Host, ":") {
		u.Host = "[" + u.Host + "]"
	}
	return u.String()
}

// Refresh implements engine.Refresher: the usage report of a Deprecated or Retired product; a retired
// product with live applications left to suspend hands them to Update (snap.Retiring).
func (s *Syncer) Refresh(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, snap *Snapshot) (*Snapshot, error) {
	retiring, err := s.Lifecycle.refreshUsage(ctx, sess.Remote, p)
	if err != nil {
		return nil, err
	}
	if retiring != nil {
		snap = snap.Clone()
		snap.Retiring = retiring
	}
	return snap, nil
}

// Compare implements engine.TypedSyncer; it records the ids of the product's metrics in status. A
// retirement sweep due is never up to date.
func (s *Syncer) Compare(_ context.Context, p *v1alpha1.Product, _ *engine.Session, d Desired, snap *Snapshot) (bool, error) {
	children.RecordMetrics(&p.Status.CommonStatus, snap.Children)
	recordProduction(p, snap.Configs)
	recordDeployedIfUnknown(p, d)
	recordFeatures(p, snap.Features)
	return snap.Retiring == nil && promotionTarget(p, snap.Configs) == 0 && !deployPending(p, d) &&
		serviceMatches(snap.Product, p) && gatewayMatches(p, d, snap) && featuresMatch(p, snap.Features), nil
}

// readAll reads everything apimsync manages in one service.
func (s *Syncer) readAll(ctx context.Context, sess *engine.Session, d Desired, remote tsclient.Product) (*Snapshot, error) {
	c, id := sess.Remote, remote.ID
	snap := &Snapshot{Product: remote}
	proxy, err := c.GetProxy(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cannot read the proxy of product %d: %w", id, err)
	}
	snap.Proxy = proxyAttributes(proxy)
	if snap.Policies, err = c.GetPolicies(ctx, id); err != nil {
		return nil, fmt.Errorf("cannot read the policy chain of product %d: %w", id, err)
	}
	if snap.Usages, err = c.ListBackendUsages(ctx, id); err != nil {
		return nil, fmt.Errorf("cannot list the backend usages of product %d: %w", id, err)
	}
	if d.OIDC != nil {
		if snap.OIDC, err = c.GetOIDCConfiguration(ctx, id); err != nil {
			return nil, fmt.Errorf("cannot read the OIDC configuration of product %d: %w", id, err)
		}
	}
	if snap.Children, err = children.Read(ctx, c, tsclient.ProductScope(id)); err != nil {
		return nil, err
	}
	if d.Promotes {
		if snap.Configs, err = kit.ReadConfigVersions(ctx, c, id); err != nil {
			return nil, err
		}
	}
	if d.Features {
		if snap.Features, err = c.ListProductFeatures(ctx, id); err != nil {
			return nil, fmt.Errorf("cannot list the features of product %d: %w", id, err)
		}
		if snap.Features == nil {
			snap.Features = []tsclient.Feature{} // read: none
		}
	}
	return snap, nil
}

// readNew is readAll for a service this reconcile has just created: it reads only the ids of what porta
// puts in a new service (hits, the default mapping rule). Its proxy, OIDC settings and policy chain are
// left unknown, so that Update writes what the spec sets (one write each, instead of a read and maybe a
// write), and it has no backend usage yet.
func (s *Syncer) readNew(ctx context.Context, sess *engine.Session, remote tsclient.Product) (*Snapshot, error) {
	kids, err := children.ReadNew(true)(ctx, sess.Remote, tsclient.ProductScope(remote.ID))
	if err != nil {
		return nil, err
	}
	// A new service has no feature.
	return &Snapshot{Product: remote, Proxy: map[string]string{}, Children: kids, Features: []tsclient.Feature{}}, nil
}

// finder reads services of the session's tenant.
func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.Product] {
	return kit.TenantFinder("product", sess, s.Lists,
		func(id int64) (*tsclient.Product, error) { return sess.Remote.GetProduct(ctx, id) },
		func() ([]tsclient.Product, error) { return sess.Remote.ListProducts(ctx) },
		func(r tsclient.Product) (int64, string) { return r.ID, r.SystemName })
}

func productParams(p *v1alpha1.Product, systemName string) tsclient.ProductParams {
	deployment, backendVersion := serviceAttrs(p)
	return tsclient.ProductParams{Name: p.Spec.Name, SystemName: systemName, Description: &p.Spec.Description,
		DeploymentOption: deployment, BackendVersion: backendVersion}
}

func serviceMatches(r tsclient.Product, p *v1alpha1.Product) bool {
	deployment, backendVersion := serviceAttrs(p)
	return r.Name == p.Spec.Name && r.Description == p.Spec.Description && r.DeploymentOption == deployment && r.BackendVersion == backendVersion
}

// Create implements engine.TypedSyncer: creates the service (adopting it after a lost response);
// everything in it follows (Update).
func (s *Syncer) Create(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName,
		func() (*tsclient.Product, error) {
			return sess.Remote.CreateProduct(ctx, productParams(p, sess.SystemName))
		}, p, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	p.Status.ProductID = created.ID
	// Feature ids recorded for a product no longer there, or another tenant's: never to delete here.
	p.Status.FeatureIDs = nil
	oweDeploy(p) // made (or found after its own lost create) by this resource: never deployed yet
	read := func(ctx context.Context, sess *engine.Session, r tsclient.Product) (*Snapshot, error) {
		snap, err := s.readNew(ctx, sess, r)
		if err == nil && d.Promotes {
			snap.Configs = &kit.ConfigVersions{} // a new service has no configuration yet
		}
		return snap, err
	}
	if !fresh {
		read = func(ctx context.Context, sess *engine.Session, r tsclient.Product) (*Snapshot, error) {
			return s.readAll(ctx, sess, d, r)
		}
	}
	snap, err := read(ctx, sess, *created)
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: suspends the live applications of a product just retired,
// writes what differs, then deploys the proxy configuration to staging when staging is behind
// (deployPending: decided from state, product_deploy.go).
func (s *Syncer) Update(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	if sess.DryRun {
		// A look: no Event, no metric, and the applications' cached snapshots stay as 3scale has them.
		dry := *s
		dry.Suspended, dry.Lifecycle.Recorder, dry.Lifecycle.Quiet = nil, nil, true
		s = &dry
	}
	c, id := sess.Remote, snap.Product.ID
	if snap.Retiring != nil {
		// The cached snapshot of an application it suspends says so, so that its Application object, if
		// any, does not read it again; one that is gone is forgotten.
		suspended := func(appID int64, gone bool) {
			if s.Suspended != nil {
				s.Suspended(sess.Tenant, appID, gone)
			}
		}
		if err := s.Lifecycle.suspendAll(ctx, c, p, snap.Retiring, suspended); err != nil {
			return nil, err
		}
		snap.Retiring = nil
	}
	if !gatewayMatches(p, d, snap) {
		oweDeploy(p) // recorded even if this attempt fails after the write
	}
	if !serviceMatches(snap.Product, p) {
		updated, err := c.UpdateProduct(ctx, id, productParams(p, ""))
		if err != nil {
			return nil, fmt.Errorf("cannot update product %q: %w", sess.SystemName, err)
		}
		snap.Product = *updated
	}
	if !proxyMatches(snap.Proxy, d.Proxy) {
		updated, err := c.UpdateProxy(ctx, id, tsclient.ProxyParams(d.Proxy))
		if err != nil {
			return nil, fmt.Errorf("cannot update the proxy of product %q: %w", sess.SystemName, err)
		}
		snap.Proxy = proxyAttributes(updated)
	}
	if !oidcMatches(snap.OIDC, d.OIDC) {
		updated, err := c.UpdateOIDCConfiguration(ctx, id, *d.OIDC)
		if err != nil {
			return nil, fmt.Errorf("cannot update the OIDC configuration of product %q: %w", sess.SystemName, err)
		}
		snap.OIDC = updated
	}
	if !policiesMatch(snap.Policies, d.Policies) {
		updated, err := c.UpdatePolicies(ctx, id, d.Policies)
		if err != nil {
			return nil, fmt.Errorf("cannot update the policy chain of product %q: %w", sess.SystemName, err)
		}
		snap.Policies = updated
	}
	if !usagesMatch(snap.Usages, d.BackendIDs) {
		if err := s.syncUsages(ctx, sess, snap, d.BackendIDs); err != nil {
			return nil, err
		}
	}
	if !featuresMatch(p, snap.Features) {
		if err := syncFeatures(ctx, c, p, snap); err != nil {
			return nil, err
		}
	}
	want := productChildren(p)
	if !children.UpToDate(snap.Children, want) {
		if err := children.Upsert(ctx, c, tsclient.ProductScope(id), snap.Children, want); err != nil {
			return nil, err
		}
	}
	deploy := deployPending(p, d)
	if deploy {
		if err := s.deploy(ctx, c, p, d, snap); err != nil {
			return nil, fmt.Errorf("cannot deploy the proxy configuration of product %q: %w", sess.SystemName, err)
		}
		p.Status.DeployedHash = d.GatewayHash
	}
	if d.Promotes {
		if err := s.syncProduction(ctx, c, p, snap, deploy); err != nil {
			return nil, err
		}
	}
	// Last: porta refuses to delete a metric that the latest staging or production configuration counts,
	// so its removal waits for the deploy (and the promotion) above.
	err := children.Remove(ctx, c, tsclient.ProductScope(id), snap.Children, want,
		func(ctx context.Context) ([]tsclient.ApplicationPlan, error) { return c.ListPlans(ctx, id) })
	children.RecordMetrics(&p.Status.CommonStatus, snap.Children)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// Delete implements engine.TypedSyncer: deletes the service this Product holds (by id, or by system name
// after its own lost create); its plans, usages and children go with it.
func (s *Syncer) Delete(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) error {
	if err := kit.DeleteHeld(p, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteProduct(ctx, id) }); err != nil {
		return err
	}
	DeprecatedProductApplications.DeleteLabelValues(p.Namespace, p.Name)
	ProductLifecycleChanged.DeletePartialMatch(map[string]string{"namespace": p.Namespace, "product": p.Name})
	return nil
}

// endpointAttributes are the proxy attributes porta stores as URLs with an explicit port.
var endpointAttributes = map[string]bool{"endpoint": true, "sandbox_endpoint": true, "api_backend": true}

// ChildrenSnapshot implements children.Holder: a plan reads its metrics' ids.
func (s *Snapshot) ChildrenSnapshot() *children.Snapshot { return s.Children }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Proxy = maps.Clone(s.Proxy)
	if s.OIDC != nil {
		oidc := *s.OIDC
		c.OIDC = &oidc
	}
	c.Policies = slices.Clone(s.Policies)
	c.Features = slices.Clone(s.Features)
	c.Usages = slices.Clone(s.Usages)
	c.Children = s.Children.Clone()
	if s.Configs != nil {
		configs := *s.Configs
		c.Configs = &configs
	}
	return &c
}

// SecretRefs lists the Secrets a Product reads: its provider account, its policies'
// configurations and its OIDC issuer.
func SecretRefs(p *v1alpha1.Product) []string {
	out := []string{p.Spec.ProviderAccountSecretName()}
	for _, pol := range p.Spec.Policies {
		if pol.ConfigurationRef != nil {
			out = append(out, pol.ConfigurationRef.Name)
		}
	}
	if a := p.Spec.Authentication; a != nil && a.OIDC != nil && a.OIDC.IssuerEndpointRef != nil {
		out = append(out, a.OIDC.IssuerEndpointRef.Name)
	}
	return out
}

// PolicyRefs lists the custom policies of a Product's chain (every version but "builtin") by
// v1alpha1.PolicyKey.
func PolicyRefs(o client.Object) []string {
	p, ok := o.(*v1alpha1.Product)
	if !ok {
		return nil
	}
	set := map[string]bool{}
	for _, pol := range p.Spec.Policies {
		if pol.Version != v1alpha1.BuiltinPolicyVersion {
			set[v1alpha1.PolicyKey(pol.Name, pol.Version)] = true
		}
	}
	return kit.SortedKeys(set)
}

// BackendRefs lists the Backends a Product uses (spec.backendUsages).
func BackendRefs(o client.Object) []string {
	if p, ok := o.(*v1alpha1.Product); ok {
		return kit.SortedKeys(p.Spec.BackendUsages)
	}
	return nil
}

var customPolicyOfProduct = kit.Dependency{Kind: "CustomPolicyDefinition", Field: "in spec.policies", NotFound: v1alpha1.ReasonCustomPolicyNotFound,
	Deleting: v1alpha1.ReasonCustomPolicyDeleting, Invalid: v1alpha1.ReasonCustomPolicyInvalid, NotSynced: v1alpha1.ReasonCustomPolicyNotSynced,
	DeletingHint: "remove the policy from spec.policies to let it go", WhileDeleting: kit.WaitingFor}

// checkCustomPolicies checks that every custom policy of a Product's chain (a version but "builtin") has
// its CustomPolicyDefinition in the namespace, Synced on the Product's tenant: APIcast would fail to load
// a chain that names a policy the registry lacks, and porta accepts such a chain without a word.
func checkCustomPolicies(ctx context.Context, reader client.Reader, p *v1alpha1.Product, tenant string) error {
	for _, key := range PolicyRefs(p) {
		var defs v1alpha1.CustomPolicyDefinitionList
		if err := reader.List(ctx, &defs, client.InNamespace(p.Namespace), client.MatchingFields{kit.IndexPolicyKey: key}); err != nil {
			return err
		}
		name, version, _ := strings.Cut(key, "@")
		if len(defs.Items) == 0 {
			return engine.Missing(v1alpha1.ReasonCustomPolicyNotFound,
				"waiting for a CustomPolicyDefinition of policy %q version %q (in spec.policies) to be created: 3scale's registry must hold the policy for APIcast to load it "+
					"(one already in 3scale is adopted)", name, version)
		}
		def := pickDefinition(defs.Items)
		if err := customPolicyOfProduct.State(def, nil, def.Name); err != nil {
			return err
		}
		if err := kit.ReadyDependency(def, customPolicyOfProduct); err != nil {
			return err
		}
		if def.Status.TenantHost != tenant {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "CustomPolicyDefinition %q is synced to tenant %s, but this Product to %s; a product can only use custom policies of its own tenant",
				def.Name, def.Status.TenantHost, tenant)
		}
	}
	return nil
}

// pickDefinition is the definition a Product uses among those of one policy in its namespace: the one
// that holds the policy in 3scale (the others lose the ownership conflict), else the first by name.
func pickDefinition(defs []v1alpha1.CustomPolicyDefinition) *v1alpha1.CustomPolicyDefinition {
	best := &defs[0]
	for i := range defs {
		d := &defs[i]
		if (d.Status.PolicyID != 0) != (best.Status.PolicyID != 0) {
			if d.Status.PolicyID != 0 {
				best = d
			}
			continue
		}
		if d.Name < best.Name {
			best = d
		}
	}
	return best
}
