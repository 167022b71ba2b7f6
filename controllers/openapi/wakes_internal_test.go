package openapi

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// A plan's event wakes the OpenAPIs of its namespace it may name (its product, the backends it limits),
// and only those that exist: in a burst of plans, an OpenAPI per plan's product was a reconcile of nothing.
func TestAPlanWakesOnlyTheOpenAPIsItNames(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	openAPI := func(ns, name string) *v1alpha1.OpenAPI {
		return &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(openAPI("team", "pets"), openAPI("team", "stores"), openAPI("team", "other"), openAPI("elsewhere", "toys")).Build()
	plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "basic"}, Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "pets",
		Limits: []v1alpha1.LimitSpec{
			{Period: "day", Value: 5, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits", Backend: "stores"}},
			{Period: "day", Value: 5, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits", Backend: "toys"}}, // no OpenAPI of team
		}}}
	var got []string
	for _, r := range namedBy(reader)(context.Background(), plan) {
		got = append(got, r.String())
	}
	if want := "[team/pets team/stores]"; fmt.Sprint(got) != want {
		t.Errorf("woken %v, want %s", got, want)
	}
	plan.Spec.ProductRef = "nobody"
	plan.Spec.Limits = nil
	if reqs := namedBy(reader)(context.Background(), plan); len(reqs) != 0 {
		t.Errorf("a plan naming no OpenAPI woke %v", reqs)
	}
}

// Only a plan's spec and deletion can change what an OpenAPI waits for; its status writes wake none.
func TestOnlyAPlansSpecOrDeletionWakesOpenAPIs(t *testing.T) {
	before := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "basic", Generation: 1}}
	update := func(change func(p *v1alpha1.ApplicationPlan)) bool {
		after := before.DeepCopy()
		change(after)
		return limitsMayChange.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after})
	}
	if update(func(p *v1alpha1.ApplicationPlan) { p.Status.PlanID = 7; p.Finalizers = []string{"x"} }) {
		t.Error("a status write or a finalizer woke the OpenAPIs")
	}
	if !update(func(p *v1alpha1.ApplicationPlan) { p.Generation = 2 }) {
		t.Error("a new spec did not wake the OpenAPIs")
	}
	if !update(func(p *v1alpha1.ApplicationPlan) { now := metav1.Now(); p.DeletionTimestamp = &now }) {
		t.Error("a deletion begun did not wake the OpenAPIs")
	}
	var plan client.Object = before
	if !limitsMayChange.Create(event.CreateEvent{Object: plan}) || !limitsMayChange.Delete(event.DeleteEvent{Object: plan}) {
		t.Error("a plan's creation or deletion did not wake the OpenAPIs")
	}
}
