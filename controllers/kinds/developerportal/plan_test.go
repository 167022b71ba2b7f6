package developerportal

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
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

// remoteLayout is a layout of the tenant, live.
func remoteLayout(id int64, name, content string) tsclient.CMSTemplate {
	return tsclient.CMSTemplate{ID: id, Type: tsclient.TemplateLayout, SystemName: name, Title: name, LiquidEnabled: true, Published: &content}
}

// wantPage is a page of the spec, in root.
func wantPage(path, systemName, layout, content string) Template {
	return Template{Key: pageKey(path), Type: tsclient.TemplatePage, Path: path, SystemName: systemName, Title: "T", Section: tsclient.RootSection,
		Layout: layout, ContentType: "text/html", Liquid: true, Content: content, Hash: hashOf([]byte(content))}
}

// wantLayout is a layout of the spec.
func wantLayout(name, content string) Template {
	return Template{Key: namedKey(tsclient.TemplateLayout, name), Type: tsclient.TemplateLayout, SystemName: name, Title: name, Liquid: true,
		Content: content, Hash: hashOf([]byte(content))}
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

// TestPlanIsRecordedAsMade checks what carrying out Compare's plan in Update rests on: the plan made
// again from the status Compare recorded (as Update made it before it took Compare's) is the same.
func TestPlanIsRecordedAsMade(t *testing.T) {
	const a, b = "<p>a</p>", "<p>b</p>"
	made := func(key itemKey, id int64) v1alpha1.PortalItemStatus {
		return v1alpha1.PortalItemStatus{Key: key.String(), ID: id, Created: true, Hash: hashOf([]byte(a))}
	}
	for _, tc := range []struct {
		name  string
		p     *v1alpha1.DeveloperPortal
		want  Desired
		snap  *Snapshot
		steps []string // the steps' explanations
		items []string // when set, status.items after record, as "key id created"
	}{{
		name:  "a tenant's page and layout taken over, a page made",
		p:     portal(),
		want:  Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{wantLayout("brand", a), wantPage("/", "", "brand", b), wantPage("/new", "", "", a)}},
		snap:  tenant(nil, remoteLayout(10, "brand", a), remotePage(11, "/", "", a, 10)),
		steps: []string{"--- 3scale/page:/\n+++ spec/page:/\n@@ -1 +1 @@\n-<p>a</p>\n+<p>b</p>\n", "+ page:/new (created)"},
	}, {
		// The page found moved (its system name, at a path the spec no longer has) is looked up by the
		// id of the record that moves to its key: it leaves the layout, which goes after it.
		name: "a page moved to another path and layout, its layout leaving the spec",
		p:    portal(made(namedKey(tsclient.TemplateLayout, "brand"), 10), made(pageKey("/a"), 11)),
		want: Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{wantLayout("brand2", a), wantPage("/b", "about", "brand2", a)}},
		snap: tenant(nil, remoteLayout(10, "brand", a), remotePage(11, "/a", "about", a, 10)),
		steps: []string{"+ layout:brand2 (created)", "~ page:/b (attributes)",
			"- layout:brand (deleted: not in the spec, and made by apimsync or in a pruned section)"},
	}, {
		name:  "a page recorded under a path changed by hand to the spec's",
		p:     portal(made(pageKey("/a"), 11)),
		want:  Desired{Publish: v1alpha1.PortalPublishManual, Templates: []Template{wantPage("/b", "", "", b)}},
		snap:  tenant(nil, remotePage(11, "/b", "", a, 0)),
		steps: []string{"--- 3scale/page:/b\n+++ spec/page:/b\n@@ -1 +1 @@\n-<p>a</p>\n+<p>b</p>\n"},
	}, {
		// The moved page's record (its id, made by apimsync) goes to the key, over the stale one: the
		// plan made from what record left finds the page at the key's recorded id, and moves it.
		name:  "a page found moved for a key recorded with the id of a page gone",
		p:     portal(made(pageKey("/a"), 11), made(pageKey("/b"), 12)),
		want:  Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{wantPage("/b", "about", "", a)}},
		snap:  tenant(nil, remotePage(11, "/a", "about", a, 0)),
		steps: []string{"~ page:/b (attributes)"},
		items: []string{"page:/b 11 true"},
	}, {
		// The section of that name is not the one apimsync made (its id is not the recorded one): it
		// stays, and the record of the one gone is forgotten.
		name: "a section of the name of one made and gone, in a pruned section",
		p:    portal(made(sectionKey("docs"), 20)),
		want: Desired{Publish: v1alpha1.PortalPublishAlways, Prune: []string{"company"},
			Sections: []Section{{SystemName: "company", Title: "Company", Parent: tsclient.RootSection, Public: true}}},
		snap: tenant([]tsclient.CMSSection{{ID: 30, SystemName: "company", Title: "Company", ParentID: 1, Public: true},
			{ID: 31, SystemName: "docs", Title: "Docs", ParentID: 30, Public: true}}),
		steps: []string{},
		items: []string{"section:company 30 false"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := makePlan(tc.p, tc.want, tc.snap)
			if err != nil {
				t.Fatal(err)
			}
			if got := explainAll(pl, tc.want); !reflect.DeepEqual(got, tc.steps) {
				t.Errorf("steps %q, want %q", got, tc.steps)
			}
			record(tc.p, tc.want, tc.snap, pl)
			if tc.items != nil {
				items := []string{}
				for _, it := range tc.p.Status.Items {
					items = append(items, fmt.Sprint(it.Key, " ", it.ID, " ", it.Created))
				}
				if !reflect.DeepEqual(items, tc.items) {
					t.Errorf("status.items %q, want %q", items, tc.items)
				}
			}
			again, err := makePlan(tc.p, tc.want, tc.snap)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again.steps, pl.steps) || !reflect.DeepEqual(again.states, pl.states) ||
				!reflect.DeepEqual(again.leaving, pl.leaving) {
				t.Errorf("the plan made again from what record left is another: %q, then %q", explainAll(pl, tc.want), explainAll(again, tc.want))
			}
		})
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

