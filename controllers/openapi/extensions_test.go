package openapi_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/openapi"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/test/simulator"
)

// extendedDocument is the importer's document with 3scale-operator's extensions: a metric, a policy
// chain with a Secret's configuration, two plans, an operation counting the metric.
func extendedDocument(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../internal/openapiimport/testdata/petstore-extended.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// methodIDs are the ids of a tenant's methods by system name, and its limits as "plan/method/period=value".
func methodIDs(ns string) (map[string]string, []string) {
	ids, names := map[string]string{}, map[string]string{}
	for _, m := range harness.Sim.Objects(ns, simulator.KindMetrics) {
		ids[fmt.Sprint(m["system_name"])] = fmt.Sprint(m["id"])
		names[fmt.Sprint(m["id"])] = fmt.Sprint(m["system_name"])
	}
	plans := map[string]string{}
	for _, p := range harness.Sim.Objects(ns, simulator.KindPlans) {
		plans[fmt.Sprint(p["id"])] = fmt.Sprint(p["system_name"])
	}
	var limits []string
	for _, l := range harness.Sim.Objects(ns, simulator.KindLimits) {
		limits = append(limits, fmt.Sprintf("%s/%s/%v=%v", plans[fmt.Sprint(l["plan_id"])], names[fmt.Sprint(l["metric_id"])], l["period"], l["value"]))
	}
	return ids, limits
}

// TestOpenAPIExtensions: x-3scale-product and x-3scale-operation generate the Product's metric, chain and
// mapping rule options, and owned ApplicationPlans; a policy's missing Secret makes the OpenAPI wait with
// no write, then go on; an operation renamed keeps its method's id and its limits; an operation removed
// while a hand-made plan limits its method waits naming the plan, and goes on once the plan lets go.
func TestOpenAPIExtensions(t *testing.T) {
	ns := harness.NewNamespace(t)
	o := openAPIObject(ns, "pets", extendedDocument(t))
	o.Spec.ActiveDoc = nil
	o.Spec.Conventions = v1alpha1.ConventionsThreescaleOperator
	o.Spec.SystemName = "Pet_Store"
	harness.Create(t, harness.DefaultSecret(ns), o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonSecretNotFound)
	if !strings.Contains(msg, `Secret "pets-headers"`) || !strings.Contains(msg, "policy headers") {
		t.Errorf("Orphan message %q, want the policy's Secret named", msg)
	}
	if n := harness.WritesTo(ns); n != 0 {
		t.Errorf("%d writes to 3scale while the policy's Secret is missing, want 0: %v", n, harness.LastWrites(ns, 5))
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, &v1alpha1.Backend{}); err == nil {
		t.Error("a Backend was generated while the policy's Secret is missing")
	}
	harness.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pets-headers"},
		StringData: map[string]string{"configuration": `{"request": [{"op": "set", "header": "X-Team", "value": "pets"}]}`}})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")

	var product v1alpha1.Product
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, &product); err != nil {
		t.Fatal(err)
	}
	if len(product.Spec.Policies) != 3 || product.Spec.Policies[2].Name != "apicast" || product.Spec.Metrics["adoptions"].Unit != "adoption" {
		t.Errorf("product policies %+v, metrics %+v", product.Spec.Policies, product.Spec.Metrics)
	}
	var plan v1alpha1.ApplicationPlan
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: openapi.PlanName("pets", "basic")}, &plan); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&plan, o) || plan.Spec.ProductRef != "pets" || len(plan.Spec.Limits) != 2 {
		t.Errorf("generated plan: owners %v, spec %+v", plan.OwnerReferences, plan.Spec)
	}
	// A generated plan edited by hand is put back, as every generated resource.
	harness.Update(t, &plan, func() { plan.Spec.Limits = plan.Spec.Limits[:1] })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(&plan), &plan); err != nil || len(plan.Spec.Limits) != 2 {
			return fmt.Sprintf("the plan's limits are %v (%v), want both back", plan.Spec.Limits, err)
		}
		return ""
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	ids, limits := methodIDs(ns)
	if !strings.Contains(strings.Join(limits, " "), "basic/listpets/day=1000") {
		t.Fatalf("limits in 3scale %v, want basic's", limits)
	}
	var rules []string
	for _, r := range harness.Sim.Objects(ns, simulator.KindMappingRules) {
		rules = append(rules, fmt.Sprintf("%v %v %v %v", r["http_method"], r["pattern"], r["delta"], r["last"]))
	}
	if !strings.Contains(strings.Join(rules, ","), "POST /v1/pets$ 2 true") {
		t.Errorf("rules in 3scale %v, want the adoption rule counting 2, last", rules)
	}

	// Renamed: listPets becomes findPets; its method keeps its id and limits.
	harness.Update(t, o, func() {
		o.Spec.Document = strings.Replace(extendedDocument(t), "operationId: listPets", "operationId: findPets", 1)
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	after, limitsAfter := methodIDs(ns)
	if after["listpets"] != ids["listpets"] || after["findpets"] != "" {
		t.Errorf("after the rename, method ids %v, want listpets kept (%s) and no findpets", after, ids["listpets"])
	}
	if strings.Join(limitsAfter, " ") != strings.Join(limits, " ") {
		t.Errorf("limits after the rename %v, want %v", limitsAfter, limits)
	}
	if !strings.Contains(strings.Join(o.Status.Notes, " "), `keeps its method "listpets"`) {
		t.Errorf("notes %q, want the rename said", o.Status.Notes)
	}

	// A hand-made plan limits showPet's method; the document drops the operation: the OpenAPI waits.
	mine := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "partners"}, Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "pets", Name: "Partners",
		Limits: []v1alpha1.LimitSpec{{Period: "day", Value: 5, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "show_pet"}}}}}
	harness.Create(t, mine)
	harness.WaitState(t, v1alpha1.ConditionSynced, mine)
	without := strings.Replace(extendedDocument(t), "  /pets/{petId}:", "  /pets/{petId}/unused:", 1)
	without = without[:strings.Index(without, "  /pets/{petId}/unused:")]
	harness.Update(t, o, func() { o.Spec.Document = without })
	msg = waitOpenAPI(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonOperationStillLimited)
	if !strings.Contains(msg, `ApplicationPlan "partners" limits or prices "show_pet"`) {
		t.Errorf("waiting message %q, want the plan named", msg)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(&product), &product); err != nil || product.Spec.Methods["show_pet"].FriendlyName == "" {
		t.Errorf("the Product lost show_pet while a plan limits it: %v", err)
	}
	harness.Update(t, mine, func() { mine.Spec.Limits = nil })
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if ids, _ := methodIDs(ns); ids["show_pet"] != "" {
			return "show_pet is still in 3scale"
		}
		return ""
	})

	// A plan dropped from the document: its generated ApplicationPlan goes.
	harness.Update(t, o, func() { o.Spec.Document = strings.Replace(without, "    gold:", "    gold-unused:", 1) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: openapi.PlanName("pets", "gold")}, &v1alpha1.ApplicationPlan{})
		if err == nil {
			return "the gold plan is still there"
		}
		return ""
	})
}

