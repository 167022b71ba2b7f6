// Package helm checks the Helm chart charts/apimsync against config/: rendered with Helm's engine, its
// defaults must give exactly the objects of config/default, and with watchNamespaces those of
// config/namespaced (the Namespace object aside: Helm installs into a release namespace), and its
// PrometheusRule that of config/prometheus. A change to
// config/ that the chart does not follow, or the other way round, fails here. The chart is also linted
// with Helm's linter, and what it renders is applied (dry run) to the test kube-apiserver.
package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/test/testenv"
)

const releaseNamespace = "apimsync-system"

var (
	k8s     client.Client
	testEnv *testenv.Env
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(env *testenv.Env) { k8s, testEnv = env.Client, env }))
}

func chartDir(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "charts", "apimsync")
}

// renderChart renders the chart with values as `helm template` does, CRDs included.
func renderChart(t *testing.T, values map[string]any) map[string]map[string]any {
	t.Helper()
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "apimsync", Namespace: releaseNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	add := func(name string, raw []byte) {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			obj := map[string]any{}
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(obj) == 0 {
				continue
			}
			obj = normalize(t, obj)
			k := key(&unstructured.Unstructured{Object: obj})
			if _, dup := out[k]; dup {
				t.Errorf("the chart renders %s twice", k)
			}
			out[k] = obj
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") {
			add(name, []byte(files[name]))
		}
	}
	for _, crd := range ch.CRDObjects() {
		add(crd.Filename, crd.File.Data)
	}
	return out
}

// renderKustomize renders config/<dir>, without its Namespace objects.
func renderKustomize(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	objs, err := testenv.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			continue
		}
		out[key(u)] = normalize(t, u.Object)
	}
	return out
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// normalize gives both renderings the same value types (a JSON round trip).
func normalize(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func compare(t *testing.T, what string, helm, kustomize map[string]map[string]any) {
	t.Helper()
	if len(kustomize) == 0 {
		t.Fatalf("%s renders nothing", what)
	}
	for k, want := range kustomize {
		got, ok := helm[k]
		if !ok {
			t.Errorf("the chart does not render %s, which %s has", k, what)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s differs between %s and the chart (-kustomize +helm):\n%s", k, what, d)
		}
	}
	for k := range helm {
		if _, ok := kustomize[k]; !ok {
			t.Errorf("the chart renders %s, which %s does not have", k, what)
		}
	}
}

// keepAnnotation is what keeps the chart's CRDs on helm uninstall.
const keepAnnotation = "helm.sh/resource-policy"

// withoutKeep returns objs with the CRDs' keepAnnotation removed (config/ has none: kubectl deletes what
// it is told to).
func withoutKeep(objs map[string]map[string]any) map[string]map[string]any {
	for _, obj := range objs {
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		a := u.GetAnnotations()
		delete(a, keepAnnotation)
		u.SetAnnotations(a)
	}
	return objs
}

// TestChartMatchesDefaultConfig: the chart's defaults are config/default.
func TestChartMatchesDefaultConfig(t *testing.T) {
	compare(t, "config/default", withoutKeep(renderChart(t, nil)), renderKustomize(t, "config/default"))
}

// TestChartMatchesNamespacedConfig: the chart with watchNamespaces is config/namespaced.
func TestChartMatchesNamespacedConfig(t *testing.T) {
	values := map[string]any{"watchNamespaces": []any{"apimsync-workloads"}}
	compare(t, "config/namespaced", withoutKeep(renderChart(t, values)), renderKustomize(t, "config/namespaced"))
}

// TestChartCRDs: the chart renders every CRD of config/crd as a template (helm upgrade installs
// and upgrades templates, not crds/), each kept on uninstall; crds.install: false renders none, and the
// chart's crds/ folder is empty (Helm would install it on install only, and never upgrade it).
func TestChartCRDs(t *testing.T) {
	objs := renderChart(t, nil)
	for _, name := range crdNames(t) {
		crd := objs["CustomResourceDefinition /"+name]
		if crd == nil {
			t.Errorf("the chart does not render the CRD %s", name)
			continue
		}
		if a := (&unstructured.Unstructured{Object: crd}).GetAnnotations(); a[keepAnnotation] != "keep" {
			t.Errorf("CRD %s: annotations %v, want %s: keep", name, a, keepAnnotation)
		}
	}
	for k := range renderChart(t, map[string]any{"crds": map[string]any{"install": false}}) {
		if strings.HasPrefix(k, "CustomResourceDefinition ") {
			t.Errorf("crds.install false renders %s", k)
		}
	}
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if crds := ch.CRDObjects(); len(crds) != 0 {
		t.Errorf("the chart has %d files in crds/ (%s...): helm would install them on install only; make manifests copies the CRDs to files/crds", len(crds), crds[0].Filename)
	}
}

// TestChartValues: the image and the namespaces given as values reach the Deployment and the Roles, and
// applicationCredentialsNamespaces limits where Secret delete is granted.
func TestChartValues(t *testing.T) {
	objs := renderChart(t, map[string]any{
		"image":                            map[string]any{"repository": "registry.example.test/apimsync", "tag": "v1.2.3"},
		"watchNamespaces":                  []any{"team-a", "team-b"},
		"applicationCredentialsNamespaces": []any{"team-b"},
	})
	deploy := &unstructured.Unstructured{Object: objs["Deployment "+releaseNamespace+"/apimsync-manager"]}
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("the Deployment has %d containers", len(containers))
	}
	c := containers[0].(map[string]any)
	if c["image"] != "registry.example.test/apimsync:v1.2.3" {
		t.Errorf("image %v", c["image"])
	}
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	if !strings.Contains(strings.Join(args, " "), "--watch-namespaces=team-a,team-b") {
		t.Errorf("args %q lack --watch-namespaces=team-a,team-b", args)
	}
	for _, k := range []string{"Role team-a/apimsync-manager", "Role team-b/apimsync-manager", "Role team-b/apimsync-application-credentials",
		"RoleBinding team-a/apimsync-manager", "RoleBinding team-b/apimsync-application-credentials"} {
		if objs[k] == nil {
			t.Errorf("the chart does not render %s", k)
		}
	}
	for _, k := range []string{"Role team-a/apimsync-application-credentials", "ClusterRoleBinding /apimsync-manager", "ClusterRole /apimsync-manager"} {
		if objs[k] != nil {
			t.Errorf("the chart renders %s", k)
		}
	}
}

