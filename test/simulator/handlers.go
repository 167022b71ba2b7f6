package simulator

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ownerParam is the path parameter naming the owner of metrics and mapping rules.
func ownerParam(kind string) string {
	if kind == "service" {
		return "service_id"
	}
	return "backend_api_id"
}

func withService(r *request, param string, f func(*service) answer) answer {
	svc, ok := r.t.services[r.params[param]]
	if !ok {
		return notFound()
	}
	return f(svc)
}

func withBackend(r *request, param string, f func(*backendAPI) answer) answer {
	b, ok := r.t.backends[r.params[param]]
	if !ok {
		return notFound()
	}
	return f(b)
}

func withOwner(r *request, kind string, f func(owner) answer) answer {
	id := r.params[ownerParam(kind)]
	if _, ok := r.t.services[id]; kind == "service" && !ok {
		return notFound()
	}
	if _, ok := r.t.backends[id]; kind == "backend" && !ok {
		return notFound()
	}
	return f(owner{kind, id})
}

func withMetric(r *request, kind, param string, f func(*metric) answer) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m, ok := r.t.metrics[r.params[param]]
		if !ok || m.owner != ow {
			return notFound()
		}
		if parent, has := r.params["metric_id"]; has && param == "id" && m.parentID != parent {
			return notFound()
		}
		return f(m)
	})
}

func withRule(r *request, kind string, f func(*mappingRule) answer) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m, ok := r.t.rules[r.params["id"]]
		if !ok || m.owner != ow {
			return notFound()
		}
		return f(m)
	})
}

func withUsage(r *request, f func(*backendUsage) answer) answer {
	u, ok := r.t.usages[r.params["id"]]
	if !ok || u.serviceID != r.params["service_id"] {
		return notFound()
	}
	return f(u)
}

func withPlan(r *request, f func(*plan) answer) answer {
	p, ok := r.t.plans[r.params["id"]]
	if !ok || p.serviceID != r.params["service_id"] {
		return notFound()
	}
	return f(p)
}

func withPlanID(r *request, f func(*plan) answer) answer {
	p, ok := r.t.plans[r.params["application_plan_id"]]
	if !ok {
		return notFound()
	}
	return f(p)
}

// has reports whether a form field was sent.
func has(r *request, key string) bool { _, ok := r.form[key]; return ok }

// names reads a new object's name and system name (derived from the name when not given) and checks
// them as porta does: name present, system name well-formed and not taken.
func names(r *request, taken func(systemName string) bool) (name, sys string, a answer) {
	name = r.form.Get("name")
	if name == "" {
		return "", "", unprocessable("name", "can't be blank")
	}
	sys = r.form.Get("system_name")
	if sys == "" {
		sys = deriveSystemName(name)
	}
	if !systemNamePattern.MatchString(sys) {
		return "", "", unprocessable("system_name", "invalid. Only ASCII letters, numbers, dashes and underscores are allowed.")
	}
	if taken(sys) {
		return "", "", unprocessable("system_name", "has already been taken")
	}
	return name, sys, answer{}
}

func createService(r *request) answer {
	name, sys, a := names(r, func(sys string) bool {
		for _, s := range r.t.services {
			if s.systemName == sys {
				return true
			}
		}
		return false
	})
	if a.code != 0 {
		return a
	}
	svc := &service{id: r.t.id(), name: name, systemName: sys, description: r.form.Get("description"),
		deploymentOption: "hosted", backendVersion: "1", stamps: newStamps(),
		oidc:     map[string]bool{"standard_flow_enabled": false, "implicit_flow_enabled": false, "service_accounts_enabled": false, "direct_access_grants_enabled": false},
		policies: []any{map[string]any{"name": "apicast", "version": "builtin", "configuration": map[string]any{}, "enabled": true}}}
	if d := r.form.Get("deployment_option"); d != "" {
		svc.deploymentOption = d
	}
	if v := r.form.Get("backend_version"); v != "" {
		svc.backendVersion = v
	}
	if a := validateServiceEnums(svc); a.code != 0 {
		return a
	}
	svc.proxy = defaultProxy(svc.id)
	r.t.services[svc.id] = svc
	r.t.addHits(owner{"service", svc.id})
	return answer{201, map[string]any{"service": svc.json()}}
}

