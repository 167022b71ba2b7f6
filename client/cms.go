package client

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// The developer portal's content, as porta's CMS API serves it (app/controllers/admin/api/cms/; its
// description is doc/active_docs/cms_api.json, in testdata/): sections (a tree under the tenant's
// root section), templates (pages, layouts, partials, and the built-in pages and partials every tenant
// has, which can be overridden but not deleted: porta answers 422) and files (uploaded as multipart).
// Answers are bare objects (no root key); lists are {"collection": [...]}, 100 a page at most.

// Template types, as porta names them in answers (CMS::TypeMap). Only page, layout and partial can be
// created.
const (
	TemplatePage           = "page"
	TemplateLayout         = "layout"
	TemplatePartial        = "partial"
	TemplateBuiltinPage    = "builtin_page"
	TemplateBuiltinPartial = "builtin_partial"
)

// RootSection is the system name of the section every tenant's CMS has, made with its account.
const RootSection = "root"

// cmsPerPage is the page size of the CMS lists: the most porta gives (Admin::Api::CMS::BaseController
// caps per_page at 100).
const cmsPerPage = 100

// CMSSection is a section of the developer portal (app/representers/cms/section_representer.rb).
type CMSSection struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	SystemName  string `json:"system_name"`
	Public      bool   `json:"public"`
	ParentID    int64  `json:"parent_id"` // 0 for the root section (null)
	PartialPath string `json:"partial_path"`
	UpdatedAt   string `json:"updated_at"`
}

// CMSTemplate is a page, layout or partial, built in or not (app/representers/cms/page_representer.rb,
// layout_representer.rb, partial_representer.rb, builtin/). Draft and Published are nil when porta has
// none (a published template has no draft; a page never published is hidden); lists leave both out
// unless asked for the content.
type CMSTemplate struct {
	ID            int64   `json:"id"`
	Type          string  `json:"type"`
	Title         string  `json:"title"`
	SystemName    string  `json:"system_name"`
	LayoutID      int64   `json:"layout_id"`
	SectionID     int64   `json:"section_id"`
	Path          string  `json:"path"`
	ContentType   string  `json:"content_type"`
	LiquidEnabled bool    `json:"liquid_enabled"`
	Handler       string  `json:"handler"`
	Draft         *string `json:"draft"`
	Published     *string `json:"published"`
	UpdatedAt     string  `json:"updated_at"`
}

// CMSFile is a file of the developer portal (app/representers/cms/file_representer.rb): its content is
// not in the answer but at URL (FileContent reads it).
type CMSFile struct {
	ID           int64  `json:"id"`
	SectionID    int64  `json:"section_id"`
	Path         string `json:"path"`
	Downloadable bool   `json:"downloadable"`
	URL          string `json:"url"`
	Title        string `json:"title"`
	ContentType  string `json:"content_type"`
	UpdatedAt    string `json:"updated_at"`
}

// CMSSectionParams are a section's writable attributes; nil ones are not sent. ParentID 0 on create
// is the root section.
type CMSSectionParams struct {
	Title, SystemName, PartialPath *string
	Public                         *bool
	ParentID                       int64
}

func (p CMSSectionParams) form() form {
	return form{}.strPtr("title", p.Title).strPtr("system_name", p.SystemName).strPtr("partial_path", p.PartialPath).
		boolPtr("public", p.Public).int("parent_id", p.ParentID)
}

// CMSTemplateParams are a template's writable attributes; nil ones are not sent. Type is sent on create
// only (page, layout or partial). porta takes for a page all of them, for a layout its system name,
// title, liquid and draft, for a partial its system name and draft, for a built-in page its layout and
// draft, for a built-in partial its draft; what a type does not take, porta drops. An update writes the
// draft only: what is live changes at Publish.
type CMSTemplateParams struct {
	Type                                          string
	SystemName, Title, Path, ContentType, Handler *string
	Draft                                         *string
	LiquidEnabled                                 *bool
	SectionID                                     int64
	// LayoutID names the page's layout; a pointer to 0 removes it (porta: an empty layout_id).
	LayoutID *int64
}

func (p CMSTemplateParams) form() form {
	f := form{}.str("type", p.Type).strPtr("system_name", p.SystemName).strPtr("title", p.Title).strPtr("path", p.Path).
		strPtr("content_type", p.ContentType).strPtr("handler", p.Handler).strPtr("draft", p.Draft).
		boolPtr("liquid_enabled", p.LiquidEnabled).int("section_id", p.SectionID)
	if p.LayoutID != nil {
		if *p.LayoutID == 0 {
			f = f.strPtr("layout_id", new(string))
		} else {
			f = f.int("layout_id", *p.LayoutID)
		}
	}
	return f
}

// CMSFileParams are a file's writable attributes. Content, when not nil, is uploaded as the file
// (multipart attachment Name, of type ContentType); nil pointers are not sent.
type CMSFileParams struct {
	Path         *string
	SectionID    int64
	Downloadable *bool
	Content      []byte
	Name         string
	ContentType  string
}

