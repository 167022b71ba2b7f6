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

// apply carries out pl's steps in order on the tenant c talks to, keeping snap and p's status.items as
// 3scale answers: an item made is recorded (with its id) as soon as it is made, so that a sync cut short
// knows it next time.
func apply(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot, pl *plan) error {
	for _, st := range pl.steps {
		var err error
		switch st.op {
		case opSection:
			err = applySection(ctx, c, p, snap, st)
		case opTemplate:
			err = applyTemplate(ctx, c, p, snap, st, pl.states[st.key])
		case opFile:
			err = applyFile(ctx, c, p, snap, st)
		case opDelete:
			err = applyDelete(ctx, c, p, snap, st)
		case opRestore:
			err = applyRestore(ctx, c, p, snap, st)
		case opSettings:
			err = applySettings(ctx, c, want, snap)
		case opProvider:
			err = applyProvider(ctx, c, p, snap, st)
		case opUnpublish:
			err = applyUnpublish(ctx, c, p, snap, st)
		}
		if err != nil {
			return fmt.Errorf("portal %s: %w", st.key, err)
		}
	}
	return nil
}

func applySection(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	s := *st.section
	if st.id == 0 {
		params := tsclient.CMSSectionParams{Title: &s.Title, SystemName: &s.SystemName, Public: &s.Public}
		if s.PartialPath != "" {
			params.PartialPath = &s.PartialPath
		}
		if parent := snap.section(0, s.Parent); parent != nil {
			params.ParentID = parent.ID
		}
		made, err := c.CreateCMSSection(ctx, params)
		if err != nil {
			return err
		}
		snap.putSection(*made)
		setItem(p, v1alpha1.PortalItemStatus{Key: st.key, ID: made.ID, Created: true})
		return nil
	}
	r := snap.section(st.id, "")
	params, _ := sectionChanges(s, *r, snap)
	updated, err := c.UpdateCMSSection(ctx, st.id, params)
	if err != nil {
		return err
	}
	snap.putSection(*updated)
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

func applyTemplate(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step, state v1alpha1.PortalItemState) error {
	t := *st.template
	id, created := st.id, false
	if id == 0 {
		made, err := c.CreateCMSTemplate(ctx, createParams(t, snap))
		if err != nil {
			return err
		}
		snap.putTemplate(*made)
		id, created = made.ID, true
		setItem(p, v1alpha1.PortalItemStatus{Key: st.key, ID: id, Created: true, Hash: t.Hash, State: state})
	} else {
		r := snap.templateByID(id)
		params, _ := templateChanges(t, *r, snap)
		if st.draft {
			params.Draft = &t.Content
			saveOriginal(p, st.key, *r)
		}
		if !reflect.DeepEqual(params, tsclient.CMSTemplateParams{}) {
			updated, err := c.UpdateCMSTemplate(ctx, id, params)
			if err != nil {
				return err
			}
			snap.putTemplate(*updated)
		}
	}
	if st.publish {
		published, err := c.PublishCMSTemplate(ctx, id)
		if err != nil {
			return err
		}
		snap.putTemplate(*published)
	}
	it := v1alpha1.PortalItemStatus{Key: st.key, ID: id, Created: created, State: state}
	if st.draft {
		it.Hash = t.Hash
	}
	setItem(p, it)
	return nil
}

func applyFile(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	f := *st.file
	var answer *tsclient.CMSFile
	var err error
	created := st.id == 0
	if created {
		params := tsclient.CMSFileParams{Path: &f.Path, Downloadable: &f.Downloadable, Content: f.Content, Name: f.Name, ContentType: f.ContentType}
		if s := snap.section(0, f.Section); s != nil {
			params.SectionID = s.ID
		}
		answer, err = c.CreateCMSFile(ctx, params)
	} else {
		params, _ := fileChanges(f, *snap.file(st.id, ""), snap)
		answer, err = c.UpdateCMSFile(ctx, st.id, params)
	}
	if err != nil {
		return err
	}
	snap.putFile(*answer, f.Hash)
	setItem(p, v1alpha1.PortalItemStatus{Key: st.key, ID: answer.ID, Created: created, Hash: f.Hash, UpdatedAt: answer.UpdatedAt, State: v1alpha1.PortalItemLive})
	return nil
}

func applyDelete(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	var err error
	switch st.kind {
	case "section":
		err = c.DeleteCMSSection(ctx, st.id)
	case "file":
		err = c.DeleteCMSFile(ctx, st.id)
	default:
		err = c.DeleteCMSTemplate(ctx, st.id)
	}
	if err = kit.IgnoreNotFound(err); err != nil {
		return err
	}
	snap.drop(st.kind, st.id)
	dropItem(p, st.key)
	return nil
}

func applyRestore(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	updated, err := c.UpdateCMSTemplate(ctx, st.id, tsclient.CMSTemplateParams{Draft: &st.original})
	if err != nil {
		return err
	}
	snap.putTemplate(*updated)
	published, err := c.PublishCMSTemplate(ctx, st.id)
	if err != nil {
		return err
	}
	snap.putTemplate(*published)
	dropItem(p, st.key)
	return nil
}

func applySettings(ctx context.Context, c *tsclient.Client, want Desired, snap *Snapshot) error {
	params, _ := settingsChanges(*want.Settings, *snap.Settings)
	settings, err := c.UpdatePortalSettings(ctx, params)
	if err != nil {
		return err
	}
	snap.Settings = settings
	return nil
}

func applyProvider(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	pv := *st.provider
	if st.id == 0 {
		params := tsclient.AuthenticationProviderParams{Kind: pv.Kind, Name: pv.Name, ClientID: &pv.ClientID, ClientSecret: &pv.ClientSecret,
			Published: &pv.Published, SkipSSLCertificateVerification: &pv.SkipSSLCertificateVerification, AutomaticallyApproveAccounts: &pv.AutoApprove}
		if pv.Site != "" {
			params.Site = &pv.Site
		}
		made, err := c.CreateAuthenticationProvider(ctx, params)
		if err != nil {
			return err
		}
		snap.putProvider(*made)
		setItem(p, v1alpha1.PortalItemStatus{Key: st.key, ID: made.ID, Created: true})
		return nil
	}
	before := *snap.provider(st.id, "")
	params, _ := providerChanges(pv, before)
	updated, err := c.UpdateAuthenticationProvider(ctx, st.id, params)
	if err != nil {
		return err
	}
	snap.putProvider(*updated)
	if !before.Published && updated.Published {
		// apimsync published it (one it unpublished earlier and the spec names again, or one left
		// unpublished by a person): apimsync unpublishes it when it leaves the spec.
		setItem(p, v1alpha1.PortalItemStatus{Key: st.key, ID: updated.ID, Created: true})
	}
	return nil
}

// applyUnpublish unpublishes a sign-in provider apimsync made and the spec dropped (porta has no route
// to delete one), and forgets it.
func applyUnpublish(ctx context.Context, c *tsclient.Client, p *v1alpha1.DeveloperPortal, snap *Snapshot, st step) error {
	updated, err := c.UpdateAuthenticationProvider(ctx, st.id, tsclient.AuthenticationProviderParams{Published: new(bool)})
	if err != nil {
		return err
	}
	snap.putProvider(*updated)
	dropItem(p, st.key)
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
