package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apimsync/apimsync/test/simulator"
)

// TestLostCreatesAreSettledWithOneRead: against the simulator, whose lost answers commit the write, a
// create of a product, a backend, a plan (by system name), a metric, a method, a mapping rule, a limit,
// a pricing rule or a backend usage whose answer is lost costs one list read and returns what it made:
// no error for the caller, no duplicate. A deploy whose answer is lost is not sent again: the caller
// gets the lost answer (AnswerLost) and settles it from staging's latest configuration, which holds it.
func TestLostCreatesAreSettledWithOneRead(t *testing.T) {
	f := newSimFixture(t)
	ctx := context.Background()
	lose := func(template string) {
		f.sim.ScriptFault(simulator.ScriptedFault{Tenant: simTenant, Method: "POST", Template: template, Count: 1, Lose: true})
	}
	lose("/admin/api/services.json")
	product := outcome(f.client.CreateProduct(ctx, ProductParams{Name: "Shop", SystemName: "shop"})).must(t, "lost product")
	lose("/admin/api/backend_apis.json")
	backend := outcome(f.client.CreateBackend(ctx, BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://b.example.com"})).must(t, "lost backend")
	if product.SystemName != "shop" || backend.SystemName != "pets" {
		t.Errorf("settled product %+v, backend %+v", product, backend)
	}
	ps, bs := ProductScope(product.ID), BackendScope(backend.ID)

	lose("/admin/api/backend_apis/{backend_api_id}/metrics.json")
	m := outcome(f.client.CreateMetric(ctx, bs, MetricParams{SystemName: "mb", FriendlyName: "MB", Unit: "MB"})).must(t, "lost metric")
	lose("/admin/api/services/{service_id}/metrics.json")
	pm := outcome(f.client.CreateMetric(ctx, ps, MetricParams{SystemName: "orders", FriendlyName: "Orders", Unit: "hit"})).must(t, "lost product metric")
	lose("/admin/api/services/{service_id}/metrics/{metric_id}/methods.json")
	all, err := f.client.ListMetrics(ctx, ps)
	hits := outcome(first(all, err, func(m Metric) bool { return m.SystemName == "hits" })).must(t, "hits")
	_ = outcome(f.client.CreateMethod(ctx, ps, hits.ID, MethodParams{SystemName: "list", FriendlyName: "List"})).must(t, "lost method")
	lose("/admin/api/services/{service_id}/proxy/mapping_rules.json")
	r := outcome(f.client.CreateMappingRule(ctx, ps, MappingRuleParams{HTTPMethod: "POST", Pattern: "/orders", MetricID: pm.ID, Delta: 1})).must(t, "lost rule")
	lose("/admin/api/services/{service_id}/backend_usages.json")
	u := outcome(f.client.CreateBackendUsage(ctx, product.ID, BackendUsageParams{BackendAPIID: backend.ID, Path: "/"})).must(t, "lost usage")
	lose("/admin/api/services/{service_id}/proxy/deploy.json")
	if err := f.client.DeployProxy(ctx, product.ID); !AnswerLost(err) {
		t.Errorf("a deploy whose answer was lost: %v, want the lost answer for the caller to settle", err)
	}
	if cfg, content, err := f.client.LatestProxyConfigContent(ctx, product.ID, EnvironmentSandbox); err != nil || cfg == nil || content == nil ||
		len(content.Proxy.ProxyRules) != 2 || content.Proxy.Attributes["credentials_location"] == nil {
		t.Errorf("staging after the lost deploy: %+v %+v %v, want the configuration it made with its 2 rules", cfg, content, err)
	}
	lose("/admin/api/services/{service_id}/application_plans.json")
	plan := outcome(f.client.CreatePlan(ctx, product.ID, PlanParams{Name: "Basic", SystemName: "basic"})).must(t, "lost plan")
	lose("/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json")
	l := outcome(f.client.CreateLimit(ctx, plan.ID, pm.ID, LimitParams{Period: "day", Value: 10})).must(t, "lost limit")
	lose("/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json")
	pr := outcome(f.client.CreatePricingRule(ctx, plan.ID, m.ID, PricingRuleParams{Min: 1, Max: 10, CostPerUnit: "0.1"})).must(t, "lost pricing rule")
	if m.ID == 0 || r.ID == 0 || u.ID == 0 || l.ID == 0 || pr.ID == 0 || r.MetricID != pm.ID || u.BackendID != backend.ID || l.Period != "day" {
		t.Errorf("settled objects: metric %+v, rule %+v, usage %+v, limit %+v, pricing rule %+v", m, r, u, l, pr)
	}
	for kind, want := range map[string]int{"services": 1, "backend_apis": 1, "application_plans": 1, "mapping_rules": 2, "backend_usages": 1,
		"limits": 1, "pricing_rules": 1, "proxy_configs": 1, "deploys": 1} {
		// mapping rules: porta's default GET / and the one made
		if got := f.sim.Count(simTenant, kind); got != want {
			t.Errorf("%d %s, want %d: a lost create was sent twice", got, kind, want)
		}
	}
	checkLost(t, f, 11)
}

// TestLostCreateThatMadeNothingIsSentAgain: a create whose connection closed before porta made anything
// (the read finds nothing) is sent again, once; one that timed out is not settled (porta may still be
// making it).
func TestLostCreateThatMadeNothingIsSentAgain(t *testing.T) {
	var posts int
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet:
			_, _ = w.Write([]byte(`{"limits":[]}`))
		case strings.Contains(r.URL.Path, "slow"):
			time.Sleep(300 * time.Millisecond)
			_, _ = w.Write([]byte(`{"limit":{"id":9,"metric_id":2,"period":"day","value":1}}`))
		default:
			if posts++; posts == 1 {
				hj, _ := w.(http.Hijacker)
				conn, _, _ := hj.Hijack()
				_ = conn.Close()
				return
			}
			_, _ = w.Write([]byte(`{"limit":{"id":8,"metric_id":2,"period":"day","value":1}}`))
		}
	})
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-settle-1234"})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c.CreateLimit(context.Background(), 1, 2, LimitParams{Period: "day", Value: 1}); err != nil || l.ID != 8 || posts != 2 {
		t.Errorf("a lost create that made nothing: %+v, %v after %d POSTs; want limit 8 after 2", l, err, posts)
	}
	if answerLost(&APIError{Method: "POST", Cause: context.DeadlineExceeded}) || answerLost(&APIError{Method: "POST", NotSent: true}) {
		t.Errorf("a timeout or a request never sent counts as a lost answer")
	}
}

