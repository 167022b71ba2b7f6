// Command manager is the apimsync operator: it syncs Backend, Product and ApplicationPlan resources into
// the 3scale Account Management API.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/openapi"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "apimsync:", err)
		os.Exit(1)
	}
}

// flags are the manager's command-line settings.
type flags struct {
	metricsAddr, probeAddr string
	pprofAddr              string
	metricsSecure          bool
	leaderElect            bool
	leaderElectionNS       string
	watchNamespaces        string
	watchLabelSelector     string
	kubeQPS                float64
	kubeBurst              int
	maxResponseSize        string
	opts                   controllers.Options
	zap                    zap.Options
	version                bool
	webhook                webhookFlags
	memory                 memoryFlag
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.BoolVar(&f.version, "version", false, "Print the version and the VCS revision the manager was built from, and exit.")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 turns it off.")
	fs.BoolVar(&f.metricsSecure, "metrics-secure", false, "Serve metrics over HTTPS (self-signed, HTTP/1.1), to clients authenticated and authorized by the cluster (TokenReview and SubjectAccessReview on /metrics); off for local runs and the demo, on in config/default.")
	fs.IntVar(&f.opts.MetricsMaxTenants, "metrics-max-tenants", 100, "Distinct tenant labels in the metrics at most; calls to further tenants are counted under tenant=\"other\".")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes.")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "", "Address of Go's pprof profiles (/debug/pprof/), for diagnosing the manager's CPU and memory; empty (the default) turns them off.")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "Elect a leader so that only one replica syncs at a time.")
	fs.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader-election lease (default: the pod's namespace).")
	fs.StringVar(&f.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces to watch; empty watches all.")
	fs.StringVar(&f.watchLabelSelector, "watch-label-selector", "", "Sync only the apimsync objects this label selector matches (one shard of several managers, e.g. apimsync.io/shard=a); empty syncs all.")
	fs.DurationVar(&f.opts.DriftCheckPeriod, "drift-check-period", 30*time.Minute, "How often synced objects are re-read from 3scale and repaired; 0 turns drift checks off. Each object has its own slot in the period, so checks are spread evenly.")
	fs.Float64Var(&f.opts.DriftCheckBudget, "drift-check-budget", 0.2, "Share of each tenant's request budget (its pacer's concurrency and, once known, its rate) that drift checks may use, in (0, 1].")
	fs.IntVar(&f.opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 32, "Objects of one kind reconciled at once (each tenant's pacer decides how many of them call it).")
	fs.Float64Var(&f.opts.RemoteQPS, "remote-qps", 0, "Optional hard cap of requests per second to one 3scale tenant (token bucket); 0: none, the adaptive pacing alone.")
	fs.IntVar(&f.opts.RemoteBurst, "remote-burst", 0, "Burst of --remote-qps (default: one second's worth).")
	fs.IntVar(&f.opts.RemoteMaxInFlight, "remote-max-in-flight", 32, "Cap of the adaptive limit of requests in flight to one 3scale tenant.")
	fs.IntVar(&f.opts.DataCacheSize, "data-cache-size", 1024, "Referenced Secrets and ConfigMaps whose data is kept between reads (LRU, by resourceVersion); the manager caches only the metadata of Secrets and ConfigMaps, never their data.")
	fs.IntVar(&f.opts.SnapshotCacheSize, "snapshot-cache-size", 8192, "Remote snapshots kept in memory at most (LRU; one per synced object is what makes an unchanged object cost no call). Memory grows with it, not with the objects beyond it.")
	fs.Float64Var(&f.kubeQPS, "kube-api-qps", 300, "Requests per second to the Kubernetes API server, per kind of object (client-go paces each resource apart): the finalizer-and-marker update and the status write of each object of a burst.")
	fs.IntVar(&f.kubeBurst, "kube-api-burst", 600, "Burst of --kube-api-qps.")
	fs.DurationVar(&f.opts.UsageReportPeriod, "usage-report-period", 10*time.Minute, "How often the usage report of a Deprecated or Retired product is refreshed (one list of its applications per period).")
	fs.BoolVar(&f.opts.AllowPrivateAdminURLs, "allow-private-admin-urls", false, "Allow provider accounts whose adminURL is on a loopback, link-local, private or cluster-internal address (demos, tests, an in-cluster 3scale).")
	fs.DurationVar(&f.opts.InvalidRetryPeriod, "invalid-retry-period", 10*time.Minute, "Objects made Invalid by an answer of 3scale are tried again after this period (a safety net); negative turns it off.")
	fs.StringVar(&f.maxResponseSize, "max-response-size", resource.NewQuantity(tsclient.DefaultMaxResponseBytes, resource.BinarySI).String(), "Largest answer read from 3scale (a quantity: 512Ki, 8Mi...); a larger one fails the call, never read into memory whole.")
	fs.DurationVar(&f.opts.MaxRetryAfter, "max-retry-after", tsclient.DefaultMaxRetryAfter, "Longest pause a Retry-After of 3scale imposes on its tenant: a longer one is cut to this (said in the condition, counted in apimsync_remote_retry_after_capped_total).")
	fs.IntVar(&f.opts.RemoteRetries, "remote-retries", 6, "Retries of a call to 3scale after its first attempt when it meets a passing fault (a 503 or 429 porta answered without acting, a lost answer to a read, an update or a deploy), waiting 200ms, then longer, up to 5s (about 11s in all at 6); 0: none.")
	fs.IntVar(&f.opts.MaxListPages, "max-list-pages", tsclient.DefaultMaxPages, "Most pages of 500 items read for one list from 3scale; a list that goes on fails loudly instead of looping.")
	fs.DurationVar(&f.opts.QuietWait, "quiet-wait", 30*time.Second, "How long a wait expected to pass by itself goes without a status write or an event before the object is marked Orphan: a new object whose dependency is being synced (10 times as long while the dependency has never synced) or not created yet, a Synced object whose dependency syncs again or is not in the cache of a shard (--watch-label-selector: relabelled to another, the object follows) or of a manager that has not yet seen its dependencies resolve, an object being deleted waiting for its dependants or users (saves a status write and an event per object in a burst or a mass deletion); negative marks it at once.")
	fs.DurationVar(&f.opts.DependantGrace, "dependant-deletion-grace", 2*time.Second, "How long an object being deleted (a Product, a plan, an account) leaves the objects that cannot exist without it (its plans, applications) to whoever deleted it before deleting them itself: a prune by Argo CD or Flux, or kubectl delete -f, deletes them a moment later, and a second DELETE of each would be an API server write for nothing. Each further deletion seen in the namespace (a prune under way) extends it, up to 10 times the grace. The other way round, a plan or an application deleted while its Product or account stays waits as long for them to be deleted too, and then goes with their deletion in 3scale without a call of its own. Deletions the operator makes itself (an owner's cascade) have no grace and extend none. 0 means the default; negative: no grace.")
	fs.StringVar(&f.opts.FluxSourceHost, "flux-source-host", openapi.DefaultSourceHost, "Host (host:port) Flux's source-controller advertises its artifacts at (its --storage-adv-addr): an OpenAPI's spec.sourceRef fetches artifacts from no other. The environment variable SOURCE_CONTROLLER_LOCALHOST, as Flux's controllers read it, makes the manager connect to that host:port instead (a port-forward).")
	fs.DurationVar(&f.opts.RetryBackoffMax, "retry-backoff-max", time.Minute, "Longest wait before retrying an object after a passing failure (5xx, timeout).")
	f.webhook.bind(fs)
	f.memory.bind(fs)
	// --kubeconfig is registered on the default flag set by controller-runtime; carry it over.
	if kf := flag.CommandLine.Lookup("kubeconfig"); kf != nil {
		fs.Var(kf.Value, kf.Name, kf.Usage)
	}
	f.zap.Development = false
	f.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.version {
		return f, nil
	}
	if f.watchLabelSelector != "" {
		sel, err := labels.Parse(f.watchLabelSelector)
		if err != nil {
			return nil, fmt.Errorf("--watch-label-selector: %w", err)
		}
		f.opts.WatchLabelSelector = sel
	}
	if err := f.memory.parse(); err != nil {
		return nil, err
	}
	size, err := resource.ParseQuantity(f.maxResponseSize)
	if err != nil || size.Value() < 1024 || size.Value() > 1<<30 {
		return nil, fmt.Errorf("--max-response-size must be a size between 1Ki and 1Gi (e.g. 8Mi), got %q", f.maxResponseSize)
	}
	f.opts.MaxResponseBytes = int(size.Value())
	if f.opts.MaxListPages < 1 {
		return nil, fmt.Errorf("--max-list-pages must be at least 1, got %d", f.opts.MaxListPages)
	}
	if b := f.opts.DriftCheckBudget; b <= 0 || b > 1 {
		return nil, fmt.Errorf("--drift-check-budget must be in (0, 1], got %v", b)
	}
	if f.opts.RemoteRetries == 0 {
		f.opts.RemoteRetries = -1 // none; 0 in Options is the client's default
	}
	f.opts.FluxSourceLocalhost = os.Getenv("SOURCE_CONTROLLER_LOCALHOST")
	f.opts.PartialView = len(splitNamespaces(f.watchNamespaces)) > 0
	f.opts.Webhook = f.webhook.port != 0
	return f, nil
}

// metricsOptions serves metrics plainly, or with TLS behind the cluster's authentication and
// authorization (controller-runtime's filter) when --metrics-secure is set. The certificate is
// self-signed, made in memory at start (a read-only root filesystem is fine). HTTP/2 is off, as in
// kubebuilder's scaffold: the endpoint does not need it, and it keeps the HTTP/2 stream-reset attacks
// (CVE-2023-44487, CVE-2023-39325) away from it.
func metricsOptions(f *flags) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: f.metricsAddr}
	if f.metricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
		opts.TLSOpts = []func(*tls.Config){disableHTTP2}
	}
	return opts
}

