package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// proxyConfigFlow is the proxy config part of TestClientFlowAgainstSimulator, on a product that uses a
// backend (so that porta can make configs: it needs an api_backend) and whose policy chain is
// [cors, apicast]: a deploy makes a sandbox version only when the configuration changed, a proxy or
// chain update deploys too, a mapping rule does not; promoting keeps the version number and cannot be
// done twice. It returns the number of POST proxy/deploy it made.
func proxyConfigFlow(t *testing.T, f *simFixture, productID, hitsID int64) (deploys int) {
	t.Helper()
	c, ctx := f.client, context.Background()
	sandbox := func(step string) []ProxyConfig {
		t.Helper()
		return outcome(c.ListProxyConfigs(ctx, productID, EnvironmentSandbox)).must(t, step)
	}
	versions := func(configs []ProxyConfig) []int { return ids(configs, func(pc ProxyConfig) int { return pc.Version }) }
	deploy := func(step string) {
		t.Helper()
		mustDo(t, step, c.DeployProxy(ctx, productID))
		deploys++
	}

	// The flow deployed before the product used a backend: without an api_backend porta made no config.
	checkSame(t, "sandbox configs before", []int{}, versions(sandbox("list sandbox configs")))
	if _, err := c.LatestProxyConfig(ctx, productID, EnvironmentSandbox); !IsNotFound(err) {
		t.Errorf("latest sandbox config of a product never deployed with a backend: %v, want not found", err)
	}
	deploy("deploy with a backend")
	v1 := outcome(c.LatestProxyConfig(ctx, productID, EnvironmentSandbox)).must(t, "latest sandbox config")
	checkSame(t, "first sandbox config", &ProxyConfig{ID: v1.ID, Version: 1, Environment: "sandbox"}, v1)
	deploy("deploy, nothing changed")
	checkSame(t, "sandbox versions after an idle deploy", []int{1}, versions(sandbox("list after an idle deploy")))

	rule := outcome(c.CreateMappingRule(ctx, ProductScope(productID), MappingRuleParams{HTTPMethod: "GET", Pattern: "/configs$",
		MetricID: hitsID, Delta: 1})).must(t, "create a rule")
	checkSame(t, "sandbox versions after a rule, not deployed", []int{1}, versions(sandbox("list after a rule")))
	deploy("deploy the rule")
	checkSame(t, "sandbox versions after deploying the rule", []int{1, 2}, versions(sandbox("list after its deploy")))
	mustDo(t, "delete the rule", c.DeleteMappingRule(ctx, ProductScope(productID), rule.ID))

	outcome(c.UpdateProxy(ctx, productID, ProxyParams{"error_no_match": "No rule"})).must(t, "update the proxy")
	checkSame(t, "a proxy update deploys", []int{1, 2, 3}, versions(sandbox("list after a proxy update")))
	chain := outcome(c.GetPolicies(ctx, productID)).must(t, "read the chain")
	outcome(c.UpdatePolicies(ctx, productID, chain)).must(t, "write the same chain")
	checkSame(t, "the same chain makes no version", []int{1, 2, 3}, versions(sandbox("list after the same chain")))

	// Promote to production: the version number is kept; twice is refused.
	if _, err := c.LatestProxyConfig(ctx, productID, EnvironmentProduction); !IsNotFound(err) {
		t.Errorf("latest production config before any promote: %v, want not found", err)
	}
	prod := outcome(c.PromoteProxyConfig(ctx, productID, EnvironmentSandbox, 3, EnvironmentProduction)).must(t, "promote v3")
	checkSame(t, "promoted", &ProxyConfig{ID: prod.ID, Version: 3, Environment: "production"}, prod)
	checkSame(t, "latest production config", prod, outcome(c.LatestProxyConfig(ctx, productID, EnvironmentProduction)).must(t, "latest production"))
	_, err := c.PromoteProxyConfig(ctx, productID, EnvironmentSandbox, 3, EnvironmentProduction)
	if !IsInvalid(err) || !HasAlreadyBeenTaken(err, "version") || IsInUse(err) {
		t.Errorf("promoting v3 twice: %v, want porta's 422 version has already been taken", err)
	}
	if _, err := c.PromoteProxyConfig(ctx, productID, EnvironmentSandbox, 2, "staging"); !IsInvalid(err) ||
		!strings.Contains(err.Error(), "environment is not included in the list") {
		t.Errorf("promoting to staging: %v, want porta's 422 on environment", err)
	}
	if _, err := c.PromoteProxyConfig(ctx, productID, EnvironmentSandbox, 9, EnvironmentProduction); !IsNotFound(err) {
		t.Errorf("promoting a version that is not there: %v, want not found", err)
	}
	checkSame(t, "production versions", []ProxyConfig{*prod}, outcome(c.ListProxyConfigs(ctx, productID, EnvironmentProduction)).must(t, "list production"))
	return deploys
}

