package developerportal

import (
	"slices"
	"strconv"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// The plan: what Update writes, decided from the spec, the tenant's CMS (the snapshot) and what
// status.items recorded of apimsync's own writes. Compare asks whether it is empty; Update carries it
// out. Every reference is checked against the spec and the tenant before the first write, so that what
// the spec cannot make (a page in a section or layout that exists nowhere, a built-in the tenant does
// not have) writes nothing.

// op is the kind of a step.
type op int

const (
	opSection   op = iota // create or update a section
	opTemplate            // create or update a template (attributes, draft), then publish it if want.publish
	opFile                // create or update a file
	opDelete              // delete what apimsync made (or a pruned section holds)
	opRestore             // write back a built-in's original content
	opSettings            // write the settings that differ
	opProvider            // create or update a sign-in provider
	opUnpublish           // unpublish a sign-in provider apimsync made (porta cannot delete one)
)

// step is one item's writes.
type step struct {
	op  op
	key string
	// id is the remote item's (0: it is created).
	id       int64
	section  *Section
	template *Template
	file     *File
	provider *Provider
	// draft writes the template's content; publish publishes it after.
	draft, publish bool
	// kind is what opDelete deletes: "section", "template" or "file"; original what opRestore writes.
	kind, original string
}

// plan is what a sync of the portal writes, and what it found.
type plan struct {
	steps []step
	// states are the templates' and files' states after the plan, by key.
	states map[string]v1alpha1.PortalItemState
	// adopted are the items found in the tenant, not made by apimsync, that the spec names.
	adopted []string
	// kept are the layouts left in place though apimsync would delete them: pages still use them.
	kept []string
	// matched are the remote items the spec's items are, by kind and id ("template:94") → key; moved the
	// items recorded under one key that the spec's item of another key is ([old, new]): the same item,
	// whose record (and "made by apimsync" mark) goes to the new key.
	matched map[string]string
	moved   [][2]string
	// leaving are the pages apimsync made that the spec no longer has, kept live (Manual) while drafts
	// wait to be published.
	leaving []string
	// forget are the status.items to drop with no write: gone from 3scale, not made by apimsync, or
	// built-in overrides left as they are.
	forget []string
}

// makePlan plans the sync of p towards want over snap.
func makePlan(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot) (*plan, error) {
	recs := records(p)
	pl := &plan{states: map[string]v1alpha1.PortalItemState{}}
	sections := map[string]bool{}
	for _, s := range want.Sections {
		sections[s.SystemName] = true
	}
	layouts := map[string]bool{}
	for _, t := range want.Templates {
		if t.Type == tsclient.TemplateLayout {
			layouts[t.SystemName] = true
		}
	}
	sectionExists := func(name string) bool { return sections[name] || snap.section(0, name) != nil }
	layoutExists := func(name string) bool { return name == "" || layouts[name] || snap.layoutID(name) != 0 }
	never := p.GetAdoptionPolicy() == v1alpha1.AdoptionNever
	var refused []string
	// The remote items the spec's items match, by kind and id; an item recorded under another key (moved
	// by hand, or by the spec from one key to another) is the portal's own, under its new key.
	own := map[string]string{}
	for key, rec := range recs {
		own[itemKind(key)+":"+strconv.FormatInt(rec.ID, 10)] = key
	}
	pl.matched = map[string]string{}
	found := func(key, kind string, id int64, builtin bool) {
		pl.matched[kind+":"+strconv.FormatInt(id, 10)] = key
		if _, ours := recs[key]; ours {
			return
		}
		if old, ok := own[kind+":"+strconv.FormatInt(id, 10)]; ok {
			pl.moved = append(pl.moved, [2]string{old, key})
			return
		}
		pl.adopted = append(pl.adopted, key)
		if never && !builtin {
			refused = append(refused, key)
		}
	}

	for i := range want.Sections {
		s := &want.Sections[i]
		if !sectionExists(s.Parent) {
			return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "section %q has parent %q, which is neither in spec.sections nor in the tenant", s.SystemName, s.Parent)
		}
		key := sectionKey(s.SystemName)
		r := snap.section(recs[key].ID, s.SystemName)
		if r == nil && recs[key].ID != 0 {
			r = snap.section(0, s.SystemName) // the recorded one is gone: one of that name may be there
		}
		if r == nil {
			pl.steps = append(pl.steps, step{op: opSection, key: key, section: s})
			continue
		}
		found(key, "section", r.ID, false)
		if _, changed := sectionChanges(*s, *r, snap); changed {
			pl.steps = append(pl.steps, step{op: opSection, key: key, id: r.ID, section: s})
		}
	}

	for i := range want.Templates {
		t := &want.Templates[i]
		if t.Type == tsclient.TemplatePage && !sectionExists(t.Section) {
			return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "page %s is in section %q, which is neither in spec.sections nor in the tenant", t.Path, t.Section)
		}
		if !layoutExists(t.Layout) {
			return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "%s names layout %q, which is neither in spec.layouts nor in the tenant", describe(t.Key), t.Layout)
		}
		builtin := t.Type == tsclient.TemplateBuiltinPage || t.Type == tsclient.TemplateBuiltinPartial
		rec := recs[t.Key]
		r := snap.template(rec.ID, *t)
		if r == nil && rec.ID != 0 {
			r = snap.template(0, *t) // the recorded one is gone: one of that name may be there
		}
		if r == nil {
			r = pl.movedPage(*t, snap, own, want)
		}
		if r == nil {
			if builtin {
				return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "the tenant has no %s %q to override", strings.Replace(t.Type, "builtin_", "built-in ", 1), t.SystemName)
			}
			pl.steps = append(pl.steps, step{op: opTemplate, key: t.Key, template: t, draft: true, publish: want.Publish == v1alpha1.PortalPublishAlways})
			pl.states[t.Key] = stateAfterWrite(want.Publish)
			continue
		}
		found(t.Key, "template", r.ID, builtin)
		draft, publish, state := contentPlan(want.Publish, *t, *r, rec)
		pl.states[t.Key] = state
		if _, changed := templateChanges(*t, *r, snap); changed || draft || publish {
			pl.steps = append(pl.steps, step{op: opTemplate, key: t.Key, id: r.ID, template: t, draft: draft, publish: publish})
		}
	}

	for i := range want.Files {
		f := &want.Files[i]
		if !sectionExists(f.Section) {
			return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "file %s is in section %q, which is neither in spec.sections nor in the tenant", f.Path, f.Section)
		}
		pl.states[f.Key] = v1alpha1.PortalItemLive
		r := snap.file(recs[f.Key].ID, f.Path)
		if r == nil && recs[f.Key].ID != 0 {
			r = snap.file(0, f.Path)
		}
		if r == nil {
			pl.steps = append(pl.steps, step{op: opFile, key: f.Key, file: f})
			continue
		}
		found(f.Key, "file", r.ID, false)
		if _, changed := fileChanges(*f, *r, snap); changed {
			pl.steps = append(pl.steps, step{op: opFile, key: f.Key, id: r.ID, file: f})
		}
	}
	if want.Settings != nil && snap.Settings != nil {
		if _, changed := settingsChanges(*want.Settings, *snap.Settings); changed {
			pl.steps = append(pl.steps, step{op: opSettings, key: "settings"})
		}
	}
	for i := range want.Providers {
		pv := &want.Providers[i]
		r := snap.provider(recs[pv.Key].ID, pv.Kind)
		if r == nil {
			pl.steps = append(pl.steps, step{op: opProvider, key: pv.Key, provider: pv})
			continue
		}
		found(pv.Key, "signin", r.ID, false)
		if _, changed := providerChanges(*pv, *r); changed {
			pl.steps = append(pl.steps, step{op: opProvider, key: pv.Key, id: r.ID, provider: pv})
		}
	}
	if len(refused) > 0 {
		return nil, engine.Refused(v1alpha1.ReasonAdoptionRefused, "the tenant already has %s, which apimsync did not make, and spec.adoption is Never: "+
			"remove them from the spec, delete them in the admin portal, or set spec.adoption to IfExists to take them over", strings.Join(refused, ", "))
	}
	// What goes comes first: a page moved to another path, or a section renamed, frees its path, system
	// name or title for the one that replaces it (porta refuses a create that takes one still used).
	writes := pl.steps
	pl.steps = nil
	layoutRemovals := pl.removals(p, want, snap, recs)
	pl.steps = append(pl.steps, writes...)
	// Layouts go last, once the pages that leave them have moved (porta keeps a layout pages use).
	pl.steps = append(pl.steps, layoutRemovals...)
	return pl, nil
}