// TestARenameKeepsPricingRulesInFewWrites: the extended document prices listPets' method in the gold
// plan as well as limiting it in basic; listPets renamed findPets keeps the method (its id), and the
// limits and pricing rules on it, the very ones (their ids) with the same values, in 3scale. The rename is
// two writes: the method's update (its friendly name, the operationId under 3scale-operator's
// conventions) and staging's deploy; nothing is deleted, and no method, metric, limit or pricing rule is
// created.
func TestARenameKeepsPricingRulesInFewWrites(t *testing.T) {
	ns := harness.NewNamespace(t)
	hits := "          metricMethodRef: {systemName: hits, backend: Pet_Store}\n"
	doc := strings.Replace(extendedDocument(t), hits, hits+`        - {from: 1, to: 100, pricePerUnit: "0.10", metricMethodRef: {systemName: listpets}}`+"\n", 1)
	o := openAPIObject(ns, "pets", doc)
	o.Spec.ActiveDoc = nil
	o.Spec.Conventions = v1alpha1.ConventionsThreescaleOperator
	o.Spec.SystemName = "Pet_Store"
	harness.Create(t, harness.DefaultSecret(ns), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pets-headers"},
		StringData: map[string]string{"configuration": "{}"}}, o)
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	ids, _ := methodIDs(ns)
	plans := onPlans(ns)
	if got := strings.Join(plans, " "); !strings.Contains(got, "basic/listpets/day=1000") || !strings.Contains(got, "gold/listpets/1-100=0.1") {
		t.Fatalf("limits and pricing rules in 3scale %v, want basic's limit and gold's price on listpets", plans)
	}

	before := harness.WritesTo(ns)
	harness.Update(t, o, func() { o.Spec.Document = strings.Replace(doc, "operationId: listPets", "operationId: findPets", 1) })
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if after, _ := methodIDs(ns); after["listpets"] != ids["listpets"] || after["findpets"] != "" {
		t.Errorf("after the rename, method ids %v, want listpets kept (%s) and no findpets", after, ids["listpets"])
	}
	for _, m := range harness.Sim.Objects(ns, simulator.KindMethods) {
		if m["system_name"] == "listpets" && m["friendly_name"] != "findPets" {
			t.Errorf("the listpets method's friendly name is %v, want findPets", m["friendly_name"])
		}
	}
	if after := onPlans(ns); strings.Join(after, " ") != strings.Join(plans, " ") {
		t.Errorf("limits and pricing rules after the rename %v, want %v", after, plans)
	}
	writes := harness.LastWrites(ns, harness.WritesTo(ns)-before)
	for _, w := range writes {
		created := strings.HasPrefix(w, "POST ") && (strings.HasSuffix(w, "/metrics.json") || strings.HasSuffix(w, "/methods.json") ||
			strings.HasSuffix(w, "/limits.json") || strings.HasSuffix(w, "/pricing_rules.json"))
		if strings.HasPrefix(w, "DELETE ") || created {
			t.Errorf("the rename made %s", w)
		}
	}
	// The method's update, and staging's deploy it owes: the Product's gateway state counts its methods'
	// friendly names, though porta's configuration of the gateway has none (the deploy makes no new
	// staging version).
	want := []string{"PUT /admin/api/services/{service_id}/metrics/{metric_id}/methods/{id}.json", "POST /admin/api/services/{service_id}/proxy/deploy.json"}
	if strings.Join(writes, ", ") != strings.Join(want, ", ") {
		t.Errorf("the rename wrote %v, want %v", writes, want)
	}
}

