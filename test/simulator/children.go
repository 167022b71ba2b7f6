package simulator

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// childRoutes are the endpoints of metrics, methods and mapping rules, which services and backend
// APIs both own. Under a backend API the lists are paginated (Admin::Api::BackendApis::BaseController
// paginate only: :index, app/controllers/admin/api/backend_apis/base_controller.rb:11), the metrics and
// methods lists with metadata (wraps_collection, app/representers/metrics_representer.rb:4,
// methods_representer.rb:4), the mapping rules without (a Roar collection,
// app/representers/proxy_rules_representer.rb); under a service they are not. A product's mapping rules
// live under its proxy and are updated with PATCH.
func childRoutes() []route {
	var rs []route
	for _, o := range []struct{ kind, base, rules, ruleUpdate string }{
		{ownerService, "/admin/api/services/{service_id}", "/admin/api/services/{service_id}/proxy/mapping_rules", "PATCH"},
		{ownerBackend, "/admin/api/backend_apis/{backend_api_id}", "/admin/api/backend_apis/{backend_api_id}/mapping_rules", "PUT"},
	} {
		kind := o.kind
		metricPaging, rulePaging := unpaged, unpaged
		if kind == ownerBackend {
			metricPaging, rulePaging = pagedWithMetadata, paged
		}
		rs = append(rs,
			// A service's or backend's metric list holds its methods too (porta lists owner.metrics).
			handle("GET", o.base+"/metrics.json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer {
					ids := sortedIDs(r.t.metrics, func(m *metric) bool { return m.owner == ow })
					return listOf("metrics", "metric", ids, jsonOf(r.t.metrics), r.form, metricPaging)
				})
			}),
			handle("POST", o.base+"/metrics.json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer { return createMetric(r, ow, nil) })
			}),
			handle("GET", o.base+"/metrics/{id}.json", func(r *request) answer {
				return withMetric(r, kind, func(m *metric) answer { return ok("metric", m.json()) })
			}),
			handle("PUT", o.base+"/metrics/{id}.json", func(r *request) answer {
				return withMetric(r, kind, func(m *metric) answer { return updateMetric(r, m, "metric") })
			}),
			handle("DELETE", o.base+"/metrics/{id}.json", func(r *request) answer {
				return withMetric(r, kind, func(m *metric) answer { return deleteMetric(r, m) })
			}),
			handle("GET", o.base+"/metrics/{metric_id}/methods.json", func(r *request) answer {
				return withParent(r, kind, func(parent *metric) answer {
					ids := sortedIDs(r.t.metrics, func(m *metric) bool { return m.parentID == parent.id })
					return listOf("methods", "method", ids, jsonOf(r.t.metrics), r.form, metricPaging)
				})
			}),
			handle("POST", o.base+"/metrics/{metric_id}/methods.json", func(r *request) answer {
				return withParent(r, kind, func(parent *metric) answer { return createMetric(r, parent.owner, parent) })
			}),
			handle("GET", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer {
				return withMethod(r, kind, func(m *metric) answer { return ok("method", m.json()) })
			}),
			handle("PUT", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer {
				return withMethod(r, kind, func(m *metric) answer { return updateMetric(r, m, "method") })
			}),
			handle("DELETE", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer {
				return withMethod(r, kind, func(m *metric) answer { return deleteMetric(r, m) })
			}),
			handle("GET", o.rules+".json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer {
					return listOf("mapping_rules", "mapping_rule", r.t.rulesInOrder(ow), jsonOf(r.t.rules), r.form, rulePaging)
				})
			}),
			handle("POST", o.rules+".json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer { return saveMappingRule(r, ow, nil) })
			}),
			handle("GET", o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { return ok("mapping_rule", m.json()) })
			}),
			handle(o.ruleUpdate, o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { return saveMappingRule(r, m.owner, m) })
			}),
			handle("DELETE", o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { r.t.deleteRule(m.id); return deleted() })
			}),
		)
	}
	return rs
}

