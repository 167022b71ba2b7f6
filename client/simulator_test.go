package client_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestAgainstSimulator runs a realistic flow of client calls against the simulator, so that the two
// agree on paths, bodies, wrappers and errors.
func TestAgainstSimulator(t *testing.T) {
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "tok"}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c, err := client.New(client.Config{AdminURL: srv.URL, Token: "tok", QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	desc := "pets"
	b, err := c.CreateBackend(ctx, client.BackendParams{Name: "Pets", SystemName: "pets", Description: &desc, PrivateEndpoint: "https://pets"})
	must(err)
	if _, err := c.CreateBackend(ctx, client.BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://pets"}); !client.HasAlreadyBeenTaken(err, "system_name") {
		t.Errorf("duplicate backend: %v, want 422 has already been taken", err)
	}
	bs := client.BackendScope(b.ID)
	metrics, err := c.ListMetrics(ctx, bs)
	must(err)
	if len(metrics) != 1 || metrics[0].SystemName != "hits" {
		t.Fatalf("a new backend has metrics %+v, want hits", metrics)
	}
	hits := metrics[0].ID
	m, err := c.CreateMetric(ctx, bs, client.MetricParams{SystemName: "mb", FriendlyName: "MB", Unit: "MB"})
	must(err)
	_, err = c.UpdateMetric(ctx, bs, m.ID, client.MetricParams{FriendlyName: "Megabytes", Unit: "MB"})
	must(err)
	meth, err := c.CreateMethod(ctx, bs, hits, client.MethodParams{SystemName: "list", FriendlyName: "List"})
	must(err)
	methods, err := c.ListMethods(ctx, bs, hits)
	must(err)
	if len(methods) != 1 || methods[0].ParentID != hits {
		t.Errorf("methods = %+v", methods)
	}
	last := true
	rule, err := c.CreateMappingRule(ctx, bs, client.MappingRuleParams{HTTPMethod: "GET", Pattern: "/pets", MetricID: meth.ID, Delta: 1, Last: &last})
	must(err)
	_, err = c.UpdateMappingRule(ctx, bs, rule.ID, client.MappingRuleParams{Delta: 2})
	must(err)
	if _, err := c.CreateMappingRule(ctx, bs, client.MappingRuleParams{HTTPMethod: "GET", Pattern: "pets", MetricID: meth.ID, Delta: 1}); !client.IsInvalid(err) {
		t.Errorf("a pattern without '/' was accepted: %v", err)
	}

	p, err := c.CreateProduct(ctx, client.ProductParams{Name: "Petstore", SystemName: "petstore", DeploymentOption: "self_managed", BackendVersion: "2"})
	must(err)
	proxy, err := c.UpdateProxy(ctx, p.ID, client.ProxyParams{"endpoint": "https://api.example.com", "error_status_auth_failed": "401"})
	must(err)
	if proxy.Endpoint != "https://api.example.com" || proxy.ErrorStatusAuthFailed != 401 {
		t.Errorf("proxy = %+v", proxy)
	}
	must(c.DeployProxy(ctx, p.ID))
	oidc, err := c.UpdateOIDCConfiguration(ctx, p.ID, client.OIDCConfiguration{ServiceAccountsEnabled: true})
	must(err)
	if !oidc.ServiceAccountsEnabled {
		t.Errorf("oidc = %+v", oidc)
	}
	chain, err := c.UpdatePolicies(ctx, p.ID, []client.Policy{{Name: "cors", Version: "builtin", Enabled: true}, {Name: "apicast", Version: "builtin", Enabled: true}})
	must(err)
	if len(chain) != 2 {
		t.Errorf("chain = %+v", chain)
	}
	u, err := c.CreateBackendUsage(ctx, p.ID, client.BackendUsageParams{BackendAPIID: b.ID, Path: "/v1"})
	must(err)
	_, err = c.UpdateBackendUsage(ctx, p.ID, u.ID, client.BackendUsageParams{Path: "/v2"})
	must(err)
	approval := true
	plan, err := c.CreatePlan(ctx, p.ID, client.PlanParams{Name: "Basic", SystemName: "basic", ApprovalRequired: &approval, SetupFee: "10.50", StateEvent: "publish"})
	must(err)
	if plan.State != "published" || plan.SetupFee != "10.5" {
		t.Errorf("plan = %+v", plan)
	}
	_, err = c.CreateLimit(ctx, plan.ID, m.ID, client.LimitParams{Period: "day", Value: 100})
	must(err)
	if _, err := c.CreateLimit(ctx, plan.ID, m.ID, client.LimitParams{Period: "fortnight", Value: 1}); !client.IsInvalid(err) {
		t.Errorf("an unknown period was accepted: %v", err)
	}
	_, err = c.CreatePricingRule(ctx, plan.ID, m.ID, client.PricingRuleParams{Min: 1, Max: 10, CostPerUnit: "0.5"})
	must(err)
	if _, err := c.CreatePricingRule(ctx, plan.ID, m.ID, client.PricingRuleParams{Min: 5, Max: 20, CostPerUnit: "0.5"}); !client.IsInvalid(err) {
		t.Errorf("an overlapping pricing rule was accepted: %v", err)
	}
	limits, err := c.ListLimits(ctx, plan.ID)
	must(err)
	rules, err := c.ListPricingRules(ctx, plan.ID)
	must(err)
	if len(limits) != 1 || len(rules) != 1 {
		t.Errorf("limits %d, pricing rules %d; want 1 and 1", len(limits), len(rules))
	}

	if err := c.DeleteBackend(ctx, b.ID); !client.IsInUse(err) {
		t.Errorf("deleting a used backend: %v, want in use", err)
	}
	must(c.DeleteProduct(ctx, p.ID))
	if _, err := c.GetPlan(ctx, p.ID, plan.ID); !client.IsNotFound(err) {
		t.Errorf("the plan survived its product: %v", err)
	}
	must(c.DeleteBackend(ctx, b.ID))
	for _, kind := range []string{"services", "backend_apis", "application_plans", "limits", "pricing_rules", "metrics", "mapping_rules", "backend_usages"} {
		if n := sim.Count("acme", kind); n != 0 {
			t.Errorf("%d %s left", n, kind)
		}
	}

	bad, _ := client.New(client.Config{AdminURL: srv.URL, Token: "wrong"})
	if _, err := bad.ListProducts(ctx); !client.IsForbidden(err) {
		t.Errorf("a wrong token: %v, want forbidden", err)
	}
}