// stateAfterWrite is a template's state once written in publish mode mode.
func stateAfterWrite(mode v1alpha1.PortalPublish) v1alpha1.PortalItemState {
	if mode == v1alpha1.PortalPublishManual {
		return v1alpha1.PortalItemDraft
	}
	return v1alpha1.PortalItemLive
}

// contentPlan decides a template's content writes. Always: what the spec holds is published and no
// draft is left (a draft saved by hand is overwritten). Manual: what the spec holds is the draft, or is
// live with no draft; otherwise the draft is written only when the spec changed since apimsync last
// wrote it (or it never did): a template changed by hand since is left as it is, and reported.
func contentPlan(mode v1alpha1.PortalPublish, t Template, r tsclient.CMSTemplate, rec v1alpha1.PortalItemStatus) (draft, publish bool, state v1alpha1.PortalItemState) {
	live := r.Published != nil && *r.Published == t.Content
	drafted := r.Draft != nil && *r.Draft == t.Content
	if mode == v1alpha1.PortalPublishAlways {
		if live && r.Draft == nil {
			return false, false, v1alpha1.PortalItemLive
		}
		return !drafted, true, v1alpha1.PortalItemLive
	}
	switch {
	case drafted && !live:
		return false, false, v1alpha1.PortalItemDraft
	case drafted || (live && r.Draft == nil):
		return false, false, v1alpha1.PortalItemLive
	case rec.Hash != t.Hash:
		return true, false, v1alpha1.PortalItemDraft
	}
	return false, false, v1alpha1.PortalItemEditedByHand
}