// onPlans lists a tenant's limits ("#id plan/method/period=value") and pricing rules ("#id
// plan/method/min-max=cost"), ids included: the same list is the same rules, not new ones alike.
func onPlans(ns string) []string {
	names, plans := map[string]string{}, map[string]string{}
	for _, m := range harness.Sim.Objects(ns, simulator.KindMetrics) {
		names[fmt.Sprint(m["id"])] = fmt.Sprint(m["system_name"])
	}
	for _, p := range harness.Sim.Objects(ns, simulator.KindPlans) {
		plans[fmt.Sprint(p["id"])] = fmt.Sprint(p["system_name"])
	}
	var out []string
	for _, l := range harness.Sim.Objects(ns, simulator.KindLimits) {
		out = append(out, fmt.Sprintf("#%v %s/%s/%v=%v", l["id"], plans[fmt.Sprint(l["plan_id"])], names[fmt.Sprint(l["metric_id"])], l["period"], l["value"]))
	}
	for _, p := range harness.Sim.Objects(ns, simulator.KindPricingRules) {
		out = append(out, fmt.Sprintf("#%v %s/%s/%v-%v=%v", p["id"], plans[fmt.Sprint(p["plan_id"])], names[fmt.Sprint(p["metric_id"])], p["min"], p["max"], p["cost_per_unit"]))
	}
	return out
}

// TestBadInputWritesNothing: each bad input makes the OpenAPI Invalid, saying what to change, and nothing
// is generated or written to 3scale: an extension naming a metric the document does not have, a plan
// limiting a method the document does not have, two operations that would make the same mapping rule,
// a policy whose Secret does not hold a JSON object. And an OpenAPI already Synced whose document turns
// bad keeps what it generated, as it is, with no write.
func TestBadInputWritesNothing(t *testing.T) {
	notJSON := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pets-headers"}, StringData: map[string]string{"configuration": "request: [set X-Team]"}}
	good := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pets-headers"}, StringData: map[string]string{"configuration": "{}"}}
	for name, c := range map[string]struct {
		doc    string
		secret *corev1.Secret
		want   string
	}{
		"unknown metric": {strings.Replace(extendedDocument(t), "metricMethodRef: adoptions", "metricMethodRef: sales", 1), good,
			`POST /pets: x-3scale-operation.mappingRule.metricMethodRef names "sales"`},
		"a limit on a method the document lacks": {strings.Replace(extendedDocument(t), "metricMethodRef: {systemName: listpets}", "metricMethodRef: {systemName: deletepet}", 1), good,
			`applicationPlans.basic.limits[0]: metricMethodRef names "deletepet"`},
		"two operations one rule": {strings.Replace(extendedDocument(t), "  /pets/{petId}:", `  /pets/{id}:
    get:
      operationId: findPet
      x-3scale-operation: {mappingRule: {metricMethodRef: hits}}
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200": {description: a pet}
  /pets/{petId}:`, 1), good, `conflicting paths`},
		"a policy Secret that is not JSON": {extendedDocument(t), notJSON,
			`the configuration of policy headers in the document's x-3scale-product, key "configuration" of Secret "pets-headers", is not a JSON object`},
	} {
		t.Run(name, func(t *testing.T) {
			ns := harness.NewNamespace(t)
			o := openAPIObject(ns, "pets", c.doc)
			o.Spec.SystemName = "Pet_Store"
			secret := c.secret.DeepCopy()
			secret.Namespace = ns
			harness.Create(t, harness.DefaultSecret(ns), secret, o)
			msg := waitOpenAPI(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)
			if !strings.Contains(msg, c.want) {
				t.Errorf("Invalid message %q, want %q in it", msg, c.want)
			}
			if n := harness.WritesTo(ns); n != 0 {
				t.Errorf("%d writes to 3scale, want 0: %v", n, harness.LastWrites(ns, n))
			}
			if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, &v1alpha1.Backend{}); err == nil {
				t.Error("a Backend was generated from bad input")
			}
		})
	}

	t.Run("a Synced OpenAPI whose document turns bad", func(t *testing.T) {
		ns, o := syncedPetstore(t)
		var product v1alpha1.Product
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, &product); err != nil {
			t.Fatal(err)
		}
		before := harness.WritesTo(ns)
		harness.Update(t, o, func() {
			o.Spec.Document = strings.Replace(petstoreOpenAPI, "paths:", "x-3scale-product: {applicationPlans: {basic: {limits: [{period: day, value: 1, metricMethodRef: {systemName: sales}}]}}}\npaths:", 1)
		})
		msg := waitOpenAPI(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidDocument)
		if !strings.Contains(msg, `metricMethodRef names "sales"`) {
			t.Errorf("Invalid message %q", msg)
		}
		var after v1alpha1.Product
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(&product), &after); err != nil || after.Generation != product.Generation {
			t.Errorf("the generated Product changed (generation %d, was %d): %v", after.Generation, product.Generation, err)
		}
		if n := harness.WritesTo(ns) - before; n != 0 {
			t.Errorf("%d writes to 3scale, want 0: %v", n, harness.LastWrites(ns, n))
		}
	})
}

