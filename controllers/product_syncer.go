package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// snapshotKindProduct is the kind under which product snapshots are cached.
const snapshotKindProduct = "product"

// productSnapshot is the remote state of one product (service) and everything apimsync manages in it.
type productSnapshot struct {
	Product  tsclient.Product
	Proxy    map[string]string // proxy attributes by porta name, as strings
	OIDC     *tsclient.OIDCConfiguration
	Policies []tsclient.Policy
	Usages   []tsclient.BackendUsage
	Children *childrenSnapshot
	// Retiring, set by Observe only (never cached), holds the applications of a retired product whose
	// live ones Update suspends (productLifecycle.suspendAll).
	Retiring []tsclient.Application
}

// productDesired is what Resolve learnt from the Product's dependencies.
type productDesired struct {
	BackendIDs map[int64]string // backend id -> path
	Proxy      map[string]string
	Policies   []tsclient.Policy // nil: the chain is not managed
	OIDC       *tsclient.OIDCConfiguration
}

// ProductSyncer syncs Products to 3scale services with their proxy settings, authentication, metrics,
// methods, mapping rules, policy chain and backend usages.
type ProductSyncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *ProviderAccounts
	// Snapshots caches remote state between reconciles.
	Snapshots *cache.Snapshots
	// Claims arbitrates resources that resolve to the same product.
	Claims *Claims
	// Lists shares the tenant's list of services among the Products looking for theirs in one burst.
	Lists *BurstLists
	// Lifecycle keeps the lifecycle bookkeeping and usage reports.
	Lifecycle productLifecycle
}

var _ engine.Syncer[*v1alpha1.Product] = &ProductSyncer{}

func productChildren(p *v1alpha1.Product) childrenSpec {
	return childrenSpec{Metrics: p.Spec.Metrics, Methods: p.Spec.Methods, Rules: p.Spec.MappingRules}
}

// Connect implements engine.Syncer.
func (s *ProductSyncer) Connect(ctx context.Context, p *v1alpha1.Product) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, p.Namespace, secretForSession(p, p.Spec.ProviderAccountSecretName()))
}

