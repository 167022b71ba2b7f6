package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// holdFinalizer is a finalizer of the tests' own: an object that has it stays after apimsync's finalizer
// went, until the test releases it.
const holdFinalizer = "test.apimsync.io/hold"

// release removes holdFinalizer from objects.
func release(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		harness.Update(t, o, func() { controllerutil.RemoveFinalizer(o, holdFinalizer) })
	}
}

// deletionJournal records the objects of a namespace that disappear from Kubernetes, in the order of
// their deletion: each "Kind name", ordered by the resourceVersion of its DELETED watch event (etcd's
// revision, one sequence across kinds; the watches deliver each kind on its own stream, so arrival order
// alone would not compare kinds).
type deletionJournal struct {
	mu   sync.Mutex
	gone map[string]uint64
}

func watchDeletions(t *testing.T, ns string) *deletionJournal {
	t.Helper()
	wc, err := client.NewWithWatch(harness.Env.Config, client.Options{Scheme: harness.Env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	j := &deletionJournal{gone: map[string]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, list := range []client.ObjectList{&v1alpha1.ApplicationList{}, &v1alpha1.ApplicationPlanList{}, &v1alpha1.ProductList{},
		&v1alpha1.BackendList{}, &v1alpha1.DeveloperAccountList{}} {
		w, err := wc.Watch(ctx, list, client.InNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type != apiwatch.Deleted {
					continue
				}
				o := ev.Object.(client.Object)
				rv, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
				if err != nil {
					panic(err)
				}
				j.mu.Lock()
				j.gone[engine.KindOf(o)+" "+o.GetName()] = rv
				j.mu.Unlock()
			}
		}()
	}
	return j
}

// order returns the objects gone so far, in the order they went.
func (j *deletionJournal) order() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]string, 0, len(j.gone))
	for k := range j.gone {
		out = append(out, k)
	}
	sort.Slice(out, func(a, b int) bool { return j.gone[out[a]] < j.gone[out[b]] })
	return out
}

// assertBefore checks that each object of first went before each object of then, all of them seen going.
func (j *deletionJournal) assertBefore(t *testing.T, first, then []string) {
	t.Helper()
	var order []string
	harness.Eventually(t, 10*time.Second, func() string { // the last DELETED events may still be on their way
		order = j.order()
		for _, o := range append(slices.Clone(first), then...) {
			if !slices.Contains(order, o) {
				return fmt.Sprintf("%s not seen going (seen %v)", o, order)
			}
		}
		return ""
	})
	for _, f := range first {
		for _, l := range then {
			if slices.Index(order, f) > slices.Index(order, l) {
				t.Errorf("%s went after %s: deletion order %v", f, l, order)
			}
		}
	}
}

// assertRemoteEmpty checks that the tenant has none of these kinds of objects left.
func assertRemoteEmpty(t *testing.T, ns string, kinds ...string) {
	t.Helper()
	for _, kind := range kinds {
		if got := harness.Sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale, want 0", got, kind)
		}
	}
}

// TestPlanWaitingForItsApplicationsCountsAndNamesThem: a plan being deleted deletes its 3 applications
// and, while they are there (deleted in 3scale, held in Kubernetes by another finalizer), its condition
// and event count and name them, and say what holds them; the plan is still in 3scale. Released, they go,
// then the plan, remotely in that order.
func TestPlanWaitingForItsApplicationsCountsAndNamesThem(t *testing.T) {
	ns := harness.NewNamespace(t)
	_, _, plan, apps := planWithApplications(t, ns, 3, holdFinalizer)
	journal := watchDeletions(t, ns)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))

	harness.DeleteObjects(t, plan)
	hold := " (waiting for finalizer " + holdFinalizer + ")"
	want := "deleting 3 applications first: app-0" + hold + ", app-1" + hold + ", app-2" + hold
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if state, reason, msg := harness.SyncState(t, plan); state != v1alpha1.ConditionOrphan || reason != v1alpha1.ReasonDeletingDependants || msg != want {
			return fmt.Sprintf("the plan is %s/%s %q, want Orphan/%s %q", state, reason, msg, v1alpha1.ReasonDeletingDependants, want)
		}
		if n := harness.Sim.Count(ns, "applications"); n != 0 {
			return fmt.Sprintf("%d applications still in 3scale", n)
		}
		return ""
	})
	harness.WantEvent(t, plan, v1alpha1.ReasonDeletingDependants+": "+want)
	if n := harness.Sim.Count(ns, simulator.KindPlans); n != 1 {
		t.Errorf("the plan left 3scale before its applications left Kubernetes: %d plans", n)
	}

	release(t, toClientObjects(apps)...)
	harness.WaitGone(t, append(toClientObjects(apps), plan)...)
	order := harness.RemoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v; %d calls", order, harness.RemoteCalls(ns)-before)
	if w := []string{"applications 200", "applications 200", "applications 200", "application_plans 200"}; !slices.Equal(order, w) {
		t.Errorf("remote deletions %v, want %v", order, w)
	}
	journal.assertBefore(t, []string{"Application app-0", "Application app-1", "Application app-2"}, []string{"ApplicationPlan basic"})
	t.Logf("Kubernetes deletion order: %v", journal.order())
	assertRemoteEmpty(t, ns, "applications", simulator.KindPlans)
}

