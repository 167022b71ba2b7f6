package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFaultKnobs(t *testing.T) {
	cases := map[string]struct {
		faults       Faults
		wantCode     int // 0: no answer (connection dropped)
		wantRaw      string
		wantServices int
		wantHeader   string // Retry-After
		minDelay     time.Duration
		maxDelay     time.Duration // 0: no bound
	}{
		"none":                       {faults: Faults{}, wantCode: 201, wantServices: 1},
		"5xx does nothing":           {faults: Faults{ErrorRate: 1}, wantCode: 503, wantRaw: `{"error":"Service Unavailable"}`},
		"429 with Retry-After":       {faults: Faults{RateLimitRate: 1, RetryAfterSeconds: 3}, wantCode: 429, wantRaw: `{"error":"Too Many Requests"}`, wantHeader: "3"},
		"429 Retry-After at least 1": {faults: Faults{RateLimitRate: 1}, wantCode: 429, wantRaw: `{"error":"Too Many Requests"}`, wantHeader: "1"},
		"lost response commits":      {faults: Faults{LostResponseRate: 1}, wantCode: 0, wantServices: 1},
		"fixed latency":              {faults: Faults{Latency: 100 * time.Millisecond}, wantCode: 201, wantServices: 1, minDelay: 100 * time.Millisecond},
		"latency with jitter":        {faults: Faults{Latency: 50 * time.Millisecond, LatencyJitter: 20 * time.Millisecond}, wantCode: 201, wantServices: 1, minDelay: 50 * time.Millisecond},
		"the tenant's own latency": {faults: Faults{Latency: time.Second, TenantLatency: map[string]time.Duration{"acme": 100 * time.Millisecond}}, wantCode: 201, wantServices: 1,
			minDelay: 100 * time.Millisecond, maxDelay: 900 * time.Millisecond},
		"another tenant's latency": {faults: Faults{TenantLatency: map[string]time.Duration{"other": 2 * time.Second}}, wantCode: 201, wantServices: 1, maxDelay: time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			body, _ := json.Marshal(tc.faults)
			req, _ := http.NewRequest("PUT", h.url+"/__sim/faults", strings.NewReader(string(body)))
			if res := h.roundTrip(req); res.code != 200 {
				t.Fatalf("PUT /__sim/faults: %d %s", res.code, res.raw)
			}
			start := time.Now()
			res := h.send("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
			took := time.Since(start)
			if res.code != tc.wantCode || (tc.wantRaw != "" && res.raw != tc.wantRaw) {
				t.Errorf("answer %d %s (err %v), want %d %s", res.code, res.raw, res.err, tc.wantCode, tc.wantRaw)
			}
			if tc.wantCode == 0 && res.err == nil {
				t.Errorf("the client got an answer, want a dropped connection")
			}
			if got := res.hdr.Get("Retry-After"); got != tc.wantHeader {
				t.Errorf("Retry-After %q, want %q", got, tc.wantHeader)
			}
			if n := h.sim.Count("acme", KindServices); n != tc.wantServices {
				t.Errorf("%d services, want %d", n, tc.wantServices)
			}
			if took < tc.minDelay || (tc.faults.LatencyJitter > 0 && took > tc.minDelay+tc.faults.LatencyJitter+time.Second) {
				t.Errorf("answered in %v, want at least %v", took, tc.minDelay)
			}
			if tc.maxDelay > 0 && took > tc.maxDelay {
				t.Errorf("answered in %v, want at most %v", took, tc.maxDelay)
			}
		})
	}
}

