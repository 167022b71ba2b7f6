package tenantsettings_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const webhooksPut = "/admin/api/webhooks.json"

// settings is a TenantSettings of the namespace's tenant.
func settings(ns, name string) *v1alpha1.TenantSettings {
	return &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.TenantSettingsSpec{
			Account: &v1alpha1.ProviderDetails{FromEmail: ptr.To("no-reply@acme.example"), SupportEmail: ptr.To("support@acme.example"),
				SiteAccessCode: ptr.To("")},
			Webhooks: &v1alpha1.WebhooksSpec{URL: "https://hooks.acme.example/3scale", Events: []v1alpha1.WebhookEvent{"account_created", "application_created"}},
		}}
}

// only is the one object of a kind the simulator holds for ns.
func only(t *testing.T, ns, kind string) map[string]any {
	t.Helper()
	objs := harness.Sim.Objects(ns, kind)
	if len(objs) != 1 {
		t.Fatalf("%d %s, want 1", len(objs), kind)
	}
	return objs[0]
}

// TestTenantSettings (issue 45): a TenantSettings takes the tenant's provider account over (announced),
// sets its details in one call and its webhook in one; a detail changed by hand comes back on a drift
// check, while the webhook, which porta cannot read back, is written again only when the spec changes. A
// second TenantSettings of the tenant is Invalid, naming the first, and writes nothing. Deleted, it
// leaves the settings as they are.
func TestTenantSettings(t *testing.T) {
	ns := harness.NewNamespace(t)
	s := settings(ns, "settings")
	harness.Create(t, harness.DefaultSecret(ns), s)
	harness.WaitState(t, v1alpha1.ConditionSynced, s)
	harness.WantEvent(t, s, "Adopted")
	p := only(t, ns, simulator.KindProvider)
	if p["from_email"] != "no-reply@acme.example" || p["support_email"] != "support@acme.example" || fmt.Sprint(p["id"]) != fmt.Sprint(s.Status.ProviderAccountID) {
		t.Errorf("the provider account %v, want the spec's emails (recorded %d)", p, s.Status.ProviderAccountID)
	}
	w := only(t, ns, simulator.KindWebhooks)
	if w["url"] != "https://hooks.acme.example/3scale" || w["active"] != true || w["account_created_on"] != true || w["application_created_on"] != true || w["user_created_on"] != false {
		t.Errorf("the webhook %v, want the spec's URL, active, account and application created on, the rest off", w)
	}

	// A detail changed by hand comes back; the webhook is not written again.
	if _, err := harness.ByHand(t, ns).UpdateProvider(context.Background(), tsclient.ProviderParams{SupportEmail: ptr.To("hacked@evil.example")}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, s, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if p := only(t, ns, simulator.KindProvider); p["support_email"] != "support@acme.example" {
			return "support email " + p["support_email"].(string)
		}
		return ""
	})
	if n := harness.RequestsTo(ns, "PUT", webhooksPut); n != 1 {
		t.Errorf("%d webhook writes, want 1 (the spec did not change)", n)
	}
	harness.EditAndWait(t, s, func() { s.Spec.Webhooks.Events = append(s.Spec.Webhooks.Events, "user_created") })
	if n := harness.RequestsTo(ns, "PUT", webhooksPut); n != 2 || only(t, ns, simulator.KindWebhooks)["user_created_on"] != true {
		t.Errorf("after the edit: %d webhook writes, want 2, user_created on", n)
	}
	if _, _, msg := harness.SyncState(t, s); !strings.Contains(msg, "porta's API cannot read it back") {
		t.Errorf("the Synced message does not say the webhook cannot be read back: %q", msg)
	}

	// A second one: Invalid, nothing written.
	before := harness.WritesTo(ns)
	second := settings(ns, "more-settings")
	harness.Create(t, second)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if state, _, msg := harness.SyncState(t, second); state != v1alpha1.ConditionInvalid || !strings.Contains(msg, `"settings"`) || !strings.Contains(msg, "one set of settings") {
			return string(state) + ": " + msg
		}
		return ""
	})
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("the second TenantSettings wrote %d times: %v", n, harness.LastWrites(ns, n))
	}

	// Deleted: nothing written, the settings stay.
	before = harness.WritesTo(ns)
	harness.DeleteObjects(t, second, s)
	harness.WaitGone(t, second, s)
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("deleting the TenantSettings wrote %d times: %v", n, harness.LastWrites(ns, n))
	}
	if p := only(t, ns, simulator.KindProvider); p["support_email"] != "support@acme.example" {
		t.Errorf("after the deletion: %v, want the settings kept", p)
	}
}

// TestEmptySupportEmailIsRefusedAtApply: porta shows the admin's email for an empty support email, which
// a spec could never match: the API server refuses "" at apply time.
func TestEmptySupportEmailIsRefusedAtApply(t *testing.T) {
	ns := harness.NewNamespace(t)
	s := settings(ns, "settings")
	s.Spec.Account.SupportEmail = ptr.To("")
	if err := harness.K8s.Create(context.Background(), s); err == nil || !strings.Contains(err.Error(), "supportEmail") {
		t.Errorf("an empty support email: %v, want refused", err)
	}
}