// TestStuckApplicationIsNamedByItsPlan: an application whose remote delete 3scale refuses (its own
// account's provider-account token was revoked) is named, with why, in the condition of the plan waiting for
// it; the plan stays in 3scale meanwhile. Once its Secret is fixed it goes, then the plan.
func TestStuckApplicationIsNamedByItsPlan(t *testing.T) {
	ns := harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	appToken := "second-token-" + ns
	harness.Sim.AddTenant(ns, appToken)
	appSecret := harness.ProviderSecret(ns, "app-account", adminURL, appToken)
	acc, pw := harness.DevAccount(ns, "acme") // its applications use its provider account
	acc.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: appSecret.Name}
	other, otherPW := harness.DevAccount(ns, "other")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	stuck, free := harness.Application(ns, "app-0", "acme", "basic"), harness.Application(ns, "app-1", "other", "basic")
	harness.Create(t, harness.DefaultSecret(ns), appSecret, acc, pw, other, otherPW, backend, product, plan, stuck, free)
	harness.WaitState(t, v1alpha1.ConditionSynced, stuck, free, plan, acc)
	journal := watchDeletions(t, ns)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))

	harness.Sim.RevokeToken(appToken)
	harness.DeleteObjects(t, plan)
	harness.WaitGone(t, free)
	harness.WaitReason(t, stuck, v1alpha1.ConditionInvalid, v1alpha1.ReasonUnauthorized)
	want := "deleting 1 application first: app-0 (stuck: the provider account's token was refused by 3scale"
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if state, reason, msg := harness.SyncState(t, plan); state != v1alpha1.ConditionOrphan || reason != v1alpha1.ReasonDeletingDependants || !strings.HasPrefix(msg, want) {
			return fmt.Sprintf("the plan is %s/%s %q, want Orphan/%s starting %q", state, reason, msg, v1alpha1.ReasonDeletingDependants, want)
		}
		return ""
	})
	_, _, msg := harness.SyncState(t, plan)
	t.Logf("the plan says: %s", msg)
	if n, a := harness.Sim.Count(ns, simulator.KindPlans), harness.Sim.Count(ns, "applications"); n != 1 || a != 1 {
		t.Errorf("while app-0 is stuck: %d plans and %d applications in 3scale, want 1 and 1", n, a)
	}

	harness.Update(t, appSecret, func() { appSecret.StringData = map[string]string{"token": token} })
	harness.WaitGone(t, stuck, plan)
	// app-1 goes; app-0's deletion is refused each time it is tried while the token is revoked, then done.
	order := harness.RemoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v; %d calls", order, harness.RemoteCalls(ns)-before)
	done := slices.DeleteFunc(slices.Clone(order), func(s string) bool { return s == "applications 403" })
	lastRefused := -1
	for i, o := range order {
		if o == "applications 403" {
			lastRefused = i
		}
	}
	if w := []string{"applications 200", "applications 200", "application_plans 200"}; !slices.Equal(done, w) || lastRefused < 0 ||
		!slices.Contains(order[lastRefused+1:], "applications 200") || len(order)-len(done) != len(harness.RefusedWrites(ns, mark)) {
		t.Errorf("remote deletions %v, want app-0's refused deletes (and no other refusal: %v), then it deleted, among %v", order, harness.RefusedWrites(ns, mark), w)
	}
	journal.assertBefore(t, []string{"Application app-0", "Application app-1"}, []string{"ApplicationPlan basic"})
	assertRemoteEmpty(t, ns, "applications", simulator.KindPlans)
}

