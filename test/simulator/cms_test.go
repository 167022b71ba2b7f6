package simulator

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	cmsSections  = "/admin/api/cms/sections"
	cmsTemplates = "/admin/api/cms/templates"
	cmsFiles     = "/admin/api/cms/files"
)

// keysOf are an object's keys, sorted.
func keysOf(obj any) []string {
	m, _ := obj.(map[string]any)
	keys := []string{}
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// collection is the items of a CMS list and its metadata (nil when absent).
func collection(t *testing.T, res result) ([]map[string]any, any) {
	t.Helper()
	m, _ := res.body.(map[string]any)
	items, found := m["collection"].([]any)
	if res.code != 200 || !found {
		t.Fatalf("not a collection: %d %s", res.code, res.raw)
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		out = append(out, it.(map[string]any))
	}
	return out, m["metadata"]
}

// findItem is the first item whose key has the value.
func findItem(items []map[string]any, key string, v any) map[string]any {
	for _, it := range items {
		if it[key] == v {
			return it
		}
	}
	return nil
}

func idOf(obj any) int64 { id, _ := obj.(map[string]any)["id"].(float64); return int64(id) }

// all lists every object of a CMS collection (per_page 100).
func (h *harness) all(base string, query string) []map[string]any {
	h.t.Helper()
	items, _ := collection(h.t, h.send("GET", base+".json?per_page=100&"+query, nil))
	return items
}

// upload is a file part of a multipart request.
type upload struct{ field, name, contentType, content string }

// sendMultipart sends a multipart/form-data request, as a client uploads a CMS file.
func (h *harness) sendMultipart(method, p string, fields url.Values, files ...upload) result {
	h.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	for _, f := range files {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.name+`"`)
		if f.contentType != "" {
			hdr.Set("Content-Type", f.contentType)
		}
		part, _ := w.CreatePart(hdr)
		_, _ = part.Write([]byte(f.content))
	}
	_ = w.Close()
	req, err := http.NewRequest(method, h.url+p, &buf)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.SetBasicAuth("", "tok")
	return h.roundTrip(req)
}

