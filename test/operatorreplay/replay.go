// Package operatorreplay makes on a 3scale tenant what 3scale-operator's capability controllers make from
// their resources, so that apimsync's tests can start from a tenant 3scale-operator filled: the export
// and the conversion must adopt it with no write.
//
// Replay sends, for each resource, the writes 3scale-operator's controllers send when they create it
// on an empty tenant, in their order and with their values and defaults, as read in 3scale-operator's
// source (controllers/capabilities, pkg/controller/helper and 3scale-porta-go-client v0.12.0):
//
//   - Backend: create with name, system_name (derived from the name without its non-alphanumeric runs,
//     case kept) and private_endpoint; an update with the description; methods under hits, then metrics;
//     mapping rules in order, each with position = its index + 1 and last only when set.
//   - Product: create with name and system_name; an update with description, deployment_option and
//     backend_version, each only when set (userkey "1", appKeyAppID "2", oidc "oidc"); backend usages;
//     one proxy update with the gateway settings that differ; methods, metrics; porta's default rule
//     GET / deleted, or updated in place when the first rule is GET /; the rules; per plan a create with
//     system_name and name both the plan's key, an update with the fields set (state_event=publish for
//     published), limits, pricing rules; the policy chain (apicast appended when missing; a
//     configurationRef read from its Secret's key "configuration") written only when it differs from
//     porta's; the OIDC flows when set.
//   - DeveloperAccount: a signup with its admin DeveloperUser's username, email and password; billing
//     and charging when set. Other DeveloperUsers: a create with their password, an activation, and the
//     admin role when asked.
//   - Application: a create with name, description (always) and plan, and the credentials of
//     authSecretRef (UserKey, or ApplicationID and ApplicationKey); a suspension when asked.
//   - ActiveDoc: a create with the document as kin-openapi v0.94 writes it back (JSON, keys sorted,
//     "components":{} when it has none), the system name derived lowercased, the product when
//     productSystemName is set.
//   - CustomPolicyDefinition: a create without the manifest's description, then an update with it.
//   - ProxyConfigPromote: a deploy to staging, then with production: true the promotion of staging's
//     latest version.
//
// Two differences, neither of which changes what 3scale keeps for apimsync: the calls go through
// apimsync's client (it PATCHes the proxy where 3scale-operator PUTs it, and sends account flags in an
// update after the signup rather than in it), and 3scale-operator's managed_by annotations are not sent.
// Map-keyed children (metrics, methods, plans, usages), which 3scale-operator creates in Go's random map
// order, are created in key order, so that a run is repeatable.
package operatorreplay

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/internal/operatorapi"
)

//go:embed workload.yaml
var workload []byte

// Workload returns the 3scale-operator resources of workload.yaml (a team's GitOps repository: backends,
// products with plans and policies, accounts with users, applications, an ActiveDoc, a custom policy, a
// promotion) and the Secrets they read, without a namespace.
func Workload() ([]*unstructured.Unstructured, error) {
	return Decode(bytes.NewReader(workload))
}

// Decode reads a stream of YAML or JSON documents into objects.
func Decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// nonAlphanumeric is what 3scale-operator removes from a name to derive a system name
// (apis/capabilities/v1beta1/backend_types.go and product_types.go).
var nonAlphanumeric = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// replay holds what the resources made so far, by 3scale-operator's keys.
type replay struct {
	ctx      context.Context
	c        *tsclient.Client
	objs     map[string][]*unstructured.Unstructured // by kind
	secrets  map[string]map[string]string            // by name: key → value
	backends map[string]int64                        // by system name
	products map[string]int64                        // by object name
	bySystem map[string]int64                        // product ids by system name
	accounts map[string]int64                        // by object name
}

