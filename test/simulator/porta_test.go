package simulator

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEndpointsAreStoredWithTheirPort: porta's Proxy::PortGenerator writes the scheme's default port into
// a backend's private endpoint and a proxy's endpoints and api_backend; the answers carry it.
func TestEndpointsAreStoredWithTheirPort(t *testing.T) {
	h := newHarness(t)
	b := h.create("/admin/api/backend_apis.json", url.Values{"name": {"Stock"}, "private_endpoint": {"http://stock.example.com/v1?"}}, "backend_api")
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Shop"}, "deployment_option": {"self_managed"}}, "service")
	lone := h.create("/admin/api/services.json", url.Values{"name": {"Lone"}, "deployment_option": {"self_managed"}}, "service")
	h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
	proxy := func(id int64) string { return path("/admin/api/services/%d/proxy.json", id) }

	cases := []struct {
		name, method, path string
		form               url.Values
		key                string
		want               map[string]any
	}{
		{"backend created without a port", "GET", path("/admin/api/backend_apis/%d.json", b), nil, "backend_api",
			map[string]any{"private_endpoint": "http://stock.example.com:80/v1?"}},
		{"backend updated with a padded port", "PUT", path("/admin/api/backend_apis/%d.json", b), url.Values{"private_endpoint": {"wss://stock.example.com:0443"}}, "backend_api",
			map[string]any{"private_endpoint": "wss://stock.example.com:443"}},
		{"proxy endpoints", "PATCH", proxy(svc), url.Values{"endpoint": {"https://shop.example.com"}, "sandbox_endpoint": {"http://staging.example.com"}}, "proxy",
			map[string]any{"endpoint": "https://shop.example.com:443", "sandbox_endpoint": "http://staging.example.com:80", "api_backend": "wss://stock.example.com:443"}},
		{"api_backend is the first backend's endpoint", "PATCH", proxy(svc), url.Values{"api_backend": {"https://stock2.example.com"}}, "proxy",
			map[string]any{"endpoint": "https://shop.example.com:443", "sandbox_endpoint": "http://staging.example.com:80", "api_backend": "https://stock2.example.com:443"}},
		{"which is the backend's", "GET", path("/admin/api/backend_apis/%d.json", b), nil, "backend_api",
			map[string]any{"private_endpoint": "https://stock2.example.com:443"}},
		{"a product with no backend has none", "GET", proxy(lone), nil, "proxy",
			map[string]any{"endpoint": "https://lone-3scale-apicast-production.example.com:443", "sandbox_endpoint": "https://lone-3scale-apicast-staging.example.com:443", "api_backend": nil}},
		{"an empty endpoint of a self-managed product stays empty", "PATCH", proxy(lone), url.Values{"endpoint": {""}, "api_backend": {"http://lone.internal"}}, "proxy",
			map[string]any{"endpoint": "", "sandbox_endpoint": "https://lone-3scale-apicast-staging.example.com:443", "api_backend": "http://lone.internal:80"}},
	}
	for _, tc := range cases {
		res := h.send(tc.method, tc.path, tc.form)
		if res.code != http.StatusOK {
			t.Errorf("%s: %d %s", tc.name, res.code, res.raw)
			continue
		}
		names := make([]string, 0, len(tc.want))
		for k := range tc.want {
			names = append(names, k)
		}
		if diff := cmp.Diff(tc.want, fields(res.body, tc.key, names...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	created := h.sim.Objects("acme", KindBackendAPIs)[1]
	if diff := cmp.Diff(map[string]any{"name": "Lone Backend", "system_name": "lone", "description": "Backend of Lone", "private_endpoint": "http://lone.internal:80"},
		fields(created, "", "name", "system_name", "description", "private_endpoint")); diff != "" {
		t.Errorf("the backend porta creates for api_backend (-want +got):\n%s", diff)
	}
	if usages := h.send("GET", path("/admin/api/services/%d/backend_usages.json", lone), nil); !strings.Contains(usages.raw, `"path":"/"`) {
		t.Errorf("usage of the created backend: %s", usages.raw)
	}
}

// TestEndpointValidationIsPortas checks the messages porta's validators give for endpoints.
func TestEndpointValidationIsPortas(t *testing.T) {
	h := newHarness(t)
	hosted := h.create("/admin/api/services.json", url.Values{"name": {"Hosted"}}, "service")
	proxy := path("/admin/api/services/%d/proxy.json", hosted)
	cases := map[string]struct {
		method, path string
		form         url.Values
		wantRaw      string
	}{
		"no path in a proxy endpoint": {"PATCH", proxy, url.Values{"endpoint": {"https://shop.example.com/api"}},
			`{"errors":{"endpoint":["` + msgProxyEndpointInvalid + `"]}}`},
		"no ws in a proxy endpoint": {"PATCH", proxy, url.Values{"sandbox_endpoint": {"ws://shop.example.com"}},
			`{"errors":{"sandbox_endpoint":["` + msgProxyEndpointInvalid + `"]}}`},
		"a hosted product needs its endpoints": {"PATCH", proxy, url.Values{"endpoint": {""}},
			`{"errors":{"endpoint":["can't be blank"]}}`},
		"nor localhost when hosted": {"PATCH", proxy, url.Values{"endpoint": {"http://localhost"}},
			`{"errors":{"endpoint":["can't be localhost"]}}`},
		"api_backend reports the backend's errors": {"PATCH", proxy, url.Values{"api_backend": {"ftp://stock.example.com"}},
			`{"errors":{"api_backend":["` + msgBackendEndpointInvalid + `"],"backend_api":["invalid"]}}`},
		"no query in a backend endpoint": {"POST", "/admin/api/backend_apis.json", url.Values{"name": {"Bk"}, "private_endpoint": {"https://b.example.com?x=1"}},
			`{"errors":{"private_endpoint":["` + msgBackendEndpointInvalid + `"]}}`},
	}
	for name, tc := range cases {
		res := h.send(tc.method, tc.path, tc.form)
		if res.code != http.StatusUnprocessableEntity || res.raw != tc.wantRaw {
			t.Errorf("%s: %d %s\nwant 422 %s", name, res.code, res.raw, tc.wantRaw)
		}
	}
	// ::1 and *.localhost are not what NonLocalhostValidator refuses.
	if res := h.send("POST", "/admin/api/backend_apis.json", url.Values{"name": {"B6"}, "private_endpoint": {"http://[::1]:8080"}}); res.code != http.StatusCreated {
		t.Errorf("a backend on [::1]: %d %s", res.code, res.raw)
	}
}

// TestPolicyChainIsNormalizedAsPortaDoes: porta appends apicast to a chain without it, keeps only name,
// version, configuration and enabled (leaving out a missing enabled), and answers an invalid policy
// with the chain and the policy's errors.
func TestPolicyChainIsNormalizedAsPortaDoes(t *testing.T) {
	h := newHarness(t)
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")
	policies := path("/admin/api/services/%d/proxy/policies.json", svc)
	apicast := `{"configuration":{},"enabled":true,"name":"apicast","version":"builtin"}`
	cases := []struct {
		name, chain string
		wantCode    int
		wantRaw     string
	}{
		{"apicast appended at the end", `[{"name":"cors","version":"builtin","configuration":{"allow_origin":"*"},"enabled":true,"humanName":"CORS","id":"x"}]`, 200,
			`{"policies_config":[{"configuration":{"allow_origin":"*"},"enabled":true,"name":"cors","version":"builtin"},` + apicast + `]}`},
		{"apicast kept where it is, even disabled", `[{"name":"apicast","version":"builtin","configuration":{},"enabled":false},{"name":"cors","version":"builtin","configuration":{}}]`, 200,
			`{"policies_config":[{"configuration":{},"enabled":false,"name":"apicast","version":"builtin"},{"configuration":{},"name":"cors","version":"builtin"}]}`},
		{"a blank chain is apicast alone", ``, 200, `{"policies_config":[` + apicast + `]}`},
		{"an invalid policy", `[{"name":"cors","configuration":null}]`, 422,
			`{"policies_config":[{"errors":{"configuration":["can't be blank"],"version":["can't be blank"]},"name":"cors"},` + apicast + `]}`},
	}
	for _, tc := range cases {
		res := h.send("PUT", policies, url.Values{"policies_config": {tc.chain}})
		if res.code != tc.wantCode || res.raw != tc.wantRaw {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, res.code, res.raw, tc.wantCode, tc.wantRaw)
		}
	}
	if res := h.send("GET", policies, nil); res.raw != `{"policies_config":[`+apicast+`]}` {
		t.Errorf("the chain after the refused update: %s", res.raw)
	}
}

// TestDecimalsAreRenderedAsPortaDoes: a plan's fees are JSON numbers as Ruby writes a Float, a pricing
// rule's cost per unit a JSON string as ActiveSupport writes a BigDecimal.
func TestDecimalsAreRenderedAsPortaDoes(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("pets")
	res := h.send("POST", path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Gold"}, "setup_fee": {"10"}, "cost_per_month": {"1.123456"}})
	if !strings.Contains(res.raw, `"setup_fee":10.0,`) || !strings.Contains(res.raw, `"cost_per_month":1.1235,`) {
		t.Errorf("plan fees: %s; want 10.0 and 1.1235 (4 decimals kept), as numbers", res.raw)
	}
	plan := int64(res.body.(map[string]any)["application_plan"].(map[string]any)["id"].(float64))
	pricing := path("/admin/api/application_plans/%d/metrics/%d/pricing_rules.json", plan, hits)
	cases := []struct {
		min, max, cost string
		wantCode       int
		want           string
	}{
		{"1", "10", "1.92", 201, `"cost_per_unit":"1.92"`},
		{"11", "20", "1", 201, `"cost_per_unit":"1.0"`},
		{"21", "30", "0.50000", 201, `"cost_per_unit":"0.5"`},
		{"31", "40", "0.12345", 422, `{"errors":{"cost_per_unit":["maximum decimals is 4."]}}`},
	}
	for _, tc := range cases {
		res := h.send("POST", pricing, url.Values{"min": {tc.min}, "max": {tc.max}, "cost_per_unit": {tc.cost}})
		if res.code != tc.wantCode || !strings.Contains(res.raw, tc.want) {
			t.Errorf("cost_per_unit %s: %d %s, want %d and %s", tc.cost, res.code, res.raw, tc.wantCode, tc.want)
		}
	}
}

// TestPlanWithApplicationsIsNotDeleted: porta refuses to delete a plan its applications use, with 403
// and the has_contracts error; once they are gone, the plan goes.
func TestPlanWithApplicationsIsNotDeleted(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	del := path("/admin/api/services/%d/application_plans/%d.json", svc, plan)
	if !h.sim.AddApplications("acme", plan, 1) || h.sim.AddApplications("acme", 999, 1) || h.sim.AddApplications("nobody", plan, 1) {
		t.Fatal("AddApplications: want true for a known plan only")
	}
	resp, err := http.Post(h.url+"/__sim/applications", "application/json", bytes.NewBufferString(fmt.Sprintf(`{"tenant":"acme","plan_id":%d,"count":1}`, plan)))
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /__sim/applications: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := h.sim.Count("acme", KindApplications); n != 2 {
		t.Errorf("%d applications, want 2", n)
	}
	want := `{"errors":{"base":["This application plan cannot be deleted! At least one application depends on it."]}}`
	if res := h.send("DELETE", del, nil); res.code != http.StatusForbidden || res.raw != want {
		t.Errorf("DELETE of a plan with applications: %d %s, want 403 %s", res.code, res.raw, want)
	}
	h.sim.AddApplications("acme", plan, -2)
	if res := h.send("DELETE", del, nil); res.code != http.StatusOK || h.sim.Count("acme", KindPlans) != 0 {
		t.Errorf("DELETE once the applications are gone: %d %s", res.code, res.raw)
	}
}

// TestListsArePagedAsPortaDoes: backend usages and plan limits are paged (at most 500 a page); limits,
// like services, carry porta's metadata when longer than a page.
func TestListsArePagedAsPortaDoes(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("pets")
	for i := range 3 {
		b, _ := h.backend(fmt.Sprintf("b%d", i))
		h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}, "path": {fmt.Sprintf("/v%d", i)}}, "backend_usage")
	}
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	for _, p := range []string{"minute", "hour", "day"} {
		h.create(path("/admin/api/application_plans/%d/metrics/%d/limits.json", plan, hits), url.Values{"period": {p}, "value": {"1"}}, "limit")
	}
	usages := h.send("GET", path("/admin/api/services/%d/backend_usages.json?per_page=2&page=2", svc), nil)
	if n := len(listed(usages.body, "", "backend_usage")); n != 1 {
		t.Errorf("backend usages page 2 of 2: %d items: %s", n, usages.raw)
	}
	limits := h.send("GET", path("/admin/api/application_plans/%d/limits.json?per_page=2", plan), nil)
	if n := len(listed(limits.body, "limits", "limit")); n != 2 {
		t.Errorf("limits page 1 of 2: %d items", n)
	}
	wantMeta := map[string]any{"per_page": float64(2), "total_entries": float64(3), "total_pages": float64(2), "current_page": float64(1)}
	if diff := cmp.Diff(wantMeta, limits.body.(map[string]any)["metadata"]); diff != "" {
		t.Errorf("limits metadata (-want +got):\n%s", diff)
	}
	if all := h.send("GET", path("/admin/api/application_plans/%d/limits.json", plan), nil); strings.Contains(all.raw, "metadata") {
		t.Errorf("a list that fits one page has no metadata: %s", all.raw)
	}
}

