package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	slashpath "path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The developer portal's content as porta's CMS admin API serves it (config/routes.rb:531-538;
// app/controllers/admin/api/cms/{base,sections,templates,files}_controller.rb,
// app/services/admin/api/cms/template_service.rb; app/models/cms/{section,template,page,layout,partial,
// file}.rb; app/representers/cms/*_representer.rb). JSON only: a .xml request is answered 406
// (cmsAPI.xmlOnly). Single objects have no root key; lists are {"collection":[...]} with "metadata" when
// paged (cmsList).

// cmsSection is a CMS::Section. builtin: a CMS::Builtin::Section (root and the default portal's), which
// cannot be deleted.
type cmsSection struct {
	id, parentID                   int64 // parentID 0: none (root)
	title, systemName, partialPath string
	public, builtin                bool
	stamps
}

// json is CMS::SectionRepresenter (app/representers/cms/section_representer.rb): title, parent_id and
// partial_path render_nil.
func (s *cmsSection) json() map[string]any {
	out := map[string]any{"id": s.id, "created_at": s.created, "updated_at": s.updated, "title": s.title, "system_name": s.systemName,
		"public": s.public, "parent_id": nil, "partial_path": s.partialPath}
	if s.parentID != 0 {
		out["parent_id"] = s.parentID
	}
	return out
}

func (s *cmsSection) root() bool { return s.systemName == "root" } // section.rb:106-108

// Template types, as CMS::TypeMap.cms_type names them in the JSON "type" and the index's type filter
// (app/lib/cms/type_map.rb:6-13).
const (
	cmsPage           = "page"
	cmsLayout         = "layout"
	cmsPartial        = "partial"
	cmsBuiltinPage    = "builtin_page"
	cmsBuiltinPartial = "builtin_partial"
)

// cmsTemplate is a CMS::Template of one of the kinds above. sectionID is a page's or built-in page's;
// layoutID 0 is none. liquid nil: liquid_enabled never set. draft and published nil: NULL.
type cmsTemplate struct {
	id                                            int64
	kind                                          string
	title, systemName, path, contentType, handler string
	sectionID, layoutID                           int64
	liquid                                        *bool
	draft, published                              *string
	stamps
}

func (tp *cmsTemplate) builtin() bool {
	return tp.kind == cmsBuiltinPage || tp.kind == cmsBuiltinPartial
}

// liquidEnabled is liquid_enabled?: a built-in's is always true (builtin.rb).
func (tp *cmsTemplate) liquidEnabled() bool { return tp.builtin() || (tp.liquid != nil && *tp.liquid) }

// json is the representer of the template's type (templates_representer.rb:6): PageRepresenter for
// pages and built-in pages (the latter without the CMS::Page block, page_representer.rb:14-21),
// LayoutRepresenter, PartialRepresenter for partials and built-in partials. short (the index without
// content=true) leaves out draft and published (templates_controller.rb:21-25). A property without
// render_nil is left out when nil.
func (tp *cmsTemplate) json(short bool) map[string]any {
	out := map[string]any{"id": tp.id, "type": tp.kind, "created_at": tp.created, "updated_at": tp.updated}
	optional := func(key, v string) {
		if v != "" {
			out[key] = v
		}
	}
	switch tp.kind {
	case cmsPage, cmsBuiltinPage:
		out["title"], out["system_name"], out["layout_id"] = tp.title, nilIfEmpty(tp.systemName), nilIfZero(tp.layoutID)
		if tp.kind == cmsBuiltinPage {
			out["title"] = builtinTitle(tp.systemName)
			break
		}
		out["section_id"], out["path"], out["content_type"] = tp.sectionID, tp.path, tp.contentType
		out["liquid_enabled"], out["hidden"] = tp.liquidEnabled(), tp.published == nil
		optional("handler", tp.handler)
	case cmsLayout:
		optional("title", tp.title)
		optional("system_name", tp.systemName)
		if tp.liquid != nil {
			out["liquid_enabled"] = *tp.liquid
		}
	default: // partials
		optional("system_name", tp.systemName)
	}
	if !short {
		out["draft"], out["published"] = nilIfNone(tp.draft), nilIfNone(tp.published)
	}
	return out
}