// Replay makes on the tenant of c what 3scale-operator makes from objs (and the Secrets among them).
// It stops at the first refusal, naming the resource.
func Replay(ctx context.Context, c *tsclient.Client, objs []*unstructured.Unstructured) error {
	r := &replay{ctx: ctx, c: c, objs: map[string][]*unstructured.Unstructured{}, secrets: map[string]map[string]string{},
		backends: map[string]int64{}, products: map[string]int64{}, bySystem: map[string]int64{}, accounts: map[string]int64{}}
	for _, o := range objs {
		if o.GetKind() == "Secret" {
			r.secrets[o.GetName()] = secretData(o)
			continue
		}
		r.objs[o.GetKind()] = append(r.objs[o.GetKind()], o)
	}
	// 3scale-operator's order: a Product waits for its Backends, an Application for its account and
	// product, an ActiveDoc's product is looked up when it is made; a custom policy comes before the
	// chains that name it.
	steps := []struct {
		kind string
		do   func(*unstructured.Unstructured) error
	}{
		{"CustomPolicyDefinition", r.customPolicy}, {"Backend", r.backend}, {"Product", r.product},
		{"DeveloperAccount", r.account}, {"Application", r.application}, {"ActiveDoc", r.activeDoc},
		{"ProxyConfigPromote", r.promote},
	}
	for _, s := range steps {
		for _, o := range r.objs[s.kind] {
			if err := s.do(o); err != nil {
				return fmt.Errorf("%s %s: %w", s.kind, o.GetName(), err)
			}
		}
	}
	return nil
}

// secretData returns a Secret's values, from data (base64) or stringData.
func secretData(o *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	sd, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
	maps.Copy(out, sd)
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range data {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			out[k] = string(b)
		}
	}
	return out
}

func spec[T any](o *unstructured.Unstructured) (*T, error) {
	var out T
	s, _, _ := unstructured.NestedMap(o.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s, &out); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return &out, nil
}

func (r *replay) secret(name, key string) (string, error) {
	v, ok := r.secrets[name][key]
	if !ok {
		return "", fmt.Errorf("no key %q in a Secret %q of the input", key, name)
	}
	return v, nil
}

func derived(systemName, name string) string {
	if systemName != "" {
		return systemName
	}
	return nonAlphanumeric.ReplaceAllString(name, "")
}

func (r *replay) backend(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.BackendSpec](o)
	if err != nil {
		return err
	}
	b, err := r.c.CreateBackend(r.ctx, tsclient.BackendParams{Name: s.Name, SystemName: derived(s.SystemName, s.Name), PrivateEndpoint: s.PrivateBaseURL})
	if err != nil {
		return err
	}
	r.backends[b.SystemName] = b.ID
	// 3scale-operator compares the endpoint as sent with the one porta stored (with its default port
	// made explicit) and sends it again when they differ, with the description when there is one.
	var upd tsclient.BackendParams
	if b.PrivateEndpoint != s.PrivateBaseURL {
		upd.PrivateEndpoint = s.PrivateBaseURL
	}
	if s.Description != "" {
		upd.Description = &s.Description
	}
	if upd != (tsclient.BackendParams{}) {
		if _, err := r.c.UpdateBackend(r.ctx, b.ID, upd); err != nil {
			return err
		}
	}
	return r.children(tsclient.BackendScope(b.ID), s.Metrics, s.Methods, s.MappingRules)
}