// Resolve implements engine.Syncer: every Backend used must exist and be Synced on the same tenant (an
// Invalid one makes the Product Invalid), Secrets of policies and OIDC must exist, and no other resource
// may own the same service.
func (s *ProductSyncer) Resolve(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) error {
	sess.SystemName = systemNameOf(p.Spec.SystemName, p.Name)
	s.Lifecycle.track(p, sess)
	children := productChildren(p)
	// Checked here, not in a Validate before everything: the lifecycle is tracked first (an edit
	// that retires the product is dated when it is seen). The schema checks this at admission anyway.
	if err := invalidChildren(children); err != nil {
		return err
	}
	backendIDs, err := s.resolveBackends(ctx, p, sess.Tenant)
	if err != nil {
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
	if err := checkSoleOwner(ctx, s.Reader, s.Claims, p, &v1alpha1.ProductList{}, ownerKey(sess.Tenant, "", sess.SystemName)); err != nil {
		return err
	}
	desired := &productDesired{BackendIDs: backendIDs, Proxy: proxy, Policies: policies, OIDC: oidc}
	sess.Desired = desired
	deployment, backendVersion := serviceAttrs(p)
	sess.Hash = sess.HashOf(sess.Tenant, sess.SystemName, p.Spec.Name, p.Spec.Description, deployment, backendVersion, children, desired)
	return nil
}

// backendOfProduct is a Backend in a Product's spec.backendUsages. One being deleted is waited for
// quietly (Pending): in a mass deletion the Product goes a moment later, and a Synced one stays Synced
// meanwhile (the Backend waits for it, in 3scale too); past the quiet wait the Product is Orphan.
var backendOfProduct = dependency{Kind: "Backend", Field: "in spec.backendUsages", NotFound: ReasonBackendNotFound, Deleting: ReasonBackendDeleting,
	Invalid: ReasonBackendInvalid, NotSynced: ReasonBackendNotSynced, DeletingHint: "remove it from spec.backendUsages to let it go",
	WhileDeleting: func(_ engine.Object, reason, format string, args ...any) error {
		return engine.Pending(reason, format, args...)
	}}

func (s *ProductSyncer) resolveBackends(ctx context.Context, p *v1alpha1.Product, tenant string) (map[int64]string, error) {
	ids := map[int64]string{}
	for _, name := range sortedKeys(p.Spec.BackendUsages) {
		var b v1alpha1.Backend
		if err := checkDependency(ctx, s.Reader, p.Namespace, name, &b, backendOfProduct); err != nil {
			return nil, err
		}
		if b.Status.TenantHost != tenant {
			return nil, engine.Invalid(ReasonInvalidSpec, "Backend %q is synced to tenant %s, but this Product to %s; a product can only use backends of its own tenant",
				name, b.Status.TenantHost, tenant)
		}
		ids[b.Status.BackendID] = p.Spec.BackendUsages[name].Path
	}
	return ids, nil
}

func (s *ProductSyncer) resolvePolicies(ctx context.Context, p *v1alpha1.Product) ([]tsclient.Policy, error) {
	if len(p.Spec.Policies) == 0 {
		return nil, nil
	}
	out := make([]tsclient.Policy, 0, len(p.Spec.Policies))
	for i, pol := range p.Spec.Policies {
		config := json.RawMessage(`{}`)
		switch {
		case pol.Configuration != nil && len(pol.Configuration.Raw) > 0:
			config = json.RawMessage(pol.Configuration.Raw)
		case pol.ConfigurationRef != nil:
			v, err := secretValue(ctx, s.Reader, p.Namespace, pol.ConfigurationRef, fmt.Sprintf("configuration of policy %q", pol.Name))
			if err != nil {
				return nil, err
			}
			if !json.Valid([]byte(v)) {
				return nil, engine.Invalid(ReasonInvalidSpec, "policies[%d] (%s): the configuration in Secret %q is not JSON", i, pol.Name, pol.ConfigurationRef.Name)
			}
			config = json.RawMessage(v)
		}
		out = append(out, tsclient.Policy{Name: pol.Name, Version: pol.Version, Configuration: config, Enabled: pol.Enabled})
	}
	return out, nil
}

// serviceAttrs returns 3scale's deployment_option and backend_version (authentication mode) for the spec.
func serviceAttrs(p *v1alpha1.Product) (deploymentOption, backendVersion string) {
	deploymentOption = "hosted"
	if d := p.Spec.Deployment; d != nil && d.ApicastSelfManaged != nil {
		deploymentOption = "self_managed"
	}
	backendVersion = "1"
	if a := p.Spec.Authentication; a != nil {
		switch {
		case a.AppKeyAppID != nil:
			backendVersion = "2"
		case a.OIDC != nil:
			backendVersion = "oidc"
		}
	}
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

// resolveProxy returns the proxy attributes the spec sets, by porta name, and porta's defaults for the
// managed ones it does not set; others are left as 3scale has them.
func (s *ProductSyncer) resolveProxy(ctx context.Context, p *v1alpha1.Product) (map[string]string, *tsclient.OIDCConfiguration, error) {
	proxy := maps.Clone(proxyDefaults)
	set := func(key, value string) {
		if value != "" {
			proxy[key] = value
		}
	}
	if d := p.Spec.Deployment; d != nil && d.ApicastSelfManaged != nil {
		set("sandbox_endpoint", d.ApicastSelfManaged.StagingPublicBaseURL)
		set("endpoint", d.ApicastSelfManaged.ProductionPublicBaseURL)
	}
	a := p.Spec.Authentication
	if a == nil {
		return proxy, nil, nil
	}
	var gw v1alpha1.GatewayOptions
	var oidc *tsclient.OIDCConfiguration
	switch {
	case a.UserKey != nil:
		gw = a.UserKey.GatewayOptions
		set("auth_user_key", a.UserKey.AuthUserKey)
	case a.AppKeyAppID != nil:
		gw = a.AppKeyAppID.GatewayOptions
		set("auth_app_id", a.AppKeyAppID.AppID)
		set("auth_app_key", a.AppKeyAppID.AppKey)
	case a.OIDC != nil:
		o := a.OIDC
		gw = o.GatewayOptions
		endpoint := o.IssuerEndpoint
		if o.IssuerEndpointRef != nil {
			v, err := secretValue(ctx, s.Reader, p.Namespace, o.IssuerEndpointRef, "OIDC issuer endpoint")
			if err != nil {
				return nil, nil, err
			}
			endpoint = v
		}
		set("oidc_issuer_endpoint", endpoint)
		set("oidc_issuer_type", o.IssuerType)
		set("jwt_claim_with_client_id", o.JWTClaimWithClientID)
		set("jwt_claim_with_client_id_type", o.JWTClaimWithClientIDType)
		oidc = &tsclient.OIDCConfiguration{}
		if f := o.AuthenticationFlow; f != nil {
			oidc = &tsclient.OIDCConfiguration{StandardFlowEnabled: f.StandardFlowEnabled, ImplicitFlowEnabled: f.ImplicitFlowEnabled,
				ServiceAccountsEnabled: f.ServiceAccountsEnabled, DirectAccessGrantsEnabled: f.DirectAccessGrantsEnabled}
		}
	}
	set("credentials_location", string(gw.CredentialsLocation))
	if sec := gw.Security; sec != nil {
		set("hostname_rewrite", sec.HostHeader)
		set("secret_token", sec.SecretToken)
	}
	if r := gw.GatewayResponse; r != nil {
		for suffix, e := range map[string]*v1alpha1.GatewayErrorResponse{"auth_failed": r.AuthFailed, "auth_missing": r.AuthMissing,
			"no_match": r.NoMatch, "limits_exceeded": r.LimitsExceeded} {
			if e == nil {
				continue
			}
			set("error_status_"+suffix, strconv.Itoa(int(e.Status)))
			set("error_headers_"+suffix, e.ContentType)
			set("error_"+suffix, e.Body)
		}
	}
	return proxy, oidc, nil
}

// Observe implements engine.Syncer.
func (s *ProductSyncer) Observe(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) (engine.Observation, error) {
	snap, err := s.read(ctx, p, sess)
	if err != nil || snap == nil {
		return engine.Observation{}, err
	}
	recordMetrics(&p.Status.CommonStatus, snap.Children)
	if sess.PeriodicDue && p.Status.ProductID != 0 {
		retiring, err := s.Lifecycle.refreshUsage(ctx, sess.Remote, p)
		if err != nil {
			return engine.Observation{}, err
		}
		if retiring != nil {
			snap = snap.clone()
			snap.Retiring = retiring
		}
		sess.Note = usageNote(p)
	}
	return engine.Observation{Exists: true, UpToDate: snap.Retiring == nil && s.upToDate(p, sess, snap), Snapshot: snap}, nil
}

func (s *ProductSyncer) upToDate(p *v1alpha1.Product, sess *engine.Session, snap *productSnapshot) bool {
	d := sess.Desired.(*productDesired)
	return serviceMatches(snap.Product, p) && proxyMatches(snap.Proxy, d.Proxy) && oidcMatches(snap.OIDC, d.OIDC) &&
		policiesMatch(snap.Policies, d.Policies) && usagesMatch(snap.Usages, d.BackendIDs) &&
		childrenUpToDate(snap.Children, productChildren(p))
}

func (s *ProductSyncer) read(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) (*productSnapshot, error) {
	if id := p.Status.ProductID; id != 0 && !sess.ForceRead {
		if snap, ok := cache.Get[*productSnapshot](s.Snapshots, sess.Tenant, snapshotKindProduct, id); ok {
			return snap, nil
		}
	}
	remote, err := s.find(ctx, p, sess)
	if err != nil || remote == nil {
		return nil, err
	}
	return s.readAll(ctx, sess, *remote)
}

// readAll reads everything apimsync manages in one service.
func (s *ProductSyncer) readAll(ctx context.Context, sess *engine.Session, remote tsclient.Product) (*productSnapshot, error) {
	c, id := sess.Remote, remote.ID
	snap := &productSnapshot{Product: remote}
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
	if d, ok := sess.Desired.(*productDesired); ok && d.OIDC != nil {
		if snap.OIDC, err = c.GetOIDCConfiguration(ctx, id); err != nil {
			return nil, fmt.Errorf("cannot read the OIDC configuration of product %d: %w", id, err)
		}
	}
	if snap.Children, err = readChildren(ctx, c, tsclient.ProductScope(id)); err != nil {
		return nil, err
	}
	s.Snapshots.Put(sess.Tenant, snapshotKindProduct, id, snap)
	return snap, nil
}

// readNew is readAll for a service this reconcile has just created: it reads only the ids of what porta
// puts in a new service (hits, the default mapping rule). Its proxy, OIDC settings and policy chain are
// left unknown, so that Update writes what the spec sets (one write each, instead of a read and maybe a
// write), and it has no backend usage yet.
func (s *ProductSyncer) readNew(ctx context.Context, sess *engine.Session, remote tsclient.Product) (*productSnapshot, error) {
	children, err := readNewChildren(true)(ctx, sess.Remote, tsclient.ProductScope(remote.ID))
	if err != nil {
		return nil, err
	}
	return &productSnapshot{Product: remote, Proxy: map[string]string{}, Children: children}, nil
}

// find returns the remote service this Product may touch (see locate); nil if none.
func (s *ProductSyncer) find(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) (*tsclient.Product, error) {
	return locate(p, sess, s.finder(ctx, sess))
}

// finder reads services of the session's tenant.
func (s *ProductSyncer) finder(ctx context.Context, sess *engine.Session) remoteFinder[tsclient.Product] {
	return remoteFinder[tsclient.Product]{kind: "product",
		get:  func(id int64) (*tsclient.Product, error) { return sess.Remote.GetProduct(ctx, id) },
		list: func() ([]tsclient.Product, error) { return sess.Remote.ListProducts(ctx) },
		shared: func() ([]tsclient.Product, error) {
			return sharedList(s.Lists, sess.Tenant+" products", func() ([]tsclient.Product, error) { return sess.Remote.ListProducts(ctx) })
		},
		idName: func(r tsclient.Product) (int64, string) { return r.ID, r.SystemName },
		forget: func(id int64) { s.Snapshots.Forget(sess.Tenant, snapshotKindProduct, id) },
	}
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

// Create implements engine.Syncer: creates the service (adopting it after a lost response), then syncs
// everything in it.
func (s *ProductSyncer) Create(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) error {
	created, fresh, err := createOrAdopt(sess.SystemName,
		func() (*tsclient.Product, error) {
			return sess.Remote.CreateProduct(ctx, productParams(p, sess.SystemName))
		}, p, sess, s.finder(ctx, sess))
	if err != nil {
		return err
	}
	p.Status.ProductID = created.ID
	var snap *productSnapshot
	if fresh {
		snap, err = s.readNew(ctx, sess, *created)
	} else {
		snap, err = s.readAll(ctx, sess, *created)
	}
	if err != nil {
		return err
	}
	return s.Update(ctx, p, sess, engine.Observation{Exists: true, Snapshot: snap})
}

// Update implements engine.Syncer: suspends the live applications of a product just retired, writes
// what differs, then deploys the proxy configuration to staging
// when anything the gateway uses changed.
func (s *ProductSyncer) Update(ctx context.Context, p *v1alpha1.Product, sess *engine.Session, o engine.Observation) error {
	snap := o.Snapshot.(*productSnapshot).clone()
	d := sess.Desired.(*productDesired)
	c, id := sess.Remote, snap.Product.ID
	s.Snapshots.Forget(sess.Tenant, snapshotKindProduct, id)
	if snap.Retiring != nil {
		// The cached snapshot of an application it suspends says so, so that its Application object, if
		// any, does not read it again; one that is gone is forgotten.
		suspended := func(appID int64, gone bool) {
			app, ok := cache.Get[*applicationSnapshot](s.Snapshots, sess.Tenant, snapshotKindApplication, appID)
			if gone || !ok {
				s.Snapshots.Forget(sess.Tenant, snapshotKindApplication, appID)
				return
			}
			next := *app // copy on write: snapshots handed out are never changed in place
			next.App.State = appSuspended
			s.Snapshots.Put(sess.Tenant, snapshotKindApplication, appID, &next)
		}
		if err := s.Lifecycle.suspendAll(ctx, c, p, snap.Retiring, suspended); err != nil {
			return err
		}
		snap.Retiring = nil
		sess.Note = usageNote(p)
	}
	if !serviceMatches(snap.Product, p) {
		updated, err := c.UpdateProduct(ctx, id, productParams(p, ""))
		if err != nil {
			return fmt.Errorf("cannot update product %q: %w", sess.SystemName, err)
		}
		snap.Product = *updated
	}
	deploy := false
	if !proxyMatches(snap.Proxy, d.Proxy) {
		updated, err := c.UpdateProxy(ctx, id, tsclient.ProxyParams(d.Proxy))
		if err != nil {
			return fmt.Errorf("cannot update the proxy of product %q: %w", sess.SystemName, err)
		}
		snap.Proxy, deploy = proxyAttributes(updated), true
	}
	if !oidcMatches(snap.OIDC, d.OIDC) {
		updated, err := c.UpdateOIDCConfiguration(ctx, id, *d.OIDC)
		if err != nil {
			return fmt.Errorf("cannot update the OIDC configuration of product %q: %w", sess.SystemName, err)
		}
		snap.OIDC, deploy = updated, true
	}
	if !policiesMatch(snap.Policies, d.Policies) {
		updated, err := c.UpdatePolicies(ctx, id, d.Policies)
		if err != nil {
			return fmt.Errorf("cannot update the policy chain of product %q: %w", sess.SystemName, err)
		}
		snap.Policies, deploy = updated, true
	}
	if !usagesMatch(snap.Usages, d.BackendIDs) {
		if err := s.syncUsages(ctx, sess, snap, d.BackendIDs); err != nil {
			return err
		}
		deploy = true
	}
	want := productChildren(p)
	if !childrenUpToDate(snap.Children, want) {
		if err := syncChildren(ctx, c, tsclient.ProductScope(id), snap.Children, want); err != nil {
			return err
		}
		deploy = true
	}
	if deploy {
		if err := c.DeployProxy(ctx, id); err != nil {
			return fmt.Errorf("cannot deploy the proxy configuration of product %q: %w", sess.SystemName, err)
		}
	}
	recordMetrics(&p.Status.CommonStatus, snap.Children)
	s.Snapshots.Put(sess.Tenant, snapshotKindProduct, id, snap)
	return nil
}

// syncUsages creates, updates and deletes backend usages to match want (backend id -> path).
func (s *ProductSyncer) syncUsages(ctx context.Context, sess *engine.Session, snap *productSnapshot, want map[int64]string) error {
	c, id := sess.Remote, snap.Product.ID
	kept := make([]tsclient.BackendUsage, 0, len(want))
	have := map[int64]tsclient.BackendUsage{}
	for _, u := range snap.Usages {
		if _, wanted := want[u.BackendID]; !wanted {
			if err := ignoreNotFound(c.DeleteBackendUsage(ctx, id, u.ID)); err != nil {
				return fmt.Errorf("cannot remove backend %d from product %q: %w", u.BackendID, sess.SystemName, err)
			}
			continue
		}
		have[u.BackendID] = u
	}
	for _, backendID := range sortedKeys(want) {
		path := want[backendID]
		u, ok := have[backendID]
		switch {
		case !ok:
			created, err := c.CreateBackendUsage(ctx, id, tsclient.BackendUsageParams{BackendAPIID: backendID, Path: path})
			if err != nil {
				return fmt.Errorf("cannot add backend %d to product %q: %w", backendID, sess.SystemName, err)
			}
			u = *created
		case u.Path != path:
			updated, err := c.UpdateBackendUsage(ctx, id, u.ID, tsclient.BackendUsageParams{Path: path})
			if err != nil {
				return fmt.Errorf("cannot change the path of backend %d in product %q: %w", backendID, sess.SystemName, err)
			}
			u = *updated
		}
		kept = append(kept, u)
	}
	snap.Usages = kept
	return nil
}

// Delete implements engine.Syncer: deletes the service this Product holds (by id, or by system name
// after its own lost create); its plans, usages and children go with it.
func (s *ProductSyncer) Delete(ctx context.Context, p *v1alpha1.Product, sess *engine.Session) error {
	sess.SystemName = systemNameOf(p.Spec.SystemName, p.Name)
	if err := deleteHeld(p, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteProduct(ctx, id) }); err != nil {
		return err
	}
	DeprecatedProductApplications.DeleteLabelValues(p.Namespace, p.Name)
	ProductLifecycleChanged.DeletePartialMatch(map[string]string{"namespace": p.Namespace, "product": p.Name})
	return nil
}

// proxyAttributes flattens a proxy into its attributes by porta name, as strings.
func proxyAttributes(proxy *tsclient.Proxy) map[string]string {
	out := map[string]string{}
	raw, err := json.Marshal(proxy)
	if err != nil {
		return out
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return out
	}
	for k, v := range m {
		switch t := v.(type) {
		case nil:
		case string:
			out[k] = t
		case float64:
			out[k] = strconv.FormatFloat(t, 'f', -1, 64)
		default:
			out[k] = fmt.Sprint(t)
		}
	}
	return out
}

// endpointAttributes are the proxy attributes porta stores as URLs with an explicit port.
var endpointAttributes = map[string]bool{"endpoint": true, "sandbox_endpoint": true, "api_backend": true}

func proxyMatches(remote, want map[string]string) bool {
	for k, v := range want {
		if remote[k] != v && !(endpointAttributes[k] && sameEndpoint(remote[k], v)) {
			return false
		}
	}
	return true
}

func oidcMatches(remote, want *tsclient.OIDCConfiguration) bool {
	return want == nil || (remote != nil && *remote == *want)
}

func policiesMatch(remote, want []tsclient.Policy) bool {
	if want == nil {
		return true
	}
	remote = withoutImplicitApicast(remote, want)
	if len(remote) != len(want) {
		return false
	}
	for i := range want {
		r, w := remote[i], want[i]
		if r.Name != w.Name || r.Version != w.Version || r.Enabled != w.Enabled || !jsonEqual(r.Configuration, w.Configuration) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 {
		a = json.RawMessage(`{}`)
	}
	if len(b) == 0 {
		b = json.RawMessage(`{}`)
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func usagesMatch(remote []tsclient.BackendUsage, want map[int64]string) bool {
	if len(remote) != len(want) {
		return false
	}
	for _, u := range remote {
		if path, ok := want[u.BackendID]; !ok || path != u.Path {
			return false
		}
	}
	return true
}
