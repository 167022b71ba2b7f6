package simulator

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// minimalOAS is the smallest OpenAPI 3.0 document porta accepts.
const minimalOAS = `{"openapi":"3.0.3","info":{"title":"Pets","version":"1.0"},"paths":{}}`

func TestActiveDocs(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	res := h.check("create", "POST", "/admin/api/active_docs.json", url.Values{"name": {"Pet Store"}, "body": {minimalOAS}}, 201, "")
	doc, _ := res.body.(map[string]any)["api_doc"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"system_name": "pet_store", "published": false, "skip_swagger_validations": false, "service_id": nil, "description": nil},
		fields(doc, "", "system_name", "published", "skip_swagger_validations", "service_id", "description")); diff != "" {
		t.Errorf("created spec (-want +got):\n%s", diff)
	}
	if _, has := doc["service_id"]; has {
		t.Errorf("a spec of no product renders service_id: %v", doc)
	}
	id := int64(doc["id"].(float64))

	cases := []struct {
		name     string
		form     url.Values
		wantCode int
		wantRaw  string
	}{
		{"system name taken", url.Values{"name": {"Pet Store"}, "body": {minimalOAS}}, 422, `{"errors":{"system_name":["has already been taken"]}}`},
		{"system name malformed", url.Values{"name": {"x1"}, "system_name": {"a b"}, "body": {minimalOAS}}, 422, `{"errors":{"system_name":["invalid"]}}`},
		// SystemName's format wants two characters at least, so a one-letter name is refused.
		{"one-letter name", url.Values{"name": {"x"}, "body": {minimalOAS}}, 422, `{"errors":{"system_name":["invalid"]}}`},
		{"nothing", url.Values{"system_name": {"empty"}}, 422, `{"errors":{"body":["can't be blank","Invalid JSON"],"name":["can't be blank"]}}`},
		{"YAML is not JSON", url.Values{"name": {"yaml"}, "body": {"openapi: 3.0.3\ninfo: {}\n"}}, 422, `{"errors":{"body":["Invalid JSON"]}}`},
		{"OpenAPI without info and paths", url.Values{"name": {"oas"}, "body": {`{"openapi":"3.0.3"}`}}, 422,
			`{"errors":{"body":["object at root is missing required properties: info, paths"]}}`},
		{"OpenAPI info without title", url.Values{"name": {"oas"}, "body": {`{"openapi":"3.0.3","info":{"version":"1"},"paths":{}}`}}, 422,
			"{\"errors\":{\"body\":[\"object at `/info` is missing required properties: title\"]}}"},
		{"Swagger 2 without paths", url.Values{"name": {"sw2"}, "body": {`{"swagger":"2.0","info":{"title":"t","version":"1"}}`}}, 422,
			`{"errors":{"body":["object at root is missing required properties: paths"]}}`},
		{"no version, no apis", url.Values{"name": {"ver"}, "body": {`{}`}}, 422, `{"errors":{"body":["JSON Spec is invalid"]}}`},
		{"unknown version", url.Values{"name": {"ver"}, "body": {`{"openapi":"4.0.0"}`}}, 422, `{"errors":{"body":["Invalid Swagger version"]}}`},
		{"relative server URL, even unvalidated", url.Values{"name": {"rel"}, "skip_swagger_validations": {"true"},
			"body": {`{"openapi":"3.0.3","servers":[{"url":"/v1"}]}`}}, 422,
			`{"errors":{"base_path":["invalid"],"body":["Server URL in the specification is invalid"]}}`},
		{"not a product of the tenant", url.Values{"name": {"prod"}, "body": {minimalOAS}, "service_id": {"999999"}}, 422, `{"error":"Service not found"}`},
		{"unvalidated", url.Values{"name": {"Raw"}, "body": {"not json at all"}, "skip_swagger_validations": {"1"}}, 201, ""},
		{"server URL with a variable", url.Values{"name": {"Vars"}, "body": {`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},` +
			`"servers":[{"url":"{root}/v1","variables":{"root":{"default":"https://api.example.com"}}}]}`}}, 201, ""},
		{"Swagger 2 with host", url.Values{"name": {"Swagger"}, "body": {`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},` +
			`"host":"api.example.com","schemes":["https"]}`}}, 201, ""},
		{"Swagger 1.0", url.Values{"name": {"Old"}, "body": {`{"basePath":"https://api.example.com","apis":[]}`}}, 201, ""},
	}
	for _, tc := range cases {
		h.check(tc.name, "POST", "/admin/api/active_docs.json", tc.form, tc.wantCode, tc.wantRaw)
	}

	p := path("/admin/api/active_docs/%d.json", id)
	res = h.check("bind to a product", "PUT", p, url.Values{"service_id": {itoa(svc)}, "system_name": {"renamed"}, "description": {"d"},
		"published": {"true"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"system_name": "pet_store", "service_id": float64(svc), "description": "d", "published": true},
		fields(res.body, "api_doc", "system_name", "service_id", "description", "published")); diff != "" {
		t.Errorf("updated spec (-want +got):\n%s", diff)
	}
	h.check("invalid update", "PUT", p, url.Values{"body": {"{"}}, 422, `{"errors":{"body":["Invalid JSON"]}}`)
	res = h.check("unbind", "PUT", p, url.Values{"service_id": {""}}, 200, "")
	if got := fields(res.body, "api_doc", "service_id"); got["service_id"] != nil {
		t.Errorf("unbound spec %s", res.raw)
	}
	res = h.check("list", "GET", "/admin/api/active_docs.json", nil, 200, "")
	if n := len(listed(res.body, "api_docs", "api_doc")); n != 5 {
		t.Errorf("%d specs, want 5: %s", n, res.raw)
	}
	h.check("delete", "DELETE", p, nil, 200, "")
	h.check("deleted", "GET", p, nil, 404, `{"status":"Not found"}`)
	if n := h.sim.Count("acme", KindAPIDocs); n != 4 {
		t.Errorf("%d specs left, want 4", n)
	}
}