// TestLostPortalCreatesAreSettled: a section, page, file and sign-in provider whose create answer is
// lost are found by what porta keeps unique (system name, path, kind): no error, no duplicate.
func TestLostPortalCreatesAreSettled(t *testing.T) {
	f := newSimFixture(t)
	ctx := context.Background()
	lose := func(template string) {
		f.sim.ScriptFault(simulator.ScriptedFault{Tenant: simTenant, Method: "POST", Template: template, Count: 1, Lose: true})
	}
	lose("/admin/api/cms/sections.json")
	s := outcome(f.client.CreateCMSSection(ctx, CMSSectionParams{Title: ptrTo("Guides"), SystemName: ptrTo("guides")})).must(t, "lost section")
	lose("/admin/api/cms/templates.json")
	p := outcome(f.client.CreateCMSTemplate(ctx, CMSTemplateParams{Type: TemplatePage, Title: ptrTo("One"), Path: ptrTo("/guides/one"),
		SectionID: s.ID, Draft: ptrTo("<h1>One</h1>")})).must(t, "lost page")
	lose("/admin/api/cms/files.json")
	file := outcome(f.client.CreateCMSFile(ctx, CMSFileParams{Path: ptrTo("/guides/map.png"), Content: []byte("PNG"), Name: "map.png",
		ContentType: "image/png"})).must(t, "lost file")
	lose("/admin/api/authentication_providers.json")
	sso := outcome(f.client.CreateAuthenticationProvider(ctx, AuthenticationProviderParams{Kind: "keycloak", ClientID: ptrTo("portal"),
		ClientSecret: ptrTo("s3cret"), Site: ptrTo("https://sso.example.com/realms/dev")})).must(t, "lost provider")
	if s.SystemName != "guides" || p.Path != "/guides/one" || file.Path != "/guides/map.png" || sso.Kind != "keycloak" {
		t.Errorf("settled: section %+v, page %+v, file %+v, provider %+v", s, p, file, sso)
	}
	count := func(kind string, match func(map[string]any) bool) int {
		n := 0
		for _, o := range f.sim.Objects(simTenant, kind) {
			if match(o) {
				n++
			}
		}
		return n
	}
	for what, n := range map[string]int{
		"sections named guides": count(simulator.KindCMSSections, func(o map[string]any) bool { return o["system_name"] == "guides" }),
		"pages at /guides/one":  count(simulator.KindCMSTemplates, func(o map[string]any) bool { return o["path"] == "/guides/one" }),
		"files at its path":     count(simulator.KindCMSFiles, func(o map[string]any) bool { return o["path"] == "/guides/map.png" }),
		"keycloak providers":    count(simulator.KindSignInProviders, func(o map[string]any) bool { return o["kind"] == "keycloak" }),
	} {
		if n != 1 {
			t.Errorf("%d %s, want 1: a lost create was sent twice", n, what)
		}
	}
	checkLost(t, f, 4)
}