// TestCMSSeed: every tenant starts with porta's default portal; lists are {"collection":[...]} with
// "metadata" only when paged, 20 a page by default and 100 at most.
func TestCMSSeed(t *testing.T) {
	h := newHarness(t)
	for kind, want := range map[string]int{KindCMSSections: 24, KindCMSTemplates: 59, KindCMSFiles: 8} {
		if n := h.sim.Count("other", kind); n != want {
			t.Errorf("%s: %d, want %d", kind, n, want)
		}
	}
	items, meta := collection(t, h.send("GET", cmsTemplates+".json", nil))
	if diff := cmp.Diff(map[string]any{"per_page": 20.0, "total_entries": 59.0, "total_pages": 3.0, "current_page": 1.0}, meta); len(items) != 20 || diff != "" {
		t.Errorf("first page: %d items, metadata (-want +got):\n%s", len(items), diff)
	}
	for i := 1; i < len(items); i++ {
		if idOf(items[i-1]) >= idOf(items[i]) {
			t.Errorf("not in id order: %v", items)
		}
	}
	if items, meta := collection(t, h.send("GET", cmsTemplates+".json?page=3", nil)); len(items) != 19 || meta.(map[string]any)["current_page"] != 3.0 {
		t.Errorf("page 3: %d items, %v", len(items), meta)
	}
	if items, meta := collection(t, h.send("GET", cmsTemplates+".json?per_page=500", nil)); len(items) != 59 || meta != nil {
		t.Errorf("per_page 500 is 100: %d items, metadata %v", len(items), meta)
	}
	if items, _ := collection(t, h.send("GET", cmsTemplates+".json?page=9", nil)); len(items) != 0 {
		t.Errorf("past the end: %d items", len(items))
	}
	if _, meta := collection(t, h.send("GET", cmsFiles+".json", nil)); meta != nil {
		t.Errorf("8 files fit a page, yet metadata %v", meta)
	}
	if res := h.send("GET", cmsTemplates+".json?per_page=2&page=2", nil); !strings.HasPrefix(res.raw, `{"collection":[{"`) ||
		!strings.Contains(res.raw, `"metadata":{"current_page":2,"per_page":2,"total_entries":59,"total_pages":30}`) {
		t.Errorf("list JSON: %s", res.raw)
	}

	templates := h.all(cmsTemplates, "content=true")
	root := h.send("GET", cmsSections+"/root.json", nil)
	if diff := cmp.Diff(map[string]any{"title": "Root", "system_name": "root", "public": true, "parent_id": nil, "partial_path": "/"},
		fields(root.body, "", "title", "system_name", "public", "parent_id", "partial_path")); diff != "" {
		t.Errorf("root by system name (-want +got):\n%s", diff)
	}
	home, layout := findItem(templates, "path", "/"), findItem(templates, "system_name", "main_layout")
	if diff := cmp.Diff(map[string]any{"type": "page", "title": "Homepage", "system_name": "homepage", "layout_id": float64(idOf(layout)),
		"section_id": float64(idOf(root.body)), "hidden": false, "draft": nil, "published": "<h1>Homepage</h1>", "liquid_enabled": true},
		fields(home, "", "type", "title", "system_name", "layout_id", "section_id", "hidden", "draft", "published", "liquid_enabled")); diff != "" {
		t.Errorf("homepage (-want +got):\n%s", diff)
	}
	if !strings.Contains(layout["published"].(string), "{% content %}") {
		t.Errorf("main_layout without the content tag: %v", layout)
	}
	notFound := findItem(templates, "system_name", "errors/not_found")
	errorLayout := findItem(templates, "system_name", "error")
	if diff := cmp.Diff(map[string]any{"type": "builtin_page", "title": "Not found", "layout_id": float64(idOf(errorLayout))},
		fields(notFound, "", "type", "title", "layout_id")); diff != "" {
		t.Errorf("errors/not_found (-want +got):\n%s", diff)
	}
	// The keys of each type (page_representer.rb, layout_representer.rb, partial_representer.rb).
	common := []string{"created_at", "id", "type", "updated_at"}
	withKeys := func(extra ...string) []string {
		k := append(append(extra, common...), "draft", "published")
		sort.Strings(k)
		return k
	}
	for _, tc := range []struct {
		obj  map[string]any
		want []string
	}{
		{home, withKeys("title", "system_name", "layout_id", "section_id", "path", "content_type", "liquid_enabled", "hidden")},
		{notFound, withKeys("title", "system_name", "layout_id")},
		{layout, withKeys("title", "system_name", "liquid_enabled")},
		{findItem(templates, "system_name", "analytics"), withKeys("system_name")},
		{findItem(templates, "system_name", "shared/pagination"), withKeys("system_name")},
	} {
		if diff := cmp.Diff(tc.want, keysOf(tc.obj)); diff != "" {
			t.Errorf("keys of %v (-want +got):\n%s", tc.obj["system_name"], diff)
		}
	}
	if diff := cmp.Diff([]string{"created_at", "id", "parent_id", "partial_path", "public", "system_name", "title", "updated_at"}, keysOf(root.body)); diff != "" {
		t.Errorf("section keys (-want +got):\n%s", diff)
	}
	short, _ := collection(t, h.send("GET", cmsTemplates+".json?type=partial", nil))
	if len(short) != 1 || keysOf(short[0])[0] != "created_at" || short[0]["draft"] != nil || len(keysOf(short[0])) != 5 {
		t.Errorf("partials, short: %v", short)
	}
	if n := len(h.all(cmsTemplates, "type=builtin_page")); n != 35 {
		t.Errorf("%d built-in pages, want 35", n)
	}
	css := findItem(h.all(cmsSections, ""), "system_name", "css")
	if n := len(h.all(cmsTemplates, path("section_id=%d", idOf(css)))); n != 3 {
		t.Errorf("%d templates in section css, want 3", n)
	}
	messages := findItem(h.all(cmsSections, ""), "system_name", "messages")
	if n := len(h.all(cmsSections, path("parent_id=%d", idOf(messages)))); n != 3 {
		t.Errorf("%d sections under messages, want 3", n)
	}
	favicon := findItem(h.all(cmsFiles, ""), "path", "/favicon.ico")
	if diff := cmp.Diff([]string{"content_type", "created_at", "downloadable", "id", "path", "section_id", "title", "updated_at", "url"}, keysOf(favicon)); diff != "" {
		t.Errorf("file keys (-want +got):\n%s", diff)
	}
}

