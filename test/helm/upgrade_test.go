package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// previousChart is the chart as released before its CRDs moved from crds/ to templates: the chart of
// commit e6da4ec without the DeveloperPortal CRD, as a release that came before that kind had it
// (git archive e6da4ec charts/apimsync, crds/capabilities.apimsync.io_developerportals.yaml removed,
// packaged as helm package does).
const previousChart = "testdata/apimsync-e6da4ec.tgz"

const portalCRD = "developerportals." + "capabilities.apimsync.io"

// newCRDs are the CRDs of this chart the previous chart lacks: the DeveloperPortal's, removed from it,
// and the AccountPlan's and ServicePlan's, added since.
var newCRDs = []string{portalCRD, "accountplans." + "capabilities.apimsync.io", "serviceplans." + "capabilities.apimsync.io", "fielddefinitions." + "capabilities.apimsync.io", "tenantsettings." + "capabilities.apimsync.io", "adminusers." + "capabilities.apimsync.io"}

// TestChartUpgradeInstallsNewCRDs: a release of the previous chart (CRDs in crds/, which Helm installs
// on install only), upgraded to this chart with the step docs/install.md gives (the CRDs labelled and
// annotated as the release's), gets the CRD it lacked (DeveloperPortal's) and keeps the objects of the
// others; a later upgrade changes a CRD; helm uninstall leaves every CRD and the objects in them. Without
// the step, Helm refuses the upgrade (the CRDs crds/ made are no release's), which is why it is there.
func TestChartUpgradeInstallsNewCRDs(t *testing.T) {
	ctx := context.Background()
	const release, ns = "apimsync", "apimsync-upgrade"
	cfg := previousRelease(t, release, ns)

	// A user's object, which must outlive the upgrade and the uninstall.
	data := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "upgrade-data"}}
	if err := k8s.Create(ctx, data); err != nil {
		t.Fatal(err)
	}
	backend := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Namespace: data.Name, Name: "pets"},
		Spec: v1alpha1.BackendSpec{Name: "Pets", PrivateBaseURL: "https://pets.internal"}}
	if err := k8s.Create(ctx, backend); err != nil {
		t.Fatal(err)
	}

	current := currentChart(t)
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	if _, err := upgrade.Run(release, current, nil); err == nil || !strings.Contains(err.Error(), "invalid ownership metadata") {
		t.Fatalf("upgrade without the CRDs made the release's: %v, want Helm's refusal (invalid ownership metadata)", err)
	}
	adoptCRDs(t, release, ns) // docs/install.md's step
	if _, err := upgrade.Run(release, current, nil); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	for _, name := range crdNames(t) {
		crd := establishedCRD(t, name)
		if crd.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" || crd.GetAnnotations()["meta.helm.sh/release-name"] != release ||
			crd.GetAnnotations()[keepAnnotation] != "keep" {
			t.Errorf("CRD %s after the upgrade: labels %v, annotations %v, want the release's and %s: keep", name, crd.GetLabels(), crd.GetAnnotations(), keepAnnotation)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(backend), backend); err != nil {
		t.Errorf("the Backend after the upgrade: %v", err)
	}
	portal := &v1alpha1.DeveloperPortal{ObjectMeta: metav1.ObjectMeta{Namespace: data.Name, Name: "portal"}}
	if err := k8s.Create(ctx, portal); err != nil {
		t.Errorf("a DeveloperPortal after the upgrade: %v", err)
	}

	// A later chart changes a CRD: the upgrade changes it in the cluster.
	changed := currentChart(t)
	for _, f := range changed.Files {
		if strings.HasSuffix(f.Name, "_backends.yaml") {
			f.Data = []byte(strings.Replace(string(f.Data), "\n  name: backends.", "\n  labels: {apimsync.io/test: changed}\n  name: backends.", 1))
		}
	}
	if _, err := upgrade.Run(release, changed, nil); err != nil {
		t.Fatalf("upgrade to a changed CRD: %v", err)
	}
	if crd := establishedCRD(t, "backends.capabilities.apimsync.io"); crd.GetLabels()["apimsync.io/test"] != "changed" {
		t.Errorf("the Backend CRD after an upgrade that changes it: labels %v", crd.GetLabels())
	}

	if _, err := action.NewUninstall(cfg).Run(release); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	for _, name := range crdNames(t) {
		establishedCRD(t, name)
	}
	for _, obj := range []client.Object{backend, portal} {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s after helm uninstall: %v", obj, obj.GetName(), err)
		}
	}
}

