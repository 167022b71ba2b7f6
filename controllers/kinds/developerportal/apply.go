package developerportal

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
)

// writer is what the steps of a plan write with: the tenant's client, the portal whose status records
// what 3scale answers, and the snapshot, kept as 3scale answers so that a step finds what an earlier one
// made (a page's new section).
type writer struct {
	c    *tsclient.Client
	p    *v1alpha1.DeveloperPortal
	snap *Snapshot
}

// apply carries out pl's steps in order on the tenant c talks to, keeping snap and p's status.items as
// 3scale answers: an item made is recorded (with its id) as soon as it is made, so that a sync cut short
// knows it next time.
func apply(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, pl *plan) error {
	w := &writer{c: c, p: p, snap: snap}
	for _, st := range pl.steps {
		if err := st.apply(ctx, w); err != nil {
			return fmt.Errorf("portal %s: %w", st.item(), err)
		}
	}
	return nil
}

func (st createSection) item() string { return st.key.String() }

func (st createSection) apply(ctx context.Context, w *writer) error {
	s := *st.want
	params := tsclient.CMSSectionParams{Title: &s.Title, SystemName: &s.SystemName, Public: &s.Public}
	if s.PartialPath != "" {
		params.PartialPath = &s.PartialPath
	}
	if parent := w.snap.section(0, s.Parent); parent != nil {
		params.ParentID = parent.ID
	}
	made, err := w.c.CreateCMSSection(ctx, params)
	if err != nil {
		return err
	}
	w.snap.putSection(*made)
	setItem(w.p, st.key, v1alpha1.PortalItemStatus{ID: made.ID, Created: true})
	return nil
}

func (st updateSection) item() string { return st.key.String() }

func (st updateSection) apply(ctx context.Context, w *writer) error {
	r := *w.snap.section(st.have.ID, "")
	params := st.params
	if r != st.have {
		// An earlier step wrote this very section: two of the spec's sections are this one (one renamed
		// by hand to the other's name). This write diffs against what 3scale answered that one.
		params, _ = sectionChanges(*st.want, r)
	}
	params.ParentID, _ = sectionTo(st.want.Parent, r.ParentID, w.snap)
	updated, err := w.c.UpdateCMSSection(ctx, r.ID, params)
	if err != nil {
		return err
	}
	w.snap.putSection(*updated)
	return nil
}

// createParams are the attributes of a new template t (its content as the draft).
func createParams(t Template, snap *Snapshot) tsclient.CMSTemplateParams {
	p := tsclient.CMSTemplateParams{Type: t.Type, Draft: &t.Content}
	switch t.Type {
	case tsclient.TemplatePage:
		p.Title, p.Path, p.ContentType, p.LiquidEnabled = &t.Title, &t.Path, &t.ContentType, &t.Liquid
		if name := pageSystemName(t, snap); name != "" {
			p.SystemName = &name
		}
		if t.Handler != "" {
			p.Handler = &t.Handler
		}
		if s := snap.section(0, t.Section); s != nil {
			p.SectionID = s.ID
		}
		if t.Layout != "" {
			layout := snap.layoutID(t.Layout)
			p.LayoutID = &layout
		}
	case tsclient.TemplateLayout:
		p.SystemName, p.Title, p.LiquidEnabled = &t.SystemName, &t.Title, &t.Liquid
	default:
		p.SystemName = &t.SystemName
	}
	return p
}

func (st createTemplate) item() string { return st.key.String() }

func (st createTemplate) apply(ctx context.Context, w *writer) error {
	t := *st.want
	made, err := w.c.CreateCMSTemplate(ctx, createParams(t, w.snap))
	if err != nil {
		return err
	}
	w.snap.putTemplate(*made)
	setItem(w.p, st.key, v1alpha1.PortalItemStatus{ID: made.ID, Created: true, Hash: t.Hash, State: st.state})
	return publishTemplate(ctx, w, st.key, made.ID, true, st.publish, t.Hash, st.state)
}

func (st updateTemplate) item() string { return st.key.String() }