// TestCMSTemplates: creation, update, publishing and deletion of templates, and porta's refusals.
func TestCMSTemplates(t *testing.T) {
	h := newHarness(t)
	res := h.check("create a page", "POST", cmsTemplates+".json", url.Values{"type": {"page"}, "title": {"About us"}, "path": {"/about/"},
		"draft": {"<p>{{ provider.name }}</p>"}, "liquid_enabled": {"true"}, "layout_name": {"main_layout"}}, 201, "")
	page := res.body.(map[string]any)
	root := idOf(h.send("GET", cmsSections+"/root.json", nil).body)
	layout := h.sim.Objects("acme", KindCMSTemplates)[0]
	if diff := cmp.Diff(map[string]any{"type": "page", "system_name": "about-us", "path": "/about", "section_id": float64(root),
		"layout_id": float64(layout["id"].(int64)), "content_type": "text/html", "hidden": true, "draft": "<p>{{ provider.name }}</p>", "published": nil},
		fields(page, "", "type", "system_name", "path", "section_id", "layout_id", "content_type", "hidden", "draft", "published")); diff != "" {
		t.Errorf("created page (-want +got):\n%s", diff)
	}
	if _, wrapped := page["template"]; wrapped || page["handler"] != nil {
		t.Errorf("a root key or a nil handler: %v", page)
	}
	p := path("%s/%d.json", cmsTemplates, idOf(page))

	builtin := findItem(h.all(cmsTemplates, "type=builtin_page"), "system_name", "dashboards/show")
	partial := findItem(h.all(cmsTemplates, "type=builtin_partial"), "system_name", "field")
	mainLayout := findItem(h.all(cmsTemplates, "type=layout"), "system_name", "main_layout")
	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantRaw            string
	}{
		{"unknown type", "POST", cmsTemplates + ".json", url.Values{"type": {"Page"}, "title": {"X"}}, 422, `{"error":"Unknown template type 'Page'"}`},
		{"built-ins are not created", "POST", cmsTemplates + ".json", url.Values{"type": {"builtin-page"}, "draft": {"x"}}, 422,
			`{"error":"Unknown template type 'builtin-page'"}`},
		{"no type", "POST", cmsTemplates + ".json", url.Values{"title": {"X"}}, 422, `{"error":"Unknown template type ''"}`},
		{"nothing wrapped", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}}, 400, "Required parameter missing: template"},
		{"published is not a parameter", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"X"}, "published": {"x"}, "foo": {"1"}}, 422,
			`{"error":"Unpermitted parameters: [\"foo\", \"published\"]"}`},
		{"path without a slash", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Rel"}, "path": {"invalid-path/"}}, 422,
			`{"errors":{"path":["needs to start with a slash ( / )"]}}`},
		{"path taken", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Docs 2"}, "path": {"/docs"}}, 422,
			`{"errors":{"path":["has already been taken"]}}`},
		// CMS::Page::RESERVED_PATHS (app/models/cms/page.rb:3-5,25) have no leading slash.
		{"a reserved path", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Terms"}, "path": {"terms"}}, 422,
			`{"errors":{"path":["needs to start with a slash ( / )","is reserved"]}}`},
		{"a reserved path once its trailing slashes are stripped (page.rb:18,102-106)", "POST", cmsTemplates + ".json",
			url.Values{"type": {"page"}, "title": {"Privacy"}, "path": {"privacy.html//"}}, 422,
			`{"errors":{"path":["needs to start with a slash ( / )","is reserved"]}}`},
		{"reserved is case-sensitive", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Refunds"}, "path": {"Refunds.htm"}}, 422,
			`{"errors":{"path":["needs to start with a slash ( / )"]}}`},
		{"verify_path_format's error comes first (page.rb:19)", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Bad"},
			"path": {"terms page"}}, 422, `{"errors":{"path":["was invalid. Please verify it and save again","needs to start with a slash ( / )"]}}`},
		{"/terms is not reserved", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Terms"}, "path": {"/terms"}}, 201, ""},
		{"no title, no path", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "system_name": {"p1"}}, 422,
			`{"errors":{"path":["can't be blank","needs to start with a slash ( / )"],"title":["can't be blank"]}}`},
		{"unknown section", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"S"}, "path": {"/s"}, "section_name": {"nope"}}, 422,
			`{"error":"Unknown section: 'nope'"}`},
		{"unknown layout", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"S"}, "path": {"/s"}, "layout_id": {"999999"}}, 422,
			`{"error":"Unknown layout: '999999'"}`},
		{"liquid syntax", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Liquid"}, "path": {"/l"}, "liquid_enabled": {"1"},
			"draft": {"{% if x "}}, 422, `{"errors":{"draft":["Liquid syntax error: Tag '{%' was not properly terminated with regexp: /\\%\\}/"]}}`},
		// template.rb:27-28's format; its message is activerecord.errors.messages.invalid (en.yml:1957).
		{"a one-letter title makes a malformed system name", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"X"}, "path": {"/x"}}, 422,
			`{"errors":{"system_name":["invalid"]}}`},
		{"a malformed partial name", "POST", cmsTemplates + ".json", url.Values{"type": {"partial"}, "system_name": {"my partial"}}, 422,
			`{"errors":{"system_name":["invalid"]}}`},
		{"a partial name starting with a dash", "POST", cmsTemplates + ".json", url.Values{"type": {"partial"}, "system_name": {"-menu"}}, 422,
			`{"errors":{"system_name":["invalid"]}}`},
		{"a one-letter partial name", "POST", cmsTemplates + ".json", url.Values{"type": {"partial"}, "system_name": {"m"}}, 422,
			`{"errors":{"system_name":["invalid"]}}`},
		{"a malformed layout name", "POST", cmsTemplates + ".json", url.Values{"type": {"layout"}, "system_name": {"main.layout"}}, 422,
			`{"errors":{"system_name":["invalid"]}}`},
		{"handler", "POST", cmsTemplates + ".json", url.Values{"type": {"page"}, "title": {"Handler"}, "path": {"/h"}, "handler": {"html"}}, 422,
			`{"errors":{"handler":["is not included in the list"]}}`},
		{"reserved partial name", "POST", cmsTemplates + ".json", url.Values{"type": {"partial"}, "system_name": {"submenu"}}, 422,
			`{"errors":{"system_name":["reserved for internal use"]}}`},
		{"layout without name", "POST", cmsTemplates + ".json", url.Values{"type": {"layout"}, "title": {"T"}}, 422,
			`{"errors":{"system_name":["can't be blank"]}}`},
		{"main_layout needs the content tag", "PUT", path("%s/%d.json", cmsTemplates, idOf(mainLayout)), url.Values{"draft": {"<body></body>"}}, 422,
			`{"errors":{"draft":["must contain '{\u0026#37; content \u0026#37;}' tag"]}}`},
		{"built-in page", "DELETE", path("%s/%d.json", cmsTemplates, idOf(builtin)), nil, 422, `{"error":"Built-in resources can't be deleted"}`},
		{"built-in partial", "DELETE", path("%s/%d.json", cmsTemplates, idOf(partial)), nil, 422, `{"error":"Built-in resources can't be deleted"}`},
		{"a layout in use is kept, answered 200", "DELETE", path("%s/%d.json", cmsTemplates, idOf(mainLayout)), nil, 200, ""},
		{"unknown", "GET", cmsTemplates + "/999999.json", nil, 404, `{"status":"Not found"}`},
		{"a name is no id", "GET", cmsTemplates + "/homepage.json", nil, 404, `{"status":"Not found"}`},
		{"only layout_name", "PUT", p, url.Values{"layout_name": {"error"}}, 400, "Required parameter missing: template"},
	}
	for _, tc := range cases {
		h.check(tc.name, tc.method, tc.path, tc.form, tc.wantCode, tc.wantRaw)
	}
	if h.send("GET", path("%s/%d.json", cmsTemplates, idOf(mainLayout)), nil).code != 200 {
		t.Errorf("main_layout deleted while pages use it")
	}

	// A partial: its own keys, a draft not checked as Liquid (liquid_enabled is no partial's parameter).
	res = h.check("partial", "POST", cmsTemplates+".json", url.Values{"type": {"partial"}, "system_name": {"footer"}, "draft": {"{{ oops"},
		"title": {"dropped"}}, 201, "")
	if _, has := res.body.(map[string]any)["title"]; has {
		t.Errorf("a partial with a title: %s", res.raw)
	}

	// Update writes the draft only; publish moves it to published.
	h.check("publish", "PUT", p[:len(p)-len(".json")]+"/publish.json", nil, 200, "")
	res = h.check("update", "PUT", p, url.Values{"draft": {"<p>v2</p>"}, "title": {"About"}, "layout_id": {""}}, 200, "")
	if diff := cmp.Diff(map[string]any{"title": "About", "system_name": "about-us", "draft": "<p>v2</p>", "published": "<p>{{ provider.name }}</p>",
		"hidden": false, "layout_id": nil}, fields(res.body, "", "title", "system_name", "draft", "published", "hidden", "layout_id")); diff != "" {
		t.Errorf("updated (-want +got):\n%s", diff)
	}
	if res.body.(map[string]any)["updated_at"] == "" {
		t.Errorf("no updated_at: %s", res.raw)
	}
	res = h.check("publish", "PUT", p[:len(p)-len(".json")]+"/publish.json", nil, 200, "")
	if diff := cmp.Diff(map[string]any{"draft": nil, "published": "<p>v2</p>"}, fields(res.body, "", "draft", "published")); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	res = h.check("publish without a draft", "PUT", p[:len(p)-len(".json")]+"/publish.json", nil, 200, "")
	if diff := cmp.Diff(map[string]any{"draft": nil, "published": "<p>v2</p>"}, fields(res.body, "", "draft", "published")); diff != "" {
		t.Errorf("published again (-want +got):\n%s", diff)
	}
	// A built-in page takes a draft, not a path (dropped silently).
	res = h.check("built-in draft", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtin)), url.Values{"draft": {"<h1>Mine</h1>"}, "path": {"/x"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"draft": "<h1>Mine</h1>", "path": nil}, fields(res.body, "", "draft", "path")); diff != "" {
		t.Errorf("built-in page (-want +got):\n%s", diff)
	}
	// JSON bodies, wrapped or not.
	res = h.sendJSON("POST", cmsTemplates+".json", `{"type":"layout","template":{"system_name":"alt","draft":"{% content %}","liquid_enabled":true}}`)
	if res.code != 201 || fields(res.body, "", "liquid_enabled")["liquid_enabled"] != true {
		t.Errorf("JSON create: %d %s", res.code, res.raw)
	}
	h.check("an unused layout goes", "DELETE", path("%s/%d.json", cmsTemplates, idOf(res.body)), nil, 200, "")
	h.check("gone", "GET", path("%s/%d.json", cmsTemplates, idOf(res.body)), nil, 404, `{"status":"Not found"}`)
	if n := h.sim.Count("acme", KindCMSTemplates); n != 62 {
		t.Errorf("%d templates, want 62", n)
	}
}

