package developerportal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Desired is the portal the spec asks for, its contents read from their ConfigMaps, in the order they
// are written: sections parents first; layouts, partials and built-in partials before the pages that
// use them.
type Desired struct {
	Sections  []Section
	Templates []Template
	Files     []File
	Publish   v1alpha1.PortalPublish
	// Prune are the sections whose unlisted pages and files are deleted, whoever made them.
	Prune []string
	// RestoreBuiltins writes back a built-in's original content when its override leaves the spec.
	RestoreBuiltins bool
	// Settings are the settings the spec manages (nil: none).
	Settings *tsclient.PortalSettingsParams
	// Providers are the sign-in providers, their client secrets read from their Secrets.
	Providers []Provider
}

// Provider is a sign-in provider the spec asks for.
type Provider struct {
	Key                                                    itemKey
	Kind, Name, ClientID, ClientSecret, Site               string
	Published, SkipSSLCertificateVerification, AutoApprove bool
}

// Section is a section the spec asks for.
type Section struct {
	SystemName, Title, Parent, PartialPath string
	Public                                 bool
}

// Template is a page, layout, partial or built-in override the spec asks for. Key identifies it
// ("page:/about"); Hash is its content's.
type Template struct {
	Key                                      itemKey
	Type                                     string
	SystemName, Title, Path, Section, Layout string
	Handler, ContentType                     string
	Liquid                                   bool
	Content, Hash                            string
}

// File is a file the spec asks for.
type File struct {
	Key               itemKey
	Path, Section     string
	Downloadable      bool
	Content           []byte
	Name, ContentType string
	Hash              string
}

// itemKey identifies an item of the portal: its type (a template type, "section", "file" or "signin")
// and what names it in the tenant (a path, a system name, a sign-in provider's kind). Its String,
// "page:/about", is what status.items and status.builtinOriginals record it under; keyOf reads one back.
type itemKey struct {
	typ, name string
}

// The types of the items that are not templates (tsclient.TemplatePage and the others).
const (
	typeSection = "section"
	typeFile    = "file"
	typeSignin  = "signin"
)

// String is the key as status records it: "page:/about".
func (k itemKey) String() string { return k.typ + ":" + k.name }

// keyOf is the key status records as s: the one place a key is read back. A key apimsync does not write
// (no ':') is a type alone.
func keyOf(s string) itemKey {
	typ, name, _ := strings.Cut(s, ":")
	return itemKey{typ: typ, name: name}
}

// kind is the kind of remote item k names: sections, files and sign-in providers; every other type is a
// template's.
func (k itemKey) kind() itemKind {
	switch k.typ {
	case typeSection:
		return kindSection
	case typeFile:
		return kindFile
	case typeSignin:
		return kindProvider
	}
	return kindTemplate
}

// builtin tells whether k is a built-in page's or partial's override (the tenant has it, always).
func (k itemKey) builtin() bool {
	return k.typ == tsclient.TemplateBuiltinPage || k.typ == tsclient.TemplateBuiltinPartial
}

// Item keys: the type and what identifies an item of it in the tenant.
func pageKey(p string) itemKey          { return itemKey{typ: tsclient.TemplatePage, name: p} }
func namedKey(typ, name string) itemKey { return itemKey{typ: typ, name: name} }
func fileKey(p string) itemKey          { return itemKey{typ: typeFile, name: p} }
func sectionKey(name string) itemKey    { return itemKey{typ: typeSection, name: name} }
func signinKey(kind string) itemKey     { return itemKey{typ: typeSignin, name: kind} }
func hashOf(content []byte) string      { s := sha256.Sum256(content); return hex.EncodeToString(s[:]) }
func orRoot(section string) string {
	if section == "" {
		return tsclient.RootSection
	}
	return section
}

// contentReader reads content references, each ConfigMap once.
type contentReader struct {
	ctx       context.Context
	reader    client.Reader
	namespace string
	read      map[string]*corev1.ConfigMap
}

