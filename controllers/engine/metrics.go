package engine

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// ObjectsByState counts objects by kind and lifecycle state.
	ObjectsByState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apimsync_objects",
		Help: "Objects by kind and lifecycle state (InSync, Orphan, Synced, Invalid).",
	}, []string{"kind", "state"})

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

	// DeprecatedProductApplications counts the live applications of each Deprecated product, from its
	// usage report.
	DeprecatedProductApplications = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: DeprecatedProductApplicationsName,
		Help: "Live applications of a Deprecated product (its usage report), by namespace and Product.",
	}, []string{"namespace", "product"})
	// ProductLifecycleChanged is when a product entered its current lifecycle stage (Unix seconds).
	ProductLifecycleChanged = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: ProductLifecycleChangedName,
		Help: "When a product entered its lifecycle stage, in Unix seconds, by namespace, Product and lifecycle.",
	}, []string{"namespace", "product", "lifecycle"})
	// RemoteCallSeconds observes the latency of calls to the 3scale API.
	RemoteCallSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apimsync_remote_call_duration_seconds",
		Help:    "Latency of calls to the 3scale Account Management API by tenant and verb.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"tenant", "verb"})
)

// Names of the lifecycle metrics, which config/prometheus's rules use.
const (
	DeprecatedProductApplicationsName = "apimsync_deprecated_product_applications"
	ProductLifecycleChangedName       = "apimsync_product_lifecycle_changed_timestamp_seconds"
)

func init() {
	metrics.Registry.MustRegister(ObjectsByState, DriftRepairs, RemoteCalls, RemoteCallSeconds, RetryAfterCapped, DeprecatedProductApplications, ProductLifecycleChanged)
}