// TestCMSLiquidDrafts: a layout with liquid_enabled, a built-in page and a built-in partial are
// refused a draft whose Liquid does not parse (check_liquid_syntax, app/models/cms/template.rb:36,178-189):
// a built-in's liquid_enabled? is always true (app/models/cms/builtin.rb:58-60,146-148), a layout's is
// its column (NULL unless sent, db/schema.rb cms_templates). The one check is liquidSyntaxError.
func TestCMSLiquidDrafts(t *testing.T) {
	h := newHarness(t)
	builtinPage := findItem(h.all(cmsTemplates, "type=builtin_page"), "system_name", "dashboards/show")
	builtinPartial := findItem(h.all(cmsTemplates, "type=builtin_partial"), "system_name", "submenu")
	mainLayout := findItem(h.all(cmsTemplates, "type=layout"), "system_name", "main_layout")
	layout := idOf(h.check("a liquid layout", "POST", cmsTemplates+".json", url.Values{"type": {"layout"}, "system_name": {"liquid"},
		"liquid_enabled": {"true"}, "draft": {"{% if x %}{% content %}{% endif %}"}}, 201, "").body)
	const (
		neverClosed = `{"errors":{"draft":["Liquid syntax error: 'if' tag was never closed"]}}`
		unknownTag  = `{"errors":{"draft":["Liquid syntax error: Unknown tag 'foo'"]}}`
		openTag     = `{"errors":{"draft":["Liquid syntax error: Tag '{%' was not properly terminated with regexp: /\\%\\}/"]}}`
	)
	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantRaw            string
	}{
		{"layout created with an unclosed block", "POST", cmsTemplates + ".json", url.Values{"type": {"layout"}, "system_name": {"broken"},
			"liquid_enabled": {"1"}, "draft": {"{% if x %}"}}, 422, neverClosed},
		{"layout updated with an unknown tag", "PUT", path("%s/%d.json", cmsTemplates, layout), url.Values{"draft": {"{% foo %}"}}, 422, unknownTag},
		{"layout updated with a tag left open", "PUT", path("%s/%d.json", cmsTemplates, layout), url.Values{"draft": {"{% if x "}}, 422, openTag},
		{"main_layout: the syntax error, then the missing content tag (layout.rb:6,37-45)", "PUT", path("%s/%d.json", cmsTemplates, idOf(mainLayout)),
			url.Values{"draft": {"{% if x %}"}}, 422,
			`{"errors":{"draft":["Liquid syntax error: 'if' tag was never closed","must contain '{\u0026#37; content \u0026#37;}' tag"]}}`},
		{"built-in page: an unclosed block", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtinPage)), url.Values{"draft": {"<h1>{% if x %}</h1>"}}, 422, neverClosed},
		{"built-in page: an unknown tag", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtinPage)), url.Values{"draft": {"{% foo %}"}}, 422, unknownTag},
		{"built-in page: liquid_enabled is none of its parameters", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtinPage)),
			url.Values{"draft": {"{% foo %}"}, "liquid_enabled": {"false"}}, 422, unknownTag},
		{"built-in partial", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtinPartial)), url.Values{"draft": {"{% foo %}"}}, 422, unknownTag},
		{"a layout without liquid_enabled is not checked", "POST", cmsTemplates + ".json", url.Values{"type": {"layout"}, "system_name": {"plain"},
			"draft": {"{% if x %}"}}, 201, ""},
		{"nor one with liquid_enabled false", "PUT", path("%s/%d.json", cmsTemplates, layout), url.Values{"draft": {"{% foo %}"}, "liquid_enabled": {"0"}}, 200, ""},
		{"a built-in page with porta's tags", "PUT", path("%s/%d.json", cmsTemplates, idOf(builtinPage)),
			url.Values{"draft": {"{% content_for title %}Hi{% endcontent_for %}{% include 'submenu' %}{% form 'signup', user %}{% endform %}"}}, 200, ""},
	}
	for _, tc := range cases {
		h.check(tc.name, tc.method, tc.path, tc.form, tc.wantCode, tc.wantRaw)
	}
	if got := fields(h.send("GET", path("%s/%d.json", cmsTemplates, idOf(builtinPartial)), nil).body, "", "draft")["draft"]; got != nil {
		t.Errorf("a refused draft was kept: %v", got)
	}
}

