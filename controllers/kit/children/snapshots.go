package children

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
func (s *Snapshot) Clone() *Snapshot {
	if s == nil {
		return nil
	}
	return &Snapshot{Metrics: maps.Clone(s.Metrics), Methods: maps.Clone(s.Methods), Rules: slices.Clone(s.Rules)}
}

// MetricsHash fingerprints the remote ids of the metrics and methods: when one is re-created with a new
// id (a repair), the objects that refer to it re-sync.
func (s *Snapshot) MetricsHash() string {
	ids := map[string]int64{}
	for name, m := range s.Metrics {
		ids[name] = m.ID
	}
	for name, m := range s.Methods {
		ids["method:"+name] = m.ID
	}
	return engine.HashOf(ids)
}

// MetricIDs maps the system names of the metrics and methods to their remote ids (they share one
// namespace in a service or backend).
func (s *Snapshot) MetricIDs() map[string]int64 {
	ids := make(map[string]int64, len(s.Metrics)+len(s.Methods))
	for name, m := range s.Metrics {
		ids[name] = m.ID
	}
	for name, m := range s.Methods {
		ids[name] = m.ID
	}
	return ids
}

// RecordMetrics records the remote ids of a Product's or Backend's metrics and methods in its status,
// with their hash.
func RecordMetrics(st *v1alpha1.CommonStatus, children *Snapshot) {
	st.MetricsHash, st.MetricIDs = children.MetricsHash(), children.MetricIDs()
}