// children makes a product's or backend's methods, metrics and mapping rules.
func (r *replay) children(scope tsclient.Scope, metrics map[string]operatorapi.Metric, methods map[string]operatorapi.Method, rules []operatorapi.MappingRule) error {
	ids, err := r.metricIDs(scope)
	if err != nil {
		return err
	}
	hits := ids["hits"]
	for _, name := range slices.Sorted(maps.Keys(methods)) {
		m := methods[name]
		made, err := r.c.CreateMethod(r.ctx, scope, hits, tsclient.MethodParams{SystemName: name, FriendlyName: m.FriendlyName, Description: m.Description})
		if err != nil {
			return fmt.Errorf("method %s: %w", name, err)
		}
		ids[name] = made.ID
	}
	for _, name := range slices.Sorted(maps.Keys(metrics)) {
		m := metrics[name]
		if name == "hits" {
			if m.FriendlyName == "Hits" && m.Unit == "hit" && m.Description == "Number of API hits" {
				continue // porta's own: 3scale-operator sends nothing
			}
			if _, err := r.c.UpdateMetric(r.ctx, scope, hits, tsclient.MetricParams{FriendlyName: m.FriendlyName, Unit: m.Unit, Description: m.Description}); err != nil {
				return fmt.Errorf("metric hits: %w", err)
			}
			continue
		}
		made, err := r.c.CreateMetric(r.ctx, scope, tsclient.MetricParams{SystemName: name, FriendlyName: m.FriendlyName, Unit: m.Unit, Description: m.Description})
		if err != nil {
			return fmt.Errorf("metric %s: %w", name, err)
		}
		ids[name] = made.ID
	}
	existing, err := r.c.ListMappingRules(r.ctx, scope)
	if err != nil {
		return err
	}
	kept := int64(0)
	for _, e := range existing { // porta's default GET / of a new product
		if len(rules) > 0 && e.HTTPMethod == rules[0].HTTPMethod && e.Pattern == rules[0].Pattern && e.Position == 1 {
			first := rules[0]
			rules, kept = rules[1:], 1
			upd := tsclient.MappingRuleParams{MetricID: ids[first.MetricMethodRef], Delta: increment(first), Last: first.Last}
			if _, err := r.c.UpdateMappingRule(r.ctx, scope, e.ID, upd); err != nil {
				return err
			}
			continue
		}
		if err := r.c.DeleteMappingRule(r.ctx, scope, e.ID); err != nil {
			return err
		}
	}
	for i, m := range rules {
		id, ok := ids[m.MetricMethodRef]
		if !ok {
			return fmt.Errorf("mapping rule %s %s: no metric or method %q", m.HTTPMethod, m.Pattern, m.MetricMethodRef)
		}
		p := tsclient.MappingRuleParams{HTTPMethod: m.HTTPMethod, Pattern: m.Pattern, MetricID: id, Delta: increment(m), Last: m.Last, Position: int64(i) + 1 + kept}
		if _, err := r.c.CreateMappingRule(r.ctx, scope, p); err != nil {
			return fmt.Errorf("mapping rule %s %s: %w", m.HTTPMethod, m.Pattern, err)
		}
	}
	return nil
}

func increment(m operatorapi.MappingRule) int64 {
	if m.Increment == nil {
		return 1
	}
	return *m.Increment
}

// metricIDs returns the ids of a product's or backend's metrics and methods by system name (a
// backend's, which porta suffixes with ".<backend id>", without the suffix).
func (r *replay) metricIDs(scope tsclient.Scope) (map[string]int64, error) {
	ms, err := r.c.ListMetrics(r.ctx, scope)
	if err != nil {
		return nil, err
	}
	ids := map[string]int64{}
	for _, m := range ms {
		name, _, _ := strings.Cut(m.SystemName, ".")
		ids[name] = m.ID
	}
	return ids, nil
}

func (r *replay) product(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.ProductSpec](o)
	if err != nil {
		return err
	}
	p, err := r.c.CreateProduct(r.ctx, tsclient.ProductParams{Name: s.Name, SystemName: derived(s.SystemName, s.Name)})
	if err != nil {
		return err
	}
	r.products[o.GetName()], r.bySystem[p.SystemName] = p.ID, p.ID
	auth, gateway, upd := r.deployment(s)
	if s.Description != "" {
		upd.Description = &s.Description
	}
	if upd != (tsclient.ProductParams{}) {
		if _, err := r.c.UpdateProduct(r.ctx, p.ID, upd); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.BackendUsages)) {
		bid, ok := r.backends[name]
		if !ok {
			return fmt.Errorf("backend usage: no backend %q", name)
		}
		if _, err := r.c.CreateBackendUsage(r.ctx, p.ID, tsclient.BackendUsageParams{BackendAPIID: bid, Path: s.BackendUsages[name].Path}); err != nil {
			return err
		}
	}
	if err := r.proxy(p.ID, gateway); err != nil {
		return err
	}
	scope := tsclient.ProductScope(p.ID)
	if err := r.children(scope, s.Metrics, s.Methods, s.MappingRules); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(s.ApplicationPlans)) {
		if err := r.plan(p.ID, scope, name, s.ApplicationPlans[name]); err != nil {
			return fmt.Errorf("plan %s: %w", name, err)
		}
	}
	if err := r.policies(p.ID, s.Policies); err != nil {
		return err
	}
	if auth != nil && auth.OIDC != nil && auth.OIDC.AuthenticationFlow != nil {
		f := auth.OIDC.AuthenticationFlow
		if _, err := r.c.UpdateOIDCConfiguration(r.ctx, p.ID, tsclient.OIDCConfiguration{StandardFlowEnabled: f.StandardFlowEnabled,
			ImplicitFlowEnabled: f.ImplicitFlowEnabled, ServiceAccountsEnabled: f.ServiceAccountsEnabled, DirectAccessGrantsEnabled: f.DirectAccessGrantsEnabled}); err != nil {
			return err
		}
	}
	return nil
}

