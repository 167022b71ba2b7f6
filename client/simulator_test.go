package client

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"

	"github.com/apimsync/apimsync/test/simulator"
)

// TestAgainstSimulator runs a realistic flow of client calls against the simulator, so that the two
// agree on paths, bodies, wrappers and errors.
func TestAgainstSimulator(t *testing.T) {
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "tok"}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	called := map[string]bool{}
	var mu sync.Mutex
	c, err := New(Config{AdminURL: srv.URL, Token: "tok", QPS: 1000, Burst: 1000, Observer: func(ci CallInfo) {
		mu.Lock()
		called[ci.Method+" "+ci.Endpoint] = true
		mu.Unlock()
	}})
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
	b, err := c.CreateBackend(ctx, BackendParams{Name: "Pets", SystemName: "pets", Description: &desc, PrivateEndpoint: "https://pets"})
	must(err)
	if _, err := c.CreateBackend(ctx, BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://pets"}); !HasAlreadyBeenTaken(err, "system_name") {
		t.Errorf("duplicate backend: %v, want 422 has already been taken", err)
	}
	bs := BackendScope(b.ID)
	metrics, err := c.ListMetrics(ctx, bs)
	must(err)
	if len(metrics) != 1 || metrics[0].SystemName != "hits" {
		t.Fatalf("a new backend has metrics %+v, want hits", metrics)
	}
	hits := metrics[0].ID
	m, err := c.CreateMetric(ctx, bs, MetricParams{SystemName: "mb", FriendlyName: "MB", Unit: "MB"})
	must(err)
	_, err = c.UpdateMetric(ctx, bs, m.ID, MetricParams{FriendlyName: "Megabytes", Unit: "MB"})
	must(err)
	meth, err := c.CreateMethod(ctx, bs, hits, MethodParams{SystemName: "list", FriendlyName: "List"})
	must(err)
	methods, err := c.ListMethods(ctx, bs, hits)
	must(err)
	if len(methods) != 1 || methods[0].ParentID != hits {
		t.Errorf("methods = %+v", methods)
	}
	last := true
	rule, err := c.CreateMappingRule(ctx, bs, MappingRuleParams{HTTPMethod: "GET", Pattern: "/pets", MetricID: meth.ID, Delta: 1, Last: &last})
	must(err)
	_, err = c.UpdateMappingRule(ctx, bs, rule.ID, MappingRuleParams{Delta: 2})
	must(err)
	if _, err := c.CreateMappingRule(ctx, bs, MappingRuleParams{HTTPMethod: "GET", Pattern: "pets", MetricID: meth.ID, Delta: 1}); !IsInvalid(err) {
		t.Errorf("a pattern without '/' was accepted: %v", err)
	}

	p, err := c.CreateProduct(ctx, ProductParams{Name: "Petstore", SystemName: "petstore", DeploymentOption: "self_managed", BackendVersion: "2"})
	must(err)
	proxy, err := c.UpdateProxy(ctx, p.ID, ProxyParams{"endpoint": "https://api.example.com", "error_status_auth_failed": "401"})
	must(err)
	if proxy.Endpoint != "https://api.example.com" || proxy.ErrorStatusAuthFailed != 401 {
		t.Errorf("proxy = %+v", proxy)
	}
	must(c.DeployProxy(ctx, p.ID))
	oidc, err := c.UpdateOIDCConfiguration(ctx, p.ID, OIDCConfiguration{ServiceAccountsEnabled: true})
	must(err)
	if !oidc.ServiceAccountsEnabled {
		t.Errorf("oidc = %+v", oidc)
	}
	chain, err := c.UpdatePolicies(ctx, p.ID, []Policy{{Name: "cors", Version: "builtin", Enabled: true}, {Name: "apicast", Version: "builtin", Enabled: true}})
	must(err)
	if len(chain) != 2 {
		t.Errorf("chain = %+v", chain)
	}
	u, err := c.CreateBackendUsage(ctx, p.ID, BackendUsageParams{BackendAPIID: b.ID, Path: "/v1"})
	must(err)
	_, err = c.UpdateBackendUsage(ctx, p.ID, u.ID, BackendUsageParams{Path: "/v2"})
	must(err)
	approval := true
	plan, err := c.CreatePlan(ctx, p.ID, PlanParams{Name: "Basic", SystemName: "basic", ApprovalRequired: &approval, SetupFee: "10.50", StateEvent: "publish"})
	must(err)
	if plan.State != "published" || plan.SetupFee != "10.5" {
		t.Errorf("plan = %+v", plan)
	}
	_, err = c.CreateLimit(ctx, plan.ID, m.ID, LimitParams{Period: "day", Value: 100})
	must(err)
	if _, err := c.CreateLimit(ctx, plan.ID, m.ID, LimitParams{Period: "fortnight", Value: 1}); !IsInvalid(err) {
		t.Errorf("an unknown period was accepted: %v", err)
	}
	_, err = c.CreatePricingRule(ctx, plan.ID, m.ID, PricingRuleParams{Min: 1, Max: 10, CostPerUnit: "0.5"})
	must(err)
	if _, err := c.CreatePricingRule(ctx, plan.ID, m.ID, PricingRuleParams{Min: 5, Max: 20, CostPerUnit: "0.5"}); !IsInvalid(err) {
		t.Errorf("an overlapping pricing rule was accepted: %v", err)
	}
	limits, err := c.ListLimits(ctx, plan.ID)
	must(err)
	rules, err := c.ListPricingRules(ctx, plan.ID)
	must(err)
	if len(limits) != 1 || len(rules) != 1 {
		t.Errorf("limits %d, pricing rules %d; want 1 and 1", len(limits), len(rules))
	}

	// The remaining reads, updates and deletes, on real ids.
	for _, f := range []func() error{
		func() error { _, err := c.ListProducts(ctx); return err },
		func() error { _, err := c.GetProduct(ctx, p.ID); return err },
		func() error { _, err := c.UpdateProduct(ctx, p.ID, ProductParams{Name: "Petstore 2"}); return err },
		func() error { _, err := c.ListBackends(ctx); return err },
		func() error { _, err := c.GetBackend(ctx, b.ID); return err },
		func() error { _, err := c.UpdateBackend(ctx, b.ID, BackendParams{Name: "Pets 2"}); return err },
		func() error { _, err := c.GetProxy(ctx, p.ID); return err },
		func() error { _, err := c.GetOIDCConfiguration(ctx, p.ID); return err },
		func() error { _, err := c.GetPolicies(ctx, p.ID); return err },
		func() error { _, err := c.ListBackendUsages(ctx, p.ID); return err },
		func() error { _, err := c.ListPlans(ctx, p.ID); return err },
		func() error { _, err := c.UpdatePlan(ctx, p.ID, plan.ID, PlanParams{StateEvent: "hide"}); return err },
		func() error {
			_, err := c.UpdateLimit(ctx, plan.ID, m.ID, limits[0].ID, LimitParams{Period: "day", Value: 200})
			return err
		},
		func() error { return c.DeleteLimit(ctx, plan.ID, m.ID, limits[0].ID) },
		func() error { return c.DeletePricingRule(ctx, plan.ID, m.ID, rules[0].ID) },
		func() error {
			_, err := c.UpdateMethod(ctx, bs, hits, meth.ID, MethodParams{FriendlyName: "List all"})
			return err
		},
		func() error { _, err := c.ListMappingRules(ctx, bs); return err },
		func() error { return c.DeleteMappingRule(ctx, bs, rule.ID) },
		func() error { return c.DeleteMethod(ctx, bs, hits, meth.ID) },
		func() error { return c.DeleteMetric(ctx, bs, m.ID) },
		func() error { return c.DeleteBackendUsage(ctx, p.ID, u.ID) },
		func() error {
			_, err := c.CreateBackendUsage(ctx, p.ID, BackendUsageParams{BackendAPIID: b.ID, Path: "/v3"})
			return err
		},
		func() error {
			extra, err := c.CreatePlan(ctx, p.ID, PlanParams{Name: "Extra"})
			if err != nil {
				return err
			}
			return c.DeletePlan(ctx, p.ID, extra.ID)
		},
	} {
		must(f())
	}
	// Product-scoped children too.
	ps := ProductScope(p.ID)
	pm, err := c.ListMetrics(ctx, ps)
	must(err)
	pmeth, err := c.CreateMethod(ctx, ps, pm[0].ID, MethodParams{SystemName: "search", FriendlyName: "Search"})
	must(err)
	_, err = c.ListMethods(ctx, ps, pm[0].ID)
	must(err)
	_, err = c.UpdateMethod(ctx, ps, pm[0].ID, pmeth.ID, MethodParams{FriendlyName: "Find"})
	must(err)
	pmet, err := c.CreateMetric(ctx, ps, MetricParams{SystemName: "kb", FriendlyName: "KB", Unit: "KB"})
	must(err)
	_, err = c.UpdateMetric(ctx, ps, pmet.ID, MetricParams{FriendlyName: "Kilobytes", Unit: "KB"})
	must(err)
	prule, err := c.CreateMappingRule(ctx, ps, MappingRuleParams{HTTPMethod: "GET", Pattern: "/search", MetricID: pmeth.ID, Delta: 1})
	must(err)
	_, err = c.UpdateMappingRule(ctx, ps, prule.ID, MappingRuleParams{Delta: 5})
	must(err)
	_, err = c.ListMappingRules(ctx, ps)
	must(err)
	must(c.DeleteMappingRule(ctx, ps, prule.ID))
	must(c.DeleteMethod(ctx, ps, pm[0].ID, pmeth.ID))
	must(c.DeleteMetric(ctx, ps, pmet.ID))

	if err := c.DeleteBackend(ctx, b.ID); !IsInUse(err) {
		t.Errorf("deleting a used backend: %v, want in use", err)
	}
	must(c.DeleteProduct(ctx, p.ID))
	if _, err := c.GetPlan(ctx, p.ID, plan.ID); !IsNotFound(err) {
		t.Errorf("the plan survived its product: %v", err)
	}
	must(c.DeleteBackend(ctx, b.ID))
	for _, kind := range []string{"services", "backend_apis", "application_plans", "limits", "pricing_rules", "metrics", "mapping_rules", "backend_usages"} {
		if n := sim.Count("acme", kind); n != 0 {
			t.Errorf("%d %s left", n, kind)
		}
	}

	// Every request the contract test checks was also made, and answered, here.
	mock, err := New(Config{AdminURL: "https://acme-admin.example.com", Token: "secret-token", QPS: 1000, Burst: 1000})
	must(err)
	want := map[string]bool{}
	mock.observer = func(ci CallInfo) { want[ci.Method+" "+ci.Endpoint] = true }
	httpmock.ActivateNonDefault(mock.http.GetClient())
	httpmock.RegisterNoResponder(httpmock.NewStringResponder(200, `{}`))
	for _, f := range everyCall {
		must(f(ctx, mock))
	}
	httpmock.DeactivateAndReset()
	for k := range want {
		if !called[k] {
			t.Errorf("%s was not exercised against the simulator", k)
		}
	}

	bad, _ := New(Config{AdminURL: srv.URL, Token: "wrong"})
	if _, err := bad.ListProducts(ctx); !IsForbidden(err) {
		t.Errorf("a wrong token: %v, want forbidden", err)
	}
}
