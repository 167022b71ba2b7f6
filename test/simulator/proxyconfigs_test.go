package simulator

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// versions lists the versions of a product's configs in an environment, in the list's order.
func (h *harness) versions(svc int64, env string) []int {
	h.t.Helper()
	res := h.send("GET", path("/admin/api/services/%d/proxy/configs/%s.json", svc, env), nil)
	if res.code != 200 {
		h.t.Fatalf("list %s configs: %d %s", env, res.code, res.raw)
	}
	out := []int{}
	items, _ := res.body.(map[string]any)["proxy_configs"].([]any)
	for _, it := range items {
		v, _ := it.(map[string]any)["proxy_config"].(map[string]any)["version"].(float64)
		out = append(out, int(v))
	}
	return out
}

// TestDeployMakesASandboxVersionOnlyWhenTheConfigurationChanged: porta's deploy (and a proxy or policy
// chain update) saves a sandbox config only when the product's configuration differs from the latest
// one; mapping rules and usages change it for the next deploy without making a version themselves; a
// product without a backend (no api_backend) gets none.
func TestDeployMakesASandboxVersionOnlyWhenTheConfigurationChanged(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("shop")
	b, _ := h.backend("stock")
	base := path("/admin/api/services/%d/proxy", svc)
	deploy := func() { h.check("deploy", "POST", base+"/deploy.json", nil, 201, "") }

	steps := []struct {
		name string
		do   func()
		want []int
	}{
		{"deploy without a backend: no api_backend, no config", deploy, []int{}},
		{"a backend used at /", func() {
			h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}, "path": {"/"}}, "backend_usage")
		}, []int{}},
		{"deploy", deploy, []int{1}},
		{"deploy again, nothing changed", deploy, []int{1}},
		{"a mapping rule makes no version by itself", func() {
			h.create(base+"/mapping_rules.json", url.Values{"http_method": {"GET"}, "pattern": {"/items"}, "metric_id": {fmt.Sprint(hits)}}, "mapping_rule")
		}, []int{1}},
		{"the next deploy has it", deploy, []int{1, 2}},
		{"a proxy update with the values it has", func() {
			h.check("same proxy", "PATCH", base+".json", url.Values{"credentials_location": {"query"}}, 200, "")
		}, []int{1, 2}},
		{"a proxy update that changes it deploys", func() {
			h.check("proxy", "PATCH", base+".json", url.Values{"credentials_location": {"headers"}}, 200, "")
		}, []int{1, 2, 3}},
		{"the same policy chain", func() {
			h.check("same chain", "PUT", base+"/policies.json", url.Values{"policies_config": {`[{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`}}, 200, "")
		}, []int{1, 2, 3}},
		{"a new policy chain deploys", func() {
			h.check("chain", "PUT", base+"/policies.json", url.Values{"policies_config": {`[{"name":"cors","version":"builtin","configuration":{}}]`}}, 200, "")
		}, []int{1, 2, 3, 4}},
		{"a service update makes no version by itself", func() {
			h.check("service", "PUT", path("/admin/api/services/%d.json", svc), url.Values{"description": {"the shop"}}, 200, "")
		}, []int{1, 2, 3, 4}},
		{"the next deploy has it", deploy, []int{1, 2, 3, 4, 5}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, h.versions(svc, "sandbox")); diff != "" {
			t.Fatalf("%s: sandbox versions (-want +got):\n%s", s.name, diff)
		}
	}
	if diff := cmp.Diff([]int{}, h.versions(svc, "production")); diff != "" {
		t.Errorf("production versions of an APIcast product, which deploys to sandbox only (-want +got):\n%s", diff)
	}
	if n := h.sim.Count("acme", KindDeploys); n != 5 {
		t.Errorf("%d deploys counted, want the 5 POST proxy/deploy", n)
	}
	if n := h.sim.Count("acme", KindProxyConfigs); n != 5 {
		t.Errorf("%d proxy configs counted, want 5", n)
	}
}

