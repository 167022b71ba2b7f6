package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Proxy configs: the versions of a product's APIcast configuration in each environment, as porta's
// Admin::Api::Services::Proxy::ConfigsController serves them (app/controllers/admin/api/services/proxy/
// configs_controller.rb) and ProxyDeploymentService and ApicastV2DeploymentService write them
// (app/services/proxy_deployment_service.rb, apicast_v2_deployment_service.rb).

// proxyConfig is one version of a product's gateway configuration in an environment (porta's
// ProxyConfig, app/models/proxy_config.rb).
type proxyConfig struct {
	id      int64
	version int
	env     string // envSandbox or envProduction
	content json.RawMessage
}

// The environments a proxy config is stored in (ProxyConfig::ENVIRONMENTS, proxy_config.rb:5).
const (
	envSandbox    = "sandbox"
	envProduction = "production"
)

// json is ProxyConfigRepresenter (app/representers/proxy_config_representer.rb): these four properties
// only, the content as the JSON object it is; no timestamps, no links.
func (c *proxyConfig) json() map[string]any {
	return map[string]any{"id": c.id, "version": c.version, "environment": c.env, "content": c.content}
}

func proxyConfigRoutes() []route {
	const base = "/admin/api/services/{service_id}/proxy/configs/{environment}"
	return []route{
		// index: every config of the environment, by id, not paged, {"proxy_configs":[{"proxy_config":..}]}
		// (configs_controller.rb:19-21; ProxyConfigsRepresenter wraps_collection :proxy_configs).
		handle("GET", base+".json", func(r *request) answer {
			return withEnvironment(r, func(svc *service, env string) answer {
				configs := append([]*proxyConfig(nil), svc.configs[env]...)
				sort.Slice(configs, func(i, j int) bool { return configs[i].id < configs[j].id })
				items := make([]any, 0, len(configs))
				for _, c := range configs {
					items = append(items, map[string]any{"proxy_config": c.json()})
				}
				return answer{http.StatusOK, map[string]any{"proxy_configs": items}}
			})
		}).withText("environment"),
		// latest: the highest version, 404 when the environment has none (newest_first.first!,
		// configs_controller.rb:29-33).
		handle("GET", base+"/latest.json", func(r *request) answer {
			return withEnvironment(r, func(svc *service, env string) answer {
				c := svc.latestConfig(env)
				if c == nil {
					return notFound()
				}
				return ok("proxy_config", c.json())
			})
		}).withText("environment"),
		// show: by version number, 404 for an unknown one (find_by!(version:), configs_controller.rb:37-39,56-58).
		handle("GET", base+"/{version}.json", func(r *request) answer {
			return withConfig(r, func(_ *service, c *proxyConfig) answer { return ok("proxy_config", c.json()) })
		}).withText("environment"),
		handle("POST", base+"/{version}/promote.json", promoteConfig).withText("environment"),
	}
}

// environmentOf reads the {environment} of a path as ProxyConfig::VALID_ENVIRONMENTS does
// (proxy_config.rb:7-12): "staging" is "sandbox", and anything but sandbox, staging and production is
// invalid.
func environmentOf(v string) (string, bool) {
	switch v {
	case envSandbox, "staging":
		return envSandbox, true
	case envProduction:
		return envProduction, true
	}
	return "", false
}

// withEnvironment finds the product (404 first, as the controller reaches the configs through the
// service) and the environment: an invalid one is 400 {"error":"invalid environment"} (the
// controller's rescue_from ProxyConfig::InvalidEnvironmentError, configs_controller.rb:13-15).
func withEnvironment(r *request, f func(svc *service, env string) answer) answer {
	return withService(r, "service_id", func(svc *service) answer {
		env, valid := environmentOf(r.texts["environment"])
		if !valid {
			return answer{http.StatusBadRequest, map[string]string{"error": "invalid environment"}}
		}
		return f(svc, env)
	})
}

// withConfig finds the config of the path's environment and version: 404 when there is none.
func withConfig(r *request, f func(svc *service, c *proxyConfig) answer) answer {
	return withEnvironment(r, func(svc *service, env string) answer {
		for _, c := range svc.configs[env] {
			if int64(c.version) == r.params["version"] {
				return f(svc, c)
			}
		}
		return notFound()
	})
}

