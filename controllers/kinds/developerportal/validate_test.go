package developerportal_test

import (
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kinds/developerportal"
)

// TestValidatePortal: what porta would refuse and the spec alone tells is Invalid before any content is
// read, with a message that names it: a section that is its own ancestor, a section named root, a
// partial with a built-in partial's name, two pages whose titles give one system name, two sections of
// one parent with one title. A section under a parent the spec does not list is not Validate's to tell
// (the tenant may have it).
func TestValidatePortal(t *testing.T) {
	content := v1alpha1.PortalContentRef{ConfigMap: "portal", Key: "x.html"}
	cases := map[string]struct {
		spec v1alpha1.DeveloperPortalSpec
		want string // the message, "" when valid
	}{
		"valid": {spec: v1alpha1.DeveloperPortalSpec{
			Sections: []v1alpha1.PortalSection{{SystemName: "docs", Title: "Docs"}, {SystemName: "guides", Title: "Guides", Parent: "docs"},
				{SystemName: "legal", Title: "Legal", Parent: "the-tenants"}},
			Partials: []v1alpha1.PortalPartial{{SystemName: "footer", Content: content}},
			Pages:    []v1alpha1.PortalPage{{Path: "/about", Title: "About us", Content: content}, {Path: "/about/team", Title: "About us", SystemName: "team", Content: content}},
		}},
		"a section its own ancestor": {spec: v1alpha1.DeveloperPortalSpec{
			Sections: []v1alpha1.PortalSection{{SystemName: "a", Title: "A", Parent: "b"}, {SystemName: "b", Title: "B", Parent: "a"}}},
			want: `section "a" is its own ancestor (a → b → a)`},
		"the root section": {spec: v1alpha1.DeveloperPortalSpec{Sections: []v1alpha1.PortalSection{{SystemName: "root", Title: "Root"}}},
			want: "section root is the tenant's own: it cannot be listed in spec.sections"},
		"a built-in partial's name": {spec: v1alpha1.DeveloperPortalSpec{Partials: []v1alpha1.PortalPartial{{SystemName: "submenu", Content: content}}},
			want: `partial "submenu" has the name of a built-in partial, which porta reserves: override it in spec.builtinPartials instead`},
		"two pages of one derived name": {spec: v1alpha1.DeveloperPortalSpec{
			Pages: []v1alpha1.PortalPage{{Path: "/about", Title: "About us", Content: content}, {Path: "/company/about", Title: "About Us!", Content: content}}},
			want: `pages /about and /company/about would have the same system name "about-us" (porta derives it from the title): give one a systemName`},
		"two sections of one title": {spec: v1alpha1.DeveloperPortalSpec{
			Sections: []v1alpha1.PortalSection{{SystemName: "docs", Title: "Docs"}, {SystemName: "docs-2", Title: "Docs"}}},
			want: `sections "docs" and "docs-2" have the same title "Docs" under "root" (porta refuses it)`},
	}
	for name, c := range cases {
		err := (&developerportal.Syncer{}).Validate(&v1alpha1.DeveloperPortal{Spec: c.spec})
		harness.WantValidation(t, name, err, v1alpha1.ReasonInvalidSpec, c.want)
	}
}