// checkLost fails t unless the simulator lost want answers: else the test did not lose what it meant to.
func checkLost(t *testing.T, f *simFixture, want int) {
	t.Helper()
	lost := 0
	for _, c := range f.sim.Stats().Calls {
		if c.Code == 0 {
			lost += c.Count
		}
	}
	if lost != want {
		t.Errorf("%d lost answers, want %d: the test did not lose what it meant to", lost, want)
	}
}

// TestLargePortalListsInSmallerPages (issue 42, item 6): templates whose content makes a page of the
// list larger than the most the client reads are listed in smaller pages — every template read, the
// calls counted — and one template alone larger than that is an error naming it.
func TestLargePortalListsInSmallerPages(t *testing.T) {
	f := newSimFixture(t)
	ctx := context.Background()
	c, err := New(Config{AdminURL: f.url, Token: simToken, QPS: 1e6, Burst: 1e6, MaxResponseBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.ListCMSTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 300<<10)
	for i := range 4 {
		path := fmt.Sprintf("/big-%d", i)
		tpl, err := c.CreateCMSTemplate(ctx, CMSTemplateParams{Type: TemplatePage, Title: &path, Path: &path, Draft: &big})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.PublishCMSTemplate(ctx, tpl.ID); err != nil {
			t.Fatal(err)
		}
	}
	var calls int
	counted, err := New(Config{AdminURL: f.url, Token: simToken, QPS: 1e6, Burst: 1e6, MaxResponseBytes: 1 << 20,
		Observer: func(CallInfo) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	all, err := counted.ListCMSTemplates(ctx)
	if err != nil {
		t.Fatalf("list of a portal with 4 pages of 300 KiB under a 1 MiB cap: %v", err)
	}
	if len(all) != len(before)+4 {
		t.Errorf("%d templates listed, want %d", len(all), len(before)+4)
	}
	// 58 small templates then 4 of 300 KiB: 100 too large, 50 read, 50 too large, 25 too large, then 3 of 5.
	if calls != 7 {
		t.Errorf("%d calls to list %d templates, want 7 (3 of them answers too large)", calls, len(all))
	}

	huge := strings.Repeat("y", 1100<<10)
	path := "/huge"
	if _, err := f.client.CreateCMSTemplate(ctx, CMSTemplateParams{Type: TemplatePage, Title: &path, Path: &path, Draft: &huge}); err != nil {
		t.Fatal(err)
	}
	_, err = counted.ListCMSTemplates(ctx)
	if err == nil || !strings.Contains(err.Error(), `"/huge"`) || !IsTooLarge(err) {
		t.Errorf("a template alone larger than the cap: %v, want an error naming it", err)
	}
}
