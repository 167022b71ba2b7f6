package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit"
)

// TestDiffIsWhatASyncDoes: diff uses the syncers' own comparison: a diff that finds nothing is followed by
// a sync with no write, and a diff that lists N writes by a sync that makes those N. It never writes to
// 3scale itself, and a new object is a create.
func TestDiffIsWhatASyncDoes(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)
	time.Sleep(time.Second)

	before := harness.WritesTo(ns)
	n, changes, plans := harness.PlannedWrites(t, ns, harness.AsFiles(ns, backend, product))
	if n != 0 || changes {
		t.Errorf("diff of what is synced: %d writes, changes %v: %+v", n, changes, plans)
	}
	if got := harness.WritesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}

	// Edits: the product's description and a mapping rule of the backend.
	editedBackend, editedProduct := backend.DeepCopy(), product.DeepCopy()
	editedBackend.Spec.MappingRules = append(editedBackend.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "DELETE", Pattern: "/pets/{id}$", MetricMethodRef: "hits", Increment: 1})
	editedProduct.Spec.Description = "Pets, described"
	extra := harness.PetsBackend(ns)
	extra.Name, extra.Spec.SystemName = "more-pets", "more_pets"
	n, changes, plans = harness.PlannedWrites(t, ns, harness.AsFiles(ns, editedBackend, editedProduct, extra))
	if n == 0 || !changes {
		t.Fatalf("diff of edits: %d writes: %+v", n, plans)
	}
	created := false
	for _, p := range plans {
		created = created || (p.Name == "more-pets" && p.Action == "create")
	}
	if !created {
		t.Errorf("a new Backend is not a create: %+v", plans)
	}
	if got := harness.WritesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}
	harness.EditAndWait(t, backend, func() { backend.Spec.MappingRules = editedBackend.Spec.MappingRules })
	harness.EditAndWait(t, product, func() { product.Spec.Description = editedProduct.Spec.Description })
	if got := harness.WritesTo(ns) - before; got != n {
		t.Errorf("the sync made %d writes, the diff listed %d: %+v", got, n, plans)
	}
}

// TestDiffReportsClusterWritesApart: an Application that adopts a 3scale application as it is (an export
// applied to a new namespace) would write nothing to 3scale, only its credentials Secret in the cluster:
// diff lists that write apart and does not count it as a change to 3scale.
func TestDiffReportsClusterWritesApart(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	plan := harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, plan)
	app := harness.Application(ns, "app", "acme", "basic")
	if _, err := harness.ByHand(t, ns).CreateApplication(context.Background(), acc.Status.AccountID, tsclient.ApplicationParams{PlanID: plan.Status.PlanID,
		Name: app.Spec.Name, Description: &app.Spec.Description}); err != nil {
		t.Fatal(err)
	}
	before := harness.WritesTo(ns)
	n, changes, plans := harness.PlannedWrites(t, ns, harness.AsFiles(ns, app))
	p := harness.PlanOf(t, plans, "Application", "app")
	if n != 0 || changes || p.Changes() || p.Action != "none" {
		t.Errorf("an application as 3scale has it: %d writes, changes %v: %+v", n, changes, p)
	}
	if want := []string{`create Secret "app-credentials"`}; !slices.Equal(p.ClusterWrites, want) {
		t.Errorf("writes to the cluster %q, want %q", p.ClusterWrites, want)
	}
	if got := harness.WritesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}
	var secret corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-credentials"}, &secret); !apierrors.IsNotFound(err) {
		t.Errorf("diff wrote the credentials Secret to the cluster: %v", err)
	}
}

// noCRDs is a cluster without apimsync's CRDs: listing their objects finds no such kind.
type noCRDs struct{ client.Reader }

// List implements client.Reader: no apimsync kind is known.
func (r noCRDs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if strings.Contains(fmt.Sprintf("%T", list), "v1alpha1.") {
		return &meta.NoKindMatchError{GroupKind: v1alpha1.GroupVersion.WithKind("Backend").GroupKind(), SearchedVersions: []string{"v1alpha1"}}
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestDiffSaysWhenTheCRDsAreMissing: in a cluster without apimsync's CRDs, diff says so in one line.
func TestDiffSaysWhenTheCRDsAreMissing(t *testing.T) {
	ns := harness.NewNamespace(t)
	_, err := controllers.DiffObjects(context.Background(), noCRDs{harness.K8s}, harness.Env.Scheme, ns, harness.AsFiles(ns, harness.PetsBackend(ns)), controllers.DiffOptions{})
	if err == nil || !strings.Contains(err.Error(), "apimsync's CRDs are not installed") || strings.Contains(err.Error(), "*v1alpha1") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("diff without the CRDs: %v", err)
	}
}

// TestDiffUsesTheInstallationsTenant: an object without a provider-account Secret, in a namespace where
// 3scale-operator installed 3scale, is planned against that installation's tenant, as the manager syncs
// it (not "waiting").
func TestDiffUsesTheInstallationsTenant(t *testing.T) {
	ns := harness.NewNamespace(t)
	_, token := harness.TenantOf(ns)
	harness.Create(t, systemSeed(ns, map[string]string{kit.SystemSeedAdminToken: token}), apiManager(ns, map[string]any{"wildcardDomain": ns + harness.InstallationDomain, "tenantName": ns}))
	plans, err := controllers.DiffObjects(context.Background(), harness.K8s, harness.Env.Scheme, ns, harness.AsFiles(ns, harness.PetsBackend(ns)), controllers.DiffOptions{InstallationAdminURL: testInstallationAdminURL})
	if err != nil {
		t.Fatal(err)
	}
	if p := harness.PlanOf(t, plans, "Backend", "pets"); p.Action != "create" || !strings.Contains(p.Message, ns) {
		t.Errorf("a Backend of the installation's tenant: %+v, want a create on tenant %s", p, ns)
	}
}

// testInstallationAdminURL is the test manager's: an installation whose wildcard domain is under
// installationDomain is served by the simulator's tenant named by its spec.tenantName.
func testInstallationAdminURL(tenantName, wildcardDomain string) string {
	if strings.HasSuffix(wildcardDomain, harness.InstallationDomain) {
		return harness.SimURL + "/t/" + tenantName
	}
	return kit.InstallationAdminURL(tenantName, wildcardDomain)
}