// sendJSON sends a JSON body.
func (h *harness) sendJSON(method, p, body string) result {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+p, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("", "tok")
	return h.roundTrip(req)
}

// TestCMSSections: sections by id or system name; deleting one moves its content to its parent.
func TestCMSSections(t *testing.T) {
	h := newHarness(t)
	res := h.check("create", "POST", cmsSections+".json", url.Values{"title": {"Guides"}, "parent_id": {"999999"}}, 201, "")
	root := idOf(h.send("GET", cmsSections+"/root.json", nil).body)
	if diff := cmp.Diff(map[string]any{"title": "Guides", "system_name": "guides", "partial_path": "guides", "public": true, "parent_id": float64(root)},
		fields(res.body, "", "title", "system_name", "partial_path", "public", "parent_id")); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	guides := idOf(res.body)
	sub := idOf(h.check("a child", "POST", cmsSections+".json", url.Values{"title": {"Sub"}, "parent_id": {itoa(guides)}, "public": {"false"}}, 201, "").body)
	pageID := idOf(h.check("a page in it", "POST", cmsTemplates+".json", url.Values{"type": {"page"}, "title": {"Guide"}, "path": {"/g"},
		"section_id": {itoa(guides)}}, 201, "").body)
	fileID := idOf(h.sendMultipart("POST", cmsFiles+".json", url.Values{"path": {"g.txt"}, "section_id": {itoa(guides)}},
		upload{"attachment", "g.txt", "text/plain", "hello"}).body)

	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantRaw            string
	}{
		{"title taken under the parent", "POST", cmsSections + ".json", url.Values{"title": {"Guides"}, "system_name": {"guides2"}}, 422,
			`{"errors":{"title":["has already been taken"]}}`},
		{"no title", "POST", cmsSections + ".json", url.Values{"public": {"true"}}, 422, `{"errors":{"system_name":["can't be blank"],"title":["can't be blank"]}}`},
		{"nothing", "POST", cmsSections + ".json", url.Values{}, 400, "Required parameter missing: section"},
		{"unknown parent on update", "PUT", cmsSections + "/guides.json", url.Values{"parent_id": {"999999"}}, 422,
			`{"errors":{"parent_id":["must belong to the same provider"]}}`},
		{"own ancestor", "PUT", cmsSections + "/guides.json", url.Values{"parent_id": {itoa(sub)}}, 422, `{"errors":{"base":["cannot be it's own ancestor"]}}`},
		{"type is not a section's", "GET", cmsSections + ".json?type=page", nil, 422, `{"error":"Unpermitted parameters: [\"type\"]"}`},
		{"root", "DELETE", cmsSections + "/root.json", nil, 422, `{"error":"Built-in resources can't be deleted"}`},
		{"built-in", "DELETE", cmsSections + "/errors.json", nil, 422, `{"error":"Built-in resources can't be deleted"}`},
		{"unknown", "GET", cmsSections + "/nope.json", nil, 404, `{"status":"Not found"}`},
		{"delete", "DELETE", cmsSections + "/guides.json", nil, 200, ""},
	}
	for _, tc := range cases {
		h.check(tc.name, tc.method, tc.path, tc.form, tc.wantCode, tc.wantRaw)
	}
	for name, got := range map[string]any{
		"page":    fields(h.send("GET", path("%s/%d.json", cmsTemplates, pageID), nil).body, "", "section_id")["section_id"],
		"file":    fields(h.send("GET", path("%s/%d.json", cmsFiles, fileID), nil).body, "", "section_id")["section_id"],
		"section": fields(h.send("GET", path("%s/%d.json", cmsSections, sub), nil).body, "", "parent_id")["parent_id"],
	} {
		if got != float64(root) {
			t.Errorf("the %s's section after its section's deletion: %v, want root %d", name, got, root)
		}
	}
}

