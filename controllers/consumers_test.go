package controllers_test

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
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestAccountsAndApplicationsConvergeInTheWorstOrder: applications first, then plans, accounts, products,
// backends and the Secret last: everything converges, the account is approved with its users active, and
// each application's credentials are in its Secret.
func TestAccountsAndApplicationsConvergeInTheWorstOrder(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	apps := []engine.Object{harness.Application(ns, "app-1", "acme", "basic"), harness.Application(ns, "app-2", "acme", "gold")}
	plans := []engine.Object{harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")}
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	for _, o := range apps {
		harness.Create(t, o)
	}
	for _, o := range plans {
		harness.Create(t, o)
	}
	harness.Create(t, acc, pw, product, backend, harness.DefaultSecret(ns))
	all := append(append(append([]engine.Object{}, apps...), plans...), acc, product, backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, all...)
	for _, a := range harness.Sim.Objects(ns, "accounts") {
		if a["state"] != "approved" {
			t.Errorf("account %v is %v, want approved", a["org_name"], a["state"])
		}
	}
	for _, u := range harness.Sim.Objects(ns, "users") {
		if u["state"] != "active" {
			t.Errorf("user %v is %v, want active", u["username"], u["state"])
		}
	}
	if got := harness.Sim.Count(ns, "users"); got != 2 {
		t.Errorf("%d users in 3scale, want 2", got)
	}
	for _, o := range apps {
		a := o.(*v1alpha1.Application)
		var secret corev1.Secret
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: a.Name + "-credentials"}, &secret); err != nil {
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
	acc, pw := harness.DevAccount(ns, "acme")
	product, plan = harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), product, plan)
	for i := range n {
		a := harness.Application(ns, fmt.Sprintf("app-%d", i), "acme", "basic")
		a.Finalizers = finalizers
		harness.Create(t, a)
		apps = append(apps, a)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, plan, acc)...)
	return acc, product, plan, apps
}

// TestDeletingAPlanDeletesItsApplicationsFirst: a plan with 3 applications goes last, after its
// applications are deleted in Kubernetes and in 3scale; a wait this short is a quiet one (no condition,
// no event: TestPlanWaitingForItsApplicationsCountsAndNamesThem has one that lasts).
func TestDeletingAPlanDeletesItsApplicationsFirst(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, product, plan, apps := planWithApplications(t, ns, 3)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))
	start := time.Now()
	harness.DeleteObjects(t, plan)
	harness.WaitGone(t, plan)
	harness.WaitGone(t, toClientObjects(apps)...)
	took := time.Since(start)
	// The applications go first (porta refuses to delete a plan that has some), each once, then the plan.
	order := harness.RemoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v", order)
	want := []string{"applications 200", "applications 200", "applications 200", "application_plans 200"}
	if !slices.Equal(order, want) {
		t.Errorf("remote deletions %v, want %v", order, want)
	}
	if got := harness.Sim.Count(ns, "applications"); got != 0 {
		t.Errorf("%d applications left in 3scale", got)
	}
	if got := harness.Sim.Count(ns, simulator.KindPlans); got != 0 {
		t.Errorf("%d plans left in 3scale", got)
	}
	t.Logf("deleting a plan with 3 applications took %d calls", harness.RemoteCalls(ns)-before)
	// Past the suite's quiet wait (a loaded machine), saying what it waits for is right.
	if ev := strings.Join(harness.EventsOf(t, plan), "\n"); strings.Contains(ev, v1alpha1.ReasonDeletingDependants) && took < harness.QuietWait {
		t.Errorf("the plan announced a wait of %v for its applications: %s", took, ev)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, product)
}

// TestDeletingAnAccountDeletesItsApplications, and deleting the namespace with everything leaves 3scale
// empty.
func TestDeletingAnAccountDeletesItsApplications(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	apps := []engine.Object{harness.Application(ns, "app-1", "acme", "basic"), harness.Application(ns, "app-2", "acme", "basic")}
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, plan, apps[0], apps[1])
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, acc, plan)...)
	harness.DeleteObjects(t, acc)
	harness.WaitGone(t, append(toClientObjects(apps), acc)...)
	for _, kind := range []string{"accounts", "users", "applications"} {
		if got := harness.Sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale", got, kind)
		}
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, plan, product)
}

// TestLostResponsesMakeNoDuplicateAccountsOrApplications: with 30 % of write answers lost, accounts and
// applications are created once each.
func TestLostResponsesMakeNoDuplicateAccountsOrApplications(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.SetFaults(simulator.Faults{LostResponseRate: 0.3})
	defer harness.Sim.SetFaults(simulator.Faults{})
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	var objs []engine.Object
	for i := range 3 {
		acc, pw := harness.DevAccount(ns, fmt.Sprintf("org-%d", i))
		harness.Create(t, acc, pw)
		objs = append(objs, acc)
		for j := range 2 {
			a := harness.Application(ns, fmt.Sprintf("app-%d-%d", i, j), acc.Name, "basic")
			harness.Create(t, a)
			objs = append(objs, a)
		}
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
	if got := harness.Sim.Count(ns, "accounts"); got != 3 {
		t.Errorf("%d accounts in 3scale, want 3", got)
	}
	if got := harness.Sim.Count(ns, "applications"); got != 6 {
		t.Errorf("%d applications in 3scale, want 6", got)
	}
	if harness.LostAnswers(ns) == 0 {
		t.Errorf("no answer was lost: the test did not exercise recovery")
	}
}
