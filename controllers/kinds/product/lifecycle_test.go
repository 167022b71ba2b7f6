package product_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	productkind "github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/test/simulator"
)

// planStates returns the state of each plan in 3scale by system name.
func planStates(ns string) map[string]string {
	out := map[string]string{}
	for _, p := range harness.Sim.Objects(ns, simulator.KindPlans) {
		out[fmt.Sprint(p["system_name"])] = fmt.Sprint(p["state"])
	}
	return out
}

// draftProduct is a Draft product with a plan "basic", a plan "internal" that allows drafts, and an
// Application on each: "early" waits (ProductDraft), "tester" is Synced.
type draftProduct struct {
	product         *v1alpha1.Product
	basic, internal *v1alpha1.ApplicationPlan
	waiting, tester *v1alpha1.Application
}

func newDraftProduct(t *testing.T, ns string) draftProduct {
	t.Helper()
	acc, pw := harness.DevAccount(ns, "acme")
	d := draftProduct{product: harness.PetstoreProduct(ns, "pets"), basic: harness.BasicPlan(ns, "basic", "petstore"), internal: harness.BasicPlan(ns, "internal", "petstore"),
		waiting: harness.Application(ns, "early", "acme", "basic"), tester: harness.Application(ns, "tester", "acme", "internal")}
	d.product.Spec.Lifecycle = v1alpha1.LifecycleDraft
	d.internal.Spec.AllowInDraft = true
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), d.product, d.basic, d.internal, d.waiting, d.tester)
	harness.WaitState(t, v1alpha1.ConditionSynced, d.basic, d.internal, d.tester)
	harness.WaitReason(t, d.waiting, v1alpha1.ConditionOrphan, v1alpha1.ReasonProductDraft)
	return d
}

// TestDraftProductHidesPlansAndHoldsApplications: in Draft every plan is hidden in 3scale (but one with
// allowInDraft), a new Application waits (ProductDraft) unless its plan allows drafts; publishing the
// product publishes its plans and lets the application through.
func TestDraftProductHidesPlansAndHoldsApplications(t *testing.T) {
	ns := harness.NewNamespace(t)
	d := newDraftProduct(t, ns)
	product, waiting := d.product, d.waiting
	if got := planStates(ns); got["basic"] != "hidden" || got["internal"] != "published" {
		t.Errorf("plans in Draft: %v, want basic hidden and internal published", got)
	}
	harness.Update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecyclePublished })
	harness.WaitState(t, v1alpha1.ConditionSynced, waiting)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := planStates(ns); got["basic"] != "published" {
			return fmt.Sprintf("plans after publishing: %v", got)
		}
		return ""
	})
	harness.WantEvent(t, product, "moved from Draft to Published")
}

// TestDeprecatedProductKeepsItsApplicationsAndReportsThem: Deprecated hides every plan, refuses a new
// Application (ProductDeprecated), which is never created in 3scale, while an existing one stays Synced
// and live; the usage report keeps the top usageReport.top accounts and feeds the metric.
func TestDeprecatedProductKeepsItsApplicationsAndReportsThem(t *testing.T) {
	ns := harness.NewNamespace(t)
	acme, pw1 := harness.DevAccount(ns, "acme")
	other, pw2 := harness.DevAccount(ns, "other")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	product.Spec.UsageReport = &v1alpha1.UsageReportSpec{Top: 1}
	apps := []engine.Object{harness.Application(ns, "a1", "acme", "basic"), harness.Application(ns, "a2", "acme", "basic"), harness.Application(ns, "o1", "other", "basic")}
	harness.Create(t, harness.DefaultSecret(ns), acme, pw1, other, pw2, backend, product, plan, apps[0], apps[1], apps[2])
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, product, plan, acme)...)
	harness.Update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecycleDeprecated })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
			return err.Error()
		}
		if u := product.Status.Usage; u == nil || u.LiveApplications != 3 {
			return fmt.Sprintf("usage report %+v, want 3 live applications", u)
		}
		return ""
	})
	// usageReport.top: 1 keeps the account with the most applications.
	want := []v1alpha1.AccountUsage{{Account: "Org acme", AccountID: acme.Status.AccountID,
		Applications: []v1alpha1.ApplicationUsage{{Name: "a1", Plan: "basic"}, {Name: "a2", Plan: "basic"}}}}
	if diff := cmp.Diff(want, product.Status.Usage.Accounts); diff != "" {
		t.Errorf("accounts of the usage report (-want +got):\n%s", diff)
	}
	// The plan hides itself in its own sync, which the Product's change wakes: not necessarily before
	// the Product's usage report is written.
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := planStates(ns); got["basic"] != "hidden" {
			return fmt.Sprintf("plan of a Deprecated product is %s, want hidden", got["basic"])
		}
		return ""
	})
	if got := testutil.ToFloat64(productkind.DeprecatedProductApplications.WithLabelValues(ns, "petstore")); got != 3 {
		t.Errorf("apimsync_deprecated_product_applications = %v, want 3", got)
	}
	newcomer := harness.Application(ns, "late", "other", "basic")
	harness.Create(t, newcomer)
	harness.WaitReason(t, newcomer, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductDeprecated)
	harness.WaitState(t, v1alpha1.ConditionSynced, apps...)
	if got := harness.Sim.Count(ns, simulator.KindApplications); got != 3 {
		t.Errorf("%d applications in 3scale, want the 3 that existed before the product was deprecated", got)
	}
	for _, a := range harness.Sim.Objects(ns, simulator.KindApplications) {
		if a["state"] != "live" {
			t.Errorf("application %v is %v, want live", a["name"], a["state"])
		}
	}
}

