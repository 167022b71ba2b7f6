package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// Config is one bench run.
type Config struct {
	// Objects and Tenants size the workload (BENCH_OBJECTS, BENCH_TENANTS); Seed makes it reproducible.
	Objects, Tenants int
	Seed             int64
	// Latency of every simulator call; RateLimit (requests per second per tenant, 0: none) and RateBurst
	// are the tenant's server-side limit, beyond which it answers 429 with Retry-After.
	Latency   time.Duration
	RateLimit float64
	RateBurst int
	// MaxInFlight is the manager's cap on requests in flight per tenant (--remote-max-in-flight).
	MaxInFlight int
	// Steady is the window over which calls at rest are counted, warm and after a restart.
	Steady time.Duration
	// DriftCheckPeriod is the manager's --drift-check-period in the drift phase, which counts the calls
	// over DriftWindow; the other phases run with drift checks off, so that "at rest" means no call.
	DriftCheckPeriod, DriftWindow time.Duration
	// Timeout bounds the cold run and the deletion each.
	Timeout time.Duration
	// Floor measures the control plane's floor at the end (BENCH_FLOOR, default on): see Floor.
	// FloorRunStatuses measures its cold run again with the statuses the cold run wrote
	// (BENCH_FLOOR_STATUSES, default off): Floor.ColdRunStatusesSeconds. FloorBefore measures the
	// cold floor also on a fresh control plane of its own, just before the cold run
	// (BENCH_FLOOR_BEFORE, default off): Floor.ColdBeforeSeconds.
	Floor, FloorRunStatuses, FloorBefore bool
	// DependantsFirst deletes each namespace's objects in the reverse of the order they were applied
	// (BENCH_DELETE_ORDER=dependants-first: plans, then products, then backends), as a prune that deletes
	// dependants before their owners does; by default they are deleted in the order applied (backends,
	// products, plans: owners before their dependants).
	DependantsFirst bool
	// ManagerBin and SimBin are the binaries to run (make build); ManagerArgs are added to the manager's.
	ManagerBin, SimBin string
	ManagerArgs        []string
	// MemoryLimit, when set (BENCH_MEMORY_LIMIT, a quantity such as 1Gi), is every manager's
	// --memory-limit, as a pod's memory limit would be: the cold run's peak RSS is reported against it.
	MemoryLimit string
	SimArgs     []string // added to the simulator's flags (e.g. --trace)
	// Faults, when set (BENCH_FAULTS), runs the faults phase after the deletion: see FaultsPhase.
	Faults *simulator.Faults
	// NoShards skips the shards phase (BENCH_SHARDS=0): see ShardsPhase.
	NoShards bool
	// SlowLatency, when positive (BENCH_SLOW_TENANT), runs the slow-tenant phase: see SlowPhase.
	SlowLatency time.Duration
	// Profile, when positive (BENCH_PROFILE), is the length of the CPU profiles taken from the start of
	// the cold run and of the deletion (of the API server and the manager), and of the floor's two runs
	// (of the API server): see profile.
	Profile time.Duration
	// Settle is how long a restarted manager is left before its memory is read (default 15s).
	Settle time.Duration
	// Dir receives the processes' logs.
	Dir string
	// Log receives progress lines.
	Log io.Writer
}

// Phase is the outcome of one measured phase.
type Phase struct {
	Seconds float64 `json:"seconds"`
	// Sent is how long the bench took to send its own creates (deletes) of the phase, 16 at a time:
	// the part of Seconds the manager's work shares the control plane with.
	Sent     float64 `json:"sentSeconds"`
	Calls    Calls   `json:"calls"`
	TooMany  int     `json:"tooManyRequests"`
	Refused  int     `json:"refused"`
	NotFound int     `json:"notFound"`
	Ignored  int     `json:"ignoredRetryAfter"`
	Minimal  Calls   `json:"minimal"`
	// ByEndpoint counts the calls per verb and path template, all tenants together.
	ByEndpoint map[string]int `json:"byEndpoint"`
	Bound      float64        `json:"boundSeconds"`
	// Kube counts the manager's requests to the Kubernetes API server in the phase.
	Kube KubeRequests `json:"kubeRequests"`
	// APIServer counts the write requests the API server served in the phase, from every client (the
	// bench's own creates or deletes included), by verb and resource.
	APIServer APIServerWrites `json:"apiServerWrites"`
	// Events counts the events the manager recorded in the phase, by regarded kind and reason (an
	// aggregated series counts once per occurrence).
	Events APIServerWrites `json:"events"`
	// CPU is what each process used in the phase.
	CPU      CPU     `json:"cpu"`
	CallsMin float64 `json:"callsPerMinimal"`
	TimeBnd  float64 `json:"timePerBound"`
}

