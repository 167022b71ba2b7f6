package simulator

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The APIcast policy registry: a tenant's custom policies as porta's Admin::Api::Registry::PoliciesController
// serves them (app/controllers/admin/api/registry/policies_controller.rb) and its Policy model validates
// them (app/models/policy.rb).

// registryPolicy is one custom policy: a name and version and the policy's manifest (its JSON schema),
// kept as parsed (numbers as written).
type registryPolicy struct {
	id            int64
	name, version string
	schema        any
	stamps
}

// identifier is Policy#set_identifier (policy.rb:104-106): the "name-version" a path may name it by.
func (p *registryPolicy) identifier() string { return p.name + "-" + p.version }

// json is PolicyRepresenter (app/representers/policy_representer.rb:6-13): the schema as the object
// stored, whether it was sent as an object or as JSON text.
func (p *registryPolicy) json() map[string]any {
	return map[string]any{"id": p.id, "name": p.name, "version": p.version, "schema": p.schema,
		"created_at": p.created, "updated_at": p.updated}
}

// msgPolicyInUse is Policy's refusal to change or delete a policy a chain uses
// (policy.attributes.base.currently_in_use, config/locales/en.yml:2000).
const msgPolicyInUse = "This policy is currently being used in one of your APIs and cannot be modified."

// SetPolicyRegistry gives the tenant the policy registry or takes it away (given by default). Porta's
// registry is a rolling-update feature, policy_registry (Logic::RollingUpdates::Features::PolicyRegistry,
// app/lib/logic/rolling_updates.rb:258-262; config/rolling_updates.yml: true, false or a list of
// provider ids), which `can :manage, :policy_registry` requires (config/abilities/provider_any.rb:14).
// Without it, every /admin/api/registry/policies endpoint is 403 {"status":"Forbidden"} (registryGate).
// The per-product policy chain (proxy/policies.json) is not gated. It reports whether the tenant exists.
func (s *Simulator) SetPolicyRegistry(tenantName string, enabled bool) bool {
	return s.setOn(tenantName, func(t *tenant) { t.policyRegistryDenied = !enabled })
}

// registryGate is PoliciesController's before_action :authorize_policies (policies_controller.rb:11,50-52),
// which runs before anything is looked up or validated: the ability needs a tenant, not master
// (account.tenant?), with the policy_registry feature (SetPolicyRegistry); without it CanCan's
// AccessDenied is answered 403 {"status":"Forbidden"} (ErrorHandling#handle_access_denied,
// app/controllers/concerns/error_handling.rb:26-28,40-64). The token's scope is checked before, as
// porta authenticates first (Simulator.SetTokenScopes).
func registryGate(h handlerFunc) handlerFunc {
	return func(r *request) answer {
		if r.t.policyRegistryDenied || r.t == r.sim.master {
			return forbidden()
		}
		return h(r)
	}
}

func registryRoutes() []route {
	rs := registryEndpoints()
	for i := range rs {
		rs[i].handle = registryGate(rs[i].handle)
	}
	return rs
}

// registryEndpoints are the policy registry's endpoints, ungated.
func registryEndpoints() []route {
	return []route{
		// index: every policy of the tenant, by id, not paged, {"policies":[{"policy":..}]}
		// (policies_controller.rb:16-18; PoliciesRepresenter).
		handle("GET", "/admin/api/registry/policies.json", func(r *request) answer {
			return listOf("policies", "policy", sortedIDs(r.t.registry, nil), jsonOf(r.t.registry), r.form, unpaged)
		}),
		handle("POST", "/admin/api/registry/policies.json", createRegistryPolicy),
		handle("GET", "/admin/api/registry/policies/{id}.json", func(r *request) answer {
			return withRegistryPolicy(r, func(p *registryPolicy) answer { return ok("policy", p.json()) })
		}).withText("id"),
		handle("PUT", "/admin/api/registry/policies/{id}.json", updateRegistryPolicy).withText("id"),
		// destroy: refused while a chain uses the policy (before_destroy :validate_not_in_use,
		// policy.rb:14,98-102), which the responder renders 403 with the errors; else 200, no body.
		handle("DELETE", "/admin/api/registry/policies/{id}.json", func(r *request) answer {
			return withRegistryPolicy(r, func(p *registryPolicy) answer {
				if r.t.policyInUse(p.name, p.version) {
					return refused(msgPolicyInUse)
				}
				delete(r.t.registry, p.id)
				return deleted()
			})
		}).withText("id"),
	}
}

// withRegistryPolicy finds the policy of the path's {id}, its numeric id or its exact "name-version"
// (Policy.find_by_id_or_name_version!, policy.rb:32-38; the first by id when both match): 404 when
// none is.
func withRegistryPolicy(r *request, f func(*registryPolicy) answer) answer {
	key := r.texts["id"]
	id, numeric := strconv.ParseInt(key, 10, 64)
	for _, pid := range sortedIDs(r.t.registry, nil) {
		if p := r.t.registry[pid]; (numeric == nil && p.id == id) || p.identifier() == key {
			return f(p)
		}
	}
	return notFound()
}

