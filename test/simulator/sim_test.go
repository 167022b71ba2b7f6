package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type harness struct {
	t   *testing.T
	sim *Simulator
	url string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	sim := New(Options{Tenants: map[string]string{"acme": "tok", "other": "tok2"}, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &harness{t: t, sim: sim, url: srv.URL}
}

// do sends a request with the token as porta takes it and returns the status and decoded body.
func (h *harness) do(method, path string, form url.Values) (int, any, http.Header) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body any
	_ = json.Unmarshal(raw, &body)
	return resp.StatusCode, body, resp.Header
}

func TestStatusCodesAndBodiesAreLikePortas(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, method, path string
		form               url.Values
		wantCode           int
		wantBody           string
	}{
		{"create service", "POST", "/admin/api/services.json", url.Values{"name": {"Pets"}}, 201, `"system_name":"pets"`},
		{"duplicate system name", "POST", "/admin/api/services.json", url.Values{"name": {"Pets"}}, 422, `{"errors":{"system_name":["has already been taken"]}}`},
		{"blank name", "POST", "/admin/api/services.json", url.Values{}, 422, `{"errors":{"name":["can't be blank"]}}`},
		{"not found", "GET", "/admin/api/services/999.json", nil, 404, `{"status":"Not found"}`},
		{"hits comes with the service", "GET", "/admin/api/services/1/metrics.json", nil, 200, `"system_name":"hits"`},
		{"bad pattern", "POST", "/admin/api/services/1/proxy/mapping_rules.json", url.Values{"http_method": {"GET"}, "pattern": {"x"}, "metric_id": {"2"}}, 422, `"pattern"`},
		{"localhost endpoint", "POST", "/admin/api/backend_apis.json", url.Values{"name": {"L"}, "private_endpoint": {"http://localhost:8080"}}, 422, `"private_endpoint":["is a protected domain"]`},
		{"backend", "POST", "/admin/api/backend_apis.json", url.Values{"name": {"B"}, "private_endpoint": {"https://b"}}, 201, `"backend_api"`},
		{"usage", "POST", "/admin/api/services/1/backend_usages.json", url.Values{"backend_api_id": {"3"}, "path": {"/"}}, 201, `"backend_usage"`},
		{"usages are a bare array", "GET", "/admin/api/services/1/backend_usages.json", nil, 200, `[{"backend_usage"`},
		{"used backend cannot go", "DELETE", "/admin/api/backend_apis/3.json", nil, 403, `"base":["cannot be deleted because it is used by at least one Product"]`},
		{"plan", "POST", "/admin/api/services/1/application_plans.json", url.Values{"name": {"Basic"}, "state_event": {"publish"}}, 201, `"state":"published"`},
		{"bad period", "POST", "/admin/api/application_plans/6/metrics/2/limits.json", url.Values{"period": {"fortnight"}, "value": {"1"}}, 422, `"period"`},
		{"service delete cascades", "DELETE", "/admin/api/services/1.json", nil, 200, ``},
		{"plan gone with it", "GET", "/admin/api/services/1/application_plans/6.json", nil, 404, `Not found`},
		{"backend free again", "DELETE", "/admin/api/backend_apis/3.json", nil, 200, ``},
	}
	for _, tc := range cases {
		code, body, _ := h.do(tc.method, tc.path, tc.form)
		raw, _ := json.Marshal(body)
		if code != tc.wantCode || !strings.Contains(string(raw), tc.wantBody) {
			t.Errorf("%s: %d %s; want %d with %s", tc.name, code, raw, tc.wantCode, tc.wantBody)
		}
	}
	for _, kind := range []string{"services", "metrics", "application_plans", "backend_usages", "backend_apis"} {
		if n := h.sim.Count("acme", kind); n != 0 {
			t.Errorf("%d %s left after the cascades", n, kind)
		}
	}
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	get := func(path string, set func(*http.Request)) int {
		req, _ := http.NewRequest("GET", h.url+path, nil)
		set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := map[string]struct {
		path string
		set  func(*http.Request)
		want int
	}{
		"basic auth":             {"/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 200},
		"access_token parameter": {"/admin/api/services.json?access_token=tok", func(*http.Request) {}, 200},
		"wrong token":            {"/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "nope") }, 403},
		"no token":               {"/admin/api/services.json", func(*http.Request) {}, 403},
		"tenant by path":         {"/t/acme/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 200},
		"another tenant's token": {"/t/acme/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok2") }, 403},
	}
	for name, tc := range cases {
		if got := get(tc.path, tc.set); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}

func TestPaginationAndStats(t *testing.T) {
	h := newHarness(t)
	for i := range 501 {
		if code, body, _ := h.do("POST", "/admin/api/backend_apis.json", url.Values{"name": {fmt.Sprintf("b%d", i)}, "private_endpoint": {"https://b"}}); code != 201 {
			t.Fatalf("create: %d %v", code, body)
		}
	}
	count := func(page string) int {
		_, body, _ := h.do("GET", "/admin/api/backend_apis.json?per_page=500&page="+page, nil)
		return len(body.(map[string]any)["backend_apis"].([]any))
	}
	if a, b := count("1"), count("2"); a != 500 || b != 1 {
		t.Errorf("pages of %d and %d, want 500 and 1", a, b)
	}
	st := h.sim.Stats()
	want := []CallCount{
		{CallKey{"acme", "GET", "/admin/api/backend_apis.json", 200}, 2},
		{CallKey{"acme", "POST", "/admin/api/backend_apis.json", 201}, 501},
	}
	if diff := cmp.Diff(want, st.Calls); diff != "" || st.Total != 503 || st.Writes != 501 {
		t.Errorf("stats total %d writes %d (-want +got):\n%s", st.Total, st.Writes, diff)
	}
	resp, err := http.Get(h.url + "/__sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	var served Stats
	_ = json.NewDecoder(resp.Body).Decode(&served)
	resp.Body.Close()
	if served.Total != 503 {
		t.Errorf("GET /__sim/stats total %d, want 503 (and not counting itself)", served.Total)
	}
	req, _ := http.NewRequest("DELETE", h.url+"/__sim/stats", nil)
	if _, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	if st := h.sim.Stats(); st.Total != 0 {
		t.Errorf("stats after reset: %d", st.Total)
	}
}

func TestFaults(t *testing.T) {
	cases := map[string]struct {
		faults   Faults
		wantCode int
		check    func(t *testing.T, h *harness, hdr http.Header)
	}{
		"5xx": {faults: Faults{ErrorRate: 1}, wantCode: 503},
		"429 with Retry-After": {faults: Faults{RateLimitRate: 1, RetryAfterSeconds: 3}, wantCode: 429, check: func(t *testing.T, _ *harness, hdr http.Header) {
			if hdr.Get("Retry-After") != "3" {
				t.Errorf("Retry-After = %q", hdr.Get("Retry-After"))
			}
		}},
		"lost response commits the write": {faults: Faults{LostResponseRate: 1}, wantCode: 0, check: func(t *testing.T, h *harness, _ http.Header) {
			if n := h.sim.Count("acme", "services"); n != 1 {
				t.Errorf("%d services after a lost response, want 1", n)
			}
		}},
		"latency": {faults: Faults{Latency: 150 * time.Millisecond}, wantCode: 201},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			body, _ := json.Marshal(tc.faults)
			req, _ := http.NewRequest("PUT", h.url+"/__sim/faults", strings.NewReader(string(body)))
			if _, err := http.DefaultClient.Do(req); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code, _, hdr := h.do("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
			if code != tc.wantCode {
				t.Errorf("status %d, want %d", code, tc.wantCode)
			}
			if tc.faults.Latency > 0 && time.Since(start) < tc.faults.Latency {
				t.Errorf("answered in %v, want at least %v", time.Since(start), tc.faults.Latency)
			}
			if tc.check != nil {
				tc.check(t, h, hdr)
			}
		})
	}
}
