package developerportal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/internal/kustomize"
	"github.com/apimsync/apimsync/test/simulator"
)

// The developer portal's content, as a team keeps it: a directory per ConfigMap (kustomize's
// configMapGenerator), each key a file name.
const (
	brandLayout = `<html><head><link rel="stylesheet" href="/css/site.css"></head><body>{% content %}</body></html>`
	homePage    = `<h1>Welcome to {{ provider.name }}</h1>`
	aboutPage   = "# About us\n\nWe sell pets."
	loginPage   = `<h1>Sign in</h1>{% include 'login/sso' %}`
	siteCSS     = `body { font-family: sans-serif; }`
)

var logoPNG = []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 1}

// portalContent returns the ConfigMaps of a small portal: a layout, two pages, a built-in override, a CSS
// file and a logo (binaryData).
func portalContent(ns string) []*corev1.ConfigMap {
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	}
	images := cm("portal-images", nil)
	images.BinaryData = map[string][]byte{"logo.png": logoPNG}
	return []*corev1.ConfigMap{
		cm("portal-layouts", map[string]string{"brand.html.liquid": brandLayout}),
		cm("portal-pages", map[string]string{"index.html.liquid": homePage, "about.md": aboutPage, "login-new.html.liquid": loginPage}),
		cm("portal-css", map[string]string{"site.css": siteCSS}),
		images,
	}
}

// smallPortal is a DeveloperPortal of portalContent: the homepage overridden, an about page in a
// section of its own, the sign-in page overridden, the CSS and the logo in the tenant's sections.
func smallPortal(ns string, publish v1alpha1.PortalPublish) *v1alpha1.DeveloperPortal {
	ref := func(cm, key string) v1alpha1.PortalContentRef {
		return v1alpha1.PortalContentRef{ConfigMap: cm, Key: key}
	}
	return &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal"},
		Spec: v1alpha1.DeveloperPortalSpec{Publish: publish,
			Sections: []v1alpha1.PortalSection{{SystemName: "company", Title: "Company", PartialPath: "/company"}},
			Layouts:  []v1alpha1.PortalLayout{{SystemName: "brand", Title: "Brand", Content: ref("portal-layouts", "brand.html.liquid")}},
			Pages: []v1alpha1.PortalPage{
				{Path: "/", Title: "Homepage", Layout: "brand", Content: ref("portal-pages", "index.html.liquid")},
				{Path: "/company/about", Title: "About", Section: "company", Layout: "brand", Handler: "markdown", Content: ref("portal-pages", "about.md")},
			},
			BuiltinPages: []v1alpha1.PortalBuiltinPage{{SystemName: "login/new", Content: ref("portal-pages", "login-new.html.liquid")}},
			Files: []v1alpha1.PortalFile{
				{Path: "/css/site.css", Section: "css", Content: ref("portal-css", "site.css")},
				{Path: "/images/logo.png", Section: "images", Content: ref("portal-images", "logo.png")},
			}}}
}

func createPortal(t *testing.T, ns string, p *v1alpha1.DeveloperPortal) {
	t.Helper()
	harness.Create(t, harness.DefaultSecret(ns))
	for _, cm := range portalContent(ns) {
		harness.Create(t, cm)
	}
	harness.Create(t, p)
}

// cmsTemplate returns the simulator's template of type typ at path (pages) or with system name name.
func cmsTemplate(t *testing.T, ns, typ, name string) map[string]any {
	t.Helper()
	for _, tpl := range harness.Sim.Objects(ns, simulator.KindCMSTemplates) {
		if tpl["type"] == typ && (tpl["path"] == name || (typ != tsclient.TemplatePage && tpl["system_name"] == name)) {
			return tpl
		}
	}
	return nil
}

// live tells whether a template is published with content and no draft.
func live(tpl map[string]any, content string) bool {
	return tpl != nil && tpl["published"] == content && tpl["draft"] == nil
}

