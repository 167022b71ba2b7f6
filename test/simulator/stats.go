package simulator

import (
	"fmt"
	"sort"
	"time"
)

// CallKey identifies a series of requests: tenant, HTTP verb, path template and status (0: lost).
type CallKey struct {
	Tenant   string `json:"tenant"`
	Method   string `json:"method"`
	Endpoint string `json:"endpoint"`
	Code     int    `json:"code"`
}

// CallCount is the number of requests of one series.
type CallCount struct {
	CallKey
	Count int `json:"count"`
}

// Stats are the request counters, as GET /__sim/stats returns them:
//
//	{"total": 12, "writes": 5, "lost": 1,
//	 "calls": [{"tenant": "acme", "method": "POST", "endpoint": "/admin/api/services.json", "code": 201, "count": 2}, ...]}
//
// Calls are sorted by endpoint, method, code and tenant. "endpoint" is the path template (ids as
// {id}, {service_id}...; unknown paths as sent); "tenant" is the token's tenant, or for a refused token
// the tenant whose own admin host (/t/NAME) was addressed, or "master" for the master API refused on
// master's host, else empty; the master account's calls are under "master" (MasterTenant); code 0 counts
// lost responses (the write committed, the reply was dropped). Writes are non-GET calls.
type Stats struct {
	Total  int `json:"total"`
	Writes int `json:"writes"`
	Lost   int `json:"lost"`
	// IgnoredRetryAfter counts requests that came while a Retry-After of their tenant's rate limit
	// (Faults.TenantRateLimit) was running: a client that honours Retry-After makes none.
	IgnoredRetryAfter int         `json:"ignoredRetryAfter"`
	Calls             []CallCount `json:"calls"`
}

// Stats returns the request counters since the start or the last reset.
func (s *Simulator) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{Calls: []CallCount{}, IgnoredRetryAfter: s.ignoredRetryAfter}
	for k, n := range s.stats {
		out.Total += n
		if isWrite(k.Method) {
			out.Writes += n
		}
		if k.Code == 0 {
			out.Lost += n
		}
		out.Calls = append(out.Calls, CallCount{k, n})
	}
	sort.Slice(out.Calls, func(i, j int) bool {
		a, b := out.Calls[i], out.Calls[j]
		if a.Endpoint != b.Endpoint {
			return a.Endpoint < b.Endpoint
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Tenant < b.Tenant
	})
	return out
}

// ResetStats zeroes the request counters.
func (s *Simulator) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = map[CallKey]int{}
	s.journal = map[string][]CallKey{}
	s.ignoredRetryAfter = 0
}

// record counts a request that arrived at arrived and, with Options.Trace, writes its trace line.
func (s *Simulator) record(arrived time.Time, tenantName, method, template, path string, code int) {
	s.count(tenantName, method, template, code)
	if s.trace != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Fprintf(s.trace, "%s %.3f %s %s %s %d %s\n", arrived.Format("15:04:05.000"), time.Since(arrived).Seconds(),
			tenantName, method, template, code, path)
	}
}

// count adds one request to its series.
func (s *Simulator) count(tenantName, method, template string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := CallKey{Tenant: tenantName, Method: method, Endpoint: template, Code: code}
	s.stats[k]++
	if isWrite(method) && tenantName != "" {
		j := append(s.journal[tenantName], k)
		if len(j) >= 2*maxJournal { // trimmed by halves: a copy every maxJournal writes, not on each
			j = append(j[:0:0], j[len(j)-maxJournal:]...)
		}
		s.journal[tenantName] = j
	}
}

// maxJournal bounds each tenant's write journal (the oldest writes go first).
const maxJournal = 4096

// Writes returns a tenant's writes (non-GET requests) in the order they were answered, the last 4096
// since the start or the last reset: tests read the order of creations and deletions from it.
func (s *Simulator) Writes(tenantName string) []CallKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.journal[tenantName]
	return append([]CallKey(nil), j[max(0, len(j)-maxJournal):]...)
}