// policyForm reads the policy parameters as PoliciesController#policy_params does
// (policies_controller.rb:54-60): name, version and schema, top-level (wrapped into policy by
// wrap_parameters) or as policy[...]; with none of them "policy" is missing, and the schema is required
// on an update too, so a request without one, or a blank one, is 400 in text. The schema is JSON text
// (an object in a JSON body arrives here as its text, see readForm), parsed by Policy#schema=
// (policy.rb:21-26); text that is not JSON leaves the schema unset (badSchema). A form value "{}" passes
// the require and fails validation, as porta's does; a JSON body's empty object, which porta's require
// refuses with 400, is taken like it.
func policyForm(r *request) (schema any, badSchema bool, refusal answer) {
	if !has(r, "name") && !has(r, "version") && !has(r, "schema") {
		return nil, false, parameterMissing("policy")
	}
	text := strings.TrimSpace(r.form.Get("schema"))
	if text == "" {
		return nil, false, parameterMissing("schema")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // 1.0 stays 1.0, as Ruby's JSON keeps it
	if err := dec.Decode(&schema); err != nil || dec.More() {
		return nil, true, answer{}
	}
	return schema, false, answer{}
}

// createRegistryPolicy is PoliciesController#create: 201 with the policy, or 422 with Policy's errors
// (policyErrors). A schema that is not JSON leaves it unset: can't be blank, and so on.
func createRegistryPolicy(r *request) answer {
	schema, _, refusal := policyForm(r)
	if refusal.code != 0 {
		return refusal
	}
	p := &registryPolicy{name: r.form.Get("name"), version: r.form.Get("version"), schema: schema, stamps: newStamps()}
	if a := r.t.policyErrors(p, nil).answer(); a.code != 0 {
		return a
	}
	p.id = r.t.id()
	r.t.registry[p.id] = p
	return created("policy", p.json())
}

// updateRegistryPolicy is PoliciesController#update: the name and version sent, and the schema (the
// old one kept when the text sent is not JSON: Policy#schema= adds an error that valid? clears, a quirk
// of porta's), validated as on create and, when name, version or schema changes, refused while a chain
// uses the policy as it was (422, base currently_in_use: validate :validate_not_in_use, on: :update,
// if: :readonly_attributes_changed?, policy.rb:13,64-70). 200 with the policy.
func updateRegistryPolicy(r *request) answer {
	return withRegistryPolicy(r, func(p *registryPolicy) answer {
		schema, badSchema, refusal := policyForm(r)
		if refusal.code != 0 {
			return refusal
		}
		next := *p
		if has(r, "name") {
			next.name = r.form.Get("name")
		}
		if has(r, "version") {
			next.version = r.form.Get("version")
		}
		if !badSchema {
			next.schema = schema
		}
		if a := r.t.policyErrors(&next, p).answer(); a.code != 0 {
			return a
		}
		if next.name != p.name || next.version != p.version || !reflect.DeepEqual(next.schema, p.schema) {
			next.touch()
		}
		*p = next
		return ok("policy", p.json())
	})
}

// policyErrors are Policy's validations of p (policy.rb:8-30), old being the policy as stored for an
// update (nil on create): version unique per name; name, version and schema present; the schema a valid
// policy manifest (manifestErrors); the version not "builtin" and equal to the schema's; on update, not
// changing the name, version or schema of a policy in use; the identifier "name-version" unique; name
// and version at most 255 characters. The account checks (a tenant, not master) are not modelled.
func (t *tenant) policyErrors(p, old *registryPolicy) fieldErrors {
	errs := fieldErrors{}
	for _, o := range t.registry {
		if o.id != p.id && o.name == p.name && o.version == p.version {
			errs.add("version", msgTaken)
			break
		}
	}
	if blank(p.name) {
		errs.add("name", "can't be blank")
	}
	if blank(p.version) {
		errs.add("version", "can't be blank")
	}
	if blank(p.schema) {
		errs.add("schema", "can't be blank")
	}
	for _, m := range manifestErrors(p.schema) {
		errs.add("schema", m)
	}
	if p.version == "builtin" {
		errs.add("version", "cannot be 'builtin'")
	} else if p.version != schemaVersion(p.schema) {
		errs.add("version", "differs from the schema version")
	}
	if old != nil && (p.name != old.name || p.version != old.version || !reflect.DeepEqual(p.schema, old.schema)) &&
		t.policyInUse(old.name, old.version) {
		errs.add("base", msgPolicyInUse)
	}
	for _, o := range t.registry {
		if o.id != p.id && o.identifier() == p.identifier() {
			errs.add("identifier", msgTaken)
			break
		}
	}
	for field, v := range map[string]string{"name": p.name, "version": p.version} {
		if utf8.RuneCountInString(v) > 255 {
			errs.add(field, "is too long (maximum is 255 characters)")
		}
	}
	return errs
}

// schemaVersion is schema&.dig('version').to_s: the manifest's version as text ("" when none).
func schemaVersion(schema any) string {
	obj, _ := schema.(map[string]any)
	switch v := obj["version"].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	default:
		raw, _ := json.Marshal(v)
		return string(raw)
	}
}