func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }

// leaderElectionID is the lease of this manager: one per shard, so that shards elect their leaders apart.
func leaderElectionID(f *flags) string {
	if id := controllers.ShardID(f.opts.WatchLabelSelector); id != "" {
		return "apimsync-" + id + ".capabilities.apimsync.io"
	}
	return "apimsync.capabilities.apimsync.io"
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	build := readBuildInfo()
	if f.version {
		fmt.Println(build)
		return nil
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("cannot find a cluster (set --kubeconfig or KUBECONFIG): %w", err)
	}
	cfg.QPS, cfg.Burst = float32(f.kubeQPS), f.kubeBurst
	ctx := ctrl.SetupSignalHandler()
	if _, err := f.memory.apply(ctx, ctrl.Log.WithName("setup")); err != nil {
		return fmt.Errorf("cannot set the soft memory limit: %w", err)
	}
	opts := managerOptions(f, scheme)
	opts.WebhookServer = f.webhook.server(ctx)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("cannot create the manager: %w", err)
	}
	if err := f.webhook.rotate(mgr); err != nil {
		return fmt.Errorf("cannot set up the webhook's certificates: %w", err)
	}
	if err := controllers.SetupWithManager(ctx, mgr, f.opts); err != nil {
		return fmt.Errorf("cannot set up the controllers: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting apimsync", "version", build.Version, "revision", build.Revision, "modified", build.Modified,
		"go", build.GoVersion, "watchNamespaces", f.watchNamespaces, "driftCheckPeriod", f.opts.DriftCheckPeriod)
	return mgr.Start(ctx)
}

// managerOptions are the manager's options. Every cache it starts, the metadata-only caches of Secrets
// and ConfigMaps included, holds only the --watch-namespaces (all when empty), and the synced kinds only
// what --watch-label-selector selects: the namespaced install (config/namespaced) grants no right
// beyond those namespaces, so a cluster-wide watch would be refused.
func managerOptions(f *flags, scheme *runtime.Scheme) ctrl.Options {
	shutdown := 30 * time.Second
	return controllers.ManagerOptions(ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOptions(f),
		HealthProbeBindAddress:        f.probeAddr,
		PprofBindAddress:              f.pprofAddr,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              leaderElectionID(f),
		LeaderElectionNamespace:       f.leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &shutdown,
	}, splitNamespaces(f.watchNamespaces), f.opts.WatchLabelSelector)
}

func splitNamespaces(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
