package developerportal

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// SystemName is the system name of every DeveloperPortal's remote object: a tenant has one portal, so
// two DeveloperPortals of one tenant claim the same object and the second waits (the owner key).
const SystemName = "developer-portal"

// Syncer syncs DeveloperPortals to the tenant's CMS.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache; ConfigMaps' data on demand).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts

	// plans are the plans Compare made, for the Update of the same sync.
	plans plans
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.DeveloperPortal, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                           = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.DeveloperPortal, *Snapshot]                = (*Syncer)(nil)
	_ engine.Explainer[*v1alpha1.DeveloperPortal, Desired, *Snapshot]   = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.DeveloperPortal]                       = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, p *v1alpha1.DeveloperPortal) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, p.Namespace, kit.SecretForSession(p, p.Spec.ProviderAccountSecretName()))
}

// SystemName implements engine.TypedSyncer: the same for every portal (SystemName).
func (s *Syncer) SystemName(*v1alpha1.DeveloperPortal) string { return SystemName }

// Validate implements engine.Validator: what porta would refuse and the spec alone tells (validSpec).
func (s *Syncer) Validate(p *v1alpha1.DeveloperPortal) error { return validSpec(p.Spec) }

// Resolve implements engine.TypedSyncer: the contents from their ConfigMaps, and what they tell is
// wrong; one DeveloperPortal per tenant.
func (s *Syncer) Resolve(ctx context.Context, p *v1alpha1.DeveloperPortal, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	want, err := desired(ctx, s.Reader, p)
	if err != nil {
		return r, err
	}
	hashes := make([]string, 0, len(want.Templates)+len(want.Files))
	for _, t := range want.Templates {
		hashes = append(hashes, t.Key.String()+"="+t.Hash)
	}
	for _, f := range want.Files {
		hashes = append(hashes, f.Key.String()+"="+f.Hash)
	}
	for _, pv := range want.Providers {
		hashes = append(hashes, pv.Key.String()+"="+pv.ClientSecret) // keyed: the hash tells nothing of the secret
	}
	r.Desired = want
	r.Hash = sess.HashOf(sess.Tenant, sess.SystemName, &p.Spec, hashes)
	return r, nil
}

// Read implements engine.TypedSyncer: the tenant's CMS, found by the root section recorded (or the
// tenant's root section: a tenant has one portal, taken over on purpose and announced), with the hash
// of each file the spec names: vouched for by status.items when 3scale's updated_at is the one apimsync
// recorded after its own write, read from the file's URL otherwise.
func (s *Syncer) Read(ctx context.Context, p *v1alpha1.DeveloperPortal, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	snap, err := read(ctx, sess.Remote, p.Status.RootSectionID, want.Settings != nil, len(want.Providers) > 0 || madeProviders(p))
	if err != nil || snap == nil {
		if snap == nil && err == nil {
			p.Status.RootSectionID = 0
		}
		return nil, false, err
	}
	p.Status.RootSectionID = snap.RootID
	recs := records(p)
	for _, f := range want.Files {
		r := snap.file(recs[f.Key].ID, f.Path)
		if r == nil {
			continue
		}
		if rec := recs[f.Key]; rec.ID == r.ID && rec.Hash != "" && rec.UpdatedAt == r.UpdatedAt {
			snap.FileHashes[r.ID] = rec.Hash
			continue
		}
		content, err := sess.Remote.FileContent(ctx, *r)
		if err != nil {
			return nil, false, fmt.Errorf("cannot read the content of portal file %s: %w", r.Path, err)
		}
		snap.FileHashes[r.ID] = hashOf(content)
	}
	return snap, true, nil
}

