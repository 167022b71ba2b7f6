package tenantsettings_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/plugin"
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
	if listedProvider(t, ns, s) {
		t.Errorf("diff --unmanaged lists corp-sso, which the TenantSettings holds")
	}
	shown := fmt.Sprint(s.Status) + strings.Join(harness.EventsOf(t, s), " ")
	if strings.Contains(shown, secret) {
		t.Errorf("the client secret shows in status or Events: %s", shown)
	}

	// A provider made by hand exactly as a spec entry asks is taken with no write, and recorded.
	ctx := context.Background()
	hand, err := harness.ByHand(t, ns).CreateAdminAuthenticationProvider(ctx, tsclient.AuthenticationProviderParams{Kind: "auth0", SystemName: "hand-sso",
		ClientID: ptr.To("hand"), ClientSecret: ptr.To(secret), Site: ptr.To("https://acme.eu.auth0.com"), Published: ptr.To(true),
		SkipSSLCertificateVerification: ptr.To(false)})
	if err != nil {
		t.Fatal(err)
	}
	writes := harness.WritesTo(ns)
	harness.EditAndWait(t, s, func() { // with a sync-now: 3scale is read again, not the cached read before the provider was made
		s.Spec.AdminSignIn = append(s.Spec.AdminSignIn, v1alpha1.AdminSignInProvider{Kind: "auth0", SystemName: "hand-sso", ClientID: "hand",
			ClientSecretRef: v1alpha1.LocalSecretKeyRef{Name: "sso", Key: "clientSecret"}, Site: "https://acme.eu.auth0.com"})
		s.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "hand-sso"})
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		harness.SyncState(t, s)
		if s.Status.AdminSignIn["hand-sso"] != hand.ID {
			return fmt.Sprintf("status.adminSignIn %v, want hand-sso %d recorded", s.Status.AdminSignIn, hand.ID)
		}
		return ""
	})
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes taking a matching provider, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}
	harness.EditAndWait(t, s, func() { s.Spec.AdminSignIn = s.Spec.AdminSignIn[:1] })

	// A rotated secret: one update.
	puts := harness.RequestsTo(ns, "PUT", "/admin/api/account/authentication_providers/{id}.json")
	harness.Update(t, sso, func() { sso.StringData = map[string]string{"clientSecret": secret + "-2"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if p := adminProvider(ns, "corp-sso"); p["client_secret"] != secret+"-2" {
			return "client secret not rotated"
		}
		return ""
	})
	if n := harness.RequestsTo(ns, "PUT", "/admin/api/account/authentication_providers/{id}.json"); n != puts+1 {
		t.Errorf("%d provider updates for one rotation, want 1", n-puts)
	}

	// Left out of the spec: unpublished, forgotten.
	harness.EditAndWait(t, s, func() { s.Spec.AdminSignIn = nil })
	for _, p := range harness.Sim.Objects(ns, simulator.KindAdminSignInProviders) {
		if p["published"] != false {
			t.Errorf("the provider let go %v, want it unpublished", p)
		}
	}
	if s.Status.AdminSignIn != nil {
		t.Errorf("status still records %v", s.Status.AdminSignIn)
	}
	if !listedProvider(t, ns, s) {
		t.Errorf("diff --unmanaged does not list corp-sso, let go")
	}
}

// adminProvider is the simulator's admin-portal sign-in provider of a system name (nil: none).
func adminProvider(ns, systemName string) map[string]any {
	for _, p := range harness.Sim.Objects(ns, simulator.KindAdminSignInProviders) {
		if p["system_name"] == systemName {
			return p
		}
	}
	return nil
}

// listedProvider tells whether diff --unmanaged lists the tenant's admin-portal provider corp-sso.
func listedProvider(t *testing.T, ns string, s *v1alpha1.TenantSettings) bool {
	t.Helper()
	items, err := controllers.UnmanagedObjects(context.Background(), harness.K8s, harness.TenantClient(t, ns), s.Status.TenantHost)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(items, func(it plugin.RemoteItem) bool { return it.Kind == "TenantSettings" && it.SystemName == "corp-sso" })
}

