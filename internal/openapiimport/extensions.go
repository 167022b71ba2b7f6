package openapiimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/internal/operatorapi"
)

// The extensions 3scale-operator reads (its doc/openapi-3scale-extensions.md, pkg/helper/openapi_utils.go),
// read the same way: x-3scale-product at the document's root gives the Product's metrics, its policy
// chain and its application plans; x-3scale-operation on an operation gives its mapping rule's metric,
// increment and last. Unknown fields are left out, with a note (3scale-operator ignores them silently).

// productExtension is x-3scale-product: 3scale-operator's own Product types (its
// pkg/helper/openapi_utils.go reuses them), as internal/operatorapi declares them.
type productExtension struct {
	Metrics          map[string]operatorapi.Metric `json:"metrics,omitempty"`
	Policies         []operatorapi.Policy          `json:"policies,omitempty"`
	ApplicationPlans map[string]operatorapi.Plan   `json:"applicationPlans,omitempty"`
}

// operationExtension is x-3scale-operation.
type operationExtension struct {
	MappingRule struct {
		MetricMethodRef string `json:"metricMethodRef"`
		Increment       int32  `json:"increment"`
		Last            *bool  `json:"last,omitempty"`
	} `json:"mappingRule"`
}

// Metric is a metric of the Product, from x-3scale-product.
type Metric struct {
	SystemName string
	v1alpha1.MetricSpec
}

// Plan is an application plan of the Product, from x-3scale-product: its spec but for productRef.
type Plan struct {
	SystemName string
	Spec       v1alpha1.ApplicationPlanSpec
}

// Bounds of the kinds the extensions fill (their CRDs'): more is Invalid here, before anything is written.
const (
	maxMetrics   = 64
	maxPolicies  = 48 // 50 in a chain, with apicast and default_credentials
	maxPlanRules = 64
)

// PolicySecretKey is the key of a policy's configuration Secret 3scale-operator reads.
const PolicySecretKey = "configuration"

// decodeExtension decodes an extension's value into out. A field out does not have is left out with a
// note; a value of the wrong type makes the document Invalid.
func decodeExtension(where string, value any, out any, notes *[]string) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return invalid("%s: %v", where, err)
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(out); err != nil {
		if !strings.Contains(err.Error(), "unknown field") {
			return invalid("%s: %v", where, strings.TrimPrefix(err.Error(), "json: "))
		}
		*notes = append(*notes, fmt.Sprintf("%s: %s, left out (3scale-operator does not read it either)", where, strings.TrimPrefix(err.Error(), "json: ")))
		if err := json.Unmarshal(raw, out); err != nil {
			return invalid("%s: %v", where, strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	return nil
}

// systemNamePattern is what a 3scale system name of a metric or plan may be.
var systemNamePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

var periods = []string{"eternity", "year", "month", "week", "day", "hour", "minute"}

var moneyPattern = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,2})?$`)
var pricePattern = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,4})?$`)