func cmsFile(ns, path string) map[string]any {
	for _, f := range harness.Sim.Objects(ns, simulator.KindCMSFiles) {
		if f["path"] == path {
			return f
		}
	}
	return nil
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestDeveloperPortalPublishesWhatGitHolds (publish: Always): the layout, pages, sign-in override and
// files are live; a drift check of an unchanged portal writes nothing; an edit of one page costs its
// write and its publish; a page edited by hand in the admin portal is put back at the drift check
// (DriftRepaired); what apimsync made and the spec drops is deleted, what it adopted (the homepage)
// stays.
func TestDeveloperPortalPublishesWhatGitHolds(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)

	for typ, want := range map[[2]string]string{{tsclient.TemplateLayout, "brand"}: brandLayout, {tsclient.TemplatePage, "/"}: homePage,
		{tsclient.TemplatePage, "/company/about"}: aboutPage, {tsclient.TemplateBuiltinPage, "login/new"}: loginPage} {
		if tpl := cmsTemplate(t, ns, typ[0], typ[1]); !live(tpl, want) {
			t.Errorf("%s %s: %v, want %q published and no draft", typ[0], typ[1], tpl, want)
		}
	}
	about := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about")
	if about["handler"] != "markdown" || about["liquid_enabled"] != true {
		t.Errorf("about page %v, want markdown and liquid", about)
	}
	for path, content := range map[string][]byte{"/css/site.css": []byte(siteCSS), "/images/logo.png": logoPNG} {
		if f := cmsFile(ns, path); f == nil || f["sha256"] != sha(content) {
			t.Errorf("file %s: %v, want its content", path, f)
		}
	}
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, "adopted") {
		t.Errorf("Synced message %q, want the adoption of the tenant's portal said", msg)
	}
	// diff --unmanaged lists none of the items the portal holds, and porta's pages it does not hold.
	items, err := controllers.UnmanagedObjects(context.Background(), harness.K8s, harness.TenantClient(t, ns), portal.Status.TenantHost)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, it := range items {
		listed[it.Kind+" "+it.HeldKey()] = true
	}
	for _, it := range portal.Status.Items {
		typ, _, _ := strings.Cut(it.Key, ":")
		if listed[fmt.Sprintf("DeveloperPortal %s/%d", typ, it.ID)] {
			t.Errorf("diff --unmanaged lists %s (%d), which the DeveloperPortal holds", it.Key, it.ID)
		}
	}
	if !slices.ContainsFunc(items, func(it plugin.RemoteItem) bool { return it.Kind == "DeveloperPortal" && it.SystemName == "/docs" }) {
		t.Errorf("diff --unmanaged does not list porta's /docs page, which the portal does not hold: %v", items)
	}
	if portal.Status.BuiltinOriginals["builtin_page:login/new"] == "" {
		t.Errorf("the sign-in page's original content is not kept: %v", portal.Status.BuiltinOriginals)
	}

	// At rest, a drift check reads and writes nothing.
	before := harness.WritesTo(ns)
	harness.SyncNow(t, portal, "1")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes for a drift check of an unchanged portal, want 0: %v", n, harness.LastWrites(ns, n))
	}

	// An edit of one page: its draft and its publish, and no other call.
	before, calls := harness.WritesTo(ns), harness.RemoteCalls(ns)
	pages := &corev1.ConfigMap{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "portal-pages"}, pages); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, pages, func() { pages.Data["about.md"] = "# About us\n\nWe sell pets and their food." })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if !live(cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about"), "# About us\n\nWe sell pets and their food.") {
			return "the edited page is not live"
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	if n, all := harness.WritesTo(ns)-before, harness.RemoteCalls(ns)-calls; n != 2 || all != 2 {
		t.Errorf("%d writes (%d calls) for an edit of one page, want 2 (its draft, its publish): %v", n, all, harness.LastWrites(ns, n))
	}

	// Edited by hand in the admin portal (a draft saved, then published): put back at the drift check.
	c := harness.ByHand(t, ns)
	id := cmsTemplate(t, ns, tsclient.TemplatePage, "/")["id"].(int64)
	if _, err := c.UpdateCMSTemplate(context.Background(), id, tsclient.CMSTemplateParams{Draft: ptr.To("<h1>Hand-made</h1>")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishCMSTemplate(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, portal, "2")
	if tpl := cmsTemplate(t, ns, tsclient.TemplatePage, "/"); !live(tpl, homePage) {
		t.Errorf("homepage after the drift check: %v, want what Git holds, live", tpl)
	}
	harness.WantEvent(t, portal, v1alpha1.ReasonDriftRepaired)

	// The spec drops the about page, its section and the homepage: apimsync deletes what it made; the
	// homepage, the tenant's own, stays as last written.
	harness.Update(t, portal, func() {
		portal.Spec.Pages, portal.Spec.Sections = nil, nil
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about") != nil {
			return "the dropped page is still in 3scale"
		}
		for _, s := range harness.Sim.Objects(ns, simulator.KindCMSSections) {
			if s["system_name"] == "company" {
				return "the dropped section is still in 3scale"
			}
		}
		return ""
	})
	if tpl := cmsTemplate(t, ns, tsclient.TemplatePage, "/"); !live(tpl, homePage) {
		t.Errorf("homepage after the spec dropped it: %v, want it kept as it was", tpl)
	}
}

// TestDeveloperPortalManualPublish (publish: Manual): templates are written as drafts, what is live
// stays; status counts the drafts; once a person publishes them they are Live with no write; a draft
// edited by hand is reported (EditedByHand), never overwritten, until the spec changes the template.
func TestDeveloperPortalManualPublish(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishManual)
	portal.Spec.Files = nil
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)

	home := cmsTemplate(t, ns, tsclient.TemplatePage, "/")
	if home["draft"] != homePage || home["published"] == homePage {
		t.Errorf("homepage %v, want the spec's content as a draft, not live", home)
	}
	if about := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about"); about["draft"] != aboutPage || about["published"] != nil {
		t.Errorf("new page %v, want a draft only", about)
	}
	if portal.Status.Drafts != 4 {
		t.Errorf("status.drafts %d, want 4 (layout, two pages, the sign-in page)", portal.Status.Drafts)
	}
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, "drafts for a person to publish") {
		t.Errorf("Synced message %q, want the drafts said", msg)
	}

	// A person publishes the homepage: Live, with no write of apimsync's.
	c := harness.ByHand(t, ns)
	homeID := home["id"].(int64)
	if _, err := c.PublishCMSTemplate(context.Background(), homeID); err != nil {
		t.Fatal(err)
	}
	before := harness.WritesTo(ns)
	harness.SyncNow(t, portal, "1")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes after a person published, want 0: %v", n, harness.LastWrites(ns, n))
	}
	if portal.Status.Drafts != 3 {
		t.Errorf("status.drafts %d after the homepage was published, want 3", portal.Status.Drafts)
	}

	// Edited by hand: reported, not overwritten.
	if _, err := c.UpdateCMSTemplate(context.Background(), homeID, tsclient.CMSTemplateParams{Draft: ptr.To("<h1>Work in progress</h1>")}); err != nil {
		t.Fatal(err)
	}
	before = harness.WritesTo(ns)
	harness.SyncNow(t, portal, "2")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes after a hand edit with publish: Manual, want 0: %v", n, harness.LastWrites(ns, n))
	}
	if portal.Status.EditedByHand != 1 {
		t.Errorf("status.editedByHand %d, want 1: %+v", portal.Status.EditedByHand, portal.Status.Items)
	}
	// The spec changes the homepage: its draft is written.
	pages := &corev1.ConfigMap{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "portal-pages"}, pages); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, pages, func() { pages.Data["index.html.liquid"] = "<h1>Welcome</h1>" })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if home := cmsTemplate(t, ns, tsclient.TemplatePage, "/"); home["draft"] != "<h1>Welcome</h1>" || home["published"] != homePage {
			return fmt.Sprintf("homepage %v, want the new content as a draft over what is live", home)
		}
		return ""
	})
}

