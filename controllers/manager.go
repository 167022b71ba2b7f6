package controllers

import (
	"context"
	"errors"
	"slices"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Options configure the controllers.
type Options struct {
	// DriftCheckPeriod is how often synced objects are re-read from 3scale and repaired; 0 disables it.
	// Each object has its own slot in the period, so the checks are spread evenly over it.
	DriftCheckPeriod time.Duration
	// DriftCheckBudget is the share of each tenant's request budget drift checks may use (default 0.2).
	DriftCheckBudget float64
	// MaxConcurrentReconciles per kind (default 32): workers are cheap, each tenant's pacer decides how
	// many of them call it at once, and its admission sends the others to other tenants' work.
	MaxConcurrentReconciles int
	// Each tenant is paced by an adaptive concurrency limit (client.Pacer) capped at RemoteMaxInFlight
	// requests in flight (default 32); RemoteQPS and RemoteBurst are an optional hard rate cap per tenant
	// (0: none).
	RemoteQPS         float64
	RemoteBurst       int
	RemoteMaxInFlight int
	// OrphanBackoffInitial and OrphanBackoffMax bound the retries of orphans.
	OrphanBackoffInitial, OrphanBackoffMax time.Duration
	// SnapshotCacheSize is the number of remote snapshots kept.
	SnapshotCacheSize int
	// DataCacheSize is the number of referenced Secrets and ConfigMaps whose data is kept between reads
	// (default 1024); the manager caches only the metadata of the others.
	DataCacheSize int
	// SkipNameValidation allows more than one manager per process (tests that restart the manager).
	SkipNameValidation bool
	// InvalidRetryPeriod is the safety net for objects made Invalid by an answer of 3scale: they are tried
	// again after it (default 10 minutes; negative disables it).
	InvalidRetryPeriod time.Duration
	// QuietWait is how long a new object waiting on a dependency that is itself being synced waits
	// without being marked Orphan (default 30 s; negative: marked at once). See engine.Pending.
	QuietWait time.Duration
	// DependantGrace is how long an owner being deleted leaves its dependants to whoever deleted it before
	// deleting them itself (default 2 s; negative: at once). See engine.Reconciler.DependantGrace.
	DependantGrace time.Duration
	// WatchLabelSelector, when set, makes this manager one shard: it syncs only the apimsync objects the
	// selector matches (the manager must be built with ManagerOptions and the same selector).
	WatchLabelSelector labels.Selector
	// PartialView: the manager watches only some namespaces (--watch-namespaces): what the others hold
	// looks unmanaged from here, so a TenantSettings' prune is refused (a shard's selector counts too).
	PartialView bool
	// UsageReportPeriod is how often the usage report of a Deprecated or Retired product is refreshed (one
	// paginated list of its applications per period; default 10 minutes).
	UsageReportPeriod time.Duration
	// MetricsMaxTenants bounds the distinct tenant labels of the metrics (default 100); further tenants are
	// counted under "other".
	MetricsMaxTenants int
	// AllowPrivateAdminURLs allows provider accounts whose admin URL is on a loopback, link-local, private
	// or cluster-internal address (demos, tests, an in-cluster 3scale).
	AllowPrivateAdminURLs bool
	// InstallationAdminURL, when set, replaces the admin URL a 3scale installation (APIManager) implies,
	// https://{tenantName}-admin.{wildcardDomain}: tests and demos point it at a local simulator.
	InstallationAdminURL func(tenantName, wildcardDomain string) string
	// MaxResponseBytes caps the size of one answer of 3scale (default 8 MiB); MaxListPages the pages of
	// one list (default 200 pages of 500). Beyond either the call fails loudly: the object stays InSync
	// with the reason, and nothing is read into memory past the cap.
	MaxResponseBytes int
	MaxListPages     int
	// MaxRetryAfter caps the pause a Retry-After of 3scale imposes on its tenant (default 5 minutes).
	MaxRetryAfter time.Duration
	// RemoteRetries is how often a call to 3scale is tried again when it meets a passing fault (a 503 or
	// 429 porta answered without acting, a lost answer to a read, an update by id or a deploy); 0 is
	// the client's default of 3, negative none (--remote-retries).
	RemoteRetries int
	// Webhook serves the validating webhook (WebhookPath) on the manager's webhook server, which the
	// manager must be built with.
	Webhook bool
	// RetryBackoffMax caps the workqueue's backoff after passing failures (5xx, timeouts), so that an
	// object converges soon after a flaky tenant recovers (default one minute).
	RetryBackoffMax time.Duration
	// FluxSourceHost is the host (host:port) Flux's source-controller advertises its artifacts at, the
	// only one an OpenAPI's spec.sourceRef fetches from (default openapi.DefaultSourceHost);
	// FluxSourceLocalhost, when set, the host:port they are fetched from instead
	// (SOURCE_CONTROLLER_LOCALHOST). See openapi.FluxSources.
	FluxSourceHost, FluxSourceLocalhost string
}

// withDefaults fills in unset options.
func (o Options) withDefaults() Options {
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 32
	}
	if o.RemoteMaxInFlight <= 0 {
		o.RemoteMaxInFlight = tsclient.DefaultMaxInFlight
	}
	if o.OrphanBackoffInitial <= 0 {
		o.OrphanBackoffInitial = time.Second
	}
	if o.OrphanBackoffMax <= 0 {
		o.OrphanBackoffMax = 5 * time.Minute
	}
	if o.SnapshotCacheSize <= 0 {
		o.SnapshotCacheSize = 8192
	}
	if o.DataCacheSize <= 0 {
		o.DataCacheSize = 1024
	}
	if o.InvalidRetryPeriod == 0 {
		o.InvalidRetryPeriod = 10 * time.Minute
	}
	if o.QuietWait == 0 {
		o.QuietWait = 30 * time.Second
	}
	if o.DependantGrace == 0 {
		o.DependantGrace = 2 * time.Second
	}
	if o.RetryBackoffMax <= 0 {
		o.RetryBackoffMax = time.Minute
	}
	return o
}

// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=adminusers;backends;products;applicationplans;serviceplans;accountplans;fielddefinitions;tenantsettings;developeraccounts;applications;activedocs;developerportals;custompolicydefinitions;tenants,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=adminusers/status;backends/status;products/status;applicationplans/status;serviceplans/status;accountplans/status;fielddefinitions/status;tenantsettings/status;developeraccounts/status;applications/status;activedocs/status;developerportals/status;custompolicydefinitions/status;tenants/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=adminusers/finalizers;backends/finalizers;products/finalizers;applicationplans/finalizers;serviceplans/finalizers;accountplans/finalizers;fielddefinitions/finalizers;tenantsettings/finalizers;developeraccounts/finalizers;applications/finalizers;activedocs/finalizers;developerportals/finalizers;custompolicydefinitions/finalizers;tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=apps.3scale.net,resources=apimanagers,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the field indexes, a controller per kind and the provider-account Secret
// controller with mgr. It fails when the reference graph has a cycle.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if _, err := creationOrder(referenceGraph); err != nil {
		return err
	}
	if err := registerIndexes(ctx, mgr); err != nil {
		return err
	}
	// 1024 tenants' clients (their connection pools), 4096 tenants' pacers: a manager serving more tenants
	// than that makes new connections for the tenants it used least recently, and keeps their rates.
	pool := cache.NewClientPool(1024, opts.RemoteQPS, opts.RemoteBurst, opts.RemoteMaxInFlight)
	pool.BackgroundShare = opts.DriftCheckBudget
	labels := &tenantLabels{max: opts.MetricsMaxTenants}
	pool.Observer = remoteCallObserver(labels)
	pacerMetrics.watch(pool, labels)
	reader := newDataReader(mgr.GetClient(), mgr.GetCache(), mgr.GetAPIReader(), opts.DataCacheSize)
	accounts := &kit.ProviderAccounts{Reader: reader, Pool: pool, AllowPrivate: opts.AllowPrivateAdminURLs,
		MaxResponseBytes: opts.MaxResponseBytes, MaxListPages: opts.MaxListPages, MaxRetryAfter: opts.MaxRetryAfter,
		Retries: opts.RemoteRetries, Installations: mgr.GetAPIReader(), InstallationAdminURL: opts.InstallationAdminURL}
	// The APIManager CRD is watched, and APIManagers read from the cache, when it is installed as the
	// manager starts; one installed later is still read (from the API server: an object waiting for a
	// provider account looks again on its backoff), only not watched.
	installations := false
	if _, err := mgr.GetRESTMapper().RESTMapping(kit.APIManagerGVK.GroupKind(), kit.APIManagerGVK.Version); err == nil {
		installations = true
		accounts.Installations = mgr.GetCache()
	}
	snapshots := cache.NewSnapshots(opts.SnapshotCacheSize)
	sh := shared{mgr: mgr, opts: opts, reader: reader, installations: installations, states: engine.NewStateTracker(), creds: &kit.CredentialChecks{}, deletions: engine.NewDeletions(),
		// Each controller has its own workqueue rate limiter: passing failures back off exponentially,
		// but never longer than RetryBackoffMax.
		ctrlOpts: func() controller.Options {
			return controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, SkipNameValidation: &opts.SkipNameValidation,
				RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
					workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, opts.RetryBackoffMax),
					&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
				)}
		}}
	deps := kindDeps{Reader: reader, Writer: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Accounts: accounts, Snapshots: snapshots,
		Lists: &kit.BurstLists{}, Recorder: func(name string) events.EventRecorder { return mgr.GetEventRecorder(name) }, Opts: opts}
	if opts.Webhook {
		setupWebhook(mgr, deps)
	}
	var errs []error
	for _, r := range rows() {
		errs = append(errs, r.controller(sh, deps))
	}
	errs = append(errs, mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache(), watchedTypes(installations))))
	err := errors.Join(errs...)
	if err != nil {
		return err
	}

	// Secrets come to this controller through the objects that read them; directly only those that carry
	// the in-use finalizer, so that the many unrelated Secrets of a cluster cost nothing.
	finalizer := SecretInUseFinalizerFor(opts.WatchLabelSelector)
	carriesFinalizer := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return controllerutil.ContainsFinalizer(o, finalizer) || !o.GetDeletionTimestamp().IsZero() && carriesInUseFinalizer(o)
	})
	b := ctrl.NewControllerManagedBy(mgr).For(&corev1.Secret{}, builder.OnlyMetadata, builder.WithPredicates(carriesFinalizer)).
		Named("provideraccount").WithOptions(sh.ctrlOpts())
	for _, o := range syncedKinds() {
		b = b.Watches(o, handler.EnqueueRequestsFromMapFunc(secretsOf), builder.WithPredicates(secretUseChanged))
	}
	return b.Complete(&SecretReconciler{Client: mgr.GetClient(), Metadata: mgr.GetCache(), Finalizer: finalizer, Uncached: mgr.GetAPIReader()})
}

// carriesInUseFinalizer reports whether a Secret carries any manager's in-use finalizer (a shard's, or the
// unsharded manager's): one being deleted comes to every manager, which removes those no object needs.
func carriesInUseFinalizer(o client.Object) bool {
	return slices.ContainsFunc(o.GetFinalizers(), isInUseFinalizer)
}