// TestOpenAPIBackendOnlyAndDefaultCredentials: backendOnly generates the Backend with the operations'
// methods and rules, and nothing else; defaultCredentials puts APIcast's default_credentials policy first,
// its key in a Secret the OpenAPI owns, and is Invalid for a document that asks for security.
func TestOpenAPIBackendOnlyAndDefaultCredentials(t *testing.T) {
	ns := harness.NewNamespace(t)
	open := openPetstore()
	backend := openAPIObject(ns, "pets-backend", open)
	backend.Spec.ActiveDoc, backend.Spec.BackendOnly = nil, true
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anonymous"}, StringData: map[string]string{"user_key": "k-123"}}
	dc := openAPIObject(ns, "open-pets", open)
	dc.Spec.ActiveDoc = nil
	dc.Spec.DefaultCredentials = &v1alpha1.OpenAPIDefaultCredentials{UserKeyRef: v1alpha1.LocalSecretKeyRef{Name: "anonymous", Key: "user_key"}}
	secured := openAPIObject(ns, "secured", petstoreOpenAPI)
	secured.Spec.ActiveDoc, secured.Spec.DefaultCredentials = nil, dc.Spec.DefaultCredentials
	harness.Create(t, harness.DefaultSecret(ns), key, backend, dc, secured)

	waitOpenAPI(t, backend, v1alpha1.ConditionSynced, "")
	var b v1alpha1.Backend
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets-backend"}, &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Spec.Methods) != 2 || len(b.Spec.MappingRules) != 2 || b.Spec.PrivateBaseURL != "https://pets.example.com/v1" {
		t.Errorf("backend-only: methods %v, rules %v, upstream %q", b.Spec.Methods, b.Spec.MappingRules, b.Spec.PrivateBaseURL)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets-backend"}, &v1alpha1.Product{}); err == nil {
		t.Error("backend-only generated a Product")
	}

	waitOpenAPI(t, dc, v1alpha1.ConditionSynced, "")
	var p v1alpha1.Product
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "open-pets"}, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Policies) != 2 || p.Spec.Policies[0].Name != "default_credentials" || p.Spec.Policies[0].ConfigurationRef == nil {
		t.Fatalf("chain %+v, want default_credentials first, from a Secret", p.Spec.Policies)
	}
	var written corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: p.Spec.Policies[0].ConfigurationRef.Name}, &written); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&written, dc) || string(written.Data["configuration"]) != `{"auth_type":"user_key","user_key":"k-123"}` {
		t.Errorf("the default credentials' Secret: owners %v, configuration %s", written.OwnerReferences, written.Data["configuration"])
	}
	found := false
	for _, c := range harness.Sim.Objects(ns, simulator.KindPolicies) {
		found = found || strings.Contains(fmt.Sprint(c["policies_config"]), "k-123")
	}
	if !found {
		t.Error("3scale's chain has no default_credentials with the key")
	}
	// A new key in the Secret: the configuration follows, in the owned Secret and in 3scale's chain.
	harness.Update(t, key, func() { key.StringData = map[string]string{"user_key": "k-456"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		for _, c := range harness.Sim.Objects(ns, simulator.KindPolicies) {
			if chain := fmt.Sprint(c["policies_config"]); strings.Contains(chain, "k-456") && !strings.Contains(chain, "k-123") {
				return ""
			}
		}
		return "3scale's chain does not have the new key (only)"
	})
	if msg := waitOpenAPI(t, secured, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec); !strings.Contains(msg, "asks for no security") {
		t.Errorf("defaultCredentials on a secured document: %q", msg)
	}
}

// openPetstore is the petstore document without security.
func openPetstore() string {
	return strings.Replace(strings.Replace(petstoreOpenAPI, "security:\n  - key: []\n", "", 1), "components:\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-API-Key}\n", "", 1)
}

// syncedPetstore is the petstore document's OpenAPI "pets" (no ActiveDoc), Synced in a new namespace.
func syncedPetstore(t *testing.T) (string, *v1alpha1.OpenAPI) {
	t.Helper()
	ns := harness.NewNamespace(t)
	o := openAPIObject(ns, "pets", petstoreOpenAPI)
	o.Spec.ActiveDoc = nil
	harness.Create(t, harness.DefaultSecret(ns), o)
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	return ns, o
}

