// Command demo is `make demo`: it starts a local control plane (the same kube-apiserver + etcd as the
// tests), the 3scale simulator with a demo tenant, and the apimsync manager; applies samples/ and shows
// the objects converge in a live table; then waits for Ctrl-C and shuts everything down.
//
// DEMO_EXIT_WHEN_SYNCED=1 exits 0 as soon as every sample object is Synced, non-zero after five minutes.
// DEMO_METRICS_ADDR=127.0.0.1:8080 serves the manager's metrics there (plain HTTP), for a local Prometheus.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

const (
	demoNamespace = "apimsync-demo"
	demoTenant    = "demo"
	demoToken     = "demo-token"
	timeout       = 5 * time.Minute
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	exitWhenSynced := os.Getenv("DEMO_EXIT_WHEN_SYNCED") == "1"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	started := time.Now()

	fmt.Println("starting a local control plane (kube-apiserver + etcd)...")
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("stopping the control plane...")
		_ = env.Stop()
	}()
	dir, err := os.MkdirTemp("", "apimsync-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig, err := writeKubeconfig(env, dir)
	if err != nil {
		return err
	}

	sim := simulator.New(simulator.Options{Tenants: map[string]string{demoTenant: demoToken}, Seed: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	simURL := "http://" + ln.Addr().String()
	fmt.Printf("3scale simulator at %s (tenant %q)\n", simURL, demoTenant)

	// The manager serves the validating webhook, which the control plane calls for the demo's namespace.
	mgr, err := ctrl.NewManager(env.Config, controllers.ManagerOptions(ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: metricsAddress()},
		WebhookServer: webhook.NewServer(env.WebhookOptions())}, nil, nil))
	if err != nil {
		return err
	}
	if err := controllers.SetupWithManager(ctx, mgr, controllers.Options{DriftCheckPeriod: 10 * time.Minute, AllowPrivateAdminURLs: true, Webhook: true}); err != nil {
		return err
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() { stopMgr(); <-mgrDone }()

	objs, err := renderSamples(simURL)
	if err != nil {
		return err
	}
	if err := apply(ctx, env.Client, objs); err != nil {
		return err
	}
	fmt.Printf("applied %d objects from samples/ into namespace %s, in reverse order (GitOps applies in any order: what waits for another object is not refused)\n\n", len(objs), demoNamespace)

	deadline := time.After(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	interactive := !exitWhenSynced && isTerminal()
	for {
		rows, allSynced, err := table(ctx, env.Client)
		if err != nil {
			return err
		}
		if interactive {
			fmt.Print("\033[H\033[2J")
		}
		if interactive || allSynced {
			printTable(rows)
		}
		if allSynced {
			st := sim.Stats()
			fmt.Printf("\nall %d objects Synced in %.1fs, with %d calls to 3scale (%d writes)\n", len(rows), time.Since(started).Seconds(), st.Total, st.Writes)
			break
		}
		select {
		case <-ctx.Done():
			return errors.New("interrupted before everything was Synced")
		case <-deadline:
			printTable(rows)
			return fmt.Errorf("not every object was Synced within %s (see the table above)", timeout)
		case <-tick.C:
		}
	}
	if err := showRefusal(ctx, env.Client, objs); err != nil {
		return err
	}
	if exitWhenSynced {
		return nil
	}
	fmt.Printf(`
Look around:
  export KUBECONFIG=%s
  kubectl get apimsync -n %s
  kubectl describe product -n %s
  curl -s %s/__sim/stats            # remote calls made so far
  curl -s -u :%s %s/admin/api/services.json
Edit or delete objects and watch 3scale follow. Ctrl-C stops everything.
`, kubeconfig, demoNamespace, demoNamespace, simURL, demoToken, simURL)
	<-ctx.Done()
	fmt.Println("\nshutting down...")
	return nil
}

// metricsAddress is where the demo's manager serves its metrics: DEMO_METRICS_ADDR (127.0.0.1:8080, for
// a local Prometheus and the Grafana dashboard), or nowhere.
func metricsAddress() string {
	if a := os.Getenv("DEMO_METRICS_ADDR"); a != "" {
		return a
	}
	return "0"
}

// writeKubeconfig writes an admin kubeconfig for the control plane.
func writeKubeconfig(env *testenv.Env, dir string) (string, error) {
	user, err := env.Environment.AddUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	if _, err := clientcmd.Load(raw); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, raw, 0o600)
}

// renderSamples builds samples/ with kustomize and points the provider-account Secret at the simulator.
func renderSamples(simURL string) ([]*unstructured.Unstructured, error) {
	objs, err := testenv.Render("samples")
	if err != nil {
		return nil, err
	}
	for _, u := range objs {
		u.SetNamespace(demoNamespace)
		if u.GetKind() == "Secret" && u.GetName() == v1alpha1.DefaultProviderAccountSecret {
			u.Object["stringData"] = map[string]any{"adminURL": simURL, "token": demoToken, "allowInsecureHTTP": "true"}
			delete(u.Object, "data")
		}
	}
	return objs, nil
}

// apply creates the demo's namespace, whose objects go through the validating webhook, and objs in it in
// reverse order: a plan before its product, an application before its account.
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace, Labels: map[string]string{testenv.AdmissionLabel: "true"}}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	for _, o := range slices.Backward(objs) {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("cannot create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// showRefusal applies a copy of the first sample ApplicationPlan whose pricing rules overlap, which can
// never work, and shows the webhook refuse it before it is stored; an error when it is not refused.
func showRefusal(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	i := slices.IndexFunc(objs, func(u *unstructured.Unstructured) bool { return u.GetKind() == "ApplicationPlan" })
	if i < 0 {
		return errors.New("samples/ has no ApplicationPlan to show a refusal with")
	}
	bad := objs[i].DeepCopy()
	bad.SetName(bad.GetName() + "-overlapping")
	bad.SetResourceVersion("")
	_ = unstructured.SetNestedField(bad.Object, bad.GetName(), "spec", "systemName")
	rule := map[string]any{"from": int64(1), "to": int64(100), "pricePerUnit": "0.10", "metricMethodRef": map[string]any{"systemName": "hits"}}
	overlapping := map[string]any{"from": int64(50), "to": int64(500), "pricePerUnit": "0.05", "metricMethodRef": map[string]any{"systemName": "hits"}}
	_ = unstructured.SetNestedSlice(bad.Object, []any{rule, overlapping}, "spec", "pricingRules")
	fmt.Printf("\napplying ApplicationPlan %s, whose pricing rules on hits overlap (1-100 and 50-500):\n", bad.GetName())
	err := c.Create(ctx, bad)
	if err == nil {
		return fmt.Errorf("the webhook let ApplicationPlan %s through", bad.GetName())
	}
	fmt.Printf("  refused at apply time, nothing stored: %v\n", err)
	return nil
}

type row struct{ kind, name, state, id, message string }

// table lists the sample objects with their sync state; allSynced is true when every one is Synced
// at its current generation.
func table(ctx context.Context, c client.Client) ([]row, bool, error) {
	var rows []row
	all := true
	for _, l := range controllers.ObjectLists() {
		if err := c.List(ctx, l, client.InNamespace(demoNamespace)); err != nil {
			return nil, false, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, false, err
		}
		for _, it := range items {
			obj, ok := it.(interface {
				client.Object
				v1alpha1.SyncedObject
			})
			if !ok {
				continue
			}
			st := obj.GetSyncStatus()
			state, msg := "Pending", ""
			if r := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); r != nil {
				state, msg = r.Reason, r.Message
			}
			idText := "-"
			if id := obj.GetRemoteID(); id != 0 {
				idText = fmt.Sprint(id)
			}
			all = all && state == v1alpha1.ConditionSynced && st.ObservedGeneration == obj.GetGeneration()
			kind := fmt.Sprintf("%T", obj)
			rows = append(rows, row{kind[strings.LastIndex(kind, ".")+1:], obj.GetName(), state, idText, msg})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].kind < rows[j].kind })
	return rows, all && len(rows) > 0, nil
}

func printTable(rows []row) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tSTATE\tREMOTE ID\tMESSAGE")
	for _, r := range rows {
		msg := r.message
		if len(msg) > 90 {
			msg = msg[:87] + "..."
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.kind, r.name, r.state, r.id, strings.ReplaceAll(msg, "\n", " "))
	}
	_ = w.Flush()
}

func isTerminal() bool {
	fi, err := os.Stdout.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