// signUpByHand makes a developer account in 3scale behind apimsync's back, as a developer-portal
// sign-up would, with one application per name on the plan: no DeveloperAccount or Application object
// manages them. It returns the account's id.
func signUpByHand(t *testing.T, ns, org string, planID int64, apps ...string) int64 {
	t.Helper()
	c, ctx := harness.ByHand(t, ns), context.Background()
	login := strings.ToLower(strings.ReplaceAll(org, " ", "-"))
	acc, err := c.Signup(ctx, tsclient.SignupParams{OrgName: org, Username: login, Email: login + "@example.com", Password: "s3cret-long-enough"})
	if err != nil {
		t.Fatalf("sign-up of %s: %v", org, err)
	}
	for _, name := range apps {
		if _, err := c.CreateApplication(ctx, acc.ID, tsclient.ApplicationParams{PlanID: planID, Name: name}); err != nil {
			t.Fatalf("application %s of %s: %v", name, org, err)
		}
	}
	return acc.ID
}

// makeDefaultPlanByHand makes a plan its product's default application plan, as a person does in the
// admin portal (PUT .../application_plans/{id}/default.json): porta's signups then contract it.
func makeDefaultPlanByHand(t *testing.T, ns string, productID, planID int64) {
	t.Helper()
	adminURL, token := harness.TenantOf(ns)
	harness.Send(t, http.MethodPut, fmt.Sprintf("%s/admin/api/services/%d/application_plans/%d/default.json", adminURL, productID, planID), token)
}

// listCalls counts the tenant's lists of a product's applications (the usage report's call) since the
// simulator's statistics were reset.
func listCalls(ns string) int {
	n := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == ns && c.Method == "GET" && c.Endpoint == "/admin/api/applications.json" {
			n += c.Count
		}
	}
	return n
}

// usageOf reads the product again and returns its usage report.
func usageOf(t *testing.T, product *v1alpha1.Product) *v1alpha1.ProductUsage {
	t.Helper()
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	return product.Status.Usage
}

// moveTo moves the product to a lifecycle stage and waits until the controller has acted upon it.
func moveTo(t *testing.T, product *v1alpha1.Product, stage v1alpha1.ProductLifecycle) {
	t.Helper()
	harness.Update(t, product, func() { product.Spec.Lifecycle = stage })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
			return err.Error()
		}
		if product.Status.Lifecycle != stage {
			return fmt.Sprintf("status.lifecycle is %q, want %q", product.Status.Lifecycle, stage)
		}
		return ""
	})
}

// describedEvents lists an object's Events the way `kubectl describe` shows them, oldest first:
// "Type  Reason  From  Message".
func describedEvents(t *testing.T, obj client.Object) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := harness.K8s.List(context.Background(), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	kind := fmt.Sprintf("%T", obj)[len("*v1alpha1."):]
	var evs []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() && e.Regarding.Kind == kind {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		line := fmt.Sprintf("%s  %s  %s  %s", e.Type, e.Reason, e.ReportingController, e.Note)
		if e.Series != nil && e.Series.Count > 1 {
			line += fmt.Sprintf(" (x%d)", e.Series.Count)
		}
		out = append(out, line)
	}
	return out
}

