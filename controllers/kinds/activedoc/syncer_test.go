package activedoc

import (
	"strings"
	"testing"
)

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
