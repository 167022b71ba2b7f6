package simulator

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// serviceRoutes are the endpoints of services (products), their proxy, OIDC configuration, policy
// chain and backend usages.
func serviceRoutes() []route {
	return []route{
		handle("GET", "/admin/api/services.json", func(r *request) answer {
			// ServicesRepresenter is a wraps_collection (app/representers/services_representer.rb:4).
			return listOf("services", "service", sortedIDs(r.t.services, nil), jsonOf(r.t.services), r.form, pagedWithMetadata)
		}),
		handle("POST", "/admin/api/services.json", createService),
		handle("GET", "/admin/api/services/{id}.json", func(r *request) answer {
			return withService(r, "id", func(svc *service) answer { return ok("service", svc.json()) })
		}),
		handle("PUT", "/admin/api/services/{id}.json", updateService),
		handle("DELETE", "/admin/api/services/{id}.json", deleteService),

		handle("GET", "/admin/api/services/{service_id}/proxy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return ok("proxy", svc.proxyJSON(r.t)) })
		}),
		handle("PATCH", "/admin/api/services/{service_id}/proxy.json", updateProxy),
		// deploy: always 201 with the proxy, whether a sandbox config was made or not
		// (proxies_controller.rb:26-30; deployProxy).
		handle("POST", "/admin/api/services/{service_id}/proxy/deploy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				r.t.deploys++
				r.t.deployProxy(svc)
				return created("proxy", svc.proxyJSON(r.t))
			})
		}),
		handle("GET", "/admin/api/services/{service_id}/proxy/oidc_configuration.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return ok("oidc_configuration", svc.oidcJSON()) })
		}),
		handle("PATCH", "/admin/api/services/{service_id}/proxy/oidc_configuration.json", updateOIDC),
		handle("GET", "/admin/api/services/{service_id}/proxy/policies.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return ok("policies_config", svc.policies) })
		}),
		handle("PUT", "/admin/api/services/{service_id}/proxy/policies.json", updatePolicies),

		handle("GET", "/admin/api/services/{service_id}/backend_usages.json", listUsages),
		handle("POST", "/admin/api/services/{service_id}/backend_usages.json", createUsage),
		handle("GET", "/admin/api/services/{service_id}/backend_usages/{id}.json", func(r *request) answer {
			return withUsage(r, func(u *backendUsage) answer { return ok("backend_usage", u.json()) })
		}),
		handle("PUT", "/admin/api/services/{service_id}/backend_usages/{id}.json", updateUsage),
		handle("DELETE", "/admin/api/services/{service_id}/backend_usages/{id}.json", func(r *request) answer {
			return withUsage(r, func(u *backendUsage) answer { r.t.deleteUsage(u); return deleted() })
		}),
	}
}

func withService(r *request, param string, f func(*service) answer) answer {
	svc, found := r.t.services[r.params[param]]
	if !found {
		return notFound()
	}
	return f(svc)
}

// has reports whether a parameter was sent.
func has(r *request, key string) bool { _, found := r.form[key]; return found }

// flag reads a Rails boolean ("1", "true").
func flag(v string) bool { return v == "true" || v == "1" }

// newName checks a new object's name and system name (derived from the name when not given) as porta
// does: name present, system name well formed and not taken. It returns the system name.
func newName(r *request, nameField, kind string, taken func(systemName string) bool) (string, answer) {
	errs := fieldErrors{}
	name := strings.TrimSpace(r.form.Get(nameField))
	if name == "" {
		errs.add(nameField, "can't be blank")
	}
	sys := r.form.Get("system_name")
	if sys == "" && name != "" {
		sys = deriveSystemName(name, kind, r.t.nextID+1)
	}
	switch {
	case sys == "":
	case !systemNamePattern.MatchString(sys):
		errs.add("system_name", msgSystemNameInvalid)
	case taken(sys):
		errs.add("system_name", "has already been taken")
	}
	return sys, errs.answer()
}

