package client

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// TestDecimalsAsPortaSendsThem: porta sends a plan's setup_fee and cost_per_month as JSON numbers
// written as Ruby writes a Float (PlanRepresenter#setup_fee and #cost_per_month call to_f,
// app/representers/plan_representer.rb:21-27), and a pricing rule's cost_per_unit as a JSON string,
// the BigDecimal of a decimal column (pricing_rule_representer.rb:8, db/schema.rb:1019). Both are kept
// as porta wrote them; either kind is accepted for each.
func TestDecimalsAsPortaSendsThem(t *testing.T) {
	c := newContractClient(t, Config{})
	httpmock.RegisterResponder("GET", contractAdminURL+"/admin/api/services/42/application_plans.json", answer(200,
		`{"plans":[{"application_plan":{"id":61,"name":"Gold","system_name":"gold","state":"published","setup_fee":10.0,"cost_per_month":1.1235,`+
			`"trial_period_days":0,"cancellation_period":0,"approval_required":false,"default":false,"custom":false,"links":[]}},`+
			`{"application_plan":{"id":62,"name":"Odd","system_name":"odd","setup_fee":"5.0","cost_per_month":1.0e+16}}]}`))
	httpmock.RegisterResponder("GET", contractAdminURL+"/admin/api/application_plans/61/pricing_rules.json", answer(200,
		`{"pricing_rules":[{"pricing_rule":{"id":81,"metric_id":3,"cost_per_unit":"1.92","min":1,"max":100,"links":[]}},`+
			`{"pricing_rule":{"id":82,"metric_id":3,"cost_per_unit":"1.0","min":101,"max":null}},`+
			`{"pricing_rule":{"id":83,"metric_id":3,"cost_per_unit":0.5,"min":1000,"max":null}}]}`))
	ctx := context.Background()

	plans, err := c.ListPlans(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	var fees [][2]Decimal
	for _, p := range plans {
		fees = append(fees, [2]Decimal{p.SetupFee, p.CostPerMonth})
	}
	if diff := cmp.Diff([][2]Decimal{{"10.0", "1.1235"}, {"5.0", "1.0e+16"}}, fees); diff != "" {
		t.Errorf("plan fees (-want +got):\n%s", diff)
	}
	rules, err := c.ListPricingRules(ctx, 61)
	if err != nil {
		t.Fatal(err)
	}
	var costs []Decimal
	for _, r := range rules {
		costs = append(costs, r.CostPerUnit)
	}
	if diff := cmp.Diff([]Decimal{"1.92", "1.0", "0.5"}, costs); diff != "" {
		t.Errorf("costs per unit (-want +got):\n%s", diff)
	}
}

// TestListOfUnexpectedShapeIsAnError: an answer that is not porta's list is an error naming the list,
// never an empty list (which would make the controllers create everything again, or delete nothing).
func TestListOfUnexpectedShapeIsAnError(t *testing.T) {
	cases := map[string]struct {
		path, body string
		list       func(ctx context.Context, c *Client) (int, error)
		wantErr    string
	}{
		"an object without the list's key": {"/admin/api/services.json", `{"status":"ok"}`,
			func(ctx context.Context, c *Client) (int, error) { ps, err := c.ListProducts(ctx); return len(ps), err }, `no "services"`},
		"the key of another list": {"/admin/api/backend_apis.json", `{"services":[]}`,
			func(ctx context.Context, c *Client) (int, error) { bs, err := c.ListBackends(ctx); return len(bs), err }, `no "backend_apis"`},
		"the key is not an array": {"/admin/api/application_plans/61/limits.json", `{"limits":{"limit":{"id":1}}}`,
			func(ctx context.Context, c *Client) (int, error) {
				ls, err := c.ListLimits(ctx, 61)
				return len(ls), err
			}, `array under "limits"`},
		"null": {"/admin/api/services/42/application_plans.json", `{"plans":null}`,
			func(ctx context.Context, c *Client) (int, error) {
				ps, err := c.ListPlans(ctx, 42)
				return len(ps), err
			}, `array under "plans"`},
		"an object where porta sends a bare array": {"/admin/api/services/42/backend_usages.json", `{"backend_usages":[]}`,
			func(ctx context.Context, c *Client) (int, error) {
				us, err := c.ListBackendUsages(ctx, 42)
				return len(us), err
			}, "want a JSON array"},
		"items that are not objects": {"/admin/api/services/42/proxy/mapping_rules.json", `{"mapping_rules":[1,2]}`,
			func(ctx context.Context, c *Client) (int, error) {
				rs, err := c.ListMappingRules(ctx, ProductScope(42))
				return len(rs), err
			}, "item 0 is not a JSON object"},
		"HTML": {"/admin/api/application_plans/61/pricing_rules.json", `<html><body>Sign in</body></html>`,
			func(ctx context.Context, c *Client) (int, error) {
				rs, err := c.ListPricingRules(ctx, 61)
				return len(rs), err
			}, "cannot decode"},
		"an empty body": {"/admin/api/services/42/metrics.json", ``,
			func(ctx context.Context, c *Client) (int, error) {
				ms, err := c.ListMetrics(ctx, ProductScope(42))
				return len(ms), err
			}, "cannot decode the list"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{})
			httpmock.RegisterResponder("GET", contractAdminURL+tc.path, answer(200, tc.body))
			n, err := tc.list(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || n != 0 {
				t.Fatalf("%d items, error %v; want an error saying %q", n, err, tc.wantErr)
			}
			if IsRetryable(err) || !IsTerminal(err) {
				t.Errorf("%v: retryable; an answer of the wrong shape will not change by itself", err)
			}
		})
	}
}

// TestPlanWithApplicationsIsInUse: porta refuses to delete an application plan its applications use
// (Plan#can_be_destroyed?, app/models/plan.rb:174-186, message config/locales/en.yml:2053) and
// ThreeScale::Api::Responder renders a refused DELETE with 403 (app/lib/three_scale/api/responder.rb:67-75).
// The client reports it in use — a wait, not an invalid spec nor a refused token.
func TestPlanWithApplicationsIsInUse(t *testing.T) {
	c := newContractClient(t, Config{})
	httpmock.RegisterResponder("DELETE", contractAdminURL+"/admin/api/services/42/application_plans/61.json", answer(403,
		`{"errors":{"base":["This application plan cannot be deleted! At least one application depends on it."]}}`))
	err := c.DeletePlan(context.Background(), 42, 61)
	want := errorClasses{InUse: true, Terminal: true}
	if diff := cmp.Diff(want, classesOf(err)); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
	if err == nil || !strings.Contains(err.Error(), "At least one application depends on it") {
		t.Errorf("the message: %v", err)
	}
}