// TestCMSSectionPartialPath: porta keeps a section's partial_path as sent, but for a run of leading
// slashes, made one before the save (strip_trailing_slashes, despite its name: porta
// app/models/cms/section.rb:50,200-202, `self.partial_path.to_s.gsub!(/^\/+/,"/")`); no slash is added
// and trailing ones stay. A blank one on create is the title parameterized (set_partial_path,
// section.rb:38,168-172).
func TestCMSSectionPartialPath(t *testing.T) {
	h := newHarness(t)
	for i, tc := range []struct{ sent, want string }{
		{"//docs", "/docs"},
		{"///api//v1/", "/api//v1/"},
		{"docs/", "docs/"},
		{"/docs", "/docs"},
		{"", "section-4"},
	} {
		title := "Section " + itoa(int64(i))
		res := h.send("POST", cmsSections+".json", url.Values{"title": {title}, "partial_path": {tc.sent}})
		if got := fields(res.body, "", "partial_path")["partial_path"]; res.code != 201 || got != tc.want {
			t.Errorf("created with %q: %d %s, want partial_path %q", tc.sent, res.code, res.raw, tc.want)
			continue
		}
		id := idOf(res.body)
		if got := fields(h.send("GET", path("%s/%d.json", cmsSections, id), nil).body, "", "partial_path")["partial_path"]; got != tc.want {
			t.Errorf("%q read back: %v, want %q", tc.sent, got, tc.want)
		}
	}
	res := h.check("update", "PUT", cmsSections+"/section-2.json", url.Values{"partial_path": {"////guides"}}, 200, "")
	if got := fields(res.body, "", "partial_path")["partial_path"]; got != "/guides" {
		t.Errorf("updated with ////guides: %v, want /guides", got)
	}
}