func createService(r *request) answer {
	sys, a := newName(r, "name", "service", func(sys string) bool {
		for _, s := range r.t.services {
			if s.systemName == sys {
				return true
			}
		}
		return false
	})
	svc := &service{name: r.form.Get("name"), systemName: sys, description: r.form.Get("description"),
		deploymentOption: "hosted", backendVersion: "1", state: "incomplete", stamps: newStamps(),
		oidc:     map[string]bool{"standard_flow_enabled": true, "implicit_flow_enabled": false, "service_accounts_enabled": false, "direct_access_grants_enabled": false},
		policies: []any{defaultPolicy()}}
	if d := r.form.Get("deployment_option"); d != "" {
		svc.deploymentOption = d
	}
	if v := r.form.Get("backend_version"); v != "" {
		svc.backendVersion = v
	}
	if a.code != 0 {
		return a
	}
	if a := validateService(svc); a.code != 0 {
		return a
	}
	// Porta's ServiceCreator: the service comes with its hits metric (Service after_create
	// create_default_metrics) and a proxy with defaults, whose own after_create adds the mapping rule
	// GET / on hits, delta 1 (Proxy#create_default_proxy_rule, app/models/proxy.rb:93,624-628). A backend
	// gets its hits metric only (BackendApi#create_default_metrics).
	svc.id = r.t.id()
	svc.proxy = defaultProxy(svc.id, svc.systemName)
	r.t.services[svc.id] = svc
	r.t.createDefaultServicePlan(svc)
	ow := owner{ownerService, svc.id}
	rule := &mappingRule{id: r.t.id(), owner: ow, metricID: r.t.addHits(ow), pattern: "/", httpMethod: "GET", delta: 1, stamps: newStamps()}
	r.t.rules[rule.id] = rule
	r.t.placeRule(rule, false, 0)
	return created("service", svc.json())
}

func validateService(svc *service) answer {
	errs := fieldErrors{}
	switch svc.deploymentOption {
	case "hosted", "self_managed", "service_mesh_istio":
	default:
		errs.add("deployment_option", "is not included in the list")
	}
	switch svc.backendVersion {
	case "1", "2", "oidc":
	default:
		errs.add("backend_version", "is not included in the list")
	}
	return errs.answer()
}

// updateService writes the attributes sent; as Rails does, a service that did not change keeps its
// updated_at (which the gateway configuration embeds, gatewayConfig).
func updateService(r *request) answer {
	return withService(r, "id", func(svc *service) answer {
		next := *svc
		if has(r, "name") {
			if next.name = r.form.Get("name"); strings.TrimSpace(next.name) == "" {
				return unprocessable("name", "can't be blank")
			}
		}
		if has(r, "description") {
			next.description = r.form.Get("description")
		}
		if v := r.form.Get("deployment_option"); v != "" {
			next.deploymentOption = v
		}
		if v := r.form.Get("backend_version"); v != "" {
			next.backendVersion = v
		}
		if a := validateService(&next); a.code != 0 {
			return a
		}
		if next.name != svc.name || next.description != svc.description || next.deploymentOption != svc.deploymentOption ||
			next.backendVersion != svc.backendVersion {
			next.touch()
		}
		*svc = next
		return ok("service", svc.json())
	})
}

// deleteService removes a service with everything it owns: plans (with their limits and pricing
// rules), backend usages, mapping rules, metrics and methods, proxy, OIDC configuration and policies.
// Porta marks it deleted and removes the rest in the background; to the API it is gone at once.
func deleteService(r *request) answer {
	return withService(r, "id", func(svc *service) answer {
		t := r.t
		for _, id := range sortedIDs(t.plans, func(p *plan) bool { return p.serviceID == svc.id }) {
			t.deletePlan(id)
		}
		t.deleteServicePlansOf(svc.id)
		for id, u := range t.usages {
			if u.serviceID == svc.id {
				delete(t.usages, id)
			}
		}
		ow := owner{ownerService, svc.id}
		for id, m := range t.rules {
			if m.owner == ow {
				delete(t.rules, id)
			}
		}
		for id, m := range t.metrics {
			if m.owner == ow {
				delete(t.metrics, id)
			}
		}
		// Its ActiveDocs go too: has_many :api_docs_services, dependent: :destroy, deleted in the
		// background (app/models/service.rb:18-25,55-59), and hidden at once from the API, which lists
		// only the specs of accessible services (ApiDocs::Service.accessible, app/models/api_docs/service.rb:27).
		for id, d := range t.docs {
			if d.serviceID == svc.id {
				delete(t.docs, id)
			}
		}
		// Its features go too (Service has_many :features, dependent: :destroy).
		for id, f := range t.features {
			if f.serviceID == svc.id {
				delete(t.features, id)
			}
		}
		delete(t.services, svc.id)
		return deleted()
	})
}

