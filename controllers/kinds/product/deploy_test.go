package product_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	productkind "github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/test/simulator"
)

// deployRequests counts a tenant's deploy requests that 3scale answered.
func deployRequests(tenant string) int {
	n := 0
	for _, w := range harness.Sim.Writes(tenant) {
		if w.Method == "POST" && w.Endpoint == "/admin/api/services/{service_id}/proxy/deploy.json" && w.Code > 0 && w.Code < 300 {
			n++
		}
	}
	return n
}

// TestBackendChangeDeploysEveryProductUsingIt: an edit of a Backend (a new mapping rule, a new private
// endpoint) reaches the gateway of each Product that uses it: one deploy each, and with promote: Latest
// one promotion of the new staging version.
func TestBackendChangeDeploysEveryProductUsingIt(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	first := harness.PetstoreProduct(ns, "pets")
	first.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromoteLatest}
	second := harness.PetstoreProduct(ns, "pets")
	second.Name, second.Spec.Name = "shop", "Shop"
	harness.Create(t, harness.DefaultSecret(ns), backend, first, second)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, first, second)
	before := productionOf(t, first)
	secondBefore, _, _ := harness.Sim.LatestConfig(ns, second.Status.ProductID, "sandbox")
	deploys, promotes := deployRequests(ns), len(promotions(ns))

	harness.EditAndWait(t, backend, func() {
		backend.Spec.PrivateBaseURL = "https://pets-v2.internal:8443"
		backend.Spec.MappingRules = append(backend.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "DELETE", Pattern: "/pets/{id}$", MetricMethodRef: "get_pet", Increment: 1})
	})
	for _, p := range []*v1alpha1.Product{first, second} {
		harness.StagingRuns(t, p, "pets-v2.internal", `"http_method":"DELETE"`)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, first, second)
	after := productionOf(t, first)
	if after.StagingVersion != before.StagingVersion+1 || after.ProductionVersion != after.StagingVersion {
		t.Errorf("after the Backend's edit: %+v, want staging one version on (%d) and production on it", after, before.StagingVersion+1)
	}
	if v, _, _ := harness.Sim.LatestConfig(ns, second.Status.ProductID, "sandbox"); v != secondBefore+1 {
		t.Errorf("Product %s: staging at configuration %d after the Backend's edit, want %d", second.Name, v, secondBefore+1)
	}
	if got := deployRequests(ns) - deploys; got != 2 {
		t.Errorf("%d deploys after the Backend's edit, want 2 (one per Product using it)", got)
	}
	if got := len(promotions(ns)) - promotes; got != 1 {
		t.Errorf("%d promotions after the Backend's edit, want 1 (only %s promotes Latest)", got, first.Name)
	}
	_, _, msg := harness.SyncState(t, first)
	if want := fmt.Sprintf("production runs staging's configuration %d", after.StagingVersion); !strings.Contains(msg, want) {
		t.Errorf("Synced message %q, want %q", msg, want)
	}

	// At rest: no deploy, no call.
	calls := harness.RemoteCalls(ns)
	harness.Update(t, first, func() { first.Spec.Description = "unchanged gateway" })
	harness.WaitState(t, v1alpha1.ConditionSynced, first)
	if got := deployRequests(ns) - deploys; got != 2 {
		t.Errorf("a description edit deployed: %d deploys since the Backend's edit, want 2", got)
	}
	if got := harness.RemoteCalls(ns) - calls; got != 1 {
		t.Errorf("a description edit made %d calls, want 1 (the update)", got)
	}
}

