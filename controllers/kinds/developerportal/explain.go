package developerportal

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// Explain implements engine.Explainer: what a sync would change, item by item, with a unified diff of
// each template whose content it would write (3scale's content as the old side: what is live, or the
// draft when the portal publishes by hand).
func (s *Syncer) Explain(p *v1alpha1.DeveloperPortal, want Desired, snap *Snapshot) []string {
	pl, err := makePlan(p, want, snap)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, st := range pl.steps {
		switch {
		case st.op == opDelete:
			out = append(out, fmt.Sprintf("- %s (deleted: not in the spec, and made by apimsync or in a pruned section)", st.key))
		case st.op == opSettings:
			out = append(out, "~ settings")
		case st.op == opUnpublish:
			out = append(out, fmt.Sprintf("~ %s (unpublished: apimsync made it and the spec no longer lists it)", st.key))
		case st.op == opRestore:
			out = append(out, fmt.Sprintf("~ %s (its content before apimsync's override written back)", st.key))
		case st.id == 0:
			out = append(out, fmt.Sprintf("+ %s (created)", st.key))
		case st.op == opTemplate && st.draft:
			r := snap.templateByID(st.id)
			old := r.Published
			if want.Publish == v1alpha1.PortalPublishManual && r.Draft != nil {
				old = r.Draft
			}
			out = append(out, unified(st.key, deref(old), st.template.Content))
		case st.op == opFile:
			out = append(out, fmt.Sprintf("~ %s (%s)", st.key, fileChange(*st.file, *snap.file(st.id, ""), snap)))
		default:
			out = append(out, fmt.Sprintf("~ %s (attributes%s)", st.key, map[bool]string{true: ", published", false: ""}[st.publish]))
		}
	}
	return out
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

// fileChange says what changes in a file.
func fileChange(f File, r tsclient.CMSFile, snap *Snapshot) string {
	if snap.FileHashes[r.ID] != f.Hash {
		return fmt.Sprintf("content replaced: %d bytes", len(f.Content))
	}
	return "attributes"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