// builtinTitle is a built-in page's title as CMS::Builtin#title gives it (app/models/cms/builtin.rb:72-76):
// I18n.t of the system name's last segment, defaulting to its humanize (no en.yml keys exist), e.g.
// "errors/not_found" is "Not found".
func builtinTitle(systemName string) string {
	last := strings.ReplaceAll(strings.TrimSuffix(slashpath.Base(systemName), "_id"), "_", " ")
	if last == "" {
		return ""
	}
	return strings.ToUpper(last[:1]) + strings.ToLower(last[1:])
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nilIfZero(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func nilIfNone(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// cmsFile is a CMS::File with its attachment's bytes. owner is the tenant's name, for the url.
type cmsFile struct {
	id, sectionID                  int64
	owner, path, name, contentType string
	secret                         string // Paperclip's random_secret, made once (file.rb:116-118)
	downloadable                   bool
	content                        []byte
	uploaded                       int64 // the attachment's updated_at (Unix), the url's ?timestamp
	stamps
}

// json is CMS::FileRepresenter (app/representers/cms/file_representer.rb): no content; title is the
// uploaded file's name.
func (f *cmsFile) json() map[string]any {
	return map[string]any{"id": f.id, "created_at": f.created, "updated_at": f.updated, "section_id": f.sectionID, "path": f.path,
		"downloadable": f.downloadable, "url": f.url(), "title": f.name, "content_type": f.contentType}
}

// dump is json with the content's size and SHA-256, for KindCMSFiles.
func (f *cmsFile) dump() map[string]any {
	out := f.json()
	sum := sha256.Sum256(f.content)
	out["size"], out["sha256"] = len(f.content), hex.EncodeToString(sum[:])
	return out
}

// url stands for Paperclip's filesystem url, /system/<prefix>/YYYY/MM/DD/<name>-<secret>.<ext>?<timestamp>
// (file.rb:79-89, config/initializers/paperclip.rb:25-45): here /system/<tenant>/<id>/<name>-<secret>.<ext>?<timestamp>,
// relative to the host as porta's is. serveCMSFile answers it, without a token, as porta's public
// /system files are.
func (f *cmsFile) url() string {
	ext := slashpath.Ext(f.name)
	return fmt.Sprintf("/system/%s/%d/%s?%d", url.PathEscape(f.owner), f.id, url.PathEscape(strings.TrimSuffix(f.name, ext)+"-"+f.secret+ext), f.uploaded)
}

// serveCMSFile answers a GET of a file's url (also under a tenant's /t/NAME prefix) with its bytes, its
// content type and porta's disposition (attachment when downloadable, else inline,
// developer_portal/cms/new_content_controller.rb:32-43). It reports whether the path was a file's url.
// These reads are not API calls: they are not counted.
func (s *Simulator) serveCMSFile(w http.ResponseWriter, hr *http.Request) bool {
	p := hr.URL.Path
	if rest, ok := strings.CutPrefix(p, "/t/"); ok {
		_, p, _ = strings.Cut(rest, "/")
		p = "/" + p
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(segs) != 4 || segs[0] != "system" || (hr.Method != http.MethodGet && hr.Method != http.MethodHead) {
		return false
	}
	id, _ := strconv.ParseInt(segs[2], 10, 64)
	s.mu.Lock()
	var f *cmsFile
	if t := s.names[segs[1]]; t != nil {
		f = t.files[id]
	}
	var content []byte
	var name, contentType string
	var downloadable bool
	if f != nil {
		ext := slashpath.Ext(f.name)
		if segs[3] == strings.TrimSuffix(f.name, ext)+"-"+f.secret+ext {
			content, name, contentType, downloadable = f.content, f.name, f.contentType, f.downloadable
		} else {
			f = nil
		}
	}
	s.mu.Unlock()
	if f == nil {
		http.NotFound(w, hr)
		return true
	}
	disposition := "inline"
	if downloadable {
		disposition = "attachment"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": name}))
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	if hr.Method == http.MethodGet {
		_, _ = w.Write(content)
	}
	return true
}

func (t *tenant) cmsID() int64 { t.cmsNextID++; return t.cmsNextID }

// rootSection is the tenant's root section (sections.root: find_by_system_name('root'), section.rb).
func (t *tenant) rootSection() *cmsSection {
	for _, id := range sortedIDs(t.sections, func(s *cmsSection) bool { return s.root() }) {
		return t.sections[id]
	}
	return nil
}

// sectionByID is current_account.sections.find_by(id: v): nil for a blank, unknown or malformed id.
func (t *tenant) sectionByID(v string) *cmsSection {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return nil
	}
	return t.sections[id]
}

// sectionNamed is the section with that id or, failing that, that system name (find_section,
// sections_controller.rb:57-61; find_by(system_name:) in template_service.rb:136-142).
func (t *tenant) sectionNamed(v string, byID bool) *cmsSection {
	if byID {
		if s := t.sectionByID(v); s != nil {
			return s
		}
	}
	for _, id := range sortedIDs(t.sections, func(s *cmsSection) bool { return s.systemName == v }) {
		return t.sections[id]
	}
	return nil
}

// cmsAPI is what one CMS controller accepts: the wrapper key of its parameters, the attributes wrapped
// under it (wrap_parameters include:) and the other top-level keys it allows (forbid_extra_params
// whitelist:).
type cmsAPI struct {
	wrapper   string
	wrapped   []string
	whitelist []string
}

// cmsWhitelist is Admin::Api::CMS::BaseController's (base_controller.rb:6).
var cmsWhitelist = []string{"id", "page", "per_page"}

var (
	// sections_controller.rb:3-4.
	sectionsAPI = cmsAPI{"section", []string{"parent_id", "title", "system_name", "public", "partial_path"}, cmsWhitelist}
	// files_controller.rb:8,12.
	filesAPI = cmsAPI{"file", []string{"section_id", "path", "attachment", "downloadable"}, cmsWhitelist}
	// templates_controller.rb:3,12-15.
	templatesAPI = cmsAPI{"template", []string{"system_name", "title", "path", "draft", "liquid_enabled", "handler", "content_type",
		"section_id", "layout_id"}, append(slices.Clone(cmsWhitelist), "type", "layout_name", "section_name", "content")}
)

// flatParamsIgnored are the keys flat_params leaves out (app/lib/api_support/params.rb:12-14).
var flatParamsIgnored = []string{"format", "controller", "action", "provider_key", "api_key", "access_token"}

// guard runs h after forbid_extra_params :reject (app/lib/api_support/forbid_params.rb:45-60), which
// runs on every action: a top-level key that is neither the wrapper, a wrapped attribute, whitelisted
// nor ignored is refused with 422 {"error":"Unpermitted parameters: [\"foo\"]"} (the keys as Ruby's
// Array#to_s writes them, here sorted).
func (c cmsAPI) guard(h handlerFunc) handlerFunc {
	return func(r *request) answer {
		if msg := c.unpermitted(r); msg != "" {
			return unprocessableError(msg)
		}
		return h(r)
	}
}

// unpermitted is forbid_extra_params' message for the request's extra keys, "" when there are none.
func (c cmsAPI) unpermitted(r *request) string {
	var extra []string
	for k := range r.top {
		if k != c.wrapper && !slices.Contains(c.wrapped, k) && !slices.Contains(c.whitelist, k) && !slices.Contains(flatParamsIgnored, k) {
			extra = append(extra, strconv.Quote(k))
		}
	}
	if len(extra) == 0 {
		return ""
	}
	sort.Strings(extra)
	return "Unpermitted parameters: [" + strings.Join(extra, ", ") + "]"
}

// msgUnknownFormat is en.yml's action_controller.errors.unknown_format (config/locales/en.yml:2543) for
// a .xml request.
const msgUnknownFormat = `The server does not understand "xml" request.`

// xmlOnly answers a CMS path's .xml twin. The routes take any format (config/routes.rb:531, defaults
// format json, the format segment optional); then, after authentication, forbid_extra_params
// (base_controller.rb:6) and ensure_json_request (base_controller.rb:8,25-27) raise
// ActionController::UnknownFormat, which ApplicationController answers 406 with render_error
// (application_controller.rb:54-57,184-207): in XML for a .xml request, as Builder::XmlMarkup writes
// it (ThreeScale::XML::Builder, app/lib/three_scale/xml/builder.rb; only &, < and > escaped). The
// forbidden keys' 422 comes first, in XML too.
func (c cmsAPI) xmlOnly(r *request) answer {
	if msg := c.unpermitted(r); msg != "" {
		return xmlError(http.StatusUnprocessableEntity, msg)
	}
	return xmlError(http.StatusNotAcceptable, msgUnknownFormat)
}

// xmlError is render_error's XML body: <?xml version="1.0" encoding="UTF-8"?><error>msg</error>.
func xmlError(code int, msg string) answer {
	text := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(msg)
	return answer{code, xmlDocument(`<?xml version="1.0" encoding="UTF-8"?><error>` + text + `</error>`)}
}

// sent is params.require(wrapper) passing: the wrapper was sent, or an attribute Rails wraps under it.
// (Rails wraps only a body's attributes; here the query's count too.)
func (c cmsAPI) sent(r *request) bool {
	if r.top[c.wrapper] {
		return true
	}
	for _, k := range c.wrapped {
		if r.top[k] {
			return true
		}
	}
	return false
}

// unprocessableError is porta's render_error with status 422: {"error":"..."}.
func unprocessableError(msg string) answer {
	return answer{http.StatusUnprocessableEntity, map[string]string{"error": msg}}
}

// msgBuiltinUndeletable refuses the deletion of a built-in (sections_controller.rb:43-48,
// template_service.rb:127-131).
const msgBuiltinUndeletable = "Built-in resources can't be deleted"

// The CMS controllers' pagination: per_page 20 by default, an explicit one at most 100
// (base_controller.rb:12-23), page from 1 (Admin::Api::Filters::Pagination#current_page).
const (
	cmsDefaultPerPage = 20
	cmsMaxPerPage     = 100
)

// cmsPaging reads page and per_page. per_page is [per_page.to_i, 100].min; porta does not bound it from
// below (will_paginate is then given 0 or less), which the simulator answers with the default.
func cmsPaging(form url.Values) (pageNo, perPage int) {
	pageNo, err := strconv.Atoi(form.Get("page"))
	if err != nil || pageNo < 1 {
		pageNo = 1
	}
	perPage = cmsDefaultPerPage
	if v := strings.TrimSpace(form.Get("per_page")); v != "" {
		perPage = min(rubyToI(v), cmsMaxPerPage)
	}
	if perPage < 1 {
		perPage = cmsDefaultPerPage
	}
	return pageNo, perPage
}

// rubyToI is String#to_i: the leading integer, 0 for none.
func rubyToI(s string) int {
	n, _ := strconv.Atoi(leadingInteger.FindString(s))
	return n
}

var (
	leadingInteger = regexp.MustCompile(`^[+-]?\d+`)
	leadingSlashes = regexp.MustCompile(`^/+`)
	// notPathChars and dashRuns are normalize_path's (normalize_path_attribute.rb:43-53).
	notPathChars = regexp.MustCompile(`[^/\w-]+`)
	dashRuns     = regexp.MustCompile(`-+`)
)

// cmsList is one page of the objects with ids, in id order (responder.rb:86-88), as
// ThreeScale::Api::Collection renders a wraps_collection :collection representer
// (app/lib/three_scale/api/collection.rb:20-22,50-66): bare objects under "collection", and "metadata"
// when per_page < total_entries. A page past the end is an empty collection.
func cmsList(ids []int64, toJSON func(int64) map[string]any, form url.Values) answer {
	pageNo, perPage := cmsPaging(form)
	all := len(ids)
	start := min((pageNo-1)*perPage, all)
	items := make([]any, 0, perPage)
	for _, id := range ids[start:min(start+perPage, all)] {
		items = append(items, toJSON(id))
	}
	body := map[string]any{"collection": items}
	addMetadata(body, pageNo, perPage, all)
	return answer{http.StatusOK, body}
}

// filterID keeps the objects whose id field equals the form's value of key, when sent (the search scopes
// by_parent_id, by_section_id: where(x: value); an unknown or malformed value keeps none).
func filterID(form url.Values, key string, of func() int64) bool {
	v, sent := form[key]
	if !sent {
		return true
	}
	id, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
	return err == nil && id == of()
}

// The CMS API's collections.
const sections, templates, files = "/admin/api/cms/sections", "/admin/api/cms/templates", "/admin/api/cms/files"

// cmsRoutes are the CMS API's routes, .json and .xml.
func cmsRoutes() []route {
	return append(cmsJSONRoutes(), cmsXMLRoutes()...)
}

// cmsXMLRoutes are the .xml twins of the CMS routes: 406 (xmlOnly), whatever the id.
func cmsXMLRoutes() []route {
	var out []route
	for path, api := range map[string]cmsAPI{sections: sectionsAPI, templates: templatesAPI, files: filesAPI} {
		out = append(out, handle("GET", path+".xml", api.xmlOnly), handle("POST", path+".xml", api.xmlOnly))
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			out = append(out, handle(method, path+"/{id}.xml", api.xmlOnly).withText("id"))
		}
	}
	return append(out, handle("PUT", templates+"/{id}/publish.xml", templatesAPI.xmlOnly).withText("id"))
}

// cmsJSONRoutes are the CMS API's routes.
func cmsJSONRoutes() []route {
	return []route{
		handle("GET", sections+".json", sectionsAPI.guard(func(r *request) answer {
			return cmsList(sortedIDs(r.t.sections, func(s *cmsSection) bool {
				return filterID(r.form, "parent_id", func() int64 { return s.parentID })
			}), jsonOf(r.t.sections), r.form)
		})),
		handle("POST", sections+".json", sectionsAPI.guard(createSection)),
		handle("GET", sections+"/{id}.json", sectionsAPI.guard(func(r *request) answer {
			return withSection(r, func(s *cmsSection) answer { return answer{http.StatusOK, s.json()} })
		})).withText("id"),
		handle("PUT", sections+"/{id}.json", sectionsAPI.guard(updateSection)).withText("id"),
		handle("DELETE", sections+"/{id}.json", sectionsAPI.guard(deleteSection)).withText("id"),

		// index: content=true (exactly) adds draft and published (templates_controller.rb:21-25,93-95);
		// type and section_id filter (template.rb:16-18).
		handle("GET", templates+".json", templatesAPI.guard(func(r *request) answer {
			short := r.form.Get("content") != "true"
			return cmsList(sortedIDs(r.t.templates, func(tp *cmsTemplate) bool {
				return (!has(r, "type") || r.form.Get("type") == tp.kind) && filterID(r.form, "section_id", func() int64 { return tp.sectionID })
			}), func(id int64) map[string]any { return r.t.templates[id].json(short) }, r.form)
		})),
		handle("POST", templates+".json", templatesAPI.guard(createTemplate)),
		handle("GET", templates+"/{id}.json", templatesAPI.guard(func(r *request) answer {
			return withTemplate(r, func(tp *cmsTemplate) answer { return answer{http.StatusOK, tp.json(false)} })
		})),
		handle("PUT", templates+"/{id}.json", templatesAPI.guard(updateTemplate)),
		handle("DELETE", templates+"/{id}.json", templatesAPI.guard(deleteTemplate)),
		// publish! (template.rb:48-53,191-195): the draft becomes published and the draft NULL; without a
		// draft nothing changes. 200 either way.
		handle("PUT", templates+"/{id}/publish.json", templatesAPI.guard(func(r *request) answer {
			return withTemplate(r, func(tp *cmsTemplate) answer {
				if tp.draft != nil {
					tp.published, tp.draft = tp.draft, nil
					tp.touch()
				}
				return answer{http.StatusOK, tp.json(false)}
			})
		})),

		handle("GET", files+".json", filesAPI.guard(func(r *request) answer {
			return cmsList(sortedIDs(r.t.files, func(f *cmsFile) bool {
				return filterID(r.form, "section_id", func() int64 { return f.sectionID })
			}), jsonOf(r.t.files), r.form)
		})),
		handle("POST", files+".json", filesAPI.guard(createFile)),
		handle("GET", files+"/{id}.json", filesAPI.guard(func(r *request) answer {
			return withFile(r, func(f *cmsFile) answer { return answer{http.StatusOK, f.json()} })
		})),
		handle("PUT", files+"/{id}.json", filesAPI.guard(updateFile)),
		handle("DELETE", files+"/{id}.json", filesAPI.guard(func(r *request) answer {
			return withFile(r, func(f *cmsFile) answer { delete(r.t.files, f.id); return deleted() })
		})),
	}
}

func withSection(r *request, f func(*cmsSection) answer) answer {
	s := r.t.sectionNamed(r.texts["id"], true)
	if s == nil {
		return notFound()
	}
	return f(s)
}

func withTemplate(r *request, f func(*cmsTemplate) answer) answer {
	tp, found := r.t.templates[r.params["id"]]
	if !found {
		return notFound()
	}
	return f(tp)
}

func withFile(r *request, f func(*cmsFile) answer) answer {
	x, found := r.t.files[r.params["id"]]
	if !found {
		return notFound()
	}
	return f(x)
}

// railsBool is ActiveModel::Type::Boolean's cast of a form value: blank is nil, "0", "f", "false",
// "off" (any case) false, anything else true.
func railsBool(v string) *bool {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	b := !slices.Contains([]string{"0", "f", "false", "off"}, strings.ToLower(v))
	return &b
}

// uriPattern stands for URI.parse's acceptance (RFC 3986 characters only) in NormalizePathAttribute
// (app/lib/normalize_path_attribute.rb).
var uriPattern = regexp.MustCompile(`^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$`)

// checkPath is verify_path_format: a value URI.parse refuses is normalised (letters, digits, "-", "_"
// and "/" kept, other runs one "-", no dash at the ends nor next to a slash) and refused with msg.
func checkPath(v *string, field, msg string, errs fieldErrors) {
	if *v == "" || uriPattern.MatchString(*v) {
		return
	}
	p := notPathChars.ReplaceAllString(*v, "-")
	p = dashRuns.ReplaceAllString(p, "-")
	p = strings.Trim(p, "-")
	p = strings.ReplaceAll(strings.ReplaceAll(p, "/-", "/"), "-/", "/")
	*v = p
	errs.add(field, msg)
}

func tooLong(errs fieldErrors, field, v string) {
	if len([]rune(v)) > 255 {
		errs.add(field, "is too long (maximum is 255 characters)")
	}
}

// ---------------------------------------------------------------------------------------------------
// Sections

// createSection is SectionsController#create (sections_controller.rb:18-25): the parent is the
// top-level parent_id's section of the tenant, or root when unknown or not sent.
func createSection(r *request) answer {
	if !sectionsAPI.sent(r) {
		return parameterMissing(sectionsAPI.wrapper)
	}
	s := &cmsSection{public: true, stamps: newStamps()}
	parent := r.t.sectionByID(r.form.Get("parent_id"))
	if parent == nil {
		parent = r.t.rootSection()
	}
	s.parentID = parent.id
	applySectionForm(r, s, false)
	if s.partialPath == "" { // set_partial_path on create (section.rb:168-172)
		s.partialPath = parameterize(s.title)
	}
	if a := validateSection(r.t, s); a.code != 0 {
		return a
	}
	s.id = r.t.cmsID()
	r.t.sections[s.id] = s
	return answer{http.StatusCreated, s.json()}
}

// updateSection assigns parent_id raw: an unknown one fails validation (section.rb:45,194-198).
func updateSection(r *request) answer {
	return withSection(r, func(s *cmsSection) answer {
		if !sectionsAPI.sent(r) {
			return parameterMissing(sectionsAPI.wrapper)
		}
		next := *s
		applySectionForm(r, &next, true)
		if a := validateSection(r.t, &next); a.code != 0 {
			return a
		}
		next.touch()
		*s = next
		return answer{http.StatusOK, s.json()}
	})
}

// applySectionForm applies title, system_name, public, partial_path and, on update, parent_id
// (parentID -1 for a value that is no id of the tenant's, 0 for blank); system_name defaults to the
// title parameterized (section.rb:37,164-166).
func applySectionForm(r *request, s *cmsSection, withParent bool) {
	for field, to := range map[string]*string{"title": &s.title, "system_name": &s.systemName, "partial_path": &s.partialPath} {
		if has(r, field) {
			*to = r.form.Get(field)
		}
	}
	if b := railsBool(r.form.Get("public")); b != nil { // blank: left as it is (the column's default is true)
		s.public = *b
	}
	if withParent && has(r, "parent_id") {
		s.parentID = 0
		if v := strings.TrimSpace(r.form.Get("parent_id")); v != "" {
			s.parentID = -1
			if p := r.t.sectionByID(v); p != nil {
				s.parentID = p.id
			}
		}
	}
	if strings.TrimSpace(s.systemName) == "" {
		s.systemName = parameterize(s.title)
	}
}

// validateSection is CMS::Section's validations (section.rb:30-45,188-202) and normalisations.
func validateSection(t *tenant, s *cmsSection) answer {
	errs := fieldErrors{}
	if strings.TrimSpace(s.title) == "" {
		errs.add("title", msgBlank)
	}
	if strings.TrimSpace(s.systemName) == "" {
		errs.add("system_name", msgBlank)
	}
	if !s.root() && s.parentID == 0 {
		errs.add("parent_id", msgBlank)
	}
	for _, o := range t.sections {
		if o.id != s.id && o.parentID == s.parentID && o.title == s.title && s.title != "" {
			errs.add("title", msgTaken)
		}
		if o.id != s.id && o.systemName == s.systemName && s.systemName != "" {
			errs.add("system_name", msgTaken)
		}
	}
	tooLong(errs, "system_name", s.systemName)
	tooLong(errs, "partial_path", s.partialPath)
	tooLong(errs, "title", s.title)
	checkPath(&s.partialPath, "partial_path", "is not a valid URI", errs)
	if s.id != 0 && t.ancestorOf(s.id, s.parentID) {
		errs.add("base", "cannot be it's own ancestor")
	}
	if !s.root() && s.parentID <= 0 { // parent_same_provider: parent&.provider == provider, false for none too
		errs.add("parent_id", "must belong to the same provider")
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	// strip_trailing_slashes, before_save (section.rb:50,200-202): partial_path.to_s.gsub!(/^\/+/,"/"),
	// a run of leading slashes made one, despite the name; trailing slashes stay. (Ruby's ^ also starts
	// each line; a value with a newline never gets here: checkPath refuses it.)
	s.partialPath = leadingSlashes.ReplaceAllString(s.partialPath, "/")
	return answer{}
}

// msgBlank is Rails' presence message.
const msgBlank = "can't be blank"

// ancestorOf reports whether section id is parent or one of its ancestors (child_of?, section.rb:154-160).
func (t *tenant) ancestorOf(id, parent int64) bool {
	for seen := 0; parent > 0 && seen <= len(t.sections); seen++ {
		if parent == id {
			return true
		}
		p := t.sections[parent]
		if p == nil {
			return false
		}
		parent = p.parentID
	}
	return false
}

// deleteSection is SectionsController#destroy: a built-in section is refused (422); another one's
// built-in pages, pages, files and child sections move to its parent, in one transaction, then it goes
// (section.rb:142-152).
func deleteSection(r *request) answer {
	return withSection(r, func(s *cmsSection) answer {
		if s.builtin {
			return unprocessableError(msgBuiltinUndeletable)
		}
		for _, tp := range r.t.templates {
			if (tp.kind == cmsPage || tp.kind == cmsBuiltinPage) && tp.sectionID == s.id {
				tp.sectionID = s.parentID
			}
		}
		for _, f := range r.t.files {
			if f.sectionID == s.id {
				f.sectionID = s.parentID
			}
		}
		for _, c := range r.t.sections {
			if c.parentID == s.id {
				c.parentID = s.parentID
			}
		}
		delete(r.t.sections, s.id)
		return deleted()
	})
}

// ---------------------------------------------------------------------------------------------------
// Templates

// templatePermits are the attributes each kind may write (ALLOWED_PARAMS, templates_controller.rb:4-10),
// by the key template_type gives: the type parameter parameterized, else the record's class
// (templates_controller.rb:79-87). Other attributes are dropped silently; an unknown key permits none.
var templatePermits = map[string][]string{
	"page":            {"title", "path", "content_type", "system_name", "section_id", "layout_id", "liquid_enabled", "draft", "handler"},
	"builtin-page":    {"layout_id", "draft"},
	"layout":          {"system_name", "draft", "title", "liquid_enabled"},
	"partial":         {"system_name", "draft"},
	"builtin-partial": {"draft"},
}

// permitKey is template_type for a request on tp (nil on create).
func permitKey(r *request, tp *cmsTemplate) string {
	if v := r.form.Get("type"); strings.TrimSpace(v) != "" {
		return parameterize(v)
	}
	if tp == nil {
		return ""
	}
	return strings.ReplaceAll(tp.kind, "_", "-")
}

// createTemplate is TemplateService::Create (template_service.rb:23-71): params.require(:template)
// first, then the type, exactly page, layout or partial; a page's section and layout looked up.
func createTemplate(r *request) answer {
	if !templatesAPI.sent(r) {
		return parameterMissing(templatesAPI.wrapper)
	}
	kind := r.form.Get("type")
	if kind != cmsPage && kind != cmsLayout && kind != cmsPartial {
		return unprocessableError(fmt.Sprintf("Unknown template type '%s'", kind))
	}
	tp := &cmsTemplate{kind: kind, stamps: newStamps()}
	if kind == cmsPage {
		tp.contentType = "text/html" // set_default_values (page.rb:7,92-96)
	}
	applyTemplateForm(r, tp, templatePermits[permitKey(r, nil)])
	if kind == cmsPage {
		if a := attachSection(r, tp, true); a.code != 0 {
			return a
		}
		if a := attachLayout(r, tp, false); a.code != 0 {
			return a
		}
	}
	if a := validateTemplate(r.t, tp); a.code != 0 {
		return a
	}
	tp.id = r.t.cmsID()
	r.t.templates[tp.id] = tp
	return answer{http.StatusCreated, tp.json(false)}
}

// updateTemplate is TemplateService::Update (template_service.rb:73-116): a page's section and layout
// re-attached, then the permitted attributes written; draft, never published.
func updateTemplate(r *request) answer {
	return withTemplate(r, func(tp *cmsTemplate) answer {
		if !templatesAPI.sent(r) {
			return parameterMissing(templatesAPI.wrapper)
		}
		next := *tp
		applyTemplateForm(r, &next, templatePermits[permitKey(r, tp)])
		if next.kind == cmsPage {
			if a := attachSection(r, &next, false); a.code != 0 {
				return a
			}
			if a := attachLayout(r, &next, true); a.code != 0 {
				return a
			}
		}
		if a := validateTemplate(r.t, &next); a.code != 0 {
			return a
		}
		next.touch()
		*tp = next
		return answer{http.StatusOK, tp.json(false)}
	})
}

// applyTemplateForm writes the permitted attributes sent. section_id and layout_id are assigned raw (a
// built-in page's layout_id is not checked, template_service.rb; a page's are looked up after).
// A blank handler is nil (symbolize).
func applyTemplateForm(r *request, tp *cmsTemplate, permitted []string) {
	for _, field := range permitted {
		if !has(r, field) {
			continue
		}
		v := r.form.Get(field)
		switch field {
		case "title":
			tp.title = v
		case "path":
			tp.path = v
		case "content_type":
			tp.contentType = v
		case "system_name":
			tp.systemName = v
		case "handler":
			tp.handler = strings.TrimSpace(v)
		case "draft":
			tp.draft = &v
		case "liquid_enabled":
			tp.liquid = railsBool(v)
		case "section_id":
			tp.sectionID, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		case "layout_id":
			tp.layoutID, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
}

// attachSection is attach_section: the top-level section_id, else section_name (a system name), of the
// tenant; sent but unknown is 422 {"error":"Unknown section: '<value>'"}; not sent, root on create and
// unchanged on update (template_service.rb:44-55,84-93,136-142).
func attachSection(r *request, tp *cmsTemplate, create bool) answer {
	id, name := r.form["section_id"], r.form["section_name"]
	var s *cmsSection
	switch {
	case len(id) > 0 && strings.TrimSpace(id[0]) != "":
		s = r.t.sectionByID(id[0])
	case len(name) > 0 && strings.TrimSpace(name[0]) != "":
		s = r.t.sectionNamed(name[0], false)
	}
	switch {
	case s != nil:
		tp.sectionID = s.id
	case len(id) > 0:
		return unprocessableError(fmt.Sprintf("Unknown section: '%s'", id[0]))
	case len(name) > 0:
		return unprocessableError(fmt.Sprintf("Unknown section: '%s'", name[0]))
	case create:
		tp.sectionID = r.t.rootSection().id
	}
	return answer{}
}

// attachLayout is attach_layout: layout_id, else layout_name, among the tenant's layouts; sent but
// unknown is 422 {"error":"Unknown layout: '<value>'"}; on update, sent empty removes the layout; not
// sent, none on create and unchanged on update (template_service.rb:57-66,95-106,144-150).
func attachLayout(r *request, tp *cmsTemplate, update bool) answer {
	id, name := r.form["layout_id"], r.form["layout_name"]
	var l *cmsTemplate
	switch {
	case len(id) > 0 && id[0] != "":
		lid, _ := strconv.ParseInt(strings.TrimSpace(id[0]), 10, 64)
		if x := r.t.templates[lid]; x != nil && x.kind == cmsLayout {
			l = x
		}
	case len(name) > 0 && name[0] != "":
		l = r.t.templateNamed(cmsLayout, name[0])
	}
	switch {
	case l != nil:
		tp.layoutID = l.id
	case update && ((len(id) > 0 && id[0] == "") || (len(name) > 0 && name[0] == "")):
		tp.layoutID = 0
	case len(id) > 0:
		return unprocessableError(fmt.Sprintf("Unknown layout: '%s'", id[0]))
	case len(name) > 0:
		return unprocessableError(fmt.Sprintf("Unknown layout: '%s'", name[0]))
	}
	return answer{}
}

// templateNamed is the tenant's template of a kind with that system name, nil if none.
func (t *tenant) templateNamed(kind, systemName string) *cmsTemplate {
	for _, id := range sortedIDs(t.templates, func(tp *cmsTemplate) bool { return tp.kind == kind && tp.systemName == systemName }) {
		return t.templates[id]
	}
	return nil
}

// templateSystemName is CMS::Template's system_name format (template.rb:27-28).
var templateSystemName = regexp.MustCompile(`^\w[\w\-/_]+$`)

// builtinPartialNames are CMS::Builtin::Partial.system_name_whitelist (app/models/cms/builtin.rb:164-176)
// and legalTermNames CMS::Builtin::LegalTerm's: names a partial may not take (partial.rb:4-12).
var (
	builtinPartialNames = []string{"field", "shared/pagination", "shared/swagger_ui", "submenu", "menu_item", "users_menu",
		"login/sso", "signup/cas", "messages/menu", "stats/chart", "applications/form"}
	legalTermNames = []string{"signup_licence", "service_subscription_licence", "new_application_licence"}
)

// msgMissingContent is en.yml's cms/layout missing_content (config/locales/en.yml:2124) as Rails renders
// it: the "%" are written as the HTML entity &#37; there, and nothing decodes them.
const msgMissingContent = "must contain '{&#37; content &#37;}' tag"

var contentTag = regexp.MustCompile(`\{%\s*content\s*%\}`)

// validateTemplate is the validations of CMS::Template (template.rb:26-36,178-189) and of the
// template's kind (page.rb, layout.rb, partial.rb, base_page.rb), with a page's normalisations: path
// without trailing slashes, system_name defaulting to the title parameterized.
func validateTemplate(t *tenant, tp *cmsTemplate) answer {
	errs := fieldErrors{}
	if tp.kind == cmsPage {
		if tp.path != "" && strings.Trim(tp.path, "/") != "" { // strip_trailing_slashes (page.rb:102-106)
			tp.path = strings.TrimRight(tp.path, "/")
		}
		tp.path = leadingSlashes.ReplaceAllString(tp.path, "/")
		if strings.TrimSpace(tp.title) != "" && strings.TrimSpace(tp.systemName) == "" {
			tp.systemName = parameterize(tp.title)
		}
	}
	if tp.systemName != "" {
		if !templateSystemName.MatchString(tp.systemName) {
			// The format validator's :invalid, which activerecord.errors.messages.invalid words "invalid"
			// (config/locales/en.yml:1957) for every model, CMS::Template's kinds with no message of their own.
			errs.add("system_name", msgInvalid)
		}
		for _, o := range t.templates {
			if o.id != tp.id && o.kind == tp.kind && o.systemName == tp.systemName {
				errs.add("system_name", msgTaken)
				break
			}
		}
	}
	tooLong(errs, "system_name", tp.systemName)
	if tp.handler != "" && tp.handler != "markdown" && tp.handler != "textile" { // CMS::Handler.available
		errs.add("handler", "is not included in the list")
	}
	tooLong(errs, "title", tp.title)
	tooLong(errs, "content_type", tp.contentType)
	if tp.liquidEnabled() && tp.draft != nil {
		if msg := liquidSyntaxError(*tp.draft); msg != "" {
			errs.add("draft", msg)
		}
	}
	switch tp.kind {
	case cmsPage:
		validatePage(t, tp, errs)
	case cmsLayout:
		if strings.TrimSpace(tp.systemName) == "" {
			errs.add("system_name", msgBlank)
		}
		if tp.systemName == "main_layout" { // yield_content_presence (layout.rb:37-49)
			for field, v := range map[string]*string{"draft": tp.draft, "published": tp.published} {
				if v != nil && !contentTag.MatchString(*v) {
					errs.add(field, msgMissingContent)
				}
			}
		}
	case cmsPartial:
		if strings.TrimSpace(tp.systemName) == "" {
			errs.add("system_name", msgBlank)
		}
		if slices.Contains(builtinPartialNames, tp.systemName) || slices.Contains(legalTermNames, tp.systemName) {
			errs.add("system_name", "reserved for internal use")
		}
	}
	return errs.answer()
}

// validatePage is CMS::Page's own validations (page.rb:17-27, base_page.rb:8-9,27-31). path's errors
// come in porta's order: length (template.rb:33), then verify_path_format (page.rb:19, which writes the
// normalised path back before the next ones read it), presence, the slash, uniqueness, then the
// reserved paths (page.rb:22-25).
func validatePage(t *tenant, tp *cmsTemplate, errs fieldErrors) {
	if strings.TrimSpace(tp.title) == "" {
		errs.add("title", msgBlank)
	}
	tooLong(errs, "path", tp.path)
	checkPath(&tp.path, "path", "was invalid. Please verify it and save again", errs)
	if strings.TrimSpace(tp.path) == "" {
		errs.add("path", msgBlank)
	}
	if !strings.HasPrefix(tp.path, "/") {
		errs.add("path", "needs to start with a slash ( / )")
	}
	if tp.path != "" {
		for _, o := range t.templates {
			if o.id != tp.id && o.kind == cmsPage && o.path == tp.path {
				errs.add("path", msgTaken)
				break
			}
		}
	}
	if slices.Contains(reservedPagePaths, tp.path) {
		errs.add("path", msgReserved)
	}
	if t.sections[tp.sectionID] == nil {
		errs.add("section_id", "must belong to the same provider")
	}
}

// reservedPagePaths are CMS::Page::RESERVED_PATHS (app/models/cms/page.rb:3-5, exclusion at :25): the
// file names terms, privacy and refunds, bare or with .html or .htm. They have no leading slash: only a
// path that also lacks the slash porta requires is reserved ("terms", "terms/" once stripped), and
// "/terms" is not.
var reservedPagePaths = []string{"terms", "terms.html", "terms.htm", "privacy", "privacy.html", "privacy.htm",
	"refunds", "refunds.html", "refunds.htm"}

// msgReserved is Rails' exclusion message (errors.messages.exclusion; porta's en.yml has no key of its
// own).
const msgReserved = "is reserved"

// deleteTemplate is TemplateService::Destroy (template_service.rb:118-132): built-ins are refused
// (422); a layout some page uses is kept, its before_destroy aborting, yet answered 200 with no body
// (layout.rb:8,18-20,29-31).
func deleteTemplate(r *request) answer {
	return withTemplate(r, func(tp *cmsTemplate) answer {
		if tp.builtin() {
			return unprocessableError(msgBuiltinUndeletable)
		}
		if tp.kind == cmsLayout && len(sortedIDs(r.t.templates, func(p *cmsTemplate) bool { return p.kind == cmsPage && p.layoutID == tp.id })) > 0 {
			return deleted()
		}
		delete(r.t.templates, tp.id)
		return deleted()
	})
}

// ---------------------------------------------------------------------------------------------------
// Files

// createFile is FilesController#create (files_controller.rb:28-34): a multipart/form-data body; the
// section is the top-level section_id's of the tenant, or root.
func createFile(r *request) answer {
	if !filesAPI.sent(r) {
		return parameterMissing(filesAPI.wrapper)
	}
	f := &cmsFile{owner: r.t.name, secret: randomHex(8), stamps: newStamps()}
	if s := r.t.sectionByID(r.form.Get("section_id")); s != nil {
		f.sectionID = s.id
	} else {
		f.sectionID = r.t.rootSection().id
	}
	if refusal := applyFileForm(r, f, false); refusal.code != 0 {
		return refusal
	}
	f.id = r.t.cmsID()
	r.t.files[f.id] = f
	return answer{http.StatusCreated, f.json()}
}

// updateFile writes any of path, section_id (raw: an unknown one fails), downloadable and attachment
// (files_controller.rb:44-47).
func updateFile(r *request) answer {
	return withFile(r, func(f *cmsFile) answer {
		if !filesAPI.sent(r) {
			return parameterMissing(filesAPI.wrapper)
		}
		next := *f
		if refusal := applyFileForm(r, &next, true); refusal.code != 0 {
			return refusal
		}
		next.touch()
		*f = next
		return answer{http.StatusOK, f.json()}
	})
}

// applyFileForm applies the form and validates the file (file.rb:25-36,62-65,113-117): path and
// attachment required, path given a leading "/" and unique among the tenant's files, the section the
// tenant's. No type or size limit.
func applyFileForm(r *request, f *cmsFile, withSection bool) answer {
	errs := fieldErrors{}
	if has(r, "path") {
		f.path = r.form.Get("path")
		if !strings.HasPrefix(f.path, "/") {
			f.path = "/" + f.path
		}
	}
	if has(r, "downloadable") {
		b := railsBool(r.form.Get("downloadable"))
		f.downloadable = b != nil && *b
	}
	if withSection && has(r, "section_id") {
		f.sectionID = -1
		if s := r.t.sectionByID(r.form.Get("section_id")); s != nil {
			f.sectionID = s.id
		}
	}
	if refusal := readAttachment(r, f); refusal.code != 0 {
		return refusal
	}
	if f.path == "" {
		errs.add("path", msgBlank)
	}
	if f.name == "" {
		errs.add("attachment", msgBlank)
	}
	for _, o := range r.t.files {
		if o.id != f.id && o.path == f.path && f.path != "" {
			errs.add("path", msgTaken)
			break
		}
	}
	tooLong(errs, "path", f.path)
	checkPath(&f.path, "path", "is not a valid URI", errs)
	if f.sectionID < 0 {
		errs.add("section_id", "must belong to the same provider")
	}
	return errs.answer()
}

// readAttachment takes the attachment file part (attachment or file[attachment]), if sent: its bytes,
// its file name (title) and its content type, from the part's header or else the extension.
func readAttachment(r *request, f *cmsFile) answer {
	parts := append(r.uploads["attachment"], r.uploads["file[attachment]"]...)
	if len(parts) == 0 {
		return answer{}
	}
	rc, err := parts[0].Open()
	if err != nil {
		return answer{http.StatusBadRequest, plainText(err.Error())}
	}
	defer rc.Close()
	content, err := io.ReadAll(rc)
	if err != nil {
		return answer{http.StatusBadRequest, plainText(err.Error())}
	}
	f.content, f.name, f.uploaded = content, slashpath.Base(strings.ReplaceAll(parts[0].Filename, `\`, "/")), time.Now().Unix()
	f.contentType = contentTypeOf(parts[0].Header.Get("Content-Type"), f.name)
	return answer{}
}

// contentTypeOf is the part's content type, or, when it has none or a generic one, the file name's
// extension's (application/octet-stream for an unknown one).
func contentTypeOf(header, name string) string {
	if ct, _, err := mime.ParseMediaType(header); err == nil && ct != "application/octet-stream" {
		return ct
	}
	if ct, known := extensionTypes[strings.ToLower(slashpath.Ext(name))]; known {
		return ct
	}
	if ct, _, err := mime.ParseMediaType(mime.TypeByExtension(slashpath.Ext(name))); err == nil {
		return ct
	}
	return "application/octet-stream"
}

// extensionTypes fix the types of common extensions, which mime.TypeByExtension takes from the machine.
var extensionTypes = map[string]string{".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".ico": "image/vnd.microsoft.icon", ".svg": "image/svg+xml", ".css": "text/css", ".js": "text/javascript",
	".html": "text/html", ".txt": "text/plain", ".json": "application/json", ".pdf": "application/pdf"}
