package developerportal

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the tenant's developer portal when asked (ExportOptions.Portal): a DeveloperPortal to
// "portal", every section (but root), layout, partial, page, built-in page and partial and file of the
// tenant, each content a file under portal/ in the export's tree, one ConfigMap per folder
// (Exported.Generators), its settings, and its sign-in providers, each client secret a Secret template
// to fill in. What 3scale holds is what is exported: applied, it adopts the portal with no
// write. A template with a draft that is not live makes the export publish: Manual, with the draft as
// its content (a person's work in progress is neither published nor lost), and says so.
func Export(ctx context.Context, x *plugin.Exporter) error {
	if !x.Options.Portal && !x.Options.OnlyPortal {
		return nil
	}
	snap, err := read(ctx, x.Client, 0, true, true)
	if err != nil {
		return err
	}
	if snap == nil {
		x.Leave("the developer portal: the tenant's CMS has no root section: not exported")
		return nil
	}
	e := &portalExport{x: x, snap: snap, keys: map[string]map[string]bool{}, folders: map[string]bool{}}
	for _, t := range snap.Templates {
		if t.Type == tsclient.TemplatePage {
			e.addFolders(pageFolder(t.Path))
		}
	}
	for _, f := range snap.Files {
		e.addFolders(path.Join("files", path.Dir(f.Path)))
	}
	spec := v1alpha1.DeveloperPortalSpec{Publish: v1alpha1.PortalPublishAlways}
	var drafts []string
	for _, t := range snap.Templates {
		if t.Draft != nil && (t.Published == nil || *t.Draft != *t.Published) {
			drafts = append(drafts, templateName(t))
		}
	}
	if len(drafts) > 0 {
		spec.Publish = v1alpha1.PortalPublishManual
		x.Leave("the developer portal: %d templates have a draft that is not published (%s): exported with publish: Manual and their drafts as content, "+
			"so that applying neither publishes nor loses them; publish them, then set publish: Always if you want Git to publish", len(drafts), strings.Join(drafts, ", "))
	}
	for _, s := range snap.Sections {
		if s.ID == snap.RootID {
			continue
		}
		public := s.Public
		spec.Sections = append(spec.Sections, v1alpha1.PortalSection{SystemName: s.SystemName, Title: s.Title, Parent: e.sectionName(s.ParentID),
			PartialPath: s.PartialPath, Public: &public})
	}
	for _, t := range snap.Templates {
		if t.Draft == nil && t.Published == nil && (t.Type == tsclient.TemplatePage || t.Type == tsclient.TemplateLayout || t.Type == tsclient.TemplatePartial) {
			x.Leave("the developer portal: %s %s has no content, neither published nor drafted (a hidden page): not exported", t.Type, templateName(t))
			continue
		}
		content := []byte(e.content(t, spec.Publish))
		switch t.Type {
		case tsclient.TemplateLayout:
			liquid := t.LiquidEnabled
			spec.Layouts = append(spec.Layouts, v1alpha1.PortalLayout{SystemName: t.SystemName, Title: t.Title, Liquid: &liquid,
				Content: e.file("layouts", t.SystemName+".liquid", content)})
		case tsclient.TemplatePartial:
			spec.Partials = append(spec.Partials, v1alpha1.PortalPartial{SystemName: t.SystemName, Content: e.file("partials", t.SystemName+".liquid", content)})
		case tsclient.TemplateBuiltinPartial:
			spec.BuiltinPartials = append(spec.BuiltinPartials, v1alpha1.PortalBuiltinPartial{SystemName: t.SystemName,
				Content: e.file("builtin-partials", t.SystemName+".liquid", content)})
		case tsclient.TemplateBuiltinPage:
			spec.BuiltinPages = append(spec.BuiltinPages, v1alpha1.PortalBuiltinPage{SystemName: t.SystemName, Layout: e.layoutName(t.LayoutID),
				Content: e.file("builtin-pages", t.SystemName+".liquid", content)})
		case tsclient.TemplatePage:
			spec.Pages = append(spec.Pages, e.page(t, content))
		default:
			x.Leave("the developer portal: %s %q is of a type apimsync does not model: not exported", t.Type, t.SystemName)
		}
	}
	for _, f := range snap.Files {
		content, err := x.Client.FileContent(ctx, f)
		if err != nil {
			return fmt.Errorf("cannot read the content of portal file %s: %w", f.Path, err)
		}
		spec.Files = append(spec.Files, v1alpha1.PortalFile{Path: f.Path, Section: e.sectionName(f.SectionID), Downloadable: f.Downloadable,
			Content: e.file(path.Join("files", path.Dir(f.Path)), path.Base(f.Path), content)})
	}
	spec.Settings = exportSettings(*snap.Settings)
	for _, pv := range snap.Providers {
		if pv.ClientID == "" {
			x.Leave("the developer portal: sign-in provider %q has no client id of its own (3scale's GitHub application): not exported", pv.Kind)
			continue
		}
		secret := x.Template("portal-signin-"+plugin.ObjectName(pv.Kind), []string{"clientSecret"})
		published := pv.Published
		spec.SignInProviders = append(spec.SignInProviders, v1alpha1.PortalSignInProvider{Kind: pv.Kind, Name: pv.Name, ClientID: pv.ClientID,
			ClientSecretRef: v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: "clientSecret"}, Site: pv.Site, Published: &published,
			SkipSSLCertificateVerification: pv.SkipSSLCertificateVerification, AutomaticallyApproveAccounts: pv.AutomaticallyApproveAccounts})
		x.Leave("the developer portal: sign-in provider %q reads its client secret from Secret %q (key clientSecret): fill in its template with the secret 3scale has", pv.Kind, secret.Name)
	}
	x.Add("portal", &v1alpha1.DeveloperPortal{TypeMeta: plugin.TypeMeta("DeveloperPortal"), ObjectMeta: metav1.ObjectMeta{Name: "portal"}, Spec: spec})
	return nil
}