// policyInUse is Policy#in_use? (policy.rb:68-70, Proxy#find_policy_config_by, proxy.rb:145-147):
// some product's policy chain has an entry of that name and version, enabled or not. Only the tenant's
// own products count.
func (t *tenant) policyInUse(name, version string) bool {
	for _, s := range t.services {
		for _, entry := range s.policies {
			if e, _ := entry.(map[string]any); e["name"] == name && e["version"] == version {
				return true
			}
		}
	}
	return false
}

// The manifest meta-schemas a policy's schema is validated against, by the $schema it names
// (ThreeScale::Policies::Specification, app/lib/three_scale/policies/specification.rb:13-56): the
// APIcast manifests v1.1 (the default, when $schema is absent or blank) and v1. The simulator also takes
// JSON Schema draft-07, "http://json-schema.org/draft-07/schema#", validated as a v1 manifest: porta
// before 2025-04 (commit 47fa57d73) validated every schema so, and 3scale-operator's
// CustomPolicyDefinition sample and docs use it; porta now answers it "unsupported schema". Any other
// $schema is "unsupported schema" here too.
var supportedManifests = map[string]bool{
	"http://apicast.io/policy-v1.1/schema":   true,
	"http://apicast.io/policy-v1/schema":     true,
	"http://json-schema.org/draft-07/schema": true,
}

// manifestVersionPattern is the manifests' version pattern, ^((\d+\.)?(\d+\.)?(\*|\d+))|builtin$, as
// Ruby matches it: unanchored, ^ and $ at any line.
var manifestVersionPattern = regexp.MustCompile(`(?m)^((\d+\.)?(\d+\.)?(\*|\d+))|builtin$`)

// manifestErrors validates a policy's schema as Specification#valid? does with json_schemer, in its
// "classic" messages: the $schema first (stripped of a trailing "#" and of its fragment, so that
// "http://apicast.io/policy-v1/schema#manifest#" is v1), then the manifest (apicast-policy-v1{,.1}.schema.json):
// an object whose name is a non-empty string, summary a string of at most 75 characters, description a
// non-empty string or a non-empty array of strings, version a string matching the version pattern, and
// with name, version, configuration and summary present (configuration may be anything). v1.1's order
// property is not checked.
func manifestErrors(schema any) []string {
	obj, isObject := schema.(map[string]any)
	if v, set := obj["$schema"]; set && !blank(v) {
		id, _ := v.(string)
		id = strings.TrimSuffix(id, "#")
		if i := strings.Index(id, "#"); i >= 0 {
			id = id[:i]
		}
		if !supportedManifests[id] {
			return []string{"unsupported schema"}
		}
	}
	if !isObject {
		return []string{"value at root is not an object"}
	}
	var errs []string
	stringAt := func(field string, check func(s string)) {
		v, set := obj[field]
		if !set {
			return
		}
		s, isString := v.(string)
		if !isString {
			errs = append(errs, "value at `/"+field+"` is not a string")
			return
		}
		check(s)
	}
	stringAt("name", func(s string) {
		if s == "" {
			errs = append(errs, "string length at `/name` is less than: 1")
		}
	})
	stringAt("summary", func(s string) {
		if utf8.RuneCountInString(s) > 75 {
			errs = append(errs, "string length at `/summary` is greater than: 75")
		}
	})
	if v, set := obj["description"]; set && !validDescription(v) {
		errs = append(errs, "value at `/description` does not match exactly one `oneOf` schema")
	}
	stringAt("version", func(s string) {
		if !manifestVersionPattern.MatchString(s) {
			errs = append(errs, "string at `/version` does not match pattern: "+manifestVersionPattern.String()[len("(?m)"):])
		}
	})
	var missing []string
	for _, field := range []string{"name", "version", "configuration", "summary"} {
		if _, set := obj[field]; !set {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, "object at root is missing required properties: "+strings.Join(missing, ", "))
	}
	return errs
}

// validDescription is the manifest's description: a non-empty string, or a non-empty array of strings.
func validDescription(v any) bool {
	switch d := v.(type) {
	case string:
		return d != ""
	case []any:
		for _, line := range d {
			if _, isString := line.(string); !isString {
				return false
			}
		}
		return len(d) > 0
	}
	return false
}