// TestDiffOfAnOpenAPI: kubectl apimsync diff of an OpenAPI whose document changed lists the operations
// and methods added, changed and removed (an operation added and a summary changed; an operation removed;
// an operation's path, its verb, or what its rule counts changed), and plans the exact writes to 3scale
// the generated Product would make, writing nothing; an operation removed while a hand-made plan limits
// its method is planned as the wait it would be.
func TestDiffOfAnOpenAPI(t *testing.T) {
	ns, o := syncedPetstore(t)
	before := harness.WritesTo(ns)

	diff := func(doc string) []plugin.Plan {
		t.Helper()
		changed := harness.AsFiles(ns, o)[0].(*v1alpha1.OpenAPI)
		changed.Spec.Document = doc
		plans, err := controllers.DiffObjects(context.Background(), harness.K8s, harness.Env.Scheme, ns, []client.Object{changed}, controllers.DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return plans
	}
	const (
		method = "/admin/api/services/{service_id}/metrics/{metric_id}/methods"
		rule   = "/admin/api/services/{service_id}/proxy/mapping_rules"
		deploy = "POST /admin/api/services/{service_id}/proxy/deploy.json"
	)
	withoutShowPet := petstoreOpenAPI[:strings.Index(petstoreOpenAPI, "  /pets/{petId}:")] + petstoreOpenAPI[strings.Index(petstoreOpenAPI, "components:"):]
	for _, c := range []struct {
		name, doc       string
		details, writes []string
	}{
		{"an operation added, a summary changed", strings.Replace(strings.Replace(petstoreOpenAPI, "summary: List pets", "summary: List all pets", 1),
			"  /pets/{petId}:", `  /stores:
    get:
      operationId: listStores
      responses:
        "200": {description: the stores}
  /pets/{petId}:`, 1),
			[]string{`method added: liststores ("listStores")`, `method changed: listpets ("List all pets", was "List pets")`, "operation added: GET /stores$, counted on liststores"},
			// listpets renamed, the new method and its rule, and staging's deploy.
			[]string{"PUT " + method + "/{id}.json", "POST " + method + ".json", "POST " + rule + ".json", deploy}},
		// The rule goes, staging is deployed without it, then its method goes.
		{"an operation removed", withoutShowPet,
			[]string{`method removed: showpet ("Show a pet"): 3scale deletes the limits and pricing rules on it`, "operation removed: GET /pets/{petId}$, counted on showpet"},
			[]string{"DELETE " + rule + "/{id}.json", deploy, "DELETE " + method + "/{id}.json"}},
		// The method stays; its rule is updated in place.
		{"an operation's path changed", strings.Replace(petstoreOpenAPI, "  /pets/{petId}:", "  /animals/{petId}:", 1),
			[]string{"operation added: GET /animals/{petId}$, counted on showpet", "operation removed: GET /pets/{petId}$, counted on showpet"},
			[]string{"PATCH " + rule + "/{id}.json", deploy}},
		// The method stays; its rule, matched by pattern and metric, takes the new verb in place.
		{"an operation's verb changed", strings.Replace(petstoreOpenAPI, "    get:\n      operationId: showPet", "    put:\n      operationId: showPet", 1),
			[]string{"operation added: PUT /pets/{petId}$, counted on showpet", "operation removed: GET /pets/{petId}$, counted on showpet"},
			[]string{"PATCH " + rule + "/{id}.json", deploy}},
		{"what an operation counts changed", strings.Replace(petstoreOpenAPI, "      summary: List pets\n",
			"      summary: List pets\n      x-3scale-operation: {mappingRule: {metricMethodRef: listpets, increment: 3}}\n", 1),
			[]string{"operation changed: GET /pets$, counted on listpets +3 (was listpets)"},
			[]string{"PATCH " + rule + "/{id}.json", deploy}},
	} {
		plans := diff(c.doc)
		p := harness.PlanOf(t, plans, "OpenAPI", "pets")
		if strings.Join(p.Details, "\n") != strings.Join(c.details, "\n") {
			t.Errorf("%s: OpenAPI details:\n%s\nwant:\n%s", c.name, strings.Join(p.Details, "\n"), strings.Join(c.details, "\n"))
		}
		product := harness.PlanOf(t, plans, "Product", "pets")
		var writes []string
		for _, w := range product.Writes {
			writes = append(writes, w.Method+" "+w.Endpoint)
		}
		if product.Action != "update" || strings.Join(writes, "\n") != strings.Join(c.writes, "\n") {
			t.Errorf("%s: the generated Product's plan: %s, writes:\n%s\nwant:\n%s", c.name, product.Action, strings.Join(writes, "\n"), strings.Join(c.writes, "\n"))
		}
	}
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("diff wrote %d times to 3scale", n)
	}

	mine := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "partners"}, Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "pets", Name: "Partners",
		Limits: []v1alpha1.LimitSpec{{Period: "day", Value: 5, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "showpet"}}}}}
	harness.Create(t, mine)
	if p := harness.PlanOf(t, diff(withoutShowPet), "OpenAPI", "pets"); p.Action != "wait" || !strings.Contains(p.Message, `ApplicationPlan "partners" limits or prices "showpet"`) {
		t.Errorf("an operation removed under a plan's limit: %+v, want a wait naming the plan", p)
	}

	// Default credentials added to a Synced OpenAPI: its Product's update is planned (the Secret its
	// policy reads is made in the diff's memory, not in the cluster), not a wait for that Secret.
	open := openAPIObject(ns, "open-pets", openPetstore())
	open.Spec.ActiveDoc = nil
	harness.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anonymous"}, StringData: map[string]string{"user_key": "k-123"}}, open)
	waitOpenAPI(t, open, v1alpha1.ConditionSynced, "")
	withKey := harness.AsFiles(ns, open)[0].(*v1alpha1.OpenAPI)
	withKey.Spec.DefaultCredentials = &v1alpha1.OpenAPIDefaultCredentials{UserKeyRef: v1alpha1.LocalSecretKeyRef{Name: "anonymous", Key: "user_key"}}
	plans, err := controllers.DiffObjects(context.Background(), harness.K8s, harness.Env.Scheme, ns, []client.Object{withKey}, controllers.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := harness.PlanOf(t, plans, "Product", "open-pets"); p.Action != "update" {
		t.Errorf("the Product of an OpenAPI given default credentials: %s %s %s, want an update", p.Action, p.Reason, p.Message)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "open-pets-default-credentials-policy"}, &corev1.Secret{}); err == nil {
		t.Error("diff wrote the default credentials' Secret to the cluster")
	}
}