// condition returns the status and message of one condition of an object, read again.
func condition(t *testing.T, obj engine.Object, kind string) (metav1.ConditionStatus, string) {
	t.Helper()
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(obj.GetSyncStatus().Conditions, kind)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Message
}

// TestUsageReportNamesAccountsApplicationsAndPlans: a Deprecated product's report counts every live
// application on it (with or without an Application object), lists the default top 10 of 13 accounts
// (most applications first, then by account id) with their applications and plans, and lists the
// product's applications at most once per period however often the product is reconciled.
func TestUsageReportNamesAccountsApplicationsAndPlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	acme, pw1 := harness.DevAccount(ns, "acme")
	other, pw2 := harness.DevAccount(ns, "other")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	basic, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	apps := []engine.Object{harness.Application(ns, "a1", "acme", "basic"), harness.Application(ns, "a2", "acme", "gold"), harness.Application(ns, "o1", "other", "gold")}
	harness.Create(t, harness.DefaultSecret(ns), acme, pw1, other, pw2, backend, product, basic, gold, apps[0], apps[1], apps[2])
	harness.WaitState(t, v1alpha1.ConditionSynced, append(apps, product, basic, gold, acme, other)...)
	// 11 developer-portal sign-ups, one application each, made after the two accounts above (higher ids).
	want := []v1alpha1.AccountUsage{
		{Account: "Org acme", AccountID: acme.Status.AccountID, Applications: []v1alpha1.ApplicationUsage{{Name: "a1", Plan: "basic"}, {Name: "a2", Plan: "gold"}}},
		{Account: "Org other", AccountID: other.Status.AccountID, Applications: []v1alpha1.ApplicationUsage{{Name: "o1", Plan: "gold"}}},
	}
	for i := range 11 {
		org := fmt.Sprintf("Portal %02d", i)
		id := signUpByHand(t, ns, org, basic.Status.PlanID, fmt.Sprintf("portal-app-%02d", i))
		if len(want) < 10 {
			want = append(want, v1alpha1.AccountUsage{Account: org, AccountID: id,
				Applications: []v1alpha1.ApplicationUsage{{Name: fmt.Sprintf("portal-app-%02d", i), Plan: "basic"}}})
		}
	}
	moveTo(t, product, v1alpha1.LifecycleDeprecated)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if u := usageOf(t, product); u == nil || u.LiveApplications != 14 {
			return fmt.Sprintf("usage report %+v, want 14 live applications", u)
		}
		return ""
	})
	if diff := cmp.Diff(want, product.Status.Usage.Accounts); diff != "" {
		t.Errorf("accounts of the usage report (-want +got):\n%s", diff)
	}
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, "deprecated since "+time.Now().UTC().Format(time.DateOnly)+": 14 live applications in 10 accounts still use it") {
		t.Errorf("the Deprecated product's message: %q", msg)
	}

	// Reconciled every 200ms for 5s (each bump of sync-now re-reads the product from 3scale): with a 2s
	// period, at most 3 lists.
	harness.Sim.ResetStats()
	deadline := time.Now().Add(5 * time.Second)
	bumps := 0
	for ; time.Now().Before(deadline); bumps++ {
		harness.Update(t, product, func() {
			product.Annotations = map[string]string{v1alpha1.SyncNowAnnotation: fmt.Sprint(bumps)}
		})
		time.Sleep(200 * time.Millisecond)
	}
	lists := listCalls(ns)
	reads := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == ns && c.Method == "GET" && c.Endpoint == "/admin/api/services/{service_id}/proxy.json" {
			reads += c.Count
		}
	}
	if reads < bumps/4 { // the workqueue may merge bumps that come while a reconcile runs
		t.Fatalf("the product was read %d times for %d sync-now bumps: the reconciles this test forces did not happen", reads, bumps)
	}
	if lists < 1 || lists > 3 {
		t.Errorf("%d lists of the product's applications in 5s of %d reconciles with a 2s period, want 1 to 3 (at most one per period)", lists, reads)
	}
}

