// Package simulator is a stateful, in-memory 3scale Account Management API (porta's admin API) for
// tests and the demo: services with metrics, methods, mapping rules, proxy, OIDC and policies; backend
// APIs with theirs; backend usages; application plans with limits and pricing rules. It answers like
// porta — wrappers, status codes, error bodies, pagination, cascades — counts requests by tenant, verb,
// path template and status (GET /__sim/stats), and injects seeded faults: latency, 5xx, 429 with
// Retry-After, and lost responses.
package simulator

import (
	"encoding/json"
	"math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Simulator.
type Options struct {
	// Tenants maps tenant names to their access tokens; a request's token chooses its tenant.
	Tenants map[string]string
	// Seed makes fault injection reproducible.
	Seed int64
	// Faults to inject from the start.
	Faults Faults
}

// Simulator is an http.Handler serving the simulated API. Safe for concurrent use.
type Simulator struct {
	mu      sync.Mutex
	tenants map[string]*tenant // by token
	names   map[string]*tenant // by name
	faults  Faults
	rnd     *rand.Rand
	stats   map[CallKey]int
	routes  []route
}

// New returns a simulator with the given tenants.
func New(opts Options) *Simulator {
	s := &Simulator{tenants: map[string]*tenant{}, names: map[string]*tenant{}, faults: opts.Faults,
		rnd: rand.New(rand.NewSource(opts.Seed)), stats: map[CallKey]int{}}
	for name, token := range opts.Tenants {
		s.AddTenant(name, token)
	}
	s.routes = s.buildRoutes()
	return s
}

// AddTenant adds a tenant reachable with token; for a tenant that exists, it adds token to it (a
// rotated or second access token).
func (s *Simulator) AddTenant(name, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.names[name]
	if !ok {
		t = newTenant(name)
		s.names[name] = t
	}
	s.tenants[token] = t
}

// RevokeToken makes token unusable.
func (s *Simulator) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tenants, token)
}

// request is one parsed API request.
type request struct {
	t      *tenant
	method string
	params map[string]int64 // path ids
	form   url.Values       // query and form values
}

// answer is a handler's reply.
type answer struct {
	code int
	body any
}

type handlerFunc func(r *request) answer

type route struct {
	method   string
	template string // e.g. /admin/api/services/{service_id}/metrics/{id}.json
	segments []string
	handle   handlerFunc
	write    bool
}

func (s *Simulator) handle(method, template string, h handlerFunc) route {
	return route{method: method, template: template, segments: strings.Split(strings.TrimSuffix(template, ".json"), "/"), handle: h,
		write: method != http.MethodGet}
}

// match returns the route for method and path, and the path ids.
func (s *Simulator) match(method, path string) (*route, map[string]int64, bool) {
	segs := strings.Split(strings.TrimSuffix(path, ".json"), "/")
	pathKnown := false
	for i := range s.routes {
		rt := &s.routes[i]
		if len(rt.segments) != len(segs) {
			continue
		}
		params := map[string]int64{}
		ok := true
		for j, seg := range rt.segments {
			if strings.HasPrefix(seg, "{") {
				id, err := strconv.ParseInt(segs[j], 10, 64)
				if err != nil {
					ok = false
					break
				}
				params[strings.Trim(seg, "{}")] = id
			} else if seg != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		pathKnown = true
		if rt.method == method || (method == http.MethodPatch && rt.method == http.MethodPut) || (method == http.MethodPut && rt.method == http.MethodPatch) {
			return rt, params, true
		}
	}
	return nil, nil, pathKnown
}

// ServeHTTP implements http.Handler.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if strings.HasPrefix(hr.URL.Path, "/__sim/") {
		s.serveControl(w, hr)
		return
	}
	_ = hr.ParseForm()
	token := hr.Form.Get("access_token")
	if _, pass, ok := hr.BasicAuth(); ok {
		token = pass
	}
	// "/t/NAME/admin/api/..." addresses tenant NAME, as a tenant's own admin host would: the token must
	// be NAME's. It lets tests give each tenant its own admin URL on one listener.
	path, hostTenant := hr.URL.Path, ""
	if rest, ok := strings.CutPrefix(path, "/t/"); ok {
		hostTenant, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	rt, params, pathKnown := s.match(hr.Method, path)
	template := path
	if rt != nil {
		template = rt.template
	}

	s.mu.Lock()
	t := s.tenants[token]
	if hostTenant != "" && (t == nil || t.name != hostTenant) {
		t = nil
	}
	fault := s.drawFault(rt != nil && rt.write)
	s.mu.Unlock()
	if fault.delay > 0 {
		time.Sleep(fault.delay)
	}
	var a answer
	switch {
	case t == nil:
		a = answer{http.StatusForbidden, map[string]string{"error": "Access denied"}}
	case rt == nil && pathKnown:
		a = answer{http.StatusMethodNotAllowed, map[string]string{"error": "Method not allowed"}}
	case rt == nil:
		a = notFound()
	case fault.code != 0:
		a = fault.answer()
	default:
		req := &request{t: t, method: hr.Method, params: params, form: hr.Form}
		s.mu.Lock()
		a = rt.handle(req)
		s.mu.Unlock()
		if fault.lose && a.code < 300 {
			s.count(t, hr.Method, template, 0)
			loseResponse(w)
			return
		}
	}
	tenantName := ""
	if t != nil {
		tenantName = t.name
	}
	s.mu.Lock()
	s.stats[CallKey{Tenant: tenantName, Method: hr.Method, Endpoint: template, Code: a.code}]++
	s.mu.Unlock()
	writeJSON(w, a)
}

func (s *Simulator) count(t *tenant, method, template string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats[CallKey{Tenant: t.name, Method: method, Endpoint: template, Code: code}]++
}

// loseResponse drops the connection without an answer: the write has committed, the client never hears.
func loseResponse(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

func writeJSON(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if ra, ok := a.body.(retryAfter); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(ra)))
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(`{"error":"Too Many Requests"}`))
		return
	}
	w.WriteHeader(a.code)
	if a.body != nil {
		_ = json.NewEncoder(w).Encode(a.body)
	}
}

func notFound() answer { return answer{http.StatusNotFound, map[string]string{"status": "Not found"}} }

func unprocessable(field, msg string) answer {
	return answer{http.StatusUnprocessableEntity, map[string]any{"errors": map[string][]string{field: {msg}}}}
}