// productExtensions reads x-3scale-product: metrics, policies and plans, checked against the methods
// the operations made.
func (api *API) productExtensions(doc *openapi3.T, opts Options) error {
	value, ok := doc.Extensions["x-3scale-product"]
	if !ok || value == nil {
		return nil
	}
	var ext productExtension
	if err := decodeExtension("x-3scale-product", value, &ext, &api.Notes); err != nil {
		return err
	}
	if opts.BackendOnly && (len(ext.Policies) > 0 || len(ext.ApplicationPlans) > 0) {
		return invalid("x-3scale-product has policies or applicationPlans, which belong to a Product, and backendOnly generates none: " +
			"remove them from the document, or import it with a Product")
	}
	if len(ext.Metrics) > maxMetrics {
		return invalid("x-3scale-product.metrics has %d metrics; a Product holds at most %d", len(ext.Metrics), maxMetrics)
	}
	methods := map[string]bool{}
	for _, m := range api.Methods {
		methods[m.SystemName] = true
	}
	for _, name := range sortedKeys(ext.Metrics) {
		m := ext.Metrics[name]
		switch {
		case !systemNamePattern.MatchString(name) || len(name) > maxNameLength:
			return invalid("x-3scale-product.metrics: %q is not a system name (letters, digits, '_' and '-', not starting with '-')", name)
		case methods[name]:
			return invalid("x-3scale-product.metrics: %q is also the method of an operation; metrics and methods share one namespace: rename the metric", name)
		case strings.TrimSpace(m.FriendlyName) == "":
			return invalid("x-3scale-product.metrics: metric %q has no friendlyName", name)
		case strings.TrimSpace(m.Unit) == "":
			return invalid("x-3scale-product.metrics: metric %q has no unit", name)
		}
		if name == "hits" {
			api.Notes = append(api.Notes, "x-3scale-product.metrics: hits sets the friendly name, unit and description of the hits metric, which always exists")
		}
		api.Metrics = append(api.Metrics, Metric{SystemName: name, MetricSpec: v1alpha1.MetricSpec{FriendlyName: cut(m.FriendlyName, maxNameLength),
			Unit: cut(m.Unit, maxNameLength), Description: cut(m.Description, maxDescription)}})
	}
	if err := api.policies(ext.Policies, opts); err != nil {
		return err
	}
	return api.plans(ext.ApplicationPlans, opts)
}

// policies makes the policy chain: the extension's, in order, and APIcast's own last unless listed (as
// 3scale-operator does: a chain without apicast does not proxy).
func (api *API) policies(in []operatorapi.Policy, opts Options) error {
	if len(in) == 0 {
		return nil
	}
	if len(in) > maxPolicies {
		return invalid("x-3scale-product.policies has %d policies; a Product's chain holds at most %d with apicast and default_credentials", len(in), maxPolicies+2)
	}
	hasAPIcast := false
	for i, p := range in {
		where := fmt.Sprintf("x-3scale-product.policies[%d]", i)
		if strings.TrimSpace(p.Name) == "" || strings.TrimSpace(p.Version) == "" {
			return invalid("%s: a policy needs a name and a version", where)
		}
		if len(p.Name) > maxNameLength || len(p.Version) > maxNameLength {
			return invalid("%s: a policy's name and version have at most %d characters", where, maxNameLength)
		}
		spec := v1alpha1.PolicySpec{Name: p.Name, Version: p.Version, Enabled: p.Enabled}
		inline := len(p.Configuration) > 0 && string(p.Configuration) != "null" && string(p.Configuration) != "{}"
		switch {
		case inline:
			var obj map[string]any
			if err := json.Unmarshal(p.Configuration, &obj); err != nil {
				return invalid("%s (%s): configuration is not a JSON object", where, p.Name)
			}
			spec.Configuration = &apiextensionsv1.JSON{Raw: p.Configuration}
		case p.ConfigurationRef != nil && p.ConfigurationRef.Name != "":
			if ns := p.ConfigurationRef.Namespace; ns != "" && ns != opts.Namespace {
				return invalid("%s (%s): configurationRef names a Secret of namespace %q; apimsync reads Secrets of the OpenAPI's own namespace only", where, p.Name, ns)
			}
			spec.ConfigurationRef = &v1alpha1.LocalSecretKeyRef{Name: p.ConfigurationRef.Name, Key: PolicySecretKey}
		}
		if p.Name == "apicast" {
			hasAPIcast = true
		}
		api.Policies = append(api.Policies, spec)
	}
	if !hasAPIcast {
		api.Policies = append(api.Policies, v1alpha1.PolicySpec{Name: "apicast", Version: "builtin", Enabled: true, Configuration: &apiextensionsv1.JSON{Raw: []byte("{}")}})
	}
	return nil
}