// TestLifecycleMovesAreEventsAndDrivePlans: each move (Draft → Published → Deprecated → Published →
// Deprecated → Retired) is an Event, in order, as `kubectl describe` shows; a plan with published: false
// stays hidden on a Published product, and un-deprecating re-publishes the plans that want to be.
func TestLifecycleMovesAreEventsAndDrivePlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.Lifecycle = v1alpha1.LifecycleDraft
	open, closed := harness.BasicPlan(ns, "open", "petstore"), harness.BasicPlan(ns, "closed", "petstore")
	unpublished := false
	closed.Spec.Published = &unpublished
	harness.Create(t, harness.DefaultSecret(ns), backend, product, open, closed)
	harness.WaitState(t, v1alpha1.ConditionSynced, product, open, closed)
	plansAre := func(stage v1alpha1.ProductLifecycle, wantOpen string) {
		t.Helper()
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if got := planStates(ns); got["open"] != wantOpen || got["closed"] != "hidden" {
				return fmt.Sprintf("plans of a %s product: %v, want open %s and closed hidden", stage, got, wantOpen)
			}
			return ""
		})
	}
	plansAre(v1alpha1.LifecycleDraft, "hidden")
	moves := []struct {
		to       v1alpha1.ProductLifecycle
		wantOpen string
	}{
		{v1alpha1.LifecyclePublished, "published"},
		{v1alpha1.LifecycleDeprecated, "hidden"},
		{v1alpha1.LifecyclePublished, "published"}, // un-deprecate
		{v1alpha1.LifecycleDeprecated, "hidden"},
		{v1alpha1.LifecycleRetired, "hidden"},
	}
	for _, m := range moves {
		moveTo(t, product, m.to)
		plansAre(m.to, m.wantOpen)
	}
	// One Event per move, in order (each regards another resourceVersion of the product, so the second
	// Published → Deprecated is an Event of its own, not a series).
	var want []string
	from := v1alpha1.LifecycleDraft
	for _, m := range moves {
		want = append(want, fmt.Sprintf("Normal  %s  apimsync-product  the product moved from %s to %s", v1alpha1.ReasonLifecycleChanged, from, m.to))
		from = m.to
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		var got []string
		for _, e := range describedEvents(t, product) {
			if strings.Contains(e, v1alpha1.ReasonLifecycleChanged) {
				got = append(got, e)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return "lifecycle events (-want +got):\n" + diff
		}
		return ""
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, "retired on "+time.Now().UTC().Format(time.DateOnly)+": 0 applications suspended, 0 still live") {
			return "the Retired product's message: " + msg
		}
		return ""
	})
}

