package simulator

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// Faults are the failures the simulator injects into authenticated API requests, drawn from its
// seeded random source (one draw per request, in arrival order, so a sequential client sees the same
// faults for the same seed). As JSON (PUT /__sim/faults), durations are nanoseconds:
//
//	{"latency": 20000000, "latencyJitter": 10000000, "errorRate": 0.1, "rateLimitRate": 0.05,
//	 "retryAfterSeconds": 2, "lostResponseRate": 0.2, "tenantLatency": {"slow": 2000000000}}
type Faults struct {
	// Latency is added to every request; LatencyJitter adds a random extra up to its value.
	Latency       time.Duration `json:"latency"`
	LatencyJitter time.Duration `json:"latencyJitter"`
	// ErrorRate is the share of requests answered 503 {"error":"Service Unavailable"} without doing
	// anything.
	ErrorRate float64 `json:"errorRate"`
	// RateLimitRate is the share of requests answered 429 {"error":"Too Many Requests"} with
	// Retry-After: RetryAfterSeconds (at least 1), without doing anything.
	RateLimitRate     float64 `json:"rateLimitRate"`
	RetryAfterSeconds int     `json:"retryAfterSeconds"`
	// LostResponseRate is the share of successful writes whose answer is lost: the write commits, then
	// the connection is closed without a reply, as when a proxy or the network drops it.
	LostResponseRate float64 `json:"lostResponseRate"`
	// TenantRateLimit, when positive, is each tenant's request budget per second (a token bucket of
	// TenantRateBurst, at least 1), as a SaaS tenant's API rate limit: a request beyond it is answered
	// 429 {"error":"Too Many Requests"} at once, with Retry-After saying in whole seconds (at least 1)
	// when the next request would fit, and does nothing. A request that arrives while a Retry-After
	// the tenant was given is running (after a grace of 100ms for requests already on their way) is
	// counted in Stats.IgnoredRetryAfter.
	TenantRateLimit float64 `json:"tenantRateLimit"`
	TenantRateBurst int     `json:"tenantRateBurst"`
	// TenantLatency is the latency of the named tenants' requests, in place of Latency (a slow tenant
	// among fast ones: a busy on-premises 3scale, a far region).
	TenantLatency map[string]time.Duration `json:"tenantLatency,omitempty"`
}

// overTenantLimit takes one request from t's budget and reports whether it was over it, with the
// Retry-After to answer; s.mu must be held.
func (s *Simulator) overTenantLimit(t *tenant, now time.Time) (int, bool) {
	if s.faults.TenantRateLimit <= 0 {
		return 0, false
	}
	burst := max(s.faults.TenantRateBurst, 1)
	if t.limiter == nil || t.limiter.Limit() != rate.Limit(s.faults.TenantRateLimit) || t.limiter.Burst() != burst {
		t.limiter = rate.NewLimiter(rate.Limit(s.faults.TenantRateLimit), burst)
	}
	if now.After(t.refusedAt.Add(retryAfterGrace)) && now.Before(t.quietUntil) {
		// Sent after a 429 had told this tenant's client to wait, and before the wait was over.
		s.ignoredRetryAfter++
	}
	if t.limiter.AllowN(now, 1) {
		return 0, false
	}
	r := t.limiter.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	r.CancelAt(now)
	retry := max(int(math.Ceil(delay.Seconds())), 1)
	t.refusedAt = now
	if until := now.Add(time.Duration(retry) * time.Second); until.After(t.quietUntil) {
		t.quietUntil = until
	}
	return retry, true
}

// retryAfterGrace is how long after a 429 requests still count as sent before the client heard it.
const retryAfterGrace = 100 * time.Millisecond

// retryAfter is the body marker of a 429 answer.
type retryAfter int

// fault is what happens to one request.
type fault struct {
	delay time.Duration
	code  int
	retry int
	lose  bool
}

func (f fault) answer() answer {
	if f.code == http.StatusTooManyRequests {
		return answer{f.code, retryAfter(f.retry)}
	}
	return answer{f.code, map[string]string{"error": "Service Unavailable"}}
}