func validateServiceEnums(svc *service) answer {
	switch svc.deploymentOption {
	case "hosted", "self_managed", "service_mesh_istio":
	default:
		return unprocessable("deployment_option", "is not included in the list")
	}
	switch svc.backendVersion {
	case "1", "2", "oidc":
	default:
		return unprocessable("backend_version", "is not included in the list")
	}
	return answer{}
}

func defaultProxy(serviceID int64) map[string]any {
	return map[string]any{"service_id": serviceID, "endpoint": "https://api-" + strconv.FormatInt(serviceID, 10) + ".production.gw.example.com:443",
		"sandbox_endpoint":     "https://api-" + strconv.FormatInt(serviceID, 10) + ".staging.gw.example.com:443",
		"credentials_location": "query", "auth_user_key": "user_key", "auth_app_id": "app_id", "auth_app_key": "app_key",
		"hostname_rewrite": "", "secret_token": "Shared_secret_sent_from_proxy_to_API_backend",
		"error_status_auth_failed": 403, "error_headers_auth_failed": "text/plain; charset=us-ascii", "error_auth_failed": "Authentication failed",
		"error_status_auth_missing": 403, "error_headers_auth_missing": "text/plain; charset=us-ascii", "error_auth_missing": "Authentication parameters missing",
		"error_status_no_match": 404, "error_headers_no_match": "text/plain; charset=us-ascii", "error_no_match": "No Mapping Rule matched",
		"error_status_limits_exceeded": 429, "error_headers_limits_exceeded": "text/plain; charset=us-ascii", "error_limits_exceeded": "Usage limit exceeded",
		"oidc_issuer_endpoint": nil, "oidc_issuer_type": "keycloak", "jwt_claim_with_client_id": nil, "jwt_claim_with_client_id_type": "plain"}
}

// proxyFields are the proxy attributes porta lets the API write.
var proxyFields = map[string]bool{"endpoint": true, "sandbox_endpoint": true, "api_backend": true, "credentials_location": true,
	"auth_app_key": true, "auth_app_id": true, "auth_user_key": true, "hostname_rewrite": true, "secret_token": true,
	"error_auth_failed": true, "error_status_auth_failed": true, "error_headers_auth_failed": true,
	"error_auth_missing": true, "error_status_auth_missing": true, "error_headers_auth_missing": true,
	"error_no_match": true, "error_status_no_match": true, "error_headers_no_match": true,
	"error_limits_exceeded": true, "error_status_limits_exceeded": true, "error_headers_limits_exceeded": true,
	"oidc_issuer_endpoint": true, "oidc_issuer_type": true, "jwt_claim_with_client_id": true, "jwt_claim_with_client_id_type": true}

func updateProxy(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		if v := r.form.Get("credentials_location"); v != "" && v != "headers" && v != "query" && v != "authorization" {
			return unprocessable("credentials_location", "is not included in the list")
		}
		for k := range proxyFields {
			if !has(r, k) {
				continue
			}
			v := r.form.Get(k)
			if strings.HasPrefix(k, "error_status_") {
				n, err := strconv.Atoi(v)
				if err != nil {
					return unprocessable(k, "is not a number")
				}
				svc.proxy[k] = n
				continue
			}
			svc.proxy[k] = v
		}
		return answer{200, map[string]any{"proxy": svc.proxy}}
	})
}

