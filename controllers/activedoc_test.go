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

// TestActiveDocDocumentsComparedByMeaning: 3scale's copy of a document is up to date when it means what
// the spec's does, whatever its form: key order, spacing, JSON or YAML, numbers' spelling, and the empty
// optional containers a serializer adds or leaves out (3scale-operator's kin-openapi writes
// "components":{}) do not count; any other difference does, an empty object that is required or that
// means something (an operation's "security": [] turns security off) included.
func TestActiveDocDocumentsComparedByMeaning(t *testing.T) {
	const doc = `{"openapi":"3.0.3","info":{"title":"Pets","version":"1"},"paths":{"/pets":{"get":{"responses":{"200":{"description":"ok"}}}}}}`
	cases := map[string]struct {
		a, b string
		same bool
	}{
		"the same text": {doc, doc, true},
		"keys in another order, spaced": {doc, `{
  "paths": {"/pets": {"get": {"responses": {"200": {"description": "ok"}}}}},
  "info": {"version": "1", "title": "Pets"},
  "openapi": "3.0.3"
}`, true},
		"YAML and JSON":                        {doc, "openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\npaths:\n  /pets:\n    get:\n      responses:\n        '200': {description: ok}\n", true},
		"kin-openapi v0.94's empty components": {doc, strings.Replace(doc, `{"openapi"`, `{"components":{},"openapi"`, 1), true},
		"components with empty maps only":      {doc, strings.Replace(doc, `{"openapi"`, `{"components":{"schemas":{},"securitySchemes":{}},"openapi"`, 1), true},
		"empty top-level lists":                {doc, strings.Replace(doc, `{"openapi"`, `{"servers":[],"security":[],"tags":[],"openapi"`, 1), true},
		"a number spelt otherwise": {strings.Replace(doc, `"ok"}}`, `"ok"}},"x-rate":{"limit":1.0}`, 1),
			strings.Replace(doc, `"ok"}}`, `"ok"}},"x-rate":{"limit":1}`, 1), true},
		"numbers a float64 cannot tell apart": {strings.Replace(doc, `"ok"}}`, `"ok"}},"x-id":{"n":9007199254740993}`, 1),
			strings.Replace(doc, `"ok"}}`, `"ok"}},"x-id":{"n":9007199254740992}`, 1), false},
		"a number and a string": {strings.Replace(doc, `"version":"1"`, `"version":1`, 1), doc, false},
		"another title":         {doc, strings.Replace(doc, `"Pets"`, `"Pets v2"`, 1), false},
		"empty paths against none (required)": {strings.Replace(doc, `,"paths":{"/pets":{"get":{"responses":{"200":{"description":"ok"}}}}}`, `,"paths":{}`, 1),
			strings.Replace(doc, `,"paths":{"/pets":{"get":{"responses":{"200":{"description":"ok"}}}}}`, ``, 1), false},
		"components that declare something":            {doc, strings.Replace(doc, `{"openapi"`, `{"components":{"schemas":{"Pet":{}}},"openapi"`, 1), false},
		"an operation's empty security (turns it off)": {doc, strings.Replace(doc, `{"responses"`, `{"security":[],"responses"`, 1), false},
		"a Swagger 2.0 document's components are not OpenAPI's": {`{"swagger":"2.0","info":{"title":"P","version":"1"},"paths":{}}`,
			`{"swagger":"2.0","info":{"title":"P","version":"1"},"paths":{},"components":{}}`, false},
		"not JSON nor YAML, the same text": {"{", "{", true},
		"not JSON nor YAML, other text":    {"{", "{ ", false},
	}
	for name, c := range cases {
		for _, d := range []string{c.a, c.b} {
			if _, err := documentMeaning(d); (err != nil) != strings.HasPrefix(name, "not JSON nor YAML") {
				t.Errorf("%s: parsing %s: %v", name, d, err)
			}
		}
		if got := sameDocument(c.a, c.b); got != c.same {
			t.Errorf("%s: same %v, want %v", name, got, c.same)
		}
		if got := sameDocument(c.b, c.a); got != c.same {
			t.Errorf("%s, the other way round: same %v, want %v", name, got, c.same)
		}
	}
}
