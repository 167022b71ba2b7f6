package activedoc_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// TestActiveDocFromASecret: the document comes from a Secret key (a spec that must not be readable by
// everyone who can read the resource), and editing the Secret re-syncs it.
func TestActiveDocFromASecret(t *testing.T) {
	ns := harness.NewNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "internal-openapi"},
		StringData: map[string]string{"openapi.json": `{"openapi":"3.0.3","info":{"title":"Internal","version":"1"},"paths":{}}`}}
	doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "internal"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Internal",
			DocumentRef: &v1alpha1.DocumentRef{SecretKeyRef: &v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: "openapi.json"}}}}
	harness.Create(t, harness.DefaultSecret(ns), secret, doc)
	harness.WaitState(t, v1alpha1.ConditionSynced, doc)
	harness.Update(t, secret, func() {
		secret.StringData = map[string]string{"openapi.json": `{"openapi":"3.0.3","info":{"title":"Internal v2","version":"2"},"paths":{}}`}
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		docs := harness.Sim.Objects(ns, "api_docs")
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
	ns := harness.NewNamespace(t)
	cases := map[string]struct{ document, want string }{
		"broken":      {"openapi: 3.0.0\n  paths: [\n", "yaml: "},
		"not openapi": {`{"title":"just JSON","paths":{}}`, `it has no "openapi" (or "swagger") version field`},
		"a list":      {"- openapi\n- 3.0.0\n", "the top level is not an object"},
		// Validated as OpenAPI documents are (kin-openapi): an OpenAPI 3 document needs info.title.
		"no title": {`{"openapi":"3.0.3","info":{"version":"1"},"paths":{}}`, "not a valid OpenAPI document"},
	}
	harness.Create(t, harness.DefaultSecret(ns))
	for name, c := range cases {
		doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ReplaceAll(name, " ", "-")},
			Spec: v1alpha1.ActiveDocSpec{Name: name, Document: c.document}}
		harness.Create(t, doc)
		harness.WaitReason(t, doc, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)
		if _, _, msg := harness.SyncState(t, doc); !strings.Contains(msg, "not an OpenAPI document") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: message %q, want it to say why (%q)", name, msg, c.want)
		}
	}
	if got := harness.Sim.Count(ns, "api_docs"); got != 0 {
		t.Errorf("%d ActiveDocs in 3scale, want none", got)
	}
	// With skipSwaggerValidations, 3scale is told not to validate, and neither does apimsync (beyond the
	// version field).
	lax := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lax"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Lax", SkipSwaggerValidations: true, Document: cases["no title"].document}}
	harness.Create(t, lax)
	harness.WaitState(t, v1alpha1.ConditionSynced, lax)
}

// TestActiveDocGoesWithItsProduct: porta destroys a service's ActiveDocs with the service, so an ActiveDoc
// bound to a Product deleted together with it (a prune) makes no call of its own: no DELETE answered 404.
// One deleted alone, its product staying, is deleted in 3scale (after the deletion grace).
func TestActiveDocGoesWithItsProduct(t *testing.T) {
	ns := harness.NewNamespace(t)
	product := harness.PetstoreProduct(ns, "pets")
	doc := func(name string) *v1alpha1.ActiveDoc {
		return &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.ActiveDocSpec{Name: name, ProductRef: product.Name,
				Document: `{"openapi":"3.0.3","info":{"title":"` + name + `","version":"1"},"paths":{}}`}}
	}
	alone, along := doc("alone"), doc("along")
	harness.Create(t, harness.DefaultSecret(ns), harness.PetsBackend(ns), product, alone, along)
	harness.WaitState(t, v1alpha1.ConditionSynced, product, alone, along)

	mark := len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, alone)
	harness.WaitGone(t, alone)
	if got := harness.RemoteDeletions(ns, mark); !slices.Equal(got, []string{"active_docs 200"}) {
		t.Errorf("remote deletions of an ActiveDoc deleted alone: %v, want its own", got)
	}
	mark = len(harness.Sim.Writes(ns))
	harness.DeleteObjects(t, along, product)
	harness.WaitGone(t, along, product)
	if got := harness.RemoteDeletions(ns, mark); !slices.Equal(got, []string{"services 200"}) {
		t.Errorf("remote deletions %v, want the service's only", got)
	}
	if refused := harness.RefusedWrites(ns, mark); len(refused) != 0 {
		t.Errorf("3scale refused %v", refused)
	}
	if got := harness.Sim.Count(ns, "api_docs"); got != 0 {
		t.Errorf("%d ActiveDocs left in 3scale", got)
	}
}

// TestActiveDocFromAConfigMap: the document comes from a ConfigMap and an edit re-syncs it; a document
// that is not OpenAPI is Invalid with the parser's word; a product on another tenant is Invalid.
func TestActiveDocFromAConfigMap(t *testing.T) {
	ns := harness.NewNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore-openapi"},
		Data: map[string]string{"openapi.yaml": "openapi: 3.0.3\ninfo:\n  title: Petstore\n  version: '1'\npaths: {}\n"}}
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	doc := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Petstore", ProductRef: "petstore", Published: true,
			DocumentRef: &v1alpha1.DocumentRef{ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: cm.Name, Key: "openapi.yaml"}}}}
	harness.Create(t, harness.DefaultSecret(ns), cm, backend, product, doc)
	harness.WaitState(t, v1alpha1.ConditionSynced, doc)
	harness.Update(t, cm, func() { cm.Data["openapi.yaml"] = strings.Replace(cm.Data["openapi.yaml"], "Petstore", "Pet store", 1) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		for _, d := range harness.Sim.Objects(ns, "api_docs") {
			if !strings.Contains(fmt.Sprint(d["body"]), "Pet store") {
				return "the edited ConfigMap did not reach 3scale"
			}
		}
		return ""
	})
	bad := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Bad", Document: "{not json: ["}}
	harness.Create(t, bad)
	harness.WaitReason(t, bad, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)

	other := harness.NewNamespace(t)
	foreign := &v1alpha1.ActiveDoc{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"},
		Spec: v1alpha1.ActiveDocSpec{Name: "Foreign", ProductRef: "petstore", Document: cm.Data["openapi.yaml"],
			CommonSpec: v1alpha1.CommonSpec{ProviderAccountRef: &v1alpha1.ProviderAccountRef{Name: "elsewhere"}}}}
	adminURL, token := harness.TenantOf(other)
	harness.Create(t, harness.ProviderSecret(ns, "elsewhere", adminURL, token), foreign)
	harness.WaitReason(t, foreign, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
}
