package openapi

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestMethodNamesFromTheGeneratedRulesWhenTheStatusIsLost: an OpenAPI whose status lost methodNames (a
// restore without status) while its document renamed an operation generates the Product with the
// method the operation's rule counted in what it generated before (its id, limits and pricing rules in
// 3scale), read from the cluster; with nothing generated before, the new operationId names it.
func TestMethodNamesFromTheGeneratedRulesWhenTheStatusIsLost(t *testing.T) {
	const doc = `openapi: 3.0.3
info: {title: Pets, version: '1'}
servers: [{url: 'https://pets.example.com'}]
paths:
  /pets:
    get:
      operationId: findPets
      responses: {'200': {description: ok}}
`
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pets", UID: "u-1"}, Spec: v1alpha1.OpenAPISpec{Document: doc}}
	generated := &v1alpha1.Product{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pets", Labels: map[string]string{v1alpha1.GeneratedByLabel: "pets"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "OpenAPI", Name: "pets", UID: "u-1", Controller: ptr.To(true)}}},
		Spec: v1alpha1.ProductSpec{Name: "Pets", Methods: map[string]v1alpha1.MethodSpec{"listpets": {FriendlyName: "listPets"}},
			MappingRules: []v1alpha1.MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/pets$", MetricMethodRef: "listpets", Increment: 1}}}}

	for name, c := range map[string]struct {
		cluster    []runtime.Object
		wantMethod string
	}{
		"generated before": {[]runtime.Object{o.DeepCopy(), generated}, "listpets"},
		"nothing before":   {[]runtime.Object{o.DeepCopy()}, "findpets"},
	} {
		t.Run(name, func(t *testing.T) {
			cl := fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(c.cluster...).Build()
			r := &Reconciler{Client: cl, Reader: cl}
			wanted, api, err := r.generate(context.Background(), o.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			product := wanted[holderIndex(wanted)].spec.(*v1alpha1.ProductSpec)
			if _, ok := product.Methods[c.wantMethod]; !ok || len(product.Methods) != 1 || product.MappingRules[0].MetricMethodRef != c.wantMethod {
				t.Errorf("generated methods %v, rules %v, want one method %q counted by the rule", product.Methods, product.MappingRules, c.wantMethod)
			}
			if got := api.MethodNames["GET /pets"]; got != c.wantMethod {
				t.Errorf("status.methodNames %v, want GET /pets counted on %q", api.MethodNames, c.wantMethod)
			}
			if c.wantMethod == "listpets" && !strings.Contains(strings.Join(api.Notes, " "), `keeps its method "listpets"`) {
				t.Errorf("notes %q, want the kept method said", api.Notes)
			}
		})
	}
}
