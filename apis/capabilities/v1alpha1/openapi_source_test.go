package v1alpha1_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestOpenAPISourceRef: spec.sourceRef is one of the three places a document comes from, names a Flux
// source kind apimsync reads, and a path that stays inside the artifact.
func TestOpenAPISourceRef(t *testing.T) {
	ns := namespace(t)
	openAPI := func(ref *OpenAPISourceRef) *OpenAPI {
		return &OpenAPI{ObjectMeta: metav1.ObjectMeta{GenerateName: "pets-"}, Spec: OpenAPISpec{SourceRef: ref}}
	}
	ok := openAPI(&OpenAPISourceRef{Kind: "OCIRepository", Name: "apis", Path: "./apis/petstore.yaml"})
	ok.SetNamespace(ns)
	if err := k8s.Create(context.Background(), ok); err != nil {
		t.Errorf("a valid sourceRef was refused: %v", err)
	}
	checkRejected(t, ns, map[string]rejection{
		"openapi: document and sourceRef": {obj: with(openAPI(&OpenAPISourceRef{Kind: "GitRepository", Name: "apis", Path: "a.yaml"}), func(o *OpenAPI) {
			o.Spec.Document = "openapi: 3.0.3"
		}), want: "set exactly one of document, documentRef and sourceRef"},
		"openapi: none":     {obj: openAPI(nil), want: "set exactly one of document, documentRef and sourceRef"},
		"openapi: a Bucket": {obj: openAPI(&OpenAPISourceRef{Kind: "Bucket", Name: "apis", Path: "a.yaml"}), want: `Unsupported value: "Bucket"`},
		"openapi: absolute path": {obj: openAPI(&OpenAPISourceRef{Kind: "GitRepository", Name: "apis", Path: "/etc/a.yaml"}),
			want: "path is relative to the artifact's root and stays inside it"},
		"openapi: path out of the artifact": {obj: openAPI(&OpenAPISourceRef{Kind: "GitRepository", Name: "apis", Path: "apis/../../a.yaml"}),
			want: "path is relative to the artifact's root and stays inside it"},
		"openapi: no path": {obj: openAPI(&OpenAPISourceRef{Kind: "GitRepository", Name: "apis"}), want: "spec.sourceRef.path"},
	})
}

// TestOpenAPIFixedFields: what names or removes things in 3scale (systemName, conventions, backendOnly)
// is fixed once the OpenAPI exists; backendOnly takes neither rewritten servers nor defaultCredentials.
func TestOpenAPIFixedFields(t *testing.T) {
	ns := namespace(t)
	doc := "openapi: 3.0.3"
	o := &OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pets"}, Spec: OpenAPISpec{Document: doc, SystemName: "Pets"}}
	if err := k8s.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	checkUpdatesRefused(t, map[string]refusedChange{
		"changing systemName": {obj: o, change: func() { o.Spec.SystemName = "Pets2" }, want: "systemName is immutable"},
		"setting conventions": {obj: o, change: func() { o.Spec.Conventions = ConventionsThreescaleOperator }, want: "conventions are fixed"},
		"setting backendOnly": {obj: o, change: func() { o.Spec.BackendOnly = true }, want: "backendOnly is fixed"},
	})
	// Spelling out the default is no change.
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	o.Spec.Conventions = ConventionsApimsync
	if err := k8s.Update(context.Background(), o); err != nil {
		t.Errorf("conventions: Apimsync, the default, was refused: %v", err)
	}
	backendOnly := func(change func(*OpenAPI)) *OpenAPI {
		b := &OpenAPI{ObjectMeta: metav1.ObjectMeta{GenerateName: "backend-"}, Spec: OpenAPISpec{Document: doc, BackendOnly: true}}
		change(b)
		return b
	}
	checkRejected(t, ns, map[string]rejection{
		"openapi: backendOnly with defaultCredentials": {obj: backendOnly(func(b *OpenAPI) {
			b.Spec.DefaultCredentials = &OpenAPIDefaultCredentials{UserKeyRef: LocalSecretKeyRef{Name: "k", Key: "user_key"}}
		}), want: "no policy chain for defaultCredentials"},
		"openapi: backendOnly with servers rewritten": {obj: backendOnly(func(b *OpenAPI) { b.Spec.ActiveDoc = &OpenAPIActiveDocSpec{Servers: "Production"} }),
			want: "no gateway URL to rewrite"},
	})
}