// deployment returns the product's authentication, the proxy attributes 3scale-operator would set (by
// porta's names) and the service attributes it would update.
func (r *replay) deployment(s *operatorapi.ProductSpec) (*operatorapi.Authentication, map[string]string, tsclient.ProductParams) {
	gateway := map[string]string{}
	var upd tsclient.ProductParams
	if s.Deployment == nil {
		return nil, gateway, upd
	}
	var auth *operatorapi.Authentication
	if h := s.Deployment.ApicastHosted; h != nil {
		upd.DeploymentOption, auth = "hosted", h.Authentication
	} else if m := s.Deployment.ApicastSelfManaged; m != nil {
		upd.DeploymentOption, auth = "self_managed", m.Authentication
		set(gateway, "endpoint", m.ProductionPublicBaseURL)
		set(gateway, "sandbox_endpoint", m.StagingPublicBaseURL)
	}
	var g operatorapi.Gateway
	switch {
	case auth == nil:
	case auth.UserKey != nil:
		upd.BackendVersion, g = "1", auth.UserKey.Gateway
		set(gateway, "auth_user_key", auth.UserKey.AuthUserKey)
	case auth.AppKeyAppID != nil:
		upd.BackendVersion, g = "2", auth.AppKeyAppID.Gateway
		set(gateway, "auth_app_id", auth.AppKeyAppID.AppID)
		set(gateway, "auth_app_key", auth.AppKeyAppID.AppKey)
	case auth.OIDC != nil:
		o := auth.OIDC
		upd.BackendVersion, g = "oidc", o.Gateway
		issuer := o.IssuerEndpoint
		if o.IssuerEndpointRef != nil {
			issuer = r.secrets[o.IssuerEndpointRef.Name]["issuerEndpoint"]
		}
		gateway["oidc_issuer_endpoint"] = issuer
		gateway["oidc_issuer_type"] = o.IssuerType
		set(gateway, "jwt_claim_with_client_id", o.JWTClaimWithClientID)
		set(gateway, "jwt_claim_with_client_id_type", o.JWTClaimWithClientIDType)
	}
	set(gateway, "credentials_location", g.Credentials)
	if sec := g.Security; sec != nil {
		set(gateway, "hostname_rewrite", sec.HostHeader)
		set(gateway, "secret_token", sec.SecretToken)
	}
	if e := g.GatewayResponse; e != nil {
		for name, v := range map[string]*int64{"auth_failed": e.ErrorStatusAuthFailed, "auth_missing": e.ErrorStatusAuthMissing,
			"no_match": e.ErrorStatusNoMatch, "limits_exceeded": e.ErrorStatusLimitsExceeded} {
			if v != nil {
				gateway["error_status_"+name] = strconv.FormatInt(*v, 10)
			}
		}
		for name, v := range map[string]*string{"headers_auth_failed": e.ErrorHeadersAuthFailed, "auth_failed": e.ErrorAuthFailed,
			"headers_auth_missing": e.ErrorHeadersAuthMissing, "auth_missing": e.ErrorAuthMissing, "headers_no_match": e.ErrorHeadersNoMatch,
			"no_match": e.ErrorNoMatch, "headers_limits_exceeded": e.ErrorHeadersLimitsExceeded, "limits_exceeded": e.ErrorLimitsExceeded} {
			set(gateway, "error_"+name, v)
		}
	}
	return auth, gateway, upd
}

func set(m map[string]string, key string, v *string) {
	if v != nil {
		m[key] = *v
	}
}

// proxy writes, in one update, the gateway attributes that differ from porta's (URLs compared with
// their default port, as 3scale-operator does).
func (r *replay) proxy(serviceID int64, want map[string]string) error {
	cur, err := r.c.GetProxy(r.ctx, serviceID)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	have := map[string]any{}
	if err := json.Unmarshal(raw, &have); err != nil {
		return err
	}
	diff := tsclient.ProxyParams{}
	for k, v := range want {
		h := fmt.Sprint(have[k])
		if k == "endpoint" || k == "sandbox_endpoint" {
			h, v2 := withPort(h), withPort(v)
			if h == v2 {
				continue
			}
		} else if h == v {
			continue
		}
		diff[k] = v
	}
	if len(diff) == 0 {
		return nil
	}
	_, err = r.c.UpdateProxy(r.ctx, serviceID, diff)
	return err
}

