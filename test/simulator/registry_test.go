package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// manifest is a policy's schema with the fields porta's manifest requires, as JSON text; extra fields
// are added or (with a nil value) removed.
func manifest(name, version string, extra map[string]any) string {
	m := map[string]any{"$schema": "http://apicast.io/policy-v1.1/schema", "name": name, "version": version,
		"summary": "The " + name + " policy", "configuration": map[string]any{"type": "object"}}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	raw, _ := json.Marshal(m)
	return string(raw)
}

// sendAs sends a form as the tenant of token.
func (h *harness) sendAs(token, method, path string, form url.Values) result {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("", token)
	return h.roundTrip(req)
}

const registry = "/admin/api/registry/policies"

func TestRegistryCRUD(t *testing.T) {
	h := newHarness(t)
	h.check("empty list", "GET", registry+".json", nil, 200, `{"policies":[]}`)
	id := h.create(registry+".json", url.Values{"name": {"my policy"}, "version": {"1.0"}, "schema": {manifest("My policy", "1.0", nil)}}, "policy")
	res := h.check("read by id", "GET", path("%s/%d.json", registry, id), nil, 200, "")
	want := map[string]any{"id": float64(id), "name": "my policy", "version": "1.0", "schema": map[string]any{"$schema": "http://apicast.io/policy-v1.1/schema",
		"name": "My policy", "version": "1.0", "summary": "The My policy policy", "configuration": map[string]any{"type": "object"}}}
	if diff := cmp.Diff(want, fields(res.body, "policy", "id", "name", "version", "schema")); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	if obj := res.body.(map[string]any)["policy"].(map[string]any); obj["created_at"] == nil || len(obj) != 6 {
		t.Errorf("policy %v: want id, name, version, schema, created_at and updated_at", obj)
	}
	h.check("read by name-version", "GET", registry+"/my policy-1.0.json", nil, 200, res.raw)
	h.check("read by another name-version", "GET", registry+"/my policy-1.1.json", nil, 404, `{"status":"Not found"}`)
	h.check("read an unknown id", "GET", path("%s/%d.json", registry, id+100), nil, 404, `{"status":"Not found"}`)

	// A JSON body with the schema as an object; wrapped in policy.
	req, _ := http.NewRequest("POST", h.url+registry+".json", strings.NewReader(`{"policy":{"name":"other","version":"2","schema":`+manifest("Other", "2", nil)+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("", "tok")
	if res := h.roundTrip(req); res.code != 201 {
		t.Fatalf("create from JSON: %d %s", res.code, res.raw)
	}
	req, _ = http.NewRequest("POST", h.url+registry+".json", strings.NewReader(`{"name":"third","version":"3","schema":`+manifest("Third", "3", nil)+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("", "tok")
	res = h.roundTrip(req)
	if res.code != 201 || fields(res.body, "policy", "name")["name"] != "third" {
		t.Fatalf("create from unwrapped JSON, as porta-go-client sends it: %d %s", res.code, res.raw)
	}
	if n := len(listed(h.check("list", "GET", registry+".json", nil, 200, "").body, "policies", "policy")); n != 3 {
		t.Errorf("%d policies listed, want 3", n)
	}

	res = h.check("rename", "PUT", path("%s/%d.json", registry, id), url.Values{"name": {"renamed"}, "schema": {manifest("My policy", "1.0", nil)}}, 200, "")
	if got := fields(res.body, "policy", "name", "version"); !cmp.Equal(map[string]any{"name": "renamed", "version": "1.0"}, got) {
		t.Errorf("renamed: %v", got)
	}
	h.check("the old name-version is gone", "GET", registry+"/my policy-1.0.json", nil, 404, "")
	h.check("the new one reads", "GET", registry+"/renamed-1.0.json", nil, 200, "")
	res = h.check("a schema that is not JSON is ignored on update", "PUT", path("%s/%d.json", registry, id), url.Values{"schema": {"{nope"}}, 200, "")
	if s := fields(res.body, "policy", "schema")["schema"].(map[string]any); s["name"] != "My policy" {
		t.Errorf("schema after an update with bad JSON: %v, want the old one", s)
	}
	h.check("delete", "DELETE", path("%s/%d.json", registry, id), nil, 200, "")
	h.check("deleted", "GET", path("%s/%d.json", registry, id), nil, 404, `{"status":"Not found"}`)
	if n := h.sim.Count("acme", KindCustomPolicies); n != 2 {
		t.Errorf("%d custom policies, want 2", n)
	}
}

// TestRegistryValidations: porta's Policy validations and its specification check, with its messages.
func TestRegistryValidations(t *testing.T) {
	h := newHarness(t)
	h.create(registry+".json", url.Values{"name": {"taken"}, "version": {"1"}, "schema": {manifest("Taken", "1", nil)}}, "policy")
	versionPattern := `string at ` + "`/version`" + ` does not match pattern: ^((\\d+\\.)?(\\d+\\.)?(\\*|\\d+))|builtin$`
	cases := map[string]struct {
		form     url.Values
		wantCode int
		wantRaw  string
	}{
		"version taken": {url.Values{"name": {"taken"}, "version": {"1"}, "schema": {manifest("Taken", "1", nil)}}, 422,
			`{"errors":{"identifier":["has already been taken"],"version":["has already been taken"]}}`},
		"the same version under another name": {url.Values{"name": {"free"}, "version": {"1"}, "schema": {manifest("Taken", "1", nil)}}, 201, ""},
		"version differs from the schema's": {url.Values{"name": {"x"}, "version": {"2"}, "schema": {manifest("X", "1", nil)}}, 422,
			`{"errors":{"version":["differs from the schema version"]}}`},
		"builtin": {url.Values{"name": {"x"}, "version": {"builtin"}, "schema": {manifest("X", "builtin", nil)}}, 422,
			`{"errors":{"version":["cannot be 'builtin'"]}}`},
		"no summary nor configuration": {url.Values{"name": {"x"}, "version": {"1"}, "schema": {manifest("X", "1", map[string]any{"summary": nil, "configuration": nil})}}, 422,
			`{"errors":{"schema":["object at root is missing required properties: configuration, summary"]}}`},
		"summary too long": {url.Values{"name": {"x"}, "version": {"1"}, "schema": {manifest("X", "1", map[string]any{"summary": strings.Repeat("s", 76)})}}, 422,
			"{\"errors\":{\"schema\":[\"string length at `/summary` is greater than: 75\"]}}"},
		"a summary of 75 characters": {url.Values{"name": {"x75"}, "version": {"1"}, "schema": {manifest("X", "1", map[string]any{"summary": strings.Repeat("é", 75)})}}, 201, ""},
		"a version that is not one": {url.Values{"name": {"x"}, "version": {"v1"}, "schema": {manifest("X", "v1", nil)}}, 422,
			`{"errors":{"schema":["` + versionPattern + `"]}}`},
		"a description that is neither text nor lines": {url.Values{"name": {"x"}, "version": {"1"}, "schema": {manifest("X", "1", map[string]any{"description": []any{}})}}, 422,
			"{\"errors\":{\"schema\":[\"value at `/description` does not match exactly one `oneOf` schema\"]}}"},
		"the JSON Schema draft-07 $schema (the operator's sample)": {url.Values{"name": {"draft"}, "version": {"1"},
			"schema": {manifest("Draft", "1", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"})}}, 201, ""},
		"the v1 manifest with #manifest#": {url.Values{"name": {"v1"}, "version": {"1"},
			"schema": {manifest("V1", "1", map[string]any{"$schema": "http://apicast.io/policy-v1/schema#manifest#"})}}, 201, ""},
		"no $schema: v1.1": {url.Values{"name": {"bare"}, "version": {"1"}, "schema": {manifest("Bare", "1", map[string]any{"$schema": nil})}}, 201, ""},
		"another $schema": {url.Values{"name": {"x"}, "version": {"1"}, "schema": {manifest("X", "1", map[string]any{"$schema": "https://example.com/schema"})}}, 422,
			`{"errors":{"schema":["unsupported schema"]}}`},
		"a schema that is not JSON": {url.Values{"name": {"x"}, "version": {"1"}, "schema": {"{nope"}}, 422,
			"{\"errors\":{\"schema\":[\"can't be blank\",\"value at root is not an object\"],\"version\":[\"differs from the schema version\"]}}"},
		"no name": {url.Values{"version": {"1"}, "schema": {manifest("X", "1", nil)}}, 422,
			`{"errors":{"name":["can't be blank"]}}`},
		"name too long": {url.Values{"name": {strings.Repeat("n", 256)}, "version": {"1"}, "schema": {manifest("X", "1", nil)}}, 422,
			`{"errors":{"name":["is too long (maximum is 255 characters)"]}}`},
		"no schema":         {url.Values{"name": {"x"}, "version": {"1"}}, 400, "Required parameter missing: schema"},
		"a blank schema":    {url.Values{"name": {"x"}, "version": {"1"}, "schema": {" "}}, 400, "Required parameter missing: schema"},
		"nothing":           {url.Values{}, 400, "Required parameter missing: policy"},
		"wrapped in a form": {url.Values{"policy[name]": {"wrapped"}, "policy[version]": {"1"}, "policy[schema]": {manifest("W", "1", nil)}}, 201, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h.check(name, "POST", registry+".json", tc.form, tc.wantCode, tc.wantRaw)
		})
	}
}

// TestRegistryPolicyInUse: a policy some product's chain names (by name and version) cannot be deleted
// (403) nor have its name, version or schema changed (422); the chain itself takes any policy, known or
// not; another tenant's chains do not count.
func TestRegistryPolicyInUse(t *testing.T) {
	h := newHarness(t)
	id := h.create(registry+".json", url.Values{"name": {"ratelimit"}, "version": {"1.0"}, "schema": {manifest("Rate limit", "1.0", nil)}}, "policy")
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Shop"}}, "service")
	chain := path("/admin/api/services/%d/proxy/policies.json", svc)
	h.check("a chain with the policy, disabled, and an unknown one", "PUT", chain, url.Values{"policies_config": {
		`[{"name":"ratelimit","version":"1.0","configuration":{},"enabled":false},{"name":"alaska","version":"1","configuration":{}}]`}}, 200, "")

	inUse := `{"errors":{"base":["` + msgPolicyInUse + `"]}}`
	policy := path("%s/%d.json", registry, id)
	h.check("delete in use", "DELETE", policy, nil, 403, inUse)
	h.check("delete in use by name-version", "DELETE", registry+"/ratelimit-1.0.json", nil, 403, inUse)
	h.check("change the version in use", "PUT", policy, url.Values{"version": {"1.1"}, "schema": {manifest("Rate limit", "1.1", nil)}}, 422, inUse)
	h.check("change the schema in use", "PUT", policy, url.Values{"schema": {manifest("Rate limit", "1.0", map[string]any{"summary": "new"})}}, 422, inUse)
	h.check("an update that changes nothing", "PUT", policy, url.Values{"name": {"ratelimit"}, "schema": {manifest("Rate limit", "1.0", nil)}}, 200, "")

	res := h.sendAs("tok2", "POST", "/admin/api/services.json", url.Values{"name": {"Elsewhere"}})
	otherSvc := int64(fields(res.body, "service", "id")["id"].(float64))
	if res := h.sendAs("tok2", "PUT", path("/admin/api/services/%d/proxy/policies.json", otherSvc),
		url.Values{"policies_config": {`[{"name":"solo","version":"1","configuration":{}}]`}}); res.code != 200 {
		t.Fatalf("the other tenant's chain: %d %s", res.code, res.raw)
	}
	solo := h.create(registry+".json", url.Values{"name": {"solo"}, "version": {"1"}, "schema": {manifest("Solo", "1", nil)}}, "policy")
	h.check("another tenant's chain does not count", "DELETE", path("%s/%d.json", registry, solo), nil, 200, "")

	h.check("the chain without it", "PUT", chain, url.Values{"policies_config": {`[{"name":"apicast","version":"builtin","configuration":{}}]`}}, 200, "")
	h.check("delete no longer in use", "DELETE", policy, nil, 200, "")
}

// TestRegistryScope: the registry needs a token with the policy_registry scope; the policy chain takes
// policy_registry or account_management.
func TestRegistryScope(t *testing.T) {
	h := newHarness(t)
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Shop"}}, "service")
	denied := fmt.Sprintf(`{"error":%q}`, msgTokenPermissions)
	h.sim.SetTokenScopes("tok", "account_management")
	h.check("registry with account_management", "GET", registry+".json", nil, 403, denied)
	h.check("chain with account_management", "GET", path("/admin/api/services/%d/proxy/policies.json", svc), nil, 200, "")
	h.sim.SetTokenScopes("tok", "policy_registry")
	h.check("registry with policy_registry", "GET", registry+".json", nil, 200, `{"policies":[]}`)
	h.check("chain with policy_registry", "GET", path("/admin/api/services/%d/proxy/policies.json", svc), nil, 200, "")
	h.check("a service with policy_registry", "GET", path("/admin/api/services/%d.json", svc), nil, 403, denied)
}

// TestRegistryFeature: a tenant without the policy_registry feature (SetPolicyRegistry), and master,
// get 403 {"status":"Forbidden"} from every registry endpoint before anything is looked up or validated;
// the token's scope is checked first; the product's policy chain and the other tenant are not gated.
func TestRegistryFeature(t *testing.T) {
	h := newHarness(t, withMaster)
	id := h.create(registry+".json", url.Values{"name": {"ratelimit"}, "version": {"1.0"}, "schema": {manifest("Rate limit", "1.0", nil)}}, "policy")
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Shop"}}, "service")
	const forbidden = `{"status":"Forbidden"}`
	policy := path("%s/%d.json", registry, id)
	valid := url.Values{"name": {"other"}, "version": {"1.0"}, "schema": {manifest("Other", "1.0", nil)}}
	cases := map[string]struct {
		token, method, path string
		form                url.Values
		wantCode            int
		wantRaw             string
	}{
		"list":                            {token: "tok", method: "GET", path: registry + ".json", wantCode: 403, wantRaw: forbidden},
		"create":                          {token: "tok", method: "POST", path: registry + ".json", form: valid, wantCode: 403, wantRaw: forbidden},
		"create, invalid":                 {token: "tok", method: "POST", path: registry + ".json", wantCode: 403, wantRaw: forbidden},
		"read":                            {token: "tok", method: "GET", path: policy, wantCode: 403, wantRaw: forbidden},
		"read an unknown one":             {token: "tok", method: "GET", path: registry + "/999.json", wantCode: 403, wantRaw: forbidden},
		"update":                          {token: "tok", method: "PUT", path: policy, form: url.Values{"schema": {manifest("Rate limit", "1.0", nil)}}, wantCode: 403, wantRaw: forbidden},
		"delete":                          {token: "tok", method: "DELETE", path: policy, wantCode: 403, wantRaw: forbidden},
		"the product's chain":             {token: "tok", method: "GET", path: path("/admin/api/services/%d/proxy/policies.json", svc), wantCode: 200},
		"another tenant with the feature": {token: "tok2", method: "GET", path: registry + ".json", wantCode: 200, wantRaw: `{"policies":[]}`},
		"master, never a tenant":          {token: masterToken, method: "GET", path: registry + ".json", wantCode: 403, wantRaw: forbidden},
	}
	if !h.sim.SetPolicyRegistry("acme", false) || h.sim.SetPolicyRegistry("nobody", false) {
		t.Fatal("SetPolicyRegistry: want true for acme, false for an unknown tenant")
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h.checkAs(name, tc.token, tc.method, tc.path, tc.form, tc.wantCode, tc.wantRaw)
		})
	}
	h.sim.SetTokenScopes("tok", "account_management")
	h.check("a token without the scope: refused for that first", "GET", registry+".json", nil, 403, fmt.Sprintf(`{"error":%q}`, msgTokenPermissions))
	h.sim.SetTokenScopes("tok", "policy_registry", "account_management")
	h.sim.SetPolicyRegistry("acme", true)
	h.check("the feature given back", "DELETE", policy, nil, 200, "")
	if n := h.sim.Count("acme", KindCustomPolicies); n != 0 {
		t.Errorf("%d custom policies, want 0: the refused requests changed nothing and the last delete went through", n)
	}
}