// TestRetainedOwnersKeepTheirApplications: deleting a plan and an account with deletionPolicy Retain
// deletes none of their applications, in Kubernetes or in 3scale; the owners stay in 3scale too.
func TestRetainedOwnersKeepTheirApplications(t *testing.T) {
	ns := harness.NewNamespace(t)
	kept, pw := harness.DevAccount(ns, "kept")
	kept.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	other, otherPW := harness.DevAccount(ns, "other")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	keptPlan, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	keptPlan.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	ofAccount, ofPlan := harness.Application(ns, "of-account", "kept", "gold"), harness.Application(ns, "of-plan", "other", "basic")
	harness.Create(t, harness.DefaultSecret(ns), kept, pw, other, otherPW, backend, product, keptPlan, gold, ofAccount, ofPlan)
	harness.WaitState(t, v1alpha1.ConditionSynced, kept, other, keptPlan, gold, ofAccount, ofPlan)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))

	harness.DeleteObjects(t, kept, keptPlan)
	harness.WaitGone(t, kept, keptPlan)
	for _, a := range []*v1alpha1.Application{ofAccount, ofPlan} {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil || !a.DeletionTimestamp.IsZero() {
			t.Errorf("application %s of a retained owner: %v, deleted at %v", a.Name, err, a.DeletionTimestamp)
		}
	}
	if order := harness.RemoteDeletions(ns, mark); len(order) != 0 {
		t.Errorf("remote deletions %v, want none", order)
	}
	for kind, want := range map[string]int{"applications": 2, "accounts": 2, simulator.KindPlans: 2} {
		if got := harness.Sim.Count(ns, kind); got != want {
			t.Errorf("%d %s in 3scale, want %d", got, kind, want)
		}
	}
	t.Logf("deleting a retained plan and account: %d calls", harness.RemoteCalls(ns)-before)
}

// TestRetainedDependantsKeepTheirOwnersInThreescale: an owner deleted with deletionPolicy Delete whose
// dependants include a Retain one holding a remote object is kept in 3scale (3scale would refuse the
// plan's deletion for the retained application, and deletes a service's plans along with it), says so in
// a Warning event naming the Retain dependant and what to do, and its other dependants delete their own
// remote objects; nothing is refused, nothing stays stuck.
func TestRetainedDependantsKeepTheirOwnersInThreescale(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	gold.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	keep, drop := harness.Application(ns, "keep", "acme", "basic"), harness.Application(ns, "drop", "acme", "basic")
	keep.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, basic, gold, keep, drop)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, product, basic, gold, keep, drop)
	mark := len(harness.Sim.Writes(ns))

	// A plan with a Retain application: the plan stays in 3scale, the other application is deleted there.
	harness.DeleteObjects(t, basic)
	harness.WaitGone(t, basic, keep, drop)
	if got := harness.RemoteDeletions(ns, mark); !slices.Equal(got, []string{"applications 200"}) {
		t.Errorf("remote deletions %v, want the Delete application's only", got)
	}
	if got := harness.Sim.Count(ns, simulator.KindApplications); got != 1 {
		t.Errorf("%d applications in 3scale, want the retained one", got)
	}
	if got := harness.Sim.Count(ns, simulator.KindPlans); got != 2 {
		t.Errorf("%d plans in 3scale, want 2: the plan the retained application uses is kept", got)
	}
	wantEvent := func(obj client.Object, names string) {
		t.Helper()
		harness.Eventually(t, harness.WaitTimeout, func() string {
			ev := strings.Join(harness.EventsOf(t, obj), "\n")
			if !strings.Contains(ev, v1alpha1.ReasonKeptForRetained) || !strings.Contains(ev, names+" with deletionPolicy Retain") {
				return "no KeptForRetainedDependants event naming " + names + ":\n" + ev
			}
			return ""
		})
	}
	wantEvent(basic, "Application keep")

	// A Product with a Retain plan: porta would delete the plan with the service; the service is kept.
	mark = len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, product)
	harness.WaitGone(t, product, gold)
	if got := harness.RemoteDeletions(ns, mark); len(got) != 0 {
		t.Errorf("remote deletions %v, want none", got)
	}
	if got := harness.Sim.Count(ns, "services"); got != 1 {
		t.Errorf("%d services in 3scale, want the kept one", got)
	}
	wantEvent(product, "ApplicationPlan gold")
	if refused := harness.RefusedWrites(ns, 0); len(refused) != 0 {
		t.Errorf("3scale refused %v", refused)
	}
}

