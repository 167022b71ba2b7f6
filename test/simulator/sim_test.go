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

	"github.com/google/go-cmp/cmp"
)

// harness drives a simulator over real HTTP as tenant "acme" (token "tok"); tenant "other" has "tok2".
type harness struct {
	t   *testing.T
	sim *Simulator
	url string
}

func newHarness(t *testing.T, opts ...func(*Options)) *harness {
	t.Helper()
	o := Options{Tenants: map[string]string{"acme": "tok", "other": "tok2"}, Seed: 1}
	for _, f := range opts {
		f(&o)
	}
	sim := New(o)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &harness{t: t, sim: sim, url: srv.URL}
}

// result is one answer: status, raw body and decoded body.
type result struct {
	code int
	raw  string
	body any
	hdr  http.Header
	err  error
}

// send sends a form-encoded request with the token in HTTP Basic auth, as porta takes it.
func (h *harness) send(method, path string, form url.Values) result {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("", "tok")
	return h.roundTrip(req)
}

func (h *harness) roundTrip(req *http.Request) result {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body any
	_ = json.Unmarshal(raw, &body)
	return result{code: resp.StatusCode, raw: strings.TrimSpace(string(raw)), body: body, hdr: resp.Header}
}

// create posts form and returns the new object's id, failing the test unless the answer is 201.
func (h *harness) create(path string, form url.Values, key string) int64 {
	h.t.Helper()
	res := h.send("POST", path, form)
	if res.code != http.StatusCreated {
		h.t.Fatalf("POST %s %v: %d %s", path, form, res.code, res.raw)
	}
	obj, _ := res.body.(map[string]any)[key].(map[string]any)
	id, _ := obj["id"].(float64)
	if id == 0 {
		h.t.Fatalf("POST %s: no %s.id in %s", path, key, res.raw)
	}
	return int64(id)
}

// fields picks some fields of the object wrapped under key (of a decoded body), for cmp.Diff.
func fields(body any, key string, names ...string) map[string]any {
	m, _ := body.(map[string]any)
	if key != "" {
		m, _ = m[key].(map[string]any)
	}
	out := map[string]any{}
	for _, n := range names {
		out[n] = m[n]
	}
	return out
}

// listed returns the ids of a wrapped list {"plural":[{"singular":{"id":...}}]} or of a bare array.
func listed(body any, plural, singular string) []int64 {
	var items []any
	if plural == "" {
		items, _ = body.([]any)
	} else {
		m, _ := body.(map[string]any)
		items, _ = m[plural].([]any)
	}
	ids := []int64{}
	for _, it := range items {
		obj, _ := it.(map[string]any)[singular].(map[string]any)
		id, _ := obj["id"].(float64)
		ids = append(ids, int64(id))
	}
	return ids
}

func path(format string, ids ...any) string { return fmt.Sprintf(format, ids...) }

// product creates a service and returns its id and the id of its hits metric. It deletes the default
// mapping rule porta gives a new service (GET / on hits), so that tests start from no rule.
func (h *harness) product(systemName string) (id, hits int64) {
	h.t.Helper()
	id = h.create("/admin/api/services.json", url.Values{"name": {"Product " + systemName}, "system_name": {systemName}}, "service")
	res := h.send("GET", path("/admin/api/services/%d/metrics.json", id), nil)
	rules := listed(h.send("GET", path("/admin/api/services/%d/proxy/mapping_rules.json", id), nil).body, "mapping_rules", "mapping_rule")
	if len(rules) != 1 {
		h.t.Fatalf("a new service has %d mapping rules, want porta's default one", len(rules))
	}
	if res := h.send("DELETE", path("/admin/api/services/%d/proxy/mapping_rules/%d.json", id, rules[0]), nil); res.code != 200 {
		h.t.Fatalf("DELETE the default mapping rule: %d %s", res.code, res.raw)
	}
	return id, listed(res.body, "metrics", "metric")[0]
}

// backend creates a backend API and returns its id and the id of its hits metric.
func (h *harness) backend(systemName string) (id, hits int64) {
	h.t.Helper()
	id = h.create("/admin/api/backend_apis.json", url.Values{"name": {"Backend " + systemName}, "system_name": {systemName},
		"private_endpoint": {"https://" + systemName + ".example.com"}}, "backend_api")
	res := h.send("GET", path("/admin/api/backend_apis/%d/metrics.json", id), nil)
	return id, listed(res.body, "metrics", "metric")[0]
}

// fieldCase is a request and what its answer must be: the status, and the given fields of the object
// under key ("errors" for a refusal, "" for an unwrapped body).
type fieldCase struct {
	name, method, path string
	form               url.Values
	wantCode           int
	key                string
	fields             []string
	want               map[string]any
}

// checkFields sends each case's request through h and checks its answer.
func checkFields(t *testing.T, h *harness, cases []fieldCase) {
	t.Helper()
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
}