// defaultProxy is the proxy porta creates with a service.
func defaultProxy(serviceID int64, systemName string) map[string]any {
	host := strings.ReplaceAll(systemName, "_", "-")
	return map[string]any{"service_id": serviceID,
		"endpoint":             "https://" + host + "-3scale-apicast-production.example.com:443",
		"sandbox_endpoint":     "https://" + host + "-3scale-apicast-staging.example.com:443",
		"credentials_location": "query", "auth_user_key": "user_key", "auth_app_id": "app_id", "auth_app_key": "app_key",
		"hostname_rewrite": "", "secret_token": "Shared_secret_sent_from_proxy_to_API_backend_" + strconv.FormatInt(serviceID, 16),
		"error_status_auth_failed": 403, "error_headers_auth_failed": "text/plain; charset=us-ascii", "error_auth_failed": "Authentication failed",
		"error_status_auth_missing": 403, "error_headers_auth_missing": "text/plain; charset=us-ascii", "error_auth_missing": "Authentication parameters missing",
		"error_status_no_match": 404, "error_headers_no_match": "text/plain; charset=us-ascii", "error_no_match": "No Mapping Rule matched",
		"error_status_limits_exceeded": 429, "error_headers_limits_exceeded": "text/plain; charset=us-ascii", "error_limits_exceeded": "Usage limit exceeded",
		"oidc_issuer_endpoint": nil, "oidc_issuer_type": "keycloak", "jwt_claim_with_client_id": nil, "jwt_claim_with_client_id_type": "plain",
		"policies_config": nil, "lock_version": 0}
}

// proxyJSON is the proxy as porta renders it, with its api_backend (null when the product uses no
// backend: ProxyRepresenter renders it even when nil, app/representers/proxy_representer.rb:7), its
// current policy chain and timestamps.
func (s *service) proxyJSON(t *tenant) map[string]any {
	out := make(map[string]any, len(s.proxy)+4)
	for k, v := range s.proxy {
		out[k] = v
	}
	out["api_backend"] = nil
	if b := t.apiBackend(s.id); b != nil {
		out["api_backend"] = b.privateEndpoint
	}
	out["policies_config"] = s.policies
	out["created_at"], out["updated_at"] = s.created, s.updated
	return out
}

func (s *service) oidcJSON() map[string]any {
	out := map[string]any{"id": s.id}
	for k, v := range s.oidc {
		out[k] = v
	}
	return out
}

// apiBackend is the backend porta shows and sets as a proxy's api_backend: Proxy delegates api_backend
// to its service's BackendApiProxy (app/lib/backend_api_logic/proxy_extension.rb:8,
// service_extension.rb:12,34-50), the backend of the product's first backend usage, usages being in id
// order (app/models/backend_api_config.rb:7); nil when the product uses none.
func (t *tenant) apiBackend(serviceID int64) *backendAPI {
	ids := sortedIDs(t.usages, func(u *backendUsage) bool { return u.serviceID == serviceID })
	if len(ids) == 0 {
		return nil
	}
	return t.backends[t.usages[ids[0]].backendID]
}

// proxyFields are the proxy attributes porta's Admin::Api::Services::ProxiesController permits
// (app/controllers/admin/api/services/proxies_controller.rb:34-45), but api_backend (see setAPIBackend).
var proxyFields = []string{"endpoint", "sandbox_endpoint", "credentials_location",
	"auth_app_key", "auth_app_id", "auth_user_key", "hostname_rewrite", "secret_token", "oauth_login_url", "api_test_path",
	"error_auth_failed", "error_status_auth_failed", "error_headers_auth_failed",
	"error_auth_missing", "error_status_auth_missing", "error_headers_auth_missing",
	"error_no_match", "error_status_no_match", "error_headers_no_match",
	"error_limits_exceeded", "error_status_limits_exceeded", "error_headers_limits_exceeded",
	"oidc_issuer_endpoint", "oidc_issuer_type", "jwt_claim_with_client_id", "jwt_claim_with_client_id_type"}