// TestProxyConfigReads: list, latest and show, with porta's codes and shapes.
func TestProxyConfigReads(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("shop")
	b, _ := h.backend("stock")
	h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
	configs := path("/admin/api/services/%d/proxy/configs", svc)

	h.check("list of an environment without configs", "GET", configs+"/sandbox.json", nil, 200, `{"proxy_configs":[]}`)
	h.check("latest of an environment without configs", "GET", configs+"/production/latest.json", nil, 404, `{"status":"Not found"}`)
	h.check("deploy", "POST", path("/admin/api/services/%d/proxy/deploy.json", svc), nil, 201, "")
	h.check("an invalid environment", "GET", configs+"/qa/latest.json", nil, 400, `{"error":"invalid environment"}`)
	h.check("an invalid environment's list", "GET", configs+"/qa.json", nil, 400, `{"error":"invalid environment"}`)
	h.check("an unknown service", "GET", "/admin/api/services/999/proxy/configs/qa/latest.json", nil, 404, `{"status":"Not found"}`)
	h.check("an unknown version", "GET", configs+"/sandbox/7.json", nil, 404, `{"status":"Not found"}`)

	for _, read := range []string{"/sandbox/latest.json", "/staging/latest.json", "/sandbox/1.json", "/staging/1.json"} {
		res := h.check(read, "GET", configs+read, nil, 200, "")
		got := fields(res.body, "proxy_config", "version", "environment")
		if diff := cmp.Diff(map[string]any{"version": float64(1), "environment": "sandbox"}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", read, diff)
		}
		obj, _ := res.body.(map[string]any)["proxy_config"].(map[string]any)
		if len(obj) != 4 {
			t.Errorf("%s: %v, want id, version, environment and content only", read, obj)
		}
		content, _ := obj["content"].(map[string]any)
		proxy, _ := content["proxy"].(map[string]any)
		if content["id"] != float64(svc) || proxy["api_backend"] != "https://stock.example.com:443" {
			t.Errorf("%s: content %v, want the product's configuration with its api_backend", read, content)
		}
	}
	res := h.check("list", "GET", configs+"/staging.json", nil, 200, "")
	items, _ := res.body.(map[string]any)["proxy_configs"].([]any)
	if len(items) != 1 || fields(items[0], "proxy_config", "environment")["environment"] != "sandbox" {
		t.Errorf("list: %s, want the sandbox config wrapped in proxy_config", res.raw)
	}
}