// TestDeletingAProductTakesItsPlansAndApplications deletes a Product whose plans have applications,
// with its Backend: in Kubernetes the applications go, then their plans, then the product, then the
// backend; in 3scale the product's deletion takes its plans and applications with it (porta's cascade:
// they make no call of their own), then the backend is deleted; nothing is refused and nothing is left.
func TestDeletingAProductTakesItsPlansAndApplications(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	apps := []engine.Object{harness.Application(ns, "app-1", "acme", "basic"), harness.Application(ns, "app-2", "acme", "gold"), harness.Application(ns, "app-3", "acme", "basic")}
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, basic, gold)
	for _, a := range apps {
		harness.Create(t, a)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, acc, basic, gold, product, backend)...)
	journal := watchDeletions(t, ns)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))

	harness.DeleteObjects(t, backend, product) // the backend first: it must wait for the product
	harness.WaitGone(t, append(toClientObjects(apps), basic, gold, product, backend)...)
	order := harness.RemoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v; %d calls", order, harness.RemoteCalls(ns)-before)
	if w := []string{"services 200", "backend_apis 200"}; !slices.Equal(order, w) {
		t.Errorf("remote deletions %v, want %v", order, w)
	}
	if refused := harness.RefusedWrites(ns, mark); len(refused) != 0 {
		t.Errorf("3scale refused %v", refused)
	}
	journal.assertBefore(t, []string{"Application app-1", "Application app-3"}, []string{"ApplicationPlan basic"})
	journal.assertBefore(t, []string{"Application app-2"}, []string{"ApplicationPlan gold"})
	journal.assertBefore(t, []string{"ApplicationPlan basic", "ApplicationPlan gold"}, []string{"Product petstore"})
	journal.assertBefore(t, []string{"Product petstore"}, []string{"Backend pets"})
	t.Logf("Kubernetes deletion order: %v", journal.order())
	assertRemoteEmpty(t, ns, "services", simulator.KindPlans, "applications", "backend_apis")
	if got := harness.Sim.Count(ns, "accounts"); got != 1 {
		t.Errorf("%d accounts in 3scale, want the 1 not deleted", got)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
}

// TestAPruneDeletesEachObjectOnce: a Product and its plans deleted together, the product first (a prune:
// Argo CD, Flux, kubectl delete -f): the product leaves its plans to the prune (--dependant-deletion-grace)
// instead of sending a DELETE of its own for each; all go, and 3scale is emptied by the product's deletion.
func TestAPruneDeletesEachObjectOnce(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	plans := []engine.Object{harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore"), harness.BasicPlan(ns, "silver", "petstore")}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	for _, p := range plans {
		harness.Create(t, p)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, append(plans, product, backend)...)

	harness.DeleteObjects(t, append([]client.Object{product}, toClientObjects(plans)...)...)
	harness.WaitGone(t, append(toClientObjects(plans), product)...)
	deletes := harness.KubeRequests.Matching(func(r harness.KubeRequest) bool {
		return r.Method == http.MethodDelete && strings.Contains(r.Path, "/namespaces/"+ns+"/")
	})
	if len(deletes) != 0 {
		t.Errorf("the manager deleted what the prune deletes: %v", deletes)
	}
	assertRemoteEmpty(t, ns, "services", simulator.KindPlans)
}

// TestAPruneOfPlansFirstLeavesThemToTheProduct: plans deleted a moment before their Product (a prune in
// the other order) wait for it (the deletion grace) and go with its deletion in 3scale: one call, the
// service's; a plan deleted alone, its product staying, deletes its own once the grace has passed.
func TestAPruneOfPlansFirstLeavesThemToTheProduct(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	alone := harness.BasicPlan(ns, "alone", "petstore")
	plans := []engine.Object{harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")}
	harness.Create(t, harness.DefaultSecret(ns), backend, product, alone)
	for _, p := range plans {
		harness.Create(t, p)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, append(plans, alone, product, backend)...)

	mark := len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, alone)
	harness.WaitGone(t, alone)
	if got := harness.RemoteDeletions(ns, mark); !slices.Equal(got, []string{"application_plans 200"}) {
		t.Errorf("deleting a plan alone: remote deletions %v, want its own", got)
	}

	mark = len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, append(toClientObjects(plans), product)...)
	harness.WaitGone(t, append(toClientObjects(plans), product)...)
	if got := harness.RemoteDeletions(ns, mark); !slices.Equal(got, []string{"services 200"}) {
		t.Errorf("a prune of plans, then their product: remote deletions %v, want the service's only", got)
	}
	assertRemoteEmpty(t, ns, "services", simulator.KindPlans)
}