// policyManifest is a custom policy's schema as porta's manifest requires it.
func policyManifest(name, version, summary string) json.RawMessage {
	return json.RawMessage(`{"$schema":"http://apicast.io/policy-v1.1/schema","name":"` + name + `","version":"` + version +
		`","summary":"` + summary + `","configuration":{"type":"object","properties":{"header":{"type":"string"}}}}`)
}

// registryFlow is the policy registry part of TestClientFlowAgainstSimulator: create, read, update and
// delete a custom policy; porta's refusals of a taken or inconsistent version; and, while the product's
// chain uses the policy, the refusal to delete it (in use, which passes once the chain stops using it)
// or change it (invalid).
func registryFlow(t *testing.T, f *simFixture, productID int64) {
	t.Helper()
	c, ctx := f.client, context.Background()
	if policies := outcome(c.ListCustomPolicies(ctx)).must(t, "list custom policies"); len(policies) != 0 {
		t.Errorf("registry at first: %+v, want it empty", policies)
	}
	params := CustomPolicyParams{Name: "add_header", Version: "1.0", Schema: policyManifest("Add header", "1.0", "Adds a header")}
	p := outcome(c.CreateCustomPolicy(ctx, params)).must(t, "create a custom policy")
	sameJSON := cmp.Transformer("compactJSON", compactJSON)
	checkSame(t, "created policy", &CustomPolicy{ID: p.ID, Name: "add_header", Version: "1.0", Schema: params.Schema}, p, sameJSON)
	checkSame(t, "read policy", p, outcome(c.GetCustomPolicy(ctx, p.ID)).must(t, "get the custom policy"), sameJSON)
	if _, err := c.CreateCustomPolicy(ctx, params); !IsInvalid(err) || !HasAlreadyBeenTaken(err, "version") {
		t.Errorf("creating it again: %v, want porta's 422 version has already been taken", err)
	}
	if _, err := c.CreateCustomPolicy(ctx, CustomPolicyParams{Name: "add_header", Version: "2.0", Schema: params.Schema}); !IsInvalid(err) ||
		!strings.Contains(err.Error(), "version differs from the schema version") {
		t.Errorf("a version that is not the schema's: %v, want porta's 422", err)
	}
	params.Schema = policyManifest("Add header", "1.0", "Adds one header")
	p = outcome(c.UpdateCustomPolicy(ctx, p.ID, params)).must(t, "update the custom policy")
	checkSame(t, "updated policy", &CustomPolicy{ID: p.ID, Name: "add_header", Version: "1.0", Schema: params.Schema}, p, sameJSON)
	checkSame(t, "listed policies", []CustomPolicy{*p}, outcome(c.ListCustomPolicies(ctx)).must(t, "list custom policies again"), sameJSON)

	// The product's chain uses it: porta takes the chain without looking the policy up, and then
	// refuses to delete or change it.
	before := outcome(c.GetPolicies(ctx, productID)).must(t, "read the chain")
	outcome(c.UpdatePolicies(ctx, productID, append([]Policy{{Name: "add_header", Version: "1.0", Configuration: json.RawMessage(`{"header":"X-Shop"}`),
		Enabled: true}}, before...))).must(t, "use the policy in the chain")
	err := c.DeleteCustomPolicy(ctx, p.ID)
	if !IsInUse(err) || IsForbidden(err) || !strings.Contains(err.Error(), "currently being used in one of your APIs") {
		t.Errorf("deleting a policy in use: %v; want in use (IsInUse true, IsForbidden false)", err)
	}
	if _, err := c.UpdateCustomPolicy(ctx, p.ID, CustomPolicyParams{Version: "1.1", Schema: policyManifest("Add header", "1.1", "Adds a header")}); !IsInvalid(err) ||
		IsInUse(err) || !strings.Contains(err.Error(), "currently being used") {
		t.Errorf("changing the version of a policy in use: %v, want porta's 422", err)
	}
	outcome(c.UpdatePolicies(ctx, productID, before)).must(t, "stop using the policy")
	mustDo(t, "delete the custom policy", c.DeleteCustomPolicy(ctx, p.ID))
	if _, err := c.GetCustomPolicy(ctx, p.ID); !IsNotFound(err) {
		t.Errorf("reading the deleted policy: %v, want not found", err)
	}
	if err := c.DeleteCustomPolicy(ctx, p.ID); !IsNotFound(err) {
		t.Errorf("deleting it again: %v, want not found", err)
	}
}