// Point is one sample of the cold run: objects Synced after some seconds.
type Point struct {
	Seconds float64 `json:"seconds"`
	Synced  int     `json:"synced"`
}

// SizedMemory is the manager's memory with a number of objects in its cache, at rest.
type SizedMemory struct {
	Objects int `json:"objects"`
	Tenants int `json:"tenants"` // the namespaces watched, each its own tenant
	Memory
}

// Result is everything a run measured.
type Result struct {
	Config struct {
		Objects, Tenants    int
		Seed                int64
		Latency             string
		RateLimit           float64
		MaxInFlight         int
		Steady, DriftPeriod string
		DeleteOrder         string
		MemoryLimit         string `json:",omitempty"`
	} `json:"config"`
	Cold                Phase            `json:"cold"`
	ColdSeries          []Point          `json:"coldSeries"`
	ColdPeak            Memory           `json:"coldPeakMemory"`
	SteadyWarm          Calls            `json:"steadyWarm"`
	SteadyAfterRestart  Calls            `json:"steadyAfterRestart"`
	Edits               map[string]Calls `json:"edits"`
	Memory              []SizedMemory    `json:"memoryAtRest"`
	Drift               Drift            `json:"drift"`
	Deletion            Phase            `json:"deletion"`
	DeletionSeries      []Point          `json:"deletionSeries"` // objects left over time
	LeftAfterDeletion   int              `json:"remoteObjectsLeftAfterDeletion"`
	Faults              *FaultsPhase     `json:"faults,omitempty"`
	Slow                *SlowPhase       `json:"slowTenant,omitempty"`
	Shards              *ShardsPhase     `json:"shards,omitempty"`
	Unmanaged           Unmanaged        `json:"unmanaged"`
	Floor               Floor            `json:"controlPlaneFloor"`
	ObjectsPerNamespace []int            `json:"objectsPerNamespace"`
}

// bench is one run's moving parts.
type bench struct {
	cfg     Config
	work    Workload
	env     *testenv.Env
	k8s     client.Client
	simURL  string
	sim     *process
	mgr     *process
	kubecfg string
	metrics string
	probe   string
	pprof   string // the manager's pprof address (BENCH_PROFILE), empty without
	// runStatuses are the statuses the cold run left, for the floor written with them (floor.go).
	runStatuses map[string]any
	res         *Result
	peakMu      sync.Mutex
	peak        Memory
	tokens      map[string]string
	// watch is a cache of the synced objects for the census; stopWatch stops it.
	watch     crcache.Cache
	stopWatch context.CancelFunc
	// driftChecks: the manager runs with the drift period (the drift phase); otherwise with none.
	driftChecks bool
}

func (b *bench) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, "[%s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

