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

			cases := []struct {
				name, method, path string
				form               url.Values
				wantCode           int
				key                string
				fields             []string
				want               map[string]any
			}{
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
				{"hits cannot go", "DELETE", path("%s/metrics/%d.json", base, hits), nil, 403, "errors", []string{"base"},
					map[string]any{"base": []any{"Metric hits cannot be deleted"}}},
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
			for _, tc := range cases {
				res := h.send(tc.method, tc.path, tc.form)
				if res.code != tc.wantCode {
					t.Errorf("%s: %d %s, want %d", tc.name, res.code, res.raw, tc.wantCode)
					continue
				}
				if diff := cmp.Diff(tc.want, fields(res.body, tc.key, tc.fields...)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.name, diff)
				}
			}

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
