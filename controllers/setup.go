package controllers

import (
	"context"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Options configure the controllers.
type Options struct {
	// DriftCheckPeriod is how often synced objects are re-read from 3scale and repaired; 0 disables it.
	DriftCheckPeriod time.Duration
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// RemoteQPS and RemoteBurst are the token-bucket rate limit per tenant; RemoteMaxInFlight caps the
	// requests in flight per tenant.
	RemoteQPS         float64
	RemoteBurst       int
	RemoteMaxInFlight int
	// OrphanBackoffInitial and OrphanBackoffMax bound the retries of orphans.
	OrphanBackoffInitial, OrphanBackoffMax time.Duration
	// SnapshotCacheSize is the number of remote snapshots kept.
	SnapshotCacheSize int
	// SkipNameValidation allows more than one manager per process (tests that restart the manager).
	SkipNameValidation bool
	// InvalidRetryPeriod is the safety net for objects made Invalid by an answer of 3scale: they are tried
	// again after it (default 10 minutes; negative disables it).
	InvalidRetryPeriod time.Duration
	// RetryBackoffMax caps the workqueue's backoff after passing failures (5xx, timeouts), so that an
	// object converges soon after a flaky tenant recovers (default one minute).
	RetryBackoffMax time.Duration
}

// withDefaults fills in unset options.
func (o Options) withDefaults() Options {
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 4
	}
	if o.RemoteQPS <= 0 {
		o.RemoteQPS = 10
	}
	if o.RemoteBurst <= 0 {
		o.RemoteBurst = 20
	}
	if o.RemoteMaxInFlight <= 0 {
		o.RemoteMaxInFlight = 8
	}
	if o.OrphanBackoffInitial <= 0 {
		o.OrphanBackoffInitial = time.Second
	}
	if o.OrphanBackoffMax <= 0 {
		o.OrphanBackoffMax = 5 * time.Minute
	}
	if o.SnapshotCacheSize <= 0 {
		o.SnapshotCacheSize = 4096
	}
	if o.InvalidRetryPeriod == 0 {
		o.InvalidRetryPeriod = 10 * time.Minute
	}
	if o.RetryBackoffMax <= 0 {
		o.RetryBackoffMax = time.Minute
	}
	return o
}

// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends;products;applicationplans,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends/status;products/status;applicationplans/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends/finalizers;products/finalizers;applicationplans/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the field indexes and the Backend, Product, ApplicationPlan and
// provider-account Secret controllers with mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if err := registerIndexes(ctx, mgr); err != nil {
		return err
	}
	pool := cache.NewClientPool(256, opts.RemoteQPS, opts.RemoteBurst, opts.RemoteMaxInFlight)
	pool.Observer = remoteCallObserver
	accounts := &ProviderAccounts{Reader: mgr.GetClient(), Pool: pool}
	snapshots := cache.NewSnapshots(opts.SnapshotCacheSize)
	states := engine.NewStateTracker()
	reader := mgr.GetClient()
	credentials := &CredentialChecks{}
	invalidRetry := max(opts.InvalidRetryPeriod, 0)
	// Each controller has its own workqueue rate limiter: passing failures back off exponentially, but
	// never longer than RetryBackoffMax.
	ctrlOpts := func() controller.Options {
		return controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, SkipNameValidation: &opts.SkipNameValidation,
			RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, opts.RetryBackoffMax),
				&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
			)}
	}

	backends := &engine.Reconciler[*v1alpha1.Backend]{
		Client: mgr.GetClient(), Kind: "Backend", New: func() *v1alpha1.Backend { return &v1alpha1.Backend{} },
		Syncer:   &BackendSyncer{Reader: reader, Accounts: accounts, Snapshots: snapshots, Claims: &Claims{Reader: reader}},
		Recorder: mgr.GetEventRecorder("apimsync-backend"), Backoff: engine.NewOrphanBackoff(opts.OrphanBackoffInitial, opts.OrphanBackoffMax),
		DriftCheckPeriod: opts.DriftCheckPeriod, States: states, Credentials: credentials, InvalidRetryPeriod: invalidRetry,
	}
	err := ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Backend{}).Named("backend").WithOptions(ctrlOpts()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.BackendList{}, indexSecretRefs))).
		// A Product that stops using a Backend (or goes) unblocks the Backend's deletion.
		Watches(&v1alpha1.Product{}, handler.EnqueueRequestsFromMapFunc(backendsOfProduct)).
		Complete(backends)
	if err != nil {
		return err
	}

	products := &engine.Reconciler[*v1alpha1.Product]{
		Client: mgr.GetClient(), Kind: "Product", New: func() *v1alpha1.Product { return &v1alpha1.Product{} },
		Syncer:   &ProductSyncer{Reader: reader, Accounts: accounts, Snapshots: snapshots, Claims: &Claims{Reader: reader}},
		Recorder: mgr.GetEventRecorder("apimsync-product"), Backoff: engine.NewOrphanBackoff(opts.OrphanBackoffInitial, opts.OrphanBackoffMax),
		DriftCheckPeriod: opts.DriftCheckPeriod, States: states, Credentials: credentials, InvalidRetryPeriod: invalidRetry,
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Product{}).Named("product").WithOptions(ctrlOpts()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.ProductList{}, indexSecretRefs))).
		Watches(&v1alpha1.Backend{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.ProductList{}, indexBackendRefs))).
		Complete(products)
	if err != nil {
		return err
	}

	plans := &engine.Reconciler[*v1alpha1.ApplicationPlan]{
		Client: mgr.GetClient(), Kind: "ApplicationPlan", New: func() *v1alpha1.ApplicationPlan { return &v1alpha1.ApplicationPlan{} },
		Syncer:   &PlanSyncer{Reader: reader, Accounts: accounts, Snapshots: snapshots, Claims: &Claims{Reader: reader}},
		Recorder: mgr.GetEventRecorder("apimsync-applicationplan"), Backoff: engine.NewOrphanBackoff(opts.OrphanBackoffInitial, opts.OrphanBackoffMax),
		DriftCheckPeriod: opts.DriftCheckPeriod, States: states, Credentials: credentials, InvalidRetryPeriod: invalidRetry,
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.ApplicationPlan{}).Named("applicationplan").WithOptions(ctrlOpts()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.ApplicationPlanList{}, indexSecretRefs))).
		Watches(&v1alpha1.Product{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.ApplicationPlanList{}, indexProductRef))).
		Watches(&v1alpha1.Backend{}, handler.EnqueueRequestsFromMapFunc(referencing(reader, &v1alpha1.ApplicationPlanList{}, indexBackendRefs))).
		Complete(plans)
	if err != nil {
		return err
	}

	// Secrets come to this controller through the objects that read them; directly only those that carry
	// the in-use finalizer, so that the many unrelated Secrets of a cluster cost nothing.
	carriesFinalizer := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return controllerutil.ContainsFinalizer(o, SecretInUseFinalizer)
	})
	return ctrl.NewControllerManagedBy(mgr).For(&corev1.Secret{}, builder.WithPredicates(carriesFinalizer)).Named("provideraccount").WithOptions(ctrlOpts()).
		Watches(&v1alpha1.Backend{}, handler.EnqueueRequestsFromMapFunc(secretsOf)).
		Watches(&v1alpha1.Product{}, handler.EnqueueRequestsFromMapFunc(secretsOf)).
		Watches(&v1alpha1.ApplicationPlan{}, handler.EnqueueRequestsFromMapFunc(secretsOf)).
		Complete(&SecretReconciler{Client: mgr.GetClient()})
}

// referencing maps a changed object to the objects of list's kind, in its namespace, whose index field
// names it.
func referencing(reader client.Reader, list client.ObjectList, index string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index: obj.GetName()}); err != nil {
			return nil
		}
		return requestsFor(l)
	}
}

// backendsOfProduct maps a Product to the Backends it uses.
func backendsOfProduct(_ context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*v1alpha1.Product)
	if !ok {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(p.Spec.BackendUsages))
	for name := range p.Spec.BackendUsages {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: name}})
	}
	return reqs
}

// secretsOf maps a synced object to the Secrets it reads, for the in-use finalizer.
func secretsOf(_ context.Context, obj client.Object) []reconcile.Request {
	names := secretRefs(obj)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}})
	}
	return reqs
}

func requestsFor(list client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	_ = forEachItem(list, func(o client.Object) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	})
	return reqs
}

// remoteCallObserver feeds the remote-call metrics of one tenant.
func remoteCallObserver(tenant string) tsclient.Observer {
	return func(c tsclient.CallInfo) {
		engine.RemoteCalls.WithLabelValues(tenant, c.Method, c.Endpoint, itoa(c.Code)).Inc()
		engine.RemoteCallSeconds.WithLabelValues(tenant, c.Method).Observe(c.Duration.Seconds())
	}
}