func updateService(r *request) answer {
	return withService(r, "id", func(svc *service) answer {
		next := *svc
		if has(r, "name") {
			if next.name = r.form.Get("name"); next.name == "" {
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
		if a := validateServiceEnums(&next); a.code != 0 {
			return a
		}
		next.touch()
		*svc = next
		return answer{200, map[string]any{"service": svc.json()}}
	})
}

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
		for id, m := range t.rules {
			if m.owner == (owner{"service", svc.id}) {
				delete(t.rules, id)
			}
		}
		for id, m := range t.metrics {
			if m.owner == (owner{"service", svc.id}) {
				delete(t.metrics, id)
			}
		}
		delete(t.services, svc.id)
		return answer{200, nil}
	})
}

func createBackend(r *request) answer {
	name, sys, a := names(r, func(sys string) bool {
		for _, b := range r.t.backends {
			if b.systemName == sys {
				return true
			}
		}
		return false
	})
	if a.code != 0 {
		return a
	}
	pe := r.form.Get("private_endpoint")
	if a := validateEndpoint(pe); a.code != 0 {
		return a
	}
	b := &backendAPI{id: r.t.id(), name: name, systemName: sys, description: r.form.Get("description"), privateEndpoint: pe, stamps: newStamps()}
	r.t.backends[b.id] = b
	r.t.addHits(owner{"backend", b.id})
	return answer{201, map[string]any{"backend_api": b.json()}}
}

func validateEndpoint(pe string) answer {
	if pe == "" {
		return unprocessable("private_endpoint", "can't be blank")
	}
	u, err := url.Parse(pe)
	if err != nil || u.Host == "" {
		return unprocessable("private_endpoint", "Invalid URL format")
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return unprocessable("private_endpoint", "Invalid URL format")
	}
	// porta refuses endpoints on the gateway's own host (its non_localhost validation).
	if h := u.Hostname(); h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1" {
		return unprocessable("private_endpoint", "is a protected domain")
	}
	return answer{}
}

func updateBackend(r *request) answer {
	return withBackend(r, "id", func(b *backendAPI) answer {
		next := *b
		if has(r, "name") {
			if next.name = r.form.Get("name"); next.name == "" {
				return unprocessable("name", "can't be blank")
			}
		}
		if has(r, "description") {
			next.description = r.form.Get("description")
		}
		if has(r, "private_endpoint") {
			next.privateEndpoint = r.form.Get("private_endpoint")
			if a := validateEndpoint(next.privateEndpoint); a.code != 0 {
				return a
			}
		}
		next.touch()
		*b = next
		return answer{200, map[string]any{"backend_api": b.json()}}
	})
}

func deleteBackend(r *request) answer {
	return withBackend(r, "id", func(b *backendAPI) answer {
		for _, u := range r.t.usages {
			if u.backendID == b.id {
				return answer{http.StatusForbidden, map[string]any{"errors": map[string][]string{
					"base": {"cannot be deleted because it is used by at least one Product"}}}}
			}
		}
		for id, m := range r.t.rules {
			if m.owner == (owner{"backend", b.id}) {
				delete(r.t.rules, id)
			}
		}
		for id, m := range r.t.metrics {
			if m.owner == (owner{"backend", b.id}) {
				r.t.deleteMetric(id)
			}
		}
		delete(r.t.backends, b.id)
		return answer{200, nil}
	})
}

func listUsages(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		items := []any{}
		for _, id := range sortedIDs(r.t.usages, func(u *backendUsage) bool { return u.serviceID == svc.id }) {
			items = append(items, map[string]any{"backend_usage": r.t.usages[id].json()})
		}
		return answer{200, items} // porta answers a bare array here
	})
}

func createUsage(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		bid, _ := strconv.ParseInt(r.form.Get("backend_api_id"), 10, 64)
		if _, ok := r.t.backends[bid]; !ok {
			return unprocessable("backend_api_id", "can't be blank")
		}
		path := r.form.Get("path")
		if path == "" {
			path = "/"
		}
		if !strings.HasPrefix(path, "/") {
			return unprocessable("path", "must be a path starting with /")
		}
		for _, u := range r.t.usages {
			if u.serviceID == svc.id && u.backendID == bid {
				return unprocessable("backend_api_id", "has already been taken")
			}
			if u.serviceID == svc.id && u.path == path {
				return unprocessable("path", "has already been taken")
			}
		}
		u := &backendUsage{id: r.t.id(), serviceID: svc.id, backendID: bid, path: path}
		r.t.usages[u.id] = u
		return answer{201, map[string]any{"backend_usage": u.json()}}
	})
}

