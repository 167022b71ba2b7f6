package tenant_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	tenantkind "github.com/apimsync/apimsync/controllers/kinds/tenant"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// tenantObjects returns a Tenant of organization org whose provider-account Secret goes to team, with its
// master and password Secrets (the master token given).
func tenantObjects(ns, org, team, token string) (*v1alpha1.Tenant, *corev1.Secret, *corev1.Secret) {
	master := harness.ProviderSecret(ns, "threescale-master", harness.SimURL+"/t/"+simulator.MasterTenant, token)
	password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin-password"},
		StringData: map[string]string{"password": "a-long-password-of-the-admin"}}
	t := &v1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acme"},
		Spec: v1alpha1.TenantSpec{MasterAccountRef: v1alpha1.ProviderAccountRef{Name: master.Name}, OrganizationName: org,
			Username: "admin", Email: "admin@" + org + ".example.com", PasswordRef: v1alpha1.LocalSecretKeyRef{Name: password.Name, Key: "password"},
			ProviderAccountSecret: v1alpha1.TenantSecretRef{Namespace: team}}}
	return t, master, password
}

// consent annotates namespace team so that the Tenants may write their provider-account Secret there.
func consent(t *testing.T, team string, tenants ...*v1alpha1.Tenant) {
	t.Helper()
	allowed := []string{"someone/else"}
	for _, tenant := range tenants {
		allowed = append(allowed, tenant.Namespace+"/"+tenant.Name)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}
	harness.Update(t, ns, func() {
		ns.SetAnnotations(map[string]string{tenantkind.SecretWritersAnnotation: strings.Join(allowed, ", ")})
	})
}

// masterClient is a client of the simulator's master portal.
func masterClient(t *testing.T) *tsclient.Client {
	t.Helper()
	c, err := tsclient.New(tsclient.Config{AdminURL: harness.SimURL + "/t/" + simulator.MasterTenant, Token: harness.MasterToken,
		Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTenantConnectsATeamNamespace: a Tenant signs a tenant up through the master API, activates its
// admin, and writes its provider-account Secret into the team's namespace, whose objects then sync to the
// new tenant; deleting the Tenant schedules the tenant's deletion in 3scale (announced with the date) and
// deletes the Secret it wrote.
func TestTenantConnectsATeamNamespace(t *testing.T) {
	ns, team := harness.NewNamespace(t), harness.NewNamespace(t)
	tenant, master, password := tenantObjects(ns, "org-"+ns, team, harness.MasterToken)
	consent(t, team, tenant)
	harness.Create(t, master, password, tenant)
	harness.WaitState(t, v1alpha1.ConditionSynced, tenant)
	if tenant.Status.TenantID == 0 || !strings.Contains(tenant.Status.AdminURL, "/t/org-") || tenant.Status.State != "approved" {
		t.Errorf("status: id %d, admin URL %q, state %q", tenant.Status.TenantID, tenant.Status.AdminURL, tenant.Status.State)
	}
	var secret corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: team, Name: v1alpha1.DefaultProviderAccountSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["adminURL"]) != tenant.Status.AdminURL || len(secret.Data["token"]) == 0 || secret.Annotations[tenantkind.UIDAnnotation] != string(tenant.UID) {
		t.Errorf("the team's Secret: adminURL %q, %d bytes of token, annotations %v", secret.Data["adminURL"], len(secret.Data["token"]), secret.Annotations)
	}
	users, err := masterClient(t).ListTenantUsers(context.Background(), tenant.Status.TenantID)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.Username == "admin" && u.State != "active" {
			t.Errorf("the tenant's admin is %s, want active", u.State)
		}
	}
	for _, leak := range []string{string(secret.Data["token"]), "a-long-password-of-the-admin"} {
		if strings.Contains(strings.Join(harness.EventsOf(t, tenant), "\n"), leak) || strings.Contains(harness.ManagerLogs.String(), leak) {
			t.Errorf("a credential is in an event or the manager's log")
		}
	}

	// The team's namespace syncs to its new tenant.
	slug := tenant.Status.AdminURL[strings.LastIndex(tenant.Status.AdminURL, "/")+1:]
	backend := harness.PetsBackend(team)
	before := harness.Sim.Count(slug, simulator.KindBackendAPIs) // porta's signup makes a first "API" on an echo backend
	harness.Create(t, backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	if n := harness.Sim.Count(slug, simulator.KindBackendAPIs); n != before+1 {
		t.Errorf("%d backends in the new tenant, want %d", n, before+1)
	}
	harness.DeleteObjects(t, backend)
	harness.WaitGone(t, backend)

	harness.DeleteObjects(t, tenant)
	harness.WaitGone(t, tenant)
	got, err := masterClient(t).GetTenant(context.Background(), tenant.Status.TenantID)
	if err != nil || got.State != "scheduled_for_deletion" || got.DeletionDate == "" {
		t.Errorf("the tenant after its Tenant's deletion: %+v, %v; want scheduled for deletion, with a date", got, err)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(&secret), &secret); err == nil {
		t.Errorf("the Secret the Tenant wrote is still there")
	}
}

// TestTenantBadInput: a refused master token is Invalid; a missing password Secret waits; a Secret of that
// name that the Tenant did not write is left alone, and no tenant is made.
func TestTenantBadInput(t *testing.T) {
	ns, team := harness.NewNamespace(t), harness.NewNamespace(t)
	refused, master, password := tenantObjects(ns, "refused-"+ns, team, "not-the-master-token")
	consent(t, team, refused)
	harness.Create(t, master, password, refused)
	harness.WaitReason(t, refused, v1alpha1.ConditionInvalid, v1alpha1.ReasonUnauthorized)

	other := harness.NewNamespace(t)
	waiting, master2, _ := tenantObjects(other, "waiting-"+other, team, harness.MasterToken)
	consent(t, team, refused, waiting)
	harness.Create(t, master2, waiting)
	harness.WaitReason(t, waiting, v1alpha1.ConditionOrphan, v1alpha1.ReasonSecretNotFound)

	theirs := harness.ProviderSecret(team, v1alpha1.DefaultProviderAccountSecret, "https://someone-admin.example.com", "their-token")
	harness.Create(t, theirs)
	before := len(harness.Sim.Writes(simulator.MasterTenant))
	harness.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "admin-password"},
		StringData: map[string]string{"password": "a-long-password-of-the-admin"}})
	harness.WaitReason(t, waiting, v1alpha1.ConditionInvalid, v1alpha1.ReasonSecretNotOurs)
	if n := len(harness.Sim.Writes(simulator.MasterTenant)); n != before {
		t.Errorf("%d writes to the master API, want none: no tenant is made for a Secret it cannot write", n-before)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || string(theirs.Data["token"]) != "their-token" {
		t.Errorf("someone else's Secret was touched: %v", err)
	}

	// A namespace that does not exist: the Secret could not be written, so no tenant is made (its
	// token would be lost).
	third := harness.NewNamespace(t)
	nowhere, master3, password3 := tenantObjects(third, "nowhere-"+third, "no-such-namespace", harness.MasterToken)
	before = len(harness.Sim.Writes(simulator.MasterTenant))
	harness.Create(t, master3, password3, nowhere)
	harness.WaitReason(t, nowhere, v1alpha1.ConditionOrphan, v1alpha1.ReasonSecretNotWritable)
	if n := len(harness.Sim.Writes(simulator.MasterTenant)); n != before {
		t.Errorf("%d writes to the master API for a Secret that cannot be written, want none", n-before)
	}
}

