package controllers

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// asFiles returns objects as files hold them: spec and metadata, no status.
func asFiles(ns string, objs ...client.Object) []client.Object {
	var out []client.Object
	for _, o := range objs {
		c := o.DeepCopyObject().(client.Object)
		c.SetNamespace(ns)
		c.SetResourceVersion("")
		c.SetUID("")
		c.SetFinalizers(nil)
		c.SetAnnotations(nil)
		c.SetGeneration(0)
		c.SetCreationTimestamp(metav1.Time{})
		if s, ok := c.(v1alpha1.SyncedObject); ok {
			*s.GetSyncStatus() = v1alpha1.CommonStatus{}
			s.SetRemoteID(0)
		}
		out = append(out, c)
	}
	return out
}

// plannedWrites adds up the writes of plans, and tells whether any would change 3scale.
func plannedWrites(t *testing.T, ns string, files []client.Object) (int, bool, []plugin.Plan) {
	t.Helper()
	plans, err := DiffObjects(context.Background(), k8s, env.Scheme, ns, files, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, changes := 0, false
	for _, p := range plans {
		n += len(p.Writes)
		changes = changes || p.Changes()
	}
	return n, changes, plans
}

// TestDiffIsWhatASyncDoes: diff uses the syncers' own comparison: a diff that finds nothing is followed by
// a sync with no write, and a diff that lists N writes by a sync that makes those N. It never writes to
// 3scale itself, and a new object is a create.
func TestDiffIsWhatASyncDoes(t *testing.T) {
	ns := newNamespace(t)
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	create(t, defaultSecret(ns), backend, product)
	waitState(t, v1alpha1.ConditionSynced, backend, product)
	time.Sleep(time.Second)

	before := writesTo(ns)
	n, changes, plans := plannedWrites(t, ns, asFiles(ns, backend, product))
	if n != 0 || changes {
		t.Errorf("diff of what is synced: %d writes, changes %v: %+v", n, changes, plans)
	}
	if got := writesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}

	// Edits: the product's description and a mapping rule of the backend.
	editedBackend, editedProduct := backend.DeepCopy(), product.DeepCopy()
	editedBackend.Spec.MappingRules = append(editedBackend.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "DELETE", Pattern: "/pets/{id}$", MetricMethodRef: "hits", Increment: 1})
	editedProduct.Spec.Description = "Pets, described"
	extra := petsBackend(ns)
	extra.Name, extra.Spec.SystemName = "more-pets", "more_pets"
	n, changes, plans = plannedWrites(t, ns, asFiles(ns, editedBackend, editedProduct, extra))
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
	if got := writesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}
	editAndWait(t, backend, func() { backend.Spec.MappingRules = editedBackend.Spec.MappingRules })
	editAndWait(t, product, func() { product.Spec.Description = editedProduct.Spec.Description })
	if got := writesTo(ns) - before; got != n {
		t.Errorf("the sync made %d writes, the diff listed %d: %+v", got, n, plans)
	}
}

// planOf returns the plan of the object kind/name among plans.
func planOf(t *testing.T, plans []plugin.Plan, kind, name string) plugin.Plan {
	t.Helper()
	for _, p := range plans {
		if p.Kind == kind && p.Name == name {
			return p
		}
	}
	t.Fatalf("no plan for %s %s: %+v", kind, name, plans)
	return plugin.Plan{}
}

// TestDiffReportsClusterWritesApart: an Application that adopts a 3scale application as it is (an export
// applied to a new namespace) would write nothing to 3scale, only its credentials Secret in the cluster:
// diff lists that write apart and does not count it as a change to 3scale.
func TestDiffReportsClusterWritesApart(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	plan := basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), acc, pw, petsBackend(ns), petstoreProduct(ns, "pets"), plan)
	waitState(t, v1alpha1.ConditionSynced, acc, plan)
	app := application(ns, "app", "acme", "basic")
	if _, err := byHand(t, ns).CreateApplication(context.Background(), acc.Status.AccountID, tsclient.ApplicationParams{PlanID: plan.Status.PlanID,
		Name: app.Spec.Name, Description: &app.Spec.Description}); err != nil {
		t.Fatal(err)
	}
	before := writesTo(ns)
	n, changes, plans := plannedWrites(t, ns, asFiles(ns, app))
	p := planOf(t, plans, "Application", "app")
	if n != 0 || changes || p.Changes() || p.Action != "none" {
		t.Errorf("an application as 3scale has it: %d writes, changes %v: %+v", n, changes, p)
	}
	if want := []string{`create Secret "app-credentials"`}; !slices.Equal(p.ClusterWrites, want) {
		t.Errorf("writes to the cluster %q, want %q", p.ClusterWrites, want)
	}
	if got := writesTo(ns) - before; got != 0 {
		t.Fatalf("diff wrote %d times to 3scale", got)
	}
	var secret corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-credentials"}, &secret); !apierrors.IsNotFound(err) {
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
	ns := newNamespace(t)
	_, err := DiffObjects(context.Background(), noCRDs{k8s}, env.Scheme, ns, asFiles(ns, petsBackend(ns)), DiffOptions{})
	if err == nil || !strings.Contains(err.Error(), "apimsync's CRDs are not installed") || strings.Contains(err.Error(), "*v1alpha1") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("diff without the CRDs: %v", err)
	}
}

// TestDiffUsesTheInstallationsTenant: an object without a provider-account Secret, in a namespace where
// 3scale-operator installed 3scale, is planned against that installation's tenant, as the manager syncs
// it (not "waiting").
func TestDiffUsesTheInstallationsTenant(t *testing.T) {
	ns := newNamespace(t)
	_, token := tenantOf(ns)
	create(t, systemSeed(ns, map[string]string{kit.SystemSeedAdminToken: token}), apiManager(ns, map[string]any{"wildcardDomain": ns + installationDomain, "tenantName": ns}))
	plans, err := DiffObjects(context.Background(), k8s, env.Scheme, ns, asFiles(ns, petsBackend(ns)), DiffOptions{InstallationAdminURL: testInstallationAdminURL})
	if err != nil {
		t.Fatal(err)
	}
	if p := planOf(t, plans, "Backend", "pets"); p.Action != "create" || !strings.Contains(p.Message, ns) {
		t.Errorf("a Backend of the installation's tenant: %+v, want a create on tenant %s", p, ns)
	}
}

// testInstallationAdminURL is the test manager's: an installation whose wildcard domain is under
// installationDomain is served by the simulator's tenant named by its spec.tenantName.
func testInstallationAdminURL(tenantName, wildcardDomain string) string {
	if strings.HasSuffix(wildcardDomain, installationDomain) {
		return simURL + "/t/" + tenantName
	}
	return kit.InstallationAdminURL(tenantName, wildcardDomain)
}