// TestChangeWhoseAnswerWasLostIsDeployed: a write whose answer is lost, and a deploy that fails, still
// end with staging running the change: the next attempt finds nothing left to write, but staging is
// behind, and deploys.
func TestChangeWhoseAnswerWasLostIsDeployed(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)

	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/proxy/mapping_rules.json", Count: 1, Lose: true})
	harness.EditAndWait(t, product, func() {
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "POST", Pattern: "/orders$", MetricMethodRef: "hits", Increment: 1})
	})
	if harness.LostAnswers(ns) == 0 {
		t.Fatalf("no answer was lost: the test did not exercise a lost write")
	}
	harness.StagingRuns(t, product, `"pattern":"/orders$"`)

	// The deploy itself fails, then succeeds on the next sync.
	// (a 500: the client sends a write again by itself only after a 429 or 503, so this one fails the sync)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/proxy/deploy.json", Count: 1, Code: 500})
	harness.EditAndWait(t, product, func() {
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "PUT", Pattern: "/orders/{id}$", MetricMethodRef: "hits", Increment: 1})
	})
	harness.StagingRuns(t, product, `"pattern":"/orders/{id}$"`)
	failed := 0
	for _, w := range harness.Sim.Writes(ns) {
		if w.Endpoint == "/admin/api/services/{service_id}/proxy/deploy.json" && w.Code == 500 {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d deploys answered 500, want 1: the test did not make a deploy fail", failed)
	}
	if product.Status.DeployedHash == "" || product.Status.DeployedHash == productkind.DeployOwed {
		t.Errorf("status.deployedHash %q after the deploy, want the hash of what was deployed", product.Status.DeployedHash)
	}

	// A manager that stopped between a write and its deploy, before writing any status: the write is in
	// 3scale (made here by hand, with no deploy), and the next sync — which reads 3scale, as a restarted
	// manager's empty cache does (sync-now here) — finds nothing to write; but staging is behind the
	// spec's gateway state, so it deploys.
	c := harness.ByHand(t, ns)
	hits, err := c.ListMetrics(context.Background(), tsclient.ProductScope(product.Status.ProductID))
	if err != nil {
		t.Fatal(err)
	}
	var hitsID int64
	for _, m := range hits {
		if m.SystemName == "hits" {
			hitsID = m.ID
		}
	}
	if _, err := c.CreateMappingRule(context.Background(), tsclient.ProductScope(product.Status.ProductID),
		tsclient.MappingRuleParams{HTTPMethod: "DELETE", Pattern: "/orders/{id}$", MetricID: hitsID, Delta: 1}); err != nil {
		t.Fatal(err)
	}
	writes := len(harness.Sim.Writes(ns))
	harness.EditAndWait(t, product, func() {
		product.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "restarted"})
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "DELETE", Pattern: "/orders/{id}$", MetricMethodRef: "hits", Increment: 1})
	})
	harness.StagingRuns(t, product, `"http_method":"DELETE"`)
	if got := harness.Sim.Writes(ns)[writes:]; len(got) != 1 || got[0].Endpoint != "/admin/api/services/{service_id}/proxy/deploy.json" {
		t.Errorf("after a restart between a write and its deploy: writes %v, want the deploy alone", got)
	}
}

// syncedPetstore makes the pets Backend and the petstore Product using it, production following
// staging (promote: Latest), and waits until both are Synced.
func syncedPetstore(t *testing.T) (ns string, backend *v1alpha1.Backend, product *v1alpha1.Product) {
	t.Helper()
	ns = harness.NewNamespace(t)
	backend, product = harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromoteLatest}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend, product)
	return ns, backend, product
}

// metricNamed reports whether the tenant holds a metric or method of that system name.
func metricNamed(tenant, systemName string) bool {
	for _, m := range harness.Sim.Objects(tenant, simulator.KindMetrics) {
		if m["system_name"] == systemName {
			return true
		}
	}
	return false
}

// TestRemovedMetricWaitsForTheGateway: porta refuses to delete a metric or method that the latest staging
// or production configuration counts. A product's method removed with its rule goes after the deploy
// (and, with promote: Latest, the promotion); while production (promote: Manual) still runs a
// configuration that counts it, the Product waits and says why — never Invalid — and goes on once
// production may follow. A Backend's metric removed with its rule goes once the products using it are
// deployed.
func TestRemovedMetricWaitsForTheGateway(t *testing.T) {
	ns, backend, product := syncedPetstore(t)

	// A Backend's metric and its rule: gone once staging and production are built without the rule.
	harness.EditAndWait(t, backend, func() {
		delete(backend.Spec.Metrics, "photos_mb")
		backend.Spec.MappingRules = backend.Spec.MappingRules[:2]
	})
	if metricNamed(ns, "photos_mb") {
		t.Errorf("the Backend's metric photos_mb is still in 3scale")
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, product)

	// The product's method, with production on Manual: staging is rebuilt, production still counts it.
	harness.EditAndWait(t, product, func() { product.Spec.Description = "manual"; product.Spec.Production.Promote = v1alpha1.PromoteManual })
	harness.Update(t, product, func() {
		delete(product.Spec.Methods, "search")
		product.Spec.MappingRules = nil
	})
	harness.WaitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricInUseByGateway)
	if !metricNamed(ns, "search") {
		t.Fatalf("the method search is gone although production's configuration counts it")
	}
	harness.StagingRuns(t, product)
	if _, content, _ := harness.Sim.LatestConfig(ns, product.Status.ProductID, "sandbox"); strings.Contains(string(content), `"pattern":"/search"`) {
		t.Errorf("staging still runs the removed rule")
	}
	// Production may follow: promoted, then the method goes.
	harness.EditAndWait(t, product, func() { product.Spec.Production.Promote = v1alpha1.PromoteLatest })
	if metricNamed(ns, "search") {
		t.Errorf("the method search is still in 3scale after production moved on")
	}
}