// TestTenantWritesSecretsOnlyWhereAllowed: a Tenant writes its provider-account Secret into its own
// namespace, or into one whose Namespace names it in apimsync.io/tenant-secret-writers; anywhere else
// (kube-system, another team's namespace) it waits and says how to consent, with no tenant made and no
// Secret written. The tenant's Secret allows plain http only because the master's Secret did.
func TestTenantWritesSecretsOnlyWhereAllowed(t *testing.T) {
	ns, team := harness.NewNamespace(t), harness.NewNamespace(t)
	for _, target := range []string{"kube-system", team} {
		planter, master, password := tenantObjects(ns, "planter-"+ns, target, harness.MasterToken)
		planter.Name = "planter-" + strings.ReplaceAll(target, "-system", "")[:4]
		before := len(harness.Sim.Writes(simulator.MasterTenant))
		harness.Create(t, planter)
		if target == "kube-system" {
			harness.Create(t, master, password)
		}
		harness.WaitReason(t, planter, v1alpha1.ConditionOrphan, v1alpha1.ReasonNamespaceNotConsented)
		if _, _, msg := harness.SyncState(t, planter); !strings.Contains(msg, "kubectl annotate namespace "+target+" "+tenantkind.SecretWritersAnnotation+"="+ns+"/"+planter.Name) {
			t.Errorf("the message %q does not say how to consent", msg)
		}
		if n := len(harness.Sim.Writes(simulator.MasterTenant)); n != before {
			t.Errorf("%d writes to the master API for a namespace that did not consent", n-before)
		}
		var secret corev1.Secret
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: target, Name: v1alpha1.DefaultProviderAccountSecret}, &secret); err == nil {
			t.Errorf("a Secret was written into %s", target)
		}
		harness.DeleteObjects(t, planter)
		harness.WaitGone(t, planter)
	}

	// Its own namespace needs no consent.
	own, _, _ := tenantObjects(ns, "own-"+ns, ns, harness.MasterToken)
	harness.Create(t, own)
	harness.WaitState(t, v1alpha1.ConditionSynced, own)
	var secret corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v1alpha1.DefaultProviderAccountSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data[kit.SecretKeyAllowInsecureHTTP]) != "true" {
		t.Errorf("the tenant's Secret lost the master Secret's opt-in to plain http")
	}
}

