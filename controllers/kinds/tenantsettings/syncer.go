package tenantsettings

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"time"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SystemName is what identifies a tenant's settings: a tenant has one.
const SystemName = "tenant-settings"

// Syncer syncs TenantSettings.
type Syncer struct {
	// Accounts resolves provider-account Secrets; its AllowPrivate also decides whether a webhook may
	// point at a private address.
	Accounts *kit.ProviderAccounts
	// Reader reads the Secrets of the sign-in providers' client secrets.
	Reader client.Reader
	// Unmanaged lists what of a tenant no apimsync object holds (the table gives it; nil: no report).
	Unmanaged func(ctx context.Context, c *tsclient.Client, tenant string) ([]plugin.RemoteItem, error)
	// Prune deletes one unmanaged object (the table's per-kind pruners); nil: nothing is pruned.
	Prune plugin.Pruner
	// Unsettled names an object of a kind that holds no 3scale id yet and may take one of the tenant's
	// objects ("" none): a prune of that kind waits for it.
	Unsettled func(ctx context.Context, tenant, kind string) (string, error)
	// PartialView: the manager sees only part of the cluster (some namespaces, or one shard): what the
	// rest holds would look unmanaged, so a prune is Invalid.
	PartialView bool
	// Recorder emits an Event per object pruned or kept.
	Recorder events.EventRecorder
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Desired is what Resolve learns beyond the spec: the digest of the webhook settings to write ("" when
// the spec leaves them out), and whether unmanaged objects are reported.
type Desired struct {
	Webhooks string `json:",omitempty"`
	Report   bool   `json:",omitempty"`
	// SignIn: the admin portal's sign-in providers are managed (spec.adminSignIn given, or some recorded
	// to unpublish); Secrets are their client secrets by system name, never serialized.
	SignIn  bool              `json:",omitempty"`
	Secrets map[string]string `json:"-"`
	// Prune is the spec's prune (nil: none).
	Prune *pruning `json:",omitempty"`
}

// reports tells whether the spec asks for the unmanaged report.
func reports(t *v1alpha1.TenantSettings) bool {
	return t.Spec.Unmanaged != nil && t.Spec.Unmanaged.Report
}

// Serves implements engine.CacheChecker: a snapshot without the report does not serve a spec asking it.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return (!want.Report || snap.Unmanaged != nil) && (!want.SignIn || snap.SignIn != nil) && (want.Prune == nil || snap.Items != nil)
}

// Snapshot is the tenant's provider account, and the count of its unmanaged objects by kind when the
// report is asked for (nil otherwise).
type Snapshot struct {
	tsclient.Provider
	Unmanaged map[string]int32
	// Items are the unmanaged objects of the pruned kinds, when the spec prunes (nil otherwise).
	Items []plugin.RemoteItem
	// SignIn are the admin portal's sign-in providers, read when managed (nil otherwise).
	SignIn []tsclient.AuthenticationProvider
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Unmanaged = maps.Clone(s.Unmanaged)
	c.SignIn = slices.Clone(s.SignIn)
	c.Items = slices.Clone(s.Items)
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.TenantSettings, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.TenantSettings, *Snapshot]                = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                          = (*Syncer)(nil)
	_ engine.Refresher[*v1alpha1.TenantSettings, *Snapshot]            = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.TenantSettings]                       = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, t *v1alpha1.TenantSettings) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, t.Namespace, kit.SecretForSession(t, t.Spec.ProviderAccountSecretName()))
}

// SystemName implements the engine's identity: one TenantSettings per tenant (the table's one-owner
// check makes a second one Invalid, naming the first).
func (s *Syncer) SystemName(*v1alpha1.TenantSettings) string { return SystemName }

// Validate implements engine.Validator: a webhook URL must be an http or https URL.
func (s *Syncer) Validate(t *v1alpha1.TenantSettings) error {
	if w := t.Spec.Webhooks; w != nil {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "webhooks.url must be an http or https URL")
		}
	}
	return nil
}