// TestDeveloperPortalBadInput: a page naming a layout that exists nowhere, and a built-in the tenant
// does not have, are Invalid with a message that names them, and nothing is written; content whose
// ConfigMap is missing waits (Orphan) and syncs when it comes; a page porta refuses (a Liquid syntax
// error) is Invalid with porta's message; a second DeveloperPortal of the same tenant does not sync.
func TestDeveloperPortalBadInput(t *testing.T) {
	ns := harness.NewNamespace(t)
	before := harness.WritesTo(ns)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	portal.Spec.Pages[1].Layout = "missing"
	createPortal(t, ns, portal)
	harness.WaitReason(t, portal, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, `layout "missing"`) || !strings.Contains(msg, "/company/about") {
		t.Errorf("message %q, want the page and the layout named", msg)
	}
	harness.Update(t, portal, func() {
		portal.Spec.Pages[1].Layout = "brand"
		portal.Spec.BuiltinPages[0].SystemName = "login/old"
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, `built-in page "login/old"`) {
			return "message " + msg
		}
		return ""
	})
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes for an invalid portal, want 0: %v", n, harness.LastWrites(ns, n))
	}

	// Content from a ConfigMap not there yet: Orphan, then Synced when it comes.
	harness.Update(t, portal, func() {
		portal.Spec.BuiltinPages[0].SystemName = "login/new"
		portal.Spec.Partials = []v1alpha1.PortalPartial{{SystemName: "footer", Content: v1alpha1.PortalContentRef{ConfigMap: "portal-partials", Key: "footer.html"}}}
	})
	harness.WaitReason(t, portal, v1alpha1.ConditionOrphan, v1alpha1.ReasonDocumentNotFound)
	harness.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal-partials"}, Data: map[string]string{"footer.html": "<footer/>"}})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)

	// porta refuses a page whose Liquid does not parse: Invalid with its message.
	broken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal-broken"}, Data: map[string]string{"broken.html": "<p>Hi {{ current_user.username</p>"}}
	harness.Create(t, broken)
	harness.Update(t, portal, func() {
		portal.Spec.Pages = append(portal.Spec.Pages, v1alpha1.PortalPage{Path: "/broken", Title: "Broken",
			Content: v1alpha1.PortalContentRef{ConfigMap: "portal-broken", Key: "broken.html"}})
	})
	harness.WaitReason(t, portal, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteRejected)
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, "page:/broken") || !strings.Contains(msg, "Liquid") {
		t.Errorf("message %q, want the page and porta's Liquid error", msg)
	}

	// A second DeveloperPortal of the same tenant does not take the portal over.
	second := smallPortal(ns, v1alpha1.PortalPublishAlways)
	second.Name = "portal-2"
	harness.Create(t, second)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if state, _, msg := harness.SyncState(t, second); state != v1alpha1.ConditionInvalid || !strings.Contains(msg, `managed by "portal"`) ||
			!strings.Contains(msg, "one developer portal") {
			return fmt.Sprintf("second portal %s: %s", state, msg)
		}
		return ""
	})
}

// TestDeveloperPortalRestoresBuiltins: with restoreBuiltins, a built-in override the spec drops gets the
// content it had before apimsync first overrode it; without, it stays as last written.
func TestDeveloperPortalRestoresBuiltins(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	portal.Spec.Files, portal.Spec.RestoreBuiltins = nil, true
	harness.Create(t, harness.DefaultSecret(ns))
	original := cmsTemplate(t, ns, tsclient.TemplateBuiltinPage, "login/new")["published"]
	for _, cm := range portalContent(ns) {
		harness.Create(t, cm)
	}
	harness.Create(t, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	if tpl := cmsTemplate(t, ns, tsclient.TemplateBuiltinPage, "login/new"); !live(tpl, loginPage) {
		t.Fatalf("sign-in page %v, want the override live", tpl)
	}
	harness.Update(t, portal, func() { portal.Spec.BuiltinPages = nil })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if tpl := cmsTemplate(t, ns, tsclient.TemplateBuiltinPage, "login/new"); !live(tpl, fmt.Sprint(original)) {
			return fmt.Sprintf("sign-in page %v, want its original content %q back", tpl, original)
		}
		return ""
	})
}

// TestExportedPortalAdoptsWithNoWrite: a portal made by hand in the admin portal (a section, a layout, a
// partial, a page in markdown, a built-in page overridden, a binary file, a setting, an Auth0 sign-in
// provider, besides what every tenant has; the provider's client secret filled in its template), exported with --portal and built with kustomize, adopts it with no write, and a drift check
// writes nothing either. A draft a person has not published makes the export publish: Manual, with the
// draft as content, and says so.
func TestExportedPortalAdoptsWithNoWrite(t *testing.T) {
	ns := harness.NewNamespace(t)
	ctx := context.Background()
	c := harness.ByHand(t, ns)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	guides, err := c.CreateCMSSection(ctx, tsclient.CMSSectionParams{Title: ptr.To("Guides"), SystemName: ptr.To("guides"), PartialPath: ptr.To("/guides")})
	must(err)
	layout, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplateLayout, SystemName: ptr.To("guide"), Title: ptr.To("Guide"),
		LiquidEnabled: ptr.To(true), Draft: ptr.To(brandLayout)})
	must(err)
	page, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To("Start"), Path: ptr.To("/guides/start"),
		Handler: ptr.To("markdown"), LiquidEnabled: ptr.To(false), SectionID: guides.ID, LayoutID: &layout.ID, Draft: ptr.To(aboutPage)})
	must(err)
	partial, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePartial, SystemName: ptr.To("footer"), Draft: ptr.To("<footer/>")})
	must(err)
	// Pages whose paths lie under one another's (as /docs, which every tenant has, and /docs/intro):
	// their files must sit side by side in the export.
	ids := []int64{layout.ID, page.ID, partial.ID}
	for _, p := range []string{"/guides", "/guides/start/faq", "/docs/intro"} {
		nested, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To("Page " + p), Path: ptr.To(p),
			SectionID: guides.ID, LiquidEnabled: ptr.To(false), Draft: ptr.To("<h1>" + p + "</h1>")})
		must(err)
		ids = append(ids, nested.ID)
	}
	for _, id := range ids {
		_, err := c.PublishCMSTemplate(ctx, id)
		must(err)
	}
	builtin := cmsTemplate(t, ns, tsclient.TemplateBuiltinPage, "login/new")["id"].(int64)
	_, err = c.UpdateCMSTemplate(ctx, builtin, tsclient.CMSTemplateParams{Draft: ptr.To(loginPage)})
	must(err)
	_, err = c.PublishCMSTemplate(ctx, builtin)
	must(err)
	_, err = c.CreateCMSFile(ctx, tsclient.CMSFileParams{Path: ptr.To("/guides/map.png"), SectionID: guides.ID, Downloadable: ptr.To(true),
		Content: logoPNG, Name: "map.png", ContentType: "image/png"})
	must(err)
	// A file whose path is another's folder.
	for _, p := range []string{"/guides/maps", "/guides/maps/europe.png"} {
		_, err = c.CreateCMSFile(ctx, tsclient.CMSFileParams{Path: ptr.To(p), SectionID: guides.ID, Content: logoPNG, Name: path.Base(p), ContentType: "image/png"})
		must(err)
	}

	_, err = c.CreateAuthenticationProvider(ctx, tsclient.AuthenticationProviderParams{Kind: "auth0", Name: "Auth0", ClientID: ptr.To("portal"),
		ClientSecret: ptr.To("auth0-secret"), Site: ptr.To("https://acme.eu.auth0.com"), Published: ptr.To(true)})
	must(err)
	_, err = c.UpdatePortalSettings(ctx, tsclient.PortalSettingsParams{SignupsEnabled: ptr.To(false)})
	must(err)

	exported, err := controllers.ExportTenant(ctx, harness.TenantClient(t, ns), plugin.ExportOptions{OnlyPortal: true})
	must(err)
	if len(exported.Left) != 1 || !strings.Contains(exported.Left[0], `"portal-signin-auth0"`) {
		t.Errorf("left out: %q, want only the sign-in provider's Secret to fill in", exported.Left)
	}
	if len(exported.Templates) != 1 {
		t.Fatalf("templates %v, want the provider's client secret", exported.Templates)
	}
	exported.Templates[0].StringData["clientSecret"] = "auth0-secret" // the user's part
	dir := t.TempDir()
	if _, err := plugin.WriteDir(dir, exported, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"portal/pages/docs.liquid", "portal/pages/docs/intro.liquid", "portal/pages/guides.liquid", "portal/pages/guides/start.liquid",
		"portal/pages/guides/start/faq.liquid", "portal/files/guides/maps/europe.png"} {
		if _, ok := exported.Tree[f]; !ok {
			t.Errorf("the export has no %s: %v", f, slices.Sorted(maps.Keys(exported.Tree)))
		}
	}
	objs, err := kustomize.Build(dir)
	must(err)
	var portal *v1alpha1.DeveloperPortal
	files := []client.Object{exported.Templates[0]}
	for _, u := range objs {
		if u.GetKind() == "DeveloperPortal" {
			portal = &v1alpha1.DeveloperPortal{}
			must(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, portal))
			files = append(files, portal)
			continue
		}
		files = append(files, u)
	}
	if portal == nil || portal.Spec.Publish != v1alpha1.PortalPublishAlways || len(portal.Spec.BuiltinPages) < 30 || len(portal.Spec.Files) < 2 ||
		len(portal.Spec.SignInProviders) != 1 || portal.Spec.Settings == nil || *portal.Spec.Settings.SignupsEnabled {
		t.Fatalf("exported portal %+v, want publish Always, the built-in pages, the files, the settings and the provider", portal)
	}
	harness.AdoptsWithNoWrite(t, ns, files, map[string]int{"DeveloperPortal": 1})
	if tpl := cmsTemplate(t, ns, tsclient.TemplatePage, "/guides/start"); !live(tpl, aboutPage) {
		t.Errorf("the hand-made page after adoption: %v", tpl)
	}

	// A person's draft, not published: the export keeps it a draft.
	_, err = c.UpdateCMSTemplate(ctx, page.ID, tsclient.CMSTemplateParams{Draft: ptr.To("# Start here")})
	must(err)
	exported, err = controllers.ExportTenant(ctx, harness.TenantClient(t, ns), plugin.ExportOptions{OnlyPortal: true})
	must(err)
	if len(exported.Left) != 2 || !strings.Contains(exported.Left[0], "/guides/start") || !strings.Contains(exported.Left[0], "publish: Manual") {
		t.Errorf("left %q, want the unpublished draft of /guides/start said", exported.Left)
	}
	p := exported.Files["portal"][0].(*v1alpha1.DeveloperPortal)
	if p.Spec.Publish != v1alpha1.PortalPublishManual {
		t.Errorf("publish %s, want Manual", p.Spec.Publish)
	}
	for _, pg := range p.Spec.Pages {
		key := "portal/pages/guides/" + pg.Content.Key
		if pg.Path == "/guides/start" && string(exported.Tree[key]) != "# Start here" {
			t.Errorf("exported content of /guides/start (%s): %q, want the draft", key, exported.Tree[key])
		}
	}
}

