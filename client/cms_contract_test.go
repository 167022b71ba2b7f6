package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/jarcoal/httpmock"
)

// porta's CMS answers, as its representers write them (app/representers/cms/): bare objects, lists
// under "collection" with "metadata" only when there is more than one page.
const (
	portaSection = `{"id":3,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z","title":"Docs","system_name":"docs",
		"public":true,"parent_id":2,"partial_path":"/docs"}`
	portaRootSection = `{"id":2,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z","title":"Root","system_name":"root",
		"public":true,"parent_id":null,"partial_path":"/"}`
	portaPage = `{"id":4,"type":"page","created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z","title":"About",
		"system_name":"about","layout_id":6,"section_id":3,"path":"/about","content_type":"text/html","liquid_enabled":true,
		"handler":"markdown","hidden":false,"draft":null,"published":"# About"}`
	portaBuiltinPage = `{"id":8,"type":"builtin_page","created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z","title":"New",
		"system_name":"login/new","layout_id":6,"draft":"<h1>Sign in</h1>","published":"<h1>Login</h1>"}`
	portaFile = `{"id":5,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z","section_id":3,"path":"/images/logo.png",
		"downloadable":false,"url":"/system/acme/2026/01/02/logo-0123456789abcdef.png?1767348000","title":"logo.png","content_type":"image/png"}`
)

var (
	wantSection = &CMSSection{ID: 3, Title: "Docs", SystemName: "docs", Public: true, ParentID: 2, PartialPath: "/docs", UpdatedAt: "2026-01-03T10:00:00Z"}
	wantPage    = &CMSTemplate{ID: 4, Type: TemplatePage, Title: "About", SystemName: "about", LayoutID: 6, SectionID: 3, Path: "/about",
		ContentType: "text/html", LiquidEnabled: true, Handler: "markdown", Published: strp("# About"), UpdatedAt: "2026-01-03T10:00:00Z"}
	wantFile = &CMSFile{ID: 5, SectionID: 3, Path: "/images/logo.png", URL: "/system/acme/2026/01/02/logo-0123456789abcdef.png?1767348000",
		Title: "logo.png", ContentType: "image/png", UpdatedAt: "2026-01-03T10:00:00Z"}
	cmsPaged = func(page int) url.Values { return url.Values{"page": {fmt.Sprint(page)}, "per_page": {"100"}} }
)

