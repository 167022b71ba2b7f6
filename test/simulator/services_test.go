package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServiceCRUD(t *testing.T) {
	h := newHarness(t)
	id := h.create("/admin/api/services.json", url.Values{"name": {"My Pets API!"}, "description": {"d"}}, "service")
	other := h.create("/admin/api/services.json", url.Values{"name": {"Other"}, "system_name": {"other"}, "deployment_option": {"self_managed"}}, "service")

	// The cases run in order: each sees the state the previous ones left.
	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		key                string
		want               map[string]any
	}{
		{name: "read derives the system name as porta", method: "GET", path: path("/admin/api/services/%d.json", id), wantCode: 200, key: "service",
			want: map[string]any{"name": "My Pets API!", "system_name": "my_pets_api", "description": "d", "state": "incomplete", "deployment_option": "hosted", "backend_version": "1"}},
		{name: "PUT updates", method: "PUT", path: path("/admin/api/services/%d.json", id), form: url.Values{"name": {"Pets"}, "backend_version": {"oidc"}}, wantCode: 200, key: "service",
			want: map[string]any{"name": "Pets", "system_name": "my_pets_api", "description": "d", "state": "incomplete", "deployment_option": "hosted", "backend_version": "oidc"}},
		{name: "PATCH updates too", method: "PATCH", path: path("/admin/api/services/%d.json", id), form: url.Values{"description": {"e"}}, wantCode: 200, key: "service",
			want: map[string]any{"name": "Pets", "system_name": "my_pets_api", "description": "e", "state": "incomplete", "deployment_option": "hosted", "backend_version": "oidc"}},
		{name: "system name cannot change", method: "PUT", path: path("/admin/api/services/%d.json", other), form: url.Values{"system_name": {"renamed"}}, wantCode: 200, key: "service",
			want: map[string]any{"name": "Other", "system_name": "other", "description": "", "state": "incomplete", "deployment_option": "self_managed", "backend_version": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := h.send(tc.method, tc.path, tc.form)
			if res.code != tc.wantCode {
				t.Fatalf("status %d %s, want %d", res.code, res.raw, tc.wantCode)
			}
			got := fields(res.body, tc.key, "name", "system_name", "description", "state", "deployment_option", "backend_version")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	res := h.send("GET", "/admin/api/services.json", nil)
	if diff := cmp.Diff([]int64{id, other}, listed(res.body, "services", "service")); diff != "" {
		t.Errorf("list {\"services\":[{\"service\":...}]} (-want +got):\n%s", diff)
	}
	if res := h.send("DELETE", path("/admin/api/services/%d.json", other), nil); res.code != 200 || res.raw != "" {
		t.Errorf("DELETE: %d %q, want 200 and no body", res.code, res.raw)
	}
	if res := h.send("GET", path("/admin/api/services/%d.json", other), nil); res.code != 404 || res.raw != `{"status":"Not found"}` {
		t.Errorf("GET after DELETE: %d %s, want porta's 404", res.code, res.raw)
	}
}

func TestServiceComesWithHitsProxyAndPolicies(t *testing.T) {
	h := newHarness(t)
	id := h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")

	res := h.send("GET", path("/admin/api/services/%d/metrics.json", id), nil)
	metrics, _ := res.body.(map[string]any)["metrics"].([]any)
	if len(metrics) != 1 {
		t.Fatalf("metrics: %s, want hits alone", res.raw)
	}
	if diff := cmp.Diff(map[string]any{"system_name": "hits", "friendly_name": "Hits", "unit": "hit", "service_id": float64(id)},
		fields(metrics[0], "metric", "system_name", "friendly_name", "unit", "service_id")); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}

	res = h.send("GET", path("/admin/api/services/%d/proxy.json", id), nil)
	if diff := cmp.Diff(map[string]any{"service_id": float64(id), "credentials_location": "query", "auth_user_key": "user_key", "error_status_no_match": float64(404)},
		fields(res.body, "proxy", "service_id", "credentials_location", "auth_user_key", "error_status_no_match")); diff != "" {
		t.Errorf("proxy defaults (-want +got):\n%s", diff)
	}

	res = h.send("GET", path("/admin/api/services/%d/proxy/mapping_rules.json", id), nil)
	rules, _ := res.body.(map[string]any)["mapping_rules"].([]any)
	if len(rules) != 1 {
		t.Fatalf("mapping rules: %s, want porta's default GET / alone", res.raw)
	}
	if diff := cmp.Diff(map[string]any{"http_method": "GET", "pattern": "/", "delta": float64(1), "metric_id": fields(metrics[0], "metric", "id")["id"], "position": float64(1)},
		fields(rules[0], "mapping_rule", "http_method", "pattern", "delta", "metric_id", "position")); diff != "" {
		t.Errorf("default mapping rule (-want +got):\n%s", diff)
	}

	res = h.send("GET", path("/admin/api/services/%d/proxy/policies.json", id), nil)
	want := `{"policies_config":[{"configuration":{},"enabled":true,"name":"apicast","version":"builtin"}]}`
	if res.code != 200 || res.raw != want {
		t.Errorf("policies: %d %s, want %s", res.code, res.raw, want)
	}
}

func TestProxyOIDCAndPolicies(t *testing.T) {
	h := newHarness(t)
	id := h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")
	base := path("/admin/api/services/%d", id)
	chain := `[{"name":"headers","version":"builtin","configuration":{"request":[]}},{"name":"apicast","version":"builtin","configuration":{}}]`

	cases := []fieldCase{
		{"proxy update", "PATCH", base + "/proxy.json", url.Values{"credentials_location": {"headers"}, "error_status_auth_failed": {"401"}, "sandbox_endpoint": {"https://staging.example.com:443"}},
			200, "proxy", []string{"credentials_location", "error_status_auth_failed", "sandbox_endpoint"},
			map[string]any{"credentials_location": "headers", "error_status_auth_failed": float64(401), "sandbox_endpoint": "https://staging.example.com:443"}},
		{"proxy kept it", "GET", base + "/proxy.json", nil, 200, "proxy", []string{"credentials_location"}, map[string]any{"credentials_location": "headers"}},
		{"bad credentials location", "PATCH", base + "/proxy.json", url.Values{"credentials_location": {"cookie"}}, 422, "errors", []string{"credentials_location"},
			map[string]any{"credentials_location": []any{"is not included in the list"}}},
		{"deploy", "POST", base + "/proxy/deploy.json", nil, 201, "proxy", []string{"service_id"}, map[string]any{"service_id": float64(id)}},
		{"oidc update", "PATCH", base + "/proxy/oidc_configuration.json", url.Values{"service_accounts_enabled": {"true"}, "standard_flow_enabled": {"false"}},
			200, "oidc_configuration", []string{"service_accounts_enabled", "standard_flow_enabled", "implicit_flow_enabled"},
			map[string]any{"service_accounts_enabled": true, "standard_flow_enabled": false, "implicit_flow_enabled": false}},
		{"oidc read", "GET", base + "/proxy/oidc_configuration.json", nil, 200, "oidc_configuration", []string{"service_accounts_enabled"}, map[string]any{"service_accounts_enabled": true}},
		{"policies are not JSON", "PUT", base + "/proxy/policies.json", url.Values{"policies_config": {"nope"}}, 422, "errors", []string{"policies_config"},
			map[string]any{"policies_config": []any{msgPoliciesInvalidFormat}}},
		{"unknown service", "GET", "/admin/api/services/999/proxy.json", nil, 404, "", []string{"status"}, map[string]any{"status": "Not found"}},
	}
	checkFields(t, h, cases)

	res := h.send("PUT", base+"/proxy/policies.json", url.Values{"policies_config": {chain}})
	var names []any
	for _, p := range res.body.(map[string]any)["policies_config"].([]any) {
		names = append(names, p.(map[string]any)["name"])
	}
	if diff := cmp.Diff([]any{"headers", "apicast"}, names); res.code != 200 || diff != "" {
		t.Errorf("policy chain update: %d (-want +got):\n%s", res.code, diff)
	}
	if n := h.sim.Count("acme", KindDeploys); n != 1 {
		t.Errorf("%d deploys counted, want 1", n)
	}
}

func TestBackendUsages(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	b1, _ := h.backend("b1")
	b2, _ := h.backend("b2")
	base := path("/admin/api/services/%d/backend_usages", svc)
	u1 := h.create(base+".json", url.Values{"backend_api_id": {fmt.Sprint(b1)}, "path": {"/"}}, "backend_usage")

	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantRaw            string
	}{
		{"same path", "POST", base + ".json", url.Values{"backend_api_id": {fmt.Sprint(b2)}, "path": {"/"}}, 422,
			`{"errors":{"path":["This path is already taken. Specify a different path."]}}`},
		{"same backend", "POST", base + ".json", url.Values{"backend_api_id": {fmt.Sprint(b1)}, "path": {"/v2"}}, 422,
			`{"errors":{"backend_api_id":["has already been taken"]}}`},
		{"no backend", "POST", base + ".json", url.Values{"path": {"/v2"}}, 422, `{"errors":{"backend_api_id":["can't be blank"]}}`},
		{"unknown backend", "POST", base + ".json", url.Values{"backend_api_id": {"999"}, "path": {"/v2"}}, 404, `{"status":"Not found"}`},
		{"second usage", "POST", base + ".json", url.Values{"backend_api_id": {fmt.Sprint(b2)}, "path": {"v2/"}}, 201,
			fmt.Sprintf(`{"backend_usage":{"backend_id":%d,"id":%d,"path":"/v2","service_id":%d}}`, b2, u1+1, svc)},
		{"read", "GET", path("%s/%d.json", base, u1), nil, 200, fmt.Sprintf(`{"backend_usage":{"backend_id":%d,"id":%d,"path":"/","service_id":%d}}`, b1, u1, svc)},
		{"update", "PUT", path("%s/%d.json", base, u1), url.Values{"path": {"/v1"}}, 200,
			fmt.Sprintf(`{"backend_usage":{"backend_id":%d,"id":%d,"path":"/v1","service_id":%d}}`, b1, u1, svc)},
		{"list is a bare array", "GET", base + ".json", nil, 200,
			fmt.Sprintf(`[{"backend_usage":{"backend_id":%d,"id":%d,"path":"/v1","service_id":%d}},{"backend_usage":{"backend_id":%d,"id":%d,"path":"/v2","service_id":%d}}]`, b1, u1, svc, b2, u1+1, svc)},
		{"delete", "DELETE", path("%s/%d.json", base, u1), nil, 200, ``},
		{"gone", "GET", path("%s/%d.json", base, u1), nil, 404, `{"status":"Not found"}`},
	}
	for _, tc := range cases {
		res := h.send(tc.method, tc.path, tc.form)
		if res.code != tc.wantCode || res.raw != tc.wantRaw {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, res.code, res.raw, tc.wantCode, tc.wantRaw)
		}
	}
}

