package developerportal

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// The plan: what Update writes, decided from the spec, the tenant's CMS (the snapshot) and what
// status.items recorded of apimsync's own writes. Compare makes it, records what it found in status
// and asks whether it is empty; Update carries out that same plan (Syncer.plans). Every reference is
// checked against the spec and the tenant before the first write, so that what the spec cannot make (a
// page in a section or layout that exists nowhere, a built-in the tenant does not have) writes nothing.

// step is one item's writes, as the plan decided them. Each kind of write is a type of its own that
// carries what it sends: the attributes that differ are found once, by the plan; apply (apply.go) sends
// them, and explain (explain.go) tells a person what they change.
type step interface {
	// item names what the step writes, in messages: its item's key, or "settings".
	item() string
	// apply sends the step's writes with w, keeping w's snapshot and status as 3scale answers.
	apply(ctx context.Context, w *writer) error
	// explain tells what the step changes, in a line or a unified diff; publish is the portal's mode.
	explain(publish v1alpha1.PortalPublish) string
}

// createSection makes a section the tenant does not have.
type createSection struct {
	key  itemKey
	want *Section
}

// updateSection writes the attributes of section have that differ from want's (params) and, should it
// be under another section than want's parent, its parent's id, looked up as it is sent (sectionTo).
type updateSection struct {
	key    itemKey
	want   *Section
	have   tsclient.CMSSection
	params tsclient.CMSSectionParams
}

// createTemplate makes a template, its content the draft, and publishes it when publish; state is its
// state after (status.items).
type createTemplate struct {
	key     itemKey
	want    *Template
	publish bool
	state   v1alpha1.PortalItemState
}

// updateTemplate writes the attributes of template have that differ from want's (params) and the ids of
// its section and layout when they differ, looked up as it is sent (templateTo); then its content as
// the draft when draft, and publishes it when publish (contentPlan). state is its state after.
type updateTemplate struct {
	key            itemKey
	want           *Template
	have           tsclient.CMSTemplate
	params         tsclient.CMSTemplateParams
	draft, publish bool
	state          v1alpha1.PortalItemState
}

// createFile makes a file the tenant does not have.
type createFile struct {
	key  itemKey
	want *File
}

// updateFile writes the attributes of file have that differ from want's (params; its content when
// haveHash, the hash of have's, is not want's) and its section's id when it differs, looked up as it is
// sent (sectionTo).
type updateFile struct {
	key      itemKey
	want     *File
	have     tsclient.CMSFile
	haveHash string
	params   tsclient.CMSFileParams
}

// deleteItem deletes what apimsync made (or a pruned section holds), and forgets it.
type deleteItem struct {
	key    itemKey
	remote remoteItem
}

// restoreBuiltin writes back, and publishes, the content built-in id had before apimsync overrode it,
// and forgets the override.
type restoreBuiltin struct {
	key      itemKey
	id       int64
	original string
}

// writeSettings writes the settings that differ (params).
type writeSettings struct {
	params tsclient.PortalSettingsParams
}

// createProvider makes a sign-in provider the tenant does not have.
type createProvider struct {
	key  itemKey
	want *Provider
}

// updateProvider writes what differs of sign-in provider have from want (params).
type updateProvider struct {
	key    itemKey
	want   *Provider
	have   tsclient.AuthenticationProvider
	params tsclient.AuthenticationProviderParams
}

// unpublishProvider unpublishes a sign-in provider apimsync made (porta cannot delete one), and
// forgets it.
type unpublishProvider struct {
	key itemKey
	id  int64
}

// plan is what a sync of the portal writes, and what it found.
type plan struct {
	steps []step
	// states are the templates' and files' states after the plan, by key.
	states map[itemKey]v1alpha1.PortalItemState
	// matched are the remote items the spec's items are → their keys; moved the items recorded under
	// one key that the spec's item of another key is: the same item, whose record (and "made by
	// apimsync" mark) goes to the new key.
	matched map[remoteItem]itemKey
	moved   []move
	// leaving are the pages apimsync made that the spec no longer has, kept live (Manual) while drafts
	// wait to be published.
	leaving []itemKey
	// forget are the status.items to drop with no write: gone from 3scale, not made by apimsync, or
	// built-in overrides left as they are.
	forget []itemKey
}

// move is an item recorded under key from that the spec's item of key to is.
type move struct{ from, to itemKey }

// writes tells whether the plan writes to 3scale.
func (pl *plan) writes() bool { return len(pl.steps) > 0 }