// metricsOf returns the metrics a plan of service svc may limit: the service's and its backends'.
func (t *tenant) metricUsableBy(serviceID, metricID int64) bool {
	m, ok := t.metrics[metricID]
	if !ok {
		return false
	}
	if m.owner == (owner{"service", serviceID}) {
		return true
	}
	for _, u := range t.usages {
		if u.serviceID == serviceID && m.owner == (owner{"backend", u.backendID}) {
			return true
		}
	}
	return false
}

func createMetric(r *request, kind string, parentID int64) answer {
	return withOwner(r, kind, func(ow owner) answer {
		friendly := r.form.Get("friendly_name")
		if friendly == "" {
			return unprocessable("friendly_name", "can't be blank")
		}
		sys := r.form.Get("system_name")
		if sys == "" {
			sys = r.form.Get("name")
		}
		if sys == "" {
			sys = deriveSystemName(friendly)
		}
		if !systemNamePattern.MatchString(sys) {
			return unprocessable("system_name", "invalid. Only ASCII letters, numbers, dashes and underscores are allowed.")
		}
		unit := r.form.Get("unit")
		if parentID == 0 && unit == "" {
			return unprocessable("unit", "can't be blank")
		}
		if parentID != 0 {
			unit = "hit"
		}
		for _, m := range r.t.metrics {
			if m.owner == ow && m.systemName == sys {
				return unprocessable("system_name", "has already been taken")
			}
		}
		m := &metric{id: r.t.id(), owner: ow, parentID: parentID, systemName: sys, friendlyName: friendly, unit: unit,
			description: r.form.Get("description"), stamps: newStamps()}
		r.t.metrics[m.id] = m
		key := "metric"
		if parentID != 0 {
			key = "method"
		}
		return answer{201, map[string]any{key: m.json()}}
	})
}

func updateMetric(r *request, kind, param, key string) answer {
	return withMetric(r, kind, param, func(m *metric) answer {
		if has(r, "friendly_name") {
			if r.form.Get("friendly_name") == "" {
				return unprocessable("friendly_name", "can't be blank")
			}
			m.friendlyName = r.form.Get("friendly_name")
		}
		if has(r, "unit") && m.parentID == 0 {
			m.unit = r.form.Get("unit")
		}
		if has(r, "description") {
			m.description = r.form.Get("description")
		}
		m.touch()
		return answer{200, map[string]any{key: m.json()}}
	})
}

// deleteMetric deletes a metric with its methods, and the mapping rules, limits and pricing rules on them.
func (t *tenant) deleteMetric(id int64) {
	for mid, m := range t.metrics {
		if m.parentID == id {
			t.deleteMetric(mid)
		}
	}
	for rid, r := range t.rules {
		if r.metricID == id {
			delete(t.rules, rid)
		}
	}
	for lid, l := range t.limits {
		if l.metricID == id {
			delete(t.limits, lid)
		}
	}
	for pid, p := range t.pricing {
		if p.metricID == id {
			delete(t.pricing, pid)
		}
	}
	delete(t.metrics, id)
}

var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "OPTIONS": true, "TRACE": true, "PATCH": true, "CONNECT": true}

