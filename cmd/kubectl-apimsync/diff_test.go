package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tsclient "github.com/apimsync/apimsync/client"
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
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "diff-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "threescale-provider-account"},
		StringData: map[string]string{"adminURL": srv.URL + "/t/acme", "token": "acme-token", "allowInsecureHTTP": "true"}}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
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

	c, err := tsclient.New(tsclient.Config{AdminURL: srv.URL + "/t/acme", Token: "acme-token", Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
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