func TestLostResponseIsCountedAndReadsAreNeverLost(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Faults = Faults{LostResponseRate: 1} })
	h.send("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
	res := h.send("GET", "/admin/api/services.json", nil)
	if res.code != 200 || len(listed(res.body, "services", "service")) != 1 {
		t.Errorf("read after a lost create: %d %s, want the service", res.code, res.raw)
	}
	res = h.send("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
	if res.code != 422 {
		t.Errorf("retried create: %d %s, want 422 (refusals are not lost)", res.code, res.raw)
	}
	st := h.sim.Stats()
	if st.Lost != 1 {
		t.Errorf("%d lost in the stats, want 1: %+v", st.Lost, st.Calls)
	}
}

// TestFaultsAreSeeded checks that a seed draws the same faults for the same requests, and that
// the rates are honoured over many requests.
func TestFaultsAreSeeded(t *testing.T) {
	run := func(seed int64) []int {
		h := newHarness(t, func(o *Options) {
			o.Seed = seed
			o.Faults = Faults{ErrorRate: 0.3, RateLimitRate: 0.2, RetryAfterSeconds: 1}
		})
		codes := make([]int, 0, 200)
		for range 200 {
			codes = append(codes, h.send("GET", "/admin/api/services.json", nil).code)
		}
		return codes
	}
	a, b, c := run(42), run(42), run(43)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different faults (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Errorf("seeds 42 and 43 drew the same faults")
	}
	got := map[int]int{}
	for _, code := range a {
		got[code]++
	}
	if got[503] < 40 || got[503] > 80 || got[429] < 20 || got[429] > 60 || got[200] < 80 {
		t.Errorf("codes %v over 200 requests, want about 60 503s, 40 429s and 100 200s", got)
	}

	h := newHarness(t)
	h.sim.SetFaults(Faults{ErrorRate: 1})
	if res := h.send("GET", "/admin/api/services.json", nil); res.code != 503 {
		t.Errorf("SetFaults: %d, want 503", res.code)
	}
	resp, err := http.Get(h.url + "/__sim/stats") // control endpoints are never faulted
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET /__sim/stats under faults: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	h.sim.SetFaults(Faults{})
	if res := h.send("GET", "/admin/api/services.json", nil); res.code != 200 {
		t.Errorf("SetFaults back to none: %d", res.code)
	}
}

// TestTenantRateLimit: beyond a tenant's budget, requests are answered 429 at once with a Retry-After,
// do nothing, and another tenant's budget is its own.
func TestTenantRateLimit(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Tenants["other"] = "other-token"
		o.Faults = Faults{TenantRateLimit: 0.5, TenantRateBurst: 2, Latency: 50 * time.Millisecond}
	})
	for i := range 2 {
		if res := h.send("POST", "/admin/api/services.json", url.Values{"name": {fmt.Sprint("s", i)}}); res.code != 201 {
			t.Fatalf("request %d within the burst: %d %s", i, res.code, res.raw)
		}
	}
	start := time.Now()
	res := h.send("POST", "/admin/api/services.json", url.Values{"name": {"over"}})
	if res.code != 429 || res.raw != `{"error":"Too Many Requests"}` {
		t.Errorf("beyond the budget: %d %s, want 429", res.code, res.raw)
	}
	if got := res.hdr.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2 (one request every 2s)", got)
	}
	if took := time.Since(start); took >= 50*time.Millisecond {
		t.Errorf("a refused request took %v: it should be answered at once, without the latency", took)
	}
	if n := h.sim.Count("acme", KindServices); n != 2 {
		t.Errorf("%d services, want 2: a refused request must do nothing", n)
	}
	if got := h.sim.Stats().IgnoredRetryAfter; got != 0 {
		t.Errorf("%d requests counted as ignoring Retry-After, want 0 so far", got)
	}
	time.Sleep(retryAfterGrace + 10*time.Millisecond)
	if res := h.send("GET", "/admin/api/services.json", nil); res.code != 429 {
		t.Errorf("within the Retry-After: %d, want 429", res.code)
	}
	if got := h.sim.Stats().IgnoredRetryAfter; got != 1 {
		t.Errorf("%d requests counted as ignoring Retry-After, want 1", got)
	}
	req, _ := http.NewRequest("GET", h.url+"/admin/api/services.json", nil)
	req.SetBasicAuth("", "other-token")
	if res := h.roundTrip(req); res.code != 200 {
		t.Errorf("another tenant: %d, want 200 (budgets are per tenant)", res.code)
	}
}

// Options.Trace gets one line per API request, its answer's code (0 for a lost answer) and path included,
// and never the token.
func TestTrace(t *testing.T) {
	trace, err := os.Create(filepath.Join(t.TempDir(), "trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer trace.Close()
	h := newHarness(t, func(o *Options) { o.Trace = trace })
	h.send("POST", "/admin/api/services.json", url.Values{"name": {"Pets"}})
	h.sim.SetFaults(Faults{LostResponseRate: 1})
	h.send("POST", "/admin/api/services.json", url.Values{"name": {"Cats"}})
	h.send("GET", "/admin/api/services/1.json", nil)
	raw, err := os.ReadFile(trace.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	want := []string{"acme POST /admin/api/services.json 201 /admin/api/services.json", "acme POST /admin/api/services.json 0 /admin/api/services.json",
		"acme GET /admin/api/services/{id}.json 200 /admin/api/services/1.json"}
	if len(lines) != len(want) {
		t.Fatalf("trace %q, want %d lines", lines, len(want))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 7 || !strings.HasSuffix(l, want[i]) {
			t.Errorf("line %d %q, want time, duration, then %q", i, l, want[i])
		}
		if _, err := time.Parse("15:04:05.000", f[0]); err != nil {
			t.Errorf("line %d %q: the time of day: %v", i, l, err)
		}
		if strings.Contains(l, "tok") {
			t.Errorf("line %d %q holds the token", i, l)
		}
	}
}