// TestDiffShowsPortalTemplateChanges: kubectl apimsync diff of a portal whose page the files change
// shows that page's unified diff (3scale's content against the spec's) and the two writes a sync makes
// (its draft, its publish), and writes nothing.
func TestDiffShowsPortalTemplateChanges(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)

	pages := portalContent(ns)[1]
	pages.Data["about.md"] = "# About us\n\nWe sell pets and their food."
	before := harness.WritesTo(ns)
	n, changes, plans := harness.PlannedWrites(t, ns, harness.AsFiles(ns, portal, pages))
	if harness.WritesTo(ns) != before {
		t.Errorf("diff wrote to 3scale")
	}
	p := harness.PlanOf(t, plans, "DeveloperPortal", portal.Name)
	if !changes || n != 2 || p.Action != "update" {
		t.Errorf("plan %+v (%d writes), want an update of 2 writes", p, n)
	}
	details := strings.Join(p.Details, "\n")
	for _, want := range []string{"--- 3scale/page:/company/about", "+++ spec/page:/company/about", "-We sell pets.", "+We sell pets and their food."} {
		if !strings.Contains(details, want) {
			t.Errorf("details %q lack %q", details, want)
		}
	}
}

// TestDeveloperPortalSettingsAndSignIn: the settings the spec sets are written, those it leaves out are
// not; a Keycloak provider is made with its client secret from a Secret (never in status), an edit of
// the Secret reaches 3scale, a secret changed by hand is put back at the drift check, and a provider the
// spec drops is unpublished (porta cannot delete one).
func TestDeveloperPortalSettingsAndSignIn(t *testing.T) {
	ns := harness.NewNamespace(t)
	const secretValue = "sso-client-secret-0123"
	sso := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sso"}, StringData: map[string]string{"clientSecret": secretValue}}
	portal := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal"},
		Spec: v1alpha1.DeveloperPortalSpec{
			Settings: &v1alpha1.PortalSettings{SignupsEnabled: ptr.To(false), ChangeServicePlanPermission: "direct"},
			SignInProviders: []v1alpha1.PortalSignInProvider{{Kind: "keycloak", Name: "Red Hat SSO", ClientID: "portal",
				ClientSecretRef: v1alpha1.LocalSecretKeyRef{Name: "sso", Key: "clientSecret"}, Site: "https://sso.example.com/realms/dev"}}}}
	harness.Create(t, harness.DefaultSecret(ns), sso, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)

	settings := harness.Sim.Objects(ns, simulator.KindPortalSettings)[0]
	if settings["signups_enabled"] != false || settings["change_service_plan_permission"] != "direct" || settings["public_search"] != false ||
		settings["change_account_plan_permission"] != "request" {
		t.Errorf("settings %v, want signups off, service plans changed directly, the rest as it was", settings)
	}
	provider := func() map[string]any {
		providers := harness.Sim.Objects(ns, simulator.KindSignInProviders)
		if len(providers) != 1 {
			t.Fatalf("sign-in providers %v, want one", providers)
		}
		return providers[0]
	}
	if p := provider(); p["kind"] != "keycloak" || p["client_secret"] != secretValue || p["published"] != true || p["name"] != "Red Hat SSO" {
		t.Errorf("provider %v", p)
	}
	if raw, _ := json.Marshal(portal.Status); strings.Contains(string(raw), secretValue) {
		t.Errorf("the client secret is in the status")
	}

	// The Secret edited: the new secret reaches 3scale.
	harness.Update(t, sso, func() { sso.StringData = map[string]string{"clientSecret": "rotated-secret-4567"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if p := provider(); p["client_secret"] != "rotated-secret-4567" {
			return "the rotated secret did not reach 3scale"
		}
		return ""
	})
	// Changed by hand: put back at the drift check.
	id := provider()["id"].(int64)
	if _, err := harness.ByHand(t, ns).UpdateAuthenticationProvider(context.Background(), id, tsclient.AuthenticationProviderParams{ClientSecret: ptr.To("by-hand")}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, portal, "1")
	if p := provider(); p["client_secret"] != "rotated-secret-4567" {
		t.Errorf("the secret changed by hand was not put back")
	}
	// Dropped from the spec: unpublished.
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(portal), portal); err != nil {
		t.Fatal(err)
	}
	if len(portal.Status.Items) != 1 || !portal.Status.Items[0].Created {
		t.Errorf("status.items %+v, want the provider recorded as made by apimsync", portal.Status.Items)
	}
	providers := portal.Spec.SignInProviders
	harness.Update(t, portal, func() { portal.Spec.SignInProviders = nil })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if p := provider(); p["published"] != false {
			return "the dropped provider is still published"
		}
		return ""
	})
	// Added again, then dropped again (issue 42, item 2): published, then unpublished again, however
	// many round trips.
	for round := range 2 {
		harness.Update(t, portal, func() { portal.Spec.SignInProviders = providers })
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if p := provider(); p["published"] != true {
				return fmt.Sprintf("round %d: the provider added again is not published", round)
			}
			return ""
		})
		harness.WaitState(t, v1alpha1.ConditionSynced, portal)
		harness.Update(t, portal, func() { portal.Spec.SignInProviders = nil })
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if p := provider(); p["published"] != false {
				return fmt.Sprintf("round %d: the provider dropped again is still published", round)
			}
			return ""
		})
	}
}