// sectionChanges returns the attributes of section r that differ from s (its parent's id from snap),
// and whether any does.
func sectionChanges(s Section, r tsclient.CMSSection, snap *Snapshot) (tsclient.CMSSectionParams, bool) {
	var p tsclient.CMSSectionParams
	changed := false
	if r.Title != s.Title {
		p.Title, changed = &s.Title, true
	}
	if s.PartialPath != "" && r.PartialPath != s.PartialPath {
		p.PartialPath, changed = &s.PartialPath, true
	}
	if r.Public != s.Public {
		p.Public, changed = &s.Public, true
	}
	if parent := snap.section(0, s.Parent); parent == nil || parent.ID != r.ParentID {
		changed = true
		if parent != nil {
			p.ParentID = parent.ID
		}
	}
	return p, changed
}

// templateChanges returns the attributes of template r that differ from t's (section and layout ids
// from snap), and whether any does; its content is contentPlan's.
func templateChanges(t Template, r tsclient.CMSTemplate, snap *Snapshot) (tsclient.CMSTemplateParams, bool) {
	var p tsclient.CMSTemplateParams
	changed := false
	str := func(field **string, want, have string) {
		if want != have {
			*field, changed = &want, true
		}
	}
	switch t.Type {
	case tsclient.TemplatePage:
		str(&p.Title, t.Title, r.Title)
		str(&p.Path, t.Path, r.Path)
		str(&p.ContentType, t.ContentType, r.ContentType)
		if t.SystemName != "" {
			str(&p.SystemName, t.SystemName, r.SystemName)
		}
		if t.Handler != "" { // porta takes no empty handler: one set by hand stays when the spec has none
			str(&p.Handler, t.Handler, r.Handler)
		}
		if r.LiquidEnabled != t.Liquid {
			p.LiquidEnabled, changed = &t.Liquid, true
		}
		if s := snap.section(0, t.Section); s == nil || s.ID != r.SectionID {
			changed = true
			if s != nil {
				p.SectionID = s.ID
			}
		}
		if layout := snap.layoutID(t.Layout); t.Layout == "" && r.LayoutID != 0 || t.Layout != "" && layout != r.LayoutID {
			p.LayoutID, changed = &layout, true
		}
	case tsclient.TemplateLayout:
		str(&p.Title, t.Title, r.Title)
		if r.LiquidEnabled != t.Liquid {
			p.LiquidEnabled, changed = &t.Liquid, true
		}
	case tsclient.TemplateBuiltinPage:
		if layout := snap.layoutID(t.Layout); t.Layout != "" && layout != r.LayoutID {
			p.LayoutID, changed = &layout, true
		}
	}
	return p, changed
}