// TestPinnedProductionLetsABackendMetricGo (issue 42, item 9): a Backend removing a metric its rule
// counted, used by a Product whose production is pinned at the version that counts it, waits on the
// gateway — Orphan with its backoff, not a loop of refused deletes and deploys — while the Product still
// applies its own spec: moving the pin to the version staging built without the rule promotes it, and
// the Backend's removal then completes.
func TestPinnedProductionLetsABackendMetricGo(t *testing.T) {
	ns, backend, product := syncedPetstore(t)
	pinned := productionOf(t, product).ProductionVersion
	harness.EditAndWait(t, product, func() {
		product.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromotePinned, Version: ptr.To(pinned)}
	})

	harness.Update(t, backend, func() {
		delete(backend.Spec.Metrics, "photos_mb")
		backend.Spec.MappingRules = backend.Spec.MappingRules[:2]
	})
	harness.WaitReason(t, backend, v1alpha1.ConditionOrphan, v1alpha1.ReasonMetricInUseByGateway)
	// The window opens once staging runs the Backend's state (on a loaded machine the Product's staging
	// deploy may land after the Backend starts waiting; that deploy, and the wake it brings, are not a loop).
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if v, _, _ := harness.Sim.LatestConfig(ns, product.Status.ProductID, "sandbox"); v <= pinned {
			return "staging has not built the Backend's removal yet"
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	deletes := harness.RequestsTo(ns, "DELETE", "/admin/api/backend_apis/{backend_api_id}/metrics/{id}.json")
	deploys := harness.RequestsTo(ns, "POST", "/admin/api/services/{service_id}/proxy/deploy.json")
	time.Sleep(5 * time.Second)
	if got := harness.RequestsTo(ns, "DELETE", "/admin/api/backend_apis/{backend_api_id}/metrics/{id}.json") - deletes; got > 3 {
		t.Errorf("%d refused metric deletes in 5 s while waiting on the gateway, want a backoff (at most 3)", got)
	}
	if got := harness.RequestsTo(ns, "POST", "/admin/api/services/{service_id}/proxy/deploy.json") - deploys; got > 0 {
		t.Errorf("%d deploys in 5 s while staging already runs the Backend's state, want none", got)
	}
	if !metricNamed(ns, "photos_mb") {
		t.Fatalf("the metric photos_mb is gone although the pinned production counts it")
	}

	// The Product is not blocked by the waiting Backend: its pin moves to staging's version without the rule.
	staging := harness.StagingRuns(t, product)
	if staging <= pinned {
		t.Fatalf("staging at %d, want a version past the pinned %d built without the rule", staging, pinned)
	}
	harness.Update(t, product, func() { product.Spec.Production.Version = ptr.To(staging) })
	harness.WaitState(t, v1alpha1.ConditionSynced, product, backend)
	if got := productionOf(t, product).ProductionVersion; got != staging {
		t.Errorf("production runs %d, want the new pin %d", got, staging)
	}
	if metricNamed(ns, "photos_mb") {
		t.Errorf("the Backend's metric photos_mb is still in 3scale after production moved on")
	}
}

// TestLostDeployAnswersAreSettledFromStaging (issue 42, item 10): while every answer to a deploy and to a
// promotion is lost (they land: a proxy times out on porta's slow endpoint), a change the gateway uses
// is deployed and promoted once each, settled by reading staging's and production's latest
// configurations, and the Product says Synced: no deploy is sent again and again.
func TestLostDeployAnswersAreSettledFromStaging(t *testing.T) {
	ns, _, product := syncedPetstore(t)
	before := productionOf(t, product)
	deploys := harness.RequestsTo(ns, "POST", "/admin/api/services/{service_id}/proxy/deploy.json")
	promotes := len(promotions(ns))

	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/proxy/deploy.json", Count: 1000, Lose: true})
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json", Count: 1000, Lose: true})
	harness.EditAndWait(t, product, func() {
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "POST", Pattern: "/orders$", MetricMethodRef: "hits", Increment: 1})
		product.Spec.Authentication.UserKey.CredentialsLocation = "query"
	})
	harness.StagingRuns(t, product, `"pattern":"/orders$"`, `"credentials_location":"query"`)
	after := productionOf(t, product)
	// (porta's proxy update deploys to staging by itself, and the deploy makes another version for the rule)
	if after.StagingVersion <= before.StagingVersion || after.ProductionVersion != after.StagingVersion {
		t.Errorf("after the change: %+v, want staging past %d and production on it", after, before.StagingVersion)
	}
	time.Sleep(3 * time.Second)
	if got := harness.RequestsTo(ns, "POST", "/admin/api/services/{service_id}/proxy/deploy.json") - deploys; got != 1 {
		t.Errorf("%d deploys sent for one change whose answers were all lost, want 1 (settled from staging)", got)
	}
	if got := len(promotions(ns)) - promotes; got != 1 {
		t.Errorf("%d promotions sent for one staging version, want 1 (settled from production)", got)
	}
	if harness.LostAnswers(ns) < 2 {
		t.Errorf("%d answers lost: the test did not lose the deploy's and the promotion's", harness.LostAnswers(ns))
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
}