// TestDeveloperPortalPrunesANamedSection: what the tenant has that the spec does not list is left alone,
// except in a section spec.prune names, where pages and files made by anyone are deleted (and what the
// spec lists there stays).
func TestDeveloperPortalPrunesANamedSection(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	c := harness.ByHand(t, ns)
	ctx := context.Background()
	company := int64(0)
	for _, s := range harness.Sim.Objects(ns, simulator.KindCMSSections) {
		if s["system_name"] == "company" {
			company = s["id"].(int64)
		}
	}
	for _, page := range []struct {
		path    string
		section int64
	}{{"/company/legacy", company}, {"/elsewhere", 0}} {
		if _, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To(page.path), Path: ptr.To(page.path),
			SectionID: page.section, Draft: ptr.To("<p>by hand</p>")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateCMSFile(ctx, tsclient.CMSFileParams{Path: ptr.To("/company/old.pdf"), SectionID: company, Content: []byte("%PDF"),
		Name: "old.pdf", ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}
	// Not pruned: a drift check leaves them.
	harness.SyncNow(t, portal, "1")
	if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/legacy") == nil || cmsFile(ns, "/company/old.pdf") == nil {
		t.Fatalf("a drift check deleted what the spec does not list, with no prune")
	}
	harness.Update(t, portal, func() { portal.Spec.Prune = []string{"company"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/legacy") != nil || cmsFile(ns, "/company/old.pdf") != nil {
			return "the pruned section still holds what the spec does not list"
		}
		return ""
	})
	if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about") == nil || cmsTemplate(t, ns, tsclient.TemplatePage, "/elsewhere") == nil {
		t.Errorf("prune deleted what the spec lists, or what is outside the pruned section")
	}
}

// TestDeveloperPortalMovesAPageAndKeepsADraft: a page moved to another path (same title, no system
// name: porta derives the same one) is deleted at its old path before it is made at the new one, so
// porta does not refuse the name; with publish: Manual, a template the tenant already holds as the spec
// says (taken over with no write) and then drafted by a person is reported, not overwritten.
func TestDeveloperPortalMovesAPageAndKeepsADraft(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	seeded := fmt.Sprint(cmsTemplate(t, ns, tsclient.TemplatePage, "/")["published"])
	portal := smallPortal(ns, v1alpha1.PortalPublishManual)
	portal.Spec.Files, portal.Spec.BuiltinPages = nil, nil
	for _, cm := range portalContent(ns) {
		if cm.Name == "portal-pages" {
			cm.Data["index.html.liquid"] = seeded // what the tenant has already
		}
		harness.Create(t, cm)
	}
	portal.Spec.Pages[0].Layout = cmsLayoutName(t, ns, cmsTemplate(t, ns, tsclient.TemplatePage, "/")["layout_id"])
	harness.Create(t, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	home := cmsTemplate(t, ns, tsclient.TemplatePage, "/")
	if home["draft"] != nil || home["published"] != seeded {
		t.Fatalf("homepage %v, want it as it was (taken over with no write)", home)
	}
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, "were in the tenant before") {
		t.Errorf("Synced message %q, want the items taken over counted", msg)
	}
	if _, err := harness.ByHand(t, ns).UpdateCMSTemplate(context.Background(), home["id"].(int64), tsclient.CMSTemplateParams{Draft: ptr.To("<h1>Soon</h1>")}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, portal, "1")
	if home := cmsTemplate(t, ns, tsclient.TemplatePage, "/"); home["draft"] != "<h1>Soon</h1>" || portal.Status.EditedByHand != 1 {
		t.Errorf("homepage %v (editedByHand %d), want the person's draft kept and reported", home, portal.Status.EditedByHand)
	}

	// The about page moves (issue 42, item 4): in Manual mode what is live changes when a person
	// publishes, so the new page is a draft and the old one stays live until then; it goes at the first
	// sync after the draft is published.
	about := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about")
	if _, err := harness.ByHand(t, ns).PublishCMSTemplate(context.Background(), about["id"].(int64)); err != nil { // a person publishes it
		t.Fatal(err)
	}
	harness.SyncNow(t, portal, "about published")
	live := fmt.Sprint(cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about")["published"])
	harness.Update(t, portal, func() { portal.Spec.Pages[1].Path = "/company/about-us" })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about-us") == nil {
			state, _, msg := harness.SyncState(t, portal)
			return fmt.Sprintf("no draft at the new path (%s: %s)", state, msg)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	moved := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about-us")
	if old := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about"); old == nil || fmt.Sprint(old["published"]) != live {
		t.Errorf("the old page %v went down before a person published the new one", old)
	}
	if moved["published"] != nil || moved["draft"] == nil {
		t.Errorf("the new page %v, want a draft not yet live", moved)
	}
	if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, "stay live until the drafts are published") {
		t.Errorf("Synced message %q, want the leaving page told", msg)
	}
	if _, err := harness.ByHand(t, ns).PublishCMSTemplate(context.Background(), moved["id"].(int64)); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, portal, "published")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about") != nil {
			return "the old page is still there after the new one was published"
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
}

