package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/internal/kustomize"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

// TestExportWritesAKustomizeDirectory: a tenant's backend and product land in a kustomize directory,
// the kustomization lists them and what was not exported; a refused token, a missing token and a
// directory already used each fail with one line and a non-zero exit.
func TestExportWritesAKustomizeDirectory(t *testing.T) {
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	adminURL := srv.URL + "/t/acme"
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: "acme-token", Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
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
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	adminURL := srv.URL + "/t/acme"
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