// Resolve implements engine.TypedSyncer: a webhook URL at an address this manager may not have 3scale
// post to is Invalid; a sign-in provider's client secret comes from its Secret (Orphan until it exists).
func (s *Syncer) Resolve(ctx context.Context, t *v1alpha1.TenantSettings, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	if w := t.Spec.Webhooks; w != nil {
		if err := s.checkAddress(w.URL); err != nil {
			return r, err
		}
		r.Desired.Webhooks = sess.HashOf(sess.Tenant, webhookParams(w))
	}
	r.Desired.Report = reports(t) && s.Unmanaged != nil
	if r.Desired.Prune = pruningOf(t); r.Desired.Prune != nil {
		if s.PartialView || s.Unmanaged == nil || s.Prune == nil {
			return r, engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.unmanaged.prune needs a manager that sees every namespace and every object: "+
				"this one watches only some namespaces or one shard, and would take what the others hold for unmanaged")
		}
		r.PeriodicDue, r.PeriodicIn = s.due(t, r.Desired.Prune)
	}
	r.Desired.SignIn = len(t.Spec.AdminSignIn) > 0 || len(t.Status.AdminSignIn) > 0
	r.Desired.Secrets = map[string]string{}
	for i := range t.Spec.AdminSignIn {
		p := &t.Spec.AdminSignIn[i]
		v, err := kit.SecretValue(ctx, s.Reader, t.Namespace, &p.ClientSecretRef, fmt.Sprintf("spec.adminSignIn[%s].clientSecretRef", p.SystemName))
		if err != nil {
			return r, err
		}
		r.Desired.Secrets[p.SystemName] = v
	}
	spec := t.Spec
	spec.CommonSpec = v1alpha1.CommonSpec{}
	// The secrets enter the hash keyed by the token: the hash in status tells nothing of them.
	r.Hash = sess.HashOf(sess.Tenant, spec, r.Desired.Secrets, slices.Sorted(maps.Keys(t.Status.AdminSignIn)))
	return r, nil
}

// checkAddress refuses a webhook URL on a loopback, link-local, private or unspecified address unless
// the manager allows private admin URLs (its --allow-private-admin-urls, not the spec, decides): 3scale
// posts from inside its own network. A host name is not resolved (porta resolves it when it posts). One
// that is not an http(s) URL is Validate's to refuse.
func (s *Syncer) checkAddress(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (s.Accounts != nil && s.Accounts.AllowPrivate) {
		return nil
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())) {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "webhooks.url points at a private or loopback address (%s): 3scale would post from inside its own network; "+
			"the manager refuses it unless it runs with --allow-private-admin-urls", host)
	}
	return nil
}

// webhookParams are the webhook settings a spec asks for.
func webhookParams(w *v1alpha1.WebhooksSpec) tsclient.WebhookParams {
	p := tsclient.WebhookParams{URL: w.URL, Active: w.Active == nil || *w.Active, ProviderActions: w.ProviderActions}
	for _, e := range w.Events {
		p.Events = append(p.Events, string(e))
	}
	slices.Sort(p.Events)
	return p
}

// Read implements engine.TypedSyncer: the tenant's provider account, which always exists; its id is
// recorded (the engine announces the take-over on the first sync).
func (s *Syncer) Read(ctx context.Context, t *v1alpha1.TenantSettings, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	p, err := sess.Remote.GetProvider(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("cannot read the provider account: %w", err)
	}
	t.Status.ProviderAccountID = p.ID
	snap := &Snapshot{Provider: *p}
	if want.SignIn {
		if snap.SignIn, err = sess.Remote.ListAdminAuthenticationProviders(ctx); err != nil {
			return nil, false, fmt.Errorf("cannot list the admin portal's sign-in providers: %w", err)
		}
		if snap.SignIn == nil {
			snap.SignIn = []tsclient.AuthenticationProvider{}
		}
	}
	if want.Report || want.Prune != nil {
		items, err := s.Unmanaged(ctx, sess.Remote, sess.Tenant)
		if err != nil {
			return nil, false, fmt.Errorf("cannot list what no object holds: %w", err)
		}
		if want.Report {
			snap.Unmanaged = counts(items)
		}
		if want.Prune != nil {
			// Never nil when read (nothing unmanaged is an empty list): Serves tells a read one by it.
			snap.Items = slices.DeleteFunc(append([]plugin.RemoteItem{}, items...), func(it plugin.RemoteItem) bool { return !slices.Contains(want.Prune.Kinds, it.Kind) })
		}
	}
	return snap, true, nil
}

// report records the unmanaged counts in status and the gauge (or clears both when not asked for).
func report(t *v1alpha1.TenantSettings, tenant string, want Desired, snap *Snapshot) {
	engine.UnmanagedObjects.DeletePartialMatch(prometheus.Labels{"tenant": tenant})
	if !want.Report {
		t.Status.Unmanaged = nil
		return
	}
	t.Status.Unmanaged = maps.Clone(snap.Unmanaged)
	for kind, n := range snap.Unmanaged {
		engine.UnmanagedObjects.WithLabelValues(tenant, kind).Set(float64(n))
	}
}