// TestDeletingAnAccountTakesItsApplicationsOnTwoPlans: an account with an application on each of two
// plans: the applications go, then the account (which waits while one is held by another finalizer); in
// 3scale the account's deletion takes its users and applications with it; the plans stay.
func TestDeletingAnAccountTakesItsApplicationsOnTwoPlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	held := harness.Application(ns, "app-2", "acme", "gold")
	held.Finalizers = []string{holdFinalizer}
	apps := []engine.Object{harness.Application(ns, "app-1", "acme", "basic"), held}
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, basic, gold, apps[0], apps[1])
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, acc, basic, gold)...)
	journal := watchDeletions(t, ns)
	before, mark := harness.RemoteCalls(ns), len(harness.Sim.Writes(ns))

	harness.DeleteObjects(t, acc)
	// While app-2 is held, the account waits, in Kubernetes and in 3scale.
	harness.WaitGone(t, apps[0])
	want := "deleting 1 application first: app-2 (waiting for finalizer " + holdFinalizer + ")"
	harness.Eventually(t, harness.WaitTimeout, func() string { // it says so once it has seen app-1 go
		if state, reason, msg := harness.SyncState(t, acc); state != v1alpha1.ConditionOrphan || reason != v1alpha1.ReasonDeletingDependants || msg != want {
			return fmt.Sprintf("the account is %s (%s): %q", state, reason, msg)
		}
		return ""
	})
	if n := harness.Sim.Count(ns, "accounts"); n != 1 {
		t.Errorf("the account left 3scale before its applications left Kubernetes: %d accounts", n)
	}
	release(t, held)
	harness.WaitGone(t, append(toClientObjects(apps), acc)...)
	order := harness.RemoteDeletions(ns, mark)
	t.Logf("remote deletion order: %v; %d calls", order, harness.RemoteCalls(ns)-before)
	if w := []string{"accounts 200"}; !slices.Equal(order, w) {
		t.Errorf("remote deletions %v, want %v", order, w)
	}
	if refused := harness.RefusedWrites(ns, mark); len(refused) != 0 {
		t.Errorf("3scale refused %v", refused)
	}
	journal.assertBefore(t, []string{"Application app-1", "Application app-2"}, []string{"DeveloperAccount acme"})
	t.Logf("Kubernetes deletion order: %v", journal.order())
	assertRemoteEmpty(t, ns, "accounts", "users", "applications")
	if got := harness.Sim.Count(ns, simulator.KindPlans); got != 2 {
		t.Errorf("%d plans in 3scale, want 2", got)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, basic, gold, product)
}

