package openapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/openapi"
	"github.com/apimsync/apimsync/test/simulator"
)

const petstoreOpenAPI = `openapi: 3.0.3
info:
  title: Petstore API
  description: Pets for sale.
  version: 1.0.0
servers:
  - url: https://pets.example.com/v1
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      responses:
        "200": {description: the pets}
  /pets/{petId}:
    get:
      operationId: showPet
      summary: Show a pet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
      responses:
        "200": {description: the pet}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
security:
  - key: []
`

func openAPIObject(ns, name, doc string) *v1alpha1.OpenAPI {
	return &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.OpenAPISpec{Document: doc, ActiveDoc: &v1alpha1.OpenAPIActiveDocSpec{Published: true}}}
}

// waitOpenAPI waits until the OpenAPI is in state with reason (any reason when "").
func waitOpenAPI(t *testing.T, o *v1alpha1.OpenAPI, state, reason string) string {
	t.Helper()
	var message string
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			return err.Error()
		}
		for _, c := range o.Status.Conditions {
			if c.Type == state && c.Status == metav1.ConditionTrue && (reason == "" || c.Reason == reason) && c.ObservedGeneration == o.Generation {
				message = c.Message
				return ""
			}
		}
		return fmt.Sprintf("conditions %v, want %s %s", o.Status.Conditions, state, reason)
	})
	return message
}

