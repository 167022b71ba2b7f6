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

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	denied := `{"error":"Access denied"}`
	cases := map[string]struct {
		path     string
		set      func(*http.Request)
		wantCode int
		wantRaw  string
	}{
		"token as Basic password":      {"/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 200, `{"services":[]}`},
		"token as Basic user name":     {"/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("tok", "") }, 200, `{"services":[]}`},
		"access_token parameter":       {"/admin/api/services.json?access_token=tok", func(*http.Request) {}, 200, `{"services":[]}`},
		"access_token wins over Basic": {"/admin/api/services.json?access_token=nope", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 403, denied},
		"blank access_token":           {"/admin/api/services.json?access_token=", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 403, denied},
		"wrong token":                  {"/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "nope") }, 403, denied},
		"no token":                     {"/admin/api/services.json", func(*http.Request) {}, 403, denied},
		"no token, unknown path":       {"/admin/api/nothing.json", func(*http.Request) {}, 403, denied},
		"tenant by path":               {"/t/acme/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok") }, 200, `{"services":[]}`},
		"another tenant's token":       {"/t/acme/admin/api/services.json", func(r *http.Request) { r.SetBasicAuth("", "tok2") }, 403, denied},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.url+tc.path, nil)
			tc.set(req)
			res := h.roundTrip(req)
			if res.code != tc.wantCode || res.raw != tc.wantRaw {
				t.Errorf("%d %s, want %d %s", res.code, res.raw, tc.wantCode, tc.wantRaw)
			}
		})
	}
}

func TestTenantsAreSeparate(t *testing.T) {
	h := newHarness(t)
	id := h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")
	req, _ := http.NewRequest("GET", h.url+path("/admin/api/services/%d.json", id), nil)
	req.SetBasicAuth("", "tok2")
	if res := h.roundTrip(req); res.code != 404 {
		t.Errorf("other tenant reads acme's service: %d %s", res.code, res.raw)
	}
	h.sim.AddTenant("acme", "rotated")
	req, _ = http.NewRequest("GET", h.url+path("/admin/api/services/%d.json", id), nil)
	req.SetBasicAuth("", "rotated")
	if res := h.roundTrip(req); res.code != 200 {
		t.Errorf("second token of acme: %d %s", res.code, res.raw)
	}
	h.sim.RevokeToken("rotated")
	if res := h.roundTrip(req); res.code != 403 {
		t.Errorf("revoked token: %d", res.code)
	}
}