// updateProxy writes the proxy attributes sent, then deploys as porta's ProxiesController#update does
// after a successful update (proxies_controller.rb:18-22; deployProxy: a sandbox config when the
// configuration changed). As Rails does, a proxy that did not change keeps its lock_version and
// updated_at, so that an update sending the values it has makes no new config.
func updateProxy(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		errs := fieldErrors{}
		next := map[string]any{}
		for _, k := range proxyFields {
			if !has(r, k) {
				continue
			}
			v := r.form.Get(k)
			switch {
			case k == "credentials_location" && v != "headers" && v != "query" && v != "authorization":
				errs.add(k, "is not included in the list")
			case strings.HasPrefix(k, "error_status_"):
				n, err := strconv.Atoi(v)
				if err != nil || n < 100 || n > 999 {
					errs.add(k, "is not a number")
					continue
				}
				next[k] = n
			case k == "endpoint" || k == "sandbox_endpoint":
				v = withDefaultPort(v)
				checkProxyEndpoint(svc, k, v, errs)
				next[k] = v
			default:
				next[k] = v
			}
		}
		var apply func()
		if has(r, "api_backend") {
			apply = setAPIBackend(r.t, svc, withDefaultPort(r.form.Get("api_backend")), errs)
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		changed := apply != nil
		for k, v := range next {
			changed = changed || svc.proxy[k] != v
			svc.proxy[k] = v
		}
		if apply != nil {
			apply()
		}
		if changed {
			svc.proxy["lock_version"] = svc.proxy["lock_version"].(int) + 1
			svc.touch()
		}
		r.t.deployProxy(svc)
		return ok("proxy", svc.proxyJSON(r.t))
	})
}

// checkProxyEndpoint validates a proxy's endpoint or sandbox_endpoint as Proxy does
// (app/models/proxy.rb:52-56,99-100): blank, or an http(s) URL with a host and nothing after the port;
// not on localhost for a hosted product; and, on update, present where porta requires it: both for a
// hosted product, none for a self-managed one (apicast_configuration_driven, true by default,
// db/schema.rb:1097) nor for a service mesh (require_staging_endpoint?, require_production_endpoint?,
// proxy.rb:263-269).
func checkProxyEndpoint(svc *service, field, v string, errs fieldErrors) {
	hosted := svc.deploymentOption == "hosted"
	switch {
	case v == "" && hosted:
		errs.add(field, "can't be blank")
	case v == "":
	case !uriValid(v, []string{"http", "https"}, false):
		errs.add(field, msgProxyEndpointInvalid)
	case hosted && isLocalhost(v):
		errs.add(field, msgLocalhost)
	}
}

// setAPIBackend checks a new api_backend (already with its default port) and returns what stores it.
// Porta stores it as the private endpoint of the backend of the product's first usage; when the product
// uses none, it creates a backend named after it ("<name> Backend", "Backend of <name>", the product's
// system name) used at "/" (BackendApiProxy, service_extension.rb:34-79). Errors are the backend's
// private_endpoint errors reported on api_backend, and "invalid" on backend_api for an invalid backend
// (NestedAssociationValidator and the associated validator, proxy_extension.rb:17,
// app/validators/nested_association_validator.rb; activerecord.errors.messages.invalid, en.yml:1957).
// An unchanged value is not validated (validate_backend_api?, proxy_extension.rb:26-28).
func setAPIBackend(t *tenant, svc *service, pe string, errs fieldErrors) func() {
	b := t.apiBackend(svc.id)
	if b != nil && b.privateEndpoint == pe {
		return nil
	}
	before := len(errs["api_backend"])
	checkEndpoint("api_backend", pe, errs)
	nameTaken := false
	for _, o := range t.backends {
		nameTaken = nameTaken || (b == nil && o.systemName == svc.systemName)
	}
	if len(errs["api_backend"]) > before || nameTaken {
		errs.add("backend_api", "invalid")
		return nil
	}
	return func() {
		if b != nil {
			b.privateEndpoint = pe
			b.touch()
			return
		}
		b = &backendAPI{id: t.id(), name: svc.name + " Backend", systemName: svc.systemName, description: "Backend of " + svc.name,
			privateEndpoint: pe, stamps: newStamps()}
		t.backends[b.id] = b
		t.addHits(owner{ownerBackend, b.id})
		u := &backendUsage{id: t.id(), serviceID: svc.id, backendID: b.id, path: "/", stamps: newStamps()}
		t.usages[u.id] = u
	}
}

// oidcFields are OIDCConfiguration::Config::ATTRIBUTES.
var oidcFields = []string{"standard_flow_enabled", "implicit_flow_enabled", "service_accounts_enabled", "direct_access_grants_enabled"}

