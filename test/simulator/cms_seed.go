package simulator

import (
	"fmt"
	slashpath "path"
	"strings"
)

// The developer portal every tenant starts with: the root section porta makes with the account
// (app/lib/logic/cms.rb:45,66-68) and what SimpleLayout#import! adds at signup (app/lib/simple_layout.rb:
// 84-98) — layouts, pages, the analytics partial, the JS and CSS pages, the images, the built-in
// partials and pages in their built-in sections. The contents are short placeholders, all published with
// no draft. Left out: the built-in pages porta adds only under a switch (applications/new,
// applications/choose_service, accounts/plan_changes/index, services/new, services/index) and the
// GitHub sign-in provider. The objects are made table by table, not in porta's interleaved order.

// seedSection is a built-in section: its title (system name: the title parameterized), partial path
// and parent's system name ("" for root).
type seedSection struct{ title, partialPath, parent string }

var seedSections = []seedSection{
	{"javascripts", "/javascripts", ""}, {"css", "/css", ""}, {"images", "/images", ""},
	{"Password", "/password", ""}, {"Login", "/login", ""}, {"Signup", "/signup", ""}, {"Messages", "/messages", ""},
	{"Outbox", "/messages/outbox", "messages"}, {"Inbox", "/messages/inbox", "messages"}, {"Trash", "/messages/trash", "messages"},
	{"Stats", "/stats", ""}, {"Applications", "/applications", ""}, {"Application Alerts", "/application/alerts", ""},
	{"Invoices", "/invoices", ""}, {"Account Plans", "/account_plans", ""}, {"Account", "/account", ""}, {"Users", "/users", ""},
	{"User", "/user", ""}, {"Search", "/search", ""}, {"Invitations", "/invitations", ""}, {"Payment Gateway", "/payment_gateway", ""},
	{"Errors", "/errors", ""}, {"Invitee signups", "/invitee_signups", ""},
}

// seedTemplate is a template of the default portal. A page's system name is its title parameterized;
// a built-in page's title is derived (builtinTitle). section and layout are system names.
type seedTemplate struct {
	kind, systemName, title, path, section, layout, contentType string
	liquid                                                      bool
}

const mainLayoutPlaceholder = "<html><body>{% content %}</body></html>"

var seedTemplates = func() []seedTemplate {
	ts := []seedTemplate{
		{kind: cmsLayout, systemName: "main_layout", title: "Main layout", liquid: true},
		{kind: cmsLayout, systemName: "error", title: "Error layout", liquid: true},
		{kind: cmsPage, title: "Homepage", path: "/", section: "root", layout: "main_layout", contentType: "text/html", liquid: true},
		{kind: cmsPage, title: "Documentation", path: "/docs", section: "root", layout: "main_layout", contentType: "text/html", liquid: true},
		{kind: cmsPartial, systemName: "analytics"},
	}
	// import_js_and_css! (simple_layout.rb:43-72): no layout, liquid off.
	for _, p := range []string{"/javascripts/3scale.js", "/javascripts/3scale_v2.js", "/javascripts/bootstrap.js",
		"/javascripts/bootstrap.min.js", "/javascripts/excanvas.compiled.js", "/css/bootstrap.css", "/css/default.css",
		"/css/plans_widget_overrides.css"} {
		section, contentType := "javascripts", "text/javascript"
		if strings.HasPrefix(p, "/css/") {
			section, contentType = "css", "text/css"
		}
		ts = append(ts, seedTemplate{kind: cmsPage, title: slashpath.Base(p), path: p, section: section, contentType: contentType})
	}
	for _, name := range builtinPartialNames {
		ts = append(ts, seedTemplate{kind: cmsBuiltinPartial, systemName: name})
	}
	// create_builtin_pages_and_partials! (simple_layout.rb:120-250), by section.
	for _, group := range []struct {
		section, layout string
		pages           []string
	}{
		{"root", "main_layout", []string{"dashboards/show"}},
		{"password", "main_layout", []string{"password/new", "password/show"}},
		{"login", "main_layout", []string{"login/new"}},
		{"signup", "main_layout", []string{"signup/show", "signup/success"}},
		{"outbox", "main_layout", []string{"messages/outbox/index", "messages/outbox/show", "messages/outbox/new"}},
		{"inbox", "main_layout", []string{"messages/inbox/index", "messages/inbox/show"}},
		{"trash", "main_layout", []string{"messages/trash/index", "messages/trash/show"}},
		{"stats", "main_layout", []string{"stats/index"}},
		{"applications", "main_layout", []string{"applications/edit", "applications/show", "applications/index"}},
		{"application-alerts", "main_layout", []string{"applications/alerts/index"}},
		{"invoices", "main_layout", []string{"invoices/index", "invoices/show"}},
		{"account-plans", "main_layout", []string{"account_plans/index"}},
		{"account", "main_layout", []string{"account/show", "account/edit"}},
		{"users", "main_layout", []string{"accounts/users/index", "accounts/users/edit"}},
		{"user", "main_layout", []string{"user/show"}},
		{"search", "main_layout", []string{"search/index"}},
		{"invitations", "main_layout", []string{"invitations/index", "invitations/new"}},
		{"payment-gateway", "main_layout", []string{"accounts/payment_gateways/edit", "accounts/payment_gateways/show"}},
		{"errors", "error", []string{"errors/not_found", "errors/internal_server_error", "errors/forbidden"}},
		{"invitee-signups", "main_layout", []string{"accounts/invitee_signups/show"}},
	} {
		for _, name := range group.pages {
			ts = append(ts, seedTemplate{kind: cmsBuiltinPage, systemName: name, section: group.section, layout: group.layout})
		}
	}
	return ts
}()

