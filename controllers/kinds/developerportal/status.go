package developerportal

import (
	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// Status bookkeeping: what status.items records of the portal's items (their ids, whether apimsync made
// them, the hash of what it wrote, their states) and status.builtinOriginals, the content of the
// built-ins apimsync overrode. Compare records what it found (record); the steps record what 3scale
// answers as they write (apply.go).

// records are status.items by key.
func records(p *v1alpha1.DeveloperPortal) map[itemKey]v1alpha1.PortalItemStatus {
	out := map[itemKey]v1alpha1.PortalItemStatus{}
	for _, it := range p.Status.Items {
		out[keyOf(it.Key)] = it
	}
	return out
}

// record puts in p's status what snap tells of the items want names (their ids; adopted ones as not
// made by apimsync) and their states, and drops the records pl forgets.
func record(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot, pl *plan) {
	// An item recorded under one key that the spec's item of another key is (moved) keeps its record
	// under the new key: its id, and whether apimsync made it.
	type moved struct {
		to itemKey
		it v1alpha1.PortalItemStatus
	}
	var moves []moved
	for _, m := range pl.moved {
		for _, it := range p.Status.Items {
			if keyOf(it.Key) == m.from {
				moves = append(moves, moved{m.to, v1alpha1.PortalItemStatus{ID: it.ID, Created: it.Created}})
			}
		}
	}
	for _, key := range pl.forget {
		dropItem(p, key)
	}
	for _, m := range moves {
		setItem(p, m.to, m.it)
	}
	for _, key := range pl.leaving {
		for i := range p.Status.Items {
			if keyOf(p.Status.Items[i].Key) == key {
				p.Status.Items[i].State = v1alpha1.PortalItemLeaving
			}
		}
	}
	recs := records(p)
	for _, sec := range want.Sections {
		key := sectionKey(sec.SystemName)
		if r := snap.section(recs[key].ID, sec.SystemName); r != nil {
			setItem(p, key, v1alpha1.PortalItemStatus{ID: r.ID})
		}
	}
	for _, t := range want.Templates {
		if r := snap.template(recs[t.Key].ID, t); r != nil {
			it := v1alpha1.PortalItemStatus{ID: r.ID, State: pl.states[t.Key]}
			if holds(*r, t.Content) {
				it.Hash = t.Hash // what 3scale has is the spec's: a later change by hand is a person's (Manual)
			}
			setItem(p, t.Key, it)
		}
	}
	for _, pv := range want.Providers {
		if r := snap.provider(recs[pv.Key].ID, pv.Kind); r != nil {
			setItem(p, pv.Key, v1alpha1.PortalItemStatus{ID: r.ID})
		}
	}
	for _, f := range want.Files {
		if r := snap.file(recs[f.Key].ID, f.Path); r != nil {
			it := v1alpha1.PortalItemStatus{ID: r.ID, State: pl.states[f.Key]}
			if snap.FileHashes[r.ID] == f.Hash {
				it.Hash, it.UpdatedAt = f.Hash, r.UpdatedAt // what the tenant has is the spec's: vouched for from now on
			}
			setItem(p, f.Key, it)
		}
	}
	count(p)
}

// setItem records it as the item of key in p's status, keeping what is known of an item already
// recorded (whether apimsync made it, the hash it wrote) unless it says otherwise.
func setItem(p *v1alpha1.DeveloperPortal, key itemKey, it v1alpha1.PortalItemStatus) {
	it.Key = key.String()
	for i := range p.Status.Items {
		old := &p.Status.Items[i]
		if keyOf(old.Key) != key {
			continue
		}
		if old.ID == it.ID {
			it.Created = it.Created || old.Created
			if it.Hash == "" {
				it.Hash, it.UpdatedAt = old.Hash, old.UpdatedAt
			}
		}
		if it.State == "" {
			it.State = old.State
		}
		*old = it
		return
	}
	p.Status.Items = append(p.Status.Items, it)
}

// dropItem forgets an item (and a built-in's original).
func dropItem(p *v1alpha1.DeveloperPortal, key itemKey) {
	for i := range p.Status.Items {
		if keyOf(p.Status.Items[i].Key) == key {
			p.Status.Items = append(p.Status.Items[:i], p.Status.Items[i+1:]...)
			break
		}
	}
	delete(p.Status.BuiltinOriginals, key.String())
	if len(p.Status.BuiltinOriginals) == 0 {
		p.Status.BuiltinOriginals = nil
	}
}

// count sets the status's counts of drafts and templates edited by hand.
func count(p *v1alpha1.DeveloperPortal) {
	p.Status.Drafts, p.Status.EditedByHand = 0, 0
	for _, it := range p.Status.Items {
		switch it.State {
		case v1alpha1.PortalItemDraft:
			p.Status.Drafts++
		case v1alpha1.PortalItemEditedByHand:
			p.Status.EditedByHand++
		}
	}
}

// holds tells whether template r holds content already: as its draft, or live with no draft.
func holds(r tsclient.CMSTemplate, content string) bool {
	return (r.Draft != nil && *r.Draft == content) || (r.Draft == nil && r.Published != nil && *r.Published == content)
}

// saveOriginal keeps the content a built-in had before apimsync first overrides it (what
// restoreBuiltins writes back).
func saveOriginal(p *v1alpha1.DeveloperPortal, key itemKey, r tsclient.CMSTemplate) {
	if r.Type != tsclient.TemplateBuiltinPage && r.Type != tsclient.TemplateBuiltinPartial {
		return
	}
	if _, saved := p.Status.BuiltinOriginals[key.String()]; saved {
		return
	}
	original := r.Published
	if original == nil {
		original = r.Draft
	}
	if original == nil {
		return
	}
	if p.Status.BuiltinOriginals == nil {
		p.Status.BuiltinOriginals = map[string]string{}
	}
	p.Status.BuiltinOriginals[key.String()] = *original
}

// madeProviders tells whether apimsync made sign-in providers for p (that it may have to unpublish).
func madeProviders(p *v1alpha1.DeveloperPortal) bool {
	for _, it := range p.Status.Items {
		if keyOf(it.Key).typ == typeSignin && it.Created {
			return true
		}
	}
	return false
}

// tookOver counts the items p keeps that apimsync did not make (built-in overrides aside: every tenant
// has those).
func tookOver(p *v1alpha1.DeveloperPortal) int {
	n := 0
	for _, it := range p.Status.Items {
		if !it.Created && !keyOf(it.Key).builtin() {
			n++
		}
	}
	return n
}