// content returns the bytes ref names (data or binaryData); a missing ConfigMap or key makes the portal
// wait (DocumentNotFound), saying which item needs it.
func (r *contentReader) content(ref v1alpha1.PortalContentRef, item string) ([]byte, error) {
	cm, ok := r.read[ref.ConfigMap]
	if !ok {
		cm = &corev1.ConfigMap{}
		if err := r.reader.Get(r.ctx, client.ObjectKey{Namespace: r.namespace, Name: ref.ConfigMap}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, engine.Waiting(v1alpha1.ReasonDocumentNotFound, "waiting for ConfigMap %q, which holds the content of %s", ref.ConfigMap, item)
			}
			return nil, err
		}
		r.read[ref.ConfigMap] = cm
	}
	if v, ok := cm.Data[ref.Key]; ok {
		return []byte(v), nil
	}
	if v, ok := cm.BinaryData[ref.Key]; ok {
		return v, nil
	}
	return nil, engine.Waiting(v1alpha1.ReasonDocumentNotFound, "ConfigMap %q has no key %q (the content of %s)", ref.ConfigMap, ref.Key, item)
}

// builtinPartials are the names of porta's built-in partials, which no partial of the spec may take
// (porta: "reserved for internal use", app/models/cms/partial.rb:4-12, builtin.rb:164-176), with the
// names of its legal terms.
var builtinPartials = []string{"field", "shared/pagination", "shared/swagger_ui", "submenu", "menu_item", "users_menu", "login/sso",
	"signup/cas", "messages/menu", "stats/chart", "applications/form", "signup_licence", "service_subscription_licence", "new_application_licence"}

// validSpec checks what porta would refuse and the spec alone tells (Validate's): a section that is its
// own ancestor or is root, a partial with a reserved name, two pages or two sections whose names porta
// would derive alike.
func validSpec(spec v1alpha1.DeveloperPortalSpec) error {
	if _, err := orderedSections(spec.Sections); err != nil {
		return err
	}
	for _, pt := range spec.Partials {
		if slices.Contains(builtinPartials, pt.SystemName) {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "partial %q has the name of a built-in partial, which porta reserves: override it in spec.builtinPartials instead", pt.SystemName)
		}
	}
	return uniqueDerivedNames(spec)
}