// TestUnmanagedReport (issue 45): with unmanaged.report, the TenantSettings counts what of the tenant no
// apimsync object holds, by kind, in status and in the gauge apimsync_unmanaged_objects; an object that
// takes a hand-made backend over leaves the count at the next check; the report turned off clears both.
func TestUnmanagedReport(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	if _, err := harness.ByHand(t, ns).CreateBackend(context.Background(), tsclient.BackendParams{Name: "Pets", SystemName: "pets",
		PrivateEndpoint: "https://pets.internal"}); err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Spec: v1alpha1.TenantSettingsSpec{Unmanaged: &v1alpha1.UnmanagedSpec{Report: true}}}
	harness.Create(t, s)
	harness.WaitState(t, v1alpha1.ConditionSynced, s)
	gauge := func(kind string) float64 {
		return testutil.ToFloat64(engine.UnmanagedObjects.WithLabelValues(s.Status.TenantHost, kind))
	}
	if s.Status.Unmanaged["Backend"] != 1 || s.Status.Unmanaged["AccountPlan"] != 1 || gauge("Backend") != 1 {
		t.Fatalf("status.unmanaged %v, gauge of backends %v; want the hand-made backend and porta's Default account plan", s.Status.Unmanaged, gauge("Backend"))
	}

	// A Backend takes the hand-made one over: at the next check, no backend is unmanaged.
	backend := harness.PetsBackend(ns)
	harness.Create(t, backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	harness.SyncNow(t, s, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		harness.SyncState(t, s)
		if _, listed := s.Status.Unmanaged["Backend"]; listed || gauge("Backend") != 0 {
			return fmt.Sprintf("status.unmanaged %v, gauge %v", s.Status.Unmanaged, gauge("Backend"))
		}
		return ""
	})

	// Report off: status and gauge cleared.
	harness.EditAndWait(t, s, func() { s.Spec.Unmanaged = nil })
	if n := testutil.CollectAndCount(engine.UnmanagedObjects); s.Status.Unmanaged != nil || n != 0 {
		t.Errorf("with the report off: status.unmanaged %v, %d gauge series; want both cleared", s.Status.Unmanaged, n)
	}
}

// TestAdminSignIn (issue 45): an admin-portal sign-in provider whose client-secret Secret is missing
// leaves the TenantSettings Orphan; the Secret's arrival makes it Synced, with the provider created from
// it — the secret never in status, conditions or Events. A rotated secret is written once; a provider
// left out of the spec is unpublished (porta cannot delete one) and forgotten.
func TestAdminSignIn(t *testing.T) {
	ns := harness.NewNamespace(t)
	s := &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Spec: v1alpha1.TenantSettingsSpec{AdminSignIn: []v1alpha1.AdminSignInProvider{{Kind: "keycloak", SystemName: "corp-sso", ClientID: "3scale-admin",
			ClientSecretRef: v1alpha1.LocalSecretKeyRef{Name: "sso", Key: "clientSecret"}, Site: "https://sso.acme.example/auth/realms/acme"}}}}
	harness.Create(t, harness.DefaultSecret(ns), s)
	harness.WaitReason(t, s, v1alpha1.ConditionOrphan, v1alpha1.ReasonSecretNotFound)
	const secret = "s3cr3t-client-value"
	sso := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sso"}, StringData: map[string]string{"clientSecret": secret}}
	harness.Create(t, sso)
	harness.WaitState(t, v1alpha1.ConditionSynced, s)
	p := only(t, ns, simulator.KindAdminSignInProviders)
	if p["client_secret"] != secret || p["client_id"] != "3scale-admin" || p["published"] != true || p["system_name"] != "corp-sso" {
		t.Errorf("the provider %v, want the spec's, published, with the Secret's client secret", p)
	}
	if fmt.Sprint(s.Status.AdminSignIn["corp-sso"]) != fmt.Sprint(p["id"]) {
		t.Errorf("status records %v, want corp-sso's id %v", s.Status.AdminSignIn, p["id"])
	}
	shown := fmt.Sprint(s.Status) + strings.Join(harness.EventsOf(t, s), " ")
	if strings.Contains(shown, secret) {
		t.Errorf("the client secret shows in status or Events: %s", shown)
	}

	// A rotated secret: one update.
	puts := harness.RequestsTo(ns, "PUT", "/admin/api/account/authentication_providers/{id}.json")
	harness.Update(t, sso, func() { sso.StringData = map[string]string{"clientSecret": secret + "-2"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if p := only(t, ns, simulator.KindAdminSignInProviders); p["client_secret"] != secret+"-2" {
			return "client secret not rotated"
		}
		return ""
	})
	if n := harness.RequestsTo(ns, "PUT", "/admin/api/account/authentication_providers/{id}.json"); n != puts+1 {
		t.Errorf("%d provider updates for one rotation, want 1", n-puts)
	}

	// Left out of the spec: unpublished, forgotten.
	harness.EditAndWait(t, s, func() { s.Spec.AdminSignIn = nil })
	if p := only(t, ns, simulator.KindAdminSignInProviders); p["published"] != false {
		t.Errorf("the provider let go %v, want it unpublished", p)
	}
	if s.Status.AdminSignIn != nil {
		t.Errorf("status still records %v", s.Status.AdminSignIn)
	}
}