func saveMappingRule(r *request, kind string, existing *mappingRule) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m := &mappingRule{owner: ow, delta: 1, stamps: newStamps()}
		if existing != nil {
			copy := *existing
			m = &copy
		}
		if has(r, "http_method") || existing == nil {
			m.httpMethod = strings.ToUpper(r.form.Get("http_method"))
		}
		if has(r, "pattern") || existing == nil {
			m.pattern = r.form.Get("pattern")
		}
		if has(r, "metric_id") || existing == nil {
			m.metricID, _ = strconv.ParseInt(r.form.Get("metric_id"), 10, 64)
		}
		if has(r, "delta") {
			m.delta, _ = strconv.ParseInt(r.form.Get("delta"), 10, 64)
		}
		if has(r, "position") {
			m.position, _ = strconv.ParseInt(r.form.Get("position"), 10, 64)
		}
		if has(r, "last") {
			m.last = r.form.Get("last") == "true" || r.form.Get("last") == "1"
		}
		switch {
		case !httpMethods[m.httpMethod]:
			return unprocessable("http_method", "is not included in the list")
		case !strings.HasPrefix(m.pattern, "/"):
			return unprocessable("pattern", "shall start with '/'")
		case m.delta <= 0:
			return unprocessable("delta", "must be greater than 0")
		}
		if mt, ok := r.t.metrics[m.metricID]; !ok || mt.owner != ow {
			return unprocessable("metric_id", "can't be blank")
		}
		for _, o := range r.t.rules {
			if o.owner == ow && o.httpMethod == m.httpMethod && o.pattern == m.pattern && (existing == nil || o.id != existing.id) {
				return unprocessable("pattern", "has already been taken")
			}
		}
		code := 200
		if existing == nil {
			m.id = r.t.id()
			code = 201
			if m.position == 0 {
				m.position = int64(len(r.t.rules) + 1)
			}
		} else {
			m.touch()
		}
		r.t.rules[m.id] = m
		return answer{code, map[string]any{"mapping_rule": m.json()}}
	})
}

func createPlan(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		p := &plan{serviceID: svc.id, state: "hidden", stamps: newStamps()}
		if a := applyPlanForm(r, p, true); a.code != 0 {
			return a
		}
		p.id = r.t.id()
		r.t.plans[p.id] = p
		return answer{201, map[string]any{"application_plan": p.json()}}
	})
}

func updatePlan(r *request) answer {
	return withPlan(r, func(p *plan) answer {
		next := *p
		if a := applyPlanForm(r, &next, false); a.code != 0 {
			return a
		}
		next.touch()
		*p = next
		return answer{200, map[string]any{"application_plan": p.json()}}
	})
}

func applyPlanForm(r *request, p *plan, create bool) answer {
	if has(r, "name") || create {
		if p.name = r.form.Get("name"); p.name == "" {
			return unprocessable("name", "can't be blank")
		}
	}
	if create {
		p.systemName = r.form.Get("system_name")
		if p.systemName == "" {
			p.systemName = deriveSystemName(p.name)
		}
		if !systemNamePattern.MatchString(p.systemName) {
			return unprocessable("system_name", "invalid. Only ASCII letters, numbers, dashes and underscores are allowed.")
		}
		for _, o := range r.t.plans {
			if o.serviceID == p.serviceID && o.systemName == p.systemName {
				return unprocessable("system_name", "has already been taken")
			}
		}
	}
	if has(r, "approval_required") {
		p.approvalRequired = r.form.Get("approval_required") == "true" || r.form.Get("approval_required") == "1"
	}
	for key, dst := range map[string]*float64{"setup_fee": &p.setupFee, "cost_per_month": &p.costPerMonth} {
		if has(r, key) {
			v, err := strconv.ParseFloat(r.form.Get(key), 64)
			if err != nil || v < 0 {
				return unprocessable(key, "must be greater than or equal to 0")
			}
			*dst = v
		}
	}
	if has(r, "trial_period_days") {
		v, err := strconv.ParseInt(r.form.Get("trial_period_days"), 10, 64)
		if err != nil || v < 0 {
			return unprocessable("trial_period_days", "must be greater than or equal to 0")
		}
		p.trialPeriodDays = v
	}
	switch r.form.Get("state_event") {
	case "":
	case "publish":
		p.state = "published"
	case "hide":
		p.state = "hidden"
	default:
		return unprocessable("state_event", "is invalid")
	}
	return answer{}
}