// cmsContractCases are the contract cases of the CMS calls.
var cmsContractCases = map[string]exchangeCase{
	"ListCMSSections: the root section has no parent (null)": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListCMSSections(ctx) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/admin/api/cms/sections.json", Query: cmsPaged(1)}, 200,
			`{"collection":[` + portaRootSection + `,` + portaSection + `]}`}},
		wantResult: []CMSSection{{ID: 2, Title: "Root", SystemName: "root", Public: true, PartialPath: "/", UpdatedAt: "2026-01-02T10:00:00Z"}, *wantSection},
	},
	"CreateCMSSection": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateCMSSection(ctx, CMSSectionParams{Title: strp("Docs"), SystemName: strp("docs"), PartialPath: strp("/docs"), Public: boolp(true), ParentID: 2})
		},
		exchanges: []exchange{{seenRequest{Method: "POST", Path: "/admin/api/cms/sections.json", Form: url.Values{"title": {"Docs"}, "system_name": {"docs"},
			"partial_path": {"/docs"}, "public": {"true"}, "parent_id": {"2"}}}, 201, portaSection}},
		wantResult: wantSection,
	},
	"UpdateCMSSection": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdateCMSSection(ctx, 3, CMSSectionParams{Title: strp("Docs"), Public: boolp(false)})
		},
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/cms/sections/3.json", Form: url.Values{"title": {"Docs"}, "public": {"false"}}},
			200, portaSection}},
		wantResult: wantSection,
	},
	"DeleteCMSSection": {
		call:      func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteCMSSection(ctx, 3) },
		exchanges: []exchange{{seenRequest{Method: "DELETE", Path: "/admin/api/cms/sections/3.json"}, 200, ``}},
	},
	"ListCMSTemplates: with their content, page after page of 100": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListCMSTemplates(ctx) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/admin/api/cms/templates.json",
			Query: url.Values{"page": {"1"}, "per_page": {"100"}, "content": {"true"}}}, 200, `{"collection":[` + portaPage + `,` + portaBuiltinPage + `]}`}},
		wantResult: []CMSTemplate{*wantPage, {ID: 8, Type: TemplateBuiltinPage, Title: "New", SystemName: "login/new", LayoutID: 6,
			Draft: strp("<h1>Sign in</h1>"), Published: strp("<h1>Login</h1>"), UpdatedAt: "2026-01-02T10:00:00Z"}},
	},
	"GetCMSTemplate": {
		call:       func(ctx context.Context, c *Client) (any, error) { return c.GetCMSTemplate(ctx, 4) },
		exchanges:  []exchange{{seenRequest{Method: "GET", Path: "/admin/api/cms/templates/4.json"}, 200, portaPage}},
		wantResult: wantPage,
	},
	"CreateCMSTemplate: a page, its content a draft": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateCMSTemplate(ctx, CMSTemplateParams{Type: TemplatePage, Title: strp("About"), Path: strp("/about"), Draft: strp("# About"),
				Handler: strp("markdown"), LiquidEnabled: boolp(true), SectionID: 3, LayoutID: int64p(6)})
		},
		exchanges: []exchange{{seenRequest{Method: "POST", Path: "/admin/api/cms/templates.json", Form: url.Values{"type": {"page"}, "title": {"About"},
			"path": {"/about"}, "draft": {"# About"}, "handler": {"markdown"}, "liquid_enabled": {"true"}, "section_id": {"3"}, "layout_id": {"6"}}}, 201, portaPage}},
		wantResult: wantPage,
	},
	"UpdateCMSTemplate: the type is not sent; a layout id 0 removes the layout": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdateCMSTemplate(ctx, 4, CMSTemplateParams{Type: TemplatePage, Draft: strp("# About us"), LayoutID: int64p(0)})
		},
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/cms/templates/4.json", Form: url.Values{"draft": {"# About us"}, "layout_id": {""}}},
			200, portaPage}},
		wantResult: wantPage,
	},
	"PublishCMSTemplate": {
		call:       func(ctx context.Context, c *Client) (any, error) { return c.PublishCMSTemplate(ctx, 4) },
		exchanges:  []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/cms/templates/4/publish.json"}, 200, portaPage}},
		wantResult: wantPage,
	},
	"DeleteCMSTemplate": {
		call:      func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteCMSTemplate(ctx, 4) },
		exchanges: []exchange{{seenRequest{Method: "DELETE", Path: "/admin/api/cms/templates/4.json"}, 200, ``}},
	},
	"ListCMSFiles": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListCMSFiles(ctx) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/admin/api/cms/files.json", Query: cmsPaged(1)}, 200,
			`{"collection":[` + portaFile + `]}`}},
		wantResult: []CMSFile{*wantFile},
	},
	"CreateCMSFile: multipart, the content as the attachment": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateCMSFile(ctx, CMSFileParams{Path: strp("/images/logo.png"), SectionID: 3, Downloadable: boolp(false),
				Content: []byte("PNG..."), Name: "logo.png", ContentType: "image/png"})
		},
		exchanges: []exchange{{seenRequest{Method: "POST", Path: "/admin/api/cms/files.json", Form: url.Values{"path": {"/images/logo.png"},
			"section_id": {"3"}, "downloadable": {"false"}, "attachment": {"logo.png (6 bytes, image/png)"}}}, 201, portaFile}},
		wantResult: wantFile,
	},
	"UpdateCMSFile: multipart, without a new content": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdateCMSFile(ctx, 5, CMSFileParams{Downloadable: boolp(true)})
		},
		exchanges:  []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/cms/files/5.json", Form: url.Values{"downloadable": {"true"}}}, 200, portaFile}},
		wantResult: wantFile,
	},
	"DeleteCMSFile": {
		call:      func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteCMSFile(ctx, 5) },
		exchanges: []exchange{{seenRequest{Method: "DELETE", Path: "/admin/api/cms/files/5.json"}, 200, ``}},
	},
	"FileContent: the bytes at the file's url, on the admin portal's host": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.FileContent(ctx, *wantFile) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/system/acme/2026/01/02/logo-0123456789abcdef.png",
			Query: url.Values{"1767348000": {""}}}, 200, "PNG..."}},
		wantResult: []byte("PNG..."),
	},
}

// TestCMSCallsContract checks, for every CMS call, each request porta receives, in order, and the
// decoding of porta's answers.
func TestCMSCallsContract(t *testing.T) {
	runExchangeCases(t, contractAdminURL, cmsContractCases)
}

// TestFileContentElsewhereGoesWithoutTheToken: a file's url on another host (a storage's signed URL)
// is read without the token, which only ever goes to the admin portal's host.
func TestFileContentElsewhereGoesWithoutTheToken(t *testing.T) {
	c := newContractClient(t, Config{})
	var auth string
	httpmock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		auth = r.Header.Get("Authorization") + r.URL.RawQuery
		return httpmock.NewStringResponse(200, "PNG..."), nil
	})
	f := *wantFile
	f.URL = "https://storage.example.com/acme/logo.png?X-Amz-Signature=abc"
	body, err := c.FileContent(context.Background(), f)
	if err != nil || string(body) != "PNG..." {
		t.Fatalf("content %q, %v; want PNG...", body, err)
	}
	if auth != "X-Amz-Signature=abc" {
		t.Errorf("the request to another host carried %q, want the URL's own query and no Authorization", auth)
	}
}