// TestSetupRefusesACyclicGraph: with a cycle in the reference graph the manager is not set up, and the
// error names the cycle.
func TestSetupRefusesACyclicGraph(t *testing.T) {
	mgr, err := ctrl.NewManager(harness.Env.Config, ctrl.Options{Scheme: harness.Env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	// The running manager's controllers copied the edges they need when they were set up.
	saved := *controllers.ReferenceGraph
	*controllers.ReferenceGraph = append(slices.Clone(saved), controllers.Reference{From: "Product", To: "ApplicationPlan", Field: "spec.defaultPlan"})
	defer func() { *controllers.ReferenceGraph = saved }()
	err = controllers.SetupWithManager(context.Background(), mgr, controllers.Options{SkipNameValidation: true})
	want := "the reference graph has a cycle: ApplicationPlan → Product → ApplicationPlan: no deletion order exists"
	if err == nil || err.Error() != want {
		t.Errorf("SetupWithManager with a cyclic graph: %v, want %q", err, want)
	}
}

// TestFateOfAnOwner: an owner's deletion takes a dependant's remote object along only when it is being
// deleted with the Delete policy, holds its remote object on the dependant's tenant and carries
// apimsync's finalizer (its finalize makes the remote delete); one that would, not being deleted yet,
// may go; any other stays, and the dependant deletes its own.
func TestFateOfAnOwner(t *testing.T) {
	product := func(change func(p *v1alpha1.Product)) *v1alpha1.Product {
		p := &v1alpha1.Product{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "petstore", Finalizers: []string{engine.Finalizer}}}
		p.Spec.DeletionPolicy = v1alpha1.DeletionPolicyDelete
		p.Status.ProductID, p.Status.TenantHost = 7, "tenant.example.com"
		if change != nil {
			change(p)
		}
		return p
	}
	going := func(p *v1alpha1.Product) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} }
	for name, tc := range map[string]struct {
		owner *v1alpha1.Product // nil: none
		held  int64             // the owner's id the dependant records; 0: 7
		// retainedPlan: a plan with deletionPolicy Retain holds a plan under the owner: it is kept
		retainedPlan bool
		want         engine.OwnerFate
	}{
		"being deleted": {owner: product(going), want: engine.OwnerGoes},
		"holding another remote one than the dependant's": {owner: product(going), held: 8, want: engine.OwnerStays},
		"kept for a Retain plan under it":                 {owner: product(going), retainedPlan: true, want: engine.OwnerStays},
		"not being deleted yet":                           {owner: product(nil), want: engine.OwnerMayGo},
		"retained":                                        {owner: product(func(p *v1alpha1.Product) { going(p); p.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain }), want: engine.OwnerStays},
		"holding no remote one":                           {owner: product(func(p *v1alpha1.Product) { going(p); p.Status.ProductID = 0 }), want: engine.OwnerStays},
		"on another tenant":                               {owner: product(func(p *v1alpha1.Product) { going(p); p.Status.TenantHost = "other.example.com" }), want: engine.OwnerStays},
		"without the finalizer":                           {owner: product(func(p *v1alpha1.Product) { p.Finalizers = []string{"someone.else/keep"}; going(p) }), want: engine.OwnerStays},
		"gone":                                            {want: engine.OwnerStays},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(harness.K8s.Scheme()).
				WithIndex(&v1alpha1.ApplicationPlan{}, kit.IndexProductRef, func(o client.Object) []string { return []string{o.(*v1alpha1.ApplicationPlan).Spec.ProductRef} }).
				WithIndex(&v1alpha1.ActiveDoc{}, kit.IndexProductRef, func(o client.Object) []string { return []string{o.(*v1alpha1.ActiveDoc).Spec.ProductRef} }).
				WithIndex(&v1alpha1.ServicePlan{}, kit.IndexProductRef, func(o client.Object) []string { return []string{o.(*v1alpha1.ServicePlan).Spec.ProductRef} })
			if tc.owner != nil {
				b = b.WithObjects(tc.owner)
			}
			if tc.retainedPlan {
				plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gold", Finalizers: []string{engine.Finalizer}},
					Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "petstore"}}
				plan.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
				plan.Status.PlanID = 9
				b = b.WithObjects(plan)
			}
			held := tc.held
			if held == 0 {
				held = 7
			}
			if got := controllers.FateOf(context.Background(), b.Build(), "ns", "petstore", "tenant.example.com", held, &v1alpha1.Product{}); got != tc.want {
				t.Errorf("fate %v, want %v", got, tc.want)
			}
		})
	}
}

// TestApplicationMovedToAnotherProductIsDeletedWithItsPlan: an Application moved (Invalid) to a plan of
// another product still lives on its first product in 3scale; deleting the new product deletes the
// Application resource with its plan, and the application in 3scale too: the new product's deletion does
// not take it along, so it is no shortcut to leave it there.
func TestApplicationMovedToAnotherProductIsDeletedWithItsPlan(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product, orders := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.OrdersProduct(ns)
	basic, ordersBasic := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "orders-basic", "orders")
	app := harness.Application(ns, "app", "acme", "basic")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, orders, basic, ordersBasic, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app, ordersBasic)
	harness.Update(t, app, func() { app.Spec.PlanRef = "orders-basic" })
	harness.WaitReason(t, app, v1alpha1.ConditionInvalid, v1alpha1.ReasonPlanOfAnotherProduct)

	harness.DeleteObjects(t, orders)
	harness.WaitGone(t, orders, ordersBasic, app)
	assertRemoteEmpty(t, ns, simulator.KindApplications)
	if got := harness.Sim.Count(ns, "services"); got != 1 {
		t.Errorf("%d services in 3scale, want the 1 not deleted", got)
	}
}
