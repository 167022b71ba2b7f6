package developerportal

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// tenant is a tenant's CMS as a snapshot: its root section (id 1) and what is given.
func tenant(sections []tsclient.CMSSection, templates ...tsclient.CMSTemplate) *Snapshot {
	return &Snapshot{RootID: 1, Sections: append([]tsclient.CMSSection{{ID: 1, SystemName: tsclient.RootSection, Public: true}}, sections...),
		Templates: templates, FileHashes: map[int64]string{}}
}

// remotePage is a page of the tenant, live, in root.
func remotePage(id int64, path, systemName, content string, layout int64) tsclient.CMSTemplate {
	return tsclient.CMSTemplate{ID: id, Type: tsclient.TemplatePage, Path: path, SystemName: systemName, Title: "T", SectionID: 1, LayoutID: layout,
		ContentType: "text/html", LiquidEnabled: true, Published: &content}
}

// wantPage is a page of the spec, in root.
func wantPage(path, systemName, layout, content string) Template {
	return Template{Key: pageKey(path), Type: tsclient.TemplatePage, Path: path, SystemName: systemName, Title: "T", Section: tsclient.RootSection,
		Layout: layout, ContentType: "text/html", Liquid: true, Content: content, Hash: hashOf([]byte(content))}
}

// portal is a DeveloperPortal whose status records items.
func portal(items ...v1alpha1.PortalItemStatus) *v1alpha1.DeveloperPortal {
	p := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "portal", UID: "uid-1"}}
	p.Status.Items = items
	return p
}

func TestItemKeys(t *testing.T) {
	for _, tc := range []struct {
		key    itemKey
		status string
		kind   itemKind
	}{
		{pageKey("/about"), "page:/about", kindTemplate},
		{pageKey("/a:b"), "page:/a:b", kindTemplate},
		{namedKey(tsclient.TemplateLayout, "main_layout"), "layout:main_layout", kindTemplate},
		{namedKey(tsclient.TemplateBuiltinPage, "login/new"), "builtin_page:login/new", kindTemplate},
		{fileKey("/css/site.css"), "file:/css/site.css", kindFile},
		{sectionKey("docs"), "section:docs", kindSection},
		{signinKey("keycloak"), "signin:keycloak", kindProvider},
	} {
		if got := tc.key.String(); got != tc.status {
			t.Errorf("%#v: String %q, want %q", tc.key, got, tc.status)
		}
		if got := keyOf(tc.status); got != tc.key {
			t.Errorf("keyOf(%q) = %#v, want %#v", tc.status, got, tc.key)
		}
		if got := tc.key.kind(); got != tc.kind {
			t.Errorf("%s: kind %v, want %v", tc.key, got, tc.kind)
		}
	}
	if !namedKey(tsclient.TemplateBuiltinPartial, "submenu").builtin() || pageKey("/").builtin() {
		t.Error("builtin() tells built-in overrides apart wrongly")
	}
}

// explainAll is what diff says of pl's steps.
func explainAll(pl *plan, want Desired) []string {
	out := []string{}
	for _, st := range pl.steps {
		out = append(out, st.explain(want.Publish))
	}
	return out
}

// TestReferencesAreLookedUpAsSent checks that the id of a section named by reference is the one an
// earlier step made: found by the plan as a move, sent with the section's id once it is there.
func TestReferencesAreLookedUpAsSent(t *testing.T) {
	snap := tenant(nil, remotePage(11, "/docs/intro", "", "<p>a</p>", 0))
	page := wantPage("/docs/intro", "", "", "<p>a</p>")
	page.Section = "docs"
	pl, err := makePlan(portal(), Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{page},
		Sections: []Section{{SystemName: "docs", Title: "Docs", Parent: tsclient.RootSection, Public: true}}}, snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := explainAll(pl, Desired{}); !reflect.DeepEqual(got, []string{"+ section:docs (created)", "~ page:/docs/intro (attributes)"}) {
		t.Fatalf("steps %q", got)
	}
	update := pl.steps[1].(updateTemplate)
	if section, _, moves := templateTo(*update.want, update.have, snap); !moves || section != 0 {
		t.Errorf("before the section is made: section %d, moves %v; want 0, true", section, moves)
	}
	snap.putSection(tsclient.CMSSection{ID: 40, SystemName: "docs", ParentID: 1})
	if section, _, _ := templateTo(*update.want, update.have, snap); section != 40 {
		t.Errorf("once the section is made: section %d, want 40", section)
	}
}
