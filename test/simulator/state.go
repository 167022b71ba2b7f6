package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// tenant is one provider account's objects. Ids increase per tenant and are shared by all kinds, as
// porta's are unique per table (tests only rely on them increasing).
type tenant struct {
	name     string
	nextID   int64
	services map[int64]*service
	backends map[int64]*backendAPI
	metrics  map[int64]*metric // metrics and methods of services and backends
	rules    map[int64]*mappingRule
	usages   map[int64]*backendUsage
	plans    map[int64]*plan
	limits   map[int64]*limit
	pricing  map[int64]*pricingRule
	accounts map[int64]*account
	users    map[int64]*user
	apps     map[int64]*application
	docs     map[int64]*apiDoc
	registry map[int64]*registryPolicy // the APIcast policy registry's custom policies
	features map[int64]*feature        // the products' features, with the plans that enable them
	// accountPlans and servicePlans are the tenant's account plans and its services' service plans
	// (accountplans.go, serviceplans.go); subscriptions the developer accounts' service contracts.
	accountPlans  map[int64]*simplePlan
	servicePlans  map[int64]*simplePlan
	subscriptions map[int64]*serviceContract
	// The developer portal's content (cms.go): sections, templates (pages, layouts, partials, built-in
	// pages and partials) and files, every tenant starting with porta's default portal (cms_seed.go).
	sections  map[int64]*cmsSection
	templates map[int64]*cmsTemplate
	files     map[int64]*cmsFile
	// cmsNextID numbers the CMS objects apart from the others (porta's ids are per table), so that the
	// default portal every tenant gets leaves the other objects' ids as they were.
	cmsNextID int64
	// fieldDefs are the tenant's fields definitions (fields.go), numbered by fieldsNextID apart from the
	// other objects, as the CMS's are.
	fieldDefs    map[int64]*fieldsDefinition
	fieldsNextID int64
	// The developer portal's settings and sign-in providers (portal_settings.go).
	settings *portalSettings
	signIn   map[int64]*signInProvider
	deploys  int
	limiter  *rate.Limiter // the tenant's API rate limit (Faults.TenantRateLimit)
	// refusedAt is the last 429 of the rate limit; quietUntil the end of the Retry-After it announced.
	refusedAt, quietUntil time.Time
	// multipleUsersDenied: the tenant's multiple_users switch is denied (SetMultipleUsers).
	multipleUsersDenied bool
	// policyRegistryDenied: the tenant lacks the policy_registry feature (SetPolicyRegistry).
	policyRegistryDenied bool
	// account is the tenant's account in master's books, for a tenant master made (master.go); nil for
	// one of Options.Tenants or AddTenant.
	account *account
	// ownAccountID is the account id of a tenant of Options.Tenants or AddTenant, which has no account in
	// master's books (ownAccountBase and up, in the order the tenants were added); see tenantAccountID.
	ownAccountID int64
	// ownAccount is the provider account of a tenant of Options.Tenants or AddTenant, made on first use
	// (tenantProvider, provider.go); a tenant master made has its account in master's books (account).
	ownAccount *account
	// webhook is the tenant's web hook (provider.go), nil until a PUT first saves one.
	webhook *webHook
	// adminUsers are the users of a tenant of Options.Tenants or AddTenant, its admin portal's users
	// (adminusers.go); a tenant master made has them in master's books (tenant.staff). staffPerms are
	// the members' permissions by user id, for both.
	adminUsers map[int64]*user
	staffPerms map[int64]*memberPermissions
}