func TestServiceDeleteCascades(t *testing.T) {
	h := newHarness(t)
	svc, hits := h.product("pets")
	keep, _ := h.product("keep")
	b, bhits := h.backend("b1")
	h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
	h.create(path("/admin/api/services/%d/metrics.json", svc), url.Values{"friendly_name": {"Bytes"}, "unit": {"byte"}}, "metric")
	method := h.create(path("/admin/api/services/%d/metrics/%d/methods.json", svc, hits), url.Values{"friendly_name": {"List"}}, "method")
	h.create(path("/admin/api/services/%d/proxy/mapping_rules.json", svc), url.Values{"http_method": {"GET"}, "pattern": {"/pets"}, "metric_id": {fmt.Sprint(method)}}, "mapping_rule")
	plan := h.create(path("/admin/api/services/%d/application_plans.json", svc), url.Values{"name": {"Basic"}}, "application_plan")
	h.create(path("/admin/api/application_plans/%d/metrics/%d/limits.json", plan, hits), url.Values{"period": {"minute"}, "value": {"10"}}, "limit")
	h.create(path("/admin/api/application_plans/%d/metrics/%d/limits.json", plan, bhits), url.Values{"period": {"day"}, "value": {"10"}}, "limit")
	h.create(path("/admin/api/application_plans/%d/metrics/%d/pricing_rules.json", plan, hits), url.Values{"min": {"1"}, "cost_per_unit": {"0.1"}}, "pricing_rule")

	if res := h.send("DELETE", path("/admin/api/backend_apis/%d.json", b), nil); res.code != 403 {
		t.Fatalf("backend in use deleted: %d %s", res.code, res.raw)
	}
	if res := h.send("DELETE", path("/admin/api/services/%d.json", svc), nil); res.code != 200 {
		t.Fatalf("DELETE service: %d %s", res.code, res.raw)
	}
	got := map[string]int{}
	for _, kind := range []string{KindServices, KindBackendAPIs, KindMetrics, KindMappingRules, KindBackendUsages, KindPlans, KindLimits, KindPricingRules, KindProxies, KindPolicies} {
		got[kind] = h.sim.Count("acme", kind)
	}
	want := map[string]int{KindServices: 1, KindBackendAPIs: 1, KindMetrics: 2 /* hits of keep and of b1 */, KindMappingRules: 0,
		KindBackendUsages: 0, KindPlans: 0, KindLimits: 0, KindPricingRules: 0, KindProxies: 1, KindPolicies: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("left after the cascade (-want +got):\n%s", diff)
	}
	if res := h.send("GET", path("/admin/api/services/%d.json", keep), nil); res.code != 200 {
		t.Errorf("the other service: %d", res.code)
	}
	if res := h.send("DELETE", path("/admin/api/backend_apis/%d.json", b), nil); res.code != 200 {
		t.Errorf("backend no longer used: %d %s", res.code, res.raw)
	}
}
