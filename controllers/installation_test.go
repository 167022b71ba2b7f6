package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// apiManager returns a namespace's APIManager (3scale-operator's installation) with these spec fields.
func apiManager(ns string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(kit.APIManagerGVK)
	u.SetNamespace(ns)
	u.SetName("apimanager")
	return u
}

func systemSeed(ns string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kit.SystemSeedSecret}, StringData: data}
}

// TestInstallationIsTheThirdProviderAccount: an object that names no provider account, in a namespace
// without the threescale-provider-account Secret, syncs with the namespace's 3scale installation (the
// system-seed Secret's admin token, the APIManager's tenant); until both are there it waits, and its message
// names the three places looked at. It is woken when each appears, the seed is protected while the object
// needs it, and the deletion cleans 3scale up through it.
func TestInstallationIsTheThirdProviderAccount(t *testing.T) {
	ns := harness.NewNamespace(t)
	_, token := harness.TenantOf(ns)
	b := harness.PetsBackend(ns)
	harness.Create(t, b)
	harness.WaitState(t, v1alpha1.ConditionOrphan, b)
	_, reason, msg := harness.SyncState(t, b)
	for _, place := range []string{"spec.providerAccountRef", `"threescale-provider-account"`, `"system-seed"`} {
		if reason != v1alpha1.ReasonProviderAccountNotFound || !strings.Contains(msg, place) {
			t.Errorf("Orphan %s: %q, want %s naming %s", reason, msg, v1alpha1.ReasonProviderAccountNotFound, place)
		}
	}

	// The seed alone does not tell the admin URL: still waiting, now for the APIManager.
	harness.Create(t, systemSeed(ns, map[string]string{kit.SystemSeedAdminToken: token, "MASTER_ACCESS_TOKEN": "master-secret", "TENANT_NAME": ns}))
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, _, msg := harness.SyncState(t, b); !strings.Contains(msg, "no APIManager") {
			return "message " + msg
		}
		return ""
	})
	harness.Create(t, apiManager(ns, map[string]any{"wildcardDomain": ns + harness.InstallationDomain, "tenantName": ns}))
	harness.WaitState(t, v1alpha1.ConditionSynced, b)
	if b.Status.ProviderAccountSecret != kit.SystemSeedSecret || b.Status.BackendID == 0 {
		t.Errorf("status: provider account %q, id %d; want %q and an id", b.Status.ProviderAccountSecret, b.Status.BackendID, kit.SystemSeedSecret)
	}
	if n := harness.Sim.Count(ns, simulator.KindBackendAPIs); n != 1 {
		t.Errorf("%d backends in the installation's tenant, want 1", n)
	}
	seed := &corev1.Secret{}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: kit.SystemSeedSecret}, seed); err != nil {
			return err.Error()
		}
		if !controllerutil.ContainsFinalizer(seed, controllers.SecretInUseFinalizer) {
			return "the seed has no in-use finalizer: " + strings.Join(seed.Finalizers, ",")
		}
		return ""
	})
	for _, leak := range []string{token, "master-secret"} {
		if strings.Contains(msg, leak) || strings.Contains(strings.Join(harness.EventsOf(t, b), "\n"), leak) {
			t.Errorf("a seed value is in the message or an event")
		}
	}

	if err := harness.K8s.Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, b)
	if n := harness.Sim.Count(ns, simulator.KindBackendAPIs); n != 0 {
		t.Errorf("%d backends left in the installation's tenant, want 0", n)
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(seed), seed); err != nil {
			return err.Error()
		}
		if controllerutil.ContainsFinalizer(seed, controllers.SecretInUseFinalizer) {
			return "the seed keeps its in-use finalizer after the last object using it went"
		}
		return ""
	})
}