// Run runs the whole bench: cold sync, steady state warm and after a restart, one edit per kind warm
// and after a restart, memory at rest at three sizes, drift checks over a window, deletion of
// everything, and the control plane's floor.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	// The bench's own informers (its census) log nothing worth reading; without a logger controller-runtime
	// prints a stack trace to say so.
	ctrllog.SetLogger(logr.Discard())
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, work: Generate(cfg.Seed, cfg.Objects, cfg.Tenants), res: &Result{Edits: map[string]Calls{}}, tokens: map[string]string{}}
	r := b.res
	r.Config.Objects, r.Config.Tenants, r.Config.Seed = b.work.Size(), len(b.work.Namespaces), cfg.Seed
	r.Config.Latency, r.Config.RateLimit, r.Config.MaxInFlight = cfg.Latency.String(), cfg.RateLimit, cfg.MaxInFlight
	r.Config.Steady, r.Config.DriftPeriod = cfg.Steady.String(), cfg.DriftCheckPeriod.String()
	r.Config.DeleteOrder = "applied"
	r.Config.MemoryLimit = cfg.MemoryLimit
	if cfg.DependantsFirst {
		r.Config.DeleteOrder = "dependants-first"
	}
	for _, ns := range b.work.Namespaces {
		r.ObjectsPerNamespace = append(r.ObjectsPerNamespace, len(ns.Objects()))
	}
	defer b.close()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"start", b.start},
		{"floor before", b.floorBefore},
		{"cold", b.cold},
		{"unmanaged", b.unmanaged},
		{"steady", b.steady},
		{"edits", func(ctx context.Context) error { return b.edits(ctx, "warm") }},
		{"restart", b.steadyAfterRestart},
		{"memory", b.memory},
		{"edits after restart", func(ctx context.Context) error {
			if err := b.restart(ctx, ""); err != nil {
				return err
			}
			return b.edits(ctx, "after restart")
		}},
		{"drift", b.drift},
		{"deletion", b.deletion},
		{"faults", b.faults},
		{"slow tenant", b.slowTenant},
		{"shards", b.shards},
		{"floor", b.floor},
	}
	for _, s := range steps {
		b.logf("== %s", s.name)
		if err := s.run(ctx); err != nil {
			return r, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return r, nil
}

func (b *bench) close() {
	if b.stopWatch != nil {
		b.stopWatch()
	}
	b.mgr.stop()
	b.sim.stop()
	if b.env != nil {
		_ = b.env.Stop()
	}
}

// start starts the control plane, the simulator (one tenant per namespace) and the manager, and makes
// the namespaces with their provider-account Secrets.
func (b *bench) start(ctx context.Context) error {
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	b.env = env
	if b.k8s, b.watch, b.stopWatch, err = clients(ctx, env); err != nil {
		return err
	}
	user, err := env.Environment.AddUser(envtest.User{Name: "bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return err
	}
	b.kubecfg = filepath.Join(b.cfg.Dir, "kubeconfig")
	if err := os.WriteFile(b.kubecfg, raw, 0o600); err != nil {
		return err
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	b.simURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	args := []string{"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--seed", fmt.Sprint(b.cfg.Seed),
		"--latency", b.cfg.Latency.String(), "--tenant-rate-limit", fmt.Sprint(b.cfg.RateLimit), "--tenant-rate-burst", fmt.Sprint(b.cfg.RateBurst)}
	if b.cfg.Profile > 0 {
		args = append(args, "--pprof")
	}
	args = append(args, b.cfg.SimArgs...)
	for i, ns := range b.work.Namespaces {
		b.tokens[ns.Name] = fmt.Sprintf("bench-token-%03d", i)
		args = append(args, "--tenant", ns.Name+"="+b.tokens[ns.Name])
	}
	if b.sim, err = startProcess(b.cfg.SimBin, args, filepath.Join(b.cfg.Dir, "simulator.log")); err != nil {
		return err
	}
	if err := waitHTTP(ctx, b.sim, b.simURL+"/__sim/stats"); err != nil {
		return err
	}
	for _, ns := range b.work.Namespaces {
		if err := b.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}); err != nil {
			return err
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: v1alpha1.DefaultProviderAccountSecret},
			StringData: map[string]string{"adminURL": b.simURL + "/t/" + ns.Name, "token": b.tokens[ns.Name], "allowInsecureHTTP": "true"}}
		if err := b.k8s.Create(ctx, secret); err != nil {
			return err
		}
	}
	return b.startManager(ctx, "")
}

// clients are the bench's client of env's API server and its census cache, started (stop stops it).
func clients(ctx context.Context, env *testenv.Env) (client.Client, crcache.Cache, context.CancelFunc, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	k8s, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, nil, nil, err
	}
	// The census reads a watch-fed cache: polling lists of every object twice a second would load the
	// API server more than the manager does, on the same two cores, and slow what is measured.
	watch, err := crcache.New(cfg, crcache.Options{Scheme: env.Scheme, DefaultTransform: crcache.TransformStripManagedFields()})
	if err != nil {
		return nil, nil, nil, err
	}
	watchCtx, stop := context.WithCancel(ctx)
	go func() { _ = watch.Start(watchCtx) }()
	return k8s, watch, stop, nil
}

// startManager starts the manager binary, syncing the objects selector matches ("": all; as
// --watch-label-selector), and waits until it is ready. A manager that ends before it is ready is started
// again on other ports, twice at most: a port found free may be taken by another process before the
// manager binds it.
func (b *bench) startManager(ctx context.Context, selector string) error {
	var err error
	for range 3 {
		if err = b.startManagerOnce(ctx, selector); err == nil || ctx.Err() != nil || !b.mgr.ended() {
			return err
		}
		b.logf("the manager did not start (%v); trying other ports", err)
	}
	return err
}

func (b *bench) startManagerOnce(ctx context.Context, selector string) error {
	var args []string
	if selector != "" {
		args = append(args, "--watch-label-selector", selector)
	}
	m, err := b.launchManager(ctx, "manager", args)
	if m != nil {
		b.mgr, b.metrics, b.probe, b.pprof = m.proc, m.metrics, m.probe, m.pprof
	}
	return err
}

// managerProc is a manager process with its endpoints.
type managerProc struct {
	proc                  *process
	metrics, probe, pprof string
}