// desired reads the spec's contents and checks what porta would refuse that they tell: a main_layout
// without {% content %}. What the spec alone tells is validSpec's; a page or file in a section, or a
// section under a parent, that is neither the spec's nor the tenant's is checked against the snapshot,
// in plan.
func desired(ctx context.Context, reader client.Reader, p *v1alpha1.DeveloperPortal) (Desired, error) {
	r := &contentReader{ctx: ctx, reader: reader, namespace: p.Namespace, read: map[string]*corev1.ConfigMap{}}
	spec := p.Spec
	d := Desired{Publish: spec.EffectivePublish(), Prune: slices.Clone(spec.Prune), RestoreBuiltins: spec.RestoreBuiltins}
	sections, err := orderedSections(spec.Sections) // parents first; a cycle is Validate's to refuse
	if err != nil {
		return d, err
	}
	d.Sections = sections
	text := func(ref v1alpha1.PortalContentRef, item string) (string, string, error) {
		b, err := r.content(ref, item)
		return string(b), hashOf(b), err
	}
	add := func(t Template, ref v1alpha1.PortalContentRef) error {
		var err error
		t.Content, t.Hash, err = text(ref, t.Key.String())
		d.Templates = append(d.Templates, t)
		return err
	}
	for _, l := range spec.Layouts {
		t := Template{Key: namedKey(tsclient.TemplateLayout, l.SystemName), Type: tsclient.TemplateLayout, SystemName: l.SystemName, Title: l.Title,
			Liquid: l.Liquid == nil || *l.Liquid}
		if err := add(t, l.Content); err != nil {
			return d, err
		}
		if l.SystemName == "main_layout" && !strings.Contains(d.Templates[len(d.Templates)-1].Content, "{% content %}") {
			return d, engine.Invalid(v1alpha1.ReasonInvalidSpec, "layout main_layout must hold the {%% content %%} tag (porta refuses it otherwise)")
		}
	}
	for _, pt := range spec.Partials {
		if err := add(Template{Key: namedKey(tsclient.TemplatePartial, pt.SystemName), Type: tsclient.TemplatePartial, SystemName: pt.SystemName}, pt.Content); err != nil {
			return d, err
		}
	}
	for _, b := range spec.BuiltinPartials {
		if err := add(Template{Key: namedKey(tsclient.TemplateBuiltinPartial, b.SystemName), Type: tsclient.TemplateBuiltinPartial, SystemName: b.SystemName}, b.Content); err != nil {
			return d, err
		}
	}
	for _, pg := range spec.Pages {
		contentType := pg.ContentType
		if contentType == "" {
			contentType = "text/html"
		}
		t := Template{Key: pageKey(pg.Path), Type: tsclient.TemplatePage, SystemName: pg.SystemName, Title: pg.Title, Path: pg.Path,
			Section: orRoot(pg.Section), Layout: pg.Layout, Handler: string(pg.Handler), ContentType: contentType, Liquid: pg.Liquid == nil || *pg.Liquid}
		if err := add(t, pg.Content); err != nil {
			return d, err
		}
	}
	for _, b := range spec.BuiltinPages {
		t := Template{Key: namedKey(tsclient.TemplateBuiltinPage, b.SystemName), Type: tsclient.TemplateBuiltinPage, SystemName: b.SystemName, Layout: b.Layout}
		if err := add(t, b.Content); err != nil {
			return d, err
		}
	}
	d.Settings = settingsParams(spec.Settings)
	for _, sp := range spec.SignInProviders {
		ref := sp.ClientSecretRef
		secret, err := kit.SecretValue(ctx, reader, p.Namespace, &ref, fmt.Sprintf("spec.signInProviders[%s].clientSecretRef", sp.Kind))
		if err != nil {
			return d, err
		}
		d.Providers = append(d.Providers, Provider{Key: signinKey(sp.Kind), Kind: sp.Kind, Name: sp.Name, ClientID: sp.ClientID, ClientSecret: secret,
			Site: sp.Site, Published: sp.Published == nil || *sp.Published, SkipSSLCertificateVerification: sp.SkipSSLCertificateVerification,
			AutoApprove: sp.AutomaticallyApproveAccounts})
	}
	for _, f := range spec.Files {
		content, err := r.content(f.Content, fileKey(f.Path).String())
		if err != nil {
			return d, err
		}
		name := path.Base(f.Path)
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		d.Files = append(d.Files, File{Key: fileKey(f.Path), Path: f.Path, Section: orRoot(f.Section), Downloadable: f.Downloadable,
			Content: content, Name: name, ContentType: ct, Hash: hashOf(content)})
	}
	return d, nil
}

// settingsParams are the settings the spec manages, nil when it manages none.
func settingsParams(s *v1alpha1.PortalSettings) *tsclient.PortalSettingsParams {
	if s == nil {
		return nil
	}
	perm := func(v v1alpha1.PortalPlanChangePermission) *string {
		if v == "" {
			return nil
		}
		s := string(v)
		return &s
	}
	return &tsclient.PortalSettingsParams{SignupsEnabled: s.SignupsEnabled, AccountApprovalRequired: s.AccountApprovalRequired,
		UserAccountAreaEnabled: s.UserAccountAreaEnabled, PublicSearch: s.PublicSearch, HideService: s.HideService,
		AccountPlansUIVisible: s.AccountPlansUIVisible, ServicePlansUIVisible: s.ServicePlansUIVisible,
		ChangeAccountPlanPermission: perm(s.ChangeAccountPlanPermission), ChangeServicePlanPermission: perm(s.ChangeServicePlanPermission)}
}

