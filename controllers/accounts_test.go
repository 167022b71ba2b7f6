package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

func devAccount(ns, name string) (*v1alpha1.DeveloperAccount, *corev1.Secret) {
	pw := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-passwords"},
		StringData: map[string]string{"alice": "s3cret-alice-long-enough", "bob": "s3cret-bob-long-enough"}}
	return &v1alpha1.DeveloperAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.DeveloperAccountSpec{OrgName: "Org " + name, Users: []v1alpha1.DeveloperUserSpec{
			{Username: name + "-alice", Email: name + "-alice@example.com", Role: "admin", PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: pw.Name, Key: "alice"}},
			{Username: name + "-bob", Email: name + "-bob@example.com", Role: "member", PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: pw.Name, Key: "bob"}},
		}},
	}, pw
}

func application(ns, name, account, plan string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ApplicationSpec{AccountRef: account, PlanRef: plan, Name: name, Description: "app " + name}}
}

// TestAccountsAndApplicationsConvergeInTheWorstOrder: applications first, then plans, accounts, products,
// backends and the Secret last: everything converges, the account is approved with its users active, and
// each application's credentials are in its Secret.
func TestAccountsAndApplicationsConvergeInTheWorstOrder(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	apps := []engine.Object{application(ns, "app-1", "acme", "basic"), application(ns, "app-2", "acme", "gold")}
	plans := []engine.Object{basicPlan(ns, "basic", "petstore"), basicPlan(ns, "gold", "petstore")}
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	for _, o := range apps {
		create(t, o)
	}
	for _, o := range plans {
		create(t, o)
	}
	create(t, acc, pw, product, backend, defaultSecret(ns))
	all := append(append(append([]engine.Object{}, apps...), plans...), acc, product, backend)
	waitState(t, v1alpha1.ConditionSynced, all...)
	for _, a := range sim.Objects(ns, "accounts") {
		if a["state"] != "approved" {
			t.Errorf("account %v is %v, want approved", a["org_name"], a["state"])
		}
	}
	for _, u := range sim.Objects(ns, "users") {
		if u["state"] != "active" {
			t.Errorf("user %v is %v, want active", u["username"], u["state"])
		}
	}
	if got := sim.Count(ns, "users"); got != 2 {
		t.Errorf("%d users in 3scale, want 2", got)
	}
	for _, o := range apps {
		a := o.(*v1alpha1.Application)
		var secret corev1.Secret
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: a.Name + "-credentials"}, &secret); err != nil {
			t.Fatalf("credentials Secret of %s: %v", a.Name, err)
		}
		if len(secret.Data["user_key"]) == 0 || !metav1.IsControlledBy(&secret, a) {
			t.Errorf("credentials Secret of %s: keys %v, owners %v", a.Name, keys(secret.Data), secret.OwnerReferences)
		}
		if strings.Contains(fmt.Sprint(a.Status), string(secret.Data["user_key"])) {
			t.Errorf("the user key of %s is in its status", a.Name)
		}
	}
}

func keys(m map[string][]byte) []string { return kit.SortedKeys(m) }

// planWithApplications makes an account, a product with its backend and a plan "basic" with n
// applications app-0...app-(n-1), each with the given finalizers, and waits until they are all Synced.
func planWithApplications(t *testing.T, ns string, n int, finalizers ...string) (acc *v1alpha1.DeveloperAccount, product *v1alpha1.Product, plan *v1alpha1.ApplicationPlan, apps []engine.Object) {
	t.Helper()
	acc, pw := devAccount(ns, "acme")
	product, plan = petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), acc, pw, petsBackend(ns), product, plan)
	for i := range n {
		a := application(ns, fmt.Sprintf("app-%d", i), "acme", "basic")
		a.Finalizers = finalizers
		create(t, a)
		apps = append(apps, a)
	}
	waitState(t, v1alpha1.ConditionSynced, append(apps, plan, acc)...)
	return acc, product, plan, apps
}

