package product

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The Product's own metrics: its lifecycle stage (Draft...Retired) and the usage report of a
// Deprecated product. The engine's metrics, common to every kind, are in controllers/engine.
var (
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
)

// Names of the Product lifecycle metrics, which config/prometheus's rules use.
const (
	DeprecatedProductApplicationsName = "apimsync_deprecated_product_applications"
	ProductLifecycleChangedName       = "apimsync_product_lifecycle_changed_timestamp_seconds"
)

func init() {
	metrics.Registry.MustRegister(DeprecatedProductApplications, ProductLifecycleChanged)
}