// withPort returns a URL with its scheme's default port made explicit.
func withPort(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Port() != "" {
		return s
	}
	port := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	if port == "" {
		return s
	}
	u.Host += ":" + port
	return u.String()
}

func (r *replay) plan(serviceID int64, scope tsclient.Scope, key string, p operatorapi.Plan) error {
	made, err := r.c.CreatePlan(r.ctx, serviceID, tsclient.PlanParams{SystemName: key, Name: key})
	if err != nil {
		return err
	}
	var upd tsclient.PlanParams
	if p.Name != nil && *p.Name != key {
		upd.Name = *p.Name
	}
	if p.AppsRequireApproval != nil && *p.AppsRequireApproval {
		upd.ApprovalRequired = p.AppsRequireApproval
	}
	if p.TrialPeriod != nil && *p.TrialPeriod != 0 {
		upd.TrialPeriodDays = p.TrialPeriod
	}
	if p.SetupFee != nil && nonZero(string(*p.SetupFee)) {
		upd.SetupFee = string(*p.SetupFee)
	}
	if p.CostMonth != nil && nonZero(string(*p.CostMonth)) {
		upd.CostPerMonth = string(*p.CostMonth)
	}
	if p.Published != nil && *p.Published {
		upd.StateEvent = "publish"
	}
	if upd != (tsclient.PlanParams{}) {
		if _, err := r.c.UpdatePlan(r.ctx, serviceID, made.ID, upd); err != nil {
			return err
		}
	}
	product, err := r.metricIDs(scope)
	if err != nil {
		return err
	}
	metric := func(ref operatorapi.MetricRef) (int64, error) {
		ids := product
		if ref.Backend != nil {
			bid, ok := r.backends[*ref.Backend]
			if !ok {
				return 0, fmt.Errorf("no backend %q", *ref.Backend)
			}
			if ids, err = r.metricIDs(tsclient.BackendScope(bid)); err != nil {
				return 0, err
			}
		}
		id, ok := ids[ref.SystemName]
		if !ok {
			return 0, fmt.Errorf("no metric or method %q", ref.SystemName)
		}
		return id, nil
	}
	for _, l := range p.Limits {
		id, err := metric(l.MetricMethodRef)
		if err != nil {
			return fmt.Errorf("limit: %w", err)
		}
		if _, err := r.c.CreateLimit(r.ctx, made.ID, id, tsclient.LimitParams{Period: l.Period, Value: l.Value}); err != nil {
			return err
		}
	}
	for _, pr := range p.PricingRules {
		id, err := metric(pr.MetricMethodRef)
		if err != nil {
			return fmt.Errorf("pricing rule: %w", err)
		}
		if _, err := r.c.CreatePricingRule(r.ctx, made.ID, id, tsclient.PricingRuleParams{Min: pr.From, Max: pr.To, CostPerUnit: string(pr.PricePerUnit)}); err != nil {
			return err
		}
	}
	return nil
}

func nonZero(amount string) bool {
	f, err := strconv.ParseFloat(amount, 64)
	return err != nil || f != 0
}

// policies writes the chain, apicast appended when missing, when it differs from the product's.
func (r *replay) policies(serviceID int64, in []operatorapi.Policy) error {
	chain := make([]tsclient.Policy, 0, len(in)+1)
	apicast := false
	for _, p := range in {
		conf := p.Configuration
		if (len(conf) == 0 || string(conf) == "{}") && p.ConfigurationRef != nil && p.ConfigurationRef.Name != "" {
			v, err := r.secret(p.ConfigurationRef.Name, "configuration")
			if err != nil {
				return fmt.Errorf("policy %s: %w", p.Name, err)
			}
			conf = json.RawMessage(v)
		}
		if len(conf) == 0 {
			conf = json.RawMessage(`{}`)
		}
		apicast = apicast || p.Name == "apicast"
		chain = append(chain, tsclient.Policy{Name: p.Name, Version: p.Version, Configuration: conf, Enabled: p.Enabled})
	}
	if !apicast {
		chain = append(chain, tsclient.Policy{Name: "apicast", Version: "builtin", Configuration: json.RawMessage(`{}`), Enabled: true})
	}
	cur, err := r.c.GetPolicies(r.ctx, serviceID)
	if err != nil {
		return err
	}
	if samePolicies(cur, chain) {
		return nil
	}
	_, err = r.c.UpdatePolicies(r.ctx, serviceID, chain)
	return err
}

