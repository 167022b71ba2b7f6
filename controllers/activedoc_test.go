package controllers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestActiveDocFromASecret: the document comes from a Secret key (a spec that must not be readable by
// everyone who can read the resource), and editing the Secret re-syncs it.
func TestActiveDocFromASecret(t *testing.T) {
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "internal-openapi"},
		StringData: map[string]string{"openapi.json": `{"openapi":"3.0.3","info":{"title":"Internal","version":"1"},"paths":{}}`}}
	doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "internal"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Internal",
			DocumentRef: &v1alpha1.DocumentRef{SecretKeyRef: &v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: "openapi.json"}}}}
	create(t, defaultSecret(ns), secret, doc)
	waitState(t, v1alpha1.ConditionSynced, doc)
	update(t, secret, func() {
		secret.StringData = map[string]string{"openapi.json": `{"openapi":"3.0.3","info":{"title":"Internal v2","version":"2"},"paths":{}}`}
	})
	eventually(t, waitTimeout, func() string {
		docs := sim.Objects(ns, "api_docs")
		if len(docs) != 1 || !strings.Contains(fmt.Sprint(docs[0]["body"]), "Internal v2") {
			return fmt.Sprintf("the edited Secret did not reach 3scale: %v", docs)
		}
		return ""
	})
}

// TestDocumentThatIsNotOpenAPIIsInvalid: a document that does not parse is Invalid with the parser's own
// message; one that parses but is not OpenAPI (no openapi or swagger version) is Invalid saying so; 3scale
// gets neither.
func TestDocumentThatIsNotOpenAPIIsInvalid(t *testing.T) {
	ns := newNamespace(t)
	cases := map[string]struct{ document, want string }{
		"broken":      {"openapi: 3.0.0\n  paths: [\n", "yaml: "},
		"not openapi": {`{"title":"just JSON","paths":{}}`, `it has no "openapi" (or "swagger") version field`},
		"a list":      {"- openapi\n- 3.0.0\n", "the top level is not an object"},
		// Validated as OpenAPI documents are (kin-openapi): an OpenAPI 3 document needs info.title.
		"no title": {`{"openapi":"3.0.3","info":{"version":"1"},"paths":{}}`, "not a valid OpenAPI document"},
	}
	create(t, defaultSecret(ns))
	for name, c := range cases {
		doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ReplaceAll(name, " ", "-")},
			Spec: v1alpha1.ActiveDocSpec{Name: name, Document: c.document}}
		create(t, doc)
		waitReason(t, doc, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)
		if _, _, msg := syncState(t, doc); !strings.Contains(msg, "not an OpenAPI document") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: message %q, want it to say why (%q)", name, msg, c.want)
		}
	}
	if got := sim.Count(ns, "api_docs"); got != 0 {
		t.Errorf("%d ActiveDocs in 3scale, want none", got)
	}
	// With skipSwaggerValidations, 3scale is told not to validate, and neither does apimsync (beyond the
	// version field).
	lax := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lax"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Lax", SkipSwaggerValidations: true, Document: cases["no title"].document}}
	create(t, lax)
	waitState(t, v1alpha1.ConditionSynced, lax)
}

// TestActiveDocGoesWithItsProduct: porta destroys a service's ActiveDocs with the service, so an ActiveDoc
// bound to a Product deleted together with it (a prune) makes no call of its own: no DELETE answered 404.
// One deleted alone, its product staying, is deleted in 3scale (after the deletion grace).
func TestActiveDocGoesWithItsProduct(t *testing.T) {
	ns := newNamespace(t)
	product := petstoreProduct(ns, "pets")
	doc := func(name string) *v1alpha1.ActiveDoc {
		return &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.ActiveDocSpec{Name: name, ProductRef: product.Name,
				Document: `{"openapi":"3.0.3","info":{"title":"` + name + `","version":"1"},"paths":{}}`}}
	}
	alone, along := doc("alone"), doc("along")
	create(t, defaultSecret(ns), petsBackend(ns), product, alone, along)
	waitState(t, v1alpha1.ConditionSynced, product, alone, along)

	mark := len(sim.Writes(ns))
	deleteObjects(t, alone)
	waitGone(t, alone)
	if got := remoteDeletions(ns, mark); !slices.Equal(got, []string{"active_docs 200"}) {
		t.Errorf("remote deletions of an ActiveDoc deleted alone: %v, want its own", got)
	}
	mark = len(sim.Writes(ns))
	deleteObjects(t, along, product)
	waitGone(t, along, product)
	if got := remoteDeletions(ns, mark); !slices.Equal(got, []string{"services 200"}) {
		t.Errorf("remote deletions %v, want the service's only", got)
	}
	if refused := refusedWrites(ns, mark); len(refused) != 0 {
		t.Errorf("3scale refused %v", refused)
	}
	if got := sim.Count(ns, "api_docs"); got != 0 {
		t.Errorf("%d ActiveDocs left in 3scale", got)
	}
}