// cmsLayoutName is the system name of the simulator's layout id.
func cmsLayoutName(t *testing.T, ns string, id any) string {
	t.Helper()
	for _, tpl := range harness.Sim.Objects(ns, simulator.KindCMSTemplates) {
		if tpl["type"] == tsclient.TemplateLayout && tpl["id"] == id {
			return fmt.Sprint(tpl["system_name"])
		}
	}
	return ""
}

// TestDeveloperPortalMovedToAnotherTenant (issue 42, item 1): a portal whose provider account now points
// at another tenant, where a page someone made there happens to have the id of one of the portal's
// pages, never writes by the old tenant's ids: that page keeps its path and content, the portal's pages
// are made on the new tenant, and a page that leaves the spec is deleted only where the portal made it.
func TestDeveloperPortalMovedToAnotherTenant(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	aboutID := int64(0)
	for _, it := range portal.Status.Items {
		if it.Key == "page:/company/about" {
			aboutID = it.ID
		}
	}
	if aboutID == 0 {
		t.Fatalf("no id recorded for the about page: %v", portal.Status.Items)
	}

	// The second tenant: pages made by hand until one has the about page's id.
	second := ns + "-b"
	b := harness.ByHand(t, second)
	precious := map[int64]string{}
	for i := 0; ; i++ {
		path := fmt.Sprintf("/keep-%d", i)
		tpl, err := b.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To("Keep"), Path: ptr.To(path),
			Draft: ptr.To("precious"), SystemName: ptr.To(fmt.Sprintf("keep_%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		precious[tpl.ID] = path
		if tpl.ID >= aboutID || i > 500 {
			break
		}
	}
	if _, collides := precious[aboutID]; !collides {
		t.Fatalf("no page of the second tenant has id %d: the test cannot show a collision", aboutID)
	}
	adminURL, token := harness.TenantOf(second)
	secret := harness.DefaultSecret(ns)
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"adminURL": adminURL, "token": token} })
	// The portal is Synced (at the same generation) from before the move too: wait until its status
	// records the about page the second tenant has, so that what it says is about the second tenant.
	harness.Eventually(t, harness.WaitTimeout, func() string {
		about := cmsTemplate(t, second, tsclient.TemplatePage, "/company/about")
		if about == nil {
			return "the about page is not on the second tenant"
		}
		if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(portal), portal); err != nil {
			return err.Error()
		}
		for _, it := range portal.Status.Items {
			if it.Key == "page:/company/about" && it.ID == about["id"].(int64) {
				return ""
			}
		}
		return fmt.Sprintf("the status does not record the second tenant's about page (%v) yet: %v", about["id"], portal.Status.Items)
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	checkPrecious := func(when string) {
		t.Helper()
		for _, tpl := range harness.Sim.Objects(second, simulator.KindCMSTemplates) {
			id, _ := tpl["id"].(int64)
			if path, mine := precious[id]; mine && (tpl["path"] != path || tpl["draft"] != "precious") {
				t.Errorf("%s: the second tenant's page %d was written: %v, want %s untouched", when, id, tpl, path)
			}
		}
		for id, path := range precious {
			if cmsTemplate(t, second, tsclient.TemplatePage, path) == nil {
				t.Errorf("%s: the second tenant's page %d (%s) is gone", when, id, path)
			}
		}
	}
	checkPrecious("after the move")
	for _, it := range portal.Status.Items {
		if _, theirs := precious[it.ID]; theirs && it.Created {
			t.Errorf("status says the portal made the second tenant's page %d: %+v", it.ID, it)
		}
	}

	// The about page leaves the spec: deleted on the second tenant, where the portal made it; the page of
	// the same id that someone made there stays.
	harness.Update(t, portal, func() {
		var pages []v1alpha1.PortalPage
		for _, p := range portal.Spec.Pages {
			if p.Path != "/company/about" {
				pages = append(pages, p)
			}
		}
		portal.Spec.Pages = pages
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, second, tsclient.TemplatePage, "/company/about") != nil {
			return "the about page is still on the second tenant"
		}
		return ""
	})
	checkPrecious("after the about page left the spec")
	if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about") == nil {
		t.Errorf("the first tenant's about page was deleted: it is left there untouched")
	}
}

// TestSectionPartialPathAsPortaStoresIt (issue 42, item 7): a section's partialPath "//company" is stored
// by porta as "/company" (app/models/cms/section.rb:200-202); apimsync compares it as stored, so a drift
// check writes nothing.
func TestSectionPartialPathAsPortaStoresIt(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	portal.Spec.Sections[0].PartialPath = "//company"
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	for _, s := range harness.Sim.Objects(ns, simulator.KindCMSSections) {
		if s["system_name"] == "company" && s["partial_path"] != "/company" {
			t.Errorf("section company stored with partial_path %v, want /company", s["partial_path"])
		}
	}
	before := harness.WritesTo(ns)
	harness.SyncNow(t, portal, "1")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes at a drift check of an unchanged portal with partialPath //company, want 0: %v", n, harness.LastWrites(ns, n))
	}
}

// TestRenamedLayoutGoesInOneSync (issue 42, item 5): a layout renamed, with the pages pointed at the new
// name in the same apply, is gone after that one sync — deleted after the pages moved, not kept until a
// drift check — and no longer in status.
func TestRenamedLayoutGoesInOneSync(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	harness.EditAndWait(t, portal, func() {
		portal.Spec.Layouts[0].SystemName = "brand2"
		for i := range portal.Spec.Pages {
			portal.Spec.Pages[i].Layout = "brand2"
		}
	})
	if cmsTemplate(t, ns, tsclient.TemplateLayout, "brand") != nil {
		t.Errorf("the renamed layout brand is still in 3scale after the sync")
	}
	layout := cmsTemplate(t, ns, tsclient.TemplateLayout, "brand2")
	if layout == nil {
		t.Fatalf("no layout brand2")
	}
	for _, path := range []string{"/", "/company/about"} {
		if page := cmsTemplate(t, ns, tsclient.TemplatePage, path); page == nil || page["layout_id"] != layout["id"] {
			t.Errorf("page %s: %v, want it on layout brand2 (%v)", path, page, layout["id"])
		}
	}
	for _, it := range portal.Status.Items {
		if it.Key == "layout:brand" {
			t.Errorf("status still records the renamed layout: %+v", it)
		}
	}
	if _, _, msg := harness.SyncState(t, portal); strings.Contains(msg, "kept") && strings.Contains(msg, "brand") {
		t.Errorf("Synced message %q says a layout was kept", msg)
	}
}

