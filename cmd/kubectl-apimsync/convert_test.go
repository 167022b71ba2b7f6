package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/internal/convert"
	"github.com/apimsync/apimsync/test/testenv"
)

// TestConvertWritesAKustomizeDirectoryAndAReport: 3scale-operator's resources of the conversion's test
// inputs become a kustomize directory that builds, with the report printed and written.
func TestConvertWritesAKustomizeDirectoryAndAReport(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	out, err := run(t, "convert", "-f", filepath.Join(root, "internal/convert/testdata/products.yaml"),
		"-f", filepath.Join(root, "internal/convert/testdata/accounts.yaml"), "--out", dir)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"wrote " + dir, "findings", "dropped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output has no %q:\n%s", want, out)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.txt"))
	if err != nil || len(report) == 0 {
		t.Errorf("report.txt: %v", err)
	}
	plans, err := os.ReadFile(filepath.Join(dir, "applicationplans.yaml"))
	if err != nil || !strings.Contains(string(plans), "kind: ApplicationPlan") || !strings.Contains(string(plans), "productRef:") {
		t.Errorf("the embedded plans did not become ApplicationPlans: %v\n%s", err, plans)
	}
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil || strings.Contains(string(kustomization), "apimsync export") || !strings.Contains(string(kustomization), "kubectl apimsync convert") {
		t.Errorf("kustomization.yaml does not say it was written by kubectl apimsync convert: %v\n%s", err, kustomization)
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := testenv.Render(rel); err != nil || len(objs) == 0 {
		t.Errorf("the directory does not build with kustomize: %v", err)
	}
}

// TestConvertBadInput: an unreadable file, a file that is not YAML, an unknown kind of
// capabilities.3scale.net, no input, and a cluster without 3scale-operator: one line each, exit code 1.
func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"a missing file": {[]string{"-f", filepath.Join(dir, "nope.yaml")}, "cannot read"},
		"not YAML":       {[]string{"-f", write("bad.yaml", "kind: [\n")}, "is not YAML or JSON objects"},
		"an unknown kind": {[]string{"-f", write("kind.yaml", "apiVersion: capabilities.3scale.net/v1beta1\nkind: Produkt\nmetadata: {name: x}\n")},
			"unknown kind Produkt of capabilities.3scale.net"},
		"no input":                 {nil, "give either -f FILE|DIR or --from-cluster"},
		"no 3scale-operator there": {[]string{"--from-cluster"}, "are not installed in this cluster"},
	}
	for name, c := range cases {
		_, err := run(t, append(append([]string{"convert", "--out", filepath.Join(t.TempDir(), "out")}, c.args...), "-n", "default")...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || exitCode(err) != 1 {
			t.Errorf("%s: %v, want one line saying %q", name, err, c.want)
		}
	}
}

// legacyCluster is a cluster where 3scale-operator's ActiveDoc "petstore" in namespace legacy reads its
// document from the Secret "petstore-doc" (its only key: spec.yaml).
func legacyCluster(t *testing.T) client.Reader {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	for kind, version := range convert.SourceKinds() {
		mapper.Add(schema.GroupVersionKind{Group: convert.SourceGroup, Version: version, Kind: kind}, meta.RESTScopeNamespace)
	}
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	doc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": convert.SourceGroup + "/v1beta1", "kind": "ActiveDoc",
		"metadata": map[string]any{"name": "petstore", "namespace": "legacy"},
		"spec":     map[string]any{"name": "Petstore", "activeDocOpenAPIRef": map[string]any{"secretRef": map[string]any{"name": "petstore-doc"}}},
	}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "legacy", Name: "petstore-doc"},
		Data: map[string][]byte{"spec.yaml": []byte("openapi: 3.0.0\ninfo: {title: Petstore, version: '1'}\npaths: {}\n")}}
	return fake.NewClientBuilder().WithScheme(scheme()).WithRESTMapper(mapper).WithObjects(doc, secret).Build()
}

// TestConvertFromClusterReadsTheSecretsItNeeds: --from-cluster reads the Secret that holds an ActiveDoc's
// document (its key is named, not guessed), and writes the objects without the namespace they were read
// from, so that `kubectl apply -n <other>` takes them.
func TestConvertFromClusterReadsTheSecretsItNeeds(t *testing.T) {
	cluster := legacyCluster(t)
	defer func(was func(*genericclioptions.ConfigFlags) (client.Reader, string, error)) { convertCluster = was }(convertCluster)
	convertCluster = func(flags *genericclioptions.ConfigFlags) (client.Reader, string, error) {
		return cluster, *flags.Namespace, nil
	}
	var out bytes.Buffer
	convertTo := func(args ...string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "out")
		flags := genericclioptions.NewConfigFlags(true)
		cmd := newConvertCommand(flags, genericiooptions.IOStreams{Out: &out, ErrOut: &out})
		flags.AddFlags(cmd.PersistentFlags())
		cmd.SetArgs(append([]string{"--from-cluster", "--out", dir}, args...))
		cmd.SetContext(context.Background())
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		return dir
	}
	dir := convertTo("-n", "legacy")
	docs, err := os.ReadFile(filepath.Join(dir, "activedocs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docs), "key: spec.yaml") {
		t.Errorf("the ActiveDoc does not name the Secret's key spec.yaml:\n%s", docs)
	}
	if strings.Contains(string(docs), "namespace:") {
		t.Errorf("the ActiveDoc keeps a namespace:\n%s", docs)
	}
	if report, _ := os.ReadFile(filepath.Join(dir, "report.txt")); strings.Contains(string(report), "is not in the input") {
		t.Errorf("the report says the Secret was not read:\n%s", report)
	}
	if strings.Contains(out.String(), "spec.yaml: |") || strings.Contains(out.String(), "paths: {}") {
		t.Errorf("the Secret's content is printed:\n%s", out.String())
	}
}

// TestConvertWritesNoNamespaceUnlessAsked: files of one namespace convert to objects without one (the
// report says so); with --namespace, every object is in the namespace it names.
func TestConvertWritesNoNamespaceUnlessAsked(t *testing.T) {
	in := filepath.Join(t.TempDir(), "backend.yaml")
	if err := os.WriteFile(in, []byte("apiVersion: capabilities.3scale.net/v1beta1\nkind: Backend\nmetadata: {name: pets, namespace: legacy}\n"+
		"spec: {name: Pets, systemName: pets, privateBaseURL: 'https://pets.internal'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{{nil, ""}, {[]string{"-n", "team-b"}, "team-b"}} {
		dir := filepath.Join(t.TempDir(), "out")
		out, err := run(t, append([]string{"convert", "-f", in, "--out", dir}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		backends, err := os.ReadFile(filepath.Join(dir, "backends.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, line := range strings.Split(string(backends), "\n") {
			if ns, ok := strings.CutPrefix(strings.TrimSpace(line), "namespace: "); ok {
				got = ns
			}
		}
		if got != c.want {
			t.Errorf("convert %v: namespace %q, want %q:\n%s", c.args, got, c.want, backends)
		}
	}
}
