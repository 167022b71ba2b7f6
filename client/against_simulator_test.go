package client

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apimsync/apimsync/test/simulator"
)

// simTenant and simToken are the simulator's tenant for these tests.
const (
	simTenant = "acme"
	simToken  = "tok"
)

// simFixture is a simulator behind a real HTTP listener and a client of it that records the endpoints
// it calls.
type simFixture struct {
	sim    *simulator.Simulator
	url    string
	client *Client
	mu     sync.Mutex
	called map[string]bool // "METHOD endpoint template"
}

func newSimFixture(t *testing.T) *simFixture {
	t.Helper()
	f := &simFixture{sim: simulator.New(simulator.Options{Tenants: map[string]string{simTenant: simToken}}), called: map[string]bool{}}
	srv := httptest.NewServer(f.sim)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	c, err := New(Config{AdminURL: srv.URL, Token: simToken, QPS: 1e6, Burst: 1e6, Observer: func(ci CallInfo) {
		f.mu.Lock()
		f.called[ci.Method+" "+ci.Endpoint] = true
		f.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	return f
}

// counts returns the simulator's object counts of the tenant, by kind.
func (f *simFixture) counts() map[string]int {
	out := map[string]int{}
	for _, k := range []string{"services", "backend_apis", "metrics", "mapping_rules", "backend_usages", "application_plans", "limits",
		"pricing_rules", "deploys"} {
		out[k] = f.sim.Count(simTenant, k)
	}
	return out
}

func checkCounts(t *testing.T, f *simFixture, step string, want map[string]int) {
	t.Helper()
	if diff := cmp.Diff(want, f.counts()); diff != "" {
		t.Fatalf("%s: objects in the simulator (-want +got):\n%s", step, diff)
	}
}

// result is a call's value and error, to be checked in one expression: outcome(c.GetProduct(...)).must(t, "step").
type result[T any] struct {
	v   T
	err error
}

func outcome[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T, step string) T {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", step, r.err)
	}
	return r.v
}

func mustDo(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

func checkSame(t *testing.T, step string, want, got any, opts ...cmp.Option) {
	t.Helper()
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("%s (-want +got):\n%s", step, diff)
	}
}

// ignoreStamps leaves the simulator's timestamps out of comparisons.
var ignoreStamps = cmp.FilterPath(func(p cmp.Path) bool {
	name := p.Last().String()
	return name == ".CreatedAt" || name == ".UpdatedAt"
}, cmp.Ignore())

// TestClientFlowAgainstSimulator runs what the controllers do, with every client call, against the
// simulator over HTTP, checking the answers and the simulator's objects at each step.
func TestClientFlowAgainstSimulator(t *testing.T) {
	f := newSimFixture(t)
	c, ctx := f.client, context.Background()
	counts := map[string]int{"services": 0, "backend_apis": 0, "metrics": 0, "mapping_rules": 0, "backend_usages": 0, "application_plans": 0,
		"limits": 0, "pricing_rules": 0, "deploys": 0}
	checkCounts(t, f, "start", counts)

	// Backend with its hits metric.
	b := outcome(c.CreateBackend(ctx, BackendParams{Name: "Inventory", SystemName: "inventory", Description: ptrTo("stock"),
		PrivateEndpoint: "https://inventory.internal:8443"})).must(t, "create backend")
	checkSame(t, "created backend", &Backend{ID: b.ID, Name: "Inventory", SystemName: "inventory", Description: "stock",
		PrivateEndpoint: "https://inventory.internal:8443"}, b, ignoreStamps)
	counts["backend_apis"], counts["metrics"] = 1, 1
	checkCounts(t, f, "backend created", counts)
	b = outcome(c.UpdateBackend(ctx, b.ID, BackendParams{Name: "Inventory API", SystemName: "ignored", PrivateEndpoint: "https://inventory.internal:9443"})).must(t, "update backend")
	checkSame(t, "updated backend", &Backend{ID: b.ID, Name: "Inventory API", SystemName: "inventory", Description: "stock",
		PrivateEndpoint: "https://inventory.internal:9443"}, b, ignoreStamps)
	checkSame(t, "read backend", b, outcome(c.GetBackend(ctx, b.ID)).must(t, "get backend"), ignoreStamps)
	checkSame(t, "listed backends", []Backend{*b}, outcome(c.ListBackends(ctx)).must(t, "list backends"), ignoreStamps)

	// Backend metrics, methods and mapping rules.
	bs := BackendScope(b.ID)
	metrics := outcome(c.ListMetrics(ctx, bs)).must(t, "list backend metrics")
	if len(metrics) != 1 || metrics[0].SystemName != "hits" {
		t.Fatalf("backend metrics %+v, want hits only", metrics)
	}
	bHits := metrics[0]
	bytesMetric := outcome(c.CreateMetric(ctx, bs, MetricParams{SystemName: "bytes", FriendlyName: "Bytes", Unit: "byte", Description: "out"})).must(t, "create metric")
	checkSame(t, "created metric", &Metric{ID: bytesMetric.ID, Name: "bytes", SystemName: "bytes", FriendlyName: "Bytes", Unit: "byte", Description: "out"},
		bytesMetric, ignoreStamps)
	bytesMetric = outcome(c.UpdateMetric(ctx, bs, bytesMetric.ID, MetricParams{FriendlyName: "Bytes out", Unit: "kilobyte"})).must(t, "update metric")
	checkSame(t, "updated metric", &Metric{ID: bytesMetric.ID, Name: "bytes", SystemName: "bytes", FriendlyName: "Bytes out", Unit: "kilobyte"},
		bytesMetric, ignoreStamps)
	list := outcome(c.CreateMethod(ctx, bs, bHits.ID, MethodParams{SystemName: "list_items", FriendlyName: "List items"})).must(t, "create method")
	checkSame(t, "created method", &Metric{ID: list.ID, Name: "list_items", SystemName: "list_items", FriendlyName: "List items", Unit: "hit", ParentID: bHits.ID},
		list, ignoreStamps)
	list = outcome(c.UpdateMethod(ctx, bs, bHits.ID, list.ID, MethodParams{FriendlyName: "List all items", Description: "GET /items"})).must(t, "update method")
	checkSame(t, "updated method", &Metric{ID: list.ID, Name: "list_items", SystemName: "list_items", FriendlyName: "List all items",
		Unit: "hit", Description: "GET /items", ParentID: bHits.ID}, list, ignoreStamps)
	tmp := outcome(c.CreateMethod(ctx, bs, bHits.ID, MethodParams{SystemName: "tmp", FriendlyName: "Tmp"})).must(t, "create temporary method")
	checkSame(t, "methods of hits", []Metric{*list, *tmp}, outcome(c.ListMethods(ctx, bs, bHits.ID)).must(t, "list methods"), ignoreStamps)
	mustDo(t, "delete method", c.DeleteMethod(ctx, bs, bHits.ID, tmp.ID))
	checkSame(t, "metrics and methods of the backend", []int64{bHits.ID, bytesMetric.ID, list.ID},
		ids(outcome(c.ListMetrics(ctx, bs)).must(t, "list metrics"), func(m Metric) int64 { return m.ID }))
	counts["metrics"] = 3
	checkCounts(t, f, "backend metrics", counts)

	rule := outcome(c.CreateMappingRule(ctx, bs, MappingRuleParams{HTTPMethod: "GET", Pattern: "/items$", MetricID: list.ID, Delta: 1})).must(t, "create backend rule")
	checkSame(t, "created rule", &MappingRule{ID: rule.ID, MetricID: list.ID, Pattern: "/items$", HTTPMethod: "GET", Delta: 1, Position: rule.Position}, rule)
	rule = outcome(c.UpdateMappingRule(ctx, bs, rule.ID, MappingRuleParams{HTTPMethod: "GET", Pattern: "/items/{id}",
		MetricID: list.ID, Delta: 2, Position: 1, Last: ptrTo(true)})).must(t, "update backend rule (PUT)")
	checkSame(t, "updated rule", &MappingRule{ID: rule.ID, MetricID: list.ID, Pattern: "/items/{id}", HTTPMethod: "GET", Delta: 2, Position: 1, Last: true}, rule)
	other := outcome(c.CreateMappingRule(ctx, bs, MappingRuleParams{HTTPMethod: "POST", Pattern: "/items", MetricID: bytesMetric.ID, Delta: 5})).must(t, "create second rule")
	checkSame(t, "backend rules", []int64{rule.ID, other.ID}, ids(outcome(c.ListMappingRules(ctx, bs)).must(t, "list rules"), func(r MappingRule) int64 { return r.ID }))
	mustDo(t, "delete rule", c.DeleteMappingRule(ctx, bs, other.ID))
	counts["mapping_rules"] = 1
	checkCounts(t, f, "backend rules", counts)

	// Product.
	p := outcome(c.CreateProduct(ctx, ProductParams{Name: "Shop", SystemName: "shop", Description: ptrTo("the shop"),
		DeploymentOption: "self_managed", BackendVersion: "2"})).must(t, "create product")
	checkSame(t, "created product", &Product{ID: p.ID, Name: "Shop", SystemName: "shop", Description: "the shop", State: "incomplete",
		DeploymentOption: "self_managed", BackendVersion: "2"}, p, ignoreStamps)
	// Porta gives a new service its hits metric and the default mapping rule GET / on it.
	counts["services"], counts["metrics"], counts["mapping_rules"] = 1, 4, 2
	checkCounts(t, f, "product created", counts)
	p = outcome(c.UpdateProduct(ctx, p.ID, ProductParams{Name: "Shop API", SystemName: "ignored", Description: ptrTo("")})).must(t, "update product")
	checkSame(t, "updated product", &Product{ID: p.ID, Name: "Shop API", SystemName: "shop", State: "incomplete", DeploymentOption: "self_managed",
		BackendVersion: "2"}, p, ignoreStamps)
	checkSame(t, "read product", p, outcome(c.GetProduct(ctx, p.ID)).must(t, "get product"), ignoreStamps)
	checkSame(t, "listed products", []Product{*p}, outcome(c.ListProducts(ctx)).must(t, "list products"), ignoreStamps)

	ps := ProductScope(p.ID)
	pHits := outcome(c.ListMetrics(ctx, ps)).must(t, "list product metrics")[0]
	defaults := outcome(c.ListMappingRules(ctx, ps)).must(t, "list the new product's rules")
	if len(defaults) != 1 || defaults[0].Pattern != "/" || defaults[0].HTTPMethod != "GET" || defaults[0].MetricID != pHits.ID {
		t.Fatalf("a new product's rules: %+v, want porta's default GET / on hits", defaults)
	}
	mustDo(t, "delete the default rule", c.DeleteMappingRule(ctx, ps, defaults[0].ID))
	orders := outcome(c.CreateMetric(ctx, ps, MetricParams{SystemName: "orders", FriendlyName: "Orders", Unit: "order"})).must(t, "create product metric")
	checkout := outcome(c.CreateMethod(ctx, ps, pHits.ID, MethodParams{SystemName: "checkout", FriendlyName: "Checkout"})).must(t, "create product method")
	checkout = outcome(c.UpdateMethod(ctx, ps, pHits.ID, checkout.ID, MethodParams{FriendlyName: "Check out"})).must(t, "update product method")
	checkSame(t, "product methods", []Metric{*checkout}, outcome(c.ListMethods(ctx, ps, pHits.ID)).must(t, "list product methods"), ignoreStamps)
	orders = outcome(c.UpdateMetric(ctx, ps, orders.ID, MetricParams{FriendlyName: "Orders placed", Unit: "order"})).must(t, "update product metric")
	pRule := outcome(c.CreateMappingRule(ctx, ps, MappingRuleParams{HTTPMethod: "POST", Pattern: "/checkout$", MetricID: checkout.ID, Delta: 1})).must(t, "create product rule")
	pRule = outcome(c.UpdateMappingRule(ctx, ps, pRule.ID, MappingRuleParams{HTTPMethod: "POST", Pattern: "/checkout$",
		MetricID: checkout.ID, Delta: 3})).must(t, "update product rule (PATCH)")
	checkSame(t, "product rules", []MappingRule{*pRule}, outcome(c.ListMappingRules(ctx, ps)).must(t, "list product rules"))
	if pRule.Delta != 3 {
		t.Errorf("product rule delta %d, want 3", pRule.Delta)
	}
	spareRule := outcome(c.CreateMappingRule(ctx, ps, MappingRuleParams{HTTPMethod: "GET", Pattern: "/orders", MetricID: orders.ID, Delta: 1})).must(t, "create spare product rule")
	mustDo(t, "delete product rule", c.DeleteMappingRule(ctx, ps, spareRule.ID))
	refund := outcome(c.CreateMethod(ctx, ps, pHits.ID, MethodParams{SystemName: "refund", FriendlyName: "Refund"})).must(t, "create spare product method")
	mustDo(t, "delete product method", c.DeleteMethod(ctx, ps, pHits.ID, refund.ID))
	counts["metrics"], counts["mapping_rules"] = 6, 2
	checkCounts(t, f, "product children", counts)

	// Proxy, deploy, OIDC and policies.
	proxy := outcome(c.GetProxy(ctx, p.ID)).must(t, "get proxy")
	if proxy.ServiceID != p.ID || proxy.CredentialsLocation != "query" || proxy.ErrorStatusNoMatch != 404 {
		t.Errorf("default proxy %+v", proxy)
	}
	proxy = outcome(c.UpdateProxy(ctx, p.ID, ProxyParams{"endpoint": "https://shop.example.com:443", "sandbox_endpoint": "https://shop-staging.example.com:443",
		"credentials_location": "headers", "auth_app_id": "client", "auth_app_key": "secret", "hostname_rewrite": "shop.internal", "secret_token": "s3cret",
		"error_status_auth_failed": "401", "error_headers_auth_failed": "application/json", "error_auth_failed": `{"error":"auth"}`})).must(t, "update proxy")
	checkSame(t, "updated proxy", Proxy{ServiceID: p.ID, Endpoint: "https://shop.example.com:443", SandboxEndpoint: "https://shop-staging.example.com:443",
		CredentialsLocation: "headers", AuthAppID: "client", AuthAppKey: "secret", HostnameRewrite: "shop.internal", SecretToken: "s3cret",
		ErrorStatusAuthFailed: 401, ErrorHeadersAuthFailed: "application/json", ErrorAuthFailed: `{"error":"auth"}`},
		Proxy{ServiceID: proxy.ServiceID, Endpoint: proxy.Endpoint, SandboxEndpoint: proxy.SandboxEndpoint, CredentialsLocation: proxy.CredentialsLocation,
			AuthAppID: proxy.AuthAppID, AuthAppKey: proxy.AuthAppKey, HostnameRewrite: proxy.HostnameRewrite, SecretToken: proxy.SecretToken,
			ErrorStatusAuthFailed: proxy.ErrorStatusAuthFailed, ErrorHeadersAuthFailed: proxy.ErrorHeadersAuthFailed, ErrorAuthFailed: proxy.ErrorAuthFailed})
	checkSame(t, "proxy read back", proxy, outcome(c.GetProxy(ctx, p.ID)).must(t, "get proxy again"))
	mustDo(t, "deploy", c.DeployProxy(ctx, p.ID))
	counts["deploys"] = 1
	checkCounts(t, f, "deployed", counts)

	p = outcome(c.UpdateProduct(ctx, p.ID, ProductParams{BackendVersion: "oidc"})).must(t, "switch to OIDC")
	if p.BackendVersion != "oidc" || p.Name != "Shop API" {
		t.Errorf("product after the switch to OIDC: %+v", p)
	}
	proxy = outcome(c.UpdateProxy(ctx, p.ID, ProxyParams{"oidc_issuer_endpoint": "https://sso.example.com/auth/realms/acme",
		"oidc_issuer_type": "keycloak", "jwt_claim_with_client_id": "azp", "jwt_claim_with_client_id_type": "plain"})).must(t, "set the issuer")
	if proxy.OIDCIssuerEndpoint != "https://sso.example.com/auth/realms/acme" || proxy.JWTClaimWithClientID != "azp" || proxy.SecretToken != "s3cret" {
		t.Errorf("proxy after the issuer: %+v", proxy)
	}
	// porta's Proxy#oidc_configuration builds one with standard_flow_enabled: true.
	checkSame(t, "default OIDC flows", &OIDCConfiguration{StandardFlowEnabled: true}, outcome(c.GetOIDCConfiguration(ctx, p.ID)).must(t, "get OIDC"))
	flows := OIDCConfiguration{StandardFlowEnabled: true, ServiceAccountsEnabled: true}
	checkSame(t, "updated OIDC flows", &flows, outcome(c.UpdateOIDCConfiguration(ctx, p.ID, flows)).must(t, "update OIDC"))
	flows = OIDCConfiguration{ServiceAccountsEnabled: true}
	outcome(c.UpdateOIDCConfiguration(ctx, p.ID, flows)).must(t, "turn a flow off")
	checkSame(t, "OIDC flows read back", &flows, outcome(c.GetOIDCConfiguration(ctx, p.ID)).must(t, "get OIDC again"))

	checkSame(t, "default policy chain", []Policy{{Name: "apicast", Version: "builtin", Configuration: json.RawMessage(`{}`), Enabled: true}},
		outcome(c.GetPolicies(ctx, p.ID)).must(t, "get policies"), cmp.Transformer("compactJSON", compactJSON))
	chain := []Policy{{Name: "cors", Version: "builtin", Configuration: json.RawMessage(`{"allow_origin":"*"}`), Enabled: true},
		{Name: "apicast", Version: "builtin", Enabled: true}}
	wantChain := []Policy{chain[0], {Name: "apicast", Version: "builtin", Configuration: json.RawMessage(`{}`), Enabled: true}}
	checkSame(t, "updated policy chain", wantChain, outcome(c.UpdatePolicies(ctx, p.ID, chain)).must(t, "update policies"), cmp.Transformer("compactJSON", compactJSON))
	checkSame(t, "policy chain read back", wantChain, outcome(c.GetPolicies(ctx, p.ID)).must(t, "get policies again"), cmp.Transformer("compactJSON", compactJSON))

	// Backend usages.
	u := outcome(c.CreateBackendUsage(ctx, p.ID, BackendUsageParams{BackendAPIID: b.ID, Path: "/inventory"})).must(t, "use the backend")
	checkSame(t, "created usage", &BackendUsage{ID: u.ID, Path: "/inventory", ServiceID: p.ID, BackendID: b.ID}, u)
	u = outcome(c.UpdateBackendUsage(ctx, p.ID, u.ID, BackendUsageParams{Path: "/stock"})).must(t, "move the usage")
	checkSame(t, "updated usage", &BackendUsage{ID: u.ID, Path: "/stock", ServiceID: p.ID, BackendID: b.ID}, u)
	billing := outcome(c.CreateBackend(ctx, BackendParams{Name: "Billing", PrivateEndpoint: "https://billing.internal"})).must(t, "create a second backend")
	if billing.SystemName != "billing" {
		t.Errorf("derived system name %q, want billing", billing.SystemName)
	}
	u2 := outcome(c.CreateBackendUsage(ctx, p.ID, BackendUsageParams{BackendAPIID: billing.ID, Path: "/billing"})).must(t, "use it")
	checkSame(t, "usages", []BackendUsage{*u, *u2}, outcome(c.ListBackendUsages(ctx, p.ID)).must(t, "list usages"))
	mustDo(t, "stop using it", c.DeleteBackendUsage(ctx, p.ID, u2.ID))
	mustDo(t, "delete the second backend", c.DeleteBackend(ctx, billing.ID))
	checkSame(t, "usages after the delete", []BackendUsage{*u}, outcome(c.ListBackendUsages(ctx, p.ID)).must(t, "list usages again"))
	counts["backend_usages"] = 1
	checkCounts(t, f, "usages", counts)

	// Plans, published; limits; pricing rules.
	plan := outcome(c.CreatePlan(ctx, p.ID, PlanParams{Name: "Basic", SystemName: "basic", ApprovalRequired: ptrTo(true),
		TrialPeriodDays: ptrTo(int64(7)), SetupFee: "10.5", CostPerMonth: "20"})).must(t, "create plan")
	// Porta answers fees as Ruby writes a Float: 20 comes back as 20.0 (PlanRepresenter, plan_representer.rb:21-27).
	checkSame(t, "created plan", &ApplicationPlan{ID: plan.ID, Name: "Basic", SystemName: "basic", State: "hidden", ApprovalRequired: true,
		TrialPeriodDays: 7, SetupFee: "10.5", CostPerMonth: "20.0", ServiceID: p.ID}, plan)
	plan = outcome(c.UpdatePlan(ctx, p.ID, plan.ID, PlanParams{SystemName: "ignored", StateEvent: "publish", CostPerMonth: "25",
		ApprovalRequired: ptrTo(false)})).must(t, "publish plan")
	checkSame(t, "published plan", &ApplicationPlan{ID: plan.ID, Name: "Basic", SystemName: "basic", State: "published", TrialPeriodDays: 7,
		SetupFee: "10.5", CostPerMonth: "25.0", ServiceID: p.ID}, plan)
	checkSame(t, "read plan", plan, outcome(c.GetPlan(ctx, p.ID, plan.ID)).must(t, "get plan"))
	spare := outcome(c.CreatePlan(ctx, p.ID, PlanParams{Name: "Spare Plan"})).must(t, "create a second plan")
	if spare.SystemName != "spare_plan" {
		t.Errorf("derived plan system name %q, want spare_plan", spare.SystemName)
	}
	checkSame(t, "plans", []int64{plan.ID, spare.ID}, ids(outcome(c.ListPlans(ctx, p.ID)).must(t, "list plans"), func(p ApplicationPlan) int64 { return p.ID }))
	checkSame(t, "all plans", []int64{plan.ID, spare.ID}, ids(outcome(c.ListAllPlans(ctx)).must(t, "list all plans"), func(p ApplicationPlan) int64 { return p.ID }))
	// One default plan per product (service.default_application_plan): making the spare one default
	// makes the first one not.
	spare = outcome(c.SetDefaultPlan(ctx, p.ID, spare.ID)).must(t, "make the second plan the default")
	if first := outcome(c.GetPlan(ctx, p.ID, plan.ID)).must(t, "get plan"); !spare.Default || first.Default {
		t.Errorf("after making the spare plan default: spare default %v, first default %v; want true, false", spare.Default, first.Default)
	}
	mustDo(t, "delete the second plan", c.DeletePlan(ctx, p.ID, spare.ID))
	counts["application_plans"] = 1
	checkCounts(t, f, "plans", counts)

	daily := outcome(c.CreateLimit(ctx, plan.ID, pHits.ID, LimitParams{Period: "day", Value: 1000})).must(t, "limit product hits")
	checkSame(t, "created limit", &Limit{ID: daily.ID, MetricID: pHits.ID, PlanID: plan.ID, Period: "day", Value: 1000}, daily)
	blocked := outcome(c.CreateLimit(ctx, plan.ID, bytesMetric.ID, LimitParams{Period: "eternity", Value: 0})).must(t, "block a backend metric")
	checkSame(t, "zero limit", &Limit{ID: blocked.ID, MetricID: bytesMetric.ID, PlanID: plan.ID, Period: "eternity", Value: 0}, blocked)
	daily = outcome(c.UpdateLimit(ctx, plan.ID, pHits.ID, daily.ID, LimitParams{Period: "day", Value: 2000})).must(t, "raise the limit")
	checkSame(t, "limits", []Limit{*daily, *blocked}, outcome(c.ListLimits(ctx, plan.ID)).must(t, "list limits"))
	monthly := outcome(c.CreateLimit(ctx, plan.ID, pHits.ID, LimitParams{Period: "month", Value: 50000})).must(t, "limit per month")
	mustDo(t, "delete limit", c.DeleteLimit(ctx, plan.ID, pHits.ID, monthly.ID))
	counts["limits"] = 2
	checkCounts(t, f, "limits", counts)

	first := outcome(c.CreatePricingRule(ctx, plan.ID, checkout.ID, PricingRuleParams{Min: 1, Max: 100, CostPerUnit: "0.5"})).must(t, "price checkouts")
	checkSame(t, "created pricing rule", &PricingRule{ID: first.ID, MetricID: checkout.ID, PlanID: plan.ID, Min: 1, Max: 100, CostPerUnit: "0.5"}, first)
	second := outcome(c.CreatePricingRule(ctx, plan.ID, checkout.ID, PricingRuleParams{Min: 101, Max: 1000, CostPerUnit: "0.25"})).must(t, "price more checkouts")
	checkSame(t, "pricing rules", []PricingRule{*first, *second}, outcome(c.ListPricingRules(ctx, plan.ID)).must(t, "list pricing rules"))
	mustDo(t, "delete pricing rule", c.DeletePricingRule(ctx, plan.ID, checkout.ID, second.ID))
	counts["pricing_rules"] = 1
	checkCounts(t, f, "pricing", counts)

	// Features: the product's, enabled on the plan; enabling again is success (porta's 409).
	gold := outcome(c.CreateProductFeature(ctx, p.ID, FeatureParams{Name: "Gold", SystemName: "gold", Description: "24/7",
		Scope: FeatureScopeApplicationPlan})).must(t, "create feature")
	checkSame(t, "created feature", &Feature{ID: gold.ID, Name: "Gold", SystemName: "gold", Description: "24/7", Scope: "application_plan", Visible: true}, gold)
	gold = outcome(c.UpdateProductFeature(ctx, p.ID, gold.ID, FeatureParams{Name: "Gold support", SystemName: "gold"})).must(t, "update feature")
	checkSame(t, "features", []Feature{*gold}, outcome(c.ListProductFeatures(ctx, p.ID)).must(t, "list features"))
	mustDo(t, "enable feature", c.EnablePlanFeature(ctx, ApplicationPlans, plan.ID, gold.ID))
	mustDo(t, "enable feature again", c.EnablePlanFeature(ctx, ApplicationPlans, plan.ID, gold.ID))
	checkSame(t, "plan features", []Feature{*gold}, outcome(c.ListPlanFeatures(ctx, ApplicationPlans, plan.ID)).must(t, "list plan features"))
	mustDo(t, "disable feature", c.DisablePlanFeature(ctx, ApplicationPlans, plan.ID, gold.ID))
	if err := c.DisablePlanFeature(ctx, ApplicationPlans, plan.ID, gold.ID); !IsNotFound(err) {
		t.Errorf("disabling a feature not enabled: %v, want not found", err)
	}
	mustDo(t, "delete feature", c.DeleteProductFeature(ctx, p.ID, gold.ID))

	// A used backend cannot be deleted.
	err := c.DeleteBackend(ctx, b.ID)
	if !IsInUse(err) || IsForbidden(err) {
		t.Errorf("deleting a used backend: %v; want in use (IsInUse true, IsForbidden false)", err)
	}
	checkCounts(t, f, "refused backend delete", counts)

	// Proxy config versions, deployed and promoted; the policy registry, and the chain that uses it.
	counts["deploys"] += proxyConfigFlow(t, f, p.ID, pHits.ID)
	checkCounts(t, f, "proxy configs", counts)
	registryFlow(t, f, p.ID)

	// Developer accounts, users, applications (on the OIDC product: an app id, one key at most) and
	// ActiveDocs, as porta treats them: strong passwords (15 characters), keys of 5 characters at least,
	// state events refused from a state that does not allow them.
	mustDo(t, "probe credentials", c.ProbeCredentials(ctx))
	if _, err := c.Signup(ctx, SignupParams{OrgName: "Weak", Username: "weak", Password: "pw"}); !IsInvalid(err) || !strings.Contains(err.Error(), "password") {
		t.Errorf("signing up with a weak password: %v, want porta's 422 on password", err)
	}
	// Signed up without a password, the account is "created" and its admin pending until activated.
	acc := outcome(c.Signup(ctx, SignupParams{OrgName: "ACME", Username: "alice", Email: "alice@acme.example"})).must(t, "signup")
	if acc.State != "created" || !acc.MonthlyBillingEnabled || !acc.MonthlyChargingEnabled {
		t.Errorf("signed-up account %+v, want created, billing and charging on", acc)
	}
	checkSame(t, "found account", acc, outcome(c.FindAccountByUsername(ctx, "alice")).must(t, "find account"))
	if _, err := c.FindAccountByUsername(ctx, "nobody"); !IsNotFound(err) {
		t.Errorf("finding an unknown username: %v, want not found", err)
	}
	acc = outcome(c.UpdateAccount(ctx, acc.ID, AccountParams{OrgName: "ACME Corp", MonthlyBillingEnabled: ptrTo(false)})).must(t, "update account")
	checkSame(t, "read account", acc, outcome(c.GetAccount(ctx, acc.ID)).must(t, "get account"))
	if all := outcome(c.ListAccounts(ctx)).must(t, "list accounts"); !slices.ContainsFunc(all, func(a Account) bool { return a.ID == acc.ID && a.OrgName == acc.OrgName }) {
		t.Errorf("the accounts listed %+v do not hold %+v", all, acc)
	}
	acc = outcome(c.ApproveAccount(ctx, acc.ID)).must(t, "approve account")
	if acc.State != "approved" {
		t.Errorf("approved account %+v", acc)
	}
	if _, err := c.ApproveAccount(ctx, acc.ID); !IsInvalid(err) {
		t.Errorf("approving an approved account: %v, want porta's 422", err)
	}
	// Field definitions: the tenant's built-in ones (porta's create_defaults!), an extra account field
	// with choices, the account's value of it; porta keeps a required built-in field (a 200 that deletes
	// nothing, fields_definition.rb avoid_destroy_required_field_on_target).
	defs := outcome(c.ListFieldDefinitions(ctx)).must(t, "list field definitions")
	if !slices.ContainsFunc(defs, func(f FieldDefinition) bool { return f.Target == "Account" && f.Name == "org_name" && f.Required }) {
		t.Errorf("a new tenant's field definitions %+v, want Account org_name, required", defs)
	}
	tier := outcome(c.CreateFieldDefinition(ctx, FieldDefinitionParams{Target: "Account", Name: "tier", Label: "Tier", Choices: []string{"gold", "silver"}})).must(t, "create field definition")
	tier = outcome(c.UpdateFieldDefinition(ctx, tier.ID, FieldDefinitionParams{Target: "Account", Label: "Partner tier", Choices: []string{"gold", "silver", "bronze"}})).must(t, "update field definition")
	checkSame(t, "field definition", tier, outcome(c.GetFieldDefinition(ctx, tier.ID)).must(t, "get field definition"))
	outcome(c.UpdateAccount(ctx, acc.ID, AccountParams{Fields: map[string]string{"tier": "bronze"}})).must(t, "set the account's tier")
	if got := outcome(c.GetAccount(ctx, acc.ID)).must(t, "read the account").Fields["tier"]; got != "bronze" {
		t.Errorf("the account's tier %q, want bronze", got)
	}
	orgName := defs[slices.IndexFunc(defs, func(f FieldDefinition) bool { return f.Target == "Account" && f.Name == "org_name" })]
	mustDo(t, "delete a required built-in field (porta keeps it)", c.DeleteFieldDefinition(ctx, orgName.ID))
	outcome(c.GetFieldDefinition(ctx, orgName.ID)).must(t, "org_name is still there")
	mustDo(t, "delete the field definition", c.DeleteFieldDefinition(ctx, tier.ID))

	// The tenant's own settings: its details (an empty finance email shows the support email,
	// account.rb:520-522) and its webhook, which porta only writes.
	support, empty := "help@acme.example", ""
	provider := outcome(c.UpdateProvider(ctx, ProviderParams{SupportEmail: &support, FinanceSupportEmail: &empty})).must(t, "update the provider account")
	if provider.SupportEmail != support || provider.FinanceSupportEmail != support {
		t.Errorf("the provider account %+v, want support %s and the finance email falling back to it", provider, support)
	}
	checkSame(t, "provider account", provider, outcome(c.GetProvider(ctx)).must(t, "read the provider account"))
	mustDo(t, "write the webhook", c.UpdateWebhooks(ctx, WebhookParams{URL: "https://hooks.acme.example/3scale", Active: true, Events: []string{"account_created"}}))

	// The tenant's own users: made pending as a member, activated, given permissions on the product,
	// suspended, renamed, deleted; the tenant's first admin is there from its creation.
	lead := outcome(c.CreateAdminUser(ctx, UserParams{Username: "lead", Email: "lead@acme.example", Password: "a-long-enough-password"})).must(t, "create a tenant's user")
	if lead.State != "pending" || lead.Role != "member" {
		t.Errorf("the new user %+v, want a pending member", lead)
	}
	lead = outcome(c.ChangeAdminUser(ctx, lead.ID, UserActivate)).must(t, "activate the user")
	perms := outcome(c.SetAdminUserPermissions(ctx, lead.ID, []string{"plans", "partners"}, false, []int64{p.ID})).must(t, "set the user's permissions")
	if !slices.Equal(perms.AllowedSections, []string{"partners", "plans"}) || !slices.Equal(perms.AllowedServiceIDs, []int64{p.ID}) {
		t.Errorf("permissions %+v, want partners and plans of product %d", perms, p.ID)
	}
	checkSame(t, "permissions", perms, outcome(c.GetAdminUserPermissions(ctx, lead.ID)).must(t, "read the permissions"))
	lead = outcome(c.ChangeAdminUser(ctx, lead.ID, UserSuspend)).must(t, "suspend the user")
	lead = outcome(c.UpdateAdminUser(ctx, lead.ID, UserParams{Email: "lead2@acme.example"})).must(t, "update the user")
	checkSame(t, "user", lead, outcome(c.GetAdminUser(ctx, lead.ID)).must(t, "read the user"))
	if users := outcome(c.ListAdminUsers(ctx)).must(t, "list the tenant's users"); len(users) != 2 || users[0].Username != "admin" || users[0].Role != "admin" {
		t.Errorf("the tenant's users %+v, want its first admin and lead", users)
	}
	mustDo(t, "delete the user", c.DeleteAdminUser(ctx, lead.ID))

	// The admin portal's single sign-on.
	adminSSO := outcome(c.CreateAdminAuthenticationProvider(ctx, everyAdminProviderField())).must(t, "create an admin-portal provider")
	adminSSO = outcome(c.UpdateAdminAuthenticationProvider(ctx, adminSSO.ID, AuthenticationProviderParams{Published: ptrTo(false)})).must(t, "unpublish it")
	if all := outcome(c.ListAdminAuthenticationProviders(ctx)).must(t, "list admin-portal providers"); len(all) != 1 || all[0].Published || all[0].ID != adminSSO.ID || adminSSO.Published {
		t.Errorf("the admin portal's providers %+v, want corp-sso (%d) unpublished", all, adminSSO.ID)
	}

	// Account plans: the tenant's seeded "Default" one, a new one made default, the account moved to it;
	// porta refuses to delete a plan an account is on (plan.rb:174-186).
	seeded := outcome(c.ListAccountPlans(ctx)).must(t, "list account plans")
	if len(seeded) != 1 || seeded[0].Name != "Default" || !seeded[0].Default {
		t.Errorf("a new tenant's account plans %+v, want its default \"Default\"", seeded)
	}
	partners := outcome(c.CreateAccountPlan(ctx, AccountPlanParams{Name: "Partners", SystemName: "partners", StateEvent: "publish"})).must(t, "create account plan")
	partners = outcome(c.UpdateAccountPlan(ctx, partners.ID, AccountPlanParams{ApprovalRequired: ptrTo(true)})).must(t, "update account plan")
	checkSame(t, "account plan", &AccountPlan{ID: partners.ID, Name: "Partners", State: "published", ApprovalRequired: true},
		outcome(c.GetAccountPlan(ctx, partners.ID)).must(t, "get account plan"))
	if made := outcome(c.SetDefaultAccountPlan(ctx, partners.ID)).must(t, "make the account plan default"); !made.Default {
		t.Errorf("the default account plan says default %v", made.Default)
	}
	if on := outcome(c.ChangeAccountPlan(ctx, acc.ID, partners.ID)).must(t, "move the account"); on.ID != partners.ID {
		t.Errorf("the account moved to plan %d, want %d", on.ID, partners.ID)
	}
	checkSame(t, "the account's plan", partners.ID, outcome(c.AccountPlanOf(ctx, acc.ID)).must(t, "read the account's plan").ID)
	// Account features: the tenant's, enabled on an account plan; a feature of a product's cannot be.
	listed := outcome(c.CreateAccountFeature(ctx, FeatureParams{Name: "Listed", SystemName: "listed"})).must(t, "create account feature")
	checkSame(t, "account feature", &Feature{ID: listed.ID, Name: "Listed", SystemName: "listed", Scope: "account_plan", Visible: true}, listed)
	listed = outcome(c.UpdateAccountFeature(ctx, listed.ID, FeatureParams{Name: "Listed", SystemName: "listed", Description: "In the directory"})).must(t, "update account feature")
	checkSame(t, "account features", []Feature{*listed}, outcome(c.ListAccountFeatures(ctx)).must(t, "list account features"))
	mustDo(t, "enable account feature", c.EnablePlanFeature(ctx, AccountPlans, partners.ID, listed.ID))
	checkSame(t, "account plan features", []Feature{*listed}, outcome(c.ListPlanFeatures(ctx, AccountPlans, partners.ID)).must(t, "list account plan features"))
	if err := c.EnablePlanFeature(ctx, AccountPlans, partners.ID, gold.ID); !IsNotFound(err) {
		t.Errorf("enabling a product's feature on an account plan: %v, want not found (another issuer's)", err)
	}
	mustDo(t, "disable account feature", c.DisablePlanFeature(ctx, AccountPlans, partners.ID, listed.ID))
	mustDo(t, "delete account feature", c.DeleteAccountFeature(ctx, listed.ID))
	if err := c.DeleteAccountPlan(ctx, partners.ID); !IsInUse(err) {
		t.Errorf("deleting an account plan an account is on: %v, want porta's 403", err)
	}
	outcome(c.ChangeAccountPlan(ctx, acc.ID, seeded[0].ID)).must(t, "move the account back")

	// Service plans: the product's seeded "Default" one, a new one made default; an account subscribed
	// keeps it from being deleted until it unsubscribes.
	svcPlans := outcome(c.ListServicePlans(ctx, p.ID)).must(t, "list service plans")
	if len(svcPlans) != 1 || svcPlans[0].Name != "Default" || svcPlans[0].ServiceID != p.ID {
		t.Errorf("a new product's service plans %+v, want its \"Default\"", svcPlans)
	}
	goldPlan := outcome(c.CreateServicePlan(ctx, p.ID, ServicePlanParams{Name: "Gold", SystemName: "goldPlan"})).must(t, "create service plan")
	goldPlan = outcome(c.UpdateServicePlan(ctx, p.ID, goldPlan.ID, ServicePlanParams{StateEvent: "publish"})).must(t, "publish service plan")
	checkSame(t, "service plan", &ServicePlan{ID: goldPlan.ID, Name: "Gold", State: "published", ServiceID: p.ID},
		outcome(c.GetServicePlan(ctx, p.ID, goldPlan.ID)).must(t, "get service plan"))
	if made := outcome(c.SetDefaultServicePlan(ctx, p.ID, goldPlan.ID)).must(t, "make the service plan default"); !made.Default {
		t.Errorf("the default service plan says default %v", made.Default)
	}
	// Service plan features: the product's of scope ServicePlan only (features_plan.rb:23-29).
	portal := outcome(c.CreateProductFeature(ctx, p.ID, FeatureParams{Name: "Portal", SystemName: "portal", Scope: FeatureScopeServicePlan})).must(t, "create service plan feature")
	mustDo(t, "enable service plan feature", c.EnablePlanFeature(ctx, ServicePlans, goldPlan.ID, portal.ID))
	checkSame(t, "service plan features", []Feature{*portal}, outcome(c.ListPlanFeatures(ctx, ServicePlans, goldPlan.ID)).must(t, "list service plan features"))
	appScoped := outcome(c.CreateProductFeature(ctx, p.ID, FeatureParams{Name: "Apps", SystemName: "apps", Scope: FeatureScopeApplicationPlan})).must(t, "create application plan feature")
	if err := c.EnablePlanFeature(ctx, ServicePlans, goldPlan.ID, appScoped.ID); !IsInvalid(err) {
		t.Errorf("enabling an ApplicationPlan feature on a service plan: %v, want porta's 422", err)
	}
	mustDo(t, "disable service plan feature", c.DisablePlanFeature(ctx, ServicePlans, goldPlan.ID, portal.ID))
	// Subscriptions: pending while the plan requires approval, approved, moved between the product's plans.
	basic := outcome(c.CreateServicePlan(ctx, p.ID, ServicePlanParams{Name: "Basic", ApprovalRequired: ptrTo(true)})).must(t, "create a service plan that requires approval")
	pending := outcome(c.Subscribe(ctx, acc.ID, basic.ID)).must(t, "subscribe to a plan that requires approval")
	if pending.State != "pending" {
		t.Errorf("a subscription to a plan that requires approval is %q, want pending", pending.State)
	}
	approved := outcome(c.ApproveSubscription(ctx, acc.ID, pending.ID)).must(t, "approve the subscription")
	checkSame(t, "subscriptions", []ServiceSubscription{*approved}, outcome(c.ListSubscriptions(ctx, acc.ID)).must(t, "list subscriptions"))
	mustDo(t, "change the subscription's plan", c.ChangeSubscriptionPlan(ctx, acc.ID, pending.ID, goldPlan.ID))
	if subs := outcome(c.ListSubscriptions(ctx, acc.ID)).must(t, "list subscriptions"); len(subs) != 1 || subs[0].PlanID != goldPlan.ID {
		t.Errorf("subscriptions after the plan change %+v, want one on plan %d", subs, goldPlan.ID)
	}
	mustDo(t, "unsubscribe", c.Unsubscribe(ctx, acc.ID, pending.ID))
	mustDo(t, "delete the service plan that required approval", c.DeleteServicePlan(ctx, p.ID, basic.ID))
	if all := outcome(c.ListAllServicePlans(ctx)).must(t, "list every product's service plans"); !slices.ContainsFunc(all, func(x ServicePlan) bool { return x.ID == goldPlan.ID && x.ServiceID == p.ID }) {
		t.Errorf("every product's service plans %+v, want Gold of product %d among them", all, p.ID)
	}
	subscription := outcome(c.Subscribe(ctx, acc.ID, goldPlan.ID)).must(t, "subscribe")
	if err := c.DeleteServicePlan(ctx, p.ID, goldPlan.ID); !IsInUse(err) {
		t.Errorf("deleting a service plan an account subscribes to: %v, want porta's 403", err)
	}
	mustDo(t, "unsubscribe", c.Unsubscribe(ctx, acc.ID, subscription.ID))
	mustDo(t, "delete the service plan", c.DeleteServicePlan(ctx, p.ID, goldPlan.ID))
	mustDo(t, "delete the account plan", c.DeleteAccountPlan(ctx, partners.ID))

	users := outcome(c.ListUsers(ctx, acc.ID)).must(t, "list users")
	if len(users) != 1 || users[0].Username != "alice" || users[0].Role != "admin" || users[0].State != "pending" {
		t.Fatalf("users of the signed-up account %+v, want alice, a pending admin", users)
	}
	alice := outcome(c.ActivateUser(ctx, acc.ID, users[0].ID)).must(t, "activate admin")
	bob := outcome(c.CreateUser(ctx, acc.ID, UserParams{Username: "bob", Email: "bob@acme.example", Password: "a-long-enough-password"})).must(t, "create user")
	if bob.State != "pending" || bob.Role != "member" {
		t.Errorf("created user %+v, want a pending member", bob)
	}
	bob = outcome(c.UpdateUser(ctx, acc.ID, bob.ID, UserParams{Email: "b@acme.example"})).must(t, "update user")
	bob = outcome(c.ActivateUser(ctx, acc.ID, bob.ID)).must(t, "activate user")
	if _, err := c.UnsuspendUser(ctx, acc.ID, bob.ID); !IsInvalid(err) {
		t.Errorf("unsuspending an active user: %v, want porta's 422", err)
	}
	if bob = outcome(c.SuspendUser(ctx, acc.ID, bob.ID)).must(t, "suspend user"); bob.State != "suspended" {
		t.Errorf("suspended user is %s", bob.State)
	}
	if bob = outcome(c.UnsuspendUser(ctx, acc.ID, bob.ID)).must(t, "unsuspend user"); bob.State != "active" {
		t.Errorf("unsuspended user is %s", bob.State)
	}
	if _, err := c.SetUserRole(ctx, acc.ID, alice.ID, "member"); !IsForbidden(err) {
		t.Errorf("making the only admin a member: %v, want porta's 403", err)
	}
	bob = outcome(c.SetUserRole(ctx, acc.ID, bob.ID, "admin")).must(t, "make admin")
	bob = outcome(c.SetUserRole(ctx, acc.ID, bob.ID, "member")).must(t, "make member")
	if bob.Role != "member" || bob.State != "active" || bob.Email != "b@acme.example" {
		t.Errorf("user %+v", bob)
	}
	if users := outcome(c.ListUsers(ctx, acc.ID)).must(t, "list users"); len(users) != 2 {
		t.Errorf("users %+v, want alice and bob", users)
	}
	if users := outcome(c.UsersOfAccount(ctx, acc.ID)).must(t, "users from the account's XML"); len(users) != 2 || users[0] != *alice || users[1] != *bob {
		t.Errorf("users from the account's XML %+v, want %+v and %+v", users, *alice, *bob)
	}
	if err := c.DeleteUser(ctx, acc.ID, alice.ID); !IsInUse(err) || !strings.Contains(err.Error(), "Can't delete last admin") {
		t.Errorf("deleting the last admin: %v, want porta's refusal", err)
	}
	mustDo(t, "delete user", c.DeleteUser(ctx, acc.ID, bob.ID))
	if _, err := c.CreateApplication(ctx, acc.ID, ApplicationParams{PlanID: plan.ID, ApplicationKey: "k1"}); !IsInvalid(err) {
		t.Errorf("creating an application with a 2-character key: %v, want porta's 422", err)
	}
	app := outcome(c.CreateApplication(ctx, acc.ID, ApplicationParams{PlanID: plan.ID, Name: "Shop app", Description: ptrTo("d"),
		ApplicationID: "a1b2c3d4", ApplicationKey: "key-one"})).must(t, "create application")
	if app.ApplicationID != "a1b2c3d4" || app.PlanID != plan.ID || app.State != "live" || !app.Enabled || app.UserKey != "" || app.AccountID != acc.ID {
		t.Errorf("created application %+v", app)
	}
	app = outcome(c.UpdateApplication(ctx, acc.ID, app.ID, ApplicationParams{Name: "Shop app 2", Description: ptrTo("")})).must(t, "update application")
	checkSame(t, "read application", app, outcome(c.GetApplication(ctx, acc.ID, app.ID)).must(t, "get application"))
	checkSame(t, "application found by its app_id", app, outcome(c.FindApplication(ctx, app.ServiceID, "", "a1b2c3d4")).must(t, "find application"))
	if _, err := c.FindApplication(ctx, app.ServiceID, "", "nobody-has-it"); !IsNotFound(err) {
		t.Errorf("finding an application by an unknown app_id: %v, want 404", err)
	}
	app = outcome(c.SuspendApplication(ctx, acc.ID, app.ID)).must(t, "suspend application")
	if app.State != "suspended" || app.Enabled {
		t.Errorf("suspended application %+v", app)
	}
	app = outcome(c.ResumeApplication(ctx, acc.ID, app.ID)).must(t, "resume application")
	if _, err := c.ResumeApplication(ctx, acc.ID, app.ID); !IsInvalid(err) {
		t.Errorf("resuming a live application: %v, want porta's 422", err)
	}
	mustDo(t, "change plan to the same plan", c.ChangeApplicationPlan(ctx, acc.ID, app.ID, plan.ID))
	if err := c.CreateApplicationKey(ctx, acc.ID, app.ID, "key-two"); !IsInvalid(err) || !strings.Contains(err.Error(), "Limit reached") {
		t.Errorf("a second key of an OIDC application: %v, want porta's limit", err)
	}
	mustDo(t, "remove a key", c.DeleteApplicationKey(ctx, acc.ID, app.ID, "key-one"))
	mustDo(t, "add a key", c.CreateApplicationKey(ctx, acc.ID, app.ID, "key-two"))
	checkSame(t, "keys", []ApplicationKey{{Value: "key-two"}}, outcome(c.ListApplicationKeys(ctx, acc.ID, app.ID)).must(t, "list keys"))
	if apps := outcome(c.ListApplications(ctx, acc.ID)).must(t, "list applications"); len(apps) != 1 {
		t.Errorf("applications %+v, want 1", apps)
	}
	if apps := outcome(c.ListProductApplications(ctx, p.ID)).must(t, "list the product's applications"); len(apps) != 1 ||
		apps[0].ID != app.ID || apps[0].OrgName != "ACME Corp" || apps[0].PlanName != plan.Name {
		t.Errorf("the product's applications %+v, want the account's one with its plan and organization names", apps)
	}
	if all := outcome(c.ListAllApplications(ctx)).must(t, "list the tenant's applications"); len(all) != 1 || all[0].ID != app.ID {
		t.Errorf("the tenant's applications %+v, want the account's one", all)
	}
	if err := c.DeletePlan(ctx, p.ID, plan.ID); !IsInUse(err) || !strings.Contains(err.Error(), "At least one application depends on it") {
		t.Errorf("deleting a plan with an application: %v, want porta's refusal", err)
	}
	mustDo(t, "delete application", c.DeleteApplication(ctx, acc.ID, app.ID))
	bare := outcome(c.CreateApplication(ctx, acc.ID, ApplicationParams{PlanID: plan.ID})).must(t, "create an application without name")
	if len(bare.ApplicationID) != 8 || bare.Name != "" {
		t.Errorf("application with generated credentials %+v, want an 8-hex application_id and no name", bare)
	}
	mustDo(t, "delete account", c.DeleteAccount(ctx, acc.ID))
	for _, kind := range []string{simulator.KindAccounts, simulator.KindUsers, simulator.KindApplications} {
		if n := f.sim.Count(simTenant, kind); n != 0 {
			t.Errorf("%d %s left after deleting the account", n, kind)
		}
	}
	if _, err := c.CreateActiveDoc(ctx, ActiveDocParams{Name: "Shop", Body: `{"openapi":"3.0.3"}`}); !IsInvalid(err) ||
		!strings.Contains(err.Error(), "missing required properties: info, paths") {
		t.Errorf("creating a spec without info and paths: %v, want porta's 422", err)
	}
	doc := outcome(c.CreateActiveDoc(ctx, ActiveDocParams{Name: "Shop", SystemName: "shop",
		Body: `{"openapi":"3.0.3","info":{"title":"Shop","version":"1"},"paths":{}}`, ServiceID: ptrTo(p.ID)})).must(t, "create doc")
	if doc.ServiceID != p.ID || doc.Published || doc.SystemName != "shop" {
		t.Errorf("created doc %+v", doc)
	}
	doc = outcome(c.UpdateActiveDoc(ctx, doc.ID, ActiveDocParams{Name: "Shop API", Published: ptrTo(true), ServiceID: ptrTo(int64(0))})).must(t, "update doc")
	if doc.ServiceID != 0 || !doc.Published {
		t.Errorf("updated doc %+v", doc)
	}
	checkSame(t, "read doc", doc, outcome(c.GetActiveDoc(ctx, doc.ID)).must(t, "get doc"))
	if docs := outcome(c.ListActiveDocs(ctx)).must(t, "list docs"); len(docs) != 1 {
		t.Errorf("docs %+v", docs)
	}
	mustDo(t, "delete doc", c.DeleteActiveDoc(ctx, doc.ID))

	// The developer portal's content: a section, a page drafted then published, a built-in that cannot
	// be deleted, a file uploaded, read back and replaced.
	sections := outcome(c.ListCMSSections(ctx)).must(t, "list sections")
	root := sections[slices.IndexFunc(sections, func(s CMSSection) bool { return s.SystemName == RootSection })]
	docsSection := outcome(c.CreateCMSSection(ctx, CMSSectionParams{Title: ptrTo("Guides"), SystemName: ptrTo("guides"), Public: ptrTo(true),
		ParentID: root.ID})).must(t, "create section")
	docsSection = outcome(c.UpdateCMSSection(ctx, docsSection.ID, CMSSectionParams{PartialPath: ptrTo("/guides")})).must(t, "update section")
	if docsSection.ParentID != root.ID || docsSection.PartialPath != "/guides" {
		t.Errorf("section %+v", docsSection)
	}
	page := outcome(c.CreateCMSTemplate(ctx, CMSTemplateParams{Type: TemplatePage, Title: ptrTo("Guide"), Path: ptrTo("/guides/one"),
		Draft: ptrTo("<h1>One</h1>"), LiquidEnabled: ptrTo(true), SectionID: docsSection.ID})).must(t, "create page")
	if page.Draft == nil || *page.Draft != "<h1>One</h1>" || page.Published != nil || page.SectionID != docsSection.ID {
		t.Errorf("created page %+v", page)
	}
	page = outcome(c.UpdateCMSTemplate(ctx, page.ID, CMSTemplateParams{Draft: ptrTo("<h1>Guide one</h1>")})).must(t, "update page")
	page = outcome(c.PublishCMSTemplate(ctx, page.ID)).must(t, "publish page")
	if page.Draft != nil || page.Published == nil || *page.Published != "<h1>Guide one</h1>" {
		t.Errorf("published page %+v", page)
	}
	checkSame(t, "read page", page, outcome(c.GetCMSTemplate(ctx, page.ID)).must(t, "get page"))
	templates := outcome(c.ListCMSTemplates(ctx)).must(t, "list templates")
	builtin := templates[slices.IndexFunc(templates, func(x CMSTemplate) bool { return x.Type == TemplateBuiltinPage })]
	if err := c.DeleteCMSTemplate(ctx, builtin.ID); !IsInvalid(err) {
		t.Errorf("deleting built-in page %s: %v, want porta's 422", builtin.SystemName, err)
	}
	mustDo(t, "delete page", c.DeleteCMSTemplate(ctx, page.ID))
	logo := outcome(c.CreateCMSFile(ctx, CMSFileParams{Path: ptrTo("/guides/logo.png"), SectionID: docsSection.ID, Content: []byte("PNG1"),
		Name: "logo.png", ContentType: "image/png"})).must(t, "create file")
	if got := outcome(c.FileContent(ctx, *logo)).must(t, "read file"); string(got) != "PNG1" {
		t.Errorf("file content %q, want PNG1", got)
	}
	logo = outcome(c.UpdateCMSFile(ctx, logo.ID, CMSFileParams{Content: []byte("PNG22"), Name: "logo2.png", ContentType: "image/png",
		Downloadable: ptrTo(true)})).must(t, "update file")
	if got := outcome(c.FileContent(ctx, *logo)).must(t, "read file"); string(got) != "PNG22" || !logo.Downloadable || logo.Title != "logo2.png" {
		t.Errorf("replaced file %+v, content %q", logo, got)
	}
	if files := outcome(c.ListCMSFiles(ctx)).must(t, "list files"); !slices.ContainsFunc(files, func(x CMSFile) bool { return x.ID == logo.ID }) {
		t.Errorf("files %+v lack %d", files, logo.ID)
	}
	mustDo(t, "delete file", c.DeleteCMSFile(ctx, logo.ID))
	mustDo(t, "delete section", c.DeleteCMSSection(ctx, docsSection.ID))

	// The portal's settings and a sign-in provider (porta cannot delete one: it is unpublished).
	settings := outcome(c.UpdatePortalSettings(ctx, PortalSettingsParams{SignupsEnabled: ptrTo(false), ChangeServicePlanPermission: ptrTo("direct")})).
		must(t, "update settings")
	if settings.SignupsEnabled || settings.ChangeServicePlanPermission != "direct" {
		t.Errorf("settings %+v", settings)
	}
	checkSame(t, "read settings", settings, outcome(c.GetPortalSettings(ctx)).must(t, "get settings"))
	sso := outcome(c.CreateAuthenticationProvider(ctx, AuthenticationProviderParams{Kind: "keycloak", Name: "SSO", ClientID: ptrTo("portal"),
		ClientSecret: ptrTo("s3cret"), Site: ptrTo("https://sso.example.com/realms/dev"), Published: ptrTo(true)})).must(t, "create provider")
	sso = outcome(c.UpdateAuthenticationProvider(ctx, sso.ID, AuthenticationProviderParams{Published: ptrTo(false)})).must(t, "update provider")
	if providers := outcome(c.ListAuthenticationProviders(ctx)).must(t, "list providers"); len(providers) != 1 || providers[0].Published ||
		providers[0].ID != sso.ID || sso.Published {
		t.Errorf("providers %+v after unpublishing %+v", providers, sso)
	}

	// Deleting children, then the product with what is left.
	mustDo(t, "delete product metric", c.DeleteMetric(ctx, ps, orders.ID))
	mustDo(t, "delete backend metric with its limit", c.DeleteMetric(ctx, bs, bytesMetric.ID))
	counts["metrics"], counts["limits"] = 4, 1
	checkCounts(t, f, "metrics deleted", counts)
	mustDo(t, "delete product", c.DeleteProduct(ctx, p.ID))
	if _, err := c.GetProduct(ctx, p.ID); !IsNotFound(err) {
		t.Errorf("reading the deleted product: %v, want not found", err)
	}
	if _, err := c.ListPlans(ctx, p.ID); !IsNotFound(err) {
		t.Errorf("listing the deleted product's plans: %v, want not found", err)
	}
	if _, err := c.ListLimits(ctx, plan.ID); !IsNotFound(err) {
		t.Errorf("listing the deleted plan's limits: %v, want not found", err)
	}
	counts = map[string]int{"services": 0, "backend_apis": 1, "metrics": 2, "mapping_rules": 1, "backend_usages": 0, "application_plans": 0,
		"limits": 0, "pricing_rules": 0, "deploys": counts["deploys"]}
	checkCounts(t, f, "product deleted (cascade)", counts)

	// Now unused, the backend goes with its metrics and rules.
	mustDo(t, "delete backend", c.DeleteBackend(ctx, b.ID))
	if _, err := c.GetBackend(ctx, b.ID); !IsNotFound(err) {
		t.Errorf("reading the deleted backend: %v, want not found", err)
	}
	counts["backend_apis"], counts["metrics"], counts["mapping_rules"] = 0, 0, 0
	checkCounts(t, f, "backend deleted", counts)

	// Every request the client can make was made and answered, but the master API's, which needs a
	// master account (TestMasterFlowAgainstSimulator).
	checkSame(t, "client requests the flow never made", []string(nil), callsNotMade(t, &f.mu, f.called, false))
}

// TestClientAgainstSimulatorRefusals checks the errors the simulator gives the client as porta would.
func TestClientAgainstSimulatorRefusals(t *testing.T) {
	f := newSimFixture(t)
	ctx := context.Background()
	if _, err := f.client.CreateBackend(ctx, BackendParams{Name: "Stock", SystemName: "stock", PrivateEndpoint: "https://stock.internal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CreateProduct(ctx, ProductParams{Name: "Shop", SystemName: "shop"}); err != nil {
		t.Fatal(err)
	}
	wrongToken, err := New(Config{AdminURL: f.url, Token: "not-the-token"})
	if err != nil {
		t.Fatal(err)
	}
	otherTenant, err := New(Config{AdminURL: f.url + "/t/other", Token: simToken})
	if err != nil {
		t.Fatal(err)
	}
	ownPrefix, err := New(Config{AdminURL: f.url + "/t/" + simTenant + "/", Token: simToken})
	if err != nil {
		t.Fatal(err)
	}
	f.sim.AddTenant(simTenant, "tok-account-management")
	f.sim.SetTokenScopes("tok-account-management", "account_management")
	noRegistryScope, err := New(Config{AdminURL: f.url, Token: "tok-account-management"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		call  func() error
		check func(error) bool
		want  string
	}{
		"wrong token: forbidden": {
			call:  func() error { _, err := wrongToken.ListProducts(ctx); return err },
			check: func(err error) bool { return IsForbidden(err) && !IsInUse(err) && IsTerminal(err) },
			want:  "IsForbidden",
		},
		"token of another tenant's admin URL: forbidden": {
			call:  func() error { _, err := otherTenant.ListBackends(ctx); return err },
			check: IsForbidden, want: "IsForbidden",
		},
		"the tenant's own admin URL with a path prefix: allowed": {
			call: func() error {
				bs, err := ownPrefix.ListBackends(ctx)
				if err == nil && len(bs) != 1 {
					return &APIError{Message: "want the one backend"}
				}
				return err
			},
			check: func(err error) bool { return err == nil }, want: "no error",
		},
		"duplicate backend system name: already taken": {
			call: func() error {
				_, err := f.client.CreateBackend(ctx, BackendParams{Name: "Stock 2", SystemName: "stock", PrivateEndpoint: "https://stock2.internal"})
				return err
			},
			check: func(err error) bool { return HasAlreadyBeenTaken(err, "system_name") && IsInvalid(err) },
			want:  "HasAlreadyBeenTaken(system_name)",
		},
		"duplicate product system name derived from the name: already taken": {
			call:  func() error { _, err := f.client.CreateProduct(ctx, ProductParams{Name: "Shop"}); return err },
			check: func(err error) bool { return HasAlreadyBeenTaken(err, "system_name") }, want: "HasAlreadyBeenTaken(system_name)",
		},
		"blank name: invalid, not taken": {
			call: func() error {
				_, err := f.client.CreateBackend(ctx, BackendParams{SystemName: "nameless", PrivateEndpoint: "https://x.internal"})
				return err
			},
			check: func(err error) bool { return IsInvalid(err) && !HasAlreadyBeenTaken(err, "system_name") }, want: "IsInvalid only",
		},
		"the registry with a token without the policy_registry scope: forbidden, not in use": {
			call:  func() error { return noRegistryScope.DeleteCustomPolicy(ctx, 1) },
			check: func(err error) bool { return IsForbidden(err) && !IsInUse(err) && IsTerminal(err) },
			want:  "IsForbidden only",
		},
		"a product's chain with that token: allowed": {
			call: func() error {
				ps, err := noRegistryScope.ListProducts(ctx)
				if err == nil {
					_, err = noRegistryScope.GetPolicies(ctx, ps[0].ID)
				}
				return err
			},
			check: func(err error) bool { return err == nil }, want: "no error",
		},
		"unknown product: not found": {
			call:  func() error { _, err := f.client.GetProduct(ctx, 9999); return err },
			check: IsNotFound, want: "IsNotFound",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.call(); !tc.check(err) {
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
	if got := f.sim.Count(simTenant, "backend_apis"); got != 1 {
		t.Errorf("%d backends after the refusals, want 1", got)
	}
}

// TestClientAfterALostAnswer: when the simulator loses the answer to a create the client cannot settle
// (no system name to find it by), the client reports it as unavailable, and a create with the system
// name porta derived meets "has already been taken" for the object that exists.
func TestClientAfterALostAnswer(t *testing.T) {
	f := newSimFixture(t)
	ctx := context.Background()
	params := BackendParams{Name: "Stock", PrivateEndpoint: "https://stock.internal"}
	f.sim.SetFaults(simulator.Faults{LostResponseRate: 1})
	_, err := f.client.CreateBackend(ctx, params)
	if !IsUnavailable(err) || !IsRetryable(err) {
		t.Fatalf("lost answer: %v, want unavailable", err)
	}
	f.sim.SetFaults(simulator.Faults{})
	params.SystemName = "stock"
	if _, err := f.client.CreateBackend(ctx, params); !HasAlreadyBeenTaken(err, "system_name") {
		t.Errorf("retry: %v, want has already been taken", err)
	}
	bs, err := f.client.ListBackends(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "backends", []string{"stock"}, ids(bs, func(b Backend) string { return b.SystemName }))
}

// TestClientRetriesTheSimulatorsRateLimit: a 429 with Retry-After from the simulator is waited out.
func TestClientRetriesTheSimulatorsRateLimit(t *testing.T) {
	f := newSimFixture(t)
	var mu sync.Mutex
	var codes []int
	c, err := New(Config{AdminURL: f.url, Token: simToken, Observer: func(ci CallInfo) {
		mu.Lock()
		codes = append(codes, ci.Code)
		mu.Unlock()
		if ci.Code == 429 {
			f.sim.SetFaults(simulator.Faults{}) // the next attempt passes
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.sim.SetFaults(simulator.Faults{RateLimitRate: 1, RetryAfterSeconds: 1})
	if _, err := c.ListProducts(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkSame(t, "attempts", []int{429, 200}, codes)
}

func ids[T any, K any](items []T, key func(T) K) []K {
	out := make([]K, 0, len(items))
	for _, it := range items {
		out = append(out, key(it))
	}
	return out
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// callsNotMade lists the client's requests ("METHOD endpoint template") that a flow against the simulator
// never made, of the master API's (master) or of the others; called is what the flow made, under mu.
func callsNotMade(t *testing.T, mu *sync.Mutex, called map[string]bool, master bool) []string {
	t.Helper()
	masterCalls := masterCallsWithContract()
	want := map[string]bool{}
	for _, r := range recordClientRequests(t) {
		if masterCalls[r.call] == master {
			want[r.method+" "+r.endpoint] = true
		}
	}
	var missing []string
	mu.Lock()
	for k := range want {
		if !called[k] {
			missing = append(missing, k)
		}
	}
	mu.Unlock()
	sort.Strings(missing)
	return missing
}