// seedFiles are import_images! (simple_layout.rb:74-82): in section images.
var seedFiles = []string{"/images/desk.jpg", "/images/mouse.jpg", "/images/notes.jpg", "/images/plant.jpg",
	"/images/powered-by-3scale.png", "/images/powered-by-3scale-dark.png", "/images/powered-by-3scale-light.png", "/favicon.ico"}

// seedCMS gives t the default portal.
func (t *tenant) seedCMS() {
	root := &cmsSection{id: t.cmsID(), title: "Root", systemName: "root", partialPath: "/", public: true, builtin: true, stamps: newStamps()}
	t.sections[root.id] = root
	for _, s := range seedSections {
		parent := root
		if s.parent != "" {
			parent = t.sectionNamed(s.parent, false)
		}
		x := &cmsSection{id: t.cmsID(), parentID: parent.id, title: s.title, systemName: parameterize(s.title), partialPath: s.partialPath,
			public: true, builtin: true, stamps: newStamps()}
		t.sections[x.id] = x
	}
	for _, s := range seedTemplates {
		content := placeholder(s)
		tp := &cmsTemplate{id: t.cmsID(), kind: s.kind, systemName: s.systemName, title: s.title, path: s.path, contentType: s.contentType,
			published: &content, stamps: newStamps()}
		if s.kind == cmsPage && tp.systemName == "" {
			tp.systemName = parameterize(s.title)
		}
		if s.liquid || s.kind == cmsLayout {
			liquid := s.liquid
			tp.liquid = &liquid
		}
		if s.section != "" {
			tp.sectionID = t.sectionNamed(s.section, false).id
		}
		if s.layout != "" {
			tp.layoutID = t.templateNamed(cmsLayout, s.layout).id
		}
		t.templates[tp.id] = tp
	}
	images := t.sectionNamed("images", false)
	for _, p := range seedFiles {
		f := &cmsFile{id: t.cmsID(), sectionID: images.id, owner: t.name, path: p, name: slashpath.Base(p), secret: randomHex(8),
			stamps: newStamps()}
		f.content, f.contentType = []byte("placeholder "+f.name), contentTypeOf("", f.name)
		t.files[f.id] = f
	}
}

// placeholder is a seeded template's content: main_layout's has the {% content %} tag it needs.
func placeholder(s seedTemplate) string {
	switch {
	case s.kind == cmsLayout:
		return mainLayoutPlaceholder
	case s.kind == cmsPage && s.contentType != "text/html":
		return fmt.Sprintf("/* %s */", s.title)
	case s.title != "":
		return fmt.Sprintf("<h1>%s</h1>", s.title)
	}
	return fmt.Sprintf("<!-- %s -->", s.systemName)
}