// TestRetiredProductSuspendsEveryApplicationOnIt: retiring a product suspends every application on it in
// 3scale, also those no Application object manages (developer-portal sign-ups), and nothing on another
// product; the first report in Retired already counts them; each Application is Stalled saying when
// the product was retired, and its credentials Secret (custom name or not) is deleted; nothing leaves
// Retired.
func TestRetiredProductSuspendsEveryApplicationOnIt(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	a1, a2 := harness.Application(ns, "a1", "acme", "basic"), harness.Application(ns, "a2", "acme", "basic")
	a1.Spec.CredentialsSecretName = "a1-keys"
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, plan, a1, a2)
	harness.WaitState(t, v1alpha1.ConditionSynced, a1, a2, product, plan)
	secrets := []string{"a1-keys", "a2-credentials"}
	for _, name := range secrets {
		if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); err != nil {
			t.Fatalf("credentials Secret %s before retiring: %v", name, err)
		}
	}
	// Behind apimsync's back: the plan made the product's default, so that a sign-up gets an "API
	// signup" application on it from 3scale itself; a portal sign-up with two more applications on the
	// product, and a product apimsync does not manage, with a live application of the same account.
	makeDefaultPlanByHand(t, ns, product.Status.ProductID, plan.Status.PlanID)
	portal := signUpByHand(t, ns, "Portal dev", plan.Status.PlanID, "signup-1", "signup-2")
	c := harness.ByHand(t, ns)
	stranger, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Stranger", SystemName: "stranger"})
	if err != nil {
		t.Fatal(err)
	}
	strangerPlan, err := c.CreatePlan(ctx, stranger.ID, tsclient.PlanParams{Name: "free", SystemName: "free"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateApplication(ctx, portal, tsclient.ApplicationParams{PlanID: strangerPlan.ID, Name: "elsewhere"}); err != nil {
		t.Fatal(err)
	}

	moveTo(t, product, v1alpha1.LifecycleDeprecated)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		u := usageOf(t, product)
		if u == nil || u.Lifecycle != v1alpha1.LifecycleDeprecated || u.LiveApplications != 5 {
			return fmt.Sprintf("usage report of the Deprecated product %+v, want 5 live applications", u)
		}
		for _, a := range u.Accounts {
			if a.AccountID == portal && slices.Contains(a.Applications, v1alpha1.ApplicationUsage{Name: "API signup", Plan: "basic"}) {
				return ""
			}
		}
		return fmt.Sprintf("usage report %+v does not list the sign-up's own application", u.Accounts)
	})
	mark := len(harness.Sim.Writes(ns))
	moveTo(t, product, v1alpha1.LifecycleRetired)
	// The first report taken in Retired counts the suspensions already (no wait for the next period).
	var first v1alpha1.ProductUsage
	harness.Eventually(t, harness.WaitTimeout, func() string {
		u := usageOf(t, product)
		if u == nil || u.Lifecycle != v1alpha1.LifecycleRetired {
			return fmt.Sprintf("no usage report taken in Retired: %+v", u)
		}
		first = *u
		return ""
	})
	if first.SuspendedApplications != 5 || first.LiveApplications != 0 {
		t.Errorf("first report of the Retired product: %d suspended, %d live; want 5 and 0", first.SuspendedApplications, first.LiveApplications)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, "retired on "+today+": 5 applications suspended, 0 still live") {
		t.Errorf("the Retired product's message: %q", msg)
	}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		ev := strings.Join(describedEvents(t, product), "\n")
		// The sweep suspends what is still live; the Application objects may have suspended theirs first.
		if !strings.Contains(ev, "Normal  "+v1alpha1.ReasonApplicationsSuspended+"  apimsync-product  the product is retired: ") ||
			!strings.Contains(ev, "; 5 suspended in all, 0 still live") {
			return "no event with the count of suspended applications:\n" + ev
		}
		return ""
	})
	for _, a := range harness.Sim.Objects(ns, simulator.KindApplications) {
		want := "suspended"
		if fmt.Sprint(a["service_id"]) == fmt.Sprint(stranger.ID) {
			want = "live" // not ours
		}
		if a["state"] != want {
			t.Errorf("application %v (service %v) is %v, want %s", a["name"], a["service_id"], a["state"], want)
		}
	}
	if got := harness.Sim.Count(ns, simulator.KindApplications); got != 6 {
		t.Errorf("%d applications in 3scale, want 6", got)
	}
	for _, a := range []engine.Object{a1, a2} {
		harness.WaitReason(t, a, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductRetired)
	}
	var suspends []string
	for _, w := range harness.Sim.Writes(ns)[mark:] {
		if strings.HasSuffix(w.Endpoint, "/suspend.json") {
			suspends = append(suspends, fmt.Sprint(w.Code))
		}
	}
	if want := []string{"200", "200", "200", "200", "200"}; !slices.Equal(suspends, want) {
		t.Errorf("suspend calls while retiring %v, want one per live application: %v", suspends, want)
	}
	for _, a := range []engine.Object{a1, a2} {
		if status, msg := condition(t, a, v1alpha1.ConditionStalled); status != metav1.ConditionTrue || !strings.Contains(msg, "product petstore was retired on "+today) {
			t.Errorf("%s: Stalled is %q (%q), want True saying when the product was retired", a.GetName(), status, msg)
		}
	}
	for _, name := range secrets {
		err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the credentials Secret %s is still there (%v)", name, err)
		}
	}
	product.Spec.Lifecycle = v1alpha1.LifecyclePublished
	if err := harness.K8s.Update(ctx, product); err == nil || !strings.Contains(err.Error(), "stays Retired") {
		t.Errorf("leaving Retired: %v, want refused", err)
	}
}