func (t *tenant) deletePlan(id int64) {
	for lid, l := range t.limits {
		if l.planID == id {
			delete(t.limits, lid)
		}
	}
	for pid, p := range t.pricing {
		if p.planID == id {
			delete(t.pricing, pid)
		}
	}
	delete(t.plans, id)
}

var periods = map[string]bool{"eternity": true, "year": true, "month": true, "week": true, "day": true, "hour": true, "minute": true}

func withPlanMetric(r *request, f func(*plan) answer) answer {
	return withPlanID(r, func(p *plan) answer {
		if !r.t.metricUsableBy(p.serviceID, r.params["metric_id"]) {
			return notFound()
		}
		return f(p)
	})
}

func createLimit(r *request) answer {
	return withPlanMetric(r, func(p *plan) answer {
		l := &limit{planID: p.id, metricID: r.params["metric_id"]}
		if a := applyLimitForm(r, l, nil); a.code != 0 {
			return a
		}
		l.id = r.t.id()
		r.t.limits[l.id] = l
		return answer{201, map[string]any{"limit": l.json()}}
	})
}

func updateLimit(r *request) answer {
	return withPlanMetric(r, func(p *plan) answer {
		l, ok := r.t.limits[r.params["id"]]
		if !ok || l.planID != p.id || l.metricID != r.params["metric_id"] {
			return notFound()
		}
		next := *l
		if a := applyLimitForm(r, &next, l); a.code != 0 {
			return a
		}
		*l = next
		return answer{200, map[string]any{"limit": l.json()}}
	})
}

func applyLimitForm(r *request, l *limit, existing *limit) answer {
	if has(r, "period") || existing == nil {
		l.period = r.form.Get("period")
	}
	if !periods[l.period] {
		return unprocessable("period", "is not included in the list")
	}
	if has(r, "value") || existing == nil {
		v, err := strconv.ParseInt(r.form.Get("value"), 10, 64)
		if err != nil || v < 0 {
			return unprocessable("value", "must be greater than or equal to 0")
		}
		l.value = v
	}
	for _, o := range r.t.limits {
		if o.planID == l.planID && o.metricID == l.metricID && o.period == l.period && (existing == nil || o.id != existing.id) {
			return unprocessable("period", "has already been taken")
		}
	}
	return answer{}
}

func createPricingRule(r *request) answer {
	return withPlanMetric(r, func(p *plan) answer {
		x := &pricingRule{planID: p.id, metricID: r.params["metric_id"]}
		var err error
		if x.min, err = strconv.ParseInt(r.form.Get("min"), 10, 64); err != nil || x.min < 1 {
			return unprocessable("min", "must be greater than 0")
		}
		if x.max, err = strconv.ParseInt(r.form.Get("max"), 10, 64); err != nil || x.max < x.min {
			return unprocessable("max", "must be greater than min")
		}
		if x.costPerUnit, err = strconv.ParseFloat(r.form.Get("cost_per_unit"), 64); err != nil || x.costPerUnit < 0 {
			return unprocessable("cost_per_unit", "is not a number")
		}
		for _, o := range r.t.pricing {
			if o.planID == x.planID && o.metricID == x.metricID && x.min <= o.max && o.min <= x.max {
				return unprocessable("min", "overlaps with another pricing rule of this metric")
			}
		}
		x.id = r.t.id()
		r.t.pricing[x.id] = x
		return answer{201, map[string]any{"pricing_rule": x.json()}}
	})
}

// addHits creates the hits metric every service and backend API has.
func (t *tenant) addHits(ow owner) {
	m := &metric{id: t.id(), owner: ow, systemName: "hits", friendlyName: "Hits", unit: "hit", description: "Number of API hits", stamps: newStamps()}
	t.metrics[m.id] = m
}