// TestChartUpgradeTakesOwnership: with Helm's --take-ownership (Helm 3.17 and later), the upgrade from
// the previous chart needs no step of its own.
func TestChartUpgradeTakesOwnership(t *testing.T) {
	const release, ns = "apimsync-owned", "apimsync-upgrade-owned"
	cfg := previousRelease(t, release, ns)
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace, upgrade.TakeOwnership = ns, true
	if _, err := upgrade.Run(release, currentChart(t), nil); err != nil {
		t.Fatalf("upgrade --take-ownership: %v", err)
	}
	for _, name := range newCRDs {
		if crd := establishedCRD(t, name); crd.GetAnnotations()["meta.helm.sh/release-name"] != release {
			t.Errorf("the CRD %s's annotations %v, want the release's", name, crd.GetAnnotations())
		}
	}
	if _, err := action.NewUninstall(cfg).Run(release); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
}

// previousRelease installs previousChart as release in namespace ns of a cluster without apimsync's
// CRDs (the test control plane's are deleted first), and returns the Helm configuration that did.
func previousRelease(t *testing.T, release, ns string) *action.Configuration {
	t.Helper()
	deleteCRDs(t)
	cfg := helmConfig(t, ns)
	old, err := loader.Load(previousChart)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = release, ns, true
	if _, err := install.Run(old, nil); err != nil {
		t.Fatalf("install of the previous chart: %v", err)
	}
	// Gone when the test ends, whatever happens: the cluster-scoped objects (ClusterRoles) of another
	// release would be in the way of the next test's.
	t.Cleanup(func() { _, _ = action.NewUninstall(cfg).Run(release) })
	if len(crdNames(t)) != len(old.CRDObjects())+len(newCRDs) {
		t.Fatalf("the previous chart has %d CRDs, want all of this chart's but %v", len(old.CRDObjects()), newCRDs)
	}
	for _, name := range newCRDs {
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, crdObject()); !apierrors.IsNotFound(err) {
			t.Fatalf("the CRD %s before the upgrade: %v, want none", name, err)
		}
	}
	return cfg
}

// currentChart loads charts/apimsync.
func currentChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// helmConfig is Helm's configuration for a release in ns, as the helm command makes it (release records
// in Secrets), as an admin of the test control plane.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	user, err := testEnv.Environment.AddUser(envtest.User{Name: "helm-" + ns, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig, cache := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "cache")
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace, flags.CacheDir = &kubeconfig, &ns, &cache
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// crdNameList caches crdNames.
var crdNameList []string

// crdNames are the names of apimsync's CRDs (config/crd).
func crdNames(t *testing.T) []string {
	t.Helper()
	if crdNameList != nil {
		return crdNameList
	}
	var names []string
	for k := range renderKustomize(t, "config/crd") {
		if name, ok := strings.CutPrefix(k, "CustomResourceDefinition /"); ok {
			names = append(names, name)
		}
	}
	if len(names) < 10 {
		t.Fatalf("config/crd renders %d CRDs", len(names))
	}
	slices.Sort(names)
	crdNameList = names
	return names
}

func crdObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	return u
}

// deleteCRDs deletes apimsync's CRDs from the test control plane, and waits until they are gone.
func deleteCRDs(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, name := range crdNames(t) {
		crd := crdObject()
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, crd); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		// A CRD deleted before its objects' storage is ready (just after the control plane started)
		// stays Terminating for minutes: the API server retries listing its objects with a long backoff.
		listKind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "listKind")
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		eventually(t, func() error {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(group + "/" + v1alpha1.GroupVersion.Version)
			list.SetKind(listKind)
			return k8s.List(ctx, list)
		})
		if err := k8s.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	eventually(t, func() error {
		for _, name := range crdNames(t) {
			crd := crdObject()
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, crd); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s is still there (%v): %v", name, err, crd.Object["status"])
			}
		}
		return nil
	})
}

// adoptCRDs is docs/install.md's step before the first upgrade from a chart with its CRDs in crds/:
// each CRD labelled and annotated as the release's, for Helm to take it over.
func adoptCRDs(t *testing.T, release, ns string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"},"annotations":{"meta.helm.sh/release-name":%q,"meta.helm.sh/release-namespace":%q}}}`, release, ns)
	for _, name := range crdNames(t) {
		crd := crdObject()
		crd.SetName(name)
		if err := k8s.Patch(context.Background(), crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// establishedCRD waits for the CRD name to be established, and returns it.
func establishedCRD(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	crd := crdObject()
	eventually(t, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("CRD %s is not established", name)
	})
	return crd
}

// eventually retries f for up to a minute, and fails with its last error.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatal(err)
}