// TestBrokenLiquidInALayoutOrABuiltinIsRefused (issue 42, item 14): porta refuses a layout's and a
// built-in page's draft whose Liquid does not parse (app/models/cms/template.rb:36,178-189, builtin.rb:
// 58-60; the simulator's TestCMSLiquidDrafts): the portal is Invalid with porta's message naming the item,
// and that refused write is the only one.
func TestBrokenLiquidInALayoutOrABuiltinIsRefused(t *testing.T) {
	ns := harness.NewNamespace(t)
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	for _, tc := range []struct{ item, configMap, key string }{
		{"layout:brand", "portal-layouts", "brand.html.liquid"},
		{"builtin_page:login/new", "portal-pages", "login-new.html.liquid"},
	} {
		before := harness.WritesTo(ns)
		content := &corev1.ConfigMap{}
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tc.configMap}, content); err != nil {
			t.Fatal(err)
		}
		good := content.Data[tc.key]
		harness.Update(t, content, func() { content.Data[tc.key] = "{% if current_user %}<p>never closed</p>{% content %}" })
		harness.WaitReason(t, portal, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteRejected)
		if _, _, msg := harness.SyncState(t, portal); !strings.Contains(msg, tc.item) || !strings.Contains(msg, "'if' tag was never closed") {
			t.Errorf("%s: message %q, want the item and porta's Liquid error", tc.item, msg)
		}
		if n := harness.WritesTo(ns) - before; n != 1 {
			t.Errorf("%s: %d writes, want the one porta refused: %v", tc.item, n, harness.LastWrites(ns, n))
		}
		harness.Update(t, content, func() { content.Data[tc.key] = good })
		harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	}
}

// TestPageMovedByHandThenByTheSpec (issue 42, item 8): a page apimsync made, moved by hand in the admin
// portal to /b, then moved to /b by the spec too: the plan finds it at /b, so it neither deletes it (as
// the old /a that left the spec) nor dereferences a template it deleted; one page at /b, still
// apimsync's, and its later removal from the spec deletes it.
func TestPageMovedByHandThenByTheSpec(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	portal := smallPortal(ns, v1alpha1.PortalPublishAlways)
	createPortal(t, ns, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	about := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about")
	if _, err := harness.ByHand(t, ns).UpdateCMSTemplate(ctx, about["id"].(int64), tsclient.CMSTemplateParams{Path: ptr.To("/company/about-us")}); err != nil {
		t.Fatal(err)
	}
	// (with a drift check, so that the plan reads the tenant as it is)
	harness.EditAndWait(t, portal, func() {
		portal.Spec.Pages[1].Path = "/company/about-us"
		portal.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "moved"})
	})
	moved := cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about-us")
	if moved == nil || moved["id"] != about["id"] || cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about") != nil {
		t.Fatalf("page after the moves: %v, want template %v at /company/about-us and none at /company/about; writes %v", moved["id"], about["id"], harness.LastWrites(ns, 6))
	}
	made := false
	for _, it := range portal.Status.Items {
		made = made || (it.Key == "page:/company/about-us" && it.Created && it.ID == about["id"])
		if it.Key == "page:/company/about" {
			t.Errorf("status still records the old path: %+v", it)
		}
	}
	if !made {
		t.Errorf("status.items %+v, want page:/company/about-us recorded as made by apimsync", portal.Status.Items)
	}
	harness.Update(t, portal, func() { portal.Spec.Pages = portal.Spec.Pages[:1] })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/company/about-us") != nil {
			return "the page apimsync made, dropped from the spec, is still there"
		}
		return ""
	})
}

// TestAdoptedPageMoves (issue 42, item 3): a page taken over from the tenant (as export --portal writes
// it, with its system name) whose path the spec changes is moved in place: one page at the new path with
// the same id, none at the old one, no page made beside it.
func TestAdoptedPageMoves(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	harness.Create(t, harness.DefaultSecret(ns))
	guides, err := harness.ByHand(t, ns).CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To("Guides"),
		Path: ptr.To("/guides"), SystemName: ptr.To("guides"), Draft: ptr.To("<h1>Guides</h1>")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.ByHand(t, ns).PublishCMSTemplate(ctx, guides.ID); err != nil {
		t.Fatal(err)
	}
	content := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal-guides"}, Data: map[string]string{"guides.html": "<h1>Guides</h1>"}}
	portal := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal"},
		Spec: v1alpha1.DeveloperPortalSpec{Publish: v1alpha1.PortalPublishAlways, Pages: []v1alpha1.PortalPage{{Path: "/guides", Title: "Guides",
			SystemName: "guides", Content: v1alpha1.PortalContentRef{ConfigMap: "portal-guides", Key: "guides.html"}}}}}
	harness.Create(t, content, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	harness.EditAndWait(t, portal, func() { portal.Spec.Pages[0].Path = "/docs/guides" })
	moved := cmsTemplate(t, ns, tsclient.TemplatePage, "/docs/guides")
	if moved == nil || moved["id"] != guides.ID || cmsTemplate(t, ns, tsclient.TemplatePage, "/guides") != nil {
		t.Errorf("after the move: %v at /docs/guides, want page %d moved there and none at /guides", moved, guides.ID)
	}
	for _, it := range portal.Status.Items {
		if it.Key == "page:/docs/guides" && it.Created {
			t.Errorf("the adopted page is recorded as made by apimsync: %+v", it)
		}
	}
}

// refusedCalls counts a tenant's calls 3scale refused (4xx), reads and writes.
func refusedCalls(ns string) int {
	n := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == ns && c.Code >= 400 && c.Code < 500 {
			n += c.Count
		}
	}
	return n
}