// plans makes the application plans, each limit and pricing rule naming a metric or method the Product
// has (or the hits metric of the generated Backend).
func (api *API) plans(in map[string]operatorapi.Plan, opts Options) error {
	known := map[string]bool{"hits": true}
	for _, m := range api.Methods {
		known[m.SystemName] = true
	}
	for _, m := range api.Metrics {
		known[m.SystemName] = true
	}
	ref := func(where string, r operatorapi.MetricRef) (v1alpha1.MetricMethodRef, error) {
		name, backend := api.alias(r.SystemName), ""
		if r.Backend != nil {
			backend = *r.Backend
		}
		switch {
		case backend != "" && backend != opts.SystemName:
			return v1alpha1.MetricMethodRef{}, invalid("%s: metricMethodRef names backend %q, and the generated Product uses one backend only, %q", where, backend, opts.SystemName)
		case backend != "" && name != "hits":
			return v1alpha1.MetricMethodRef{}, invalid("%s: metricMethodRef names %q of backend %q, which has no metric but hits (the operations' methods are the Product's: leave backend out)", where, r.SystemName, backend)
		case backend != "":
			return v1alpha1.MetricMethodRef{SystemName: name, Backend: opts.BackendObject}, nil
		case !known[name]:
			return v1alpha1.MetricMethodRef{}, invalid("%s: metricMethodRef names %q, which is neither a metric of x-3scale-product nor the method of an operation (%s)", where, r.SystemName, strings.Join(sortedKeys(known), ", "))
		}
		return v1alpha1.MetricMethodRef{SystemName: name}, nil
	}
	for _, sys := range sortedKeys(in) {
		p := in[sys]
		where := fmt.Sprintf("x-3scale-product.applicationPlans.%s", sys)
		if !systemNamePattern.MatchString(sys) || len(sys) > maxNameLength {
			return invalid("%s: %q is not a system name (letters, digits, '_' and '-', not starting with '-')", where, sys)
		}
		spec := v1alpha1.ApplicationPlanSpec{Name: sys, SystemName: sys, Published: p.Published, ApprovalRequired: p.AppsRequireApproval}
		if p.Name != nil && strings.TrimSpace(*p.Name) != "" {
			spec.Name = cut(*p.Name, maxNameLength)
		}
		if len(p.Limits) > maxPlanRules || len(p.PricingRules) > maxPlanRules {
			return invalid("%s has %d limits and %d pricing rules; a plan holds at most %d of each", where, len(p.Limits), len(p.PricingRules), maxPlanRules)
		}
		if spec.Published == nil {
			spec.Published = new(bool) // hidden unless published, as 3scale-operator makes it
		}
		if p.TrialPeriod != nil {
			if *p.TrialPeriod < 0 || *p.TrialPeriod > 3650 {
				return invalid("%s: trialPeriod %d is not between 0 and 3650 days", where, *p.TrialPeriod)
			}
			days := int32(*p.TrialPeriod)
			spec.TrialPeriodDays = &days
		}
		for field, v := range map[string]*operatorapi.Amount{"setupFee": p.SetupFee, "costMonth": p.CostMonth} {
			if v != nil && !moneyPattern.MatchString(string(*v)) {
				return invalid("%s: %s %q is not an amount like 10 or 9.90", where, field, *v)
			}
		}
		if p.SetupFee != nil {
			spec.SetupFee = string(*p.SetupFee)
		}
		if p.CostMonth != nil {
			spec.CostMonth = string(*p.CostMonth)
		}
		seen := map[string]bool{}
		for i, l := range p.Limits {
			at := fmt.Sprintf("%s.limits[%d]", where, i)
			r, err := ref(at, l.MetricMethodRef)
			if err != nil {
				return err
			}
			if !slices.Contains(periods, l.Period) {
				return invalid("%s: period %q is not one of %s", at, l.Period, strings.Join(periods, ", "))
			}
			if l.Value < 0 {
				return invalid("%s: value %d is negative", at, l.Value)
			}
			if key := l.Period + "/" + r.Backend + "/" + r.SystemName; seen[key] {
				return invalid("%s: a second limit per %s on %q; keep one", at, l.Period, r.SystemName)
			} else {
				seen[key] = true
			}
			spec.Limits = append(spec.Limits, v1alpha1.LimitSpec{Period: v1alpha1.LimitPeriod(l.Period), Value: l.Value, MetricMethodRef: r})
		}
		for i, pr := range p.PricingRules {
			at := fmt.Sprintf("%s.pricingRules[%d]", where, i)
			r, err := ref(at, pr.MetricMethodRef)
			if err != nil {
				return err
			}
			if pr.From < 1 || pr.To < pr.From {
				return invalid("%s: the range %d-%d is not a range of units from 1 up", at, pr.From, pr.To)
			}
			if !pricePattern.MatchString(string(pr.PricePerUnit)) {
				return invalid("%s: pricePerUnit %q is not an amount like 0.05", at, pr.PricePerUnit)
			}
			for j, other := range spec.PricingRules {
				if other.MetricMethodRef == r && pr.From <= other.To && other.From <= pr.To {
					return invalid("%s (%d-%d) overlaps pricingRules[%d] (%d-%d) on %q", at, pr.From, pr.To, j, other.From, other.To, r.SystemName)
				}
			}
			spec.PricingRules = append(spec.PricingRules, v1alpha1.PricingRuleSpec{From: pr.From, To: pr.To, PricePerUnit: string(pr.PricePerUnit), MetricMethodRef: r})
		}
		api.Plans = append(api.Plans, Plan{SystemName: sys, Spec: spec})
	}
	return nil
}