// launchManager starts the manager binary with the run's flags and args, logging to name.log, on free
// ports, and waits until it is ready. The process is returned also when it did not get ready.
func (b *bench) launchManager(ctx context.Context, name string, args []string) (*managerProc, error) {
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &managerProc{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport), probe: fmt.Sprintf("http://127.0.0.1:%d/readyz", pport)}
	all := []string{"--kubeconfig", b.kubecfg,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", mport),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", pport),
		"--allow-private-admin-urls", "--zap-log-level", "error",
		"--drift-check-period", b.driftPeriod().String()}
	if b.cfg.MaxInFlight > 0 {
		all = append(all, "--remote-max-in-flight", fmt.Sprint(b.cfg.MaxInFlight))
	}
	if b.cfg.MemoryLimit != "" {
		all = append(all, "--memory-limit", b.cfg.MemoryLimit)
	}
	if b.cfg.Profile > 0 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		m.pprof = fmt.Sprintf("127.0.0.1:%d", port)
		all = append(all, "--pprof-bind-address", m.pprof)
	}
	all = append(append(all, args...), b.cfg.ManagerArgs...)
	if m.proc, err = startProcess(b.cfg.ManagerBin, all, filepath.Join(b.cfg.Dir, name+".log")); err != nil {
		return nil, err
	}
	ready, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return m, waitHTTP(ready, m.proc, m.probe)
}

// driftPeriod is the manager's --drift-check-period: the configured one in the drift phase, 0 otherwise.
func (b *bench) driftPeriod() time.Duration {
	if b.driftChecks {
		return b.cfg.DriftCheckPeriod
	}
	return 0
}

// restart stops the manager and starts it again, syncing the objects selector matches ("": all).
func (b *bench) restart(ctx context.Context, selector string) error {
	b.mgr.stop()
	return b.startManager(ctx, selector)
}

