package controllers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// The controller tests run on a real kube-apiserver + etcd (envtest) with the simulator as 3scale.
var (
	env     *testenv.Env
	sim     *simulator.Simulator
	simURL  string
	k8s     client.Client
	stopMgr context.CancelFunc
	mgrDone chan error
)

const (
	tenantName  = "acme"
	tenantToken = "acme-token"
	// masterToken is the simulator's master access token.
	masterToken = "master-token"
	waitTimeout = 60 * time.Second
	// quietWait is the test manager's --quiet-wait.
	quietWait = 5 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	testenv.ParseTestFlags()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which builds the control plane")
		return 1
	}
	// Everything the manager logs at Info and above is also kept in managerLogs, for the tests that check
	// that no credential is ever logged.
	capture := zapcore.NewCore(zapcore.NewJSONEncoder(uberzap.NewDevelopmentEncoderConfig()), zapcore.AddSync(&managerLogs), zapcore.InfoLevel)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel()),
		zap.RawZapOpts(uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, capture) }))))
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	k8s = env.Client
	// The simulator has a master account too: a Tenant signs tenants up whose admin URLs lead back to it.
	var simAddr string
	sim = simulator.New(simulator.Options{Tenants: map[string]string{tenantName: tenantToken}, Seed: 7, MasterToken: masterToken,
		PlainHTTP: true, AdminDomain: func(slug string) string { return simAddr + "/t/" + slug }})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	simURL = srv.URL
	simAddr = strings.TrimPrefix(srv.URL, "http://")
	if err := startManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopManager()
	return m.Run()
}

// startManager starts a manager with fresh caches, as after a restart.
func startManager() error {
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(kubeRequests.wrap)
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}}, nil, nil))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = SetupWithManager(ctx, mgr, Options{
		DriftCheckPeriod: time.Hour, OrphanBackoffInitial: 200 * time.Millisecond, OrphanBackoffMax: 5 * time.Second,
		RemoteQPS: 200, RemoteBurst: 200, SkipNameValidation: true, AllowPrivateAdminURLs: true, UsageReportPeriod: 2 * time.Second,
		// Every test namespace is a tenant of its own: past the default 100, metrics would say "other".
		MetricsMaxTenants: 1 << 20,
		// Waits that usually pass by themselves (a dependency being synced, deletions under way) are
		// quiet for 5s, not the default 30s: long enough for a product edit (its plans stay Synced), short
		// enough for the tests that wait for a deletion to say what it waits for.
		QuietWait: quietWait,
		// A 3scale installation whose wildcard domain is under installationDomain is served by the
		// simulator's tenant named by its spec.tenantName (TestInstallationIsTheThirdProviderAccount).
		InstallationAdminURL: func(tenantName, wildcardDomain string) string {
			if strings.HasSuffix(wildcardDomain, installationDomain) {
				return simURL + "/t/" + tenantName
			}
			return kit.InstallationAdminURL(tenantName, wildcardDomain)
		},
	})
	if err != nil {
		cancel()
		return err
	}
	stopMgr = cancel
	mgrDone = make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	return nil
}

func stopManager() {
	stopMgr()
	<-mgrDone
}

// logBuffer keeps what the manager logs; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// managerLogs is what the test manager logged, at Info and above.
var managerLogs logBuffer

func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// newNamespace creates a namespace for one test, with its own 3scale tenant in the simulator and the
// default provider-account Secret's contents (not created: tests choose when).
func newNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + fmt.Sprint(time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

func providerSecret(ns, name, adminURL, token string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"adminURL": adminURL, "token": token, "allowInsecureHTTP": "true"}}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// syncState reads an object and returns its sync state and the reason and message of that condition.
func syncState(t *testing.T, obj engine.Object) (state, reason, message string) {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		return "error: " + err.Error(), "", ""
	}
	st := obj.GetSyncStatus()
	for _, ct := range v1alpha1.SyncConditions {
		if c := meta.FindStatusCondition(st.Conditions, ct); c != nil && c.Status == metav1.ConditionTrue {
			return ct, c.Reason, c.Message
		}
	}
	return "", "", ""
}

// eventually polls cond until it returns "" (success) or the timeout passes, then fails with its last word.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = cond(); last == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not within %s: %s", timeout, last)
}

// waitState waits until every object is in the sync state given at its current generation.
func waitState(t *testing.T, want string, objs ...engine.Object) {
	t.Helper()
	eventually(t, waitTimeout, func() string {
		for _, o := range objs {
			state, reason, msg := syncState(t, o)
			if state != want || (want == v1alpha1.ConditionSynced && o.GetSyncStatus().ObservedGeneration != o.GetGeneration()) {
				return fmt.Sprintf("%T %s is %s (%s: %s), want %s", o, o.GetName(), state, reason, msg, want)
			}
		}
		return ""
	})
}

// waitGone waits until the objects no longer exist.
func waitGone(t *testing.T, objs ...client.Object) {
	t.Helper()
	eventually(t, waitTimeout, func() string {
		for _, o := range objs {
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o)
			if err == nil {
				return fmt.Sprintf("%T %s still exists (finalizers %v)", o, o.GetName(), o.GetFinalizers())
			}
			if !apierrors.IsNotFound(err) {
				return err.Error()
			}
		}
		return ""
	})
}

// tenantOf returns the simulator tenant of a test namespace, creating it: its admin URL and token.
func tenantOf(ns string) (adminURL, token string) {
	token = "token-" + ns
	sim.AddTenant(ns, token)
	return simURL + "/t/" + ns, token
}

// defaultSecret returns the namespace's threescale-provider-account Secret for its simulator tenant.
func defaultSecret(ns string) *corev1.Secret {
	adminURL, token := tenantOf(ns)
	return providerSecret(ns, v1alpha1.DefaultProviderAccountSecret, adminURL, token)
}

// remoteCalls returns the requests the simulator served for a tenant since the start.
// remoteDeletions lists a tenant's DELETE requests from the from-th write on, in the order 3scale
// answered them, as "kind code" ("applications 200"): kind is the last collection in the path template.
func remoteDeletions(tenant string, from int) []string {
	var out []string
	for _, w := range sim.Writes(tenant)[from:] {
		if w.Method != http.MethodDelete {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(w.Endpoint, ".json"), "/")
		kind := parts[len(parts)-1]
		if strings.HasPrefix(kind, "{") && len(parts) > 1 {
			kind = parts[len(parts)-2]
		}
		out = append(out, fmt.Sprintf("%s %d", kind, w.Code))
	}
	return out
}

// refusedCalls counts a tenant's calls answered 401 or 403 (a refused token).
func refusedCalls(tenant string) int {
	n := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == tenant && (c.Code == http.StatusUnauthorized || c.Code == http.StatusForbidden) {
			n += c.Count
		}
	}
	return n
}

func remoteCalls(tenant string) int {
	n := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == tenant {
			n += c.Count
		}
	}
	return n
}