// TestChartLints runs Helm's linter on the chart, cluster-wide and namespaced.
func TestChartLints(t *testing.T) {
	for _, values := range []map[string]any{nil, {"watchNamespaces": []any{"apimsync-workloads"}}, allOptions} {
		linter := lint.All(chartDir(t), values, releaseNamespace, false)
		for _, m := range linter.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("helm lint (values %v): %s", values, m)
			}
		}
		if linter.HighestSeverity > support.InfoSev {
			t.Errorf("helm lint (values %v): highest severity %d", values, linter.HighestSeverity)
		}
	}
}

// allOptions turns every optional part of the chart on.
var allOptions = map[string]any{
	"leaderElection":     false,
	"watchLabelSelector": "apimsync.io/shard=a",
	"pacing":             map[string]any{"remoteQPS": 5, "maxRetryAfter": "2m", "remoteRetries": "0", "kubeAPIQPS": 100},
	"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "interval": "30s", "labels": map[string]any{"release": "prom"},
		"prometheusServiceAccount": map[string]any{"name": "prometheus-k8s", "namespace": "monitoring"}}},
	"prometheusRule":   map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}},
	"grafanaDashboard": map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "apimsync"}},
	"webhook":          map[string]any{"certManager": map[string]any{"enabled": true}},
}