// promoteConfig is ConfigsController#promote (configs_controller.rb:43-48) and ProxyConfig#clone_to
// (proxy_config.rb:110-112,154-171): `to` is required (400 in text when missing or blank), then the
// product (404), the environment (400) and the version (404) are found; the copy keeps the version
// number, content and all, and is validated as a new ProxyConfig (proxy_config.rb:23-31): its version
// must be free in the destination (else 422 "version has already been taken": promoting a version twice,
// or to its own environment), the destination must be sandbox or production ("staging" is not: 422
// "environment is not included in the list"), and but for a service mesh the product must have an
// api_backend (422 "api_backend is missing"). Content is never compared: promoting an older version, or
// one the destination holds under another number, is a new config there (and latest stays the highest
// version). 201 with the copy.
func promoteConfig(r *request) answer {
	to := r.form.Get("to")
	if strings.TrimSpace(to) == "" {
		return parameterMissing("to")
	}
	return withConfig(r, func(svc *service, src *proxyConfig) answer {
		errs := fieldErrors{}
		for _, c := range svc.configs[to] {
			if c.version == src.version {
				errs.add("version", msgTaken)
				break
			}
		}
		if to != envSandbox && to != envProduction {
			errs.add("environment", "is not included in the list")
		}
		if !svc.serviceMesh() && !r.t.hasAPIBackend(svc) {
			errs.add("api_backend", "is missing")
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		c := svc.addConfig(r.t, to, src.version, src.content)
		return created("proxy_config", c.json())
	})
}

// containsMetric is ProxyConfig#contains_metric? (proxy_config.rb:124-126): some rule of the content's
// proxy.proxy_rules has that metric_id.
func (c *proxyConfig) containsMetric(metricID int64) bool {
	var content struct {
		Proxy struct {
			ProxyRules []struct {
				MetricID *int64 `json:"metric_id"`
			} `json:"proxy_rules"`
		} `json:"proxy"`
	}
	if err := json.Unmarshal(c.content, &content); err != nil {
		return false
	}
	for _, r := range content.Proxy.ProxyRules {
		if r.MetricID != nil && *r.MetricID == metricID {
			return true
		}
	}
	return false
}

// latestConfig is the config of env with the highest version (newest_first.first), nil if none.
func (s *service) latestConfig(env string) *proxyConfig {
	var latest *proxyConfig
	for _, c := range s.configs[env] {
		if latest == nil || c.version > latest.version {
			latest = c
		}
	}
	return latest
}

// addConfig stores a new config (its id a new one of the tenant's) of env.
func (s *service) addConfig(t *tenant, env string, version int, content json.RawMessage) *proxyConfig {
	if s.configs == nil {
		s.configs = map[string][]*proxyConfig{}
	}
	c := &proxyConfig{id: t.id(), version: version, env: env, content: content}
	s.configs[env] = append(s.configs[env], c)
	return c
}

// serviceMesh reports a product deployed with a service mesh (Proxy#service_mesh_integration?,
// app/models/proxy.rb:441-443).
func (s *service) serviceMesh() bool { return strings.HasPrefix(s.deploymentOption, "service_mesh_") }

// hasAPIBackend is Proxy#api_backend_present? (app/lib/backend_api_logic/proxy_extension.rb:20-22): the
// product uses a backend, whose private endpoint is the api_backend.
func (t *tenant) hasAPIBackend(s *service) bool {
	b := t.apiBackend(s.id)
	return b != nil && b.privateEndpoint != ""
}

// deployProxy is ProxyDeploymentService#call (proxy_deployment_service.rb:22-47), run by POST
// proxy/deploy and by a successful proxy update (proxies_controller.rb:18-30): every deployment option
// the simulator knows is deployable; an APIcast product (hosted or self-managed, configuration driven
// as porta's proxies are by default, db/schema.rb:1097) gets a sandbox config when its configuration
// changed (deploySandbox); a service mesh gets that and the newest sandbox config copied to production,
// which silently does nothing when production has its version already.
func (t *tenant) deployProxy(s *service) {
	sandbox := t.deploySandbox(s)
	if !s.serviceMesh() || sandbox == nil {
		return
	}
	newest := s.latestConfig(envSandbox)
	for _, c := range s.configs[envProduction] {
		if c.version == newest.version {
			return
		}
	}
	s.addConfig(t, envProduction, newest.version, newest.content)
}

// deploySandbox is ApicastV2DeploymentService#call(environment: :sandbox)
// (apicast_v2_deployment_service.rb:10-20), which a policy chain update runs directly
// (proxy/policies_controller.rb:17-20): the product's configuration is built now and saved as a new
// sandbox version, one more than the highest, only when it differs from the latest sandbox config;
// otherwise the latest is kept and no version is made. (Porta compares with the latest config the same
// user deployed; the simulator has one user per tenant.) A product without api_backend, not a service
// mesh, cannot have a new config (ProxyConfig validates api_backend on create, proxy_config.rb:29,132-137):
// nil, silently, as porta's save returns false.
func (t *tenant) deploySandbox(s *service) *proxyConfig {
	content := t.gatewayConfig(s)
	latest := s.latestConfig(envSandbox)
	if latest != nil && bytes.Equal(latest.content, content) {
		return latest
	}
	if !s.serviceMesh() && !t.hasAPIBackend(s) {
		return nil
	}
	version := 1
	if latest != nil {
		version = latest.version + 1
	}
	return s.addConfig(t, envSandbox, version, content)
}

// backendListener is the 3scale backend (Apisonator) address the configurations name.
const backendListener = "https://backend.simulator.invalid:443"

// gatewayConfig is a product's APIcast configuration, a cheap and deterministic likeness of porta's
// (Apicast::ProxySource with ProviderSource::SERVICE_SERIALIZE_OPTIONS and Apicast::ProxyRulesSource,
// app/lib/apicast/proxy_source.rb, provider_source.rb:18-37, proxy_rules_source.rb): the service's
// attributes and timestamps, and its proxy — every proxy attribute and lock_version but the policies
// config, the api_backend (null when a backend is used at a subpath), the hosts of the two endpoints, the
// backend, the policy chain, and the mapping rules of the product then of its backends in usage order,
// each backend rule's pattern under the usage's path. The same state gives the same bytes (JSON objects
// have sorted keys); any change of the service, its proxy, policy chain, rules or backend usages gives
// others. The policy chain is the one APIcast runs (policyChain); porta also puts a generated routing
// policy before apicast when a backend is used at a subpath (BackendApiLogic::RoutingPolicy,
// app/lib/backend_api_logic/routing_policy.rb:5-18,32-45), which is not modelled.
func (t *tenant) gatewayConfig(s *service) json.RawMessage {
	proxy := make(map[string]any, len(s.proxy)+10)
	for k, v := range s.proxy {
		if k != "policies_config" {
			proxy[k] = v
		}
	}
	var apiBackend any
	if b := t.apiBackend(s.id); b != nil {
		apiBackend = b.privateEndpoint
	}
	// The owners of the rules, in order (the product, then its backends by usage), with the path their
	// patterns go under.
	owners := []owner{{ownerService, s.id}}
	prefixes := map[owner]string{owners[0]: ""}
	for _, id := range sortedIDs(t.usages, func(u *backendUsage) bool { return u.serviceID == s.id }) {
		u := t.usages[id]
		if u.path != "/" {
			apiBackend = nil // with_subpaths? (app/lib/backend_api_logic/routing_policy.rb:20-22)
		}
		ow := owner{ownerBackend, u.backendID}
		owners = append(owners, ow)
		prefixes[ow] = u.path
	}
	proxy["api_backend"] = apiBackend
	proxy["hosts"] = endpointHosts(s.proxy["endpoint"], s.proxy["sandbox_endpoint"])
	proxy["backend"] = map[string]any{"endpoint": backendListener, "host": "backend.simulator.invalid"}
	proxy["policy_chain"] = policyChain(s.policies)
	proxy["proxy_rules"] = t.gatewayRules(owners, prefixes)
	proxy["service_backend_version"] = s.backendVersion
	proxy["valid?"] = true
	proxy["created_at"], proxy["updated_at"] = s.created, s.updated
	config := map[string]any{"id": s.id, "name": s.name, "system_name": s.systemName, "description": s.description,
		"backend_version": s.backendVersion, "deployment_option": s.deploymentOption, "state": s.state,
		"created_at": s.created, "updated_at": s.updated, "proxiable?": true,
		"backend_authentication_type": "service_token", "backend_authentication_value": fmt.Sprintf("service-token-%d", s.id),
		"proxy": proxy}
	raw, err := json.Marshal(config)
	if err != nil {
		panic(fmt.Sprintf("simulator: cannot render the configuration of service %d: %v", s.id, err)) // only JSON values are stored
	}
	return raw
}

// policyChain is Proxy::PoliciesConfig#chain (app/models/proxy.rb:571-574) over the stored chain,
// normalized as PoliciesConfig#initialize does (policies_normalize, proxy.rb:588-591: apicast appended
// when no policy is named apicast): only the policies whose enabled is truthy in Ruby (neither missing,
// null nor false), each as PolicyConfig#to_chain_value, its name, version and configuration without the
// null ones (to_h.slice, proxy.rb:513-521).
func policyChain(policies []any) []any {
	normalized := append([]any(nil), policies...)
	hasAPIcast := false
	for _, p := range policies {
		attrs, _ := p.(map[string]any)
		hasAPIcast = hasAPIcast || attrs["name"] == "apicast"
	}
	if !hasAPIcast {
		normalized = append(normalized, defaultPolicy())
	}
	chain := []any{}
	for _, p := range normalized {
		attrs, _ := p.(map[string]any)
		if enabled, set := attrs["enabled"]; !set || enabled == nil || enabled == false {
			continue
		}
		value := map[string]any{}
		for _, k := range []string{"name", "version", "configuration"} {
			if v := attrs[k]; v != nil {
				value[k] = v
			}
		}
		chain = append(chain, value)
	}
	return chain
}

// gatewayRules renders the mapping rules of owners, owner after owner, each owner's in porta's order
// (position, then id: rulesInOrder), in one pass over the tenant's rules; a backend's pattern goes under
// its usage's path, prefixes[owner] (ProxyRuleDecorator#pattern, File.join('/', path, pattern),
// app/decorators/proxy_rule_decorator.rb:6-10).
func (t *tenant) gatewayRules(owners []owner, prefixes map[owner]string) []any {
	byOwner := make(map[owner][]*mappingRule, len(owners))
	for _, r := range t.rules {
		if _, wanted := prefixes[r.owner]; wanted {
			byOwner[r.owner] = append(byOwner[r.owner], r)
		}
	}
	out := []any{}
	for _, ow := range owners {
		rules := byOwner[ow]
		sort.Slice(rules, func(i, j int) bool {
			if rules[i].position != rules[j].position {
				return rules[i].position < rules[j].position
			}
			return rules[i].id < rules[j].id
		})
		for _, r := range rules {
			rule := r.json()
			delete(rule, "created_at") // a rule's timestamps are not part of the configuration's likeness
			delete(rule, "updated_at")
			if prefix := prefixes[ow]; prefix != "" {
				rule["pattern"] = strings.TrimRight(normalizePath(prefix), "/") + "/" + strings.TrimLeft(r.pattern, "/")
			}
			if m := t.metrics[r.metricID]; m != nil {
				rule["metric_system_name"] = m.systemName
			}
			out = append(out, rule)
		}
	}
	return out
}

// endpointHosts is Proxy#hosts (app/models/proxy.rb:318-326): the hosts of the endpoints, without
// blanks and repeats.
func endpointHosts(endpoints ...any) []string {
	hosts := []string{}
	for _, e := range endpoints {
		s, _ := e.(string)
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			continue
		}
		if h := u.Hostname(); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// LatestConfig returns the version and content of the latest configuration of a tenant's product in an
// environment ("sandbox" or "production"); ok is false when there is none. Tests use it to see what
// a gateway would run.
func (s *Simulator) LatestConfig(tenantName string, serviceID int64, env string) (version int, content json.RawMessage, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.names[tenantName]
	if t == nil || t.services[serviceID] == nil {
		return 0, nil, false
	}
	c := t.services[serviceID].latestConfig(env)
	if c == nil {
		return 0, nil, false
	}
	return c.version, c.content, true
}