// ownerParam is the path parameter naming the owner of metrics and mapping rules.
func ownerParam(kind string) string {
	if kind == ownerService {
		return "service_id"
	}
	return "backend_api_id"
}

func withOwner(r *request, kind string, f func(owner) answer) answer {
	id := r.params[ownerParam(kind)]
	if _, found := r.t.services[id]; kind == ownerService && !found {
		return notFound()
	}
	if _, found := r.t.backends[id]; kind == ownerBackend && !found {
		return notFound()
	}
	return f(owner{kind, id})
}

// withMetric finds {id} among the owner's metrics and methods (porta finds it in owner.metrics).
func withMetric(r *request, kind string, f func(*metric) answer) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m, found := r.t.metrics[r.params["id"]]
		if !found || m.owner != ow {
			return notFound()
		}
		return f(m)
	})
}

// withParent finds {metric_id}, the metric whose methods are addressed.
func withParent(r *request, kind string, f func(*metric) answer) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m, found := r.t.metrics[r.params["metric_id"]]
		if !found || m.owner != ow {
			return notFound()
		}
		return f(m)
	})
}

// withMethod finds method {id} of metric {metric_id}.
func withMethod(r *request, kind string, f func(*metric) answer) answer {
	return withParent(r, kind, func(parent *metric) answer {
		m, found := r.t.metrics[r.params["id"]]
		if !found || m.parentID != parent.id {
			return notFound()
		}
		return f(m)
	})
}

func withRule(r *request, kind string, f func(*mappingRule) answer) answer {
	return withOwner(r, kind, func(ow owner) answer {
		m, found := r.t.rules[r.params["id"]]
		if !found || m.owner != ow {
			return notFound()
		}
		return f(m)
	})
}

// addHits creates the hits metric every service and backend API has (Metric.create_default!).
func (t *tenant) addHits(ow owner) int64 {
	m := &metric{id: t.id(), owner: ow, systemName: "hits", friendlyName: "Hits", unit: "hit", description: "Number of API hits", stamps: newStamps()}
	t.metrics[m.id] = m
	return m.id
}