// TestCMSFiles: multipart create and update; the url serves the bytes.
func TestCMSFiles(t *testing.T) {
	h := newHarness(t)
	res := h.sendMultipart("POST", cmsFiles+".json", url.Values{"path": {"docs/spec.yaml"}, "downloadable": {"1"}, "section_id": {"999999"}},
		upload{"attachment", "spec.yaml", "application/yaml", "openapi: 3.0.3\n"})
	root := idOf(h.send("GET", cmsSections+"/root.json", nil).body)
	if diff := cmp.Diff(map[string]any{"path": "/docs/spec.yaml", "title": "spec.yaml", "content_type": "application/yaml", "downloadable": true,
		"section_id": float64(root)}, fields(res.body, "", "path", "title", "content_type", "downloadable", "section_id")); res.code != 201 || diff != "" {
		t.Fatalf("created %d %s (-want +got):\n%s", res.code, res.raw, diff)
	}
	id := idOf(res.body)
	read := func(u string) result {
		resp, err := http.Get(h.url + u) // no token
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return result{code: resp.StatusCode, raw: b.String(), hdr: resp.Header}
	}
	u := res.body.(map[string]any)["url"].(string)
	if got := read(u); got.code != 200 || got.raw != "openapi: 3.0.3\n" || got.hdr.Get("Content-Type") != "application/yaml" ||
		!strings.HasPrefix(got.hdr.Get("Content-Disposition"), "attachment") {
		t.Errorf("GET %s: %d %q %v", u, got.code, got.raw, got.hdr)
	}
	if got := read("/t/acme" + u); got.code != 200 {
		t.Errorf("GET /t/acme%s: %d", u, got.code)
	}
	if got := read(strings.Replace(u, "spec-", "spec-x", 1)); got.code != 404 {
		t.Errorf("a wrong secret: %d", got.code)
	}

	res = h.sendMultipart("PUT", path("%s/%d.json", cmsFiles, id), nil, upload{"file[attachment]", "logo.png", "", "\x89PNG"})
	if diff := cmp.Diff(map[string]any{"path": "/docs/spec.yaml", "title": "logo.png", "content_type": "image/png"},
		fields(res.body, "", "path", "title", "content_type")); res.code != 200 || diff != "" {
		t.Errorf("updated %d %s (-want +got):\n%s", res.code, res.raw, diff)
	}
	if got := read(res.body.(map[string]any)["url"].(string)); got.raw != "\x89PNG" {
		t.Errorf("new content: %q", got.raw)
	}
	if objs := h.sim.Objects("acme", KindCMSFiles); objs[len(objs)-1]["size"] != 4 {
		t.Errorf("dump: %v", objs[len(objs)-1])
	}
	for _, tc := range []struct {
		name     string
		res      result
		wantCode int
		wantRaw  string
	}{
		{"nothing", h.sendMultipart("POST", cmsFiles+".json", url.Values{"downloadable": {"0"}}), 422,
			`{"errors":{"attachment":["can't be blank"],"path":["can't be blank"]}}`},
		{"path taken", h.sendMultipart("POST", cmsFiles+".json", url.Values{"path": {"/favicon.ico"}}, upload{"attachment", "f.ico", "", "x"}), 422,
			`{"errors":{"path":["has already been taken"]}}`},
		{"unknown section on update", h.sendMultipart("PUT", path("%s/%d.json", cmsFiles, id), url.Values{"section_id": {"999999"}}), 422,
			`{"errors":{"section_id":["must belong to the same provider"]}}`},
		{"unpermitted", h.sendMultipart("PUT", path("%s/%d.json", cmsFiles, id), url.Values{"title": {"x"}}), 422,
			`{"error":"Unpermitted parameters: [\"title\"]"}`},
		{"delete", h.send("DELETE", path("%s/%d.json", cmsFiles, id), nil), 200, ""},
		{"deleted", h.send("GET", path("%s/%d.json", cmsFiles, id), nil), 404, `{"status":"Not found"}`},
	} {
		if tc.res.code != tc.wantCode || tc.res.raw != tc.wantRaw {
			t.Errorf("%s: %d %s, want %d %s", tc.name, tc.res.code, tc.res.raw, tc.wantCode, tc.wantRaw)
		}
	}
	if got := read(u); got.code != 404 {
		t.Errorf("a deleted file's url: %d", got.code)
	}
	if w := h.sim.Writes("acme"); len(w) == 0 || w[0] != (CallKey{Tenant: "acme", Method: "POST", Endpoint: cmsFiles + ".json", Code: 201}) {
		t.Errorf("writes: %v", w)
	}
}

