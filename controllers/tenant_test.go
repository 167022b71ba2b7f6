package controllers

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/test/simulator"
)

// tenantObjects returns a Tenant of organization org whose provider-account Secret goes to team, with its
// master and password Secrets (the master token given).
func tenantObjects(ns, org, team, token string) (*v1alpha1.Tenant, *corev1.Secret, *corev1.Secret) {
	master := providerSecret(ns, "threescale-master", simURL+"/t/"+simulator.MasterTenant, token)
	password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin-password"},
		StringData: map[string]string{"password": "a-long-password-of-the-admin"}}
	t := &v1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acme"},
		Spec: v1alpha1.TenantSpec{MasterAccountRef: v1alpha1.ProviderAccountRef{Name: master.Name}, OrganizationName: org,
			Username: "admin", Email: "admin@" + org + ".example.com", PasswordRef: v1alpha1.LocalSecretKeyRef{Name: password.Name, Key: "password"},
			ProviderAccountSecret: v1alpha1.TenantSecretRef{Namespace: team}}}
	return t, master, password
}

// masterClient is a client of the simulator's master portal.
func masterClient(t *testing.T) *tsclient.Client {
	t.Helper()
	c, err := tsclient.New(tsclient.Config{AdminURL: simURL + "/t/" + simulator.MasterTenant, Token: masterToken,
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
	ns, team := newNamespace(t), newNamespace(t)
	tenant, master, password := tenantObjects(ns, "org-"+ns, team, masterToken)
	create(t, master, password, tenant)
	waitState(t, v1alpha1.ConditionSynced, tenant)
	if tenant.Status.TenantID == 0 || !strings.Contains(tenant.Status.AdminURL, "/t/org-") || tenant.Status.State != "approved" {
		t.Errorf("status: id %d, admin URL %q, state %q", tenant.Status.TenantID, tenant.Status.AdminURL, tenant.Status.State)
	}
	var secret corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: team, Name: v1alpha1.DefaultProviderAccountSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["adminURL"]) != tenant.Status.AdminURL || len(secret.Data["token"]) == 0 || secret.Annotations[tenantUIDAnnotation] != string(tenant.UID) {
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
		if strings.Contains(strings.Join(eventsOf(t, tenant), "\n"), leak) || strings.Contains(managerLogs.String(), leak) {
			t.Errorf("a credential is in an event or the manager's log")
		}
	}

	// The team's namespace syncs to its new tenant.
	slug := tenant.Status.AdminURL[strings.LastIndex(tenant.Status.AdminURL, "/")+1:]
	backend := petsBackend(team)
	before := sim.Count(slug, simulator.KindBackendAPIs) // porta's signup makes a first "API" on an echo backend
	create(t, backend)
	waitState(t, v1alpha1.ConditionSynced, backend)
	if n := sim.Count(slug, simulator.KindBackendAPIs); n != before+1 {
		t.Errorf("%d backends in the new tenant, want %d", n, before+1)
	}
	deleteObjects(t, backend)
	waitGone(t, backend)

	deleteObjects(t, tenant)
	waitGone(t, tenant)
	got, err := masterClient(t).GetTenant(context.Background(), tenant.Status.TenantID)
	if err != nil || got.State != "scheduled_for_deletion" || got.DeletionDate == "" {
		t.Errorf("the tenant after its Tenant's deletion: %+v, %v; want scheduled for deletion, with a date", got, err)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(&secret), &secret); err == nil {
		t.Errorf("the Secret the Tenant wrote is still there")
	}
}

// TestTenantBadInput: a refused master token is Invalid; a missing password Secret waits; a Secret of that
// name that the Tenant did not write is left alone, and no tenant is made.
func TestTenantBadInput(t *testing.T) {
	ns, team := newNamespace(t), newNamespace(t)
	refused, master, password := tenantObjects(ns, "refused-"+ns, team, "not-the-master-token")
	create(t, master, password, refused)
	waitReason(t, refused, v1alpha1.ConditionInvalid, engine.ReasonUnauthorized)

	other := newNamespace(t)
	waiting, master2, _ := tenantObjects(other, "waiting-"+other, team, masterToken)
	create(t, master2, waiting)
	waitReason(t, waiting, v1alpha1.ConditionOrphan, ReasonSecretNotFound)

	theirs := providerSecret(team, v1alpha1.DefaultProviderAccountSecret, "https://someone-admin.example.com", "their-token")
	create(t, theirs)
	before := len(sim.Writes(simulator.MasterTenant))
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "admin-password"},
		StringData: map[string]string{"password": "a-long-password-of-the-admin"}})
	waitReason(t, waiting, v1alpha1.ConditionInvalid, ReasonSecretNotOurs)
	if n := len(sim.Writes(simulator.MasterTenant)); n != before {
		t.Errorf("%d writes to the master API, want none: no tenant is made for a Secret it cannot write", n-before)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || string(theirs.Data["token"]) != "their-token" {
		t.Errorf("someone else's Secret was touched: %v", err)
	}

	// A namespace that does not exist: the Secret could not be written, so no tenant is made (its
	// token would be lost).
	third := newNamespace(t)
	nowhere, master3, password3 := tenantObjects(third, "nowhere-"+third, "no-such-namespace", masterToken)
	before = len(sim.Writes(simulator.MasterTenant))
	create(t, master3, password3, nowhere)
	waitReason(t, nowhere, v1alpha1.ConditionOrphan, ReasonSecretNotWritable)
	if n := len(sim.Writes(simulator.MasterTenant)); n != before {
		t.Errorf("%d writes to the master API for a Secret that cannot be written, want none", n-before)
	}
}