// fileChanges returns the attributes of file r that differ from f's (its content's hash from snap), and
// whether any does.
func fileChanges(f File, r tsclient.CMSFile, snap *Snapshot) (tsclient.CMSFileParams, bool) {
	var p tsclient.CMSFileParams
	changed := false
	if s := snap.section(0, f.Section); s == nil || s.ID != r.SectionID {
		changed = true
		if s != nil {
			p.SectionID = s.ID
		}
	}
	if r.Downloadable != f.Downloadable {
		p.Downloadable, changed = &f.Downloadable, true
	}
	if snap.FileHashes[r.ID] != f.Hash {
		p.Content, p.Name, p.ContentType, changed = f.Content, f.Name, f.ContentType, true
	}
	return p, changed
}

// removals adds the deletions and restorations: what apimsync made and the spec no longer lists; what a
// pruned section (or one under it) holds that the spec does not list; built-in overrides the spec no
// longer lists, written back when it asks for it. The layouts to delete are returned apart, to go after
// the writes (a page moved to another layout leaves it first); a layout pages still use is kept (porta
// answers 200 and keeps it); sections go last, children first.
func (pl *plan) removals(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot, recs map[string]v1alpha1.PortalItemStatus) (layouts []step) {
	wanted := map[string]bool{}
	for _, s := range want.Sections {
		wanted[sectionKey(s.SystemName)] = true
	}
	for _, t := range want.Templates {
		wanted[t.Key] = true
	}
	for _, f := range want.Files {
		wanted[f.Key] = true
	}
	for _, pv := range want.Providers {
		wanted[pv.Key] = true
	}
	// What the spec's items refer to stays, listed or not: a page's section and layout, a section's
	// parent, a file's section.
	for _, s := range want.Sections {
		wanted[sectionKey(s.Parent)] = true
	}
	for _, t := range want.Templates {
		if t.Section != "" {
			wanted[sectionKey(t.Section)] = true
		}
		if t.Layout != "" {
			wanted[namedKey(tsclient.TemplateLayout, t.Layout)] = true
		}
	}
	for _, f := range want.Files {
		wanted[sectionKey(f.Section)] = true
	}
	var templates, files, sections []step
	deleted := map[string]bool{} // by kind and id: sections, templates and files are numbered apart
	del := func(list *[]step, kind, key string, id int64) {
		if _, kept := pl.matched[kind+":"+strconv.FormatInt(id, 10)]; kept {
			// An item of the spec is this very one (moved by hand to where the spec now wants it): it
			// stays, recorded under its new key; deleting it would delete what the spec asks for.
			pl.forget = append(pl.forget, key)
			return
		}
		if k := kind + ":" + strconv.FormatInt(id, 10); !deleted[k] {
			deleted[k] = true
			*list = append(*list, step{op: opDelete, kind: kind, key: key, id: id})
		}
	}
	for _, key := range kit.SortedKeys(recs) {
		rec := recs[key]
		if wanted[key] {
			continue
		}
		typ, _, _ := strings.Cut(key, ":")
		switch {
		case typ == tsclient.TemplateBuiltinPage || typ == tsclient.TemplateBuiltinPartial:
			original, saved := p.Status.BuiltinOriginals[key]
			if want.RestoreBuiltins && saved && snap.templateByID(rec.ID) != nil {
				pl.steps = append(pl.steps, step{op: opRestore, key: key, id: rec.ID, original: original, publish: true})
			} else {
				pl.forget = append(pl.forget, key)
			}
		case !rec.Created:
			pl.forget = append(pl.forget, key)
		case typ == "signin":
			if r := snap.provider(rec.ID, ""); r != nil && r.Published {
				pl.steps = append(pl.steps, step{op: opUnpublish, key: key, id: rec.ID})
			} else if snap.ProvidersRead {
				pl.forget = append(pl.forget, key)
			}
		case typ == "section":
			if snap.section(rec.ID, "") != nil {
				del(&sections, "section", key, rec.ID)
			} else {
				pl.forget = append(pl.forget, key)
			}
		case typ == "file":
			if snap.file(rec.ID, "") != nil {
				del(&files, "file", key, rec.ID)
			} else {
				pl.forget = append(pl.forget, key)
			}
		default:
			if snap.templateByID(rec.ID) == nil {
				pl.forget = append(pl.forget, key)
			} else if r := snap.templateByID(rec.ID); typ == tsclient.TemplatePage && r.Published != nil && pl.pageDraftsWaiting(want) {
				// Manual: what is live changes when a person publishes. A live page that leaves the spec
				// (one moved elsewhere, whose new page is a draft) stays until the pages' drafts are
				// published.
				if _, kept := pl.matched["template:"+strconv.FormatInt(rec.ID, 10)]; !kept {
					pl.leaving = append(pl.leaving, key)
				} else {
					del(&templates, "template", key, rec.ID)
				}
			} else {
				del(&templates, "template", key, rec.ID)
			}
		}
	}
	for _, id := range pl.pruned(want, snap) {
		// A section under a pruned one goes only when apimsync made it: the tenant's own are built-ins
		// porta refuses to delete, and the API does not tell them apart.
		if s := snap.section(id, ""); s != nil && !wanted[sectionKey(s.SystemName)] && !slices.Contains(want.Prune, s.SystemName) &&
			recs[sectionKey(s.SystemName)].Created {
			del(&sections, "section", sectionKey(s.SystemName), id)
		}
		for _, t := range snap.Templates {
			if t.Type == tsclient.TemplatePage && t.SectionID == id && !wanted[pageKey(t.Path)] {
				del(&templates, "template", pageKey(t.Path), t.ID)
			}
		}
		for _, f := range snap.Files {
			if f.SectionID == id && !wanted[fileKey(f.Path)] {
				del(&files, "file", fileKey(f.Path), f.ID)
			}
		}
	}
	// Layouts are returned, to go after the writes: a page the spec moves to another layout leaves this
	// one in the same sync. A layout still used by a page that stays on it is kept.
	moving := pagesLeavingLayouts(want, snap, recs)
	for _, s := range templates {
		if !strings.HasPrefix(s.key, tsclient.TemplateLayout+":") {
			pl.steps = append(pl.steps, s)
			continue
		}
		if usedLayout(snap, s.id, deleted, moving) {
			pl.kept = append(pl.kept, strings.TrimPrefix(s.key, tsclient.TemplateLayout+":"))
			continue
		}
		layouts = append(layouts, s)
	}
	pl.steps = append(pl.steps, files...)
	slices.SortStableFunc(sections, func(a, b step) int { return depth(snap, b.id) - depth(snap, a.id) })
	pl.steps = append(pl.steps, sections...)
	return layouts
}