// orderedSections returns the spec's sections parents first; a section that is its own ancestor is
// invalid.
func orderedSections(in []v1alpha1.PortalSection) ([]Section, error) {
	byName := map[string]v1alpha1.PortalSection{}
	for _, s := range in {
		byName[s.SystemName] = s
	}
	var out []Section
	placed := map[string]bool{}
	var place func(s v1alpha1.PortalSection, path []string) error
	place = func(s v1alpha1.PortalSection, path []string) error {
		if placed[s.SystemName] {
			return nil
		}
		if slices.Contains(path, s.SystemName) {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "section %q is its own ancestor (%s)", s.SystemName, strings.Join(append(path, s.SystemName), " → "))
		}
		if s.SystemName == tsclient.RootSection {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "section root is the tenant's own: it cannot be listed in spec.sections")
		}
		if parent, ok := byName[orRoot(s.Parent)]; ok {
			if err := place(parent, append(path, s.SystemName)); err != nil {
				return err
			}
		}
		placed[s.SystemName] = true
		out = append(out, Section{SystemName: s.SystemName, Title: s.Title, Parent: orRoot(s.Parent), PartialPath: kit.SectionPartialPath(s.PartialPath),
			Public: s.Public == nil || *s.Public})
		return nil
	}
	for _, s := range in {
		if err := place(s, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ConfigMapRefs lists the ConfigMaps a DeveloperPortal reads its content from.
func ConfigMapRefs(p *v1alpha1.DeveloperPortal) []string {
	var out []string
	add := func(ref v1alpha1.PortalContentRef) {
		if !slices.Contains(out, ref.ConfigMap) {
			out = append(out, ref.ConfigMap)
		}
	}
	for _, l := range p.Spec.Layouts {
		add(l.Content)
	}
	for _, x := range p.Spec.Partials {
		add(x.Content)
	}
	for _, x := range p.Spec.Pages {
		add(x.Content)
	}
	for _, x := range p.Spec.BuiltinPages {
		add(x.Content)
	}
	for _, x := range p.Spec.BuiltinPartials {
		add(x.Content)
	}
	for _, x := range p.Spec.Files {
		add(x.Content)
	}
	return out
}

// describe names an item for messages: its key.
func describe(key itemKey) string { return fmt.Sprintf("%q", key.String()) }

// notParam is what porta's parameterize turns into '-'.
var notParam = regexp.MustCompile(`[^a-z0-9_]+`)

// parameterize is porta's String#parameterize, near enough to tell two titles that give one name.
func parameterize(title string) string {
	return strings.Trim(notParam.ReplaceAllString(strings.ToLower(title), "-"), "-")
}

// uniqueDerivedNames refuses, before any write, what porta would refuse half-way: two pages without a
// system name whose titles give the same one (porta derives it from the title, unique per type), and
// two sections of one parent with the same title.
func uniqueDerivedNames(spec v1alpha1.DeveloperPortalSpec) error {
	pages := map[string]string{}
	for _, pg := range spec.Pages {
		name := pg.SystemName
		if name == "" {
			name = parameterize(pg.Title)
		}
		if other, taken := pages[name]; taken {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "pages %s and %s would have the same system name %q (porta derives it from the title): give one a systemName", other, pg.Path, name)
		}
		pages[name] = pg.Path
	}
	titles := map[string]string{}
	for _, sec := range spec.Sections {
		k := orRoot(sec.Parent) + "/" + sec.Title
		if other, taken := titles[k]; taken {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "sections %q and %q have the same title %q under %q (porta refuses it)", other, sec.SystemName, sec.Title, orRoot(sec.Parent))
		}
		titles[k] = sec.SystemName
	}
	return nil
}