// call is the multipart request of a file's create or update.
func (p CMSFileParams) call(method, endpoint string, args ...any) call {
	r := call{method: method, endpoint: endpoint, args: args, multipart: true,
		form: form{}.strPtr("path", p.Path).int("section_id", p.SectionID).boolPtr("downloadable", p.Downloadable).values()}
	if p.Content != nil {
		r.upload = &upload{field: "attachment", name: p.Name, contentType: p.ContentType, content: p.Content}
	}
	return r
}

// ListCMSSections lists the tenant's sections, the root section among them
// (GET /admin/api/cms/sections.json).
func (c *Client) ListCMSSections(ctx context.Context) ([]CMSSection, error) {
	return listPages[CMSSection](ctx, c, "/admin/api/cms/sections.json", cmsPerPage, nil)
}

// CreateCMSSection creates a section (POST /admin/api/cms/sections.json); a lost answer is settled by
// its system name, unique in the tenant.
func (c *Client) CreateCMSSection(ctx context.Context, p CMSSectionParams) (*CMSSection, error) {
	return settled(ctx, c, func() (*CMSSection, error) {
		return one[CMSSection](ctx, c, call{method: "POST", endpoint: "/admin/api/cms/sections.json", form: p.form().values()})
	}, func() (*CMSSection, error) {
		if p.SystemName == nil {
			return nil, nil
		}
		all, err := c.ListCMSSections(ctx)
		return first(all, err, func(s CMSSection) bool { return s.SystemName == *p.SystemName })
	})
}

// UpdateCMSSection updates a section (PUT /admin/api/cms/sections/{id}.json).
func (c *Client) UpdateCMSSection(ctx context.Context, id int64, p CMSSectionParams) (*CMSSection, error) {
	return one[CMSSection](ctx, c, call{method: "PUT", endpoint: "/admin/api/cms/sections/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteCMSSection deletes a section (DELETE /admin/api/cms/sections/{id}.json); porta moves what it
// holds to its parent, and refuses a built-in section.
func (c *Client) DeleteCMSSection(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/cms/sections/{id}.json", args: []any{id}}, nil)
}

// ListCMSTemplates lists the tenant's templates with their draft and published content
// (GET /admin/api/cms/templates.json?content=true). A page of a hundred templates with their content
// can outgrow the most the client reads (a portal of pages near a ConfigMap's 1 MiB): a page whose
// answer is too large is asked again in smaller pages (cmsTemplatePageSizes), each a divisor of the one
// before, so the items already read stay aligned, and the list goes on in that size. Each list starts
// again from the largest: what the tenant holds decides, and a portal whose large pages went is listed
// in few calls again. A single template larger than the cap is an error naming it.
func (c *Client) ListCMSTemplates(ctx context.Context) ([]CMSTemplate, error) {
	const endpoint = "/admin/api/cms/templates.json"
	var all []CMSTemplate
	size := cmsPerPage
	for page := 1; page <= c.maxPages; {
		items, err := c.cmsTemplatesPage(ctx, page, size, true)
		if IsTooLarge(err) {
			smaller := smallerCMSPage(size)
			if smaller == size {
				return nil, c.templateTooLarge(ctx, len(all), err)
			}
			page, size = len(all)/smaller+1, smaller
			continue
		}
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(items) < size {
			return all, nil
		}
		page++
	}
	return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: endpoint,
		Message: fmt.Sprintf("the list did not end after %d pages", c.maxPages)}
}

// cmsTemplatePageSizes are the page sizes ListCMSTemplates tries, largest first: each divides the one
// before.
var cmsTemplatePageSizes = []int{cmsPerPage, 50, 25, 5, 1}

// smallerCMSPage is the page size after size in cmsTemplatePageSizes (size itself at the end).
func smallerCMSPage(size int) int {
	for _, s := range cmsTemplatePageSizes {
		if s < size {
			return s
		}
	}
	return size
}

// cmsTemplatesPage reads one page of templates, with their content or not.
func (c *Client) cmsTemplatesPage(ctx context.Context, page, size int, content bool) ([]CMSTemplate, error) {
	r := call{method: "GET", endpoint: "/admin/api/cms/templates.json", query: url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(size)}}}
	if content {
		r.query.Set("content", "true")
	}
	var body rawBody
	if err := c.do(ctx, r, &body); err != nil {
		return nil, err
	}
	items, err := decodeList[CMSTemplate](body, listKey(r.endpoint))
	if err != nil {
		return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: r.endpoint, Message: fmt.Sprintf("cannot decode the list: %v", err)}
	}
	return items, nil
}