// TestBasePathOverrides: publicBasePath and privateBasePath put the API where docs/resources.md says, in
// the generated Product and Backend and in 3scale alike (the petstore's server is
// https://pets.example.com/v1). A public base path other than the private one is in front of every
// mapping rule and is the path the Product uses the Backend under (the gateway takes it off), the
// upstream keeping the private one: /pets-api/pets reaches https://pets.example.com/v1/pets. A private
// base path alone replaces the server's path upstream, the rules and the usage staying at the root. The
// two equal, the rules carry the path and the upstream is the server's origin, used at the root.
func TestBasePathOverrides(t *testing.T) {
	for name, c := range map[string]struct {
		public, private         string
		prefix, usage, upstream string
	}{
		"public and private differ": {"/pets-api", "/v1", "/pets-api", "/pets-api", "https://pets.example.com/v1"},
		"private only":              {"", "/internal", "", "/", "https://pets.example.com/internal"},
		"both equal":                {"/v1", "/v1", "/v1", "/", "https://pets.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			ns := harness.NewNamespace(t)
			o := openAPIObject(ns, "pets", petstoreOpenAPI)
			o.Spec.ActiveDoc = nil
			o.Spec.PublicBasePath, o.Spec.PrivateBasePath = c.public, c.private
			harness.Create(t, harness.DefaultSecret(ns), o)
			waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
			want := "GET " + c.prefix + "/pets$, GET " + c.prefix + "/pets/{petId}$"

			var product v1alpha1.Product
			var backend v1alpha1.Backend
			for _, obj := range []client.Object{&product, &backend} {
				if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, obj); err != nil {
					t.Fatal(err)
				}
			}
			var rules []string
			for _, r := range product.Spec.MappingRules {
				rules = append(rules, r.HTTPMethod+" "+r.Pattern)
			}
			slices.Sort(rules)
			if got := strings.Join(rules, ", "); got != want {
				t.Errorf("the Product's rules %s, want %s", got, want)
			}
			if u, ok := product.Spec.BackendUsages["pets"]; !ok || len(product.Spec.BackendUsages) != 1 || u.Path != c.usage {
				t.Errorf("the Product's backend usages %+v, want pets at %s", product.Spec.BackendUsages, c.usage)
			}
			if backend.Spec.PrivateBaseURL != c.upstream {
				t.Errorf("the Backend's privateBaseURL %q, want %q", backend.Spec.PrivateBaseURL, c.upstream)
			}

			rules = nil
			for _, r := range harness.Sim.Objects(ns, simulator.KindMappingRules) {
				rules = append(rules, fmt.Sprintf("%v %v", r["http_method"], r["pattern"]))
			}
			slices.Sort(rules)
			if got := strings.Join(rules, ", "); got != want {
				t.Errorf("3scale's rules %s, want %s", got, want)
			}
			usages, backends := harness.Sim.Objects(ns, simulator.KindBackendUsages), harness.Sim.Objects(ns, simulator.KindBackendAPIs)
			if len(usages) != 1 || usages[0]["path"] != c.usage {
				t.Errorf("3scale's backend usages %v, want one at %s", usages, c.usage)
			}
			// porta stores an endpoint with its scheme's default port.
			remote := strings.Replace(c.upstream, "pets.example.com", "pets.example.com:443", 1)
			if len(backends) != 1 || backends[0]["private_endpoint"] != remote {
				t.Errorf("3scale's backends %v, want one on %s", backends, remote)
			}
		})
	}
}

