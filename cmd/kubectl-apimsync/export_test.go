package main

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/internal/kustomize"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// acmeTenant starts a simulator with the tenant acme (token acme-token), stopped with the test, and
// returns its admin URL and a client of it.
func acmeTenant(t *testing.T) (string, *tsclient.Client) {
	t.Helper()
	srv := httptest.NewServer(simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}}))
	t.Cleanup(srv.Close)
	adminURL := srv.URL + "/t/acme"
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: "acme-token", Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	return adminURL, c
}

// TestExportWritesAKustomizeDirectory: a tenant's backend and product land in a kustomize directory,
// the kustomization lists them and what was not exported; a refused token, a missing token and a
// directory already used each fail with one line and a non-zero exit.
func TestExportWritesAKustomizeDirectory(t *testing.T) {
	adminURL, c := acmeTenant(t)
	ctx := context.Background()
	if _, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://pets.internal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop", DeploymentOption: "hosted", BackendVersion: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "ACME", Username: "alice", Email: "alice@acme.example", Password: "a-long-enough-password"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Mesh", SystemName: "mesh", DeploymentOption: "service_mesh_istio", BackendVersion: "1"}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "acme")
	t.Setenv("THREESCALE_TOKEN", "acme-token")
	out, err := run(t, "export", "--admin-url", adminURL, "--allow-insecure-http", "--all", "--out", dir)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- backends.yaml", "- product-shop.yaml", "- accounts.yaml"} {
		if !strings.Contains(string(kustomization), want) {
			t.Errorf("kustomization.yaml has no %q:\n%s", want, kustomization)
		}
	}
	product, err := os.ReadFile(filepath.Join(dir, "product-shop.yaml"))
	if err != nil || !strings.Contains(string(product), "kind: Product") || !strings.Contains(string(product), "systemName: shop") {
		t.Errorf("product-shop.yaml: %v\n%s", err, product)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, dir) // Render builds a directory of the repository's
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.Render(rel)
	if err != nil || len(objs) < 2 {
		t.Errorf("the directory does not build with kustomize: %v (%d objects)", err, len(objs))
	}
	if !strings.Contains(out, `not exported: Product "mesh": deployment option "service_mesh_istio" has no apimsync equivalent`) {
		t.Errorf("the command does not say what it left out:\n%s", out)
	}

	// Passwords as Secret references: the account names a template, which has the user's key and no value.
	refs := filepath.Join(t.TempDir(), "refs")
	if out, err := run(t, "export", "--admin-url", adminURL, "--allow-insecure-http", "--all", "--credentials", "secret-refs", "--out", refs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	accounts, _ := os.ReadFile(filepath.Join(refs, "accounts.yaml"))
	templates, _ := os.ReadFile(filepath.Join(refs, "secrets-to-fill.yaml"))
	if !strings.Contains(string(accounts), "passwordRef:\n") || !strings.Contains(string(templates), "name: acme-passwords") ||
		!strings.Contains(string(templates), `alice: ""`) {
		t.Errorf("no password reference with its template:\n%s\n---\n%s", accounts, templates)
	}
	if info, err := os.Stat(filepath.Join(refs, "secrets-to-fill.yaml")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("secrets-to-fill.yaml: %v, want mode 0600 (it holds credentials once filled in)", err)
	}
	if ignore, err := os.ReadFile(filepath.Join(refs, ".gitignore")); err != nil || strings.TrimSpace(string(ignore)) != "secrets-to-fill.yaml" {
		t.Errorf(".gitignore: %q %v, want it to list secrets-to-fill.yaml", ignore, err)
	}

	// --observe: every object it writes only observes (spec.management: Observe).
	observed := filepath.Join(t.TempDir(), "observed")
	if out, err := run(t, "export", "--admin-url", adminURL, "--allow-insecure-http", "--all", "--observe", "--out", observed); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range []string{"backends.yaml", "product-shop.yaml", "accounts.yaml"} {
		raw, err := os.ReadFile(filepath.Join(observed, f))
		objects, marked := strings.Count(string(raw), "apiVersion: capabilities.apimsync.io/"), strings.Count(string(raw), "management: Observe")
		if err != nil || objects == 0 || marked != objects {
			t.Errorf("%s: %d of %d objects observe only (%v)", f, marked, objects, err)
		}
	}

	for name, c := range map[string]struct {
		token string
		args  []string
		want  string
	}{
		"a refused token":        {"wrong", []string{"--all", "--out", t.TempDir()}, "the tenant refused the token"},
		"no token":               {"", []string{"--all", "--out", t.TempDir()}, "the access token is not set"},
		"a used directory":       {"acme-token", []string{"--all", "--out", dir}, "is not empty"},
		"--all and a filter":     {"acme-token", []string{"--out", t.TempDir(), "--all", "--product", "shop"}, "--all exports everything"},
		"no filter and no --all": {"acme-token", []string{"--out", t.TempDir()}, "say what to export"},
		"unknown credentials":    {"acme-token", []string{"--all", "--out", t.TempDir(), "--credentials", "plain"}, "--credentials is keep or secret-refs"},
	} {
		t.Setenv("THREESCALE_TOKEN", c.token)
		_, err := run(t, append([]string{"export", "--admin-url", adminURL, "--allow-insecure-http"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || exitCode(err) == 0 {
			t.Errorf("%s: %v, want one line saying %q", name, err, c.want)
		}
	}
}

// TestExportPortal: --portal alone writes the tenant's portal, nothing else: a DeveloperPortal, the
// content under portal/ (one folder per ConfigMap, an image as it is) and a configMapGenerator per
// folder, which kustomize builds into ConfigMaps the DeveloperPortal names.
func TestExportPortal(t *testing.T) {
	adminURL, _ := acmeTenant(t)
	dir := filepath.Join(t.TempDir(), "portal")
	t.Setenv("THREESCALE_TOKEN", "acme-token")
	out, err := run(t, "export", "--admin-url", adminURL, "--allow-insecure-http", "--portal", "--out", dir)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- portal.yaml", "configMapGenerator:", "- name: portal-layouts", "- portal/layouts/main_layout.liquid",
		"- portal/files/images/desk.jpg", "disableNameSuffixHash: true"} {
		if !strings.Contains(string(kustomization), want) {
			t.Errorf("kustomization.yaml has no %q:\n%s", want, kustomization)
		}
	}
	if strings.Contains(string(kustomization), "backends.yaml") {
		t.Errorf("--portal alone exported the API side too:\n%s", kustomization)
	}
	objs, err := kustomize.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	if kinds["DeveloperPortal"] != 1 || kinds["ConfigMap"] < 5 || len(kinds) != 2 {
		t.Errorf("built %v, want one DeveloperPortal and its ConfigMaps", kinds)
	}
}

// TestExportPortalNestedPaths: a page under another's path (/docs, which every tenant has, and
// /docs/intro, /docs/intro/more) and a file under another's (/downloads/sdk and /downloads/sdk/readme.txt)
// export side by side (pages/docs.liquid beside pages/docs/), and the export builds into ConfigMaps that
// hold each item's content under the key its DeveloperPortal names. The export is written all at once: a
// failure leaves no directory (nor the parents it made), or an existing one as it was; --overwrite
// replaces what an earlier export wrote (the layout of an older version, where /docs was a file
// pages/docs) and leaves the rest.
func TestExportPortalNestedPaths(t *testing.T) {
	adminURL, c := acmeTenant(t)
	ctx := context.Background()
	contents := map[string]string{"/docs/intro": "<h1>Intro</h1>", "/docs/intro/more": "<h1>More</h1>"}
	for _, p := range []string{"/docs/intro", "/docs/intro/more"} {
		page, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To(p), Path: ptr.To(p),
			LiquidEnabled: ptr.To(false), Draft: ptr.To(contents[p])})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.PublishCMSTemplate(ctx, page.ID); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"/downloads/sdk": "the SDK", "/downloads/sdk/readme.txt": "read me"}
	for _, p := range []string{"/downloads/sdk", "/downloads/sdk/readme.txt"} {
		if _, err := c.CreateCMSFile(ctx, tsclient.CMSFileParams{Path: ptr.To(p), Content: []byte(files[p]), Name: path.Base(p), ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("THREESCALE_TOKEN", "acme-token")
	export := func(dir string, more ...string) (string, error) {
		return run(t, append([]string{"export", "--admin-url", adminURL, "--allow-insecure-http", "--portal", "--out", dir}, more...)...)
	}

	dir := filepath.Join(t.TempDir(), "portal")
	if out, err := export(dir); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range []string{"portal/pages/docs.liquid", "portal/pages/docs/intro.liquid", "portal/pages/docs/intro/more.liquid", "portal/pages/index.liquid",
		"portal/files/downloads/2-sdk", "portal/files/downloads/sdk/readme.txt"} {
		if info, err := os.Stat(filepath.Join(dir, f)); err != nil || info.IsDir() {
			t.Errorf("%s: %v, want a file", f, err)
		}
	}
	objs, err := kustomize.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]map[string]string{}
	var portal *v1alpha1.DeveloperPortal
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			d, _, _ := unstructured.NestedStringMap(o.Object, "data")
			data[o.GetName()] = d
		case "DeveloperPortal":
			portal = &v1alpha1.DeveloperPortal{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, portal); err != nil {
				t.Fatal(err)
			}
		}
	}
	if portal == nil {
		t.Fatal("no DeveloperPortal built")
	}
	found := 0
	for _, p := range portal.Spec.Pages {
		if want, ok := contents[p.Path]; ok {
			found++
			if got := data[p.Content.ConfigMap][p.Content.Key]; got != want {
				t.Errorf("page %s: %s/%s holds %q, want %q", p.Path, p.Content.ConfigMap, p.Content.Key, got, want)
			}
		}
	}
	for _, f := range portal.Spec.Files {
		if want, ok := files[f.Path]; ok {
			found++
			if got := data[f.Content.ConfigMap][f.Content.Key]; got != want {
				t.Errorf("file %s: %s/%s holds %q, want %q", f.Path, f.Content.ConfigMap, f.Content.Key, got, want)
			}
		}
	}
	if found != 4 {
		t.Errorf("%d of the 4 nested pages and files exported", found)
	}

	// A failure while writing leaves nothing: not the directory, nor the parents it made.
	saved := writeDir
	defer func() { writeDir = saved }()
	writeDir = func(d string, e *plugin.Exported, header []string) ([]string, error) {
		if _, err := plugin.WriteDir(d, e, header); err != nil {
			return nil, err
		}
		return nil, errors.New("disk full")
	}
	parent := t.TempDir()
	if _, err := export(filepath.Join(parent, "a", "b", "portal")); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a failed write: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed export left %v in %s", entries, parent)
	}
	// ...and an existing directory as it was.
	before := snapshotDir(t, dir)
	if _, err := export(dir, "--overwrite"); err == nil {
		t.Errorf("a failed write over an export: no error")
	}
	if after := snapshotDir(t, dir); !maps.Equal(before, after) {
		t.Errorf("a failed --overwrite changed the directory:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
	writeDir = saved

	// --overwrite over an older export, whose /docs was the file pages/docs, beside a file of the user's.
	if err := os.RemoveAll(filepath.Join(dir, "portal", "pages", "docs")); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"portal/pages/docs": "old layout", "README.md": "ours"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := export(dir, "--overwrite"); err != nil {
		t.Fatalf("--overwrite over an older export: %v: %s", err, out)
	}
	after := snapshotDir(t, dir)
	if !maps.Equal(before, maps.Collect(func(yield func(string, string) bool) {
		for k, v := range after {
			if k != "README.md" && !yield(k, v) {
				return
			}
		}
	})) || after["README.md"] != "ours" {
		t.Errorf("--overwrite over an older export:\ngot  %v\nwant %v and README.md", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
}

// snapshotDir returns every file under dir, by path relative to it, with its content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