func (st updateTemplate) apply(ctx context.Context, w *writer) error {
	t := *st.want
	r := *w.snap.templateByID(st.have.ID)
	params := st.params
	if r != st.have {
		// An earlier step wrote this very template: two of the spec's templates are this one (a page
		// whose path was changed by hand to another the spec lists). This write diffs against what 3scale
		// answered that one.
		params, _ = templateChanges(t, r)
	}
	params.SectionID, params.LayoutID, _ = templateTo(t, r, w.snap)
	if st.draft {
		params.Draft = &t.Content
		saveOriginal(w.p, st.key, r)
	}
	if !reflect.DeepEqual(params, tsclient.CMSTemplateParams{}) {
		updated, err := w.c.UpdateCMSTemplate(ctx, r.ID, params)
		if err != nil {
			return err
		}
		w.snap.putTemplate(*updated)
	}
	hash := ""
	if st.draft {
		hash = t.Hash
	}
	return publishTemplate(ctx, w, st.key, r.ID, false, st.publish, hash, st.state)
}

// publishTemplate publishes template id when publish, then records it: made by apimsync when created,
// with hash when its content was written.
func publishTemplate(ctx context.Context, w *writer, key itemKey, id int64, created, publish bool, hash string, state v1alpha1.PortalItemState) error {
	if publish {
		published, err := w.c.PublishCMSTemplate(ctx, id)
		if err != nil {
			return err
		}
		w.snap.putTemplate(*published)
	}
	setItem(w.p, key, v1alpha1.PortalItemStatus{ID: id, Created: created, Hash: hash, State: state})
	return nil
}

func (st createFile) item() string { return st.key.String() }

func (st createFile) apply(ctx context.Context, w *writer) error {
	f := *st.want
	params := tsclient.CMSFileParams{Path: &f.Path, Downloadable: &f.Downloadable, Content: f.Content, Name: f.Name, ContentType: f.ContentType}
	if s := w.snap.section(0, f.Section); s != nil {
		params.SectionID = s.ID
	}
	made, err := w.c.CreateCMSFile(ctx, params)
	if err != nil {
		return err
	}
	recordFile(w, st.key, f, made, true)
	return nil
}

func (st updateFile) item() string { return st.key.String() }

func (st updateFile) apply(ctx context.Context, w *writer) error {
	f := *st.want
	r := *w.snap.file(st.have.ID, "")
	params := st.params
	if hash := w.snap.FileHashes[r.ID]; r != st.have || hash != st.haveHash {
		// An earlier step wrote this very file: two of the spec's files are this one. This write diffs
		// against what 3scale answered that one.
		params, _ = fileChanges(f, r, hash)
	}
	params.SectionID, _ = sectionTo(f.Section, r.SectionID, w.snap)
	updated, err := w.c.UpdateCMSFile(ctx, r.ID, params)
	if err != nil {
		return err
	}
	recordFile(w, st.key, f, updated, false)
	return nil
}

// recordFile records file f as 3scale answered its write: its content is the spec's (vouched for by
// its updated_at from now on).
func recordFile(w *writer, key itemKey, f File, answer *tsclient.CMSFile, created bool) {
	w.snap.putFile(*answer, f.Hash)
	setItem(w.p, key, v1alpha1.PortalItemStatus{ID: answer.ID, Created: created, Hash: f.Hash, UpdatedAt: answer.UpdatedAt, State: v1alpha1.PortalItemLive})
}

func (st deleteItem) item() string { return st.key.String() }

func (st deleteItem) apply(ctx context.Context, w *writer) error {
	var err error
	switch id := st.remote.id; st.remote.kind {
	case kindSection:
		err = w.c.DeleteCMSSection(ctx, id)
	case kindFile:
		err = w.c.DeleteCMSFile(ctx, id)
	default:
		err = w.c.DeleteCMSTemplate(ctx, id)
	}
	if err = kit.IgnoreNotFound(err); err != nil {
		return err
	}
	w.snap.drop(st.remote)
	dropItem(w.p, st.key)
	return nil
}

