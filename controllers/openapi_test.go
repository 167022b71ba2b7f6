package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
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
	eventually(t, waitTimeout, func() string {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
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
	ns := newNamespace(t)
	o := openAPIObject(ns, "petstore", petstoreOpenAPI)
	create(t, defaultSecret(ns), o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if !strings.Contains(msg, "2 operations imported") || o.Status.Operations != 2 {
		t.Errorf("Synced message %q, operations %d", msg, o.Status.Operations)
	}
	product, backend, doc := &v1alpha1.Product{}, &v1alpha1.Backend{}, &v1alpha1.ActiveDoc{}
	for _, obj := range []client.Object{product, backend, doc} {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "petstore"}, obj); err != nil {
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
	if n := sim.Count(ns, simulator.KindServices); n != 1 {
		t.Errorf("%d services in 3scale, want 1", n)
	}
	if n := sim.Count(ns, simulator.KindAPIDocs); n != 1 {
		t.Errorf("%d ActiveDocs in 3scale, want 1", n)
	}

	// A hand edit of a generated resource is put back, and said so.
	update(t, product, func() { product.Spec.Name = "Edited by hand" })
	eventually(t, waitTimeout, func() string {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
			return err.Error()
		}
		if product.Spec.Name != "Petstore API" {
			return "the product's name is still " + product.Spec.Name
		}
		return ""
	})
	eventually(t, waitTimeout, func() string {
		if ev := strings.Join(eventsOf(t, o), "\n"); !strings.Contains(ev, ReasonEditReverted) {
			return "no EditReverted event: " + ev
		}
		return ""
	})

	// The document changes: regenerated.
	update(t, o, func() {
		o.Spec.Document = strings.Replace(petstoreOpenAPI, "components:", `  /stores:
    get:
      operationId: listStores
      responses:
        "200": {description: the stores}
components:`, 1)
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil {
		t.Fatal(err)
	}
	if _, ok := product.Spec.Methods["liststores"]; !ok || o.Status.Operations != 3 {
		t.Errorf("after the edit: methods %v, operations %d", product.Spec.Methods, o.Status.Operations)
	}

	// Not an OpenAPI document: Invalid, with the parser's message; the generated resources stay.
	update(t, o, func() { o.Spec.Document = "openapi: 3.0.0\ninfo: {version: '1'}\npaths: {}" })
	msg = waitOpenAPI(t, o, v1alpha1.ConditionInvalid, ReasonInvalidDocument)
	if !strings.Contains(msg, "not a valid OpenAPI document") {
		t.Errorf("Invalid message %q", msg)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(product), product); err != nil || !product.DeletionTimestamp.IsZero() {
		t.Errorf("the generated product went with an invalid document: %v", err)
	}
}

// TestOpenAPINeverTakesWhatIsNotItsOwn: a Backend of the same name made by someone else is left alone
// and the OpenAPI is Invalid naming it; a document of 2,000 operations, or asking for OpenID Connect
// without spec.oidc, is Invalid with what to do.
func TestOpenAPINeverTakesWhatIsNotItsOwn(t *testing.T) {
	ns := newNamespace(t)
	theirs := petsBackend(ns)
	theirs.Name = "shop"
	o := openAPIObject(ns, "shop", petstoreOpenAPI)
	create(t, defaultSecret(ns), theirs, o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionInvalid, ReasonNotGenerated)
	if !strings.Contains(msg, `Backend "shop" exists in this namespace and was not generated by this OpenAPI`) {
		t.Errorf("Invalid message %q", msg)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || theirs.Spec.Name != "Pets" || len(theirs.OwnerReferences) != 0 {
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
	create(t, large, oidc)
	if msg := waitOpenAPI(t, large, v1alpha1.ConditionInvalid, ReasonInvalidDocument); !strings.Contains(msg, "more than 64 operations") {
		t.Errorf("2,000 operations: %q", msg)
	}
	if msg := waitOpenAPI(t, oidc, v1alpha1.ConditionInvalid, ReasonOIDCIssuerNeeded); !strings.Contains(msg, "set spec.oidc") {
		t.Errorf("OpenID Connect without spec.oidc: %q", msg)
	}
}
