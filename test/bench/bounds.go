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
//     a service plan or an account plan created with its name, state and approval in the one create
//     (1: ServicePlansController and AccountPlansController permit name, state_event and
//     approval_required, and system_name on create — service_plans_controller.rb:56-64,
//     account_plans_controller.rb:53-61 — and a plan made with state_event publish is published);
//   - the reads that cannot be avoided: one list per collection per tenant to adopt what already exists
//     — backends, products, application plans (GET /admin/api/application_plans.json, every product's),
//     service plans (GET /admin/api/service_plans.json: ServicePlansController#index without a service
//     lists every service's, "Service Plan List (all services)", so one list per tenant however many
//     products have plans, not one per product) and account plans (GET /admin/api/account_plans.json) —,
//     the metrics of each created backend and product (for the id of the hits metric porta creates with
//     it) and the mapping rules of each created product (for the id of porta's default rule). Nothing
//     of a new service or account plan needs reading: porta's answer to the create carries its id,
//     state and approval, and a plan has no children the API writes;
//   - a TenantSettings: one read of the provider account (GET /admin/api/provider.json: its emails are
//     only known from 3scale), one write of the details that differ (PUT /admin/api/provider.json, all
//     in one) and one of the webhook (PUT /admin/api/webhooks.json, which porta cannot read back);
//   - an AdminUser (a member with permissions): the tenant's users listed once (to adopt), then three
//     writes — the create (POST /admin/api/users.json: porta makes a pending member), its activation
//     (PUT .../activate.json: a create cannot make it active) and its permissions (PUT
//     .../permissions.json); a new member's permissions are porta's defaults, so nothing is read.
func (n Namespace) MinimalCold() Calls {
	c := Calls{}
	for _, list := range []int{len(n.Backends), len(n.Products), len(n.Plans), len(n.ServicePlans), len(n.AccountPlans), len(n.AdminUsers)} {
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
	for _, p := range n.ServicePlans {
		c.Writes++
		if p.Spec.Default {
			c.Writes++ // PUT .../service_plans/{id}/default.json: porta's create takes no default
		}
	}
	for _, p := range n.AccountPlans {
		c.Writes++
		if p.Spec.Default {
			c.Writes++ // PUT /admin/api/account_plans/{id}/default.json: porta's create takes no default
		}
	}
	c.Writes += 3 * len(n.AdminUsers)
	if s := n.Settings; s != nil {
		c.Reads++
		if s.Spec.Account != nil {
			c.Writes++
		}
		if s.Spec.Webhooks != nil {
			c.Writes++
		}
	}
	return c
}

// MinimalDelete is the least a perfect operator calls to delete the namespace's objects from 3scale:
// one DELETE per product, per backend and per account plan (a TenantSettings' deletion writes nothing:
// the tenant keeps its settings), and for each AdminUser one read of the user (its role: an active
// admin is never deleted without checking it is not the last) and one DELETE. Porta's cascades take the rest (a service
// takes its application plans, service plans, metrics, mapping rules and usages — Service has_many
// :service_plans, dependent: :destroy, service.rb:55-56; a backend its metrics and rules), and the
// cluster already says which products use a backend, so no call is refused and none needs a read first.
// An account plan belongs to the tenant, whose deletion is no part of the bench: each is one DELETE
// (/admin/api/account_plans/{id}.json, by the id its status records; porta refuses only a plan accounts
// are on, and the bench signs none up).
func (n Namespace) MinimalDelete() Calls {
	return Calls{Reads: len(n.AdminUsers), Writes: len(n.Products) + len(n.Backends) + len(n.AccountPlans) + len(n.AdminUsers)}
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
