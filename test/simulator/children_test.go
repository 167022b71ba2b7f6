package simulator

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBackendCRUD(t *testing.T) {
	h := newHarness(t)
	id := h.create("/admin/api/backend_apis.json", url.Values{"name": {"Pets backend"}, "private_endpoint": {"https://pets.example.com"}}, "backend_api")
	base := path("/admin/api/backend_apis/%d.json", id)
	cases := []struct {
		name, method string
		form         url.Values
		wantCode     int
		want         map[string]any
	}{
		{"read: derived system name, explicit port", "GET", nil, 200,
			map[string]any{"name": "Pets backend", "system_name": "pets_backend", "private_endpoint": "https://pets.example.com:443", "description": ""}},
		{"update", "PUT", url.Values{"private_endpoint": {"http://pets.internal:8080/v1"}, "description": {"d"}}, 200,
			map[string]any{"name": "Pets backend", "system_name": "pets_backend", "private_endpoint": "http://pets.internal:8080/v1", "description": "d"}},
		{"PATCH updates too", "PATCH", url.Values{"name": {"Pets"}}, 200,
			map[string]any{"name": "Pets", "system_name": "pets_backend", "private_endpoint": "http://pets.internal:8080/v1", "description": "d"}},
	}
	for _, tc := range cases {
		res := h.send(tc.method, base, tc.form)
		if res.code != tc.wantCode {
			t.Errorf("%s: %d %s", tc.name, res.code, res.raw)
			continue
		}
		if diff := cmp.Diff(tc.want, fields(res.body, "backend_api", "name", "system_name", "private_endpoint", "description")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	res := h.send("GET", "/admin/api/backend_apis.json", nil)
	if diff := cmp.Diff([]int64{id}, listed(res.body, "backend_apis", "backend_api")); diff != "" {
		t.Errorf("list {\"backend_apis\":[{\"backend_api\":...}]} (-want +got):\n%s", diff)
	}
	if res := h.send("DELETE", base, nil); res.code != 200 || h.sim.Count("acme", KindMetrics) != 0 {
		t.Errorf("DELETE: %d %s, %d metrics left", res.code, res.raw, h.sim.Count("acme", KindMetrics))
	}
}

func TestBackendDeleteRefusedWhileUsed(t *testing.T) {
	h := newHarness(t)
	svc, _ := h.product("pets")
	b, _ := h.backend("b1")
	u := h.create(path("/admin/api/services/%d/backend_usages.json", svc), url.Values{"backend_api_id": {fmt.Sprint(b)}}, "backend_usage")
	res := h.send("DELETE", path("/admin/api/backend_apis/%d.json", b), nil)
	want := `{"errors":{"base":["cannot be deleted because it is used by at least one Product"]}}`
	if res.code != 403 || res.raw != want {
		t.Errorf("DELETE of a used backend: %d %s, want 403 %s", res.code, res.raw, want)
	}
	if n := h.sim.Count("acme", KindBackendAPIs); n != 1 {
		t.Errorf("%d backends after the refusal, want 1", n)
	}
	h.send("DELETE", path("/admin/api/services/%d/backend_usages/%d.json", svc, u), nil)
	if res := h.send("DELETE", path("/admin/api/backend_apis/%d.json", b), nil); res.code != 200 {
		t.Errorf("DELETE of an unused backend: %d %s", res.code, res.raw)
	}
}

// TestMetricsMethodsMappingRules runs the same sequence under a product and under a backend.
func TestMetricsMethodsMappingRules(t *testing.T) {
	owners := map[string]struct {
		base, rules, ruleUpdate string
		setup                   func(h *harness) (ownerID, hits int64)
	}{
		"product": {base: "/admin/api/services/%d", rules: "/admin/api/services/%d/proxy/mapping_rules", ruleUpdate: "PATCH",
			setup: func(h *harness) (int64, int64) { return h.product("pets") }},
		"backend": {base: "/admin/api/backend_apis/%d", rules: "/admin/api/backend_apis/%d/mapping_rules", ruleUpdate: "PUT",
			setup: func(h *harness) (int64, int64) { return h.backend("pets") }},
	}
	for name, o := range owners {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			id, hits := o.setup(h)
			base, rules := path(o.base, id), path(o.rules, id)
			metric := h.create(base+"/metrics.json", url.Values{"friendly_name": {"Bytes out"}, "unit": {"byte"}}, "metric")
			method := h.create(path("%s/metrics/%d/methods.json", base, hits), url.Values{"friendly_name": {"List pets"}, "system_name": {"list_pets"}}, "method")
			r1 := h.create(rules+".json", url.Values{"http_method": {"GET"}, "pattern": {"/pets/{id}$"}, "metric_id": {fmt.Sprint(method)}, "delta": {"2"}}, "mapping_rule")
			r2 := h.create(rules+".json", url.Values{"http_method": {"POST"}, "pattern": {"/pets"}, "metric_id": {fmt.Sprint(hits)}}, "mapping_rule")
			r3 := h.create(rules+".json", url.Values{"http_method": {"GET"}, "pattern": {"/pets/{id}$"}, "metric_id": {fmt.Sprint(hits)}}, "mapping_rule")

			cases := []fieldCase{
				{"metric read", "GET", path("%s/metrics/%d.json", base, metric), nil, 200, "metric", []string{"system_name", "friendly_name", "unit"},
					map[string]any{"system_name": "bytes_out", "friendly_name": "Bytes out", "unit": "byte"}},
				{"metric update", "PUT", path("%s/metrics/%d.json", base, metric), url.Values{"friendly_name": {"Bytes"}, "unit": {"kB"}}, 200, "metric", []string{"system_name", "friendly_name", "unit"},
					map[string]any{"system_name": "bytes_out", "friendly_name": "Bytes", "unit": "kB"}},
				{"method read", "GET", path("%s/metrics/%d/methods/%d.json", base, hits, method), nil, 200, "method", []string{"system_name", "friendly_name", "parent_id"},
					map[string]any{"system_name": "list_pets", "friendly_name": "List pets", "parent_id": float64(hits)}},
				{"method update", "PUT", path("%s/metrics/%d/methods/%d.json", base, hits, method), url.Values{"description": {"d"}}, 200, "method", []string{"description"},
					map[string]any{"description": "d"}},
				{"methods only under hits", "POST", path("%s/metrics/%d/methods.json", base, metric), url.Values{"friendly_name": {"Nope"}}, 422, "errors", []string{"parent_id"},
					map[string]any{"parent_id": []any{"You can only create methods under 'hits'"}}},
				{"method under another parent", "GET", path("%s/metrics/%d/methods/%d.json", base, metric, method), nil, 404, "", []string{"status"},
					map[string]any{"status": "Not found"}},
				{"duplicate system name", "POST", base + "/metrics.json", url.Values{"friendly_name": {"Other"}, "system_name": {"bytes_out"}, "unit": {"b"}}, 422, "errors", []string{"system_name"},
					map[string]any{"system_name": []any{"has already been taken"}}},
				{"invalid system name", "POST", base + "/metrics.json", url.Values{"friendly_name": {"Other"}, "system_name": {"b@d!"}, "unit": {"b"}}, 422, "errors", []string{"system_name"},
					map[string]any{"system_name": []any{"invalid. Only ASCII letters, numbers, dashes and underscores are allowed."}}},
				{"metric needs a unit", "POST", base + "/metrics.json", url.Values{"friendly_name": {"Other"}}, 422, "errors", []string{"unit"},
					map[string]any{"unit": []any{"can't be blank"}}},
				{"rule read", "GET", path("%s/%d.json", rules, r1), nil, 200, "mapping_rule", []string{"http_method", "pattern", "metric_id", "delta", "position", "last"},
					map[string]any{"http_method": "GET", "pattern": "/pets/{id}$", "metric_id": float64(method), "delta": float64(2), "position": float64(1), "last": false}},
				{"rule update moves it", o.ruleUpdate, path("%s/%d.json", rules, r3), url.Values{"position": {"1"}, "last": {"true"}}, 200, "mapping_rule", []string{"position", "last"},
					map[string]any{"position": float64(1), "last": true}},
				{"others shifted", "GET", path("%s/%d.json", rules, r2), nil, 200, "mapping_rule", []string{"position"}, map[string]any{"position": float64(3)}},
				{"pattern must start with /", "POST", rules + ".json", url.Values{"http_method": {"GET"}, "pattern": {"pets"}, "metric_id": {fmt.Sprint(hits)}}, 422, "errors", []string{"pattern"},
					map[string]any{"pattern": []any{"is invalid"}}},
				{"http method", "POST", rules + ".json", url.Values{"http_method": {"FETCH"}, "pattern": {"/"}, "metric_id": {fmt.Sprint(hits)}}, 422, "errors", []string{"http_method"},
					map[string]any{"http_method": []any{"is not included in the list"}}},
				{"delta > 0", "POST", rules + ".json", url.Values{"http_method": {"GET"}, "pattern": {"/"}, "metric_id": {fmt.Sprint(hits)}, "delta": {"0"}}, 422, "errors", []string{"delta"},
					map[string]any{"delta": []any{"must be greater than 0"}}},
				{"metric of another owner", "POST", rules + ".json", url.Values{"http_method": {"GET"}, "pattern": {"/"}, "metric_id": {"999"}}, 404, "", []string{"status"},
					map[string]any{"status": "Not found"}},
				{"rule delete", "DELETE", path("%s/%d.json", rules, r3), nil, 200, "", nil, map[string]any{}},
				{"positions closed up", "GET", path("%s/%d.json", rules, r1), nil, 200, "mapping_rule", []string{"position"}, map[string]any{"position": float64(1)}},
			}
			checkFields(t, h, cases)

			res := h.send("GET", path("%s/metrics/%d/methods.json", base, hits), nil)
			if diff := cmp.Diff([]int64{method}, listed(res.body, "methods", "method")); diff != "" {
				t.Errorf("methods list (-want +got):\n%s", diff)
			}
			res = h.send("GET", rules+".json", nil)
			if diff := cmp.Diff([]int64{r1, r2}, listed(res.body, "mapping_rules", "mapping_rule")); diff != "" {
				t.Errorf("mapping rules list (-want +got):\n%s", diff)
			}
			// Deleting a method removes the mapping rules on it.
			if res := h.send("DELETE", path("%s/metrics/%d/methods/%d.json", base, hits, method), nil); res.code != 200 {
				t.Fatalf("DELETE method: %d %s", res.code, res.raw)
			}
			if n := h.sim.Count("acme", KindMappingRules); n != 1 {
				t.Errorf("%d mapping rules after deleting the method of one, want 1", n)
			}
		})
	}
}