// drawFault decides the fault of one request to tenant t (nil: none known); s.mu must be held.
func (s *Simulator) drawFault(t *tenant, write bool) fault {
	f := fault{delay: s.faults.Latency}
	if t != nil {
		if d, ok := s.faults.TenantLatency[t.name]; ok {
			f.delay = d
		}
	}
	if s.faults.LatencyJitter > 0 {
		f.delay += time.Duration(s.rnd.Int63n(int64(s.faults.LatencyJitter)))
	}
	switch p := s.rnd.Float64(); {
	case p < s.faults.ErrorRate:
		f.code = http.StatusServiceUnavailable
	case p < s.faults.ErrorRate+s.faults.RateLimitRate:
		f.code, f.retry = http.StatusTooManyRequests, max(s.faults.RetryAfterSeconds, 1)
	}
	if write && f.code == 0 && s.faults.LostResponseRate > 0 && s.rnd.Float64() < s.faults.LostResponseRate {
		f.lose = true
	}
	return f
}

// ScriptedFault is a fault a test asks for on the next Count requests of one tenant that match Method and
// Template (the route's template, e.g. "/admin/api/services/{service_id}/proxy/deploy.json"): answered
// Code (503 or 429) without doing anything, or, with Lose, done and its answer lost.
type ScriptedFault struct {
	Tenant, Method, Template string
	Count                    int
	Code                     int
	Lose                     bool
}

// ScriptFault adds a scripted fault, served before any other on the requests it matches.
func (s *Simulator) ScriptFault(f ScriptedFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripted = append(s.scripted, &f)
}

// takeScripted returns the fault scripted for this request, if any, and counts it; s.mu must be held.
func (s *Simulator) takeScripted(tenant, method, template string) (fault, bool) {
	for i, sf := range s.scripted {
		if sf.Tenant != tenant || sf.Method != method || sf.Template != template {
			continue
		}
		if sf.Count--; sf.Count <= 0 {
			s.scripted = append(s.scripted[:i], s.scripted[i+1:]...)
		}
		f := fault{delay: s.faults.Latency, code: sf.Code, lose: sf.Lose}
		if f.code == 0 && !f.lose {
			f.code = http.StatusServiceUnavailable
		}
		if f.code == http.StatusTooManyRequests {
			f.retry = 1
		}
		return f, true
	}
	return fault{}, false
}

// SetFaults replaces the faults injected from now on.
func (s *Simulator) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// serveControl serves the control endpoints, which need no token and are not counted:
// GET /__sim/stats (Stats as JSON), DELETE /__sim/stats or POST /__sim/stats/reset (204, zeroes the
// counters), GET /__sim/faults and PUT /__sim/faults (Faults as JSON; PUT answers the new faults), and
// POST /__sim/applications {"tenant": "acme", "plan_id": 7, "count": 2} (AddApplications; 204, or 404
// for an unknown tenant or plan).
func (s *Simulator) serveControl(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/__sim/stats" && r.Method == http.MethodGet:
		writeJSON(w, answer{200, s.Stats()})
	case (r.URL.Path == "/__sim/stats" && r.Method == http.MethodDelete) || (r.URL.Path == "/__sim/stats/reset" && r.Method == http.MethodPost):
		s.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/__sim/faults" && r.Method == http.MethodGet:
		s.mu.Lock()
		f := s.faults
		s.mu.Unlock()
		writeJSON(w, answer{200, f})
	case r.URL.Path == "/__sim/faults" && r.Method == http.MethodPut:
		var f Faults
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
			writeJSON(w, answer{400, map[string]string{"error": err.Error()}})
			return
		}
		s.SetFaults(f)
		writeJSON(w, answer{200, f})
	case r.URL.Path == "/__sim/applications" && r.Method == http.MethodPost:
		var req struct {
			Tenant string `json:"tenant"`
			PlanID int64  `json:"plan_id"`
			Count  int    `json:"count"`
		}
		switch err := json.NewDecoder(r.Body).Decode(&req); {
		case err != nil:
			writeJSON(w, answer{400, map[string]string{"error": err.Error()}})
		case !s.AddApplications(req.Tenant, req.PlanID, req.Count):
			writeJSON(w, notFound())
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		writeJSON(w, notFound())
	}
}