func newTenant(name string) *tenant {
	t := &tenant{name: name, services: map[int64]*service{}, backends: map[int64]*backendAPI{}, metrics: map[int64]*metric{},
		rules: map[int64]*mappingRule{}, usages: map[int64]*backendUsage{}, plans: map[int64]*plan{}, limits: map[int64]*limit{},
		pricing: map[int64]*pricingRule{}, accounts: map[int64]*account{}, users: map[int64]*user{}, apps: map[int64]*application{},
		docs: map[int64]*apiDoc{}, registry: map[int64]*registryPolicy{}, features: map[int64]*feature{},
		sections: map[int64]*cmsSection{}, templates: map[int64]*cmsTemplate{}, files: map[int64]*cmsFile{},
		settings: newPortalSettings(), signIn: map[int64]*signInProvider{},
		accountPlans: map[int64]*simplePlan{}, servicePlans: map[int64]*simplePlan{}, subscriptions: map[int64]*serviceContract{},
		fieldDefs: map[int64]*fieldsDefinition{}, adminUsers: map[int64]*user{}, staffPerms: map[int64]*memberPermissions{}}
	t.seedCMS()
	t.createDefaultAccountPlan()
	t.createDefaultFields()
	return t
}

func (t *tenant) id() int64 { t.nextID++; return t.nextID }

// now is porta's timestamp format (ISO 8601 with the zone).
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// stamps are the created_at/updated_at of an object.
type stamps struct{ created, updated string }

func newStamps() stamps { n := now(); return stamps{n, n} }

func (s *stamps) touch() { s.updated = now() }

type service struct {
	id                               int64
	name, systemName, description    string
	deploymentOption, backendVersion string
	// optionalAppKey is porta's mandatory_app_key switched off (it is on by default, db/schema.rb:1212;
	// the Account Management API cannot change it: the admin portal can, SetMandatoryAppKey here).
	optionalAppKey bool
	state          string
	proxy          map[string]any
	policies       []any
	oidc           map[string]bool
	// configs are the versions of the product's gateway configuration, by environment (envSandbox,
	// envProduction), in the order they were made (proxyconfigs.go).
	configs map[string][]*proxyConfig
	stamps
}

type backendAPI struct {
	id                                             int64
	name, systemName, description, privateEndpoint string
	stamps
}

// owner identifies whose child a metric or mapping rule is: a service or a backend API.
type owner struct {
	kind string // ownerService or ownerBackend
	id   int64
}

const (
	ownerService = "service"
	ownerBackend = "backend"
)

type metric struct {
	id                                          int64
	owner                                       owner
	parentID                                    int64 // 0 for a metric; hits' id for a method
	systemName, friendlyName, unit, description string
	stamps
}

type mappingRule struct {
	id                  int64
	owner               owner
	metricID            int64
	pattern, httpMethod string
	redirectURL         string
	delta, position     int64
	last                bool
	stamps
}

type backendUsage struct {
	id, serviceID, backendID int64
	path                     string
	stamps
}

type plan struct {
	id, serviceID                        int64
	name, systemName, state, description string
	approvalRequired                     bool
	trialPeriodDays                      int64
	setupFee, costPerMonth               float64
	// isDefault: the plan is its service's default_application_plan (PUT .../default.json).
	isDefault bool
	stamps
}

type limit struct {
	id, planID, metricID int64
	period               string
	value                int64
	stamps
}

type pricingRule struct {
	id, planID, metricID int64
	min                  int64
	max                  *int64 // nil: no upper bound
	costPerUnit          float64
	stamps
}

func (s *service) json() map[string]any {
	return map[string]any{"id": s.id, "name": s.name, "system_name": s.systemName, "description": s.description, "state": s.state,
		"deployment_option": s.deploymentOption, "backend_version": s.backendVersion, "created_at": s.created, "updated_at": s.updated}
}

func (b *backendAPI) json() map[string]any {
	return map[string]any{"id": b.id, "name": b.name, "system_name": b.systemName, "description": b.description,
		"private_endpoint": b.privateEndpoint, "created_at": b.created, "updated_at": b.updated}
}

func (m *metric) json() map[string]any {
	out := map[string]any{"id": m.id, "name": m.systemName, "system_name": m.systemName, "friendly_name": m.friendlyName,
		"description": m.description, "unit": m.unit, "created_at": m.created, "updated_at": m.updated}
	if m.parentID != 0 {
		out["parent_id"] = m.parentID
	}
	if m.owner.kind == ownerService {
		out["service_id"] = m.owner.id
	} else {
		out["backend_id"] = m.owner.id
	}
	return out
}