func updateOIDC(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		for _, k := range oidcFields {
			if has(r, k) {
				svc.oidc[k] = flag(r.form.Get(k))
			}
		}
		return ok("oidc_configuration", svc.oidcJSON())
	})
}

// Messages of Proxy::PoliciesConfig (activemodel.errors.models.policies_config, config/locales/en.yml:1940-1942).
const (
	msgPoliciesInvalidFormat = `has invalid format. The Correct format is: [{ "name": "apicast"... }]`
	msgPoliciesInvalidPolicy = "contains some invalid policy"
)

// defaultPolicy is Proxy::PolicyConfig::DEFAULT_POLICY as a chain stores it: only name, version,
// configuration and enabled are kept (app/models/proxy.rb:478-479,517-521).
func defaultPolicy() map[string]any {
	return map[string]any{"name": "apicast", "version": "builtin", "configuration": map[string]any{}, "enabled": true}
}

// updatePolicies replaces the policy chain as Proxy::PoliciesConfig does (app/models/proxy.rb:539-600):
// policies_config is a JSON text (PoliciesConfigParams passes a string through,
// app/services/policies_config_params.rb:12), read as Array(JSON.parse(text)), a blank one as [];
// each policy keeps only name, version, configuration and enabled, a null one left out (PolicyConfig,
// proxy.rb:488-498,517-521: a policy sent without "enabled" is answered without it, and APIcast leaves
// it out of the chain, proxy.rb:571-573); a chain without a policy named "apicast" gets the default one
// appended at its end (policies_normalize, proxy.rb:588-591). A policy needs a name and a version and a
// configuration that is {} or not blank (proxy.rb:485-486,534-536). Text that is not JSON is 422
// {"errors":{"policies_config":[invalid format]}} (proxy.rb:553-560,597-598); a chain with an invalid
// policy is 422 with the chain, each invalid policy carrying its "errors" (the controller's
// represent_on_error, app/controllers/admin/api/services/proxy/policies_controller.rb:22,41-43;
// PolicyConfigRepresenter, app/representers/policy_config_representer.rb). A request without
// policies_config, which porta answers 400 (params.require), is answered as text that is not JSON.
// Policies are not looked up in the registry nor among the builtin ones: any name and version is taken
// (proxy.rb:475-537). A successful update makes a sandbox config when the configuration changed
// (policies_controller.rb:17-20, deploySandbox); a changed chain counts up the proxy's lock_version, an
// unchanged one keeps it and the service's updated_at.
func updatePolicies(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		text := r.form.Get("policies_config")
		var parsed any
		if !has(r, "policies_config") || (strings.TrimSpace(text) != "" && json.Unmarshal([]byte(text), &parsed) != nil) {
			return unprocessable("policies_config", msgPoliciesInvalidFormat)
		}
		chain, valid := normalizePolicies(parsed)
		if !valid {
			return answer{http.StatusUnprocessableEntity, map[string]any{"policies_config": chain}}
		}
		if !reflect.DeepEqual(svc.policies, chain) {
			// The proxy saved: its lock_version counts the save (optimistic locking), so the configuration
			// changes even when the enabled chain it holds (policyChain) does not.
			svc.policies = chain
			svc.proxy["lock_version"] = svc.proxy["lock_version"].(int) + 1
			svc.touch()
		}
		r.t.deploySandbox(svc)
		return ok("policies_config", svc.policies)
	})
}

// normalizePolicies turns parsed JSON into porta's chain (see updatePolicies) and reports whether every
// policy is valid; invalid ones carry their "errors".
func normalizePolicies(parsed any) ([]any, bool) {
	var items []any
	switch x := parsed.(type) { // Ruby's Array(): nil is [], a hash its [key, value] pairs, a scalar [scalar]
	case nil:
	case []any:
		items = x
	case map[string]any:
		for k, v := range x {
			items = append(items, []any{k, v})
		}
	default:
		items = []any{x}
	}
	chain := make([]any, 0, len(items)+1)
	valid, hasAPIcast := true, false
	for _, it := range items {
		attrs, _ := it.(map[string]any) // anything else is a policy with no attributes
		p := map[string]any{}
		for _, k := range []string{"name", "version", "configuration", "enabled"} {
			if v := attrs[k]; v != nil {
				p[k] = v
			}
		}
		errs := fieldErrors{}
		for _, k := range []string{"name", "version"} {
			if blank(p[k]) {
				errs.add(k, "can't be blank")
			}
		}
		if conf, isObj := p["configuration"].(map[string]any); blank(p["configuration"]) && !(isObj && len(conf) == 0) {
			errs.add("configuration", "can't be blank")
		}
		if len(errs) > 0 {
			p["errors"] = map[string][]string(errs)
			valid = false
		}
		hasAPIcast = hasAPIcast || p["name"] == "apicast"
		chain = append(chain, p)
	}
	if !hasAPIcast {
		chain = append(chain, defaultPolicy())
	}
	return chain, valid
}