// sampleMemory samples the manager's memory into b.peak until ctx ends: its resident size every second
// from /proc (nothing asked of the manager), its heap and goroutines every memoryScrapeEvery from its
// metrics endpoint. A scrape every second was a twentieth of the manager's CPU in a cold run (the
// promhttp handler in the profile): the bench must not weigh on what it measures, and Prometheus
// scrapes every 15 to 60 s.
func (b *bench) sampleMemory(ctx context.Context) {
	for i := 0; ; i++ {
		m, err := Memory{}, error(nil)
		if i%memoryScrapeEvery == 0 {
			m, err = readMemory(b.metrics)
		} else {
			m.RSSMiB, err = residentMiB(b.mgr.cmd.Process.Pid)
		}
		if err == nil {
			b.peakMu.Lock()
			b.peak.peak(m)
			b.peakMu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// apply creates objects with a few parallel writers, as `kubectl apply` of a large folder or Argo CD
// would.
func (b *bench) apply(ctx context.Context, objs []client.Object, do func(context.Context, client.Object) error) error {
	work := make(chan client.Object)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for o := range work {
				if err := do(ctx, o); err != nil {
					select {
					case errs <- fmt.Errorf("%s %s/%s: %w", kindOf(o), o.GetNamespace(), o.GetName(), err):
					default:
					}
				}
			}
		})
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func kindOf(o client.Object) string {
	t := fmt.Sprintf("%T", o)
	return t[strings.LastIndex(t, ".")+1:]
}

func (b *bench) allObjects() []client.Object {
	var out []client.Object
	for _, ns := range b.work.Namespaces {
		out = append(out, ns.Objects()...)
	}
	return out
}

// census counts the bench's objects that exist and those Synced at their current generation: every kind
// of the workload (Namespace.Objects).
func (b *bench) census(ctx context.Context) (exist, synced int, err error) {
	return b.censusExcept(ctx, "")
}

// censusExcept is census without the objects of namespace except ("" leaves none out).
func (b *bench) censusExcept(ctx context.Context, except string) (exist, synced int, err error) {
	for _, l := range censusLists() {
		// Read only, and every 200ms over up to tens of thousands of objects: no deep copy.
		if err := b.watch.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return 0, 0, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return 0, 0, err
		}
		for _, it := range items {
			o := it.(interface {
				client.Object
				v1alpha1.SyncedObject
			})
			if o.GetNamespace() == except {
				continue
			}
			exist++
			if syncedAtGeneration(o) {
				synced++
			}
		}
	}
	return exist, synced, nil
}

// censusLists are empty lists of every kind of the workload (Namespace.Objects).
func censusLists() []client.ObjectList {
	return []client.ObjectList{&v1alpha1.BackendList{}, &v1alpha1.ProductList{}, &v1alpha1.ApplicationPlanList{},
		&v1alpha1.ServicePlanList{}, &v1alpha1.AccountPlanList{}, &v1alpha1.TenantSettingsList{}, &v1alpha1.AdminUserList{}}
}

// syncedAtGeneration tells whether o is Ready at its current generation.
func syncedAtGeneration(o interface {
	client.Object
	v1alpha1.SyncedObject
}) bool {
	c := meta.FindStatusCondition(o.GetSyncStatus().Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == o.GetGeneration()
}

// waitCensus takes the census every interval until done says it is as wanted, within the run's timeout.
func (b *bench) waitCensus(ctx context.Context, interval time.Duration, done func(exist, synced int) bool) error {
	deadline := time.Now().Add(b.cfg.Timeout)
	for {
		exist, synced, err := b.census(ctx)
		if err != nil {
			return err
		}
		if done(exist, synced) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d objects, %d Synced after %s: %w", exist, synced, b.cfg.Timeout, errTimeout)
		}
		time.Sleep(interval)
	}
}

// seriesInterval is how often the census is taken while objects converge (each census is a point of
// the series): every 100ms up to 1,000 objects, where half a second would be a large share of the time
// measured; every 500ms beyond, where a census lists tens of thousands of objects.
func (b *bench) seriesInterval() time.Duration {
	if b.work.Size() <= 1000 {
		return 100 * time.Millisecond
	}
	return 500 * time.Millisecond
}

// cold applies the whole workload at once and waits until every object is Synced.
func (b *bench) cold(ctx context.Context) error {
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go b.sampleMemory(sampling)
	cpuBefore, apiBefore, eventsBefore := b.sampleCPU(), b.apiServerWrites(ctx), b.events(ctx)
	defer b.profile(ctx, "cold", b.pprof)()
	start := time.Now()
	objs := b.allObjects()
	if err := b.apply(ctx, objs, func(ctx context.Context, o client.Object) error { return b.k8s.Create(ctx, o) }); err != nil {
		return err
	}
	sent := time.Since(start)
	b.logf("cold began at %s", start.Format("15:04:05.000"))
	b.logf("applied %d objects in %.1fs", len(objs), sent.Seconds())
	lastLog := time.Now()
	err := b.waitCensus(ctx, b.seriesInterval(), func(_, synced int) bool {
		secs := time.Since(start).Seconds()
		b.res.ColdSeries = append(b.res.ColdSeries, Point{secs, synced})
		if time.Since(lastLog) > 10*time.Second {
			b.logf("%d/%d Synced after %.0fs", synced, len(objs), secs)
			lastLog = time.Now()
		}
		return synced == len(objs)
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	stopSampling()
	b.peakMu.Lock()
	b.res.ColdPeak = b.peak
	b.peakMu.Unlock()
	var minimal []Calls
	for _, ns := range b.work.Namespaces {
		minimal = append(minimal, ns.MinimalCold())
	}
	ph, err := b.phase(elapsed, minimal)
	// The manager started with the run: its requests so far are the cold run's (and its start's).
	ph.Kube, _ = readKubeRequests(b.metrics)
	ph.CPU, ph.APIServer = b.cpuSince(cpuBefore, elapsed.Seconds()), b.apiServerWrites(ctx).minus(apiBefore)
	ph.Events = b.events(ctx).minus(eventsBefore)
	ph.Sent = sent.Seconds()
	b.res.Cold = ph
	if b.cfg.Floor && b.cfg.FloorRunStatuses {
		var rerr error
		if b.runStatuses, rerr = b.readRunStatuses(ctx); rerr != nil {
			return rerr
		}
	}
	b.logf("cold: %d objects in %.1fs, %d calls (%d writes), minimal %d, bound %.1fs; %d Kubernetes API writes",
		len(objs), ph.Seconds, ph.Calls.Total(), ph.Calls.Writes, ph.Minimal.Total(), ph.Bound, ph.Kube.Writes)
	return err
}

// byEndpoint counts the calls per verb, path template and answer, all tenants together.
func byEndpoint(st simulator.Stats) map[string]int {
	out := map[string]int{}
	for _, k := range st.Calls {
		out[fmt.Sprintf("%s %s %d", k.Method, k.Endpoint, k.Code)] += k.Count
	}
	return out
}

// phase fills a Phase from the simulator's counters and the minimal calls per tenant.
func (b *bench) phase(elapsed time.Duration, minimal []Calls) (Phase, error) {
	st, err := simStats(b.simURL)
	if err != nil {
		return Phase{}, err
	}
	ph := Phase{Seconds: elapsed.Seconds(), Ignored: st.IgnoredRetryAfter}
	var a answers
	ph.Calls, a = callsOf(st)
	ph.TooMany, ph.Refused, ph.NotFound = a.tooMany, a.refused, a.notFound
	ph.ByEndpoint = byEndpoint(st)
	for _, m := range minimal {
		ph.Minimal = ph.Minimal.plus(m)
	}
	ph.Bound = TimeBound(minimal, b.pacing()).Seconds()
	if ph.Minimal.Total() > 0 {
		ph.CallsMin = float64(ph.Calls.Total()) / float64(ph.Minimal.Total())
	}
	if ph.Bound > 0 {
		ph.TimeBnd = ph.Seconds / ph.Bound
	}
	return ph, nil
}

// pacing is what bounds the rate of calls to one tenant in this run.
func (b *bench) pacing() Pacing {
	inFlight := b.cfg.MaxInFlight
	if inFlight <= 0 {
		inFlight = DefaultMaxInFlight
	}
	return Pacing{RateLimit: b.cfg.RateLimit, MaxInFlight: inFlight, Latency: b.cfg.Latency}
}

// DefaultMaxInFlight mirrors the manager's default --remote-max-in-flight.
const DefaultMaxInFlight = 32

// window counts the calls made over the steady window.
func (b *bench) window(ctx context.Context) (Calls, error) {
	if err := resetSimStats(b.simURL); err != nil {
		return Calls{}, err
	}
	select {
	case <-ctx.Done():
		return Calls{}, ctx.Err()
	case <-time.After(b.cfg.Steady):
	}
	st, err := simStats(b.simURL)
	if err != nil {
		return Calls{}, err
	}
	c, _ := callsOf(st)
	return c, nil
}

func (b *bench) steady(ctx context.Context) error {
	c, err := b.window(ctx)
	b.res.SteadyWarm = c
	b.logf("steady (warm): %d calls in %s", c.Total(), b.cfg.Steady)
	return err
}

func (b *bench) steadyAfterRestart(ctx context.Context) error {
	if err := b.restart(ctx, ""); err != nil {
		return err
	}
	// The window starts once the restarted manager is ready: its start (listing every object and
	// finding each in sync) is what it measures.
	c, err := b.window(ctx)
	if err != nil {
		return err
	}
	b.res.SteadyAfterRestart = c
	b.logf("steady (after a restart): %d calls in %s", c.Total(), b.cfg.Steady)
	if m, err := readMemory(b.metrics); err == nil {
		b.res.Memory = append(b.res.Memory, SizedMemory{Objects: b.work.Size(), Tenants: len(b.work.Namespaces), Memory: m})
	}
	return nil
}

// edits makes one edit per kind (a mapping rule of a product, of a backend, a limit of a plan) and counts
// the calls each costs until the object is Synced again — for a backend, until every product using it has
// synced the change too (its deploys, and promotions where a product follows staging).
func (b *bench) edits(ctx context.Context, label string) error {
	ns := b.work.Namespaces[0]
	if len(ns.Products) == 0 || len(ns.Plans) == 0 || len(ns.Backends) == 0 {
		return nil
	}
	type editable interface {
		client.Object
		v1alpha1.SyncedObject
	}
	edits := []struct {
		name   string
		key    client.ObjectKey
		obj    editable
		change func(client.Object)
		users  []*v1alpha1.Product // products that sync the change after the object
	}{
		{"mapping rule", client.ObjectKeyFromObject(ns.Products[0]), &v1alpha1.Product{}, func(o client.Object) {
			o.(*v1alpha1.Product).Spec.MappingRules[0].Increment++
		}, nil},
		{"backend mapping rule", client.ObjectKeyFromObject(ns.Backends[0]), &v1alpha1.Backend{}, func(o client.Object) {
			o.(*v1alpha1.Backend).Spec.MappingRules[0].Increment++
		}, usersOf(ns, ns.Backends[0].Name)},
		{"limit", client.ObjectKeyFromObject(ns.Plans[0]), &v1alpha1.ApplicationPlan{}, func(o client.Object) {
			o.(*v1alpha1.ApplicationPlan).Spec.Limits[0].Value++
		}, nil},
	}
	for _, e := range edits {
		if err := resetSimStats(b.simURL); err != nil {
			return err
		}
		before := map[client.ObjectKey]string{}
		for _, p := range e.users {
			var cur v1alpha1.Product
			if err := b.k8s.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
				return err
			}
			before[client.ObjectKeyFromObject(p)] = cur.Status.SyncedHash
		}
		if err := b.editAndWait(ctx, e.key, e.obj, e.change); err != nil {
			return err
		}
		for key, hash := range before {
			if err := b.waitResynced(ctx, key, hash); err != nil {
				// Reported, not fatal: a manager whose products ignore their backends' edits is measured too.
				b.logf("edit of a %s (%s): %v", e.name, label, err)
			}
		}
		st, err := simStats(b.simURL)
		if err != nil {
			return err
		}
		c, _ := callsOf(st)
		b.res.Edits[e.name+" ("+label+")"] = c
		b.logf("edit of a %s (%s): %d calls", e.name, label, c.Total())
	}
	return nil
}

// usersOf returns the namespace's products that use the backend named name.
func usersOf(ns Namespace, name string) []*v1alpha1.Product {
	var out []*v1alpha1.Product
	for _, p := range ns.Products {
		if _, ok := p.Spec.BackendUsages[name]; ok {
			out = append(out, p)
		}
	}
	return out
}

// waitResynced waits (up to 30 s) until the product is Synced with a synced hash other than before.
func (b *bench) waitResynced(ctx context.Context, key client.ObjectKey, before string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var p v1alpha1.Product
		if err := b.k8s.Get(ctx, key, &p); err != nil {
			return err
		}
		if p.Status.SyncedHash != before && p.Status.ObservedGeneration == p.Generation &&
			meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionSynced) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("product %s did not sync its backend's edit within 30 s", key)
}

// waitSynced waits until the object is Synced at its current generation.
// editAndWait changes the object at key and waits until it is Synced at its new generation. The manager
// writes the object's status meanwhile: the update is retried on conflict, as kubectl edit would.
func (b *bench) editAndWait(ctx context.Context, key client.ObjectKey, obj interface {
	client.Object
	v1alpha1.SyncedObject
}, change func(client.Object)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := b.k8s.Get(ctx, key, obj); err != nil {
			return err
		}
		change(obj)
		return b.k8s.Update(ctx, obj)
	})
	if err != nil {
		return err
	}
	return b.waitSynced(ctx, key, obj)
}