// createMetric creates a metric (parent nil) or a method of parent, with Metric's validations:
// friendly_name present and unique per owner, unit present for a metric, system_name (or its
// deprecated alias name, else derived from friendly_name) well formed and unique per owner, methods
// only under hits.
func createMetric(r *request, ow owner, parent *metric) answer {
	errs := fieldErrors{}
	friendly := r.form.Get("friendly_name")
	if strings.TrimSpace(friendly) == "" {
		errs.add("friendly_name", "can't be blank")
	}
	sys := r.form.Get("system_name")
	if sys == "" {
		sys = r.form.Get("name")
	}
	if sys == "" && friendly != "" {
		sys = deriveSystemName(friendly, "metric", r.t.nextID+1)
	}
	unit := r.form.Get("unit")
	if parent != nil {
		unit = parent.unit // a method's unit is its parent's
		if parent.systemName != "hits" || parent.parentID != 0 {
			errs.add("parent_id", "You can only create methods under 'hits'")
		}
	} else if strings.TrimSpace(unit) == "" {
		errs.add("unit", "can't be blank")
	}
	if sys != "" && !systemNamePattern.MatchString(sys) {
		errs.add("system_name", msgSystemNameInvalid)
	}
	for _, m := range r.t.metrics {
		if m.owner != ow {
			continue
		}
		if sys != "" && m.systemName == sys {
			errs.add("system_name", "has already been taken")
		}
		if friendly != "" && m.friendlyName == friendly {
			errs.add("friendly_name", "has already been taken")
		}
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	m := &metric{id: r.t.id(), owner: ow, systemName: sys, friendlyName: friendly, unit: unit,
		description: r.form.Get("description"), stamps: newStamps()}
	key := "metric"
	if parent != nil {
		m.parentID, key = parent.id, "method"
	}
	r.t.metrics[m.id] = m
	return created(key, m.json())
}

// updateMetric changes friendly_name, unit (metrics only) and description; the system name is fixed.
func updateMetric(r *request, m *metric, key string) answer {
	next := *m
	errs := fieldErrors{}
	if has(r, "friendly_name") {
		next.friendlyName = r.form.Get("friendly_name")
		if strings.TrimSpace(next.friendlyName) == "" {
			errs.add("friendly_name", "can't be blank")
		}
		for _, o := range r.t.metrics {
			if o.owner == m.owner && o.id != m.id && o.friendlyName == next.friendlyName {
				errs.add("friendly_name", "has already been taken")
				break
			}
		}
	}
	if has(r, "unit") && m.parentID == 0 {
		if next.unit = r.form.Get("unit"); strings.TrimSpace(next.unit) == "" {
			errs.add("unit", "can't be blank")
		}
	}
	if has(r, "description") {
		next.description = r.form.Get("description")
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	next.touch()
	*m = next
	if m.parentID == 0 {
		for _, c := range r.t.metrics {
			if c.parentID == m.id {
				c.unit = m.unit
			}
		}
	}
	return ok(key, m.json())
}

// Metric#destroyable?'s refusals (metric.rb:224-231), in activerecord.errors.models.metric.attributes.base
// (config/locales/en.yml:1992-1996): cannot_delete_in_use, whose %{type} is "Metric" or "Method"
// (Metric#type, metric.rb:135-139), and cannot_delete_hits.
const (
	msgMetricInUse      = "Metric is used by the latest gateway configuration and cannot be deleted"
	msgMethodInUse      = "Method is used by the latest gateway configuration and cannot be deleted"
	msgCannotDeleteHits = "The Hits metric cannot be deleted"
)

// deleteMetric is a metric's or method's DELETE, refused by Metric's before_destroy :avoid_destruction
// (metric.rb:10,224-243) with every reason that applies, in porta's order: the metric is used by the
// latest gateway configuration (metricInLatestConfigs), and it is a product's hits (system_name 'hits';
// a backend's hits is 'hits.<id>' in porta, app/lib/backend_api_logic/metric_extension.rb:12,40-43, so
// the rule spares it). A refusal is 403 {"errors":{"base":[...]}}, as the responder renders a DELETE's
// errors (app/lib/three_scale/api/responder.rb:50-52,67-75). Otherwise it removes the metric with its
// methods and what refers to them; the methods go by association, unchecked (acts_as_tree, and
// destroyable? returns true when destroyed_by_association), as do a deleted product's or backend's metrics.
func deleteMetric(r *request, m *metric) answer {
	var reasons []string
	if r.t.metricInLatestConfigs(m) {
		reasons = append(reasons, msgMetricInUse)
		if m.parentID != 0 {
			reasons[0] = msgMethodInUse
		}
	}
	if m.owner.kind == ownerService && m.systemName == "hits" {
		reasons = append(reasons, msgCannotDeleteHits)
	}
	if len(reasons) > 0 {
		return answer{http.StatusForbidden, map[string]any{"errors": map[string][]string{"base": reasons}}}
	}
	r.t.deleteMetric(m.id)
	return deleted()
}

// metricInLatestConfigs is Metric#belongs_to_latest_config? (metric.rb:233-239): a product's metric is in
// use when its id is the metric_id of a proxy rule of the product's newest sandbox or newest production
// config (Proxy#metric_in_latest_configs?, proxy.rb:121-123; ProxyConfig#contains_metric?,
// proxy_config.rb:124-126); a backend's, when it is so for any product using the backend now
// (owner.services, through its backend usages). The configs' content is read as stored: a mapping rule
// deleted since the last deploy still holds its metric.
func (t *tenant) metricInLatestConfigs(m *metric) bool {
	var products []*service
	if m.owner.kind == ownerService {
		products = append(products, t.services[m.owner.id])
	} else {
		for _, id := range sortedIDs(t.usages, func(u *backendUsage) bool { return u.backendID == m.owner.id }) {
			products = append(products, t.services[t.usages[id].serviceID])
		}
	}
	for _, s := range products {
		if s == nil {
			continue
		}
		for _, env := range []string{envSandbox, envProduction} {
			if c := s.latestConfig(env); c != nil && c.containsMetric(m.id) {
				return true
			}
		}
	}
	return false
}

// deleteMetric deletes a metric with its methods, and the mapping rules, limits and pricing rules on
// them (Metric's dependent: :destroy).
func (t *tenant) deleteMetric(id int64) {
	for mid, m := range t.metrics {
		if m.parentID == id {
			t.deleteMetric(mid)
		}
	}
	for rid, r := range t.rules {
		if r.metricID == id {
			t.deleteRule(rid)
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

// deleteRule removes a mapping rule and closes the gap in its owner's positions (acts_as_list).
func (t *tenant) deleteRule(id int64) {
	gone, found := t.rules[id]
	if !found {
		return
	}
	delete(t.rules, id)
	for _, o := range t.rules {
		if o.owner == gone.owner && o.position > gone.position {
			o.position--
		}
	}
}

// httpMethods is ProxyRule::ALLOWED_HTTP_METHODS.
var httpMethods = map[string]bool{"GET": true, "POST": true, "DELETE": true, "PUT": true, "PATCH": true, "HEAD": true, "OPTIONS": true}

// patternFormat approximates ProxyRule::PatternParser: an absolute path of URI characters and {vars},
// an optional "$", an optional query string.
var patternFormat = regexp.MustCompile(`^/(?:[A-Za-z0-9\-._~!&'()*+,;=:@/]|%[0-9A-Fa-f]{2}|\{[A-Za-z0-9_]+\})*\$?(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?{}%\[\]]*)?$`)

// saveMappingRule creates (existing nil) or updates a mapping rule with ProxyRule's validations:
// http_method, pattern and metric present; http_method one of ALLOWED_HTTP_METHODS (case matters);
// pattern in PatternParser's format; delta an integer greater than 0. A metric_id that is not one of
// the owner's metrics is 404, as the controllers look it up first. Porta does not refuse two rules
// with the same verb and pattern.
func saveMappingRule(r *request, ow owner, existing *mappingRule) answer {
	m := &mappingRule{owner: ow, delta: 1, stamps: newStamps()}
	if existing != nil {
		cp := *existing
		m = &cp
	}
	if has(r, "metric_id") {
		id, err := strconv.ParseInt(r.form.Get("metric_id"), 10, 64)
		if mt, found := r.t.metrics[id]; err != nil || !found || mt.owner != ow {
			return notFound()
		}
		m.metricID = id
	}
	errs := fieldErrors{}
	if has(r, "http_method") || existing == nil {
		m.httpMethod = r.form.Get("http_method")
	}
	if has(r, "pattern") || existing == nil {
		m.pattern = r.form.Get("pattern")
	}
	if has(r, "delta") {
		d, err := strconv.ParseFloat(r.form.Get("delta"), 64)
		switch {
		case err != nil:
			errs.add("delta", "is not a number")
		case d != float64(int64(d)):
			errs.add("delta", "must be an integer")
		case d <= 0:
			errs.add("delta", "must be greater than 0")
		}
		m.delta = int64(d)
	}
	if has(r, "last") {
		m.last = flag(r.form.Get("last"))
	}
	if has(r, "redirect_url") {
		m.redirectURL = r.form.Get("redirect_url")
	}
	switch {
	case m.httpMethod == "":
		errs.add("http_method", "can't be blank")
	case !httpMethods[m.httpMethod]:
		errs.add("http_method", "is not included in the list")
	}
	switch {
	case m.pattern == "":
		errs.add("pattern", "can't be blank")
	case !patternFormat.MatchString(m.pattern) || strings.Contains(m.pattern, "//"):
		errs.add("pattern", "is invalid")
	case len(m.pattern) > 255:
		errs.add("pattern", "is too long (maximum is 255 characters)")
	}
	if m.metricID == 0 {
		errs.add("metric_id", "can't be blank")
	}
	if a := errs.answer(); a.code != 0 {
		return a
	}
	// position is an integer column: Rails casts "2.7" to 2 and text to 0 (which check_top_position then
	// raises to 1, see placeRule), and a blank one to nil: a new rule then goes last; an existing one
	// would leave the list, which is not modelled (the position is kept).
	raw := strings.TrimSpace(r.form.Get("position"))
	setPos := raw != ""
	if setPos {
		f, _ := strconv.ParseFloat(raw, 64)
		m.position = int64(f)
	}
	if existing == nil {
		m.id = r.t.id()
		r.t.rules[m.id] = m
		r.t.placeRule(m, setPos, 0)
		return created("mapping_rule", m.json())
	}
	from := existing.position
	m.touch()
	*existing = *m
	if setPos {
		r.t.placeRule(existing, true, from)
	}
	return answer{http.StatusOK, map[string]any{"mapping_rule": existing.json()}}
}

// rulesInOrder returns the ids of an owner's mapping rules as porta lists them: by position, then id
// (Proxy has_many :proxy_rules and BackendApi has_many :proxy_rules are ordered by position,
// app/models/proxy.rb:21, backend_api.rb:22; the backend list adds order(:id),
// app/controllers/admin/api/backend_apis/mapping_rules_controller.rb:10).
func (t *tenant) rulesInOrder(ow owner) []int64 {
	ids := sortedIDs(t.rules, func(r *mappingRule) bool { return r.owner == ow })
	sort.SliceStable(ids, func(i, j int) bool { return t.rules[ids[i]].position < t.rules[ids[j]].position })
	return ids
}

// placeRule positions a created (from 0) or updated mapping rule as ProxyRule's acts_as_list does
// (acts_as_list scope: [owner_id, owner_type], add_new_at: :bottom, app/models/proxy_rule.rb:8; gem
// acts_as_list 0.9.17, Gemfile.lock:163; the position column has no default, db/schema.rb:1154).
// set says whether a position was sent, m.position holding it.
//   - check_top_position (list.rb:471-475): a position below 1 becomes 1.
//   - Created without a position: at the bottom, the highest position + 1 (add_to_list_bottom,
//     list.rb:251-263). Created with one: the rules at that position or below move down one, and the
//     rule takes it, even past the bottom, leaving a gap (increment_positions_on_lower_items,
//     list.rb:309-317).
//   - Updated to a new position (update_positions, list.rb:415-425): only when another rule holds it do
//     the rules between the old and the new position shift one towards the old
//     (shuffle_positions_on_intermediate_items, list.rb:348-393); a free position (past the bottom) is
//     simply taken, leaving a gap where the rule was.
func (t *tenant) placeRule(m *mappingRule, set bool, from int64) {
	if set && m.position < 1 {
		m.position = 1
	}
	others := func(f func(o *mappingRule)) {
		for _, o := range t.rules {
			if o.owner == m.owner && o.id != m.id {
				f(o)
			}
		}
	}
	switch {
	case from == 0 && !set:
		var bottom int64
		others(func(o *mappingRule) { bottom = max(bottom, o.position) })
		m.position = bottom + 1
	case from == 0:
		others(func(o *mappingRule) {
			if o.position >= m.position {
				o.position++
			}
		})
	case m.position != from:
		taken := false
		others(func(o *mappingRule) { taken = taken || o.position == m.position })
		if !taken {
			return
		}
		to := m.position
		others(func(o *mappingRule) {
			switch {
			case from < to && o.position > from && o.position <= to:
				o.position--
			case to < from && o.position >= to && o.position < from:
				o.position++
			}
		})
	}
}