// TestDeletingAPlanDeletesItsApplicationsFirst: a plan with 3 applications goes last, after its
// applications are deleted in Kubernetes and in 3scale; a wait this short is a quiet one (no condition,
// no event: TestPlanWaitingForItsApplicationsCountsAndNamesThem has one that lasts).
func TestDeletingAPlanDeletesItsApplicationsFirst(t *testing.T) {
	ns := newNamespace(t)
	acc, product, plan, apps := planWithApplications(t, ns, 3)
	before, mark := remoteCalls(ns), len(sim.Writes(ns))
	start := time.Now()
	deleteObjects(t, plan)
	waitGone(t, plan)
	waitGone(t, toClientObjects(apps)...)
	took := time.Since(start)
	// The applications go first (porta refuses to delete a plan that has some), each once, then the plan.
	order := remoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v", order)
	want := []string{"applications 200", "applications 200", "applications 200", "application_plans 200"}
	if !slices.Equal(order, want) {
		t.Errorf("remote deletions %v, want %v", order, want)
	}
	if got := sim.Count(ns, "applications"); got != 0 {
		t.Errorf("%d applications left in 3scale", got)
	}
	if got := sim.Count(ns, simulator.KindPlans); got != 0 {
		t.Errorf("%d plans left in 3scale", got)
	}
	t.Logf("deleting a plan with 3 applications took %d calls", remoteCalls(ns)-before)
	// Past the suite's quiet wait (a loaded machine), saying what it waits for is right.
	if ev := strings.Join(eventsOf(t, plan), "\n"); strings.Contains(ev, v1alpha1.ReasonDeletingDependants) && took < quietWait {
		t.Errorf("the plan announced a wait of %v for its applications: %s", took, ev)
	}
	waitState(t, v1alpha1.ConditionSynced, acc, product)
}

// TestDeletingAnAccountDeletesItsApplications, and deleting the namespace with everything leaves 3scale
// empty.
func TestDeletingAnAccountDeletesItsApplications(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	apps := []engine.Object{application(ns, "app-1", "acme", "basic"), application(ns, "app-2", "acme", "basic")}
	create(t, defaultSecret(ns), acc, pw, backend, product, plan, apps[0], apps[1])
	waitState(t, v1alpha1.ConditionSynced, append(apps, acc, plan)...)
	deleteObjects(t, acc)
	waitGone(t, append(toClientObjects(apps), acc)...)
	for _, kind := range []string{"accounts", "users", "applications"} {
		if got := sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale", got, kind)
		}
	}
	waitState(t, v1alpha1.ConditionSynced, plan, product)
}

// TestApplicationMovesBetweenPlans: to another plan of the same product with one change_plan call; to a
// plan of another product it is Invalid, saying why.
func TestApplicationMovesBetweenPlans(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	other := petstoreProduct(ns, "pets")
	other.Name = "other"
	basic, gold, foreign := basicPlan(ns, "basic", "petstore"), basicPlan(ns, "gold", "petstore"), basicPlan(ns, "foreign", "other")
	app := application(ns, "app", "acme", "basic")
	create(t, defaultSecret(ns), acc, pw, backend, product, other, basic, gold, foreign, app)
	waitState(t, v1alpha1.ConditionSynced, app, gold, foreign)
	sim.ResetStats()
	update(t, app, func() { app.Spec.PlanRef = "gold" })
	waitState(t, v1alpha1.ConditionSynced, app)
	changes := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == ns && strings.HasSuffix(c.Endpoint, "/change_plan.json") {
			changes += c.Count
		}
	}
	if changes != 1 || app.Status.PlanID != gold.Status.PlanID {
		t.Errorf("%d change_plan calls, plan %d; want 1 and %d", changes, app.Status.PlanID, gold.Status.PlanID)
	}
	update(t, app, func() { app.Spec.PlanRef = "foreign" })
	waitReason(t, app, v1alpha1.ConditionInvalid, v1alpha1.ReasonPlanOfAnotherProduct)
}