// metricFixture is a product using a backend at "/", each with a metric, and a method under the
// product's hits: what a metric deletion may find in the product's latest configurations.
type metricFixture struct {
	svc, hits, metric, method int64
	backend, bhits, bmetric   int64
	usage                     int64
}

func newMetricFixture(h *harness) metricFixture {
	h.t.Helper()
	var f metricFixture
	f.svc, f.hits = h.product("shop")
	f.backend, f.bhits = h.backend("stock")
	f.usage = h.create(path("/admin/api/services/%d/backend_usages.json", f.svc), url.Values{"backend_api_id": {fmt.Sprint(f.backend)}, "path": {"/"}}, "backend_usage")
	f.metric = h.create(path("/admin/api/services/%d/metrics.json", f.svc), url.Values{"friendly_name": {"Orders"}, "unit": {"order"}}, "metric")
	f.method = h.create(path("/admin/api/services/%d/metrics/%d/methods.json", f.svc, f.hits), url.Values{"friendly_name": {"List orders"}}, "method")
	f.bmetric = h.create(path("/admin/api/backend_apis/%d/metrics.json", f.backend), url.Values{"friendly_name": {"Items"}, "unit": {"item"}}, "metric")
	return f
}

// productRule maps GET pattern to metricID on the product; backendRule on the backend. Both return the
// rule's path.
func (f metricFixture) productRule(h *harness, pattern string, metricID int64) string {
	h.t.Helper()
	id := h.create(path("/admin/api/services/%d/proxy/mapping_rules.json", f.svc), url.Values{"http_method": {"GET"}, "pattern": {pattern}, "metric_id": {fmt.Sprint(metricID)}}, "mapping_rule")
	return path("/admin/api/services/%d/proxy/mapping_rules/%d.json", f.svc, id)
}