// TestRetiredProductTakesNoApplicationAndIsDeletedByTheCascade: a Draft product retired at once
// suspends its preview application; the one that waited for publication and a new one are refused
// (ProductRetired) and never created in 3scale; deleting the Retired product deletes its plans and
// their Applications first, then the service, as for any product.
func TestRetiredProductTakesNoApplicationAndIsDeletedByTheCascade(t *testing.T) {
	ns := harness.NewNamespace(t)
	d := newDraftProduct(t, ns)
	product, basic, internal, waiting, tester := d.product, d.basic, d.internal, d.waiting, d.tester

	moveTo(t, product, v1alpha1.LifecycleRetired)
	harness.WaitReason(t, tester, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductRetired)
	newcomer := harness.Application(ns, "late", "acme", "basic")
	harness.Create(t, newcomer)
	for _, a := range []engine.Object{waiting, newcomer} {
		harness.WaitReason(t, a, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductRetired)
		if _, _, msg := harness.SyncState(t, a); !strings.Contains(msg, "is Retired: it takes no application") {
			t.Errorf("%s: %q", a.GetName(), msg)
		}
	}
	remote := harness.Sim.Objects(ns, simulator.KindApplications)
	if len(remote) != 1 || remote[0]["state"] != "suspended" {
		t.Errorf("applications in 3scale: %v, want only the tester's, suspended", remote)
	}

	harness.DeleteObjects(t, product)
	harness.WaitGone(t, product, basic, internal, tester, waiting, newcomer)
	for _, kind := range []string{simulator.KindServices, simulator.KindPlans, simulator.KindApplications} {
		if got := harness.Sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale, want 0", got, kind)
		}
	}
}

// TestRetirementSweepIsDueOnceAfterTheMove: a Retired product sweeps its applications when its report
// was taken in another stage or there is none, not once it has a Retired report, and not after an
// upgrade from a version whose reports had no stage (those products were retired before the sweep).
func TestRetirementSweepIsDueOnceAfterTheMove(t *testing.T) {
	product := func(stage, seen v1alpha1.ProductLifecycle) *v1alpha1.Product {
		p := harness.PetstoreProduct("ns", "pets")
		p.Spec.Lifecycle, p.Status.Lifecycle = stage, seen
		return p
	}
	cases := map[string]struct {
		p    *v1alpha1.Product
		want bool
	}{
		"just retired from Published":                  {product(v1alpha1.LifecycleRetired, v1alpha1.LifecyclePublished), true},
		"just retired from Deprecated":                 {product(v1alpha1.LifecycleRetired, v1alpha1.LifecycleDeprecated), true},
		"created Retired, restored or re-applied bare": {product(v1alpha1.LifecycleRetired, ""), false},
		"retired earlier (swept or not, as recorded)":  {product(v1alpha1.LifecycleRetired, v1alpha1.LifecycleRetired), false},
		"deprecated": {product(v1alpha1.LifecycleDeprecated, v1alpha1.LifecyclePublished), false},
	}
	l := &productkind.Lifecycle{}
	for name, c := range cases {
		l.Track(c.p)
		if got := productkind.RetirementSweepDue(c.p); got != c.want {
			t.Errorf("%s: sweep due %v, want %v", name, got, c.want)
		}
		if c.want { // once swept (suspendAll, or nothing live), it is not due again
			l.StoreUsage(c.p, nil)
			c.p.Status.RetirementSweepPending = false
			l.Track(c.p)
			if productkind.RetirementSweepDue(c.p) {
				t.Errorf("%s: sweep due again after it was made", name)
			}
		}
	}
}

