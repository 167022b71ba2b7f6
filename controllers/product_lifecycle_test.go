package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/test/simulator"
)

// planStates returns the state of each plan in 3scale by system name.
func planStates(ns string) map[string]string {
	out := map[string]string{}
	for _, p := range sim.Objects(ns, simulator.KindPlans) {
		out[fmt.Sprint(p["system_name"])] = fmt.Sprint(p["state"])
	}
	return out
}

// TestDraftProductHidesPlansAndHoldsApplications: in Draft every plan is hidden in 3scale (but one with
// allowInDraft), a new Application waits (ProductDraft) unless its plan allows drafts; publishing the
// product publishes its plans and lets the application through.
func TestDraftProductHidesPlansAndHoldsApplications(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	backend, product := petsBackend(ns), petstoreProduct(ns, "pets")
	product.Spec.Lifecycle = v1alpha1.LifecycleDraft
	basic, internal := basicPlan(ns, "basic", "petstore"), basicPlan(ns, "internal", "petstore")
	internal.Spec.AllowInDraft = true
	waiting, tester := application(ns, "early", "acme", "basic"), application(ns, "tester", "acme", "internal")
	create(t, defaultSecret(ns), acc, pw, backend, product, basic, internal, waiting, tester)
	waitState(t, v1alpha1.ConditionSynced, basic, internal, tester)
	waitReason(t, waiting, v1alpha1.ConditionOrphan, ReasonProductDraft)
	if got := planStates(ns); got["basic"] != "hidden" || got["internal"] != "published" {
		t.Errorf("plans in Draft: %v, want basic hidden and internal published", got)
	}
	update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecyclePublished })
	waitState(t, v1alpha1.ConditionSynced, waiting)
	eventually(t, waitTimeout, func() string {
		if got := planStates(ns); got["basic"] != "published" {
			return fmt.Sprintf("plans after publishing: %v", got)
		}
		return ""
	})
	if ev := strings.Join(eventsOf(t, product), "\n"); !strings.Contains(ev, "moved from Draft to Published") {
		t.Errorf("no lifecycle event: %s", ev)
	}
}

// TestDeprecatedProductKeepsItsApplicationsAndReportsThem: Deprecated hides every plan, refuses a new
// Application (ProductDeprecated) while an existing one stays Synced and live; the usage report lists
// the accounts, costs at most one list call per period, and feeds the metric.
func TestDeprecatedProductKeepsItsApplicationsAndReportsThem(t *testing.T) {
	ns := newNamespace(t)
	acme, pw1 := devAccount(ns, "acme")
	other, pw2 := devAccount(ns, "other")
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	product.Spec.UsageReport = &v1alpha1.UsageReportSpec{Top: 1}
	apps := []syncedObject{application(ns, "a1", "acme", "basic"), application(ns, "a2", "acme", "basic"), application(ns, "o1", "other", "basic")}
	create(t, defaultSecret(ns), acme, pw1, other, pw2, backend, product, plan, apps[0], apps[1], apps[2])
	waitState(t, v1alpha1.ConditionSynced, append(apps, product, plan)...)
	update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecycleDeprecated })
	eventually(t, waitTimeout, func() string {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
			return err.Error()
		}
		u := product.Status.Usage
		if u == nil || u.LiveApplications != 3 || len(u.Accounts) != 1 || u.Accounts[0].Account != "Org acme" || len(u.Accounts[0].Applications) != 2 {
			return fmt.Sprintf("usage report %+v", u)
		}
		return ""
	})
	if got := planStates(ns); got["basic"] != "hidden" {
		t.Errorf("plan of a Deprecated product is %s, want hidden", got["basic"])
	}
	if got := testutil.ToFloat64(engine.DeprecatedProductApplications.WithLabelValues(ns, "petstore")); got != 3 {
		t.Errorf("apimsync_deprecated_product_applications = %v, want 3", got)
	}
	newcomer := application(ns, "late", "other", "basic")
	create(t, newcomer)
	waitReason(t, newcomer, v1alpha1.ConditionInvalid, ReasonProductDeprecated)
	waitState(t, v1alpha1.ConditionSynced, apps...)
	for _, a := range sim.Objects(ns, simulator.KindApplications) {
		if a["state"] != "live" {
			t.Errorf("application %v is %v, want live", a["name"], a["state"])
		}
	}
	// At most one list of the product's applications per period (2s in the tests).
	sim.ResetStats()
	time.Sleep(5 * time.Second)
	lists := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == ns && c.Endpoint == "/admin/api/applications.json" {
			lists += c.Count
		}
	}
	if lists < 1 || lists > 3 {
		t.Errorf("%d usage lists in 5s with a 2s period, want 2 or 3 (at most one per period)", lists)
	}
}

// TestRetiredProductSuspendsItsApplications: Retired suspends every application in 3scale, deletes their
// credentials Secrets, and leaves each Application Invalid (Stalled) saying when the product was
// retired; the Product counts them; nothing leaves Retired.
func TestRetiredProductSuspendsItsApplications(t *testing.T) {
	ns := newNamespace(t)
	acc, pw := devAccount(ns, "acme")
	backend, product, plan := petsBackend(ns), petstoreProduct(ns, "pets"), basicPlan(ns, "basic", "petstore")
	apps := []syncedObject{application(ns, "a1", "acme", "basic"), application(ns, "a2", "acme", "basic")}
	create(t, defaultSecret(ns), acc, pw, backend, product, plan, apps[0], apps[1])
	waitState(t, v1alpha1.ConditionSynced, append(apps, product)...)
	update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecycleDeprecated })
	update(t, product, func() { product.Spec.Lifecycle = v1alpha1.LifecycleRetired })
	for _, a := range apps {
		waitReason(t, a, v1alpha1.ConditionInvalid, ReasonProductRetired)
		if _, _, msg := lifecycle(t, a); !strings.Contains(msg, "product petstore was retired on "+time.Now().UTC().Format(time.DateOnly)) {
			t.Errorf("%s: %q", a.GetName(), msg)
		}
		var secret corev1.Secret
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: a.GetName() + "-credentials"}, &secret)
		if !apierrors.IsNotFound(err) {
			t.Errorf("the credentials Secret of %s is still there (%v)", a.GetName(), err)
		}
	}
	for _, a := range sim.Objects(ns, simulator.KindApplications) {
		if a["state"] != "suspended" {
			t.Errorf("application %v is %v, want suspended", a["name"], a["state"])
		}
	}
	eventually(t, waitTimeout, func() string {
		if _, _, msg := lifecycle(t, product); !strings.Contains(msg, "2 applications suspended") {
			return "product message: " + msg
		}
		return ""
	})
	product.Spec.Lifecycle = v1alpha1.LifecyclePublished
	if err := k8s.Update(context.Background(), product); err == nil || !strings.Contains(err.Error(), "stays Retired") {
		t.Errorf("leaving Retired: %v, want refused", err)
	}
}