func samePolicies(a, b []tsclient.Policy) bool {
	norm := func(ps []tsclient.Policy) string {
		out := make([]map[string]any, 0, len(ps))
		for _, p := range ps {
			var conf any
			_ = json.Unmarshal(p.Configuration, &conf)
			out = append(out, map[string]any{"n": p.Name, "v": p.Version, "e": p.Enabled, "c": conf})
		}
		raw, _ := json.Marshal(out)
		return string(raw)
	}
	return norm(a) == norm(b)
}

func (r *replay) account(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.DeveloperAccountSpec](o)
	if err != nil {
		return err
	}
	var admin *operatorapi.DeveloperUserSpec
	var others []*operatorapi.DeveloperUserSpec
	for _, uo := range r.objs["DeveloperUser"] {
		u, err := spec[operatorapi.DeveloperUserSpec](uo)
		if err != nil {
			return fmt.Errorf("DeveloperUser %s: %w", uo.GetName(), err)
		}
		if u.DeveloperAccountRef.Name != o.GetName() {
			continue
		}
		if admin == nil && u.Role != nil && *u.Role == "admin" {
			admin = u
		} else {
			others = append(others, u)
		}
	}
	if admin == nil {
		return errors.New("3scale-operator waits for an admin DeveloperUser of the account")
	}
	password, err := r.secret(admin.PasswordCredentialsRef.Name, "password")
	if err != nil {
		return err
	}
	a, err := r.c.Signup(r.ctx, tsclient.SignupParams{OrgName: s.OrgName, Username: admin.Username, Email: admin.Email, Password: password})
	if err != nil {
		return err
	}
	r.accounts[o.GetName()] = a.ID
	if s.MonthlyBillingEnabled != nil || s.MonthlyChargingEnabled != nil {
		if _, err := r.c.UpdateAccount(r.ctx, a.ID, tsclient.AccountParams{MonthlyBillingEnabled: s.MonthlyBillingEnabled, MonthlyChargingEnabled: s.MonthlyChargingEnabled}); err != nil {
			return err
		}
	}
	for _, u := range others {
		password, err := r.secret(u.PasswordCredentialsRef.Name, "password")
		if err != nil {
			return err
		}
		made, err := r.c.CreateUser(r.ctx, a.ID, tsclient.UserParams{Username: u.Username, Email: u.Email, Password: password})
		if err != nil {
			return fmt.Errorf("user %s: %w", u.Username, err)
		}
		if _, err := r.c.ActivateUser(r.ctx, a.ID, made.ID); err != nil {
			return err
		}
		if u.Role != nil && *u.Role == "admin" {
			if _, err := r.c.SetUserRole(r.ctx, a.ID, made.ID, "admin"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *replay) application(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.ApplicationSpec](o)
	if err != nil {
		return err
	}
	if s.AccountCR == nil || s.ProductCR == nil {
		return errors.New("accountCR and productCR are required")
	}
	accountID, ok := r.accounts[s.AccountCR.Name]
	if !ok {
		return fmt.Errorf("no DeveloperAccount %q in the input", s.AccountCR.Name)
	}
	serviceID, ok := r.products[s.ProductCR.Name]
	if !ok {
		return fmt.Errorf("no Product %q in the input", s.ProductCR.Name)
	}
	plans, err := r.c.ListPlans(r.ctx, serviceID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(plans, func(p tsclient.ApplicationPlan) bool { return p.SystemName == s.ApplicationPlanName })
	if i < 0 {
		return fmt.Errorf("no plan %q", s.ApplicationPlanName)
	}
	p := tsclient.ApplicationParams{PlanID: plans[i].ID, Name: s.Name, Description: &s.Description}
	if s.AuthSecretRef != nil {
		creds := r.secrets[s.AuthSecretRef.Name]
		p.UserKey, p.ApplicationID, p.ApplicationKey = creds["UserKey"], creds["ApplicationID"], creds["ApplicationKey"]
	}
	app, err := r.c.CreateApplication(r.ctx, accountID, p)
	if err != nil {
		return err
	}
	if s.Suspend {
		_, err = r.c.SuspendApplication(r.ctx, accountID, app.ID)
	}
	return err
}

func (r *replay) activeDoc(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.ActiveDocSpec](o)
	if err != nil {
		return err
	}
	ref := s.ActiveDocOpenAPIRef.SecretRef
	if ref == nil || len(r.secrets[ref.Name]) != 1 {
		return errors.New("the replay reads a document from a Secret of the input with one key")
	}
	var doc string
	for _, v := range r.secrets[ref.Name] {
		doc = v
	}
	parsed, err := openapi3.NewLoader().LoadFromData([]byte(doc))
	if err != nil {
		return err
	}
	body, err := asKinOpenAPIv094(parsed)
	if err != nil {
		return err
	}
	systemName := strings.ToLower(nonAlphanumeric.ReplaceAllString(s.Name, ""))
	if s.SystemName != nil {
		systemName = *s.SystemName
	}
	p := tsclient.ActiveDocParams{Name: s.Name, SystemName: systemName, Description: s.Description, Published: s.Published,
		SkipSwaggerValidations: s.SkipSwaggerValidations, Body: string(body)}
	if s.ProductSystemName != nil {
		id, ok := r.bySystem[*s.ProductSystemName]
		if !ok {
			return fmt.Errorf("no product %q", *s.ProductSystemName)
		}
		p.ServiceID = &id
	}
	_, err = r.c.CreateActiveDoc(r.ctx, p)
	return err
}

// asKinOpenAPIv094 is a loaded document as 3scale-operator sends it to 3scale: kin-openapi's JSON
// serialisation as v0.94 (3scale-operator's version) writes it. go.mod has a later kin-openapi, whose
// output differs in one place that matters here: v0.94's T.Components is a struct value, which its jsoninfo
// encoder never leaves out ("omitempty" does not apply to a struct), so a document without components is
// stored with "components":{}; the later version has a *Components and leaves a nil one out. Both sort the
// keys and write no space; porta keeps the body as it is sent.
func asKinOpenAPIv094(doc *openapi3.T) ([]byte, error) {
	body, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	if _, ok := top["components"]; ok {
		return body, nil
	}
	top["components"] = json.RawMessage(`{}`)
	return json.Marshal(top)
}

func (r *replay) customPolicy(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.CustomPolicyDefinitionSpec](o)
	if err != nil {
		return err
	}
	manifest := func(withDescription bool) (json.RawMessage, error) {
		m := map[string]any{"name": s.Schema.Name, "version": s.Schema.Version, "summary": s.Schema.Summary, "configuration": s.Schema.Configuration}
		if s.Schema.Schema != nil {
			m["$schema"] = *s.Schema.Schema
		}
		if withDescription && len(s.Schema.Description) > 0 {
			m["description"] = s.Schema.Description
		}
		return json.Marshal(m)
	}
	first, err := manifest(false)
	if err != nil {
		return err
	}
	made, err := r.c.CreateCustomPolicy(r.ctx, tsclient.CustomPolicyParams{Name: s.Name, Version: s.Version, Schema: first})
	if err != nil || len(s.Schema.Description) == 0 {
		return err
	}
	full, err := manifest(true)
	if err != nil {
		return err
	}
	_, err = r.c.UpdateCustomPolicy(r.ctx, made.ID, tsclient.CustomPolicyParams{Schema: full})
	return err
}

func (r *replay) promote(o *unstructured.Unstructured) error {
	s, err := spec[operatorapi.ProxyConfigPromoteSpec](o)
	if err != nil {
		return err
	}
	id, ok := r.products[s.ProductCRName]
	if !ok {
		return fmt.Errorf("no product %q", s.ProductCRName)
	}
	if err := r.c.DeployProxy(r.ctx, id); err != nil {
		return err
	}
	if s.Production == nil || !*s.Production {
		return nil
	}
	latest, err := r.c.LatestProxyConfig(r.ctx, id, "sandbox")
	if err != nil {
		return err
	}
	_, err = r.c.PromoteProxyConfig(r.ctx, id, "sandbox", latest.Version, "production")
	return err
}