// templateTooLarge is the error of a template whose answer alone is larger than the client reads: the
// template at offset, named (read without its content).
func (c *Client) templateTooLarge(ctx context.Context, offset int, err error) error {
	e, _ := asAPIError(err)
	named := *e
	if items, rerr := c.cmsTemplatesPage(ctx, offset+1, 1, false); rerr == nil && len(items) == 1 {
		t := items[0]
		name := t.Path
		if name == "" {
			name = t.SystemName
		}
		named.Message = fmt.Sprintf("%s %q (id %d) is larger with its content than %d bytes, the most this client reads: make it smaller, or raise the manager's --max-response-size",
			t.Type, name, t.ID, c.maxBody)
	}
	return &named
}

// GetCMSTemplate reads one template with its content (GET /admin/api/cms/templates/{id}.json).
func (c *Client) GetCMSTemplate(ctx context.Context, id int64) (*CMSTemplate, error) {
	return one[CMSTemplate](ctx, c, call{method: "GET", endpoint: "/admin/api/cms/templates/{id}.json", args: []any{id}})
}

// CreateCMSTemplate creates a page, layout or partial (POST /admin/api/cms/templates.json), its content
// a draft until Publish. A lost answer is settled by what is unique: a page's path, a layout's or
// partial's system name.
func (c *Client) CreateCMSTemplate(ctx context.Context, p CMSTemplateParams) (*CMSTemplate, error) {
	return settled(ctx, c, func() (*CMSTemplate, error) {
		return one[CMSTemplate](ctx, c, call{method: "POST", endpoint: "/admin/api/cms/templates.json", form: p.form().values()})
	}, func() (*CMSTemplate, error) {
		all, err := c.ListCMSTemplates(ctx)
		return first(all, err, func(t CMSTemplate) bool {
			if t.Type != p.Type {
				return false
			}
			if p.Type == TemplatePage {
				return p.Path != nil && t.Path == *p.Path
			}
			return p.SystemName != nil && t.SystemName == *p.SystemName
		})
	})
}

// UpdateCMSTemplate updates a template (PUT /admin/api/cms/templates/{id}.json): its draft, and the
// attributes its type takes.
func (c *Client) UpdateCMSTemplate(ctx context.Context, id int64, p CMSTemplateParams) (*CMSTemplate, error) {
	p.Type = "" // porta takes it on create only
	return one[CMSTemplate](ctx, c, call{method: "PUT", endpoint: "/admin/api/cms/templates/{id}.json", args: []any{id}, form: p.form().values()})
}

// PublishCMSTemplate publishes a template's draft (PUT /admin/api/cms/templates/{id}/publish.json):
// porta makes it the published content and clears the draft; with no draft it changes nothing.
func (c *Client) PublishCMSTemplate(ctx context.Context, id int64) (*CMSTemplate, error) {
	return one[CMSTemplate](ctx, c, call{method: "PUT", endpoint: "/admin/api/cms/templates/{id}/publish.json", args: []any{id}})
}

// DeleteCMSTemplate deletes a page, layout or partial (DELETE /admin/api/cms/templates/{id}.json).
// porta refuses a built-in (422), and keeps a layout pages still use while answering 200.
func (c *Client) DeleteCMSTemplate(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/cms/templates/{id}.json", args: []any{id}}, nil)
}

// ListCMSFiles lists the tenant's files (GET /admin/api/cms/files.json).
func (c *Client) ListCMSFiles(ctx context.Context) ([]CMSFile, error) {
	return listPages[CMSFile](ctx, c, "/admin/api/cms/files.json", cmsPerPage, nil)
}

// CreateCMSFile uploads a file (POST /admin/api/cms/files.json, multipart); a lost answer is settled by
// its path, unique among files.
func (c *Client) CreateCMSFile(ctx context.Context, p CMSFileParams) (*CMSFile, error) {
	return settled(ctx, c, func() (*CMSFile, error) {
		return one[CMSFile](ctx, c, p.call("POST", "/admin/api/cms/files.json"))
	}, func() (*CMSFile, error) {
		if p.Path == nil {
			return nil, nil
		}
		all, err := c.ListCMSFiles(ctx)
		return first(all, err, func(f CMSFile) bool { return f.Path == *p.Path })
	})
}

// UpdateCMSFile updates a file (PUT /admin/api/cms/files/{id}.json, multipart): a new content replaces
// it, and its name becomes the file's title.
func (c *Client) UpdateCMSFile(ctx context.Context, id int64, p CMSFileParams) (*CMSFile, error) {
	return one[CMSFile](ctx, c, p.call("PUT", "/admin/api/cms/files/{id}.json", id))
}

// DeleteCMSFile deletes a file (DELETE /admin/api/cms/files/{id}.json).
func (c *Client) DeleteCMSFile(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/cms/files/{id}.json", args: []any{id}}, nil)
}

// FileContent reads a file's content from its URL (GET, counted and paced as any call). A URL on the
// admin portal's host is read with the token; one elsewhere (a storage's signed URL) without it.
func (c *Client) FileContent(ctx context.Context, f CMSFile) ([]byte, error) {
	var body []byte
	err := c.do(ctx, call{method: "GET", endpoint: "/admin/api/cms/files/{id} (its url)", args: []any{f.ID}, rawURL: f.URL}, &body)
	return body, err
}