// details are the provider account's details the spec asks for (nil: none managed).
func details(t *v1alpha1.TenantSettings) tsclient.ProviderParams {
	a := t.Spec.Account
	if a == nil {
		return tsclient.ProviderParams{}
	}
	return tsclient.ProviderParams{FromEmail: a.FromEmail, SupportEmail: a.SupportEmail, FinanceSupportEmail: a.FinanceSupportEmail, SiteAccessCode: a.SiteAccessCode}
}

// detailsToWrite are the details that differ from the provider account's, nil ones left out.
func detailsToWrite(t *v1alpha1.TenantSettings, p tsclient.Provider) (tsclient.ProviderParams, bool) {
	want, out, any := details(t), tsclient.ProviderParams{}, false
	differ := func(w *string, have string, into **string) {
		if w != nil && *w != have {
			*into, any = w, true
		}
	}
	differ(want.FromEmail, p.FromEmail, &out.FromEmail)
	differ(want.SupportEmail, p.SupportEmail, &out.SupportEmail)
	differ(want.FinanceSupportEmail, p.FinanceSupportEmail, &out.FinanceSupportEmail)
	differ(want.SiteAccessCode, p.SiteAccessCode, &out.SiteAccessCode)
	return out, any
}

// Compare implements engine.TypedSyncer: the details as the spec asks, and the webhook as last written.
func (s *Syncer) Compare(_ context.Context, t *v1alpha1.TenantSettings, sess *engine.Session, d Desired, snap *Snapshot) (bool, error) {
	report(t, sess.Tenant, d, snap)
	if d.Prune == nil || snap.Items != nil {
		s.candidates(t, d.Prune, snap.Items)
	}
	recordSignIn(t, d, snap)
	_, differ := detailsToWrite(t, snap.Provider)
	return !differ && (d.Webhooks == "" || t.Status.WebhooksWritten == d.Webhooks) && len(signInWrites(t, d, snap)) == 0, nil
}

// Create implements engine.TypedSyncer. A tenant always has its provider account, so Read always finds
// it: nothing is ever created.
func (s *Syncer) Create(context.Context, *v1alpha1.TenantSettings, *engine.Session, Desired) (engine.Created[*Snapshot], error) {
	return engine.Created[*Snapshot]{}, fmt.Errorf("a tenant's provider account is never created")
}

// Update implements engine.TypedSyncer: the details that differ (one call), then the webhook when its
// settings changed since last written (one call, all its settings).
func (s *Syncer) Update(ctx context.Context, t *v1alpha1.TenantSettings, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	if params, differ := detailsToWrite(t, snap.Provider); differ {
		updated, err := sess.Remote.UpdateProvider(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("cannot update the provider account: %w", err)
		}
		snap.Provider = *updated
	}
	if d.Webhooks != "" && t.Status.WebhooksWritten != d.Webhooks {
		if err := sess.Remote.UpdateWebhooks(ctx, webhookParams(t.Spec.Webhooks)); err != nil {
			return nil, fmt.Errorf("cannot update the webhook: %w", err)
		}
		t.Status.WebhooksWritten = d.Webhooks
	}
	if err := s.writeSignIn(ctx, t, sess, d, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// Note implements engine.Noter: porta cannot read a webhook back, so drift of it cannot be seen.
func (s *Syncer) Note(t *v1alpha1.TenantSettings, _ *Snapshot) string {
	if t.Spec.Webhooks != nil {
		return "the webhook is as last written: porta's API cannot read it back, so a change made in the admin portal is not seen (an edit of spec.webhooks writes it again)"
	}
	return ""
}

// Delete implements engine.TypedSyncer: the settings stay as they are (a tenant always has them).
func (s *Syncer) Delete(context.Context, *v1alpha1.TenantSettings, *engine.Session) error { return nil }

// SecretRefs lists the Secrets a TenantSettings reads: its provider account.
func SecretRefs(t *v1alpha1.TenantSettings) []string {
	refs := []string{t.Spec.ProviderAccountSecretName()}
	for _, p := range t.Spec.AdminSignIn {
		refs = append(refs, p.ClientSecretRef.Name)
	}
	return refs
}