func TestRequestBodies(t *testing.T) {
	cases := map[string]struct {
		contentType, body string
	}{
		"form":                  {"application/x-www-form-urlencoded", "name=Pets&system_name=pets"},
		"wrapped form":          {"application/x-www-form-urlencoded", "service%5Bname%5D=Pets&service%5Bsystem_name%5D=pets"},
		"JSON":                  {"application/json", `{"name":"Pets","system_name":"pets"}`},
		"JSON wrapped":          {"application/json", `{"service":{"name":"Pets","system_name":"pets"}}`},
		"JSON with token in it": {"application/json", `{"access_token":"tok","name":"Pets","system_name":"pets"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			req, _ := http.NewRequest("POST", h.url+"/admin/api/services.json", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			if !strings.Contains(tc.body, "access_token") {
				req.SetBasicAuth("", "tok")
			}
			res := h.roundTrip(req)
			if diff := cmp.Diff(map[string]any{"name": "Pets", "system_name": "pets"}, fields(res.body, "service", "name", "system_name")); res.code != 201 || diff != "" {
				t.Errorf("%d (-want +got):\n%s", res.code, diff)
			}
		})
	}
}

func TestValidationErrorsAreLikePortas(t *testing.T) {
	h := newHarness(t)
	h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")
	cases := map[string]struct {
		path    string
		form    url.Values
		wantRaw string
	}{
		"duplicate service":   {"/admin/api/services.json", url.Values{"name": {"Pets"}}, `{"errors":{"system_name":["has already been taken"]}}`},
		"blank name":          {"/admin/api/services.json", url.Values{}, `{"errors":{"name":["can't be blank"]}}`},
		"bad system name":     {"/admin/api/services.json", url.Values{"name": {"X"}, "system_name": {"b@d!"}}, `{"errors":{"system_name":["invalid. Only ASCII letters, numbers, dashes and underscores are allowed."]}}`},
		"one-letter name":     {"/admin/api/services.json", url.Values{"name": {"X"}}, `{"errors":{"system_name":["invalid. Only ASCII letters, numbers, dashes and underscores are allowed."]}}`},
		"deployment option":   {"/admin/api/services.json", url.Values{"name": {"Cats"}, "deployment_option": {"cloud"}}, `{"errors":{"deployment_option":["is not included in the list"]}}`},
		"backend endpoint":    {"/admin/api/backend_apis.json", url.Values{"name": {"Bk"}}, `{"errors":{"private_endpoint":["can't be blank"]}}`},
		"backend bad URL":     {"/admin/api/backend_apis.json", url.Values{"name": {"Bk"}, "private_endpoint": {"ftp://x"}}, `{"errors":{"private_endpoint":["` + msgBackendEndpointInvalid + `"]}}`},
		"backend on loopback": {"/admin/api/backend_apis.json", url.Values{"name": {"Bk"}, "private_endpoint": {"http://127.0.0.1:8080"}}, `{"errors":{"private_endpoint":["Sorry, this domain is protected"]}}`},
		"two errors at once":  {"/admin/api/backend_apis.json", url.Values{"private_endpoint": {"nope"}}, `{"errors":{"name":["can't be blank"],"private_endpoint":["` + msgBackendEndpointInvalid + `"]}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := h.send("POST", tc.path, tc.form)
			if res.code != 422 || res.raw != tc.wantRaw {
				t.Errorf("%d %s, want 422 %s", res.code, res.raw, tc.wantRaw)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	h := newHarness(t)
	for i := range 502 {
		if res := h.send("POST", "/admin/api/services.json", url.Values{"name": {fmt.Sprintf("s%d", i)}}); res.code != 201 {
			t.Fatalf("create: %d %s", res.code, res.raw)
		}
	}
	b, hits := h.backend("bk")
	for i := range 3 {
		h.create(path("/admin/api/backend_apis/%d/metrics/%d/methods.json", b, hits), url.Values{"friendly_name": {fmt.Sprintf("m%d", i)}}, "method")
	}
	count := func(p, plural, singular string) int {
		res := h.send("GET", p, nil)
		return len(listed(res.body, plural, singular))
	}
	cases := map[string]struct {
		path, plural, singular string
		want                   int
	}{
		"default page is 500":             {"/admin/api/services.json", "services", "service", 500},
		"second page":                     {"/admin/api/services.json?page=2", "services", "service", 2},
		"third page is empty":             {"/admin/api/services.json?page=3", "services", "service", 0},
		"per_page above 500 is 500":       {"/admin/api/services.json?per_page=1000", "services", "service", 500},
		"per_page 200, page 3":            {"/admin/api/services.json?per_page=200&page=3", "services", "service", 102},
		"bad page is 1":                   {"/admin/api/services.json?page=-1&per_page=5", "services", "service", 5},
		"backend methods paginate":        {path("/admin/api/backend_apis/%d/metrics/%d/methods.json?per_page=2&page=2", b, hits), "methods", "method", 1},
		"service metrics do not":          {"/admin/api/services/1/metrics.json?per_page=1&page=2", "metrics", "metric", 1},
		"service metrics ignore per_page": {"/admin/api/services/1/metrics.json?per_page=1", "metrics", "metric", 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := count(tc.path, tc.plural, tc.singular); got != tc.want {
				t.Errorf("%d items, want %d", got, tc.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	h := newHarness(t)
	svc := h.create("/admin/api/services.json", url.Values{"name": {"Pets"}}, "service")
	h.send("GET", path("/admin/api/services/%d/metrics.json", svc), nil)
	h.send("GET", path("/admin/api/services/%d/metrics.json", svc), nil)
	h.send("GET", "/admin/api/services/999.json", nil)
	h.send("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
	req, _ := http.NewRequest("GET", h.url+"/admin/api/services.json", nil) // no token
	h.roundTrip(req)
	req, _ = http.NewRequest("GET", h.url+"/t/acme/admin/api/services.json", nil) // a refused token on acme's own host
	req.SetBasicAuth("", "wrong")
	h.roundTrip(req)

	want := Stats{Total: 7, Writes: 2, Calls: []CallCount{
		{CallKey{"", "GET", "/admin/api/services.json", 403}, 1},
		{CallKey{"acme", "GET", "/admin/api/services.json", 403}, 1},
		{CallKey{"acme", "POST", "/admin/api/services.json", 201}, 1},
		{CallKey{"acme", "POST", "/admin/api/services.json", 422}, 1},
		{CallKey{"acme", "GET", "/admin/api/services/{id}.json", 404}, 1},
		{CallKey{"acme", "GET", "/admin/api/services/{service_id}/metrics.json", 200}, 2},
	}}
	if diff := cmp.Diff(want, h.sim.Stats()); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
	wantWrites := []CallKey{{"acme", "POST", "/admin/api/services.json", 201}, {"acme", "POST", "/admin/api/services.json", 422}}
	if diff := cmp.Diff(wantWrites, h.sim.Writes("acme")); diff != "" {
		t.Errorf("Writes(acme) (-want +got):\n%s", diff)
	}

	get := func() Stats {
		resp, err := http.Get(h.url + "/__sim/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st Stats
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("GET /__sim/stats, which is not counted (-want +got):\n%s", diff)
	}

	resets := map[string]struct{ method, path string }{
		"DELETE /__sim/stats":     {"DELETE", "/__sim/stats"},
		"POST /__sim/stats/reset": {"POST", "/__sim/stats/reset"},
	}
	for name, r := range resets {
		t.Run(name, func(t *testing.T) {
			h.send("GET", "/admin/api/services.json", nil)
			req, _ := http.NewRequest(r.method, h.url+r.path, nil)
			if res := h.roundTrip(req); res.code != http.StatusNoContent {
				t.Fatalf("reset: %d", res.code)
			}
			if diff := cmp.Diff(Stats{Calls: []CallCount{}}, get()); diff != "" {
				t.Errorf("after reset (-want +got):\n%s", diff)
			}
			if w := h.sim.Writes("acme"); len(w) != 0 {
				t.Errorf("writes after reset: %v", w)
			}
		})
	}
}
