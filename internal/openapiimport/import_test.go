package openapiimport

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// rules are an import's mapping rules, one line each: verb, pattern and metric, then " +N" for an
// increment other than 1 and " last".
func rules(api *API) []string {
	var out []string
	for _, r := range api.Rules {
		line := r.Verb + " " + r.Pattern + " " + r.Method
		if r.Increment != 1 {
			line += fmt.Sprintf(" +%d", r.Increment)
		}
		if r.Last {
			line += " last"
		}
		out = append(out, line)
	}
	return out
}

func importFile(t *testing.T, name string, opts Options) (*API, error) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse(context.Background(), data)
	if err != nil {
		return nil, err
	}
	return Import(doc, "", opts)
}

// TestOpenAPI3: servers with variables, operationIds made system names (one clash made unique and
// reported), summaries as friendly names, exact-match rules, an API key in a header.
func TestOpenAPI3(t *testing.T) {
	api, err := importFile(t, "petstore-3.0.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if api.Title != "Petstore" || api.Description != "Pets for sale." || api.PrivateBaseURL != "https://eu.pets.example.com/v1" {
		t.Errorf("title %q, description %q, upstream %q", api.Title, api.Description, api.PrivateBaseURL)
	}
	wantMethods := []Method{
		{SystemName: "listpets", FriendlyName: "List pets"},
		{SystemName: "createpet", FriendlyName: "Create a pet"},
		{SystemName: "show_pet", FriendlyName: "Show a pet", Description: "One pet by id."},
		{SystemName: "show_pet_2", FriendlyName: "show_pet"},
	}
	if diff := cmp.Diff(wantMethods, api.Methods, cmpopts.IgnoreFields(Method{}, "Operation")); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
	wantRules := []string{"GET /pets$ listpets", "POST /pets$ createpet", "GET /pets/{petId}$ show_pet", "GET /stores/{id}$ show_pet_2"}
	if diff := cmp.Diff(wantRules, rules(api)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Auth{Kind: "userKey", Param: "X-API-Key", Location: "headers", Scheme: "key"}, api.Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
	if len(api.Notes) != 1 || !strings.Contains(api.Notes[0], `method "show_pet" was taken`) {
		t.Errorf("notes %q, want the renamed method reported", api.Notes)
	}
}

// TestSwagger2: a Swagger 2.0 document is converted: host, basePath and scheme make the upstream; an
// oauth2 scheme is OIDC with its flow; prefix matching drops the "$"; the override wins.
func TestSwagger2(t *testing.T) {
	api, err := importFile(t, "orders-2.0.json", Options{PrefixMatching: true})
	if err != nil {
		t.Fatal(err)
	}
	if api.PrivateBaseURL != "https://orders.example.com/api" {
		t.Errorf("upstream %q", api.PrivateBaseURL)
	}
	wantRules := []string{"GET /orders get_orders", "DELETE /orders/{id} delete_orders_id"}
	if diff := cmp.Diff(wantRules, rules(api)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if api.Auth.Kind != "oidc" || !cmp.Equal(api.Auth.Flows, []string{"clientCredentials"}) {
		t.Errorf("auth %+v, want OIDC with the client credentials flow", api.Auth)
	}
	api, err = importFile(t, "orders-2.0.json", Options{PrivateBaseURL: "http://orders.internal:8080"})
	if err != nil || api.PrivateBaseURL != "http://orders.internal:8080" {
		t.Errorf("override: %v, %q", err, api.PrivateBaseURL)
	}
}

// TestDocumentsThatCannotBeImported: each is refused with a reason a person can act upon.
func TestDocumentsThatCannotBeImported(t *testing.T) {
	manyPaths := func(n int) string {
		var b strings.Builder
		b.WriteString("openapi: 3.0.0\ninfo: {title: Big, version: '1'}\nservers: [{url: 'https://big.example.com'}]\npaths:\n")
		for i := range n {
			fmt.Fprintf(&b, "  /r%d:\n    get:\n      responses: {'200': {description: ok}}\n", i)
		}
		return b.String()
	}
	cases := map[string]struct{ doc, want string }{
		"not YAML":            {"{{{", "neither JSON nor YAML"},
		"no version":          {"info: {title: x}", `no "openapi" (3.x) or "swagger"`},
		"OpenAPI 4":           {"openapi: 4.0.0\ninfo: {title: x, version: '1'}\npaths: {}", `OpenAPI version "4.0.0" is not supported`},
		"invalid 3.0":         {"openapi: 3.0.0\ninfo: {version: '1'}\npaths: {}", "not a valid OpenAPI document"},
		"no servers":          {"openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {}", "set spec.privateBaseURL"},
		"relative server":     {"openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: /v1}]\npaths: {}", `servers[0].url "/v1" is not an absolute`},
		"an external ref":     {"openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: 'https://x.example.com'}]\npaths:\n  /a: {$ref: 'https://example.com/a.yaml'}", "not a valid OpenAPI"},
		"2,000 paths":         {manyPaths(2000), "more than 64 operations"},
		"larger than allowed": {"openapi: 3.0.0\n#" + strings.Repeat("x", MaxDocumentBytes), "at most 1048576 are imported"},
	}
	for name, c := range cases {
		doc, err := Parse(context.Background(), []byte(c.doc))
		if err == nil {
			_, err = Import(doc, "", Options{})
		}
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid document saying %q", name, err, c.want)
		}
	}
}
