// Package harness is what the controllers' envtest suites share: a real kube-apiserver and etcd
// (test/testenv), the simulator as 3scale (test/simulator), the manager wired as cmd/manager wires it, the
// helpers that create, edit, wait for and delete objects, the fixtures (a petstore Product with its pets
// Backend and plans, developer accounts, applications), and the counters of what the manager asked of
// 3scale and of the API server.
//
// Each package of tests that imports it (controllers' top for what spans kinds, each kind's room under
// controllers/kinds/ for its own, controllers/openapi) has one control plane and one manager for its
// tests: its suite_test.go's TestMain calls Main. Every test gets its own namespace (NewNamespace) and its
// own simulated 3scale tenant (TenantOf, DefaultSecret), so the tests of one package do not see each other.
//
// It is test support: the manager never imports it, and it is internal to controllers/.
package harness

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// What Main starts: the control plane, its client, the simulator and its URL.
var (
	// Env is the control plane (a kube-apiserver and etcd).
	Env *testenv.Env
	// K8s is a client of the control plane, with apimsync's types in its scheme.
	K8s client.Client
	// Sim is the simulated 3scale; SimURL its address (tenant t's admin URL is SimURL/t/t).
	Sim    *simulator.Simulator
	SimURL string

	// FluxSourceHost is the test manager's Options.FluxSourceHost (empty: the default): a suite whose
	// tests play Flux's source-controller (controllers/openapi) sets it to its server's host before Main.
	FluxSourceHost string

	stopMgr context.CancelFunc
	mgrDone chan error
)

const (
	// TenantName is the simulator's first tenant; TenantToken its access token.
	TenantName  = "acme"
	TenantToken = "acme-token"
	// MasterToken is the simulator's master access token.
	MasterToken = "master-token"
	// WaitTimeout bounds every wait for a state.
	WaitTimeout = 60 * time.Second
	// QuietWait is the test manager's --quiet-wait.
	QuietWait = 5 * time.Second
)

// InstallationDomain ends the wildcard domains of the tests' 3scale installations, whose admin URLs the
// test manager points at the simulator.
const InstallationDomain = ".apps.installation.test"

// Main starts the control plane, the simulator and a manager, runs the package's tests and stops them:
// a suite's TestMain is os.Exit(harness.Main(m)).
func Main(m *testing.M) int {
	testenv.ParseTestFlags()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which builds the control plane")
		return 1
	}
	// Everything the manager logs at Info and above is also kept in ManagerLogs, for the tests that check
	// that no credential is ever logged.
	capture := zapcore.NewCore(zapcore.NewJSONEncoder(uberzap.NewDevelopmentEncoderConfig()), zapcore.AddSync(&ManagerLogs), zapcore.InfoLevel)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel()),
		zap.RawZapOpts(uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, capture) }))))
	var err error
	if Env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = Env.Stop() }()
	K8s = Env.Client
	// The simulator has a master account too: a Tenant signs tenants up whose admin URLs lead back to it.
	var simAddr string
	Sim = simulator.New(simulator.Options{Tenants: map[string]string{TenantName: TenantToken}, Seed: 7, MasterToken: MasterToken,
		PlainHTTP: true, AdminDomain: func(slug string) string { return simAddr + "/t/" + slug }})
	srv := httptest.NewServer(Sim)
	defer srv.Close()
	SimURL = srv.URL
	simAddr = strings.TrimPrefix(srv.URL, "http://")
	if err := StartManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer StopManager()
	return m.Run()
}

// StartManager starts a manager with fresh caches, as after a restart.
func StartManager() error {
	cfg := rest.CopyConfig(Env.Config)
	cfg.Wrap(KubeRequests.Wrap)
	mgr, err := ctrl.NewManager(cfg, controllers.ManagerOptions(ctrl.Options{Scheme: Env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(Env.WebhookOptions())}, nil, nil))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = controllers.SetupWithManager(ctx, mgr, controllers.Options{
		DriftCheckPeriod: time.Hour, OrphanBackoffInitial: 200 * time.Millisecond, OrphanBackoffMax: 5 * time.Second,
		RemoteQPS: 200, RemoteBurst: 200, SkipNameValidation: true, AllowPrivateAdminURLs: true, UsageReportPeriod: 2 * time.Second,
		// The validating webhook, which the kube-apiserver calls for the namespaces of NewAdmissionNamespace.
		Webhook: true,
		// Every test namespace is a tenant of its own: past the default 100, metrics would say "other".
		MetricsMaxTenants: 1 << 20,
		// Waits that usually pass by themselves (a dependency being synced, deletions under way) are
		// quiet for 5s, not the default 30s: long enough for a product edit (its plans stay Synced), short
		// enough for the tests that wait for a deletion to say what it waits for.
		QuietWait: QuietWait,
		// The suite's stand-in for Flux's source-controller, if it has one.
		FluxSourceHost: FluxSourceHost,
		// A 3scale installation whose wildcard domain is under InstallationDomain is served by the
		// simulator's tenant named by its spec.tenantName (TestInstallationIsTheThirdProviderAccount).
		InstallationAdminURL: func(tenantName, wildcardDomain string) string {
			if strings.HasSuffix(wildcardDomain, InstallationDomain) {
				return SimURL + "/t/" + tenantName
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

// StopManager stops the manager StartManager started and waits until it has stopped.
func StopManager() {
	stopMgr()
	<-mgrDone
}

// LogBuffer keeps what the manager logs; safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ManagerLogs is what the test manager logged, at Info and above.
var ManagerLogs LogBuffer

// zapLevel is the manager's log level on the terminal: errors, or everything with TEST_VERBOSE set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