func (b *bench) waitSynced(ctx context.Context, key client.ObjectKey, obj interface {
	client.Object
	v1alpha1.SyncedObject
}) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if err := b.k8s.Get(ctx, key, obj); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(obj.GetSyncStatus().Conditions, v1alpha1.ConditionReady); c != nil &&
			c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s is not Synced after 2 minutes: %w", key, errTimeout)
}

// memory restarts the manager syncing a growing share of the namespaces and reads its memory at rest
// (after a settling time), so that the growth per object shows. The share is chosen by the objects'
// tenthLabel (--watch-label-selector), so that the manager's informers are cluster-wide, as in a default
// install: --watch-namespaces would start one informer per namespace and kind, whose cost (hundreds of
// goroutines and megabytes per namespace) would hide the objects'.
func (b *bench) memory(ctx context.Context) error {
	n := len(b.work.Namespaces)
	sizes := []int{max(1, n/10), max(1, n*2/5)}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	for _, k := range sizes {
		if k >= n {
			continue
		}
		tenths := map[string]bool{}
		for i := range k {
			tenths[tenthOf(i, n)] = true
		}
		objects, tenants := 0, 0
		for i, ns := range b.work.Namespaces {
			if tenths[tenthOf(i, n)] {
				objects += len(ns.Objects())
				tenants++
			}
		}
		selector := tenthLabel + " in (" + strings.Join(slices.Sorted(maps.Keys(tenths)), ",") + ")"
		if err := b.restart(ctx, selector); err != nil {
			return err
		}
		time.Sleep(b.settle())
		m, err := readMemory(b.metrics)
		if err != nil {
			return err
		}
		b.res.Memory = append(b.res.Memory, SizedMemory{Objects: objects, Tenants: tenants, Memory: m})
		b.logf("memory at rest with %d objects on %d tenants: RSS %.0f MiB, heap %.0f MiB, %d goroutines", objects, tenants, m.RSSMiB, m.HeapMiB, m.Goroutines)
	}
	slices.SortFunc(b.res.Memory, func(x, y SizedMemory) int { return x.Objects - y.Objects })
	return nil
}