// TestCMSXML: the CMS API answers .xml 406 (ensure_json_request, porta
// app/controllers/admin/api/cms/base_controller.rb:8,25-27; rescued by application_controller.rb:54-57
// with render_error, :184-207, in XML), after authentication and forbid_extra_params (base_controller.rb:6).
func TestCMSXML(t *testing.T) {
	h := newHarness(t)
	const notAcceptable = `<?xml version="1.0" encoding="UTF-8"?><error>The server does not understand "xml" request.</error>`
	for _, tc := range []struct {
		method, path string
		form         url.Values
		wantCode     int
		wantRaw      string
	}{
		{"GET", cmsSections + ".xml", nil, 406, notAcceptable},
		{"GET", cmsSections + "/root.xml", nil, 406, notAcceptable},
		{"POST", cmsSections + ".xml", url.Values{"title": {"X"}}, 406, notAcceptable},
		{"GET", cmsTemplates + ".xml", nil, 406, notAcceptable},
		{"GET", cmsTemplates + "/999999.xml", nil, 406, notAcceptable}, // no lookup before
		{"PUT", cmsTemplates + "/1/publish.xml", nil, 406, notAcceptable},
		{"DELETE", cmsFiles + "/1.xml", nil, 406, notAcceptable},
		{"POST", cmsFiles + ".xml", url.Values{"foo": {"1"}}, 422, `<?xml version="1.0" encoding="UTF-8"?><error>Unpermitted parameters: ["foo"]</error>`},
	} {
		res := h.send(tc.method, tc.path, tc.form)
		if res.code != tc.wantCode || res.raw != tc.wantRaw || !strings.HasPrefix(res.hdr.Get("Content-Type"), "application/xml") {
			t.Errorf("%s %s: %d %s %q, want %d %s", tc.method, tc.path, res.code, res.hdr.Get("Content-Type"), res.raw, tc.wantCode, tc.wantRaw)
		}
	}
	if n := h.sim.Count("acme", KindCMSSections); n != 24 {
		t.Errorf("%d sections after the refused POST, want 24", n)
	}
	h.sim.SetTokenScopes("tok", scopePolicyRegistry)
	if res := h.send("GET", cmsSections+".xml", nil); res.code != 403 {
		t.Errorf("a token without the cms scope: %d %s, want 403", res.code, res.raw)
	}
}

// TestCMSScopes: the CMS API takes the cms or account_management scope.
func TestCMSScopes(t *testing.T) {
	h := newHarness(t)
	h.sim.SetTokenScopes("tok", scopeCMS)
	if res := h.send("GET", cmsSections+".json", nil); res.code != 200 {
		t.Errorf("cms scope: %d %s", res.code, res.raw)
	}
	h.sim.SetTokenScopes("tok", scopePolicyRegistry)
	if res := h.send("GET", cmsSections+".json", nil); res.code != 403 {
		t.Errorf("policy_registry scope: %d %s", res.code, res.raw)
	}
}