// operationExtensionOf reads an operation's x-3scale-operation into its rule: the metric or method it
// counts (checked once the metrics are known: checkRules), its increment and last.
func (api *API) operationExtensionOf(verb, path string, op *openapi3.Operation, rule *Rule) error {
	value, ok := op.Extensions["x-3scale-operation"]
	if !ok || value == nil {
		return nil
	}
	var ext operationExtension
	if err := decodeExtension(fmt.Sprintf("%s %s: x-3scale-operation", verb, path), value, &ext, &api.Notes); err != nil {
		return err
	}
	mr := ext.MappingRule
	if mr.Increment < 0 {
		return invalid("%s %s: x-3scale-operation.mappingRule.increment %d is negative", verb, path, mr.Increment)
	}
	if mr.Increment > 0 {
		rule.Increment = mr.Increment
	}
	if mr.Last != nil {
		rule.Last = *mr.Last
	}
	if mr.MetricMethodRef != "" {
		rule.Method, rule.named = mr.MetricMethodRef, true
	}
	return nil
}

// checkRules checks, once metrics and methods are known, that each rule counts one of them, and that no
// two operations make the same rule (the same verb and pattern, whatever their parameters are named,
// counting the same metric).
func (api *API) checkRules() error {
	known := map[string]bool{"hits": true}
	for _, m := range api.Methods {
		known[m.SystemName] = true
	}
	for _, m := range api.Metrics {
		known[m.SystemName] = true
	}
	seen := map[string]string{}
	for i := range api.Rules {
		r := &api.Rules[i]
		if r.named {
			r.Method = api.alias(r.Method)
			if !known[r.Method] {
				return invalid("%s %s: x-3scale-operation.mappingRule.metricMethodRef names %q, which is neither a metric of x-3scale-product nor the method of an operation",
					r.Verb, r.Operation, r.Method)
			}
		}
		key := r.Verb + " " + placeholder.ReplaceAllString(r.Pattern, "{}") + " " + r.Method
		if other, ok := seen[key]; ok {
			return invalid("%s and %s make the same mapping rule (%s %s counting %q): 3scale would count such a call twice; "+
				"remove one operation, or count it on another metric with x-3scale-operation", other, r.Verb+" "+r.Operation, r.Verb, r.Pattern, r.Method)
		}
		seen[key] = r.Verb + " " + r.Operation
	}
	return nil
}

// placeholder is a path parameter of a pattern.
var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// alias is the method a name stands for: the one an operation kept when its operationId changed (the
// document names it by its new name), else the name itself.
func (api *API) alias(name string) string {
	if kept, ok := api.renamed[name]; ok {
		return kept
	}
	return name
}