// TestPromote follows ProxyConfig#clone_to: the copy keeps the version number; a version the
// destination holds already is 422, so is a destination other than sandbox and production; `to` is
// required (400 in text); content is not compared.
func TestPromote(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("shop")
	b, _ := h.backend("stock")
	usage := h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
	base := path("/admin/api/services/%d/proxy", svc)
	h.check("deploy v1", "POST", base+"/deploy.json", nil, 201, "")
	h.create(base+"/mapping_rules.json", url.Values{"http_method": {"GET"}, "pattern": {"/items"}, "metric_id": {fmt.Sprint(hits)}}, "mapping_rule")
	h.check("deploy v2", "POST", base+"/deploy.json", nil, 201, "")
	promote := func(env string, version int) string { return path("%s/configs/%s/%d/promote.json", base, env, version) }

	res := h.check("promote v2", "POST", promote("sandbox", 2), url.Values{"to": {"production"}}, 201, "")
	if diff := cmp.Diff(map[string]any{"version": float64(2), "environment": "production"}, fields(res.body, "proxy_config", "version", "environment")); diff != "" {
		t.Errorf("promoted (-want +got):\n%s", diff)
	}
	sandboxV2 := h.check("sandbox v2", "GET", base+"/configs/sandbox/2.json", nil, 200, "")
	if a, b := fields(sandboxV2.body, "proxy_config", "id", "content"), fields(res.body, "proxy_config", "id", "content"); a["id"] == b["id"] || !cmp.Equal(a["content"], b["content"]) {
		t.Errorf("the copy: id %v and content equal %v; want a new id and the same content", b["id"], cmp.Equal(a["content"], b["content"]))
	}
	taken := `{"errors":{"version":["has already been taken"]}}`
	h.check("promote v2 twice", "POST", promote("sandbox", 2), url.Values{"to": {"production"}}, 422, taken)
	h.check("promote to its own environment", "POST", promote("staging", 1), url.Values{"to": {"sandbox"}}, 422, taken)
	h.check("promote back", "POST", promote("production", 2), url.Values{"to": {"sandbox"}}, 422, taken)
	h.check("promote to staging", "POST", promote("sandbox", 1), url.Values{"to": {"staging"}}, 422, `{"errors":{"environment":["is not included in the list"]}}`)
	res = h.check("promote without to", "POST", promote("sandbox", 1), nil, 400, "Required parameter missing: to")
	if ct := res.hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("missing to: Content-Type %q, want text", ct)
	}
	h.check("promote with a blank to", "POST", promote("sandbox", 1), url.Values{"to": {" "}}, 400, "Required parameter missing: to")
	h.check("promote an unknown version", "POST", promote("sandbox", 9), url.Values{"to": {"production"}}, 404, `{"status":"Not found"}`)
	h.check("promote from an invalid environment", "POST", promote("qa", 1), url.Values{"to": {"production"}}, 400, `{"error":"invalid environment"}`)
	h.check("promote an older version", "POST", promote("sandbox", 1), url.Values{"to": {"production"}}, 201, "")
	if diff := cmp.Diff([]int{2, 1}, h.versions(svc, "production")); diff != "" {
		t.Errorf("production versions, in id order (-want +got):\n%s", diff)
	}
	res = h.check("production latest", "GET", base+"/configs/production/latest.json", nil, 200, "")
	if v := fields(res.body, "proxy_config", "version")["version"]; v != float64(2) {
		t.Errorf("production latest is version %v, want the highest, 2", v)
	}
	h.check("stop using the backend", "DELETE", path("/admin/api/services/%d/backend_usages/%d.json", svc, usage), nil, 200, "")
	h.check("deploy without api_backend", "POST", base+"/deploy.json", nil, 201, "")
	if diff := cmp.Diff([]int{1, 2}, h.versions(svc, "sandbox")); diff != "" {
		t.Errorf("sandbox versions after a deploy without api_backend (-want +got):\n%s", diff)
	}
	h.check("promote without api_backend", "POST", promote("production", 1), url.Values{"to": {"sandbox"}}, 422,
		`{"errors":{"api_backend":["is missing"],"version":["has already been taken"]}}`)

	got := map[string]int{}
	for _, c := range h.sim.Stats().Calls {
		if strings.Contains(c.Endpoint, "/configs/") {
			got[fmt.Sprintf("%s %s %d", c.Method, c.Endpoint, c.Code)] += c.Count
		}
	}
	want := map[string]int{
		"GET /admin/api/services/{service_id}/proxy/configs/{environment}.json 200":                    2,
		"GET /admin/api/services/{service_id}/proxy/configs/{environment}/{version}.json 200":          1,
		"GET /admin/api/services/{service_id}/proxy/configs/{environment}/latest.json 200":             1,
		"POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json 201": 2,
		"POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json 400": 3,
		"POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json 404": 1,
		"POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json 422": 5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("proxy config calls counted (-want +got):\n%s", diff)
	}
}

// TestServiceMeshDeploysBothEnvironments: a service mesh product's deploy copies the new sandbox config
// to production (ProxyDeploymentService#deploy_staging_and_production_v2), without api_backend.
func TestServiceMeshDeploysBothEnvironments(t *testing.T) {
	h := newHarness(t)
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Mesh"}, "deployment_option": {"service_mesh_istio"}}, "service")
	for range 2 {
		h.check("deploy", "POST", path("/admin/api/services/%d/proxy/deploy.json", svc), nil, 201, "")
	}
	if diff := cmp.Diff([][]int{{1}, {1}}, [][]int{h.versions(svc, "sandbox"), h.versions(svc, "production")}); diff != "" {
		t.Errorf("sandbox and production versions (-want +got):\n%s", diff)
	}
}