// TestInstallationThatCannotBeUsed: a seed without the admin token, or an APIManager without a wildcard
// domain, makes the object Invalid (ProviderAccountInvalid) with what is missing; the default Secret,
// when there, wins over the installation.
func TestInstallationThatCannotBeUsed(t *testing.T) {
	ns := harness.NewNamespace(t)
	b := harness.PetsBackend(ns)
	manager := apiManager(ns, map[string]any{"tenantName": ns})
	seed := systemSeed(ns, map[string]string{"TENANT_NAME": ns})
	harness.Create(t, seed, manager, b)
	harness.WaitState(t, v1alpha1.ConditionInvalid, b)
	if _, reason, msg := harness.SyncState(t, b); reason != v1alpha1.ReasonProviderAccountInvalid || !strings.Contains(msg, "spec.wildcardDomain") {
		t.Errorf("Invalid %s: %q, want %s about spec.wildcardDomain", reason, msg, v1alpha1.ReasonProviderAccountInvalid)
	}
	if err := unstructured.SetNestedField(manager.Object, ns+harness.InstallationDomain, "spec", "wildcardDomain"); err != nil {
		t.Fatal(err)
	}
	if err := harness.K8s.Update(context.Background(), manager); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, reason, msg := harness.SyncState(t, b); reason != v1alpha1.ReasonProviderAccountInvalid || !strings.Contains(msg, kit.SystemSeedAdminToken) {
			return reason + ": " + msg
		}
		return ""
	})
	// The default Secret comes first.
	harness.Create(t, harness.DefaultSecret(ns))
	harness.WaitState(t, v1alpha1.ConditionSynced, b)
	if b.Status.ProviderAccountSecret != v1alpha1.DefaultProviderAccountSecret {
		t.Errorf("synced with %q, want the default Secret", b.Status.ProviderAccountSecret)
	}
}

// TestInstallationAdminURL: the admin portal of an installation's default tenant, as 3scale-operator's
// routes serve it.
func TestInstallationAdminURL(t *testing.T) {
	if got := kit.InstallationAdminURL(kit.DefaultTenantName, "apps.example.com"); got != "https://3scale-admin.apps.example.com" {
		t.Errorf("admin URL %q", got)
	}
}

// TestMovingOffTheInstallationIsAnnounced: objects synced to the installation's tenant move when the
// namespace gains its threescale-provider-account Secret for another tenant; what they leave on the
// installation's tenant is left untouched and announced — an Event, status.leftBehind, and the Synced
// message — never an unannounced copy.
func TestMovingOffTheInstallationIsAnnounced(t *testing.T) {
	ns, other := harness.NewNamespace(t), harness.NewNamespace(t)
	_, token := harness.TenantOf(ns)
	b := harness.PetsBackend(ns)
	harness.Create(t, systemSeed(ns, map[string]string{kit.SystemSeedAdminToken: token, "TENANT_NAME": ns}),
		apiManager(ns, map[string]any{"wildcardDomain": ns + harness.InstallationDomain, "tenantName": ns}), b)
	harness.WaitState(t, v1alpha1.ConditionSynced, b)
	oldID, oldTenant := b.Status.BackendID, b.Status.TenantHost

	adminURL, otherToken := harness.TenantOf(other)
	harness.Create(t, harness.ProviderSecret(ns, v1alpha1.DefaultProviderAccountSecret, adminURL, otherToken))
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if state, _, msg := harness.SyncState(t, b); state != v1alpha1.ConditionSynced || b.Status.TenantHost == oldTenant {
			return "not moved yet: " + state + ": " + msg
		}
		return ""
	})
	if n := harness.Sim.Count(other, simulator.KindBackendAPIs); n != 1 {
		t.Errorf("%d backends on the new tenant, want 1", n)
	}
	if n := harness.Sim.Count(ns, simulator.KindBackendAPIs); n != 1 {
		t.Errorf("%d backends on the installation's tenant, want 1 (left untouched)", n)
	}
	if got := b.Status.LeftBehind; len(got) != 1 || got[0].ID != oldID || got[0].Tenant != oldTenant {
		t.Errorf("status.leftBehind %+v, want backend %d on %s", got, oldID, oldTenant)
	}
	_, _, msg := harness.SyncState(t, b)
	if want := fmt.Sprintf("Backend %d on tenant %s", oldID, oldTenant); !strings.Contains(msg, "left untouched") || !strings.Contains(msg, want) {
		t.Errorf("the Synced message %q does not tell what was left where (%s)", msg, want)
	}
	harness.WantEvent(t, b, v1alpha1.ReasonTenantChanged)
}
