package engine

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// ObjectsByState counts objects by kind and sync state.
	ObjectsByState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apimsync_objects",
		Help: "Objects by kind and sync state (InSync, Orphan, Synced, Invalid).",
	}, []string{"kind", "state"})

	// UnmanagedObjects counts, per tenant whose TenantSettings asks for the report, the objects of each
	// kind no apimsync object holds, at its last sync or drift check.
	UnmanagedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apimsync_unmanaged_objects",
		Help: "Objects of a tenant no apimsync object holds, by tenant and kind (tenants whose TenantSettings sets unmanaged.report), at its last sync or drift check.",
	}, []string{"tenant", "kind"})

	// DriftRepairs counts remote objects found changed behind apimsync's back and repaired.
	DriftRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apimsync_drift_repairs_total",
		Help: "Remote objects that had drifted from their spec and were repaired, by kind.",
	}, []string{"kind"})

	// RemoteCalls counts calls to the 3scale API by tenant, verb, endpoint template and status code.
	RemoteCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apimsync_remote_calls_total",
		Help: "Calls to the 3scale Account Management API by tenant, verb, endpoint template and status code (0: no answer).",
	}, []string{"tenant", "verb", "endpoint", "code"})

	// RetryAfterCapped counts the answers of 3scale whose Retry-After was longer than --max-retry-after:
	// the tenant was paused for the cap only.
	RetryAfterCapped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apimsync_remote_retry_after_capped_total",
		Help: "Answers of 3scale (429/503) whose Retry-After was longer than --max-retry-after, by tenant: the tenant was paused for the cap only.",
	}, []string{"tenant"})

	// AdmissionDeferrals counts the reconciles put off because their tenant already had as much work as
	// its pacer serves: the worker went to other tenants' objects, and the object waits for a slot.
	AdmissionDeferrals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apimsync_admission_deferrals_total",
		Help: "Reconciles put off because their tenant already had as much work under way as its pacer serves, by kind and work (sync, drift-check).",
	}, []string{"kind", "work"})

	// RemoteCallSeconds observes the latency of calls to the 3scale API.
	RemoteCallSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apimsync_remote_call_duration_seconds",
		Help:    "Latency of calls to the 3scale Account Management API by tenant and verb.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"tenant", "verb"})
)

func init() {
	metrics.Registry.MustRegister(ObjectsByState, UnmanagedObjects, DriftRepairs, RemoteCalls, RemoteCallSeconds, RetryAfterCapped, AdmissionDeferrals)
}