// settle is how long a restarted manager is left to list and reconcile its objects before its memory
// is read.
func (b *bench) settle() time.Duration {
	if b.cfg.Settle > 0 {
		return b.cfg.Settle
	}
	return 15 * time.Second
}

// deletion deletes every object at once and waits until all are gone; then checks the tenants are empty.
func (b *bench) deletion(ctx context.Context) error {
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	kubeBefore, _ := readKubeRequests(b.metrics)
	cpuBefore, apiBefore, eventsBefore := b.sampleCPU(), b.apiServerWrites(ctx), b.events(ctx)
	defer b.profile(ctx, "deletion", b.pprof)()
	start := time.Now()
	objs := b.allObjects()
	if b.cfg.DependantsFirst {
		slices.Reverse(objs) // the last namespace first too: the order does not matter between namespaces
	}
	del := func(ctx context.Context, o client.Object) error { return client.IgnoreNotFound(b.k8s.Delete(ctx, o)) }
	if err := b.apply(ctx, objs, del); err != nil {
		return err
	}
	sent := time.Since(start)
	b.logf("deleted %d objects in %.1fs", len(objs), sent.Seconds())
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(exist, _ int) bool {
		b.res.DeletionSeries = append(b.res.DeletionSeries, Point{time.Since(start).Seconds(), exist})
		return exist == 0
	}); err != nil {
		return err
	}
	elapsed := time.Since(start)
	var minimal []Calls
	for _, ns := range b.work.Namespaces {
		minimal = append(minimal, ns.MinimalDelete())
	}
	ph, err := b.phase(elapsed, minimal)
	if err != nil {
		return err
	}
	if kube, err := readKubeRequests(b.metrics); err == nil {
		ph.Kube = kube.minus(kubeBefore)
	}
	ph.CPU, ph.APIServer = b.cpuSince(cpuBefore, elapsed.Seconds()), b.apiServerWrites(ctx).minus(apiBefore)
	ph.Events = b.events(ctx).minus(eventsBefore)
	ph.Sent = sent.Seconds()
	b.res.Deletion = ph
	left, err := b.remoteObjects()
	if err != nil {
		return err
	}
	b.res.LeftAfterDeletion = left
	b.logf("deletion: %.1fs, %d calls (minimal %d), %d remote objects left", ph.Seconds, ph.Calls.Total(), ph.Minimal.Total(), left)
	return nil
}

