package openapiimport

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestExtensions: x-3scale-product's metrics, policies (APIcast's appended) and plans, and
// x-3scale-operation's metric, increment and last, read as 3scale-operator reads them.
func TestExtensions(t *testing.T) {
	api, err := importFile(t, "petstore-extended.yaml", Options{Operator: true, SystemName: "Pet_Store", BackendObject: "pets", Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if api.BackendName != "Pet Store Backend" || api.BackendDescription != "Backend of Pet Store" || api.PrivateBaseURL != "https://pets.internal.example.com" || api.UsagePath != "/" {
		t.Errorf("backend %q %q %q under %q, want 3scale-operator's", api.BackendName, api.BackendDescription, api.PrivateBaseURL, api.UsagePath)
	}
	if diff := cmp.Diff([]string{"GET /v1/pets$ listpets", "POST /v1/pets$ adoptions +2 last", "GET /v1/pets/{petId}$ show_pet"}, rules(api)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	var methods []string
	for _, m := range api.Methods {
		methods = append(methods, m.SystemName+"="+m.FriendlyName+"/"+m.Description)
	}
	// 3scale-operator makes the method of an operation whose rule counts a metric all the same.
	if diff := cmp.Diff([]string{"listpets=listPets/", "adoptpet=adoptPet/", "show_pet=show-Pet/One pet."}, methods); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
	if len(api.Metrics) != 1 || api.Metrics[0].SystemName != "adoptions" || api.Metrics[0].Unit != "adoption" {
		t.Errorf("metrics %+v", api.Metrics)
	}
	var chain []string
	for _, p := range api.Policies {
		c := ""
		if p.Configuration != nil {
			c = string(p.Configuration.Raw)
		}
		if p.ConfigurationRef != nil {
			c = "secret " + p.ConfigurationRef.Name + "/" + p.ConfigurationRef.Key
		}
		chain = append(chain, p.Name+" "+c)
	}
	if diff := cmp.Diff([]string{`cors {"allow_origin":"*"}`, "headers secret pets-headers/configuration", "apicast {}"}, chain); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
	if len(api.Plans) != 2 {
		t.Fatalf("plans %+v", api.Plans)
	}
	basic, gold := api.Plans[0].Spec, api.Plans[1].Spec
	if basic.Name != "Basic" || basic.SystemName != "basic" || !*basic.Published || len(basic.Limits) != 2 || basic.Limits[0].MetricMethodRef.SystemName != "listpets" {
		t.Errorf("basic %+v", basic)
	}
	if gold.Name != "gold" || *gold.Published || !*gold.ApprovalRequired || *gold.TrialPeriodDays != 30 || gold.SetupFee != "10.00" || gold.CostMonth != "99.90" {
		t.Errorf("gold %+v", gold)
	}
	if want := (v1alpha1.MetricMethodRef{SystemName: "hits", Backend: "pets"}); gold.PricingRules[0].MetricMethodRef != want {
		t.Errorf("gold's pricing rule names %+v, want the generated Backend's hits", gold.PricingRules[0].MetricMethodRef)
	}
}

// TestBasePaths: the public and private base paths as 3scale toolbox's overrides, with the routing each
// needs: patterns under the public one, the upstream on the private one.
func TestBasePaths(t *testing.T) {
	for name, c := range map[string]struct {
		opts                   Options
		upstream, usage, first string
		fails                  string
	}{
		"apimsync default":        {Options{}, "https://pets.example.com/v1", "/", "/pets$", ""},
		"operator default":        {Options{Operator: true}, "https://pets.example.com", "/", "/v1/pets$", ""},
		"public as the servers'":  {Options{PublicBasePath: "/v1/"}, "https://pets.example.com", "/", "/v1/pets$", ""},
		"public other":            {Options{PublicBasePath: "/pets-api"}, "https://pets.example.com/v1", "/pets-api", "/pets-api/pets$", ""},
		"private other":           {Options{PrivateBasePath: "/internal/v2"}, "https://pets.example.com/internal/v2", "/", "/pets$", ""},
		"upstream given":          {Options{Operator: true, PrivateBaseURL: "https://internal:8080/base/"}, "https://internal:8080/base", "/", "/v1/pets$", ""},
		"upstream and its path":   {Options{PrivateBaseURL: "https://internal:8080/base", PrivateBasePath: "/v2"}, "https://internal:8080/v2", "/", "/pets$", ""},
		"public root":             {Options{Operator: true, PublicBasePath: "/"}, "https://pets.example.com/v1", "/", "/pets$", ""},
		"backend only, same path": {Options{BackendOnly: true, PublicBasePath: "/v1"}, "https://pets.example.com", "/", "/v1/pets$", ""},
		"backend only, other":     {Options{BackendOnly: true, PublicBasePath: "/api"}, "", "", "", "a Backend alone cannot"},
	} {
		doc, err := Parse(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\nservers: [{url: 'https://pets.example.com/v1'}]\n"+
			"paths:\n  /pets:\n    get:\n      responses: {'200': {description: ok}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		api, err := Import(doc, "", c.opts)
		if c.fails != "" {
			if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), c.fails) {
				t.Errorf("%s: %v, want Invalid saying %q", name, err, c.fails)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if api.PrivateBaseURL != c.upstream || api.UsagePath != c.usage || api.Rules[0].Pattern != c.first {
			t.Errorf("%s: upstream %q, usage %q, pattern %q; want %q, %q, %q", name, api.PrivateBaseURL, api.UsagePath, api.Rules[0].Pattern, c.upstream, c.usage, c.first)
		}
	}
}

// TestARenamedOperationKeepsItsMethod: an operation whose operationId changed keeps the method the last
// import named (its id in 3scale, and the limits on it); the extension may name it by either name.
func TestARenamedOperationKeepsItsMethod(t *testing.T) {
	doc, err := Parse(context.Background(), []byte(`openapi: 3.0.3
info: {title: Pets, version: '1'}
servers: [{url: 'https://pets.example.com'}]
x-3scale-product:
  applicationPlans:
    basic:
      limits: [{period: day, value: 5, metricMethodRef: {systemName: findpets}}]
paths:
  /pets:
    get:
      operationId: findPets
      responses: {'200': {description: ok}}
`))
	if err != nil {
		t.Fatal(err)
	}
	api, err := Import(doc, "", Options{MethodNames: map[string]string{"GET /pets": "listpets"}})
	if err != nil {
		t.Fatal(err)
	}
	if api.Methods[0].SystemName != "listpets" || api.Rules[0].Method != "listpets" || api.MethodNames["GET /pets"] != "listpets" {
		t.Errorf("method %+v, rule %+v: want the method kept as listpets", api.Methods[0], api.Rules[0])
	}
	if ref := api.Plans[0].Spec.Limits[0].MetricMethodRef.SystemName; ref != "listpets" {
		t.Errorf("the plan's limit names %q, want the kept method", ref)
	}
	if len(api.Notes) != 1 || !strings.Contains(api.Notes[0], `keeps its method "listpets"`) {
		t.Errorf("notes %q", api.Notes)
	}
}

// TestKeptNamesAreNotTaken: a new operation whose operationId is another's kept method name gets a
// name of its own, the renamed one keeps its method; two operations whose names collide keep their
// names import after import, with no rename said and no reference moved.
func TestKeptNamesAreNotTaken(t *testing.T) {
	doc := func(a, b string) string {
		return "openapi: 3.0.3\ninfo: {title: P, version: '1'}\nservers: [{url: 'https://p.example.com'}]\n" +
			"x-3scale-product:\n  applicationPlans:\n    basic:\n      limits: [{period: day, value: 5, metricMethodRef: {systemName: list_pets}}]\n" +
			"paths:\n  /a:\n    get:\n      operationId: " + a + "\n      responses: {'200': {description: ok}}\n" +
			"  /b:\n    get:\n      operationId: " + b + "\n      responses: {'200': {description: ok}}\n"
	}
	imp := func(text string, kept map[string]string) *API {
		t.Helper()
		d, err := Parse(context.Background(), []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		api, err := Import(d, "", Options{MethodNames: kept})
		if err != nil {
			t.Fatal(err)
		}
		return api
	}
	// GET /b had list_pets; it is renamed bar, and a new operation GET /a is named list_pets.
	api := imp(doc("list_pets", "bar"), map[string]string{"GET /b": "list_pets"})
	if got := api.MethodNames; got["GET /b"] != "list_pets" || got["GET /a"] != "list_pets_2" {
		t.Errorf("names %v: want GET /b to keep list_pets and GET /a to get list_pets_2", got)
	}
	// Two operations whose names collide: the second is suffixed once, and stays so with no rename.
	first := imp(doc("list-pets", "list_pets"), nil)
	second := imp(doc("list-pets", "list_pets"), first.MethodNames)
	if first.MethodNames["GET /b"] != "list_pets_2" || second.MethodNames["GET /b"] != "list_pets_2" || second.MethodNames["GET /a"] != "list_pets" {
		t.Errorf("names %v then %v", first.MethodNames, second.MethodNames)
	}
	if ref := second.Plans[0].Spec.Limits[0].MetricMethodRef.SystemName; ref != "list_pets" {
		t.Errorf("the limit on list_pets moved to %q", ref)
	}
	if strings.Contains(strings.Join(second.Notes, " "), "keeps its method") {
		t.Errorf("a collision said as a rename: %q", second.Notes)
	}
}

// TestExtensionsThatCannotBeImported: each bad extension is Invalid with what to change.
func TestExtensionsThatCannotBeImported(t *testing.T) {
	head := "openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\nservers: [{url: 'https://pets.example.com'}]\n"
	param := func(name string) string {
		return "      parameters: [{name: " + name + ", in: path, required: true, schema: {type: string}}]\n"
	}
	paths := "paths:\n  /pets:\n    get:\n      operationId: listPets\n      responses: {'200': {description: ok}}\n"
	for name, c := range map[string]struct{ doc, want string }{
		"unknown metric on an operation": {head + "paths:\n  /pets:\n    get:\n      x-3scale-operation: {mappingRule: {metricMethodRef: sales}}\n      responses: {'200': {description: ok}}\n",
			`names "sales", which is neither a metric`},
		"limit on a method the document lacks": {head + "x-3scale-product:\n  applicationPlans:\n    basic:\n      limits: [{period: day, value: 1, metricMethodRef: {systemName: deletepet}}]\n" + paths,
			`applicationPlans.basic.limits[0]: metricMethodRef names "deletepet"`},
		"two operations, one rule": {head + "paths:\n  /pets/{id}:\n    get:\n      operationId: a\n      x-3scale-operation: {mappingRule: {metricMethodRef: hits}}\n" + param("id") + "      responses: {'200': {description: ok}}\n" +
			"  /pets/{petId}:\n    get:\n      operationId: b\n      x-3scale-operation: {mappingRule: {metricMethodRef: hits}}\n" + param("petId") + "      responses: {'200': {description: ok}}\n",
			`conflicting paths "/pets/{petId}" and "/pets/{id}"`}, // kin-openapi refuses it before checkRules would
		"metric without a unit":    {head + "x-3scale-product:\n  metrics:\n    sales: {friendlyName: Sales}\n" + paths, `metric "sales" has no unit`},
		"metric named as a method": {head + "x-3scale-product:\n  metrics:\n    listpets: {friendlyName: L, unit: u}\n" + paths, "also the method of an operation"},
		"policy of another namespace": {head + "x-3scale-product:\n  policies: [{name: headers, version: builtin, configurationRef: {name: s, namespace: other}}]\n" + paths,
			`Secret of namespace "other"`},
		"another backend": {head + "x-3scale-product:\n  applicationPlans:\n    basic:\n      limits: [{period: day, value: 1, metricMethodRef: {systemName: hits, backend: billing}}]\n" + paths,
			`names backend "billing"`},
		"a wrong type":       {head + "x-3scale-product:\n  metrics: [1, 2]\n" + paths, "x-3scale-product"},
		"a bad period":       {head + "x-3scale-product:\n  applicationPlans:\n    basic:\n      limits: [{period: weekly, value: 1, metricMethodRef: {systemName: hits}}]\n" + paths, `period "weekly"`},
		"backend-only plans": {head + "x-3scale-product:\n  applicationPlans:\n    basic: {}\n" + paths, "backendOnly generates none"},
	} {
		doc, err := Parse(context.Background(), []byte(c.doc))
		if err == nil {
			_, err = Import(doc, "", Options{SystemName: "pets", BackendObject: "pets", Namespace: "team", BackendOnly: name == "backend-only plans"})
		}
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want Invalid saying %q", name, err, c.want)
		}
	}
}

// TestUnknownExtensionFieldsAreNoted: a field 3scale-operator does not read is left out and said.
func TestUnknownExtensionFieldsAreNoted(t *testing.T) {
	doc, err := Parse(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\nservers: [{url: 'https://pets.example.com'}]\n"+
		"paths:\n  /pets:\n    get:\n      x-3scale-operation: {metricSystemName: hits}\n      responses: {'200': {description: ok}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	api, err := Import(doc, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(api.Notes) != 1 || !strings.Contains(api.Notes[0], `unknown field "metricSystemName"`) {
		t.Errorf("notes %q", api.Notes)
	}
}

// TestWithServer: the servers of an OpenAPI 3 document, or the host, schemes and basePath of a Swagger
// 2.0 one, become the gateway's URL; the rest stays.
func TestWithServer(t *testing.T) {
	out, err := WithServer("openapi: 3.0.3\ninfo: {title: P, version: '1'}\nservers: [{url: 'https://internal'}, {url: 'https://other'}]\npaths: {}\n", "https://gw.example.com/v1")
	if err != nil || !strings.Contains(out, `"servers":[{"url":"https://gw.example.com/v1"}]`) || !strings.Contains(out, `"title":"P"`) {
		t.Errorf("OpenAPI 3: %v %s", err, out)
	}
	out, err = WithServer(`{"swagger": "2.0", "host": "internal", "basePath": "/api", "schemes": ["http"], "paths": {}}`, "https://gw.example.com:8443")
	if err != nil || !strings.Contains(out, `"host":"gw.example.com:8443"`) || !strings.Contains(out, `"basePath":"/"`) || !strings.Contains(out, `"schemes":["https"]`) {
		t.Errorf("Swagger 2.0: %v %s", err, out)
	}
}

// TestExtensionsBeyondTheKindsBounds: what the kinds' CRDs would refuse is Invalid at import, before any
// write, with its reason.
func TestExtensionsBeyondTheKindsBounds(t *testing.T) {
	head := "openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\nservers: [{url: 'https://pets.example.com'}]\n"
	paths := "paths:\n  /pets:\n    get:\n      operationId: listPets\n      responses: {'200': {description: ok}}\n"
	var metrics, policies strings.Builder
	for i := range 65 {
		fmt.Fprintf(&metrics, "    m%d: {friendlyName: M, unit: u}\n", i)
	}
	for range 49 {
		policies.WriteString("    - {name: headers, version: builtin}\n")
	}
	for name, c := range map[string]struct {
		doc, want string
		operator  bool
	}{
		"65 metrics":  {head + "x-3scale-product:\n  metrics:\n" + metrics.String() + paths, "a Product holds at most 64", false},
		"49 policies": {head + "x-3scale-product:\n  policies:\n" + policies.String() + paths, "at most 50 with apicast", false},
		"overlapping prices": {head + "x-3scale-product:\n  applicationPlans:\n    basic:\n      pricingRules:\n" +
			"        - {from: 1, to: 100, pricePerUnit: '0.1', metricMethodRef: {systemName: hits}}\n" +
			"        - {from: 50, to: 500, pricePerUnit: '0.1', metricMethodRef: {systemName: hits}}\n" + paths, "overlaps pricingRules[0] (1-100)", false},
		"a method named hits": {head + "paths:\n  /hits:\n    get:\n      operationId: Hits\n      responses: {'200': {description: ok}}\n", "a method named hits", true},
	} {
		doc, err := Parse(context.Background(), []byte(c.doc))
		if err == nil {
			_, err = Import(doc, "", Options{Operator: c.operator})
		}
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want Invalid saying %q", name, err, c.want)
		}
	}
}

// TestKeptNamesFromTheRules: without the names of the last import (a status lost), the rules of what
// was generated tell which method each operation had: a renamed operation keeps it all the same.
func TestKeptNamesFromTheRules(t *testing.T) {
	doc, err := Parse(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: P, version: '1'}\nservers: [{url: 'https://p.example.com/v1'}]\n"+
		"paths:\n  /pets:\n    get:\n      operationId: findPets\n      responses: {'200': {description: ok}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	api, err := Import(doc, "", Options{Operator: true, RuleMethods: map[string]string{"GET /v1/pets$": "listpets"}})
	if err != nil {
		t.Fatal(err)
	}
	if api.MethodNames["GET /pets"] != "listpets" {
		t.Errorf("names %v, want GET /pets to keep listpets", api.MethodNames)
	}
}