// portalExport is one export of a portal: the keys taken in each ConfigMap, and the folders of the
// tree.
type portalExport struct {
	x    *plugin.Exporter
	snap *Snapshot
	// keys are the keys taken in each ConfigMap, lower-cased.
	keys map[string]map[string]bool
	// folders are every folder the tree will have (with their parents), lower-cased: no file may take
	// the name of one.
	folders map[string]bool
}

// page is a page's spec: what differs from the DeveloperPortal's defaults left out (text/html).
func (e *portalExport) page(t tsclient.CMSTemplate, content []byte) v1alpha1.PortalPage {
	liquid := t.LiquidEnabled
	p := v1alpha1.PortalPage{Path: t.Path, Title: t.Title, SystemName: t.SystemName, Section: e.sectionName(t.SectionID),
		Layout: e.layoutName(t.LayoutID), Liquid: &liquid, Handler: v1alpha1.PortalHandler(t.Handler)}
	if t.ContentType != "text/html" {
		p.ContentType = t.ContentType
	}
	p.Content = e.file(pageFolder(t.Path), pageFile(t.Path), content)
	return p
}

// The tree of a portal's export is portal/<kind>/..., one folder per ConfigMap, laid out so that no two
// items meet, whatever their paths:
//
//   - a page is a file named after the last segment of its path, with .liquid after it, in the folder of
//     the rest of its path: /docs is pages/docs.liquid and /docs/intro pages/docs/intro.liquid, side by
//     side; / is pages/index.liquid, /docs/ pages/docs/index.liquid;
//   - a file (spec.files) keeps its name, in the folder of its path: /images/logo.png is
//     files/images/logo.png;
//   - a layout, a partial, a built-in page or partial is its system name, .liquid after it, '/' made
//     "--" (builtin-pages/login--new.liquid).
//
// A name's characters that a ConfigMap key cannot hold are '_', in folders too. Then, should two names
// still meet — two keys of one ConfigMap that differ only in case (they would be one file where case
// does not count), or a file named as a folder is (a page /docs.liquid/x beside /docs, a file /docs beside
// /docs/guide.pdf) — the later one's name takes a number: 2-docs.liquid. The key is the file's name, and
// the DeveloperPortal names it: nothing depends on the layout but kustomize's file list.

// pageFolder is the folder of the page at portal path p: pages/, then p's folders.
func pageFolder(p string) string {
	dir, _ := path.Split(p)
	return path.Join("pages", dir)
}

// pageFile is the file name of the page at portal path p: its last segment (index when p ends with
// /), .liquid after it.
func pageFile(p string) string {
	_, base := path.Split(p)
	if base == "" {
		base = "index"
	}
	return base + ".liquid"
}