func (f metricFixture) backendRule(h *harness, pattern string, metricID int64) string {
	h.t.Helper()
	id := h.create(path("/admin/api/backend_apis/%d/mapping_rules.json", f.backend), url.Values{"http_method": {"GET"}, "pattern": {pattern}, "metric_id": {fmt.Sprint(metricID)}}, "mapping_rule")
	return path("/admin/api/backend_apis/%d/mapping_rules/%d.json", f.backend, id)
}

func (f metricFixture) deploy(h *harness, svc int64) {
	h.t.Helper()
	h.check("deploy", "POST", path("/admin/api/services/%d/proxy/deploy.json", svc), nil, 201, "")
}

// TestMetricDeleteRefusedByLatestConfig follows Metric#destroyable? (metric.rb:224-243): a metric or
// method whose id is the metric_id of a proxy rule in the newest sandbox or newest production config of
// its product — for a backend's, of any product using the backend — cannot be deleted (403, "Metric" or
// "Method" is used by the latest gateway configuration), nor can a product's hits (and a used hits gets
// both messages, in-use first); a backend's hits can. Deleting a mapping rule or a backend usage is not
// refused, and only a backend usage's deletion frees a metric before the next deploy. A product's or
// backend's own deletion takes its metrics along whatever the configs hold.
func TestMetricDeleteRefusedByLatestConfig(t *testing.T) {
	const (
		metricInUse = `{"errors":{"base":["Metric is used by the latest gateway configuration and cannot be deleted"]}}`
		methodInUse = `{"errors":{"base":["Method is used by the latest gateway configuration and cannot be deleted"]}}`
		hits        = `{"errors":{"base":["The Hits metric cannot be deleted"]}}`
		usedHits    = `{"errors":{"base":["Metric is used by the latest gateway configuration and cannot be deleted","The Hits metric cannot be deleted"]}}`
	)
	metricPath := func(f metricFixture) string { return path("/admin/api/services/%d/metrics/%d.json", f.svc, f.metric) }
	methodPath := func(f metricFixture) string {
		return path("/admin/api/services/%d/metrics/%d/methods/%d.json", f.svc, f.hits, f.method)
	}
	bmetricPath := func(f metricFixture) string {
		return path("/admin/api/backend_apis/%d/metrics/%d.json", f.backend, f.bmetric)
	}
	cases := map[string]struct {
		// setup arranges the tenant and returns the path to DELETE.
		setup    func(h *harness, f metricFixture) string
		wantCode int
		wantRaw  string
	}{
		"a product metric in the latest sandbox config": {setup: func(h *harness, f metricFixture) string {
			f.productRule(h, "/orders", f.metric)
			f.deploy(h, f.svc)
			return metricPath(f)
		}, wantCode: 403, wantRaw: metricInUse},
		"a product method in the latest sandbox config": {setup: func(h *harness, f metricFixture) string {
			f.productRule(h, "/orders", f.method)
			f.deploy(h, f.svc)
			return methodPath(f)
		}, wantCode: 403, wantRaw: methodInUse},
		"a mapped metric never deployed": {setup: func(h *harness, f metricFixture) string {
			f.productRule(h, "/orders", f.metric)
			return metricPath(f)
		}, wantCode: 200},
		"a metric deployed before it was mapped": {setup: func(h *harness, f metricFixture) string {
			f.deploy(h, f.svc)
			f.productRule(h, "/orders", f.metric)
			return metricPath(f)
		}, wantCode: 200},
		"its mapping rule deleted (200) but not deployed: still in the latest config": {setup: func(h *harness, f metricFixture) string {
			rule := f.productRule(h, "/orders", f.metric)
			f.deploy(h, f.svc)
			h.check("delete the rule", "DELETE", rule, nil, 200, "")
			return metricPath(f)
		}, wantCode: 403, wantRaw: metricInUse},
		"its mapping rule deleted and deployed: only an older config has it": {setup: func(h *harness, f metricFixture) string {
			rule := f.productRule(h, "/orders", f.metric)
			f.deploy(h, f.svc)
			h.check("delete the rule", "DELETE", rule, nil, 200, "")
			f.deploy(h, f.svc)
			return metricPath(f)
		}, wantCode: 200},
		"in the latest production config only": {setup: func(h *harness, f metricFixture) string {
			rule := f.productRule(h, "/orders", f.metric)
			f.deploy(h, f.svc)
			h.check("promote", "POST", path("/admin/api/services/%d/proxy/configs/sandbox/1/promote.json", f.svc), url.Values{"to": {"production"}}, 201, "")
			h.check("delete the rule", "DELETE", rule, nil, 200, "")
			f.deploy(h, f.svc)
			return metricPath(f)
		}, wantCode: 403, wantRaw: metricInUse},
		"the product's hits, unused": {setup: func(h *harness, f metricFixture) string {
			return path("/admin/api/services/%d/metrics/%d.json", f.svc, f.hits)
		}, wantCode: 403, wantRaw: hits},
		"the product's hits in the latest config": {setup: func(h *harness, f metricFixture) string {
			f.productRule(h, "/orders", f.hits)
			f.deploy(h, f.svc)
			return path("/admin/api/services/%d/metrics/%d.json", f.svc, f.hits)
		}, wantCode: 403, wantRaw: usedHits},
		"a backend metric in the config of a product using the backend": {setup: func(h *harness, f metricFixture) string {
			f.backendRule(h, "/items", f.bmetric)
			f.deploy(h, f.svc)
			return bmetricPath(f)
		}, wantCode: 403, wantRaw: metricInUse},
		"a backend metric in the config of the second product using it": {setup: func(h *harness, f metricFixture) string {
			other, _ := h.product("outlet")
			h.create(path("/admin/api/services/%d/backend_usages.json", other), url.Values{"backend_api_id": {fmt.Sprint(f.backend)}, "path": {"/stock"}}, "backend_usage")
			f.backendRule(h, "/items", f.bmetric)
			f.deploy(h, other)
			return bmetricPath(f)
		}, wantCode: 403, wantRaw: metricInUse},
		"the backend's hits, unused: no hits rule for a backend": {setup: func(h *harness, f metricFixture) string {
			return path("/admin/api/backend_apis/%d/metrics/%d.json", f.backend, f.bhits)
		}, wantCode: 200},
		"the backend's hits in the latest config": {setup: func(h *harness, f metricFixture) string {
			f.backendRule(h, "/items", f.bhits)
			f.deploy(h, f.svc)
			return path("/admin/api/backend_apis/%d/metrics/%d.json", f.backend, f.bhits)
		}, wantCode: 403, wantRaw: metricInUse},
		"a backend metric after its usage is deleted (200): no product uses the backend": {setup: func(h *harness, f metricFixture) string {
			f.backendRule(h, "/items", f.bmetric)
			f.deploy(h, f.svc)
			h.check("delete the usage", "DELETE", path("/admin/api/services/%d/backend_usages/%d.json", f.svc, f.usage), nil, 200, "")
			return bmetricPath(f)
		}, wantCode: 200},
		"the product, whose latest config uses its metric": {setup: func(h *harness, f metricFixture) string {
			f.productRule(h, "/orders", f.metric)
			f.deploy(h, f.svc)
			return path("/admin/api/services/%d.json", f.svc)
		}, wantCode: 200},
		"the backend, once unused, whose metric a config holds": {setup: func(h *harness, f metricFixture) string {
			f.backendRule(h, "/items", f.bmetric)
			f.deploy(h, f.svc)
			h.check("delete the usage", "DELETE", path("/admin/api/services/%d/backend_usages/%d.json", f.svc, f.usage), nil, 200, "")
			return path("/admin/api/backend_apis/%d.json", f.backend)
		}, wantCode: 200},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			f := newMetricFixture(h)
			target := tc.setup(h, f)
			before := h.sim.Count("acme", KindMetrics)
			res := h.send("DELETE", target, nil)
			if res.code != tc.wantCode || res.raw != tc.wantRaw {
				t.Fatalf("DELETE %s: %d %s, want %d %s", target, res.code, res.raw, tc.wantCode, tc.wantRaw)
			}
			if after := h.sim.Count("acme", KindMetrics); (res.code == 403) != (after == before) {
				t.Errorf("%d metrics before, %d after a %d", before, after, res.code)
			}
		})
	}
}

// TestConfigsCarryMetricIDs: each proxy rule of a configuration names its metric by metric_id, as
// porta's ProxyRulesSource renders it and as ProxyConfig#contains_metric? reads it.
func TestConfigsCarryMetricIDs(t *testing.T) {
	h := newHarness(t)
	f := newMetricFixture(h)
	f.productRule(h, "/orders", f.method)
	f.backendRule(h, "/items", f.bmetric)
	f.deploy(h, f.svc)
	res := h.check("latest", "GET", path("/admin/api/services/%d/proxy/configs/sandbox/latest.json", f.svc), nil, 200, "")
	proxy, _ := res.body.(map[string]any)["proxy_config"].(map[string]any)["content"].(map[string]any)["proxy"].(map[string]any)
	got := []any{}
	rules, _ := proxy["proxy_rules"].([]any)
	for _, r := range rules {
		got = append(got, r.(map[string]any)["metric_id"])
	}
	if diff := cmp.Diff([]any{float64(f.method), float64(f.bmetric)}, got); diff != "" {
		t.Errorf("metric_id of the proxy rules (-want +got):\n%s", diff)
	}
}