// TestPageMovedToAKeyRecordedStale: the spec moves a page apimsync made (/a, system name "about") to the
// path of another page it made (/b) that a person deleted in the admin portal: /b's record holds the id
// of a page that is gone. The page is moved in place in one sync, no page is made beside it (porta
// would refuse its system name as taken, at every sync), and it is recorded under /b as apimsync's.
func TestPageMovedToAKeyRecordedStale(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	harness.Create(t, harness.DefaultSecret(ns))
	content := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal-pages"},
		Data: map[string]string{"a.html": "<h1>About</h1>", "b.html": "<h1>Bee</h1>"}}
	ref := func(key string) v1alpha1.PortalContentRef {
		return v1alpha1.PortalContentRef{ConfigMap: "portal-pages", Key: key}
	}
	portal := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal"},
		Spec: v1alpha1.DeveloperPortalSpec{Publish: v1alpha1.PortalPublishAlways, Pages: []v1alpha1.PortalPage{
			{Path: "/a", Title: "About", SystemName: "about", Content: ref("a.html")},
			{Path: "/b", Title: "Bee", SystemName: "bee", Content: ref("b.html")},
		}}}
	harness.Create(t, content, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	a, b := cmsTemplate(t, ns, tsclient.TemplatePage, "/a"), cmsTemplate(t, ns, tsclient.TemplatePage, "/b")
	if err := harness.ByHand(t, ns).DeleteCMSTemplate(ctx, b["id"].(int64)); err != nil {
		t.Fatal(err)
	}

	refused, from := refusedCalls(ns), len(harness.Sim.Writes(ns))
	harness.Update(t, portal, func() {
		portal.Spec.Pages = []v1alpha1.PortalPage{{Path: "/b", Title: "About", SystemName: "about", Content: ref("a.html")}}
		portal.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "moved"}) // read the tenant as it is
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if len(harness.RefusedWrites(ns, from)) > 0 {
			return "" // refused: fails below, without waiting for a sync that does not come
		}
		if state, reason, msg := harness.SyncState(t, portal); state != v1alpha1.ConditionSynced || portal.Status.ObservedGeneration != portal.Generation {
			return fmt.Sprintf("portal is %s (%s: %s)", state, reason, msg)
		}
		return ""
	})
	if w := harness.RefusedWrites(ns, from); len(w) > 0 || refusedCalls(ns) != refused {
		t.Fatalf("3scale refused %d calls, writes %v; want none", refusedCalls(ns)-refused, w)
	}
	moved := cmsTemplate(t, ns, tsclient.TemplatePage, "/b")
	if moved == nil || moved["id"] != a["id"] || cmsTemplate(t, ns, tsclient.TemplatePage, "/a") != nil {
		t.Errorf("page at /b %v, want page %v moved there and none at /a; writes %v", moved, a["id"], harness.LastWrites(ns, 4))
	}
	made := false
	for _, it := range portal.Status.Items {
		made = made || (it.Key == "page:/b" && it.ID == a["id"] && it.Created)
		if it.Key == "page:/a" {
			t.Errorf("status still records the old path: %+v", it)
		}
	}
	if !made {
		t.Errorf("status.items %+v, want page:/b recorded with id %v, made by apimsync", portal.Status.Items, a["id"])
	}

	// Settled: a drift check writes nothing, and nothing is refused.
	before := harness.WritesTo(ns)
	harness.SyncNow(t, portal, "again")
	if n := harness.WritesTo(ns) - before; n != 0 || refusedCalls(ns) != refused {
		t.Errorf("a drift check after the move: %d writes (%v), %d refused; want none", n, harness.LastWrites(ns, n), refusedCalls(ns)-refused)
	}
	// Still apimsync's: dropped from the spec, it is deleted.
	harness.Update(t, portal, func() { portal.Spec.Pages = nil })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if cmsTemplate(t, ns, tsclient.TemplatePage, "/b") != nil {
			return "the page apimsync made, dropped from the spec, is still there"
		}
		return ""
	})
}

// TestPrunedSectionKeepsAPersonsSectionOfAGoneOnesName: a section apimsync made (docs, in company) is
// deleted in the admin portal and a person makes another of the same name there; the spec then drops
// docs and prunes company. status.items still records docs as made by apimsync, with the id of the one
// gone: the person's section is not apimsync's, and stays. diff says so (no write), and the sync writes
// nothing, refuses nothing and settles.
func TestPrunedSectionKeepsAPersonsSectionOfAGoneOnesName(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	harness.Create(t, harness.DefaultSecret(ns))
	portal := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "portal"},
		Spec: v1alpha1.DeveloperPortalSpec{Publish: v1alpha1.PortalPublishAlways, Sections: []v1alpha1.PortalSection{
			{SystemName: "company", Title: "Company", PartialPath: "/company"},
			{SystemName: "docs", Title: "Docs", Parent: "company", PartialPath: "/company/docs"},
		}}}
	harness.Create(t, portal)
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	sections := map[string]int64{}
	for _, s := range harness.Sim.Objects(ns, simulator.KindCMSSections) {
		sections[fmt.Sprint(s["system_name"])] = s["id"].(int64)
	}
	c := harness.ByHand(t, ns)
	if err := c.DeleteCMSSection(ctx, sections["docs"]); err != nil {
		t.Fatal(err)
	}
	persons, err := c.CreateCMSSection(ctx, tsclient.CMSSectionParams{Title: ptr.To("Docs"), SystemName: ptr.To("docs"),
		PartialPath: ptr.To("/company/docs"), Public: ptr.To(true), ParentID: sections["company"]})
	if err != nil {
		t.Fatal(err)
	}
	personsSection := func() bool {
		for _, s := range harness.Sim.Objects(ns, simulator.KindCMSSections) {
			if s["id"] == persons.ID {
				return true
			}
		}
		return false
	}

	edit := func(p *v1alpha1.DeveloperPortal) {
		p.Spec.Sections, p.Spec.Prune = p.Spec.Sections[:1], []string{"company"}
	}
	edited := portal.DeepCopy()
	edit(edited)
	if n, changes, plans := harness.PlannedWrites(t, ns, harness.AsFiles(ns, edited)); n != 0 || changes {
		t.Errorf("diff: %d writes, changes %v (%+v); want none: the section of that name is the person's", n, changes,
			harness.PlanOf(t, plans, "DeveloperPortal", portal.Name))
	}

	refused, from := refusedCalls(ns), len(harness.Sim.Writes(ns))
	harness.Update(t, portal, func() {
		edit(portal)
		portal.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "pruned"}) // read the tenant as it is
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, portal)
	if w := harness.Sim.Writes(ns)[from:]; len(w) != 0 || refusedCalls(ns) != refused || !personsSection() {
		t.Errorf("sync of the pruned spec: writes %v, %d refused, the person's section there: %v; want no write, none refused, the section kept",
			w, refusedCalls(ns)-refused, personsSection())
	}
	for _, it := range portal.Status.Items {
		if it.Key == "section:docs" {
			t.Errorf("status still records the section gone: %+v", it)
		}
	}
	before := harness.WritesTo(ns)
	harness.SyncNow(t, portal, "again")
	if n := harness.WritesTo(ns) - before; n != 0 || refusedCalls(ns) != refused || !personsSection() {
		t.Errorf("a drift check after: %d writes (%v), %d refused; want none, the person's section kept", n, harness.LastWrites(ns, n), refusedCalls(ns)-refused)
	}
	for _, ev := range harness.EventsOf(t, portal) {
		if strings.Contains(ev, v1alpha1.ReasonDriftRepaired) {
			t.Errorf("event %q: nothing drifted", ev)
		}
	}
}
