package activedoc

import (
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// TestValidateInlineDocument: an inline document that is not OpenAPI is Invalid before anything is
// read, saying why; with skipSwaggerValidations only the version field is checked; a document from a
// ConfigMap or a Secret is not Validate's (it is read in Resolve).
func TestValidateInlineDocument(t *testing.T) {
	const noTitle = `{"openapi":"3.0.3","info":{"version":"1"},"paths":{}}`
	cases := map[string]struct {
		spec v1alpha1.ActiveDocSpec
		want string // "" when valid
	}{
		"OpenAPI":                   {spec: v1alpha1.ActiveDocSpec{Document: `{"openapi":"3.0.3","info":{"title":"Pets","version":"1"},"paths":{}}`}},
		"not OpenAPI":               {spec: v1alpha1.ActiveDocSpec{Document: `{"title":"just JSON"}`}, want: `it has no "openapi" (or "swagger") version field`},
		"not valid OpenAPI":         {spec: v1alpha1.ActiveDocSpec{Document: noTitle}, want: "not a valid OpenAPI"},
		"not valid, validation off": {spec: v1alpha1.ActiveDocSpec{Document: noTitle, SkipSwaggerValidations: true}},
		"from a ConfigMap": {spec: v1alpha1.ActiveDocSpec{DocumentRef: &v1alpha1.DocumentRef{
			ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: "docs", Key: "pets.yaml"}}}},
	}
	for name, c := range cases {
		err := (&Syncer{}).Validate(&v1alpha1.ActiveDoc{Spec: c.spec})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want valid", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: valid, want Invalid saying %q", name, c.want)
			continue
		}
		class, reason, msg := engine.Classify(err)
		if class != engine.ClassInvalid || reason != v1alpha1.ReasonInvalidDocument || !strings.HasPrefix(msg, "the document is not an OpenAPI document: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %v, want Invalid (%s) saying %q", name, err, v1alpha1.ReasonInvalidDocument, c.want)
		}
	}
}
