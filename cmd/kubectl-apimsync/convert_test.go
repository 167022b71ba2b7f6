package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
