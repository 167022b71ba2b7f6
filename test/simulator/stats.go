package simulator

import "sort"

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
// {"total": N, "writes": N, "calls": [{"tenant","method","endpoint","code","count"}...]}.
type Stats struct {
	Total  int         `json:"total"`
	Writes int         `json:"writes"`
	Calls  []CallCount `json:"calls"`
}

// Stats returns the request counters since the start or the last reset.
func (s *Simulator) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{Calls: []CallCount{}}
	for k, n := range s.stats {
		out.Total += n
		if k.Method != "GET" {
			out.Writes += n
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
		return a.Code < b.Code
	})
	return out
}

// ResetStats zeroes the request counters.
func (s *Simulator) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = map[CallKey]int{}
}

// Count returns how many objects of a kind a tenant has: "services", "backend_apis", "metrics" (methods
// included), "mapping_rules", "backend_usages", "application_plans", "limits", "pricing_rules", or
// "deploys" (proxy deployments so far). -1 for an unknown tenant or kind.
func (s *Simulator) Count(tenantName, kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.names[tenantName]
	if !ok {
		return -1
	}
	switch kind {
	case "services":
		return len(t.services)
	case "backend_apis":
		return len(t.backends)
	case "metrics":
		return len(t.metrics)
	case "mapping_rules":
		return len(t.rules)
	case "backend_usages":
		return len(t.usages)
	case "application_plans":
		return len(t.plans)
	case "limits":
		return len(t.limits)
	case "pricing_rules":
		return len(t.pricing)
	case "deploys":
		return t.deploys
	}
	return -1
}

// DeleteAllMappingRules removes every mapping rule of a tenant behind the API's back, to imitate a
// change made by hand in the admin portal (drift). It reports whether the tenant exists.
func (s *Simulator) DeleteAllMappingRules(tenantName string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.names[tenantName]
	if ok {
		t.rules = map[int64]*mappingRule{}
	}
	return ok
}