// pagesLeavingLayouts returns the ids of the templates whose layout the spec changes: their writes,
// made before any layout goes, take them off the layout they use now.
func pagesLeavingLayouts(want Desired, snap *Snapshot, recs map[string]v1alpha1.PortalItemStatus) map[int64]bool {
	out := map[int64]bool{}
	for _, t := range want.Templates {
		r := snap.template(recs[t.Key].ID, t)
		if r == nil || r.LayoutID == 0 {
			continue
		}
		if now := snap.templateByID(r.LayoutID); now == nil || now.SystemName != t.Layout {
			out[r.ID] = true
		}
	}
	return out
}

// pruned returns the ids of the sections spec.prune names and of every section under them.
func (pl *plan) pruned(want Desired, snap *Snapshot) []int64 {
	var out []int64
	var walk func(id int64)
	walk = func(id int64) {
		if slices.Contains(out, id) {
			return
		}
		out = append(out, id)
		for _, s := range snap.Sections {
			if s.ParentID == id {
				walk(s.ID)
			}
		}
	}
	for _, name := range want.Prune {
		if s := snap.section(0, name); s != nil {
			walk(s.ID)
		}
	}
	return out
}

// usedLayout tells whether a page that is not being deleted, nor moved to another layout, uses layout id.
func usedLayout(snap *Snapshot, id int64, deleted map[string]bool, moving map[int64]bool) bool {
	return slices.ContainsFunc(snap.Templates, func(t tsclient.CMSTemplate) bool {
		return t.LayoutID == id && !deleted["template:"+strconv.FormatInt(t.ID, 10)] && !moving[t.ID] && t.Type != tsclient.TemplateLayout
	})
}

// depth is how many sections are above section id.
func depth(snap *Snapshot, id int64) int {
	n := 0
	for s := snap.section(id, ""); s != nil && s.ParentID != 0 && n < len(snap.Sections); s = snap.section(s.ParentID, "") {
		n++
	}
	return n
}

