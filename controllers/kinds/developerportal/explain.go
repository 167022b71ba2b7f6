package developerportal

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// Explain implements engine.Explainer: what a sync would change, item by item, with a unified diff of
// each template whose content it would write (3scale's content as the old side: what is live, or the
// draft when the portal publishes by hand). The plan is the one Compare made for this sync, when it
// did.
func (s *Syncer) Explain(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot) []string {
	pl := s.plans.peek(p, snap)
	if pl == nil {
		var err error
		if pl, err = makePlan(p, want, snap); err != nil {
			return []string{err.Error()}
		}
	}
	var out []string
	for _, st := range pl.steps {
		out = append(out, st.explain(want.Publish))
	}
	return out
}

func (st createSection) explain(v1alpha1.PortalPublish) string  { return created(st.key) }
func (st createTemplate) explain(v1alpha1.PortalPublish) string { return created(st.key) }
func (st createFile) explain(v1alpha1.PortalPublish) string     { return created(st.key) }
func (st createProvider) explain(v1alpha1.PortalPublish) string { return created(st.key) }

func (st updateSection) explain(v1alpha1.PortalPublish) string  { return attributes(st.key, false) }
func (st updateProvider) explain(v1alpha1.PortalPublish) string { return attributes(st.key, false) }

func (st updateTemplate) explain(publish v1alpha1.PortalPublish) string {
	if !st.draft {
		return attributes(st.key, st.publish)
	}
	old := st.have.Published
	if publish == v1alpha1.PortalPublishManual && st.have.Draft != nil {
		old = st.have.Draft
	}
	return unified(st.key.String(), deref(old), st.want.Content)
}

func (st updateFile) explain(v1alpha1.PortalPublish) string {
	change := "attributes"
	if st.haveHash != st.want.Hash {
		change = fmt.Sprintf("content replaced: %d bytes", len(st.want.Content))
	}
	return fmt.Sprintf("~ %s (%s)", st.key, change)
}

func (st deleteItem) explain(v1alpha1.PortalPublish) string {
	return fmt.Sprintf("- %s (deleted: not in the spec, and made by apimsync or in a pruned section)", st.key)
}

func (st restoreBuiltin) explain(v1alpha1.PortalPublish) string {
	return fmt.Sprintf("~ %s (its content before apimsync's override written back)", st.key)
}

func (st writeSettings) explain(v1alpha1.PortalPublish) string { return "~ settings" }

func (st unpublishProvider) explain(v1alpha1.PortalPublish) string {
	return fmt.Sprintf("~ %s (unpublished: apimsync made it and the spec no longer lists it)", st.key)
}

// created tells of an item made.
func created(key itemKey) string { return fmt.Sprintf("+ %s (created)", key) }

// attributes tells of an item whose attributes are written, and that is published after when published.
func attributes(key itemKey, published bool) string {
	if published {
		return fmt.Sprintf("~ %s (attributes, published)", key)
	}
	return fmt.Sprintf("~ %s (attributes)", key)
}

// unified is the unified diff of a template's content, from old to new.
func unified(key, old, new string) string {
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(old), B: difflib.SplitLines(new),
		FromFile: "3scale/" + key, ToFile: "spec/" + key, Context: 3})
	if err != nil || text == "" {
		return fmt.Sprintf("~ %s (published)", key)
	}
	return text
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