func (r *mappingRule) json() map[string]any {
	ownerType := "Proxy"
	if r.owner.kind == ownerBackend {
		ownerType = "BackendApi"
	}
	out := map[string]any{"id": r.id, "metric_id": r.metricID, "pattern": r.pattern, "http_method": r.httpMethod, "delta": r.delta,
		"position": r.position, "last": r.last, "owner_id": r.owner.id, "owner_type": ownerType, "created_at": r.created, "updated_at": r.updated}
	if r.redirectURL != "" {
		out["redirect_url"] = r.redirectURL
	}
	return out
}

func (u *backendUsage) json() map[string]any {
	return map[string]any{"id": u.id, "path": u.path, "service_id": u.serviceID, "backend_id": u.backendID}
}

// linkBase stands for the tenant's admin host in the absolute URLs of hypermedia links.
const linkBase = "https://admin.simulator.invalid"

// json renders setup_fee and cost_per_month as porta does: JSON numbers written as Ruby writes a Float
// (PlanRepresenter#setup_fee and #cost_per_month call to_f, app/representers/plan_representer.rb:21-27),
// e.g. 10.0, never 10 nor "10.0". Like ApplicationPlanRepresenter (app/representers/
// application_plan_representer.rb), it has no service_id (only the XML has one, application_plan.rb:43-52):
// the product is in the "service" link.
func (p *plan) json() map[string]any {
	return map[string]any{"id": p.id, "name": p.name, "system_name": p.systemName, "state": p.state, "description": p.description,
		"approval_required": p.approvalRequired, "trial_period_days": p.trialPeriodDays, "setup_fee": rubyFloat(p.setupFee),
		"cost_per_month": rubyFloat(p.costPerMonth), "default": p.isDefault, "custom": false,
		"created_at": p.created, "updated_at": p.updated, "links": []any{
			map[string]any{"rel": "service", "href": fmt.Sprintf("%s/admin/api/services/%d", linkBase, p.serviceID)},
			map[string]any{"rel": "self", "href": fmt.Sprintf("%s/admin/api/services/%d/application_plans/%d", linkBase, p.serviceID, p.id)},
		}}
}

func (l *limit) json() map[string]any {
	return map[string]any{"id": l.id, "metric_id": l.metricID, "plan_id": l.planID, "period": l.period, "value": l.value,
		"created_at": l.created, "updated_at": l.updated}
}

// json renders cost_per_unit as porta does: a JSON string, the decimal column's BigDecimal as
// ActiveSupport writes it (PricingRuleRepresenter property :cost_per_unit,
// app/representers/pricing_rule_representer.rb:8; db/schema.rb:1019 decimal precision 20 scale 4), e.g.
// "1.92" or "1.0".
func (p *pricingRule) json() map[string]any {
	out := map[string]any{"id": p.id, "metric_id": p.metricID, "plan_id": p.planID, "min": p.min, "max": nil,
		"cost_per_unit": rubyDecimal(p.costPerUnit), "created_at": p.created, "updated_at": p.updated}
	if p.max != nil {
		out["max"] = *p.max
	}
	return out
}

