package v1alpha1_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
