package bench

import (
	"math"
	"time"
)

// Calls counts requests: reads and writes.
type Calls struct {
	Reads  int `json:"reads"`
	Writes int `json:"writes"`
}

// Total is reads plus writes.
func (c Calls) Total() int { return c.Reads + c.Writes }

func (c Calls) plus(o Calls) Calls { return Calls{c.Reads + o.Reads, c.Writes + o.Writes} }

// MinimalCold is the least a perfect operator calls to sync the namespace into an empty tenant, from
// the workload alone and porta's API:
//   - every remote entity the spec asks for is one write: a backend (1), its metrics, methods and
//     mapping rules (1 each); a product created with its deployment option (1), its metrics and mapping
//     rules (1 each; porta's default GET / rule, which the spec lists, is updated instead of created:
//     still 1), its proxy settings (1), its policy chain (1), its backend usages (1 each) and one
//     staging deployment (1); a plan created with its state (1), its limits and pricing rules (1 each);
//   - the reads that cannot be avoided: one list per collection per tenant (backends, products, plans)
//     to adopt what already exists, the metrics of each created backend and product (for the id of the
//     hits metric porta creates with it) and the mapping rules of each created product (for the id of
//     porta's default rule).
func (n Namespace) MinimalCold() Calls {
	c := Calls{}
	for _, list := range []int{len(n.Backends), len(n.Products), len(n.Plans)} {
		if list > 0 {
			c.Reads++
		}
	}
	for _, b := range n.Backends {
		c.Writes += 1 + len(b.Spec.Metrics) + len(b.Spec.Methods) + len(b.Spec.MappingRules)
		c.Reads++
	}
	for _, p := range n.Products {
		c.Writes += 1 + len(p.Spec.Metrics) + len(p.Spec.Methods) + len(p.Spec.MappingRules) + 1 + 1 + len(p.Spec.BackendUsages) + 1
		c.Reads += 2
	}
	for _, p := range n.Plans {
		c.Writes += 1 + len(p.Spec.Limits) + len(p.Spec.PricingRules)
	}
	return c
}

// MinimalDelete is the least a perfect operator calls to delete the namespace's objects from 3scale:
// one DELETE per product and per backend. Porta's cascades take the rest (a service takes its plans,
// metrics, mapping rules and usages; a backend its metrics and rules), and the cluster already says which
// products use a backend, so no call is refused and none needs a read first.
func (n Namespace) MinimalDelete() Calls {
	return Calls{Writes: len(n.Products) + len(n.Backends)}
}

// Pacing is what bounds the request rate to one tenant.
type Pacing struct {
	// RateLimit is the tenant's server-side limit in requests per second; 0: none.
	RateLimit float64
	// MaxInFlight is the client's cap on requests in flight to one tenant.
	MaxInFlight int
	// Latency is the time one request takes.
	Latency time.Duration
}

// Rate is the most requests per second a tenant can serve one client: the lower of its rate limit and
// in-flight cap ÷ latency.
func (p Pacing) Rate() float64 {
	r := math.Inf(1)
	if p.Latency > 0 && p.MaxInFlight > 0 {
		r = float64(p.MaxInFlight) / p.Latency.Seconds()
	}
	if p.RateLimit > 0 && p.RateLimit < r {
		r = p.RateLimit
	}
	return r
}

// TimeBound is the shortest time in which calls can be made to the slowest tenant at the pacing's rate:
// per tenant, its calls ÷ the rate; the slowest tenant's.
func TimeBound(perTenant []Calls, p Pacing) time.Duration {
	var worst time.Duration
	rate := p.Rate()
	if math.IsInf(rate, 1) {
		return 0
	}
	for _, c := range perTenant {
		if d := time.Duration(float64(c.Total()) / rate * float64(time.Second)); d > worst {
			worst = d
		}
	}
	return worst
}