// systemNamePattern is porta's SystemName format, /\A\w[\w\-\/_]+\z/ (Ruby's \w is ASCII): two
// characters at least.
var systemNamePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_/-]+$`)

// msgSystemNameInvalid is porta's message for a malformed system name.
const msgSystemNameInvalid = "invalid. Only ASCII letters, numbers, dashes and underscores are allowed."

// deriveSystemName is porta's default system name, human_name.parameterize.underscore: lower case,
// runs of other characters become one separator, no separator at the ends, "-" turned into "_".
// An empty result is replaced by "<kind>_<id>" (porta uses a random suffix).
func deriveSystemName(name, kind string, id int64) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		default:
			sep = true
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("%s_%d", kind, id)
	}
	return b.String()
}

// rubyDecimal writes v as Ruby's BigDecimal#to_s("F"), which ActiveSupport uses for JSON: the shortest
// decimal, with ".0" when it is whole ("5.55", "1.0").
func rubyDecimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rubyFloat is a JSON number written as Ruby's Float#to_s: like rubyDecimal, in scientific notation from
// 1e16 on ("1.0e+16").
func rubyFloat(v float64) json.Number {
	if math.Abs(v) < 1e16 {
		return json.Number(rubyDecimal(v))
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return json.Number(mant + "e" + exp)
}

// maxPerPage is Admin::Api::Filters::Pagination's per_page_range 1..500, default 500
// (app/controllers/admin/api/filters/pagination.rb:26-27).
const maxPerPage = 500

// page reads porta's pagination parameters: page from 1, per_page in 1..500 (default 500); a value
// out of range falls back to the default, as Admin::Api::Filters::Pagination#current_page and #per_page
// do (pagination.rb:50-68).
func page(form url.Values) (pageNo, perPage int) {
	pageNo, err := strconv.Atoi(form.Get("page"))
	if err != nil || pageNo < 1 {
		pageNo = 1
	}
	perPage, err = strconv.Atoi(form.Get("per_page"))
	if err != nil || perPage < 1 || perPage > maxPerPage {
		perPage = maxPerPage
	}
	return pageNo, perPage
}

// paginate returns one page of items.
func paginate[T any](items []T, form url.Values) []T {
	pageNo, perPage := page(form)
	start := (pageNo - 1) * perPage
	if start >= len(items) {
		return nil
	}
	return items[start:min(start+perPage, len(items))]
}

// sortedIDs returns the ids of m kept by keep (all when nil), in increasing order.
func sortedIDs[V any](m map[int64]V, keep func(V) bool) []int64 {
	var ids []int64
	for id, v := range m {
		if keep == nil || keep(v) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// jsonOf renders the object of m with an id.
func jsonOf[V interface{ json() map[string]any }](m map[int64]V) func(int64) map[string]any {
	return func(id int64) map[string]any { return m[id].json() }
}

// paging says whether and how porta pages a list.
type paging int

const (
	// unpaged lists ignore page and per_page.
	unpaged paging = iota
	// paged lists answer one page (Admin::Api::Filters::Pagination).
	paged
	// pagedWithMetadata lists are paged and, being rendered by a representer declared with
	// wraps_collection, add {"metadata":{"per_page","total_entries","total_pages","current_page"}} when
	// the list is longer than a page (ThreeScale::Api::Collection#to_json and #paginated?,
	// app/lib/three_scale/api/collection.rb:20-22,50-66).
	pagedWithMetadata
)

// wrapList builds porta's list shape {"<plural>":[{"<singular>":{...}}]} of the objects of m kept by keep,
// in id order, one page of it if paginated.
func wrapList[V any](plural, singular string, m map[int64]V, keep func(V) bool, toJSON func(V) map[string]any, form url.Values, paginated bool) answer {
	p := unpaged
	if paginated {
		p = paged
	}
	return listOf(plural, singular, sortedIDs(m, keep), func(id int64) map[string]any { return toJSON(m[id]) }, form, p)
}

// listOf builds porta's list shape {"<plural>":[{"<singular>":{...}}]} of the objects with ids, in that
// order, one page of it unless unpaged.
func listOf(plural, singular string, ids []int64, toJSON func(int64) map[string]any, form url.Values, p paging) answer {
	all := len(ids)
	if p != unpaged {
		ids = paginate(ids, form)
	}
	items := make([]any, 0, len(ids))
	for _, id := range ids {
		items = append(items, map[string]any{singular: toJSON(id)})
	}
	body := map[string]any{plural: items}
	if pageNo, perPage := page(form); p == pagedWithMetadata {
		addMetadata(body, pageNo, perPage, all)
	}
	return answer{200, body}
}

// addMetadata adds a paged list's "metadata" when the list is longer than a page (ThreeScale::Api::
// Collection#paginated?, app/lib/three_scale/api/collection.rb:62-66).
func addMetadata(body map[string]any, pageNo, perPage, all int) {
	if perPage < all {
		body["metadata"] = map[string]any{"per_page": perPage, "total_entries": all, "total_pages": (all + perPage - 1) / perPage,
			"current_page": pageNo}
	}
}

// Kinds of remote objects known to Count and Objects.
const (
	KindServices      = "services"
	KindBackendAPIs   = "backend_apis"
	KindMetrics       = "metrics" // metrics and methods, of services and backends
	KindMethods       = "methods" // methods only
	KindMappingRules  = "mapping_rules"
	KindBackendUsages = "backend_usages"
	KindPlans         = "application_plans"
	KindLimits        = "limits"
	KindPricingRules  = "pricing_rules"
	KindProxies       = "proxies"
	KindPolicies      = "policies"            // one entry per service: {"service_id", "policies_config"}
	KindOIDC          = "oidc_configurations" // one entry per service
	KindDeploys       = "deploys"             // Count only: POST proxy/deploy requests answered so far
	// KindProxyConfigs are the versions of the products' gateway configurations, of both environments:
	// {"id", "service_id", "environment", "version"} (the content left out), in id order.
	KindProxyConfigs   = "proxy_configs"
	KindCustomPolicies = "custom_policies" // the policy registry's custom policies
	KindAccounts       = "accounts"
	KindUsers          = "users"
	KindApplications   = "applications"
	KindAPIDocs        = "api_docs"
	KindFeatures       = "features" // the products' features, with "service_id" (0: the account's)
	// KindPlanFeatures are the features enabled on plans of any kind: {"plan_id", "feature_id"}, in
	// feature then plan order.
	KindPlanFeatures = "plan_features"
	// KindCMSSections, KindCMSTemplates and KindCMSFiles are the developer portal's content as the CMS
	// API shows one object: sections; templates with draft and published; files with "size" and
	// "sha256" (the hex digest of the content) added.
	KindCMSSections  = "cms_sections"
	KindCMSTemplates = "cms_templates"
	KindCMSFiles     = "cms_files"
	// KindPortalSettings is one object, the developer portal's settings as GET /admin/api/settings.json
	// shows them; KindSignInProviders the developer portal's sign-in providers as the API shows them,
	// client_secret included.
	KindPortalSettings  = "portal_settings"
	KindSignInProviders = "sign_in_providers"
	// KindAccountPlans and KindServicePlans are the account and service plans as the API renders them
	// (a service plan with "service_id" added); KindServiceSubscriptions the accounts' service contracts.
	KindAccountPlans         = "account_plans"
	KindServicePlans         = "service_plans"
	KindServiceSubscriptions = "service_subscriptions"
	// KindFieldsDefinitions are the tenant's fields definitions as the API renders them, in the order
	// GET /admin/api/fields_definitions.json lists them (position, then id). The values of accounts' extra
	// fields show in KindAccounts as the API shows them: top-level keys of the account, by field name.
	KindFieldsDefinitions = "fields_definitions"
	// KindProvider is one object, the tenant's own provider account as GET /admin/api/provider.json
	// shows it; KindWebhooks the tenant's web hook as PUT /admin/api/webhooks.json answers it, none
	// until a PUT first saved one (provider.go).
	KindProvider = "provider"
	KindWebhooks = "webhooks"
	// KindAdminUsers are the tenant's own users, its admin portal's (GET /admin/api/users.json; the
	// impersonation admin left out, as there), never among KindUsers, the developer accounts' users;
	// KindAdminSignInProviders the admin portal's sign-in providers as the API shows them (adminsignin.go).
	KindAdminUsers           = "admin_users"
	KindAdminSignInProviders = "admin_sign_in_providers"
)

// Count returns how many objects of a kind (see the Kind constants) a tenant has; -1 for an unknown
// tenant or kind.
func (s *Simulator) Count(tenantName, kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if !found {
		return -1
	}
	if kind == KindDeploys {
		return t.deploys
	}
	if kind == KindProvider {
		return 1
	}
	objs, known := t.objects(kind)
	if !known {
		return -1
	}
	return len(objs)
}

// Objects returns a tenant's objects of a kind as the API renders them (without wrapper), in id
// order; nil for an unknown tenant or kind. Tests use it to assert remote state without HTTP.
func (s *Simulator) Objects(tenantName, kind string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if !found {
		return nil
	}
	if kind == KindProvider {
		return []map[string]any{s.tenantProvider(t).json()}
	}
	objs, _ := t.objects(kind)
	return objs
}

func (t *tenant) objects(kind string) ([]map[string]any, bool) {
	var out []map[string]any
	collect := func(ids []int64, f func(int64) map[string]any) {
		out = make([]map[string]any, 0, len(ids))
		for _, id := range ids {
			out = append(out, f(id))
		}
	}
	switch kind {
	case KindServices:
		collect(sortedIDs(t.services, nil), func(id int64) map[string]any { return t.services[id].json() })
	case KindFeatures:
		collect(sortedIDs(t.features, nil), func(id int64) map[string]any {
			j := t.features[id].json()
			j["service_id"] = t.features[id].serviceID
			return j
		})
	case KindPlanFeatures:
		out = []map[string]any{}
		for _, fid := range sortedIDs(t.features, nil) {
			for _, pid := range sortedIDs(t.features[fid].plans, func(bool) bool { return true }) {
				out = append(out, map[string]any{"plan_id": pid, "feature_id": fid})
			}
		}
	case KindBackendAPIs:
		collect(sortedIDs(t.backends, nil), func(id int64) map[string]any { return t.backends[id].json() })
	case KindMetrics:
		collect(sortedIDs(t.metrics, nil), func(id int64) map[string]any { return t.metrics[id].json() })
	case KindMethods:
		collect(sortedIDs(t.metrics, func(m *metric) bool { return m.parentID != 0 }), func(id int64) map[string]any { return t.metrics[id].json() })
	case KindMappingRules:
		collect(sortedIDs(t.rules, nil), func(id int64) map[string]any { return t.rules[id].json() })
	case KindBackendUsages:
		collect(sortedIDs(t.usages, nil), func(id int64) map[string]any { return t.usages[id].json() })
	case KindPlans:
		collect(sortedIDs(t.plans, nil), func(id int64) map[string]any { return t.plans[id].json() })
	case KindLimits:
		collect(sortedIDs(t.limits, nil), func(id int64) map[string]any { return t.limits[id].json() })
	case KindPricingRules:
		collect(sortedIDs(t.pricing, nil), func(id int64) map[string]any { return t.pricing[id].json() })
	case KindProxies:
		collect(sortedIDs(t.services, nil), func(id int64) map[string]any { return t.services[id].proxyJSON(t) })
	case KindAccounts:
		collect(sortedIDs(t.accounts, nil), func(id int64) map[string]any { return t.accounts[id].json() })
	case KindUsers:
		collect(sortedIDs(t.users, nil), func(id int64) map[string]any { return t.users[id].json() })
	case KindApplications:
		collect(sortedIDs(t.apps, nil), func(id int64) map[string]any { return t.apps[id].json(t) })
	case KindAPIDocs:
		collect(sortedIDs(t.docs, nil), func(id int64) map[string]any { return t.docs[id].json() })
	case KindProxyConfigs:
		out = []map[string]any{}
		for _, sid := range sortedIDs(t.services, nil) {
			for _, env := range []string{envSandbox, envProduction} {
				for _, c := range t.services[sid].configs[env] {
					out = append(out, map[string]any{"id": c.id, "service_id": sid, "environment": c.env, "version": c.version})
				}
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["id"].(int64) < out[j]["id"].(int64) })
	case KindCMSSections:
		collect(sortedIDs(t.sections, nil), jsonOf(t.sections))
	case KindCMSTemplates:
		collect(sortedIDs(t.templates, nil), func(id int64) map[string]any { return t.templates[id].json(false) })
	case KindCMSFiles:
		collect(sortedIDs(t.files, nil), func(id int64) map[string]any { return t.files[id].dump() })
	case KindPortalSettings:
		out = []map[string]any{t.settings.json(t)}
	case KindWebhooks:
		out = []map[string]any{}
		if t.webhook != nil {
			out = append(out, t.webhook.json())
		}
	case KindAccountPlans:
		collect(sortedIDs(t.accountPlans, nil), func(id int64) map[string]any { return t.accountPlans[id].json() })
	case KindServicePlans:
		collect(sortedIDs(t.servicePlans, nil), func(id int64) map[string]any {
			j := t.servicePlans[id].json()
			j["service_id"] = t.servicePlans[id].serviceID
			return j
		})
	case KindServiceSubscriptions:
		collect(sortedIDs(t.subscriptions, nil), func(id int64) map[string]any { return t.subscriptions[id].json(t) })
	case KindFieldsDefinitions:
		defs := t.definedFields("")
		out = make([]map[string]any, 0, len(defs))
		for _, f := range defs {
			out = append(out, f.json())
		}
	case KindSignInProviders:
		collect(sortedIDs(t.signIn, (*signInProvider).forDevelopers), jsonOf(t.signIn))
	case KindAdminSignInProviders:
		collect(sortedIDs(t.signIn, (*signInProvider).forAdmins), jsonOf(t.signIn))
	case KindAdminUsers:
		book, _ := t.staff()
		collect(t.staffIDs(nil), func(id int64) map[string]any { return book[id].json() })
	case KindCustomPolicies:
		collect(sortedIDs(t.registry, nil), func(id int64) map[string]any { return t.registry[id].json() })
	case KindPolicies:
		collect(sortedIDs(t.services, nil), func(id int64) map[string]any {
			return map[string]any{"service_id": id, "policies_config": t.services[id].policies}
		})
	case KindOIDC:
		collect(sortedIDs(t.services, nil), func(id int64) map[string]any {
			out := map[string]any{"service_id": id}
			for k, v := range t.services[id].oidc {
				out[k] = v
			}
			return out
		})
	default:
		return nil, false
	}
	return out, true
}

// DeleteAllMappingRules removes every mapping rule of a tenant behind the API's back, to imitate a
// change made by hand in the admin portal (drift). It reports whether the tenant exists.
func (s *Simulator) DeleteAllMappingRules(tenantName string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if found {
		t.rules = map[int64]*mappingRule{}
	}
	return found
}

// SetTraffic records that an application had traffic at the time given (its first_traffic_at and
// first_daily_traffic_at, which porta takes from apisonator's first-traffic events); it reports whether
// the tenant and the application exist.
func (s *Simulator) SetTraffic(tenantName string, appID int64, at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if !found || t.apps[appID] == nil {
		return false
	}
	t.apps[appID].firstDailyTraffic = at.UTC().Format(time.RFC3339)
	return true
}

// AddApplications subscribes n more applications to a plan, behind the API's back (as if developers
// had signed up to it in the portal; they belong to no account the API knows), or, for a negative n,
// removes that many of the plan's applications. While a plan has applications, porta refuses to delete
// it (planDeletion in plans.go). It reports whether the tenant and the plan exist.
func (s *Simulator) AddApplications(tenantName string, planID int64, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.names[tenantName]
	if !found {
		return false
	}
	p, found := t.plans[planID]
	if !found {
		return false
	}
	for ; n > 0; n-- {
		a := &application{id: t.id(), serviceID: p.serviceID, planID: p.id, state: "live", appID: randomHex(4), stamps: newStamps()}
		a.name = fmt.Sprintf("Application %d", a.id)
		t.apps[a.id] = a
	}
	for _, id := range sortedIDs(t.apps, func(a *application) bool { return a.planID == p.id }) {
		if n >= 0 {
			break
		}
		delete(t.apps, id)
		n++
	}
	return true
}