// madeByHand makes, behind apimsync's back, a backend, a product with a plan, an account with an
// application on it that had traffic an hour ago, and a member of the tenant's admin portal.
type madeByHand struct {
	backend, product, account, app, member int64
}

func makeByHand(t *testing.T, ns string) madeByHand {
	t.Helper()
	c, ctx := harness.ByHand(t, ns), context.Background()
	var m madeByHand
	steps := []func() error{
		func() error {
			b, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Legacy", SystemName: "legacy", PrivateEndpoint: "https://legacy.internal"})
			m.backend = b.ID
			return err
		},
		func() error {
			p, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop", DeploymentOption: "hosted", BackendVersion: "1"})
			m.product = p.ID
			return err
		},
		func() error {
			a, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example", Password: "a-long-enough-password"})
			m.account = a.ID
			return err
		},
		func() error {
			plan, err := c.CreatePlan(ctx, m.product, tsclient.PlanParams{Name: "Basic", SystemName: "basic"})
			if err != nil {
				return err
			}
			app, err := c.CreateApplication(ctx, m.account, tsclient.ApplicationParams{PlanID: plan.ID, Name: "Globex app"})
			m.app = app.ID
			return err
		},
		func() error {
			u, err := c.CreateAdminUser(ctx, tsclient.UserParams{Username: "intern", Email: "intern@acme.example"})
			m.member = u.ID
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if !harness.Sim.SetTraffic(ns, m.app, time.Now().Add(-time.Hour)) {
		t.Fatal("cannot set the application's traffic")
	}
	return m
}

// pruning is a TenantSettings pruning kinds after a grace period of 2 s.
func pruning(ns string, kinds ...v1alpha1.PrunableKind) *v1alpha1.TenantSettings {
	return &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Spec: v1alpha1.TenantSettingsSpec{Unmanaged: &v1alpha1.UnmanagedSpec{Prune: &v1alpha1.PruneSpec{Kinds: kinds,
			GracePeriod: &metav1.Duration{Duration: 2 * time.Second}}}}}
}

// TestPrune (issue 45): with an explicit prune list, the tenant's objects of those kinds no apimsync
// object holds are deleted once they stayed so for the grace period, each with a Pruned Event; what an
// object holds is never touched, an admin is never pruned, and a product or account whose application
// had traffic in the last 30 days is kept (a PruneKept Event says why) until its kind is listed in
// withTraffic.
func TestPrune(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	m := makeByHand(t, ns)
	s := pruning(ns, "Backend", "Product", "DeveloperAccount", "AdminUser")
	harness.Create(t, s)
	harness.WaitState(t, v1alpha1.ConditionSynced, s)
	if len(s.Status.Pruning) == 0 {
		t.Fatalf("status.pruning is empty: the hand-made objects were not recorded as candidates")
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if harness.Sim.Count(ns, simulator.KindBackendAPIs) != 1 {
			return "the hand-made backend is still there"
		}
		if u, _ := harness.ByHand(t, ns).GetAdminUser(context.Background(), m.member); u != nil {
			return "the hand-made member is still there"
		}
		return ""
	})
	harness.WantEvent(t, s, "Pruned")
	if _, err := harness.ByHand(t, ns).GetBackend(context.Background(), backend.Status.BackendID); err != nil {
		t.Errorf("the backend apimsync holds: %v", err)
	}
	if _, err := harness.ByHand(t, ns).GetAdminUser(context.Background(), harness.Sim.FirstAdminID(ns)); err != nil {
		t.Errorf("the tenant's admin: %v, want it kept (admins are never pruned)", err)
	}
	for what, id := range map[string]int64{"product": m.product, "account": m.account} {
		var err error
		if what == "product" {
			_, err = harness.ByHand(t, ns).GetProduct(context.Background(), id)
		} else {
			_, err = harness.ByHand(t, ns).GetAccount(context.Background(), id)
		}
		if err != nil {
			t.Errorf("the %s with live traffic: %v, want it kept", what, err)
		}
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		events := strings.Join(harness.EventsOf(t, s), "\n")
		for _, want := range []string{"kept Product", "kept DeveloperAccount", "had traffic on", "an admin is never pruned", "deleted AdminUser"} {
			if !strings.Contains(events, want) {
				got := &v1alpha1.TenantSettings{}
				_ = harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(s), got)
				return fmt.Sprintf("no Event says %q: %s\npruning %+v users %v deletes %d", want, events, got.Status.Pruning,
					harness.Sim.Objects(ns, simulator.KindAdminUsers), harness.RequestsTo(ns, "DELETE", "/admin/api/users/{id}.json"))
			}
		}
		return ""
	})

	// Opted in for products: the product goes, and its application with it.
	harness.Update(t, s, func() { s.Spec.Unmanaged.Prune.WithTraffic = []v1alpha1.TrafficKind{"Product"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, err := harness.ByHand(t, ns).GetProduct(context.Background(), m.product); !tsclient.IsNotFound(err) {
			return fmt.Sprintf("the product opted in: %v", err)
		}
		return ""
	})
}

