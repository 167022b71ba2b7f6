package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/openapi"
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
	// RetryBackoffMax caps the workqueue's backoff after passing failures (5xx, timeouts), so that an
	// object converges soon after a flaky tenant recovers (default one minute).
	RetryBackoffMax time.Duration
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

// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends;products;applicationplans;developeraccounts;applications;activedocs;developerportals;custompolicydefinitions;tenants,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends/status;products/status;applicationplans/status;developeraccounts/status;applications/status;activedocs/status;developerportals/status;custompolicydefinitions/status;tenants/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends/finalizers;products/finalizers;applicationplans/finalizers;developeraccounts/finalizers;applications/finalizers;activedocs/finalizers;developerportals/finalizers;custompolicydefinitions/finalizers;tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=apps.3scale.net,resources=apimanagers,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// shared is what every kind's controller is built with.
type shared struct {
	mgr    ctrl.Manager
	opts   Options
	reader client.Reader
	states *engine.StateTracker
	creds  *kit.CredentialChecks
	// deletions records the deletions under way per namespace, of all kinds.
	deletions *engine.Deletions
	ctrlOpts  func() controller.Options
	// installations is true when the APIManager CRD is there to watch.
	installations bool
}

// kindController builds the generic reconciler of one kind, its controller and its watches: Secrets it
// reads, the objects it references (wake it when they change), and the objects that reference it
// (wake it while it waits for them on deletion).
func kindController[T engine.Object, D any, S engine.Snapshot[S]](sh shared, r *engine.Reconciler[T, D, S], list client.ObjectList, watches ...watch) error {
	kind, newObj := r.Kind, r.New
	r.Client = sh.mgr.GetClient()
	r.Recorder = sh.mgr.GetEventRecorder("apimsync-" + strings.ToLower(kind))
	r.Backoff = engine.NewOrphanBackoff(sh.opts.OrphanBackoffInitial, sh.opts.OrphanBackoffMax)
	r.DriftCheckPeriod, r.States, r.Credentials = sh.opts.DriftCheckPeriod, sh.states, sh.creds
	r.InvalidRetryPeriod, r.QuietWait = max(sh.opts.InvalidRetryPeriod, 0), max(sh.opts.QuietWait, 0)
	r.DependantGrace, r.Deletions = max(sh.opts.DependantGrace, 0), sh.deletions
	r.Dependants = ownedDependants(sh.reader, referenceGraph, kind)
	r.Users = blockingUsers(sh.reader, referenceGraph, kind)
	r.RetainedUnder = retainedUnder(sh.reader, referenceGraph)
	r.OwnersGoing = ownersGoing(sh.reader, referenceGraph)
	r.Claimants = claimants(sh.reader, list)
	b := ctrl.NewControllerManagedBy(sh.mgr).For(newObj()).Named(strings.ToLower(kind)).WithOptions(sh.ctrlOpts()).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(readingSecret(sh.reader, list))).
		// Its own kind: its deletions are recorded (a prune under way, DependantGrace), and the objects
		// that resolve to the same remote object are woken when one changes or goes (ownership conflicts).
		Watches(newObj(), sh.deletions.Handler()).
		Watches(newObj(), handler.EnqueueRequestsFromMapFunc(sameRemoteObject(sh.reader, list)))
	for _, ref := range referenceGraph {
		switch kind {
		case ref.From: // wake it when what it references changes
			b = b.Watches(newKind(ref.To), handler.EnqueueRequestsFromMapFunc(kit.ReferencingKey(sh.reader, list, ref.Index, ref.keyOf)))
		case ref.To: // wake it when what references it changes or goes
			b = b.Watches(newKind(ref.From), handler.EnqueueRequestsFromMapFunc(referenced(sh.reader, ref)))
		}
	}
	if sh.installations {
		// A 3scale installation appearing, changing or going: the objects that would use it, or do.
		manager := &unstructured.Unstructured{}
		manager.SetGroupVersionKind(kit.APIManagerGVK)
		b = b.Watches(manager, handler.EnqueueRequestsFromMapFunc(usingInstallation(sh.reader, list)))
	}
	for _, w := range watches {
		if isDataKind(w.obj) {
			b = b.WatchesMetadata(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapFunc))
		} else {
			b = b.Watches(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapFunc))
		}
	}
	return b.Complete(r)
}

// sameRemoteObject maps an object to the other objects of its kind that resolve to the same remote object
// (the owner key index): when the one that holds it changes or goes, the ones waiting for it (Invalid as
// losers of the conflict, Orphan while it is being deleted) look again.
func sameRemoteObject(reader client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		keys := ownerKeyOf(obj)
		if len(keys) == 0 {
			return nil
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(ctx, l, client.MatchingFields{kit.IndexOwnerKey: keys[0]}); err != nil {
			return nil
		}
		var out []reconcile.Request
		_ = kit.ForEachItem(l, func(o client.Object) {
			if o.GetUID() != obj.GetUID() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		})
		return out
	}
}