// TestChartOptionalValues: leader election, the label selector, pacing flags, the ServiceMonitor and the
// PrometheusRule follow their values; the PrometheusRule is config/prometheus's, and both monitoring
// objects decode strictly as the Prometheus Operator's types.
func TestChartOptionalValues(t *testing.T) {
	objs := renderChart(t, allOptions)
	deploy := &unstructured.Unstructured{Object: objs["Deployment "+releaseNamespace+"/apimsync-manager"]}
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	want := []string{"--metrics-bind-address=:8443", "--metrics-secure", "--health-probe-bind-address=:8081", "--drift-check-period=30m",
		"--webhook-port=9443", "--watch-label-selector=apimsync.io/shard=a", "--kube-api-qps=100", "--max-retry-after=2m", "--remote-qps=5", "--remote-retries=0"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if objs["Role "+releaseNamespace+"/apimsync-leader-election"] != nil {
		t.Errorf("leader election off still renders its Role")
	}

	sm := &monitoringv1.ServiceMonitor{}
	strictly(t, objs["ServiceMonitor "+releaseNamespace+"/apimsync"], sm)
	svc := objs["Service "+releaseNamespace+"/apimsync-metrics"]
	ports, _, _ := unstructured.NestedSlice(svc, "spec", "ports")
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != ports[0].(map[string]any)["name"] || sm.Spec.Endpoints[0].Scheme == nil ||
		string(*sm.Spec.Endpoints[0].Scheme) != "https" || sm.Spec.Endpoints[0].Interval != "30s" || sm.Labels["release"] != "prom" {
		t.Errorf("ServiceMonitor %+v does not scrape the metrics Service's port over HTTPS every 30s with the release label", sm)
	}
	binding := &rbacv1.ClusterRoleBinding{}
	strictly(t, objs["ClusterRoleBinding /apimsync-metrics-reader"], binding)
	if binding.RoleRef.Name != "apimsync-metrics-reader" || len(binding.Subjects) != 1 || binding.Subjects[0].Name != "prometheus-k8s" || binding.Subjects[0].Namespace != "monitoring" {
		t.Errorf("metrics reader binding %+v", binding)
	}

	rule := &monitoringv1.PrometheusRule{}
	strictly(t, objs["PrometheusRule "+releaseNamespace+"/apimsync"], rule)
	if rule.Labels["release"] != "prom" || rule.Labels["app.kubernetes.io/name"] != "apimsync" {
		t.Errorf("PrometheusRule labels %v", rule.Labels)
	}
	fromConfig := renderKustomize(t, "config/prometheus")["PrometheusRule "+releaseNamespace+"/apimsync"]
	if fromConfig == nil {
		t.Fatal("config/prometheus renders no PrometheusRule apimsync")
	}
	got := objs["PrometheusRule "+releaseNamespace+"/apimsync"]
	if diff := cmp.Diff(fromConfig["spec"], got["spec"]); diff != "" {
		t.Errorf("the chart's PrometheusRule is not config/prometheus's (run make manifests) (-config +chart):\n%s", diff)
	}

	dash := &corev1.ConfigMap{}
	strictly(t, objs["ConfigMap "+releaseNamespace+"/apimsync-grafana-dashboard"], dash)
	config, err := os.ReadFile(filepath.Join(chartDir(t), "..", "..", "config", "grafana", "apimsync-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dash.Labels["grafana_dashboard"] != "1" || dash.Annotations["grafana_folder"] != "apimsync" || strings.TrimSpace(dash.Data["apimsync.json"]) != strings.TrimSpace(string(config)) {
		t.Errorf("the dashboard ConfigMap (labels %v, annotations %v) does not carry config/grafana's dashboard with the sidecar's label (run make manifests)", dash.Labels, dash.Annotations)
	}

	for _, k := range []string{"ServiceMonitor " + releaseNamespace + "/apimsync", "PrometheusRule " + releaseNamespace + "/apimsync", "ClusterRoleBinding /apimsync-metrics-reader",
		"ConfigMap " + releaseNamespace + "/apimsync-grafana-dashboard"} {
		if renderChart(t, nil)[k] != nil {
			t.Errorf("the defaults render %s", k)
		}
	}
	wantCertManager(t, objs)
}

// wantCertManager: with webhook.certManager.enabled, cert-manager issues the webhook's certificate into
// the Secret the manager mounts (from a self-signed Issuer of the chart's when no issuerRef is given) and
// injects its CA; the manager neither makes one nor holds the rights to; webhook.enabled false renders no
// webhook at all.
func wantCertManager(t *testing.T, objs map[string]map[string]any) {
	t.Helper()
	cert := objs["Certificate "+releaseNamespace+"/apimsync-webhook-cert"]
	secretName, _, _ := unstructured.NestedString(cert, "spec", "secretName")
	issuer, _, _ := unstructured.NestedString(cert, "spec", "issuerRef", "name")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert, "spec", "dnsNames")
	if secretName != "apimsync-webhook-cert" || issuer != "apimsync-selfsigned" || objs["Issuer "+releaseNamespace+"/apimsync-selfsigned"] == nil ||
		!slices.Contains(dnsNames, "apimsync-webhook."+releaseNamespace+".svc") {
		t.Errorf("Certificate %v: want secret apimsync-webhook-cert for apimsync-webhook's DNS name from Issuer apimsync-selfsigned", cert)
	}
	hook := &unstructured.Unstructured{Object: objs["ValidatingWebhookConfiguration /apimsync-validating"]}
	if got := hook.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != releaseNamespace+"/apimsync-webhook-cert" {
		t.Errorf("the webhook configuration's CA is not injected by cert-manager: %q", got)
	}
	for _, k := range []string{"Secret " + releaseNamespace + "/apimsync-webhook-cert", "ClusterRole /apimsync-webhook", "Role " + releaseNamespace + "/apimsync-webhook-cert"} {
		if objs[k] != nil {
			t.Errorf("with cert-manager, the chart still renders %s", k)
		}
	}
	withIssuer := renderChart(t, map[string]any{"webhook": map[string]any{"certManager": map[string]any{"enabled": true, "issuerRef": map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"}}}})
	kind, _, _ := unstructured.NestedString(withIssuer["Certificate "+releaseNamespace+"/apimsync-webhook-cert"], "spec", "issuerRef", "kind")
	if kind != "ClusterIssuer" || withIssuer["Issuer "+releaseNamespace+"/apimsync-selfsigned"] != nil {
		t.Errorf("issuerRef is not the Certificate's issuer, or the self-signed Issuer is still rendered")
	}
	for k := range renderChart(t, map[string]any{"webhook": map[string]any{"enabled": false}}) {
		if strings.Contains(k, "webhook") || strings.Contains(k, "Webhook") {
			t.Errorf("webhook.enabled false renders %s", k)
		}
	}
}

// strictly decodes a rendered object into typed, failing on any field the type does not have.
func strictly(t *testing.T, obj map[string]any, typed any) {
	t.Helper()
	if obj == nil {
		t.Fatalf("not rendered: %T", typed)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Errorf("%T: %v", typed, err)
	}
}

// TestChartAppliesServerSide: what the chart renders, with its defaults, namespaced, and with every
// option on, is accepted by the test kube-apiserver (server-side apply, dry run). The Prometheus
// Operator's kinds are left out (the test apiserver has no such CRDs; TestChartOptionalValues decodes
// them strictly as the operator's own Go types instead).
func TestChartAppliesServerSide(t *testing.T) {
	ctx := context.Background()
	for _, ns := range []string{releaseNamespace, "apimsync-workloads"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for name, values := range map[string]map[string]any{"defaults": nil, "namespaced": {"watchNamespaces": []any{"apimsync-workloads"}}, "all options": allOptions} {
		applied := 0
		for k, obj := range renderChart(t, values) {
			u := &unstructured.Unstructured{Object: obj}
			if g := u.GroupVersionKind().Group; g == "monitoring.coreos.com" || g == "cert-manager.io" {
				continue
			}
			if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("apimsync-test"), client.ForceOwnership, client.DryRunAll); err != nil {
				t.Errorf("%s: %s: %v", name, k, err)
			}
			applied++
		}
		if applied < 10 {
			t.Errorf("%s: only %d objects applied", name, applied)
		}
	}
}