// TestTenantSecretAllowsHTTPOnlyByTheMastersOptIn: the opt-in to plain http is copied from the master
// Secret, never derived from the admin URL that signup answered.
func TestTenantSecretAllowsHTTPOnlyByTheMastersOptIn(t *testing.T) {
	tenant, _, _ := tenantObjects("platform", "acme", "team", harness.MasterToken)
	cases := map[string]struct {
		want     tenantkind.Desired
		adminURL string
		allowed  bool
	}{
		"master opted in, http":      {tenantkind.Desired{AllowInsecureHTTP: true}, "http://acme-admin.example.com", true},
		"master did not, http":       {tenantkind.Desired{}, "http://acme-admin.example.com", false},
		"master opted in, but https": {tenantkind.Desired{AllowInsecureHTTP: true}, "https://acme-admin.example.com", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().Build()
			s := &tenantkind.Syncer{Writer: c}
			if err := s.WriteSecret(context.Background(), tenant, tc.want, tc.adminURL, "tok"); err != nil {
				t.Fatal(err)
			}
			var secret corev1.Secret
			if err := c.Get(context.Background(), tenantkind.SecretKey(tenant), &secret); err != nil {
				t.Fatal(err)
			}
			if _, got := secret.Data[kit.SecretKeyAllowInsecureHTTP]; got != tc.allowed {
				t.Errorf("allowInsecureHTTP set: %v, want %v", got, tc.allowed)
			}
		})
	}
}

// TestRestoredTenantAdoptsItsTenant: a Tenant applied again without its status (a restore from Git)
// finds its tenant on master and adopts it, announced, with the Secret a Tenant of its name wrote: never
// a second signup. Without that Secret it is Invalid and says what to do; a Secret written as it says
// is adopted, and a tenant scheduled for deletion is resumed, announced as such.
func TestRestoredTenantAdoptsItsTenant(t *testing.T) {
	ns := harness.NewNamespace(t)
	tenant, master, password := tenantObjects(ns, "restored-"+ns, ns, harness.MasterToken)
	tenant.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	harness.Create(t, master, password, tenant)
	harness.WaitState(t, v1alpha1.ConditionSynced, tenant)
	id := tenant.Status.TenantID
	signups := func() int {
		n := 0
		for _, w := range harness.Sim.Writes(simulator.MasterTenant) {
			if w.Method == "POST" && w.Endpoint == "/master/api/providers.json" {
				n++
			}
		}
		return n
	}
	before := signups()

	restore := func() *v1alpha1.Tenant {
		harness.DeleteObjects(t, tenant)
		harness.WaitGone(t, tenant)
		again, _, _ := tenantObjects(ns, "restored-"+ns, ns, harness.MasterToken)
		again.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
		harness.Create(t, again)
		return again
	}
	tenant = restore()
	harness.WaitState(t, v1alpha1.ConditionSynced, tenant)
	if tenant.Status.TenantID != id {
		t.Errorf("the restored Tenant records tenant %d, want %d", tenant.Status.TenantID, id)
	}
	harness.WantEvent(t, tenant, "adopted existing")
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: ns, Name: v1alpha1.DefaultProviderAccountSecret}
	if err := harness.K8s.Get(context.Background(), key, &secret); err != nil || secret.Annotations[tenantkind.UIDAnnotation] != string(tenant.UID) {
		t.Errorf("the provider-account Secret is not under the restored Tenant's control: %v %v", err, secret.Annotations)
	}

	// Restored without its Secret: Invalid, saying what to do; no signup.
	token := secret.Data[kit.SecretKeyToken]
	if err := harness.K8s.Delete(context.Background(), &secret); err != nil {
		t.Fatal(err)
	}
	tenant = restore()
	harness.WaitReason(t, tenant, v1alpha1.ConditionInvalid, v1alpha1.ReasonTenantTokenLost)
	_, _, msg := harness.SyncState(t, tenant)
	if !strings.Contains(msg, tenantkind.Annotation+"="+ns+"/"+tenant.Name) || !strings.Contains(msg, "adminURL=") {
		t.Errorf("the message %q does not say how to hand the token over", msg)
	}
	// Meanwhile its tenant was scheduled for deletion; the Secret is written as the message says.
	if err := masterClient(t).DeleteTenant(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	handed := harness.ProviderSecret(ns, v1alpha1.DefaultProviderAccountSecret, tenant.Status.AdminURL, string(token))
	handed.StringData["adminURL"] = adminURLOf(t, id)
	handed.Annotations = map[string]string{tenantkind.Annotation: ns + "/" + tenant.Name}
	harness.Create(t, handed)
	harness.Update(t, tenant, func() { tenant.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "handed"}) })
	harness.WaitState(t, v1alpha1.ConditionSynced, tenant)
	harness.WantEvent(t, tenant, "scheduled for deletion")
	got, err := masterClient(t).GetTenant(context.Background(), id)
	if err != nil || got.State != "approved" {
		t.Errorf("the adopted tenant: %+v, %v; want it resumed", got, err)
	}
	if n := signups() - before; n != 0 {
		t.Errorf("%d signups after restores, want 0", n)
	}
}

// adminURLOf reads a tenant's admin URL from master.
func adminURLOf(t *testing.T, id int64) string {
	t.Helper()
	got, err := masterClient(t).GetTenant(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got.AdminBaseURL
}