// claimants lists the objects of obj's kind in its namespace, not being deleted, that hold no remote
// object of their own: those an object being deleted may hand its remote object over to
// (engine.Reconciler.Claimants, which matches them by their spec).
func claimants(reader client.Reader, list client.ObjectList) func(ctx context.Context, obj client.Object) ([]client.Object, error) {
	return func(ctx context.Context, obj client.Object) ([]client.Object, error) {
		l := list.DeepCopyObject().(client.ObjectList)
		// Read only, and once per deletion: the cache's own objects, not copies.
		if err := reader.List(ctx, l, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		var out []client.Object
		err := kit.ForEachItem(l, func(o client.Object) {
			other, ok := o.(engine.Object)
			if ok && other.GetUID() != obj.GetUID() && other.GetDeletionTimestamp().IsZero() && other.GetRemoteID() == 0 && engine.PendingCreate(other) == "" {
				out = append(out, other)
			}
		})
		return out, err
	}
}

// watch is an extra watch of one controller.
type watch struct {
	obj     client.Object
	mapFunc handler.MapFunc
}

// referenced maps an object to the objects of ref.To it names through ref's field (by their Key, read
// through ref.KeyIndex, when ref has one).
func referenced(reader client.Reader, ref reference) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		names := ref.Names(obj)
		if ref.KeyIndex != "" {
			names = kit.NamesByKey(ctx, reader, listOfKind(ref.To), obj.GetNamespace(), ref.KeyIndex, names)
		}
		reqs := make([]reconcile.Request, 0, len(names))
		for _, n := range names {
			if n != "" {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: n}})
			}
		}
		return reqs
	}
}

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
	pool := cache.NewClientPool(256, opts.RemoteQPS, opts.RemoteBurst, opts.RemoteMaxInFlight)
	pool.BackgroundShare = opts.DriftCheckBudget
	pool.Observer = remoteCallObserver(&tenantLabels{max: opts.MetricsMaxTenants})
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
	openAPIs := &openapi.Reconciler{Client: mgr.GetClient(), Reader: reader, Recorder: mgr.GetEventRecorder("apimsync-openapi")}
	errs := []error{openAPIs.SetupWithManager(mgr, sh.ctrlOpts())}
	for _, k := range kinds {
		errs = append(errs, k.controller(sh, deps))
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
		return controllerutil.ContainsFinalizer(o, finalizer)
	})
	b := ctrl.NewControllerManagedBy(mgr).For(&corev1.Secret{}, builder.OnlyMetadata, builder.WithPredicates(carriesFinalizer)).
		Named("provideraccount").WithOptions(sh.ctrlOpts())
	for _, o := range syncedKinds() {
		b = b.Watches(o, handler.EnqueueRequestsFromMapFunc(secretsOf), builder.WithPredicates(secretUseChanged))
	}
	return b.Complete(&SecretReconciler{Client: mgr.GetClient(), Metadata: mgr.GetCache(), Finalizer: finalizer})
}

// secretUseChanged lets through only the events of an object that may change whether the Secrets it
// reads are in use: its creation and deletion, and updates of its finalizers, its deletion or the Secrets
// it names. Its status writes, most of its events, do not (in a burst, each made the Secret's controller
// list every object of the namespace that reads it).
var secretUseChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	before, after := e.ObjectOld, e.ObjectNew
	return !slices.Equal(before.GetFinalizers(), after.GetFinalizers()) ||
		before.GetDeletionTimestamp().IsZero() != after.GetDeletionTimestamp().IsZero() ||
		!slices.Equal(secretRefs(before), secretRefs(after))
}}

// readingSecret maps a Secret to the objects of list's kind that read it; the system-seed Secret of a 3scale
// installation, to the objects that use the installation or would (usingInstallation).
func readingSecret(reader client.Reader, list client.ObjectList) handler.MapFunc {
	byName := kit.Referencing(reader, list, kit.IndexSecretRefs)
	installation := usingInstallation(reader, list)
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if obj.GetName() == kit.SystemSeedSecret {
			return installation(ctx, obj)
		}
		return byName(ctx, obj)
	}
}

// usingInstallation maps anything of a namespace's 3scale installation (its APIManager, its system-seed
// Secret) to the objects of list's kind that were synced with it or would be: those that name no
// provider account, the installation being where the default Secret's absence sends them.
func usingInstallation(reader client.Reader, list client.ObjectList) handler.MapFunc {
	byName := kit.Referencing(reader, list, kit.IndexSecretRefs)
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, name := range []string{v1alpha1.DefaultProviderAccountSecret, kit.SystemSeedSecret} {
			named := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
			reqs = append(reqs, byName(ctx, named)...)
		}
		return reqs
	}
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

// cachesSynced is the manager's readiness check: ready once the cache holds every type the controllers
// watch (watchedTypes), its informers made and synced, which is when the controllers start their
// workers. Until then an object applied waits for a manager that said it was ready (a rollout, a
// benchmark's clock): seconds when the API server asks the informers to retry. Every replica's cache
// runs, the leader's or not, so a replica waiting for the lease is ready too.
func cachesSynced(c ctrlcache.Informers, watched []client.Object) healthz.Checker {
	var synced atomic.Bool
	return func(req *http.Request) error {
		if synced.Load() {
			return nil
		}
		for _, obj := range watched {
			inf, err := c.GetInformer(req.Context(), obj, ctrlcache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return fmt.Errorf("the cache of %s is not synced yet", typeName(obj))
			}
		}
		synced.Store(true)
		return nil
	}
}

// watchedTypes are the types the controllers watch: every kind of the table, the metadata of Secrets
// and ConfigMaps, and APIManagers when their CRD is installed.
func watchedTypes(installations bool) []client.Object {
	out := append(syncedKinds(), &v1alpha1.OpenAPI{}) // the OpenAPI generator's controller watches it too
	for _, gvk := range []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("ConfigMap")} {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		out = append(out, m)
	}
	if installations {
		manager := &unstructured.Unstructured{}
		manager.SetGroupVersionKind(kit.APIManagerGVK)
		out = append(out, manager)
	}
	return out
}

// typeName names obj's type for a message: its kind when it says it, else its Go type.
func typeName(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}