// read reads the tenant's CMS, and its settings and sign-in providers when asked; nil when it has no
// root section (rootID, when not 0, is the one recorded).
func read(ctx context.Context, c *tsclient.Client, rootID int64, settings, providers bool) (*Snapshot, error) {
	sections, err := c.ListCMSSections(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the portal's sections: %w", err)
	}
	snap := &Snapshot{Sections: sections, FileHashes: map[int64]string{}}
	for _, sec := range sections {
		if (rootID != 0 && sec.ID == rootID) || (rootID == 0 && sec.SystemName == tsclient.RootSection && sec.ParentID == 0) {
			snap.RootID = sec.ID
		}
	}
	if snap.RootID == 0 {
		return nil, nil
	}
	if snap.Templates, err = c.ListCMSTemplates(ctx); err != nil {
		return nil, fmt.Errorf("cannot list the portal's templates: %w", err)
	}
	if snap.Files, err = c.ListCMSFiles(ctx); err != nil {
		return nil, fmt.Errorf("cannot list the portal's files: %w", err)
	}
	if settings {
		if snap.Settings, err = c.GetPortalSettings(ctx); err != nil {
			return nil, fmt.Errorf("cannot read the portal's settings: %w", err)
		}
	}
	if providers {
		if snap.Providers, err = c.ListAuthenticationProviders(ctx); err != nil {
			return nil, fmt.Errorf("cannot list the portal's sign-in providers: %w", err)
		}
		snap.ProvidersRead = true
	}
	return snap, nil
}

// Serves implements engine.CacheChecker: a cached snapshot serves while it holds what the spec manages
// (settings, sign-in providers) and knows the content of every file the spec names that the tenant has
// (a file added to the spec may be one the tenant has already).
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	if (want.Settings != nil && snap.Settings == nil) || (len(want.Providers) > 0 && !snap.ProvidersRead) {
		return false
	}
	for _, f := range want.Files {
		if r := snap.file(0, f.Path); r != nil {
			if _, known := snap.FileHashes[r.ID]; !known {
				return false
			}
		}
	}
	return true
}

// Compare implements engine.TypedSyncer: the plan is empty. It records in status what it found (the
// items' ids and states), and keeps the plan for the Update of the same sync.
func (s *Syncer) Compare(_ context.Context, p *v1alpha1.DeveloperPortal, sess *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	pl, err := makePlan(p, want, snap)
	if err != nil {
		s.plans.drop(p)
		return false, err
	}
	record(p, want, snap, pl)
	s.plans.keep(p, sess, snap, pl)
	return !pl.writes(), nil
}

// Note implements engine.Noter: the items taken over (found by path or system name, not made by
// apimsync), the drafts waiting to be published and the templates edited by hand and left so (Manual).
func (s *Syncer) Note(p *v1alpha1.DeveloperPortal, _ *Snapshot) string {
	var drafts, edited, leaving []string
	for _, it := range p.Status.Items {
		switch it.State {
		case v1alpha1.PortalItemDraft:
			drafts = append(drafts, it.Key)
		case v1alpha1.PortalItemEditedByHand:
			edited = append(edited, it.Key)
		case v1alpha1.PortalItemLeaving:
			leaving = append(leaving, it.Key)
		}
	}
	var notes []string
	if taken := tookOver(p); taken > 0 {
		notes = append(notes, fmt.Sprintf("%d items the spec names were in the tenant before and are kept by this portal (not made by apimsync: never deleted by it)", taken))
	}
	if len(drafts) > 0 {
		notes = append(notes, fmt.Sprintf("%d templates are drafts for a person to publish in the admin portal (%s)", len(drafts), strings.Join(drafts, ", ")))
	}
	if len(leaving) > 0 {
		notes = append(notes, fmt.Sprintf("%d pages left the spec and stay live until the drafts are published, then go (%s)", len(leaving), strings.Join(leaving, ", ")))
	}
	if len(edited) > 0 {
		notes = append(notes, fmt.Sprintf("%d templates were edited in the admin portal and are left so until the spec changes them (%s)", len(edited), strings.Join(edited, ", ")))
	}
	return strings.Join(notes, "; ")
}

// Create implements engine.TypedSyncer: a tenant always has its portal (its root section is made with
// its account); one without is an error to retry, not a portal to make.
func (s *Syncer) Create(context.Context, *v1alpha1.DeveloperPortal, *engine.Session, Desired) (engine.Created[*Snapshot], error) {
	return engine.Created[*Snapshot]{}, engine.NothingMade(fmt.Errorf("the tenant's CMS has no root section: its developer portal is not there yet"))
}