// TestActiveDocServersFollowTheGateway: with activeDoc.servers Production, the ActiveDoc's servers are
// the Product's production gateway URL as 3scale holds it (porta's own for apicastHosted), then the public
// base path; then the self-managed one once the deployment changes: kept in step.
func TestActiveDocServersFollowTheGateway(t *testing.T) {
	activeDocServersFollow(t, "Production", "/v1")
}

// TestActiveDocServersFollowTheStagingGateway: with activeDoc.servers Staging, the ActiveDoc's servers are
// the Product's staging gateway URL as 3scale holds it (porta's own staging one for apicastHosted, not the
// production one), then the public base path (not the servers' path); the self-managed staging URL once
// the deployment changes to apicastSelfManaged, and the new one when only that URL changes again: in the
// ActiveDoc and in 3scale.
func TestActiveDocServersFollowTheStagingGateway(t *testing.T) {
	o := activeDocServersFollow(t, "Staging", "/pets-api")
	harness.Update(t, o, func() {
		o.Spec.Deployment.ApicastSelfManaged.StagingPublicBaseURL = "https://staging2.pets.example.com"
	})
	waitActiveDocServers(t, o, "https://staging2.pets.example.com/pets-api")
}

// activeDocServersFollow makes the petstore OpenAPI "pets" with activeDoc.servers (Production or Staging)
// and publicBasePath, checks that its ActiveDoc's only server is that gateway's URL as the Product's
// status has it from 3scale (porta's hosted one, without its default port, and not the other gateway's),
// then the base path; then moves the deployment to apicastSelfManaged, and waits until the ActiveDoc and
// 3scale's copy have that gateway's self-managed URL instead. It returns the OpenAPI, Synced.
func activeDocServersFollow(t *testing.T, servers, basePath string) *v1alpha1.OpenAPI {
	t.Helper()
	ns := harness.NewNamespace(t)
	o := openAPIObject(ns, "pets", petstoreOpenAPI)
	o.Spec.ActiveDoc.Servers = servers
	o.Spec.PublicBasePath = basePath
	harness.Create(t, harness.DefaultSecret(ns), o)
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	var product v1alpha1.Product
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pets"}, &product); err != nil || product.Status.Gateway == nil {
		t.Fatalf("the Product's gateway in status: %v, %+v", err, product.Status.Gateway)
	}
	g := product.Status.Gateway
	hosted, other := g.ProductionPublicBaseURL, g.StagingPublicBaseURL
	if servers == "Staging" {
		hosted, other = other, hosted
	}
	if !strings.HasPrefix(hosted, "https://") || strings.HasSuffix(hosted, ":443") || hosted == other {
		t.Errorf("%s gateway %q (the other %q), want porta's hosted URL without its default port", servers, hosted, other)
	}
	waitActiveDocServers(t, o, hosted+basePath)

	selfManaged := &v1alpha1.ApicastSelfManagedSpec{ProductionPublicBaseURL: "https://pets.example.com", StagingPublicBaseURL: "https://staging.pets.example.com"}
	harness.Update(t, o, func() { o.Spec.Deployment = &v1alpha1.DeploymentSpec{ApicastSelfManaged: selfManaged} })
	want := selfManaged.ProductionPublicBaseURL
	if servers == "Staging" {
		want = selfManaged.StagingPublicBaseURL
	}
	waitActiveDocServers(t, o, want+basePath)
	return o
}

