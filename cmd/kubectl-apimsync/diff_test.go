package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/test/simulator"
)

const petsFile = `apiVersion: capabilities.apimsync.io/v1alpha1
kind: Backend
metadata:
  name: pets
spec:
  name: Pets
  systemName: pets
  description: DESCRIPTION
  privateBaseURL: https://pets.internal
`

// TestDiffCommand: a resource 3scale lacks is a create (exit 1); one that matches 3scale is nothing
// (exit 0); an edit lists its write (exit 1); an unknown kind is an error (exit 2). 3scale gets no write.
func TestDiffCommand(t *testing.T) {
	nsName, c, sim := diffNamespace(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}
	dir := t.TempDir()
	file := func(description string) string {
		p := filepath.Join(dir, "pets.yaml")
		if err := os.WriteFile(p, []byte(strings.Replace(petsFile, "DESCRIPTION", description, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writes := func() int { return len(sim.Writes("acme")) }

	out, err := run(t, "diff", "-n", ns.Name, "-f", file("The pets"))
	if exitCode(err) != 1 || !strings.Contains(out, `+ Backend/pets: create Backend "pets"`) {
		t.Errorf("a backend 3scale lacks: exit %d (%v)\n%s", exitCode(err), err, out)
	}

	desc := "The pets"
	if _, err := c.CreateBackend(context.Background(), tsclient.BackendParams{Name: "Pets", SystemName: "pets", Description: &desc, PrivateEndpoint: "https://pets.internal"}); err != nil {
		t.Fatal(err)
	}
	before := writes()
	out, err = run(t, "diff", "-n", ns.Name, "-f", file("The pets"))
	if err != nil || !strings.Contains(out, "= Backend/pets") {
		t.Errorf("a backend as 3scale has it: %v\n%s", err, out)
	}
	out, err = run(t, "diff", "-n", ns.Name, "-f", file("Pets, described"))
	if exitCode(err) != 1 || !strings.Contains(out, "~ Backend/pets") || !strings.Contains(out, "PUT /admin/api/backend_apis/{id}.json") ||
		!strings.Contains(out, "description=Pets, described") {
		t.Errorf("an edit: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	if got := writes() - before; got != 0 {
		t.Errorf("diff wrote %d times to 3scale", got)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: capabilities.apimsync.io/v1alpha1\nkind: Backendd\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "diff", "-n", ns.Name, "-f", other); exitCode(err) != 2 || !strings.Contains(err.Error(), "unknown kind Backendd") {
		t.Errorf("an unknown kind: exit %d, %v", exitCode(err), err)
	}
}

// TestDiffExitStatus: an object that would be Invalid or wait (Orphan) exits 3, whatever else would
// change; plans that wait only for the Product the same files create are no wait (">", exit 1); a bad
// flag or argument is an error (2), not a change (1).
func TestDiffExitStatus(t *testing.T) {
	ns, _, sim := diffNamespace(t)
	const product = `apiVersion: capabilities.apimsync.io/v1alpha1
kind: Product
metadata: {name: shop}
spec: {name: Shop, systemName: shop, deployment: {apicastHosted: {}}, authentication: {userKey: {}}}
`
	const plan = `apiVersion: capabilities.apimsync.io/v1alpha1
kind: ApplicationPlan
metadata: {name: gold}
spec: {productRef: PRODUCT, name: Gold}
`
	const invalidDoc = `apiVersion: capabilities.apimsync.io/v1alpha1
kind: ActiveDoc
metadata: {name: pets-doc}
spec: {name: Pets, systemName: pets_doc, documentRef: {}}
`
	for name, c := range map[string]struct {
		files []string
		code  int
		want  []string
	}{
		"a Product and its plan, both new": {[]string{product, strings.Replace(plan, "PRODUCT", "shop", 1)}, 1,
			[]string{`+ Product/shop: create Product "shop"`, "> ApplicationPlan/gold: synced after Product/shop, which this diff creates"}},
		"a plan of a Product that is nowhere": {[]string{strings.Replace(plan, "PRODUCT", "nowhere", 1)}, 3,
			[]string{`! ApplicationPlan/gold: waiting for Product "nowhere"`}},
		"a create beside a plan that waits": {[]string{petsFile, strings.Replace(plan, "PRODUCT", "nowhere", 1)}, 3,
			[]string{"+ Backend/pets", "! ApplicationPlan/gold"}},
		"an invalid ActiveDoc beside a create": {[]string{strings.Replace(petsFile, "DESCRIPTION", "Pets", 1), invalidDoc}, 3,
			[]string{"+ Backend/pets", "! ActiveDoc/pets-doc: spec.documentRef names neither a ConfigMap nor a Secret"}},
	} {
		args := []string{"diff", "-n", ns}
		for i, f := range c.files {
			args = append(args, "-f", writeFile(t, fmt.Sprintf("%d.yaml", i), f))
		}
		out, err := run(t, args...)
		if exitCode(err) != c.code {
			t.Errorf("%s: exit %d (%v), want %d\n%s", name, exitCode(err), err, c.code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the output has no %q:\n%s", name, w, out)
			}
		}
	}
	if n := len(sim.Writes("acme")); n != 0 {
		t.Errorf("diff wrote %d times to 3scale", n)
	}

	file := writeFile(t, "pets.yaml", petsFile)
	for name, args := range map[string][]string{
		"an unknown flag":    {"diff", "-n", ns, "-f", file, "--no-such-flag"},
		"an argument":        {"diff", "-n", ns, "-f", file, "extra"},
		"neither -f nor -k":  {"diff", "-n", ns},
		"a file that is not": {"diff", "-n", ns, "-f", filepath.Join(t.TempDir(), "missing.yaml")},
	} {
		if _, err := run(t, args...); exitCode(err) != 2 || err == nil || err.Error() == "" {
			t.Errorf("%s: exit %d (%v), want 2 with a message", name, exitCode(err), err)
		}
	}
}

// diffNamespace makes a namespace whose provider account is the tenant "acme" of a new simulator, and
// returns it with a client of that tenant and the simulator.
func diffNamespace(t *testing.T) (string, *tsclient.Client, *simulator.Simulator) {
	t.Helper()
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "diff-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "threescale-provider-account"},
		StringData: map[string]string{"adminURL": srv.URL + "/t/acme", "token": "acme-token", "allowInsecureHTTP": "true"}}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	c, err := tsclient.New(tsclient.Config{AdminURL: srv.URL + "/t/acme", Token: "acme-token", Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name, c, sim
}

// writeFile writes text to a file of a temporary directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffWithNoApimsyncResource: files without an apimsync resource (a ConfigMap alone, 3scale-operator's
// resources) are not "nothing would change": diff says there is nothing to diff, in one line, exit 2.
func TestDiffWithNoApimsyncResource(t *testing.T) {
	ns, _, _ := diffNamespace(t)
	cases := map[string]struct{ text, want string }{
		"a ConfigMap alone": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doc}\ndata: {openapi: '{}'}\n", "no apimsync resource"},
		"3scale-operator's": {"apiVersion: capabilities.3scale.net/v1beta1\nkind: Backend\nmetadata: {name: pets}\nspec: {name: Pets, privateBaseURL: 'https://pets.internal'}\n",
			"kubectl apimsync convert"},
		"an empty file": {"", "no apimsync resource"},
	}
	for name, c := range cases {
		out, err := run(t, "diff", "-n", ns, "-f", writeFile(t, "in.yaml", c.text))
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: exit %d, %v, want one line saying %q\n%s", name, exitCode(err), err, c.want, out)
		}
	}
}

// TestDiffHidesADocumentFromASecret: an ActiveDoc whose document is in a Secret shows its update without
// any of the document (a Secret's content); one from a ConfigMap shows its start.
func TestDiffHidesADocumentFromASecret(t *testing.T) {
	ns, c, _ := diffNamespace(t)
	if _, err := c.CreateActiveDoc(context.Background(), tsclient.ActiveDocParams{Name: "Pets", SystemName: "pets",
		Body: `{"openapi":"3.0.3","info":{"title":"Old","version":"1"},"paths":{}}`}); err != nil {
		t.Fatal(err)
	}
	const doc = `{"openapi":"3.0.3","info":{"title":"SECRET-TITLE","version":"2"},"paths":{}}`
	for _, from := range []struct{ kind, ref string }{{"Secret", "secretKeyRef"}, {"ConfigMap", "configMapKeyRef"}} {
		file := writeFile(t, "doc.yaml", "apiVersion: v1\nkind: "+from.kind+"\nmetadata: {name: pets-doc}\n"+
			map[string]string{"Secret": "stringData", "ConfigMap": "data"}[from.kind]+":\n  openapi.json: '"+doc+"'\n---\n"+
			"apiVersion: capabilities.apimsync.io/v1alpha1\nkind: ActiveDoc\nmetadata: {name: pets}\n"+
			"spec: {name: Pets, systemName: pets, documentRef: {"+from.ref+": {name: pets-doc, key: openapi.json}}}\n")
		out, err := run(t, "diff", "-n", ns, "-f", file)
		if exitCode(err) != 1 || !strings.Contains(out, "~ ActiveDoc/pets") {
			t.Fatalf("from a %s: exit %d (%v)\n%s", from.kind, exitCode(err), err, out)
		}
		if shown := strings.Contains(out, "SECRET-TITLE"); shown != (from.kind == "ConfigMap") {
			t.Errorf("from a %s: the document's start shown: %v\n%s", from.kind, shown, out)
		}
	}
}

// TestPrintPlansClusterWrites: writes to the cluster alone (an Application's credentials Secret) are
// listed apart from 3scale's and are no change to 3scale (exit 0).
func TestPrintPlansClusterWrites(t *testing.T) {
	var out bytes.Buffer
	changes, blocked := printPlans(&out, []plugin.Plan{{Kind: "Application", Name: "app", Action: "none", Message: `Application "App" is in sync with tenant t`,
		ClusterWrites: []string{`create Secret "app-credentials"`}}})
	if changes || blocked {
		t.Errorf("a write to the cluster alone counts as a change to 3scale (%v) or as an object that does not sync (%v)", changes, blocked)
	}
	if !strings.Contains(out.String(), `    cluster: create Secret "app-credentials"`) || !strings.HasPrefix(out.String(), "= Application/app") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// TestPrintPlansDetails: a plan's details (a portal template's unified diff) are printed under its
// writes, each line indented.
func TestPrintPlansDetails(t *testing.T) {
	var out bytes.Buffer
	printPlans(&out, []plugin.Plan{{Kind: "DeveloperPortal", Name: "portal", Action: "update", Message: "update",
		Details: []string{"--- 3scale/page:/\n+++ spec/page:/\n@@ -1 +1 @@\n-<h1>Hi</h1>\n+<h1>Welcome</h1>\n"}}})
	for _, want := range []string{"\n    --- 3scale/page:/\n", "\n    -<h1>Hi</h1>\n", "\n    +<h1>Welcome</h1>\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed:\n%s\nwant %q", out.String(), want)
		}
	}
}