// Delete implements engine.TypedSyncer: deletes what apimsync made (status.items) and, with
// restoreBuiltins, writes back the built-ins it overrode; the rest of the portal stays.
func (s *Syncer) Delete(ctx context.Context, p *v1alpha1.DeveloperPortal, sess *engine.Session) error {
	s.plans.drop(p)
	snap, err := read(ctx, sess.Remote, p.Status.RootSectionID, false, madeProviders(p))
	if err != nil || snap == nil {
		return err
	}
	want := Desired{RestoreBuiltins: p.Spec.RestoreBuiltins, Publish: p.Spec.EffectivePublish()}
	pl, err := makePlan(p, want, snap)
	if err != nil {
		return err
	}
	return apply(ctx, sess.Remote, p, snap, pl)
}

// Update implements engine.TypedSyncer: carries out the plan Compare made and recorded in this sync (made
// and recorded now, as Compare does, when there is none), recording each item's id and state as 3scale
// answers.
func (s *Syncer) Update(ctx context.Context, p *v1alpha1.DeveloperPortal, sess *engine.Session, want Desired, snap *Snapshot) (*Snapshot, error) {
	pl := s.plans.take(p, sess, snap)
	if pl == nil {
		var err error
		if pl, err = makePlan(p, want, snap); err != nil {
			return nil, err
		}
		record(p, want, snap, pl)
	}
	if err := apply(ctx, sess.Remote, p, snap, pl); err != nil {
		return nil, err
	}
	count(p)
	return snap, nil
}

// plans keeps the plan Compare made of each portal for the Update of the same sync, so that the plan is
// made once a sync: the engine calls Compare, then Update with the same session, object and desired
// state and a copy of the same snapshot (engine.Reconciler.sync, Preview), and the plan Compare made
// and recorded in status is what Update would make again from it (TestPlanIsRecordedAsMade). A plan is
// taken only by the sync it was made for, known by its session and object (each sync has its own) and
// its snapshot (or a copy of it): any other Update plans afresh. It holds one plan a portal (by UID) at
// most, the latest Compare's, until Update takes it or the portal goes. Portals are synced
// concurrently: mu guards byUID.
type plans struct {
	mu    sync.Mutex
	byUID map[types.UID]planned
}

// planned is a plan Compare made, with the sync it was made for: its session, its object and the
// snapshot it was made over.
type planned struct {
	sess *engine.Session
	obj  *v1alpha1.DeveloperPortal
	snap *Snapshot
	plan *plan
}

// keep keeps pl, made by Compare over snap in the sync of p with sess, for that sync's Update; a plan
// with nothing to write (no Update follows) is not kept.
func (ps *plans) keep(p *v1alpha1.DeveloperPortal, sess *engine.Session, snap *Snapshot, pl *plan) {
	if !pl.writes() {
		ps.drop(p)
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byUID == nil {
		ps.byUID = map[types.UID]planned{}
	}
	ps.byUID[p.UID] = planned{sess: sess, obj: p, snap: snap, plan: pl}
}

// take returns the plan Compare made in the sync of p with sess over snap or the snapshot snap is a
// copy of, and forgets it; nil when there is none.
func (ps *plans) take(p *v1alpha1.DeveloperPortal, sess *engine.Session, snap *Snapshot) *plan {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	m, ok := ps.byUID[p.UID]
	if !ok {
		return nil
	}
	delete(ps.byUID, p.UID)
	if m.sess != sess || !m.madeFor(p, snap) {
		return nil
	}
	return m.plan
}

// peek returns the plan Compare made for p over snap, and keeps it (Explain, between Compare and Update);
// nil when there is none.
func (ps *plans) peek(p *v1alpha1.DeveloperPortal, snap *Snapshot) *plan {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if m, ok := ps.byUID[p.UID]; ok && m.madeFor(p, snap) {
		return m.plan
	}
	return nil
}

// drop forgets p's plan.
func (ps *plans) drop(p *v1alpha1.DeveloperPortal) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.byUID, p.UID)
}

// madeFor tells whether m was made for object p over snap, or over the snapshot snap is a copy of.
func (m planned) madeFor(p *v1alpha1.DeveloperPortal, snap *Snapshot) bool {
	return m.obj == p && (m.snap == snap || m.snap == snap.copyOf.Value())
}

// SecretRefs lists the Secrets a DeveloperPortal reads: its provider account, its sign-in providers'
// client secrets.
func SecretRefs(p *v1alpha1.DeveloperPortal) []string {
	out := []string{p.Spec.ProviderAccountSecretName()}
	for _, sp := range p.Spec.SignInProviders {
		out = append(out, sp.ClientSecretRef.Name)
	}
	return out
}
