package operatorreplay

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestReplayLeavesWhat3scaleOperatorLeaves: the workload replayed on an empty tenant leaves what
// 3scale-operator's controllers leave, in the places where they differ from a plain create: porta's default
// rule deleted, or kept and updated when a product's first rule is GET /; a plan without a name named by
// its key; apicast appended to a chain; the signup admin and the other users active, with their roles; a
// custom policy's description (sent after the create); the promotion to production.
func TestReplayLeavesWhat3scaleOperatorLeaves(t *testing.T) {
	sim := replayed(t)
	services := map[string]string{} // id → system name
	for _, s := range sim.Objects("acme", simulator.KindServices) {
		services[fmt.Sprint(s["id"])] = fmt.Sprint(s["system_name"])
	}
	metrics := map[string]string{} // id → system name
	for _, m := range sim.Objects("acme", simulator.KindMetrics) {
		metrics[fmt.Sprint(m["id"])] = fmt.Sprint(m["system_name"])
	}
	rules := map[string][]string{} // by product, in position order
	byPosition := sim.Objects("acme", simulator.KindMappingRules)
	slices.SortStableFunc(byPosition, func(a, b map[string]any) int {
		return strings.Compare(fmt.Sprintf("%08v", a["position"]), fmt.Sprintf("%08v", b["position"]))
	})
	for _, r := range byPosition {
		if owner, ok := services[fmt.Sprint(r["owner_id"])]; ok && r["owner_type"] == "Proxy" {
			rules[owner] = append(rules[owner], fmt.Sprintf("%v %v %s", r["http_method"], r["pattern"], metrics[fmt.Sprint(r["metric_id"])]))
		}
	}
	for product, want := range map[string][]string{"stock": nil, "status_page": {"GET / hits"},
		"petstore": {"POST /adoptions adopt", "POST /adoptions adoptions"},
		// The order 3scale-operator's Go map gave, not the document's (the adoption must take it as it is).
		"Inventory_API": {"GET /v1/items/{id}$ getitem", "POST /v1/items$ createitem", "GET /v1/items$ listitems"}} {
		if got := rules[product]; !slices.Equal(got, want) {
			t.Errorf("rules of %s: %v, want %v", product, got, want)
		}
	}
	plans := map[string]string{}
	for _, p := range sim.Objects("acme", simulator.KindPlans) {
		plans[fmt.Sprint(p["system_name"])] = fmt.Sprintf("%v %v", p["name"], p["state"])
	}
	for plan, want := range map[string]string{"internal": "internal hidden", "free": "free published", "premium": "Premium published"} {
		if plans[plan] != want {
			t.Errorf("plan %s: %q, want %q", plan, plans[plan], want)
		}
	}
	for _, p := range sim.Objects("acme", simulator.KindPolicies) {
		chain := fmt.Sprint(p["policies_config"])
		if services[fmt.Sprint(p["service_id"])] == "petstore" && !strings.Contains(chain, "apicast") {
			t.Errorf("petstore's chain has no apicast: %s", chain)
		}
	}
	users := map[string]string{}
	for _, u := range sim.Objects("acme", simulator.KindUsers) {
		users[fmt.Sprint(u["username"])] = fmt.Sprintf("%v %v", u["role"], u["state"])
	}
	for user, want := range map[string]string{"alice": "admin active", "bob": "member active", "dave": "admin active", "carol": "admin active"} {
		if users[user] != want {
			t.Errorf("user %s: %q, want %q", user, users[user], want)
		}
	}
	if policies := fmt.Sprint(sim.Objects("acme", simulator.KindCustomPolicies)); !strings.Contains(policies, "Adds a header naming the gateway") {
		t.Errorf("the custom policy has no description: %s", policies)
	}
	production := 0
	for _, v := range sim.Objects("acme", simulator.KindProxyConfigs) {
		if v["environment"] == "production" {
			production++
		}
	}
	if production != 1 {
		t.Errorf("%d production configurations, want 1 (petstore's promotion)", production)
	}
}

// TestReplayStoresActiveDocsAsOperatorDoes: the ActiveDoc's document reaches 3scale as 3scale-operator
// sends it, its Secret's YAML loaded and written back by kin-openapi v0.94 (3scale-operator's version):
// JSON with sorted keys and "components":{} although the document has none. (The expected text is
// v0.94's own output for the workload's document.)
func TestReplayStoresActiveDocsAsOperatorDoes(t *testing.T) {
	sim := replayed(t)
	docs := sim.Objects("acme", simulator.KindAPIDocs)
	if len(docs) != 1 {
		t.Fatalf("%d ActiveDocs in 3scale, want 1", len(docs))
	}
	want := `{"components":{},"info":{"title":"Pet Store","version":"1.0.0"},"openapi":"3.0.3",` +
		`"paths":{"/pets":{"get":{"responses":{"200":{"description":"The pets"}},"summary":"List pets"}}},` +
		`"servers":[{"url":"https://petstore.example.com"}]}`
	if got := fmt.Sprint(docs[0]["body"]); got != want {
		t.Errorf("body in 3scale:\n%s\nwant (kin-openapi v0.94's):\n%s", got, want)
	}
}

// replayed replays the workload on the tenant "acme" of a new simulator and returns the simulator.
func replayed(t *testing.T) *simulator.Simulator {
	t.Helper()
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token"}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := tsclient.New(tsclient.Config{AdminURL: srv.URL + "/t/acme", Token: "acme-token",
		Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Workload()
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(context.Background(), c, objs); err != nil {
		t.Fatal(err)
	}
	return sim
}