// TestOpenAPIGeneratesItsResources: an OpenAPI document becomes a Backend, a Product (a method and an
// exact mapping rule per operation, the API key of its security) and an ActiveDoc, owned and labelled,
// all synced to 3scale; a hand edit of the Product is put back and said so; a changed document is
// regenerated; a document that is not OpenAPI is Invalid and leaves what was generated alone.
func TestOpenAPIGeneratesItsResources(t *testing.T) {
	ns := harness.NewNamespace(t)
	o := openAPIObject(ns, "petstore", petstoreOpenAPI)
	harness.Create(t, harness.DefaultSecret(ns), o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if !strings.Contains(msg, "2 operations imported") || o.Status.Operations != 2 {
		t.Errorf("Synced message %q, operations %d", msg, o.Status.Operations)
	}
	product, backend, doc := &v1alpha1.Product{}, &v1alpha1.Backend{}, &v1alpha1.ActiveDoc{}
	for _, obj := range []client.Object{product, backend, doc} {
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "petstore"}, obj); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(obj, o) || obj.GetLabels()[v1alpha1.GeneratedByLabel] != "petstore" {
			t.Errorf("%T is not owned and labelled: owners %v, labels %v", obj, obj.GetOwnerReferences(), obj.GetLabels())
		}
	}
	if backend.Spec.PrivateBaseURL != "https://pets.example.com/v1" || product.Spec.Name != "Petstore API" {
		t.Errorf("backend upstream %q, product name %q", backend.Spec.PrivateBaseURL, product.Spec.Name)
	}
	if a := product.Spec.Authentication; a == nil || a.UserKey == nil || a.UserKey.AuthUserKey != "X-API-Key" || a.UserKey.CredentialsLocation != "headers" {
		t.Errorf("authentication %+v, want the API key in the X-API-Key header", a)
	}
	if len(product.Spec.Methods) != 2 || len(product.Spec.MappingRules) != 2 || product.Spec.MappingRules[0].Pattern != "/pets$" {
		t.Errorf("methods %v, rules %v", product.Spec.Methods, product.Spec.MappingRules)
	}
	if n := harness.Sim.Count(ns, simulator.KindServices); n != 1 {
		t.Errorf("%d services in 3scale, want 1", n)
	}
	if n := harness.Sim.Count(ns, simulator.KindAPIDocs); n != 1 {
		t.Errorf("%d ActiveDocs in 3scale, want 1", n)
	}

	// A hand edit of a generated resource is put back, and said so.
	harness.Update(t, product, func() { product.Spec.Name = "Edited by hand" })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
			return err.Error()
		}
		if product.Spec.Name != "Petstore API" {
			return "the product's name is still " + product.Spec.Name
		}
		return ""
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if ev := strings.Join(harness.EventsOf(t, o), "\n"); !strings.Contains(ev, v1alpha1.ReasonEditReverted) {
			return "no EditReverted event: " + ev
		}
		return ""
	})

	// The document changes: regenerated.
	harness.Update(t, o, func() {
		o.Spec.Document = strings.Replace(petstoreOpenAPI, "components:", `  /stores:
    get:
      operationId: listStores
      responses:
        "200": {description: the stores}
components:`, 1)
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	if _, ok := product.Spec.Methods["liststores"]; !ok || o.Status.Operations != 3 {
		t.Errorf("after the edit: methods %v, operations %d", product.Spec.Methods, o.Status.Operations)
	}

	// Not an OpenAPI document: Invalid, with the parser's message; the generated resources stay.
	harness.Update(t, o, func() { o.Spec.Document = "openapi: 3.0.0\ninfo: {version: '1'}\npaths: {}" })
	msg = waitOpenAPI(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)
	if !strings.Contains(msg, "not a valid OpenAPI document") {
		t.Errorf("Invalid message %q", msg)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil || !product.DeletionTimestamp.IsZero() {
		t.Errorf("the generated product went with an invalid document: %v", err)
	}
}

// TestOpenAPINeverTakesWhatIsNotItsOwn: a Backend of the same name made by someone else is left alone
// and the OpenAPI is Invalid naming it; a document of 2,000 operations, or asking for OpenID Connect
// without spec.oidc, is Invalid with what to do.
func TestOpenAPINeverTakesWhatIsNotItsOwn(t *testing.T) {
	ns := harness.NewNamespace(t)
	theirs := harness.PetsBackend(ns)
	theirs.Name = "shop"
	o := openAPIObject(ns, "shop", petstoreOpenAPI)
	harness.Create(t, harness.DefaultSecret(ns), theirs, o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonNotGenerated)
	if !strings.Contains(msg, `Backend "shop" exists in this namespace and was not generated by this OpenAPI`) {
		t.Errorf("Invalid message %q", msg)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || theirs.Spec.Name != "Pets" || len(theirs.OwnerReferences) != 0 {
		t.Errorf("someone else's Backend was touched: %v, %+v", err, theirs.Spec.Name)
	}

	var big strings.Builder
	big.WriteString("openapi: 3.0.0\ninfo: {title: Big, version: '1'}\nservers: [{url: 'https://big.example.com'}]\npaths:\n")
	for i := range 2000 {
		fmt.Fprintf(&big, "  /r%d:\n    get:\n      responses: {'200': {description: ok}}\n", i)
	}
	large := openAPIObject(ns, "large", big.String())
	oidc := openAPIObject(ns, "sso", strings.Replace(petstoreOpenAPI, "key: {type: apiKey, in: header, name: X-API-Key}",
		"key: {type: openIdConnect, openIdConnectUrl: 'https://sso.example.com/.well-known/openid-configuration'}", 1))
	harness.Create(t, large, oidc)
	if msg := waitOpenAPI(t, large, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument); !strings.Contains(msg, "more than 64 operations") {
		t.Errorf("2,000 operations: %q", msg)
	}
	if msg := waitOpenAPI(t, oidc, v1alpha1.ConditionInvalid, v1alpha1.ReasonOIDCIssuerNeeded); !strings.Contains(msg, "set spec.oidc") {
		t.Errorf("OpenID Connect without spec.oidc: %q", msg)
	}
}

// TestOpenAPIBlockedGeneratesNothing: generation is all or nothing. An OpenAPI whose Product name is
// taken by a hand-made Product creates neither its Backend nor its ActiveDoc (3scale gains no backend
// nobody asked for), and one whose new ActiveDoc is blocked leaves its Backend and Product as they were,
// though its document changed; each is Invalid naming the blocker, which is left alone.
func TestOpenAPIBlockedGeneratesNothing(t *testing.T) {
	ns := harness.NewNamespace(t)
	theirs := harness.PetstoreProduct(ns)
	theirs.Name = "shop"
	shop := openAPIObject(ns, "shop", petstoreOpenAPI)
	harness.Create(t, harness.DefaultSecret(ns), theirs, shop)
	if msg := waitOpenAPI(t, shop, v1alpha1.ConditionInvalid, v1alpha1.ReasonNotGenerated); !strings.Contains(msg, `Product "shop"`) {
		t.Errorf("Invalid message %q, want it to name the Product", msg)
	}
	for _, obj := range []client.Object{&v1alpha1.Backend{}, &v1alpha1.ActiveDoc{}} {
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("a blocked OpenAPI generated a %T: %v", obj, err)
		}
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || theirs.Spec.Name != "Petstore" || len(theirs.OwnerReferences) != 0 {
		t.Errorf("the hand-made Product was touched: %v, %q, owners %v", err, theirs.Spec.Name, theirs.OwnerReferences)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, theirs)
	if n := harness.Sim.Count(ns, simulator.KindBackendAPIs); n != 0 {
		t.Errorf("%d backends in 3scale, want none", n)
	}
	// The blocker goes (its service kept: porta refuses to delete a tenant's last one): the OpenAPI is
	// woken and generates everything (its Product adopts the service left in 3scale, of the same name).
	harness.Update(t, theirs, func() { theirs.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain })
	harness.DeleteObjects(t, theirs)
	waitOpenAPI(t, shop, v1alpha1.ConditionSynced, "")
	generated := &v1alpha1.Product{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, generated); err != nil || !metav1.IsControlledBy(generated, shop) {
		t.Errorf("after the blocker went, Product shop is not the OpenAPI's: %v, owners %v", err, generated.OwnerReferences)
	}

	// Generated without an ActiveDoc, then asked for one whose name is taken, with a new document.
	docs := openAPIObject(ns, "docs", petstoreOpenAPI)
	docs.Spec.ActiveDoc = nil
	harness.Create(t, docs)
	waitOpenAPI(t, docs, v1alpha1.ConditionSynced, "")
	handMade := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Theirs", Document: `{"openapi":"3.0.3","info":{"title":"Theirs","version":"1"},"paths":{}}`}}
	harness.Create(t, handMade)
	harness.Update(t, docs, func() {
		docs.Spec.ActiveDoc = &v1alpha1.OpenAPIActiveDocSpec{Published: true}
		docs.Spec.Document = strings.Replace(petstoreOpenAPI, "title: Petstore API", "title: Petstore API v2", 1)
	})
	if msg := waitOpenAPI(t, docs, v1alpha1.ConditionInvalid, v1alpha1.ReasonNotGenerated); !strings.Contains(msg, `ActiveDoc "docs"`) {
		t.Errorf("Invalid message %q, want it to name the ActiveDoc", msg)
	}
	product, backend := &v1alpha1.Product{}, &v1alpha1.Backend{}
	for _, obj := range []client.Object{product, backend} {
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "docs"}, obj); err != nil {
			t.Fatal(err)
		}
	}
	if product.Spec.Name != "Petstore API" || backend.Spec.Name != "Petstore API" {
		t.Errorf("a blocked OpenAPI updated what it generated: product %q, backend %q", product.Spec.Name, backend.Spec.Name)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(handMade), handMade); err != nil || handMade.Spec.Name != "Theirs" || len(handMade.OwnerReferences) != 0 {
		t.Errorf("the hand-made ActiveDoc was touched: %v, %q, owners %v", err, handMade.Spec.Name, handMade.OwnerReferences)
	}
}

// TestOpenAPIStatusWriteSurvivesAConflict: a status write that conflicts (the OpenAPI changed since it was
// read) is written again on the object as it now is, so the generated hash is not lost: a later hand
// edit of a generated resource is then put back as a hand edit (EditReverted), not taken for a
// regeneration.
func TestOpenAPIStatusWriteSurvivesAConflict(t *testing.T) {
	ctx := context.Background()
	o := openAPIObject("team", "petstore", petstoreOpenAPI)
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(harness.K8s.Scheme()).WithObjects(o).
		WithStatusSubresource(&v1alpha1.OpenAPI{}, &v1alpha1.Backend{}, &v1alpha1.Product{}, &v1alpha1.ActiveDoc{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*v1alpha1.OpenAPI); ok && conflicts == 0 {
				// Someone annotates the OpenAPI between the read and the status write: the write, at
				// the version read, conflicts.
				conflicts++
				var now v1alpha1.OpenAPI
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &now); err != nil {
					return err
				}
				now.Annotations = map[string]string{"example.com/reviewed": "yes"}
				if err := c.Update(ctx, &now); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	recorder := events.NewFakeRecorder(100)
	r := &openapi.Reconciler{Client: c, Reader: c, Recorder: recorder}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(o)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, o); err != nil {
		t.Fatal(err)
	}
	if conflicts != 1 || o.Status.GeneratedHash == "" || len(o.Status.Generated) != 3 {
		t.Fatalf("after %d conflicts: generated hash %q, generated %v; want the status written", conflicts, o.Status.GeneratedHash, o.Status.Generated)
	}

	product := &v1alpha1.Product{}
	if err := c.Get(ctx, req.NamespacedName, product); err != nil {
		t.Fatal(err)
	}
	product.Spec.Name = "Edited by hand"
	if err := c.Update(ctx, product); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, product); err != nil || product.Spec.Name != "Petstore API" {
		t.Errorf("the hand edit was not put back: %v, %q", err, product.Spec.Name)
	}
	var reasons []string
	for len(recorder.Events) > 0 {
		reasons = append(reasons, <-recorder.Events)
	}
	if !slices.ContainsFunc(reasons, func(e string) bool { return strings.Contains(e, v1alpha1.ReasonEditReverted) }) {
		t.Errorf("no EditReverted event: %v", reasons)
	}
}