// settingsChanges returns the settings of want that 3scale has otherwise, and whether there is any.
func settingsChanges(want tsclient.PortalSettingsParams, have tsclient.PortalSettings) (tsclient.PortalSettingsParams, bool) {
	var p tsclient.PortalSettingsParams
	changed := false
	flag := func(field **bool, w *bool, h bool) {
		if w != nil && *w != h {
			*field, changed = w, true
		}
	}
	flag(&p.SignupsEnabled, want.SignupsEnabled, have.SignupsEnabled)
	flag(&p.AccountApprovalRequired, want.AccountApprovalRequired, have.AccountApprovalRequired)
	flag(&p.UserAccountAreaEnabled, want.UserAccountAreaEnabled, have.UserAccountAreaEnabled)
	flag(&p.PublicSearch, want.PublicSearch, have.PublicSearch)
	flag(&p.AccountPlansUIVisible, want.AccountPlansUIVisible, have.AccountPlansUIVisible)
	flag(&p.ServicePlansUIVisible, want.ServicePlansUIVisible, have.ServicePlansUIVisible)
	if want.HideService != nil && (have.HideService == nil || *have.HideService != *want.HideService) {
		p.HideService, changed = want.HideService, true
	}
	perm := func(field **string, w *string, h string) {
		if w != nil && *w != h {
			*field, changed = w, true
		}
	}
	perm(&p.ChangeAccountPlanPermission, want.ChangeAccountPlanPermission, have.ChangeAccountPlanPermission)
	perm(&p.ChangeServicePlanPermission, want.ChangeServicePlanPermission, have.ChangeServicePlanPermission)
	return p, changed
}

// providerChanges returns what porta lets change of sign-in provider r that differs from pv, and whether
// anything does (its name and kind are set when it is made).
func providerChanges(pv Provider, r tsclient.AuthenticationProvider) (tsclient.AuthenticationProviderParams, bool) {
	var p tsclient.AuthenticationProviderParams
	changed := false
	str := func(field **string, want, have string) {
		if want != have {
			*field, changed = &want, true
		}
	}
	flag := func(field **bool, want, have bool) {
		if want != have {
			*field, changed = &want, true
		}
	}
	str(&p.ClientID, pv.ClientID, r.ClientID)
	str(&p.ClientSecret, pv.ClientSecret, r.ClientSecret)
	if pv.Site != "" {
		str(&p.Site, pv.Site, r.Site)
	}
	flag(&p.Published, pv.Published, r.Published)
	flag(&p.SkipSSLCertificateVerification, pv.SkipSSLCertificateVerification, r.SkipSSLCertificateVerification)
	flag(&p.AutomaticallyApproveAccounts, pv.AutoApprove, r.AutomaticallyApproveAccounts)
	return p, changed
}

// itemKind is the kind of remote item a status key names, as the plan numbers them apart: sections,
// files, sign-in providers and templates (every other key).
func itemKind(key string) string {
	switch typ, _, _ := strings.Cut(key, ":"); typ {
	case "section", "file", "signin":
		return typ
	}
	return "template"
}

// pageDraftsWaiting reports whether, in Manual mode, a page of the spec is left as a draft by this plan
// or waits as one: what is live then changes only when a person publishes.
func (pl *plan) pageDraftsWaiting(want Desired) bool {
	if want.Publish != v1alpha1.PortalPublishManual {
		return false
	}
	for key, state := range pl.states {
		if state == v1alpha1.PortalItemDraft && strings.HasPrefix(key, tsclient.TemplatePage+":") {
			return true
		}
	}
	return false
}

// movedPage is the page of the tenant that a page of the spec found at neither its recorded id nor its
// path is, moved: one with the spec's system name, recorded by this portal under another path the spec
// no longer has. Its path is then updated in place — the page (apimsync's or adopted) keeps its id, and
// no page is made beside it with a system name porta would refuse as taken. nil when there is none.
func (pl *plan) movedPage(t Template, snap *Snapshot, own map[string]string, want Desired) *tsclient.CMSTemplate {
	if t.Type != tsclient.TemplatePage || t.SystemName == "" {
		return nil
	}
	for i := range snap.Templates {
		r := &snap.Templates[i]
		if r.Type != tsclient.TemplatePage || r.SystemName != t.SystemName {
			continue
		}
		old, ours := own["template:"+strconv.FormatInt(r.ID, 10)]
		if ours && !slices.ContainsFunc(want.Templates, func(w Template) bool { return w.Key == old }) {
			return r
		}
	}
	return nil
}