// TestLostResponsesMakeNoDuplicateAccountsOrApplications: with 30 % of write answers lost, accounts and
// applications are created once each.
func TestLostResponsesMakeNoDuplicateAccountsOrApplications(t *testing.T) {
	ns := newNamespace(t)
	sim.SetFaults(simulator.Faults{LostResponseRate: 0.3})
	defer sim.SetFaults(simulator.Faults{})
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	create(t, defaultSecret(ns), backend, product, plan)
	var objs []engine.Object
	for i := range 3 {
		acc, pw := devAccount(ns, fmt.Sprintf("org-%d", i))
		create(t, acc, pw)
		objs = append(objs, acc)
		for j := range 2 {
			a := application(ns, fmt.Sprintf("app-%d-%d", i, j), acc.Name, "basic")
			create(t, a)
			objs = append(objs, a)
		}
	}
	waitState(t, v1alpha1.ConditionSynced, objs...)
	if got := sim.Count(ns, "accounts"); got != 3 {
		t.Errorf("%d accounts in 3scale, want 3", got)
	}
	if got := sim.Count(ns, "applications"); got != 6 {
		t.Errorf("%d applications in 3scale, want 6", got)
	}
	if lostAnswers(ns) == 0 {
		t.Errorf("no answer was lost: the test did not exercise recovery")
	}
}

// TestActiveDocFromAConfigMap: the document comes from a ConfigMap and an edit re-syncs it; a document
// that is not OpenAPI is Invalid with the parser's word; a product on another tenant is Invalid.
func TestActiveDocFromAConfigMap(t *testing.T) {
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore-openapi"},
		Data: map[string]string{"openapi.yaml": "openapi: 3.0.3\ninfo:\n  title: Petstore\n  version: '1'\npaths: {}\n"}}
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Petstore", ProductRef: "petstore", Published: true,
			DocumentRef: &v1alpha1.DocumentRef{ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: cm.Name, Key: "openapi.yaml"}}}}
	create(t, defaultSecret(ns), cm, backend, product, doc)
	waitState(t, v1alpha1.ConditionSynced, doc)
	update(t, cm, func() { cm.Data["openapi.yaml"] = strings.Replace(cm.Data["openapi.yaml"], "Petstore", "Pet store", 1) })
	eventually(t, waitTimeout, func() string {
		for _, d := range sim.Objects(ns, "api_docs") {
			if !strings.Contains(fmt.Sprint(d["body"]), "Pet store") {
				return "the edited ConfigMap did not reach 3scale"
			}
		}
		return ""
	})
	bad := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Bad", Document: "{not json: ["}}
	create(t, bad)
	waitReason(t, bad, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)

	other := newNamespace(t)
	foreign := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Foreign", ProductRef: "petstore", Document: cm.Data["openapi.yaml"],
			CommonSpec: v1alpha1.CommonSpec{ProviderAccountRef: &v1alpha1.ProviderAccountRef{Name: "elsewhere"}}}}
	adminURL, token := tenantOf(other)
	create(t, providerSecret(ns, "elsewhere", adminURL, token), foreign)
	waitReason(t, foreign, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
}

// TestAdminRoleMovesBetweenUsers: making the member the admin and the admin a member works although porta
// never lets an account go without an admin (the new admin is promoted first); a user removed from the
// spec is deleted in 3scale.
func TestAdminRoleMovesBetweenUsers(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	create(t, defaultSecret(ns), pw, acc)
	waitState(t, v1alpha1.ConditionSynced, acc)
	update(t, acc, func() {
		acc.Spec.Users[0].Role, acc.Spec.Users[1].Role = "member", "admin"
	})
	waitState(t, v1alpha1.ConditionSynced, acc)
	roles := map[string]any{}
	for _, u := range sim.Objects(ns, simulator.KindUsers) {
		roles[fmt.Sprint(u["username"])] = u["role"]
	}
	if roles["acme-alice"] != "member" || roles["acme-bob"] != "admin" {
		t.Errorf("roles in 3scale %v, want alice member and bob admin", roles)
	}
	update(t, acc, func() { acc.Spec.Users = acc.Spec.Users[1:] })
	waitState(t, v1alpha1.ConditionSynced, acc)
	if got := sim.Count(ns, simulator.KindUsers); got != 1 {
		t.Errorf("%d users in 3scale, want 1", got)
	}
}
