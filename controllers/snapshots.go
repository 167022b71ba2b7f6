package controllers

import (
	"maps"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Snapshots in the cache are shared by every goroutine that reads them (a plan resolves its metric ids
// from its product's and backends' snapshots while they sync), so they are never changed once cached: a
// syncer that writes works on a clone and caches the clone when done.

// clone returns a copy of s that can be changed without touching s.
func (s *childrenSnapshot) clone() *childrenSnapshot {
	if s == nil {
		return nil
	}
	return &childrenSnapshot{Metrics: maps.Clone(s.Metrics), Methods: maps.Clone(s.Methods), Rules: slices.Clone(s.Rules)}
}

// metricsHash fingerprints the remote ids of the metrics and methods: when one is re-created with a new
// id (a repair), the objects that refer to it re-sync.
func (s *childrenSnapshot) metricsHash() string {
	ids := map[string]int64{}
	for name, m := range s.Metrics {
		ids[name] = m.ID
	}
	for name, m := range s.Methods {
		ids["method:"+name] = m.ID
	}
	return engine.HashOf(ids)
}

// metricIDs maps the system names of the metrics and methods to their remote ids (they share one
// namespace in a service or backend).
func (s *childrenSnapshot) metricIDs() map[string]int64 {
	ids := make(map[string]int64, len(s.Metrics)+len(s.Methods))
	for name, m := range s.Metrics {
		ids[name] = m.ID
	}
	for name, m := range s.Methods {
		ids[name] = m.ID
	}
	return ids
}

// recordMetrics records the remote ids of a Product's or Backend's metrics and methods in its status,
// with their hash.
func recordMetrics(st *v1alpha1.CommonStatus, children *childrenSnapshot) {
	st.MetricsHash, st.MetricIDs = children.metricsHash(), children.metricIDs()
}

// Clone implements engine.Snapshot.
func (s *productSnapshot) Clone() *productSnapshot {
	c := *s
	c.Proxy = maps.Clone(s.Proxy)
	if s.OIDC != nil {
		oidc := *s.OIDC
		c.OIDC = &oidc
	}
	c.Policies = slices.Clone(s.Policies)
	c.Features = slices.Clone(s.Features)
	c.Usages = slices.Clone(s.Usages)
	c.Children = s.Children.clone()
	if s.Configs != nil {
		configs := *s.Configs
		c.Configs = &configs
	}
	return &c
}

// Clone implements engine.Snapshot.
func (s *planSnapshot) Clone() *planSnapshot {
	c := *s
	c.Limits = slices.Clone(s.Limits)
	c.PricingRules = slices.Clone(s.PricingRules)
	c.MetricIDs = maps.Clone(s.MetricIDs)
	c.Features = slices.Clone(s.Features)
	return &c
}