// TestRetiringDeletesOnlyCredentialsSecretsTheApplicationControls: a credentials Secret name that is
// another Secret's role is refused (at admission for the provider-account Secret's default name, by the
// controller for the account's own provider-account Secret), and retiring the product deletes only the
// credentials Secrets the Applications created: a user's Secret named by credentialsSecretName (the
// Application Invalid for it) survives, and so does the provider-account Secret.
func TestRetiringDeletesOnlyCredentialsSecretsTheApplicationControls(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	ours := harness.Application(ns, "ours", "acme", "basic")
	theirs := harness.Application(ns, "theirs", "acme", "basic")
	theirs.Spec.CredentialsSecretName = "users-own"
	usersOwn := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users-own"}, StringData: map[string]string{"note": "mine"}}
	harness.Create(t, harness.DefaultSecret(ns), usersOwn, acc, pw, backend, product, plan, ours, theirs)

	refused := harness.Application(ns, "refused", "acme", "basic")
	refused.Spec.CredentialsSecretName = v1alpha1.DefaultProviderAccountSecret
	if err := harness.K8s.Create(ctx, refused); err == nil || !strings.Contains(err.Error(), "must not name the provider-account Secret") {
		t.Errorf("credentialsSecretName naming the provider-account Secret: %v, want refused at admission", err)
	}
	byo := harness.WithCredentials(harness.Application(ns, "byo", "acme", "basic"), "byo-creds")
	byo.Spec.CredentialsSecretName = "byo-creds"
	if err := harness.K8s.Create(ctx, byo); err == nil || !strings.Contains(err.Error(), "must not name the credentialsRef Secret") {
		t.Errorf("credentialsSecretName naming the credentialsRef Secret: %v, want refused at admission", err)
	}
	// The account's provider account under another name: only the controller knows it.
	other := harness.ProviderSecret(ns, "team-tenant", "", "")
	adminURL, token := harness.TenantOf(ns)
	other.StringData["adminURL"], other.StringData["token"] = adminURL, token
	acc2, pw2 := harness.DevAccount(ns, "beta")
	acc2.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "team-tenant"}
	onTenant := harness.Application(ns, "on-tenant", "beta", "basic")
	onTenant.Spec.CredentialsSecretName = "team-tenant"
	harness.Create(t, other, acc2, pw2, onTenant)
	harness.WaitReason(t, onTenant, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, onTenant); !strings.Contains(msg, `the credentials Secret "team-tenant" is the provider-account Secret`) {
		t.Errorf("credentials Secret named after the account's provider-account Secret: %q", msg)
	}

	harness.WaitState(t, v1alpha1.ConditionSynced, ours, product, plan)
	harness.WaitReason(t, theirs, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	moveTo(t, product, v1alpha1.LifecycleDeprecated)
	moveTo(t, product, v1alpha1.LifecycleRetired)
	for _, a := range []engine.Object{ours, theirs} {
		harness.WaitReason(t, a, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductRetired)
	}
	if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ours-credentials"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the retired application's own credentials Secret is still there (%v)", err)
	}
	for _, name := range []string{"users-own", "team-tenant", v1alpha1.DefaultProviderAccountSecret} {
		var s corev1.Secret
		if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil || !s.DeletionTimestamp.IsZero() {
			t.Errorf("Secret %s, which no Application controls, was deleted by the retirement (%v)", name, err)
		}
	}
}

// TestRetirementSweepHappensOncePerRetirement: a retired product's sweep suspends its live applications
// once; an application a person resumed afterwards stays live when the product is re-applied without its
// status (deleted with Retain and applied again, as a restore or a GitOps move does): the re-applied
// product adopts its service, Retired, and sweeps nothing.
func TestRetirementSweepHappensOncePerRetirement(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product, plan := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore")
	product.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain
	app := harness.Application(ns, "app", "acme", "basic")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, plan, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app, product, plan)
	moveTo(t, product, v1alpha1.LifecycleDeprecated)
	moveTo(t, product, v1alpha1.LifecycleRetired)
	harness.WaitReason(t, app, v1alpha1.ConditionInvalid, v1alpha1.ReasonProductRetired)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := harness.RemoteApp(t, ns, app)["state"]; got != "suspended" {
			return fmt.Sprintf("the application is %v in 3scale, want suspended by the sweep", got)
		}
		return ""
	})
	// A person resumes it (a grace period for one consumer).
	if _, err := harness.ByHand(t, ns).ResumeApplication(ctx, app.Status.AccountID, app.Status.ApplicationID); err != nil {
		t.Fatal(err)
	}
	harness.DeleteObjects(t, product)
	harness.WaitGone(t, product)
	mark := len(harness.Sim.Writes(ns))
	again := harness.PetstoreProduct(ns, "pets")
	again.Spec.Lifecycle = v1alpha1.LifecycleRetired
	harness.Create(t, again)
	harness.WaitState(t, v1alpha1.ConditionSynced, again)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if u := usageOf(t, again); u == nil || u.LiveApplications != 1 {
			return fmt.Sprintf("usage report of the re-applied product: %+v, want 1 live application", u)
		}
		return ""
	})
	for _, w := range harness.Sim.Writes(ns)[mark:] {
		if strings.HasSuffix(w.Endpoint, "/suspend.json") {
			t.Errorf("the re-applied product swept again: %s %s %d", w.Method, w.Endpoint, w.Code)
		}
	}
	if got := harness.RemoteApp(t, ns, app)["state"]; got != "live" {
		t.Errorf("the resumed application is %v in 3scale, want live", got)
	}
}