// TestUpdateTakesComparesPlan checks that the plan Compare made is Update's in the same sync (its
// session and object, a copy of its snapshot), once, and no other's.
func TestUpdateTakesComparesPlan(t *testing.T) {
	s := &Syncer{}
	want := Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{wantPage("/", "", "", "<p>new</p>")}}
	snap := tenant(nil, remotePage(11, "/", "", "<p>old</p>", 0))
	p, sess := portal(), &engine.Session{}
	compare := func() *plan {
		t.Helper()
		if upToDate, err := s.Compare(context.Background(), p, sess, want, snap); err != nil || upToDate {
			t.Fatalf("Compare: %v, %v; want a plan that writes", upToDate, err)
		}
		return s.plans.byUID[p.UID].plan
	}

	pl := compare()
	if pl == nil {
		t.Fatal("Compare kept no plan")
	}
	if got := s.plans.peek(p, snap); got != pl {
		t.Error("Explain does not see Compare's plan")
	}
	if got := s.plans.take(p, sess, snap.Clone()); got != pl {
		t.Error("Update of a copy of Compare's snapshot does not take Compare's plan")
	}
	if got := s.plans.take(p, sess, snap.Clone()); got != nil {
		t.Error("Compare's plan is taken twice")
	}

	compare()
	if got := s.plans.take(p, &engine.Session{}, snap.Clone()); got != nil {
		t.Error("the Update of another sync (another session) takes Compare's plan")
	}
	compare()
	if got := s.plans.take(p.DeepCopy(), sess, snap.Clone()); got != nil {
		t.Error("the Update of another copy of the object takes Compare's plan")
	}
	compare()
	if got := s.plans.take(p, sess, tenant(nil, remotePage(11, "/", "", "<p>old</p>", 0))); got != nil {
		t.Error("the Update of another snapshot takes Compare's plan")
	}

	compare()
	if _, err := s.Compare(context.Background(), p, sess, Desired{Publish: v1alpha1.PortalPublishAlways}, tenant(nil)); err != nil {
		t.Fatal(err)
	}
	if len(s.plans.byUID) != 0 {
		t.Error("a plan that writes nothing is kept")
	}
	compare()
	invalid := wantPage("/docs/intro", "", "", "<p>a</p>")
	invalid.Section = "docs"
	if _, err := s.Compare(context.Background(), p, sess, Desired{Templates: []Template{invalid}}, snap); err == nil {
		t.Fatal("Compare of a page in a section that is nowhere: no error")
	}
	if len(s.plans.byUID) != 0 {
		t.Error("a plan is kept after Compare failed")
	}
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

// TestPlansOfPortalsSyncedConcurrently checks that portals synced at once each take their own plan
// (run with -race).
func TestPlansOfPortalsSyncedConcurrently(t *testing.T) {
	s := &Syncer{}
	want := Desired{Publish: v1alpha1.PortalPublishAlways, Templates: []Template{wantPage("/", "", "", "<p>new</p>")}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p, sess := portal(), &engine.Session{}
			p.UID = types.UID(fmt.Sprint("uid-", i))
			snap := tenant(nil, remotePage(11, "/", "", "<p>old</p>", 0))
			if _, err := s.Compare(context.Background(), p, sess, want, snap); err != nil {
				t.Error(err)
				return
			}
			if pl := s.plans.take(p, sess, snap.Clone()); pl == nil || len(pl.steps) != 1 {
				t.Errorf("portal %d did not take its plan", i)
			}
		})
	}
	wg.Wait()
}
