package controllers

import (
	"sync"

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