// TestConfigurationContent: the content is the product's configuration — its backends' rules under the
// usage's path, api_backend null with a subpath — and is the same for the same state.
func TestConfigurationContent(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("shop")
	b, bhits := h.backend("stock")
	h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}, "path": {"/stock"}}, "backend_usage")
	h.create(path("/admin/api/services/%d/proxy/mapping_rules.json", svc), url.Values{"http_method": {"GET"}, "pattern": {"/orders"}, "metric_id": {fmt.Sprint(hits)}}, "mapping_rule")
	h.create(path("/admin/api/backend_apis/%d/mapping_rules.json", b), url.Values{"http_method": {"POST"}, "pattern": {"/items$"}, "metric_id": {fmt.Sprint(bhits)}}, "mapping_rule")

	h.sim.mu.Lock()
	tn := h.sim.names["acme"]
	first, second := tn.gatewayConfig(tn.services[svc]), tn.gatewayConfig(tn.services[svc])
	h.sim.mu.Unlock()
	if string(first) != string(second) {
		t.Errorf("two renderings of one state differ:\n%s\n%s", first, second)
	}
	h.check("deploy", "POST", path("/admin/api/services/%d/proxy/deploy.json", svc), nil, 201, "")
	res := h.check("latest", "GET", path("/admin/api/services/%d/proxy/configs/sandbox/latest.json", svc), nil, 200, "")
	proxy, _ := res.body.(map[string]any)["proxy_config"].(map[string]any)["content"].(map[string]any)["proxy"].(map[string]any)
	var patterns []string
	rules, _ := proxy["proxy_rules"].([]any)
	for _, r := range rules {
		m, _ := r.(map[string]any)
		patterns = append(patterns, fmt.Sprint(m["http_method"], " ", m["pattern"], " ", m["metric_system_name"]))
	}
	if diff := cmp.Diff([]string{"GET /orders hits", "POST /stock/items$ hits"}, patterns); diff != "" {
		t.Errorf("proxy rules (-want +got):\n%s", diff)
	}
	if proxy["api_backend"] != nil || proxy["policy_chain"] == nil || proxy["policies_config"] != nil {
		t.Errorf("proxy %v: want api_backend null (a subpath), the policy chain, no policies_config", proxy)
	}
}

// TestConfigurationPolicyChain: a configuration's policy_chain is Proxy::PoliciesConfig#chain — the
// enabled policies only (enabled missing, null or false leaves a policy out; any other value, even the
// text "false", is true to Ruby), each with name, version and configuration only; apicast is appended
// last when the chain names none, and a disabled apicast stays out.
func TestConfigurationPolicyChain(t *testing.T) {
	apicast := map[string]any{"name": "apicast", "version": "builtin", "configuration": map[string]any{}}
	cors := map[string]any{"name": "cors", "version": "builtin", "configuration": map[string]any{"allow_credentials": true}}
	cases := map[string]struct {
		chain string
		want  []any
	}{
		"the default chain": {chain: `[{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`, want: []any{apicast}},
		"enabled policies in order, without enabled nor the UI's fields": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true},"enabled":true,"humanName":"CORS","id":"cors","removable":true},` +
				`{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`,
			want: []any{cors, apicast}},
		"a policy without enabled is left out": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true}},{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`,
			want:  []any{apicast}},
		"a disabled policy is left out": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true},"enabled":false},{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`,
			want:  []any{apicast}},
		"enabled as the text false is true to Ruby": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true},"enabled":"false"},{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`,
			want:  []any{cors, apicast}},
		"no apicast: appended last": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true},"enabled":true}]`,
			want:  []any{cors, apicast}},
		"a disabled apicast is not replaced": {
			chain: `[{"name":"cors","version":"builtin","configuration":{"allow_credentials":true},"enabled":true},{"name":"apicast","version":"builtin","configuration":{},"enabled":false}]`,
			want:  []any{cors}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			svc, _ := h.product("shop")
			b, _ := h.backend("stock")
			h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
			// A config-driven product's chain update deploys to sandbox (policies_controller.rb:17-20).
			h.check("chain", "PUT", path("/admin/api/services/%d/proxy/policies.json", svc), url.Values{"policies_config": {tc.chain}}, 200, "")
			res := h.check("latest", "GET", path("/admin/api/services/%d/proxy/configs/sandbox/latest.json", svc), nil, 200, "")
			proxy, _ := res.body.(map[string]any)["proxy_config"].(map[string]any)["content"].(map[string]any)["proxy"].(map[string]any)
			if diff := cmp.Diff(tc.want, proxy["policy_chain"]); diff != "" {
				t.Errorf("policy_chain (-want +got):\n%s", diff)
			}
		})
	}
}
