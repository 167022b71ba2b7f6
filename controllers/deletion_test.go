package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// TestBackendInUseWaitsForItsProducts: deleting a Backend a Product uses leaves it Terminating with a
// condition naming the Product, which becomes Orphan; removing the usage lets the deletion finish.
func TestBackendInUseWaitsForItsProducts(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)

	harness.DeleteObjects(t, backend)
	harness.WaitReason(t, backend, v1alpha1.ConditionOrphan, v1alpha1.ReasonDeletionBlocked)
	if _, _, msg := harness.SyncState(t, backend); !strings.Contains(msg, "petstore") || !strings.HasPrefix(msg, "deleting:") {
		t.Errorf("the blocked deletion does not name the product: %q", msg)
	}
	harness.WaitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonBackendDeleting)
	assertHealth(t, "Progressing", status.TerminatingStatus, backend)
	if got := harness.Sim.Count(ns, "backend_apis"); got != 1 {
		t.Fatalf("backend deleted from 3scale while in use: %d left", got)
	}

	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	product.Spec.BackendUsages = nil
	if err := harness.K8s.Update(context.Background(), product); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	harness.WaitGone(t, backend)
	if got := harness.Sim.Count(ns, "backend_apis"); got != 0 {
		t.Errorf("%d backends left in 3scale, want 0", got)
	}
}

// TestProductWithManyPlansInMixedStatesIsDeletedCompletely deletes a Product with 12 plans — synced,
// invalid and orphan — and everything goes: the plans first (the Product deletes them), then the product,
// remotely and in the cluster, no finalizer left.
func TestProductWithManyPlansInMixedStatesIsDeletedCompletely(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	var plans []engine.Object
	for i := range 12 {
		p := harness.BasicPlan(ns, fmt.Sprintf("plan-%02d", i), "petstore")
		switch i % 3 {
		case 1: // Invalid: a metric the product does not have
			p.Spec.Limits[0].MetricMethodRef.SystemName = "no_such_metric"
		case 2: // Orphan: a backend metric not defined (yet)
			p.Spec.Limits[1].MetricMethodRef.SystemName = "future_metric"
		}
		harness.Create(t, p)
		plans = append(plans, p)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, plans[0], plans[3], plans[6], plans[9])
	harness.WaitState(t, v1alpha1.ConditionInvalid, plans[1], plans[4])
	harness.WaitState(t, v1alpha1.ConditionOrphan, plans[2], plans[5])
	if got := harness.Sim.Count(ns, "application_plans"); got != 4 {
		t.Fatalf("%d plans in 3scale, want the 4 valid ones", got)
	}

	before := len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, product)
	harness.WaitGone(t, product)
	for _, p := range plans {
		harness.WaitGone(t, p)
	}
	for _, kind := range []string{"services", "application_plans", "limits", "pricing_rules", "backend_usages"} {
		if got := harness.Sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale, want 0", got, kind)
		}
	}
	// The product's deletion is the remote deletion of its plans: one DELETE, the product's.
	var deletes []string
	for _, c := range harness.Sim.Writes(ns)[before:] {
		if c.Method == http.MethodDelete {
			deletes = append(deletes, c.Endpoint)
		}
	}
	if len(deletes) != 1 || strings.Contains(deletes[0], "plan") {
		t.Errorf("DELETEs to 3scale: %v; want the product's alone", deletes)
	}
}

// TestDeletionPolicy: Retain keeps the remote object, Delete removes it.
func TestDeletionPolicy(t *testing.T) {
	ns := harness.NewNamespace(t)
	kept := harness.PetsBackend(ns)
	kept.Name, kept.Spec.DeletionPolicy = "kept", v1alpha1.DeletionPolicyRetain
	removed := harness.PetsBackend(ns)
	removed.Name = "removed"
	harness.Create(t, harness.DefaultSecret(ns), kept, removed)
	harness.WaitState(t, v1alpha1.ConditionSynced, kept, removed)
	harness.DeleteObjects(t, kept, removed)
	harness.WaitGone(t, kept, removed)
	if got := harness.Sim.Count(ns, "backend_apis"); got != 1 {
		t.Errorf("%d backends in 3scale, want 1 (the retained one)", got)
	}
}

// TestNamespaceTeardownLeavesNothing deletes everything of a namespace at once, Secret included, as the
// namespace controller (or an Argo CD prune) does: the Secret's in-use finalizer keeps the credentials
// until the remote cleanup is done, and nothing stays stuck.
func TestNamespaceTeardownLeavesNothing(t *testing.T) {
	ns := harness.NewNamespace(t)
	secret := harness.DefaultSecret(ns)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	plan, gold := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore")
	acc, pw := harness.DevAccount(ns, "acme")
	app1, app2 := harness.Application(ns, "app-1", "acme", "basic"), harness.Application(ns, "app-2", "acme", "gold")
	doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Petstore", ProductRef: "petstore", Document: `{"openapi":"3.0.3","info":{"title":"P","version":"1"},"paths":{}}`}}
	harness.Create(t, secret, backend, product, plan, gold, pw, acc, app1, app2, doc)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product, plan, gold, acc, app1, app2, doc)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		var s corev1.Secret
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(secret), &s); err != nil {
			return err.Error()
		}
		if !controllerutil.ContainsFinalizer(&s, controllers.SecretInUseFinalizer) {
			return "the provider-account Secret has no in-use finalizer"
		}
		return ""
	})

	harness.DeleteObjects(t, secret, plan, gold, product, backend, pw, acc, app1, app2, doc)
	harness.WaitGone(t, plan, gold, product, backend, secret, acc, app1, app2, doc)
	for _, kind := range []string{"services", "backend_apis", "application_plans", "metrics", "mapping_rules", "accounts", "users", "applications", "api_docs"} {
		if got := harness.Sim.Count(ns, kind); got != 0 {
			t.Errorf("%d %s left in 3scale, want 0", got, kind)
		}
	}
}