// TestPruneNothingWhenInvalid (issue 45): a prune list on a TenantSettings that is Invalid — here the
// second one of its tenant — prunes nothing.
func TestPruneNothingWhenInvalid(t *testing.T) {
	ns := harness.NewNamespace(t)
	m := makeByHand(t, ns)
	first := &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"},
		Spec: v1alpha1.TenantSettingsSpec{Account: &v1alpha1.ProviderDetails{SiteAccessCode: ptr.To("")}}}
	harness.Create(t, harness.DefaultSecret(ns), first)
	harness.WaitState(t, v1alpha1.ConditionSynced, first)
	s := pruning(ns, "Backend", "AdminUser")
	harness.Create(t, s)
	harness.WaitReason(t, s, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteOwnedByOtherResource)
	time.Sleep(3 * time.Second) // past the grace period
	if _, err := harness.ByHand(t, ns).GetBackend(context.Background(), m.backend); err != nil {
		t.Errorf("the hand-made backend: %v, want it kept (the settings are Invalid)", err)
	}
	if n := harness.RequestsTo(ns, "DELETE", "/admin/api/backend_apis/{id}.json") + harness.RequestsTo(ns, "DELETE", "/admin/api/users/{id}.json"); n != 0 {
		t.Errorf("%d deletions, want none", n)
	}
}

// TestPruneWaitsForObjectsToSync (issue 45): while an object of a pruned kind holds no 3scale id yet
// (here a Backend waiting for its Secret, which would adopt the hand-made backend of its system name),
// that kind is not pruned — a PruneKept Event names the object — and once it syncs, what it took is held.
func TestPruneWaitsForObjectsToSync(t *testing.T) {
	ns := harness.NewNamespace(t)
	m := makeByHand(t, ns)
	legacy := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"},
		Spec: v1alpha1.BackendSpec{Name: "Legacy", SystemName: "legacy", PrivateBaseURL: "https://legacy.internal",
			CommonSpec: v1alpha1.CommonSpec{ProviderAccountRef: &v1alpha1.ProviderAccountRef{Name: "later"}}}}
	s := pruning(ns, "Backend")
	harness.Create(t, harness.DefaultSecret(ns), legacy, s)
	harness.WaitReason(t, legacy, v1alpha1.ConditionOrphan, v1alpha1.ReasonProviderAccountNotFound)
	harness.WantEvent(t, s, "holds no 3scale id yet")
	if _, err := harness.ByHand(t, ns).GetBackend(context.Background(), m.backend); err != nil {
		t.Fatalf("the hand-made backend: %v, want it kept while Backend legacy has not synced", err)
	}
	adminURL, token := harness.TenantOf(ns)
	harness.Create(t, harness.ProviderSecret(ns, "later", adminURL, token))
	harness.WaitState(t, v1alpha1.ConditionSynced, legacy)
	if legacy.Status.BackendID != m.backend {
		t.Errorf("Backend legacy holds %d, want the hand-made backend %d (adopted, not pruned)", legacy.Status.BackendID, m.backend)
	}
}