// fileName makes name a ConfigMap key and a file's name: '/' is "--", what a key cannot hold '_', no dot
// at either end.
func fileName(name string) string {
	base := strings.Trim(notKey.ReplaceAllString(strings.ReplaceAll(name, "/", "--"), "_"), ".")
	if base == "" {
		base = "_"
	}
	return base
}

// folder is the tree's folder of dir (pages/docs): each segment a file name, under portal/.
func folder(dir string) string {
	segments := []string{"portal"}
	for _, s := range strings.Split(strings.Trim(path.Clean("/"+dir), "/"), "/") {
		if s != "" {
			segments = append(segments, fileName(s))
		}
	}
	return path.Join(segments...)
}

// addFolders records the tree's folder of dir and its parents.
func (e *portalExport) addFolders(dir string) {
	for f := folder(dir); f != "." && f != "/" && !e.folders[strings.ToLower(f)]; f = path.Dir(f) {
		e.folders[strings.ToLower(f)] = true
	}
}

// content is what a template's spec holds: its draft when not live and publish is Manual, else what is
// live (a template never published: its draft).
func (e *portalExport) content(t tsclient.CMSTemplate, mode v1alpha1.PortalPublish) string {
	switch {
	case t.Draft != nil && (mode == v1alpha1.PortalPublishManual || t.Published == nil):
		return *t.Draft
	case t.Published != nil:
		return *t.Published
	}
	return ""
}

// notKey is what a ConfigMap key cannot hold.
var notKey = regexp.MustCompile(`[^-._a-zA-Z0-9]+`)

// file puts content in the tree at portal/<dir>/<name> (name made a ConfigMap key, unique in its
// ConfigMap and named as no folder is: see pageFolder) and returns its reference: the folder's
// ConfigMap, portal-<dir>.
func (e *portalExport) file(dir, name string, content []byte) v1alpha1.PortalContentRef {
	dir = folder(dir)
	cm := plugin.ObjectName(strings.ReplaceAll(dir, "/", "-"))
	base := fileName(name)
	if e.keys[cm] == nil {
		e.keys[cm] = map[string]bool{}
		e.x.Out.Generators = append(e.x.Out.Generators, plugin.Generator{Name: cm})
	}
	taken := func(key string) bool {
		return e.keys[cm][strings.ToLower(key)] || e.folders[strings.ToLower(path.Join(dir, key))]
	}
	key := base
	for i := 2; taken(key); i++ {
		key = strconv.Itoa(i) + "-" + base
	}
	e.keys[cm][strings.ToLower(key)] = true
	file := path.Join(dir, key)
	e.x.Out.Tree[file] = content
	for i := range e.x.Out.Generators {
		if g := &e.x.Out.Generators[i]; g.Name == cm {
			g.Files = append(g.Files, file)
		}
	}
	return v1alpha1.PortalContentRef{ConfigMap: cm, Key: key}
}

// sectionName is the system name of section id ("" for root).
func (e *portalExport) sectionName(id int64) string {
	if s := e.snap.section(id, ""); s != nil && s.ID != e.snap.RootID {
		return s.SystemName
	}
	return ""
}

// layoutName is the system name of layout id ("" for none).
func (e *portalExport) layoutName(id int64) string {
	if t := e.snap.templateByID(id); id != 0 && t != nil {
		return t.SystemName
	}
	return ""
}

// templateName names a template in a message: its path (pages) or system name.
func templateName(t tsclient.CMSTemplate) string {
	if t.Type == tsclient.TemplatePage {
		return t.Path
	}
	return t.SystemName
}

// exportSettings is the spec of every setting the tenant's portal has (hideService when set).
func exportSettings(s tsclient.PortalSettings) *v1alpha1.PortalSettings {
	b := func(v bool) *bool { return &v }
	return &v1alpha1.PortalSettings{SignupsEnabled: b(s.SignupsEnabled), AccountApprovalRequired: b(s.AccountApprovalRequired),
		UserAccountAreaEnabled: b(s.UserAccountAreaEnabled), PublicSearch: b(s.PublicSearch), HideService: s.HideService,
		AccountPlansUIVisible: b(s.AccountPlansUIVisible), ServicePlansUIVisible: b(s.ServicePlansUIVisible),
		ChangeAccountPlanPermission: v1alpha1.PortalPlanChangePermission(s.ChangeAccountPlanPermission),
		ChangeServicePlanPermission: v1alpha1.PortalPlanChangePermission(s.ChangeServicePlanPermission)}
}
