package simulator

import (
	"encoding/json"
	"strconv"
	"strings"
)

// serviceRoutes are the endpoints of services (products), their proxy, OIDC configuration, policy
// chain and backend usages.
func serviceRoutes() []route {
	return []route{
		handle("GET", "/admin/api/services.json", func(r *request) answer {
			return wrapList("services", "service", r.t.services, nil, (*service).json, r.form, true)
		}),
		handle("POST", "/admin/api/services.json", createService),
		handle("GET", "/admin/api/services/{id}.json", func(r *request) answer {
			return withService(r, "id", func(svc *service) answer { return ok("service", svc.json()) })
		}),
		handle("PUT", "/admin/api/services/{id}.json", updateService),
		handle("DELETE", "/admin/api/services/{id}.json", deleteService),

		handle("GET", "/admin/api/services/{service_id}/proxy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return ok("proxy", svc.proxyJSON()) })
		}),
		handle("PATCH", "/admin/api/services/{service_id}/proxy.json", updateProxy),
		handle("POST", "/admin/api/services/{service_id}/proxy/deploy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				r.t.deploys++
				return created("proxy", svc.proxyJSON())
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
		policies: []any{map[string]any{"name": "apicast", "version": "builtin", "configuration": map[string]any{}, "enabled": true}}}
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
	// Porta's ServiceCreator: the service comes with its hits metric and a proxy with defaults.
	svc.id = r.t.id()
	svc.proxy = defaultProxy(svc.id, svc.systemName)
	r.t.services[svc.id] = svc
	r.t.addHits(owner{ownerService, svc.id})
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
		next.touch()
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
		for _, d := range t.docs { // Service has_many :api_docs_services, dependent: :nullify
			if d.serviceID == svc.id {
				d.serviceID = 0
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
		"api_backend":          nil,
		"credentials_location": "query", "auth_user_key": "user_key", "auth_app_id": "app_id", "auth_app_key": "app_key",
		"hostname_rewrite": "", "secret_token": "Shared_secret_sent_from_proxy_to_API_backend_" + strconv.FormatInt(serviceID, 16),
		"error_status_auth_failed": 403, "error_headers_auth_failed": "text/plain; charset=us-ascii", "error_auth_failed": "Authentication failed",
		"error_status_auth_missing": 403, "error_headers_auth_missing": "text/plain; charset=us-ascii", "error_auth_missing": "Authentication parameters missing",
		"error_status_no_match": 404, "error_headers_no_match": "text/plain; charset=us-ascii", "error_no_match": "No Mapping Rule matched",
		"error_status_limits_exceeded": 429, "error_headers_limits_exceeded": "text/plain; charset=us-ascii", "error_limits_exceeded": "Usage limit exceeded",
		"oidc_issuer_endpoint": nil, "oidc_issuer_type": "keycloak", "jwt_claim_with_client_id": nil, "jwt_claim_with_client_id_type": "plain",
		"policies_config": nil, "lock_version": 0}
}

// proxyJSON is the proxy as porta renders it, with its current policy chain and timestamps.
func (s *service) proxyJSON() map[string]any {
	out := make(map[string]any, len(s.proxy)+3)
	for k, v := range s.proxy {
		out[k] = v
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

// proxyFields are the proxy attributes porta's Admin::Api::Services::ProxiesController permits.
var proxyFields = []string{"endpoint", "sandbox_endpoint", "api_backend", "credentials_location",
	"auth_app_key", "auth_app_id", "auth_user_key", "hostname_rewrite", "secret_token", "oauth_login_url", "api_test_path",
	"error_auth_failed", "error_status_auth_failed", "error_headers_auth_failed",
	"error_auth_missing", "error_status_auth_missing", "error_headers_auth_missing",
	"error_no_match", "error_status_no_match", "error_headers_no_match",
	"error_limits_exceeded", "error_status_limits_exceeded", "error_headers_limits_exceeded",
	"oidc_issuer_endpoint", "oidc_issuer_type", "jwt_claim_with_client_id", "jwt_claim_with_client_id_type"}

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
			case k == "endpoint" || k == "sandbox_endpoint" || k == "api_backend":
				if v != "" && !validURL(v) {
					errs.add(k, "Invalid URL format")
					continue
				}
				next[k] = v
			default:
				next[k] = v
			}
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		for k, v := range next {
			svc.proxy[k] = v
		}
		svc.proxy["lock_version"] = svc.proxy["lock_version"].(int) + 1
		svc.touch()
		return ok("proxy", svc.proxyJSON())
	})
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

// updatePolicies replaces the policy chain. Porta checks each policy against its schema; the
// simulator checks the shape: a JSON array of objects with a name, a version and a configuration
// object. On error porta answers 422 with the chain as it was.
func updatePolicies(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		var chain []map[string]any
		if err := json.Unmarshal([]byte(r.form.Get("policies_config")), &chain); err != nil {
			return unprocessable("policies_config", "is invalid")
		}
		out := make([]any, 0, len(chain))
		for _, p := range chain {
			name, _ := p["name"].(string)
			version, _ := p["version"].(string)
			if name == "" || version == "" {
				return unprocessable("policies_config", "is invalid")
			}
			if p["configuration"] == nil {
				p["configuration"] = map[string]any{}
			}
			if _, isObj := p["configuration"].(map[string]any); !isObj {
				return unprocessable("policies_config", "is invalid")
			}
			if _, set := p["enabled"]; !set {
				p["enabled"] = true
			}
			out = append(out, p)
		}
		svc.policies = out
		svc.touch()
		return ok("policies_config", svc.policies)
	})
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