func (st restoreBuiltin) item() string { return st.key.String() }

func (st restoreBuiltin) apply(ctx context.Context, w *writer) error {
	updated, err := w.c.UpdateCMSTemplate(ctx, st.id, tsclient.CMSTemplateParams{Draft: &st.original})
	if err != nil {
		return err
	}
	w.snap.putTemplate(*updated)
	published, err := w.c.PublishCMSTemplate(ctx, st.id)
	if err != nil {
		return err
	}
	w.snap.putTemplate(*published)
	dropItem(w.p, st.key)
	return nil
}

func (st writeSettings) item() string { return "settings" }

func (st writeSettings) apply(ctx context.Context, w *writer) error {
	settings, err := w.c.UpdatePortalSettings(ctx, st.params)
	if err != nil {
		return err
	}
	w.snap.Settings = settings
	return nil
}

func (st createProvider) item() string { return st.key.String() }

func (st createProvider) apply(ctx context.Context, w *writer) error {
	pv := *st.want
	params := tsclient.AuthenticationProviderParams{Kind: pv.Kind, Name: pv.Name, ClientID: &pv.ClientID, ClientSecret: &pv.ClientSecret,
		Published: &pv.Published, SkipSSLCertificateVerification: &pv.SkipSSLCertificateVerification, AutomaticallyApproveAccounts: &pv.AutoApprove}
	if pv.Site != "" {
		params.Site = &pv.Site
	}
	made, err := w.c.CreateAuthenticationProvider(ctx, params)
	if err != nil {
		return err
	}
	w.snap.putProvider(*made)
	setItem(w.p, st.key, v1alpha1.PortalItemStatus{ID: made.ID, Created: true})
	return nil
}

func (st updateProvider) item() string { return st.key.String() }

func (st updateProvider) apply(ctx context.Context, w *writer) error {
	before := *w.snap.provider(st.have.ID, "")
	params := st.params
	if before != st.have {
		// An earlier step wrote this very provider (one recorded under another key, unpublished). This
		// write diffs against what 3scale answered that one.
		params, _ = providerChanges(*st.want, before)
	}
	updated, err := w.c.UpdateAuthenticationProvider(ctx, before.ID, params)
	if err != nil {
		return err
	}
	w.snap.putProvider(*updated)
	if !before.Published && updated.Published {
		// apimsync published it (one it unpublished earlier and the spec names again, or one left
		// unpublished by a person): apimsync unpublishes it when it leaves the spec.
		setItem(w.p, st.key, v1alpha1.PortalItemStatus{ID: updated.ID, Created: true})
	}
	return nil
}

func (st unpublishProvider) item() string { return st.key.String() }

// apply unpublishes a sign-in provider apimsync made and the spec dropped (porta has no route to delete
// one), and forgets it.
func (st unpublishProvider) apply(ctx context.Context, w *writer) error {
	updated, err := w.c.UpdateAuthenticationProvider(ctx, st.id, tsclient.AuthenticationProviderParams{Published: new(bool)})
	if err != nil {
		return err
	}
	w.snap.putProvider(*updated)
	dropItem(w.p, st.key)
	return nil
}

// pageSystemName is the system name a new page is created with: the spec's; none when porta's own
// (the title parameterized, CMS::Page#set_system_name, app/models/cms/page.rb:17,98-100) is free; else
// one from its path, unique as paths are — a page that replaces another still live under the same title
// (a move in Manual mode, the old page live until the new one is published) would be refused as taken.
func pageSystemName(t Template, snap *Snapshot) string {
	if t.SystemName != "" {
		return t.SystemName
	}
	derived := parameterize(t.Title)
	if !slices.ContainsFunc(snap.Templates, func(r tsclient.CMSTemplate) bool {
		return r.Type == tsclient.TemplatePage && r.SystemName == derived
	}) {
		return ""
	}
	name := parameterize(strings.ReplaceAll(strings.Trim(t.Path, "/"), "/", " "))
	if name == "" {
		name = "index"
	}
	return name
}
