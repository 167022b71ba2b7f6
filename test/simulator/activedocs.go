package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ActiveDocs specs (porta's ApiDocs::Service, app/models/api_docs/service.rb) as
// Admin::Api::ApiDocsServicesController serves them (app/controllers/admin/api/api_docs_services_controller.rb).

type apiDoc struct {
	id, serviceID                     int64
	name, systemName, body            string
	description                       string
	descriptionSet                    bool // porta leaves out a nil description
	published, skipSwaggerValidations bool
	stamps
}

// json is ApiDocs::ServiceRepresenter (app/representers/api_docs/service_representer.rb): representable
// leaves out nil properties, so service_id is absent for a spec bound to no product, and description
// when never set.
func (d *apiDoc) json() map[string]any {
	out := map[string]any{"id": d.id, "name": d.name, "system_name": d.systemName, "body": d.body,
		"published": d.published, "skip_swagger_validations": d.skipSwaggerValidations, "created_at": d.created, "updated_at": d.updated}
	if d.serviceID != 0 {
		out["service_id"] = d.serviceID
	}
	if d.descriptionSet {
		out["description"] = d.description
	}
	return out
}

func activeDocRoutes() []route {
	return []route{
		// index: all the tenant's specs, not paged (api_docs_services_controller.rb:22-25).
		handle("GET", "/admin/api/active_docs.json", func(r *request) answer {
			return listOf("api_docs", "api_doc", sortedIDs(r.t.docs, nil), jsonOf(r.t.docs), r.form, unpaged)
		}),
		handle("POST", "/admin/api/active_docs.json", createActiveDoc),
		handle("GET", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer { return ok("api_doc", d.json()) })
		}),
		// update takes the same parameters as create but system_name (api_docs_services_controller.rb:42-45,56-59;
		// attr_readonly :system_name, service.rb:11).
		handle("PUT", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer {
				next := *d
				errs := fieldErrors{}
				if refusal := applyDocForm(r, &next, errs); refusal.code != 0 {
					return refusal
				}
				if refusal := errs.answer(); refusal.code != 0 {
					return refusal
				}
				next.touch()
				*d = next
				return ok("api_doc", d.json())
			})
		}),
		handle("DELETE", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer { delete(r.t.docs, d.id); return deleted() })
		}),
	}
}

// createActiveDoc is ApiDocsServicesController#create (api_docs_services_controller.rb:29-32): the
// system name is the one sent or, when blank, derived from the name (SystemName,
// app/lib/system_name.rb:8,35-63: name.parameterize.underscore, "api_docs_service_<random hex>" when the
// name gives nothing), well formed (system_name.rb:15: "invalid", config/locales/en.yml:1957) and unique
// in the tenant (has_system_name uniqueness_scope: :account_id, service.rb:14). 201 with the spec.
func createActiveDoc(r *request) answer {
	d := &apiDoc{systemName: r.form.Get("system_name"), stamps: newStamps()}
	if strings.TrimSpace(d.systemName) == "" {
		const internal = "api_docs_service"
		if d.systemName = deriveSystemName(strings.TrimSpace(r.form.Get("name")), internal, 0); d.systemName == internal+"_0" {
			d.systemName = internal + "_" + randomHex(6)
		}
	}
	errs := fieldErrors{}
	if !systemNamePattern.MatchString(d.systemName) {
		errs.add("system_name", msgInvalid)
	}
	for _, o := range r.t.docs {
		if o.systemName == d.systemName {
			errs.add("system_name", msgTaken)
			break
		}
	}
	if refusal := applyDocForm(r, d, errs); refusal.code != 0 {
		return refusal
	}
	if refusal := errs.answer(); refusal.code != 0 {
		return refusal
	}
	d.id = r.t.id()
	r.t.docs[d.id] = d
	return created("api_doc", d.json())
}