// apiServerWrites reads the API server's write counters; none when they cannot be read (the table then
// shows none, and the log says why).
func (b *bench) apiServerWrites(ctx context.Context) APIServerWrites {
	w, err := readAPIServerWrites(ctx, b.env.Config)
	if err != nil {
		b.logf("cannot read the API server's metrics: %v", err)
	}
	return w
}

// events counts the events of the bench's namespaces so far, by regarded kind and reason; none when they
// cannot be listed (the log says why).
func (b *bench) events(ctx context.Context) APIServerWrites {
	out := APIServerWrites{}
	for _, ns := range b.work.Namespaces {
		var list eventsv1.EventList
		if err := b.k8s.List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
			b.logf("cannot list the events of %s: %v", ns.Name, err)
			return nil
		}
		for _, e := range list.Items {
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count)
			}
			out[e.Regarding.Kind+" "+e.Reason] += n
		}
	}
	return out
}

// remoteObjects counts the services and backends left in every tenant, and the service and account plans
// the workload made (by name: a tenant keeps the "Default" account plan porta's signup gave it, and a
// service plan left behind its deleted service would be a broken cascade).
func (b *bench) remoteObjects() (int, error) {
	left := 0
	for _, ns := range b.work.Namespaces {
		for _, path := range []string{"/admin/api/services.json", "/admin/api/backend_apis.json"} {
			n, err := b.remoteCount(ns.Name, path)
			if err != nil {
				return 0, err
			}
			left += n
		}
		plans, err := b.remotePlans(ns)
		if err != nil {
			return 0, err
		}
		for _, n := range plans {
			left += n
		}
	}
	return left, nil
}

// remotePlans counts, per name, the tenant's service plans (of every service) and account plans that bear
// the name of one of the namespace's ServicePlans or AccountPlans.
func (b *bench) remotePlans(ns Namespace) (map[string]int, error) {
	wanted := map[string]bool{}
	for _, p := range ns.ServicePlans {
		wanted["service plan "+p.Spec.Name] = true
	}
	for _, p := range ns.AccountPlans {
		wanted["account plan "+p.Spec.Name] = true
	}
	out := map[string]int{}
	for kind, path := range map[string]string{"service plan ": "/admin/api/service_plans.json", "account plan ": "/admin/api/account_plans.json"} {
		names, err := b.remoteNames(ns.Name, path)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if wanted[kind+name] {
				out[kind+name]++
			}
		}
	}
	return out, nil
}

// remoteCount counts the objects of a tenant's list (first page: the bench's tenants are small enough
// once emptied; a non-empty first page is already a failure).
func (b *bench) remoteCount(tenant, path string) (int, error) {
	names, err := b.remoteNames(tenant, path)
	return len(names), err
}

// remoteNames returns the names of the objects of a tenant's list (first page), porta's shape
// {"<plural>":[{"<singular>":{"name":...}}]}. A rate-limited tenant's 429 is waited out as its
// Retry-After asks.
func (b *bench) remoteNames(tenant, path string) ([]string, error) {
	var res *http.Response
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequest(http.MethodGet, b.simURL+"/t/"+tenant+path, nil)
		req.SetBasicAuth("", b.tokens[tenant])
		var err error
		if res, err = http.DefaultClient.Do(req); err != nil {
			return nil, err
		}
		if res.StatusCode != http.StatusTooManyRequests || attempt == 10 {
			break
		}
		res.Body.Close()
		wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s of tenant %s: %s", path, tenant, res.Status)
	}
	var body map[string][]map[string]struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, err
	}
	var names []string
	for _, items := range body {
		for _, item := range items {
			for _, o := range item {
				names = append(names, o.Name)
			}
		}
	}
	return names, nil
}
