package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apimsync/apimsync/cache"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// remoteCallObserver feeds the remote-call metrics of one tenant, under a bounded tenant label.
func remoteCallObserver(labels *tenantLabels) func(tenant string) tsclient.Observer {
	return func(tenant string) tsclient.Observer {
		label := labels.of(tenant)
		return func(c tsclient.CallInfo) {
			engine.RemoteCalls.WithLabelValues(label, c.Method, c.Endpoint, itoa(c.Code)).Inc()
			engine.RemoteCallSeconds.WithLabelValues(label, c.Method).Observe(c.Duration.Seconds())
			if c.RetryAfterAsked > 0 {
				engine.RetryAfterCapped.WithLabelValues(label).Inc()
			}
		}
	}
}

// tenantLabels hands out metric labels for tenants: the tenant key (the normalized admin host) for the
// first max tenants seen, "other" after that, so that the metrics' cardinality stays bounded.
type tenantLabels struct {
	max  int
	mu   sync.Mutex
	seen map[string]bool
}

// otherTenants is the label of the tenants past the bound.
const otherTenants = "other"

func (l *tenantLabels) of(tenant string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	limit := l.max
	if limit <= 0 {
		limit = 100
	}
	if !l.seen[tenant] && len(l.seen) >= limit {
		return otherTenants
	}
	l.seen[tenant] = true
	return tenant
}

// pacerMetrics reports each tenant's pacer at scrape time: the rate it learnt from the tenant's 429s and
// its limit of calls in flight. One collector, registered once; the manager points it at its pool.
var pacerMetrics = &pacerCollector{
	rate: prometheus.NewDesc("apimsync_remote_learnt_rate", "Requests per second a tenant accepts, as its pacer learnt from its 429s (0: none learnt yet), by tenant.",
		[]string{"tenant"}, nil),
	limit: prometheus.NewDesc("apimsync_remote_concurrency_limit", "The pacer's current limit of calls in flight to a tenant, by tenant.", []string{"tenant"}, nil),
}

func init() { metrics.Registry.MustRegister(pacerMetrics) }

type pacerCollector struct {
	rate, limit *prometheus.Desc
	mu          sync.Mutex
	pool        *cache.ClientPool
	labels      *tenantLabels
}

// watch makes the collector report the pacers of pool, under labels.
func (c *pacerCollector) watch(pool *cache.ClientPool, labels *tenantLabels) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pool, c.labels = pool, labels
}

// Describe implements prometheus.Collector.
func (c *pacerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.rate; ch <- c.limit }

// Collect implements prometheus.Collector: one sample of each per tenant with a label of its own (the
// tenants past the metrics' bound, "other", are left out: their pacers are not one).
func (c *pacerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	pool, labels := c.pool, c.labels
	c.mu.Unlock()
	if pool == nil {
		return
	}
	pool.EachPacer(func(tenant string, p *tsclient.Pacer) {
		label := labels.of(tenant)
		if label == otherTenants {
			return
		}
		ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, p.LearntRate(), label)
		ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(p.Limit()), label)
	})
}