// applyDocForm applies the writable attributes (name body description published
// skip_swagger_validations service_id, api_docs_services_controller.rb:56-59) and adds to errs the
// model's validations (service.rb:18-22,36): name and body present, and the body a valid spec
// (specErrors). Before anything, a service_id that is not one of the tenant's products is refused:
// the answer is then 422 {"error":"Service not found"} (the before_action new_service_id_permitted,
// api_docs_services_controller.rb:7,69-74); a blank service_id unbinds the spec.
func applyDocForm(r *request, d *apiDoc, errs fieldErrors) answer {
	if has(r, "service_id") {
		d.serviceID = 0
		if v := strings.TrimSpace(r.form.Get("service_id")); v != "" {
			id, err := strconv.ParseInt(v, 10, 64)
			if _, found := r.t.services[id]; err != nil || !found {
				return answer{http.StatusUnprocessableEntity, map[string]string{"error": "Service not found"}}
			}
			d.serviceID = id
		}
	}
	if has(r, "name") {
		d.name = r.form.Get("name")
	}
	if has(r, "description") {
		d.description, d.descriptionSet = r.form.Get("description"), true
	}
	if has(r, "body") {
		d.body = r.form.Get("body")
	}
	if has(r, "published") {
		d.published = flag(r.form.Get("published"))
	}
	if has(r, "skip_swagger_validations") {
		d.skipSwaggerValidations = flag(r.form.Get("skip_swagger_validations"))
	}
	if strings.TrimSpace(d.name) == "" {
		errs.add("name", "can't be blank")
	}
	if len(d.name) > 255 {
		errs.add("name", "is too long (maximum is 255 characters)")
	}
	if strings.TrimSpace(d.body) == "" {
		errs.add("body", "can't be blank")
	}
	specErrors(d.body, d.skipSwaggerValidations, errs)
	return answer{}
}

// Messages of the spec validation (config/locales/en.yml:1947-1950,1987-1989).
const (
	msgSpecInvalidJSON    = "Invalid JSON"
	msgSpecInvalid        = "JSON Spec is invalid"
	msgSpecInvalidVersion = "Invalid Swagger version"
	msgSpecBodyAndQuery   = "JSON Spec can not have paramType='body' and paramType='query' on the same method."
	msgSpecServerURL      = "Server URL in the specification is invalid"
)

// specVersionNumber is ThreeScale::Swagger::Specification#swagger_version's pattern
// (app/lib/three_scale/swagger/specification.rb:196-198).
var specVersionNumber = regexp.MustCompile(`^(\d+\.\d+)(\..+)?$`)

var leadingNumber = regexp.MustCompile(`^\s*[+-]?\d+(\.\d+)?`)

// specErrors validates a spec body as ThreeScale::Swagger::Validator does
// (app/lib/three_scale/swagger/validator.rb:6-35) with ThreeScale::Swagger::Specification
// (app/lib/three_scale/swagger/specification.rb):
//
//   - the body is parsed as JSON (JSON.parse: YAML is not accepted); anything but an object is read as
//     {} (specification.rb:164-176);
//   - its version is the value of the first of openapi, swagger, swaggerVersion present; 1.2 or more is
//     cut to major.minor, anything less is "1.0" (specification.rb:196-198,207-213); the version picks the
//     validator, V10, V12, V20, V30, V31, or "Invalid Swagger version" for any other (:217-225);
//   - always, even with skip_swagger_validations: the servers (the basePath for 1.x, scheme://host for
//     2.0, servers[].url with their variables for 3.x) must be blank or absolute http, https, ws or wss
//     URLs with a host, else base_path "invalid" and body "Server URL in the specification is invalid"
//     (validator.rb:29-35);
//   - unless skip_swagger_validations: the version's checks, reported on body. V10 wants JSON and an
//     "apis" array, and no operation with both query and body parameters (specification.rb:124-149);
//     V12, V20, V30 and V31 validate against their JSON schema with json_schemer (:76-98, :46-70). The
//     simulator checks the schemas' required properties only, with json_schemer's message ("object at
//     root is missing required properties: info, paths").
func specErrors(body string, skip bool, errs fieldErrors) {
	var parsed any
	validJSON := json.Unmarshal([]byte(body), &parsed) == nil
	doc, _ := parsed.(map[string]any)
	if doc == nil {
		doc = map[string]any{}
	}
	version := "1.0"
	for _, attr := range []string{"openapi", "swagger", "swaggerVersion"} {
		v, present := doc[attr]
		if !present {
			continue
		}
		s := fmt.Sprint(v)
		if rubyToF(s) >= 1.2 {
			version = ""
			if m := specVersionNumber.FindStringSubmatch(s); m != nil {
				version = m[1]
			}
		}
		break
	}
	servers, ok := specServers(version, doc)
	if !ok {
		errs.add("body", msgSpecInvalid) // KeyError or TypeError, validator.rb:11-12
		return
	}
	for _, s := range servers {
		if s != "" && !absoluteServerURL(s) {
			errs.add("base_path", msgInvalid)
			errs.add("body", msgSpecServerURL)
			break
		}
	}
	if skip {
		return
	}
	switch version {
	case "1.0":
		if !validJSON {
			errs.add("body", msgSpecInvalidJSON)
			return
		}
		apis, isList := doc["apis"].([]any)
		if !isList {
			errs.add("body", msgSpecInvalid)
			return
		}
		for _, api := range apis {
			obj, _ := api.(map[string]any)
			ops, _ := obj["operations"].([]any)
			for _, op := range ops {
				opObj, _ := op.(map[string]any)
				params, _ := opObj["parameters"].([]any)
				query, body := false, false
				for _, p := range params {
					pObj, _ := p.(map[string]any)
					query = query || pObj["paramType"] == "query"
					body = body || pObj["paramType"] == "body"
				}
				if query && body {
					errs.add("body", msgSpecBodyAndQuery)
					return
				}
			}
		}
	case "1.2":
		missingProperties(doc, "", []string{"swaggerVersion", "basePath", "apis"}, errs)
	case "2.0":
		missingProperties(doc, "", []string{"swagger", "info", "paths"}, errs)
		if info, isObj := doc["info"].(map[string]any); isObj {
			missingProperties(info, "/info", []string{"version", "title"}, errs)
		}
	case "3.0", "3.1":
		required := []string{"openapi", "info", "paths"}
		if version == "3.1" {
			required = required[:2]
		}
		missingProperties(doc, "", required, errs)
		if info, isObj := doc["info"].(map[string]any); isObj {
			missingProperties(info, "/info", []string{"title", "version"}, errs)
		}
	default:
		errs.add("body", msgSpecInvalidVersion)
	}
}