// waitActiveDocServers waits until the OpenAPI's generated ActiveDoc and 3scale's copy of it have url as
// their only server, and the OpenAPI is Synced.
func waitActiveDocServers(t *testing.T, o *v1alpha1.OpenAPI, url string) {
	t.Helper()
	want := `"servers":[{"url":"` + url + `"}]`
	harness.Eventually(t, harness.WaitTimeout, func() string {
		var d v1alpha1.ActiveDoc
		if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, &d); err != nil {
			return err.Error()
		}
		if !strings.Contains(d.Spec.Document, want) {
			return "ActiveDoc document " + d.Spec.Document + ", want " + want
		}
		docs := harness.Sim.Objects(o.Namespace, simulator.KindAPIDocs)
		if len(docs) != 1 || !strings.Contains(fmt.Sprint(docs[0]["body"]), want) {
			return fmt.Sprintf("3scale's ActiveDocs %v, want one with %s", docs, want)
		}
		return ""
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
}

// TestAPathRenamedKeepsItsRule: an operation whose path changes (its parameter renamed), then whose verb
// changes, keeps its method and its mapping rule: one update of the rule each time, not a deletion and a
// creation.
func TestAPathRenamedKeepsItsRule(t *testing.T) {
	ns, o := syncedPetstore(t)
	ruleIDs := func() map[string]string { // "VERB pattern" → id
		out := map[string]string{}
		for _, r := range harness.Sim.Objects(ns, simulator.KindMappingRules) {
			if r["owner_type"] == "Proxy" {
				out[fmt.Sprint(r["http_method"], " ", r["pattern"])] = fmt.Sprint(r["id"])
			}
		}
		return out
	}
	// change applies the document, waits until rule from is rule to in 3scale, and wants one update of
	// the mapping rules.
	change := func(doc, from, to string) {
		t.Helper()
		before, writes := ruleIDs(), harness.WritesTo(ns)
		harness.Update(t, o, func() { o.Spec.Document = doc })
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if after := ruleIDs(); after[to] != before[from] {
				return fmt.Sprintf("rules %v, want %s to be rule %s", after, to, before[from])
			}
			return ""
		})
		waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
		var rules []string
		for _, w := range harness.LastWrites(ns, harness.WritesTo(ns)-writes) {
			if strings.Contains(w, "mapping_rules") {
				rules = append(rules, w)
			}
		}
		if len(rules) != 1 || !strings.HasPrefix(rules[0], "PATCH ") {
			t.Errorf("%s → %s: writes to mapping rules %v, want one update", from, to, rules)
		}
	}
	renamed := strings.ReplaceAll(petstoreOpenAPI, "petId", "id")
	change(renamed, "GET /pets/{petId}$", "GET /pets/{id}$")
	// Its verb changed too: the same rule, its http_method updated.
	change(strings.Replace(renamed, "    get:\n      operationId: showPet", "    put:\n      operationId: showPet", 1), "GET /pets/{id}$", "PUT /pets/{id}$")
}

// TestAMethodAPlanOnlyIn3scaleUsesIsKept: a plan made in 3scale's admin portal (no ApplicationPlan in the
// cluster) limits and prices an operation's method; the document drops the operation: the generated
// Product waits (MetricStillLimited) naming the plan, the OpenAPI says so, and 3scale keeps the method,
// the limit and the pricing rule (the rule of the operation goes). Once the plan lets go in 3scale, the
// method goes too.
func TestAMethodAPlanOnlyIn3scaleUsesIsKept(t *testing.T) {
	ns, o := syncedPetstore(t)
	ctx := context.Background()
	var product v1alpha1.Product
	if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pets"}, &product); err != nil {
		t.Fatal(err)
	}
	ids, _ := methodIDs(ns)
	var showPet int64
	if _, err := fmt.Sscan(ids["showpet"], &showPet); err != nil {
		t.Fatalf("the showpet method in 3scale: %v (%v)", err, ids)
	}
	byHand := harness.TenantClient(t, ns)
	plan, err := byHand.CreatePlan(ctx, product.Status.ProductID, tsclient.PlanParams{Name: "Partners", SystemName: "partners"})
	if err != nil {
		t.Fatal(err)
	}
	limit, err := byHand.CreateLimit(ctx, plan.ID, showPet, tsclient.LimitParams{Period: "day", Value: 5})
	if err != nil {
		t.Fatal(err)
	}
	price, err := byHand.CreatePricingRule(ctx, plan.ID, showPet, tsclient.PricingRuleParams{Min: 1, Max: 10, CostPerUnit: "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	before := harness.WritesTo(ns)
	harness.Update(t, o, func() {
		o.Spec.Document = petstoreOpenAPI[:strings.Index(petstoreOpenAPI, "  /pets/{petId}:")] + petstoreOpenAPI[strings.Index(petstoreOpenAPI, "components:"):]
	})
	harness.WaitReason(t, &product, v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricStillLimited)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonGeneratedWaiting)
	if !strings.Contains(msg, `plan "partners" limits or prices method "showpet"`) {
		t.Errorf("the OpenAPI's message %q, want the plan and the method named", msg)
	}
	for _, w := range harness.LastWrites(ns, harness.WritesTo(ns)-before) {
		if strings.HasPrefix(w, "DELETE ") && (strings.Contains(w, "/methods/") || strings.Contains(w, "/metrics/") && !strings.Contains(w, "mapping_rules")) {
			t.Errorf("a method or metric was deleted while a plan uses it: %s", w)
		}
	}
	if ids, limits := methodIDs(ns); ids["showpet"] == "" || !strings.Contains(strings.Join(limits, " "), "partners/showpet/day=5") {
		t.Errorf("3scale lost the method or its limit: methods %v, limits %v", ids, limits)
	}
	if n := harness.Sim.Count(ns, simulator.KindPricingRules); n != 1 {
		t.Errorf("%d pricing rules in 3scale, want the partners plan's", n)
	}

	// The plan lets go in 3scale: the method goes.
	if err := byHand.DeleteLimit(ctx, plan.ID, showPet, limit.ID); err != nil {
		t.Fatal(err)
	}
	if err := byHand.DeletePricingRule(ctx, plan.ID, showPet, price.ID); err != nil {
		t.Fatal(err)
	}
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if ids, _ := methodIDs(ns); ids["showpet"] != "" {
		t.Errorf("showpet is still in 3scale once no plan uses it: %v", ids)
	}
}