// blank is Ruby's blank?: nil, false, an empty or white-space string, an empty array or hash.
func blank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func withUsage(r *request, f func(*backendUsage) answer) answer {
	return withService(r, "service_id", func(svc *service) answer {
		u, found := r.t.usages[r.params["id"]]
		if !found || u.serviceID != svc.id {
			return notFound()
		}
		return f(u)
	})
}

// listUsages answers a bare array of wrapped usages (porta's BackendApiConfigsRepresenter), paginated.
func listUsages(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		items := []any{}
		for _, id := range paginate(sortedIDs(r.t.usages, func(u *backendUsage) bool { return u.serviceID == svc.id }), r.form) {
			items = append(items, map[string]any{"backend_usage": r.t.usages[id].json()})
		}
		return answer{200, items}
	})
}

// normalizePath is porta's ConfigPath: one leading slash, no trailing slash ("/" stays "/").
func normalizePath(p string) string {
	p = "/" + strings.Trim(p, "/")
	return p
}

// validPath is porta's path validator: segments of URL path characters.
func validPath(p string) bool {
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~!$&'()*+,;=:@%", c)) {
				return false
			}
		}
	}
	return !strings.Contains(p, "//")
}

// msgPathTaken is BackendApiConfig's message for a path already used in the product.
const msgPathTaken = "This path is already taken. Specify a different path."

func checkUsagePath(t *tenant, u *backendUsage, errs fieldErrors) {
	if !validPath(u.path) {
		errs.add("path", "must be a path separated by \"/\". E.g. \"\" or \"my/path\"")
		return
	}
	for _, o := range t.usages {
		if o.serviceID == u.serviceID && o.id != u.id && strings.EqualFold(o.path, u.path) {
			errs.add("path", msgPathTaken)
			return
		}
	}
}

// createUsage follows Admin::Api::Services::BackendUsagesController: an unknown backend_api_id is 404
// (the controller finds it first), a missing one 422.
func createUsage(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		errs := fieldErrors{}
		var bid int64
		if raw := r.form.Get("backend_api_id"); raw == "" {
			errs.add("backend_api_id", "can't be blank")
		} else {
			var err error
			if bid, err = strconv.ParseInt(raw, 10, 64); err != nil {
				return notFound()
			}
			if _, found := r.t.backends[bid]; !found {
				return notFound()
			}
		}
		u := &backendUsage{serviceID: svc.id, backendID: bid, path: normalizePath(r.form.Get("path")), stamps: newStamps()}
		for _, o := range r.t.usages {
			if bid != 0 && o.serviceID == svc.id && o.backendID == bid {
				errs.add("backend_api_id", "has already been taken")
				break
			}
		}
		checkUsagePath(r.t, u, errs)
		if a := errs.answer(); a.code != 0 {
			return a
		}
		u.id = r.t.id()
		r.t.usages[u.id] = u
		return created("backend_usage", u.json())
	})
}

func updateUsage(r *request) answer {
	return withUsage(r, func(u *backendUsage) answer {
		next := *u
		if has(r, "path") {
			next.path = normalizePath(r.form.Get("path"))
		}
		errs := fieldErrors{}
		checkUsagePath(r.t, &next, errs)
		if a := errs.answer(); a.code != 0 {
			return a
		}
		next.touch()
		*u = next
		return ok("backend_usage", u.json())
	})
}

// deleteUsage removes a backend usage and, as BackendApiConfig's before_destroy does, the limits that
// the product's plans set on the backend's metrics.
func (t *tenant) deleteUsage(u *backendUsage) {
	for id, l := range t.limits {
		p, m := t.plans[l.planID], t.metrics[l.metricID]
		if p != nil && m != nil && p.serviceID == u.serviceID && m.owner == (owner{ownerBackend, u.backendID}) {
			delete(t.limits, id)
		}
	}
	delete(t.usages, u.id)
}