// missingProperties adds json_schemer's error for the required properties obj lacks, in the schema's
// order.
func missingProperties(obj map[string]any, at string, required []string, errs fieldErrors) {
	var missing []string
	for _, k := range required {
		if _, present := obj[k]; !present {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	where := "root"
	if at != "" {
		where = "`" + at + "`"
	}
	errs.add("body", "object at "+where+" is missing required properties: "+strings.Join(missing, ", "))
}

// specServers returns the servers Validator#valid_base_path? checks for a spec version
// (specification.rb:15-21,63-65,106-111; ThreeScale::OpenApi::UrlResolver,
// app/lib/three_scale/open_api/url_resolver.rb:12-43), and false where porta's code raises a TypeError.
func specServers(version string, doc map[string]any) ([]string, bool) {
	switch version {
	case "2.0":
		schemes, _ := doc["schemes"].([]any)
		host, _ := doc["host"].(string)
		if len(schemes) > 0 && host != "" {
			return []string{fmt.Sprint(schemes[0]) + "://" + host}, true
		}
		return []string{""}, true
	case "3.0", "3.1":
		raw, present := doc["servers"]
		if !present {
			return nil, true
		}
		list, isList := raw.([]any)
		if !isList {
			return nil, false
		}
		var out []string
		for _, s := range list {
			server, isObj := s.(map[string]any)
			if !isObj {
				return nil, false
			}
			u, _ := server["url"].(string)
			vars, _ := server["variables"].(map[string]any)
			out = append(out, expandServerURL(u, vars)...)
		}
		return out, true
	default:
		base, _ := doc["basePath"].(string)
		return []string{strings.ToLower(base)}, true
	}
}

// expandServerURL expands a server URL with every combination of its variables' values (enum, else
// default), without URL-encoding them (UrlResolver.resolve_servers_from_variables).
func expandServerURL(u string, vars map[string]any) []string {
	if len(vars) == 0 {
		return []string{u}
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []string{u}
	for _, n := range names {
		v, _ := vars[n].(map[string]any)
		values, _ := v["enum"].([]any)
		if len(values) == 0 {
			values = []any{v["default"]}
		}
		var next []string
		for _, partial := range out {
			for _, val := range values {
				s := ""
				if val != nil {
					s = fmt.Sprint(val)
				}
				next = append(next, strings.ReplaceAll(partial, "{"+n+"}", s))
			}
		}
		out = next
	}
	return out
}

// absoluteServerURL is Validator.parse_uri with the scheme check: a URL with a host, in http, https, ws
// or wss (validator.rb:29-41).
func absoluteServerURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return true
	}
	return false
}

// rubyToF is Ruby's String#to_f: the leading decimal number of s, 0 when there is none.
func rubyToF(s string) float64 {
	m := leadingNumber.FindString(s)
	f, _ := strconv.ParseFloat(strings.TrimSpace(m), 64)
	return f
}

func withDoc(r *request, f func(*apiDoc) answer) answer {
	d, found := r.t.docs[r.params["id"]]
	if !found {
		return notFound()
	}
	return f(d)
}