// makePlan plans the sync of p towards want over snap.
func makePlan(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot) (*plan, error) {
	recs := records(p)
	pl := &plan{states: map[itemKey]v1alpha1.PortalItemState{}}
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
	// The remote items the spec's items match; an item recorded under another key (moved by hand, or by
	// the spec from one key to another) is the portal's own, under its new key.
	own := map[remoteItem]itemKey{}
	for key, rec := range recs {
		own[remoteItem{key.kind(), rec.ID}] = key
	}
	pl.matched = map[remoteItem]itemKey{}
	found := func(key itemKey, id int64, builtin bool) {
		item := remoteItem{key.kind(), id}
		pl.matched[item] = key
		rec, recorded := recs[key]
		if recorded && rec.ID == id {
			return
		}
		if old, ok := own[item]; ok {
			// Recorded under another key (the key itself not recorded, or recorded with the id of an item
			// that is gone): its record, and whether apimsync made it, moves to this key, so that the
			// plan made from what record leaves finds the item where this one does.
			pl.moved = append(pl.moved, move{from: old, to: key})
			return
		}
		if recorded {
			return
		}
		if never && !builtin {
			refused = append(refused, key.String())
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
			pl.steps = append(pl.steps, createSection{key: key, want: s})
			continue
		}
		found(key, r.ID, false)
		params, changed := sectionChanges(*s, *r)
		if _, moves := sectionTo(s.Parent, r.ParentID, snap); changed || moves {
			pl.steps = append(pl.steps, updateSection{key: key, want: s, have: *r, params: params})
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
			// (When the key is recorded with the id of a page that is gone, found moves the moved page's
			// record to it, over the stale one.)
			r = pl.movedPage(*t, snap, own, want)
		}
		if r == nil {
			if builtin {
				return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "the tenant has no %s %q to override", strings.Replace(t.Type, "builtin_", "built-in ", 1), t.SystemName)
			}
			pl.steps = append(pl.steps, createTemplate{key: t.Key, want: t, publish: want.Publish == v1alpha1.PortalPublishAlways, state: stateAfterWrite(want.Publish)})
			pl.states[t.Key] = stateAfterWrite(want.Publish)
			continue
		}
		found(t.Key, r.ID, builtin)
		draft, publish, state := contentPlan(want.Publish, *t, *r, rec)
		pl.states[t.Key] = state
		params, changed := templateChanges(*t, *r)
		if _, _, moves := templateTo(*t, *r, snap); changed || moves || draft || publish {
			pl.steps = append(pl.steps, updateTemplate{key: t.Key, want: t, have: *r, params: params, draft: draft, publish: publish, state: state})
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
			pl.steps = append(pl.steps, createFile{key: f.Key, want: f})
			continue
		}
		found(f.Key, r.ID, false)
		hash := snap.FileHashes[r.ID]
		params, changed := fileChanges(*f, *r, hash)
		if _, moves := sectionTo(f.Section, r.SectionID, snap); changed || moves {
			pl.steps = append(pl.steps, updateFile{key: f.Key, want: f, have: *r, haveHash: hash, params: params})
		}
	}
	if want.Settings != nil && snap.Settings != nil {
		if params, changed := settingsChanges(*want.Settings, *snap.Settings); changed {
			pl.steps = append(pl.steps, writeSettings{params: params})
		}
	}
	for i := range want.Providers {
		pv := &want.Providers[i]
		r := snap.provider(recs[pv.Key].ID, pv.Kind)
		if r == nil {
			pl.steps = append(pl.steps, createProvider{key: pv.Key, want: pv})
			continue
		}
		found(pv.Key, r.ID, false)
		if params, changed := providerChanges(*pv, *r); changed {
			pl.steps = append(pl.steps, updateProvider{key: pv.Key, want: pv, have: *r, params: params})
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
	for _, d := range layoutRemovals {
		pl.steps = append(pl.steps, d)
	}
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

// The attributes of an item that differ from the spec's are found in two parts: those of its own
// (sectionChanges, templateChanges, fileChanges), found once, by the plan; and the ids of the items it
// refers to by name (sectionTo, templateTo: a section's parent, a page's section and layout, a file's
// section), whose difference the plan sees but whose ids are looked up as the write is sent: an earlier
// step of the same plan may make the item named (a page in a section the spec adds).

// sectionChanges returns the attributes of section r that differ from s (its parent aside: sectionTo),
// and whether any does.
func sectionChanges(s Section, r tsclient.CMSSection) (tsclient.CMSSectionParams, bool) {
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
	return p, changed
}

// sectionTo tells whether an item in section now (a section's parent) belongs in the section named
// name instead, and then that section's id in snap: 0 while the section is not there.
func sectionTo(name string, now int64, snap *Snapshot) (id int64, moves bool) {
	s := snap.section(0, name)
	switch {
	case s == nil:
		return 0, true
	case s.ID == now:
		return 0, false
	}
	return s.ID, true
}

// templateChanges returns the attributes of template r that differ from t's (its section and layout
// aside: templateTo), and whether any does; its content is contentPlan's.
func templateChanges(t Template, r tsclient.CMSTemplate) (tsclient.CMSTemplateParams, bool) {
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
	case tsclient.TemplateLayout:
		str(&p.Title, t.Title, r.Title)
		if r.LiquidEnabled != t.Liquid {
			p.LiquidEnabled, changed = &t.Liquid, true
		}
	}
	return p, changed
}

// templateTo tells whether template r is to move to t's section (a page) or layout (a page, a built-in
// page), and the ids to send, from snap: the section's (0: where it is, or not there yet) and the
// layout's (nil: where it is; 0: none, or not there yet).
func templateTo(t Template, r tsclient.CMSTemplate, snap *Snapshot) (section int64, layout *int64, moves bool) {
	switch t.Type {
	case tsclient.TemplatePage:
		section, moves = sectionTo(t.Section, r.SectionID, snap)
		if id := snap.layoutID(t.Layout); t.Layout == "" && r.LayoutID != 0 || t.Layout != "" && id != r.LayoutID {
			layout, moves = &id, true
		}
	case tsclient.TemplateBuiltinPage:
		if id := snap.layoutID(t.Layout); t.Layout != "" && id != r.LayoutID {
			layout, moves = &id, true
		}
	}
	return section, layout, moves
}

// fileChanges returns the attributes of file r that differ from f's (its section aside: sectionTo;
// hash is the hash of r's content), and whether any does.
func fileChanges(f File, r tsclient.CMSFile, hash string) (tsclient.CMSFileParams, bool) {
	var p tsclient.CMSFileParams
	changed := false
	if r.Downloadable != f.Downloadable {
		p.Downloadable, changed = &f.Downloadable, true
	}
	if hash != f.Hash {
		p.Content, p.Name, p.ContentType, changed = f.Content, f.Name, f.ContentType, true
	}
	return p, changed
}

// removals adds the deletions and restorations: what apimsync made and the spec no longer lists; what a
// pruned section (or one under it) holds that the spec does not list; built-in overrides the spec no
// longer lists, written back when it asks for it. The layouts to delete are returned apart, to go after
// the writes (a page moved to another layout leaves it first); a layout pages still use is kept (porta
// answers 200 and keeps it); sections go last, children first.
func (pl *plan) removals(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot, recs map[itemKey]v1alpha1.PortalItemStatus) (layouts []deleteItem) {
	wanted := map[itemKey]bool{}
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
	var templates, files, sections []deleteItem
	deleted := map[remoteItem]bool{}
	del := func(list *[]deleteItem, key itemKey, item remoteItem) {
		if _, kept := pl.matched[item]; kept {
			// An item of the spec is this very one (moved by hand to where the spec now wants it): it
			// stays, recorded under its new key; deleting it would delete what the spec asks for.
			pl.forget = append(pl.forget, key)
			return
		}
		if !deleted[item] {
			deleted[item] = true
			*list = append(*list, deleteItem{key: key, remote: item})
		}
	}
	// In the order of the keys as status records them.
	keys := slices.SortedFunc(maps.Keys(recs), func(a, b itemKey) int { return cmp.Compare(a.String(), b.String()) })
	for _, key := range keys {
		rec := recs[key]
		if wanted[key] {
			continue
		}
		switch {
		case key.builtin():
			original, saved := p.Status.BuiltinOriginals[key.String()]
			if want.RestoreBuiltins && saved && snap.templateByID(rec.ID) != nil {
				pl.steps = append(pl.steps, restoreBuiltin{key: key, id: rec.ID, original: original})
			} else {
				pl.forget = append(pl.forget, key)
			}
		case !rec.Created:
			pl.forget = append(pl.forget, key)
		case key.typ == typeSignin:
			if r := snap.provider(rec.ID, ""); r != nil && r.Published {
				pl.steps = append(pl.steps, unpublishProvider{key: key, id: rec.ID})
			} else if snap.ProvidersRead {
				pl.forget = append(pl.forget, key)
			}
		case key.typ == typeSection:
			if snap.section(rec.ID, "") != nil {
				del(&sections, key, remoteItem{kindSection, rec.ID})
			} else {
				pl.forget = append(pl.forget, key)
			}
		case key.typ == typeFile:
			if snap.file(rec.ID, "") != nil {
				del(&files, key, remoteItem{kindFile, rec.ID})
			} else {
				pl.forget = append(pl.forget, key)
			}
		default:
			item := remoteItem{kindTemplate, rec.ID}
			if snap.templateByID(rec.ID) == nil {
				pl.forget = append(pl.forget, key)
			} else if r := snap.templateByID(rec.ID); key.typ == tsclient.TemplatePage && r.Published != nil && pl.pageDraftsWaiting(want) {
				// Manual: what is live changes when a person publishes. A live page that leaves the spec
				// (one moved elsewhere, whose new page is a draft) stays until the pages' drafts are
				// published.
				if _, kept := pl.matched[item]; !kept {
					pl.leaving = append(pl.leaving, key)
				} else {
					del(&templates, key, item)
				}
			} else {
				del(&templates, key, item)
			}
		}
	}
	for _, id := range pl.pruned(want, snap) {
		// A section under a pruned one goes only when apimsync made it, and that is known by the id
		// status.items records, never by its name: the tenant's own are built-ins porta refuses to
		// delete (the API does not tell them apart), and a section a person made with the name of one
		// apimsync made and is gone is the person's. Those apimsync made are deleted above, with what
		// else it made that the spec no longer lists.
		for _, t := range snap.Templates {
			if t.Type == tsclient.TemplatePage && t.SectionID == id && !wanted[pageKey(t.Path)] {
				del(&templates, pageKey(t.Path), remoteItem{kindTemplate, t.ID})
			}
		}
		for _, f := range snap.Files {
			if f.SectionID == id && !wanted[fileKey(f.Path)] {
				del(&files, fileKey(f.Path), remoteItem{kindFile, f.ID})
			}
		}
	}
	// Layouts are returned, to go after the writes: a page the spec moves to another layout leaves this
	// one in the same sync. A layout still used by a page that stays on it is kept.
	moving := pl.pagesLeavingLayouts(want, snap, recs)
	for _, d := range templates {
		if d.key.typ != tsclient.TemplateLayout {
			pl.steps = append(pl.steps, d)
			continue
		}
		if !usedLayout(snap, d.remote.id, deleted, moving) {
			layouts = append(layouts, d)
		}
	}
	for _, d := range files {
		pl.steps = append(pl.steps, d)
	}
	slices.SortStableFunc(sections, func(a, b deleteItem) int { return depth(snap, b.remote.id) - depth(snap, a.remote.id) })
	for _, d := range sections {
		pl.steps = append(pl.steps, d)
	}
	return layouts
}

// pagesLeavingLayouts returns the ids of the templates whose layout the spec changes: their writes,
// made before any layout goes, take them off the layout they use now. Each is looked up by the id
// recorded for it once the plan is recorded (record): a page found moved (movedPage) by the id of the
// record that moves to its key.
func (pl *plan) pagesLeavingLayouts(want Desired, snap *Snapshot, recs map[itemKey]v1alpha1.PortalItemStatus) map[int64]bool {
	ids := map[itemKey]int64{}
	for key, rec := range recs {
		ids[key] = rec.ID
	}
	for _, m := range pl.moved {
		ids[m.to] = recs[m.from].ID
	}
	out := map[int64]bool{}
	for _, t := range want.Templates {
		r := snap.template(ids[t.Key], t)
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
func usedLayout(snap *Snapshot, id int64, deleted map[remoteItem]bool, moving map[int64]bool) bool {
	return slices.ContainsFunc(snap.Templates, func(t tsclient.CMSTemplate) bool {
		return t.LayoutID == id && !deleted[remoteItem{kindTemplate, t.ID}] && !moving[t.ID] && t.Type != tsclient.TemplateLayout
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

// pageDraftsWaiting reports whether, in Manual mode, a page of the spec is left as a draft by this plan
// or waits as one: what is live then changes only when a person publishes.
func (pl *plan) pageDraftsWaiting(want Desired) bool {
	if want.Publish != v1alpha1.PortalPublishManual {
		return false
	}
	for key, state := range pl.states {
		if state == v1alpha1.PortalItemDraft && key.typ == tsclient.TemplatePage {
			return true
		}
	}
	return false
}

// movedPage is the page of the tenant that a page of the spec found at neither its recorded id nor its
// path is, moved: one with the spec's system name, recorded by this portal under another path the spec
// no longer has. Its path is then updated in place — the page (apimsync's or adopted) keeps its id, and
// no page is made beside it with a system name porta would refuse as taken. nil when there is none.
func (pl *plan) movedPage(t Template, snap *Snapshot, own map[remoteItem]itemKey, want Desired) *tsclient.CMSTemplate {
	if t.Type != tsclient.TemplatePage || t.SystemName == "" {
		return nil
	}
	for i := range snap.Templates {
		r := &snap.Templates[i]
		if r.Type != tsclient.TemplatePage || r.SystemName != t.SystemName {
			continue
		}
		old, ours := own[remoteItem{kindTemplate, r.ID}]
		if ours && !slices.ContainsFunc(want.Templates, func(w Template) bool { return w.Key == old }) {
			return r
		}
	}
	return nil
}
