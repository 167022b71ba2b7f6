// Package helm checks the Helm chart charts/apimsync against config/: rendered with Helm's engine, its
// defaults must give exactly the objects of config/default, and with watchNamespaces those of
// config/namespaced (the Namespace object aside: Helm installs into a release namespace). A change to
// config/ that the chart does not follow, or the other way round, fails here. The chart is also linted
// with Helm's linter.
package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/apimsync/apimsync/test/testenv"
)

const releaseNamespace = "apimsync-system"

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

// TestChartMatchesDefaultConfig: the chart's defaults are config/default.
func TestChartMatchesDefaultConfig(t *testing.T) {
	compare(t, "config/default", renderChart(t, nil), renderKustomize(t, "config/default"))
}

// TestChartMatchesNamespacedConfig: the chart with watchNamespaces is config/namespaced.
func TestChartMatchesNamespacedConfig(t *testing.T) {
	values := map[string]any{"watchNamespaces": []any{"apimsync-workloads"}}
	compare(t, "config/namespaced", renderChart(t, values), renderKustomize(t, "config/namespaced"))
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
	for _, values := range []map[string]any{nil, {"watchNamespaces": []any{"apimsync-workloads"}}} {
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