// TestMappingRulePositionsAreActsAsLists follows acts_as_list 0.9.17 as ProxyRule uses it.
func TestMappingRulePositionsAreActsAsLists(t *testing.T) {
	h := newHarness(t)
	_, hits := h.backend("pets")
	rules := path("/admin/api/backend_apis/%d/mapping_rules", h.sim.Objects("acme", KindBackendAPIs)[0]["id"])
	create := func(pattern, position string) int64 {
		form := url.Values{"http_method": {"GET"}, "pattern": {pattern}, "metric_id": {fmt.Sprint(hits)}}
		if position != "" {
			form.Set("position", position)
		}
		return h.create(rules+".json", form, "mapping_rule")
	}
	positions := func() map[string]float64 {
		out := map[string]float64{}
		for _, r := range h.sim.Objects("acme", KindMappingRules) {
			out[r["pattern"].(string)] = float64(r["position"].(int64))
		}
		return out
	}
	update := func(id int64, position string) {
		if res := h.send("PUT", path("%s/%d.json", rules, id), url.Values{"position": {position}}); res.code != 200 {
			t.Fatalf("update: %d %s", res.code, res.raw)
		}
	}
	a := create("/a", "")
	create("/b", "")
	create("/c", "1") // inserted at 1, the others move down
	d := create("/d", "10")
	create("/e", "") // after the highest position
	create("/f", "0")
	steps := []struct {
		name string
		do   func()
		want map[string]float64
	}{
		{"created", func() {}, map[string]float64{"/f": 1, "/c": 2, "/a": 3, "/b": 4, "/d": 11, "/e": 12}},
		{"moved to a taken position: the ones between shift", func() { update(d, "2") },
			map[string]float64{"/f": 1, "/d": 2, "/c": 3, "/a": 4, "/b": 5, "/e": 12}},
		{"moved to a free position: a gap is left", func() { update(a, "20") },
			map[string]float64{"/f": 1, "/d": 2, "/c": 3, "/b": 5, "/e": 12, "/a": 20}},
		{"moved down to a taken one", func() { update(d, "5") },
			map[string]float64{"/f": 1, "/c": 2, "/b": 4, "/d": 5, "/e": 12, "/a": 20}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, positions()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
	var order []string
	for _, it := range h.send("GET", rules+".json", nil).body.(map[string]any)["mapping_rules"].([]any) {
		order = append(order, it.(map[string]any)["mapping_rule"].(map[string]any)["pattern"].(string))
	}
	if diff := cmp.Diff([]string{"/f", "/c", "/b", "/d", "/e", "/a"}, order); diff != "" {
		t.Errorf("the list is in position order (-want +got):\n%s", diff)
	}
}
