package simulator

import (
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// tenant is one provider account's objects.
type tenant struct {
	name     string
	nextID   int64
	services map[int64]*service
	backends map[int64]*backendAPI
	metrics  map[int64]*metric
	rules    map[int64]*mappingRule
	usages   map[int64]*backendUsage
	plans    map[int64]*plan
	limits   map[int64]*limit
	pricing  map[int64]*pricingRule
	deploys  int
}

func newTenant(name string) *tenant {
	return &tenant{name: name, services: map[int64]*service{}, backends: map[int64]*backendAPI{}, metrics: map[int64]*metric{},
		rules: map[int64]*mappingRule{}, usages: map[int64]*backendUsage{}, plans: map[int64]*plan{}, limits: map[int64]*limit{},
		pricing: map[int64]*pricingRule{}}
}

func (t *tenant) id() int64 { t.nextID++; return t.nextID }

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// stamps are the created_at/updated_at of every object.
type stamps struct{ created, updated string }

func newStamps() stamps { n := now(); return stamps{n, n} }

func (s *stamps) touch() { s.updated = now() }

type service struct {
	id                               int64
	name, systemName, description    string
	deploymentOption, backendVersion string
	proxy                            map[string]any
	policies                         []any
	oidc                             map[string]bool
	stamps
}

type backendAPI struct {
	id                                             int64
	name, systemName, description, privateEndpoint string
	stamps
}

// owner identifies whose child an object is: a service or a backend API.
type owner struct {
	kind string // "service" or "backend"
	id   int64
}

type metric struct {
	id                                          int64
	owner                                       owner
	parentID                                    int64
	systemName, friendlyName, unit, description string
	stamps
}

type mappingRule struct {
	id                  int64
	owner               owner
	metricID            int64
	pattern, httpMethod string
	delta, position     int64
	last                bool
	stamps
}

type backendUsage struct {
	id, serviceID, backendID int64
	path                     string
}

type plan struct {
	id, serviceID           int64
	name, systemName, state string
	approvalRequired        bool
	trialPeriodDays         int64
	setupFee, costPerMonth  float64
	stamps
}

type limit struct {
	id, planID, metricID int64
	period               string
	value                int64
}

type pricingRule struct {
	id, planID, metricID int64
	min, max             int64
	costPerUnit          float64
}

func (s *service) json() map[string]any {
	return map[string]any{"id": s.id, "name": s.name, "system_name": s.systemName, "description": s.description, "state": "incomplete",
		"deployment_option": s.deploymentOption, "backend_version": s.backendVersion, "created_at": s.created, "updated_at": s.updated}
}

func (b *backendAPI) json() map[string]any {
	return map[string]any{"id": b.id, "name": b.name, "system_name": b.systemName, "description": b.description,
		"private_endpoint": b.privateEndpoint, "created_at": b.created, "updated_at": b.updated}
}

func (m *metric) json() map[string]any {
	out := map[string]any{"id": m.id, "name": m.systemName, "system_name": m.systemName, "friendly_name": m.friendlyName,
		"description": m.description, "created_at": m.created, "updated_at": m.updated}
	if m.parentID == 0 {
		out["unit"] = m.unit
	} else {
		out["parent_id"] = m.parentID
	}
	if m.owner.kind == "service" {
		out["service_id"] = m.owner.id
	} else {
		out["backend_id"] = m.owner.id
	}
	return out
}

func (r *mappingRule) json() map[string]any {
	return map[string]any{"id": r.id, "metric_id": r.metricID, "pattern": r.pattern, "http_method": r.httpMethod, "delta": r.delta,
		"position": r.position, "last": r.last, "created_at": r.created, "updated_at": r.updated}
}

func (u *backendUsage) json() map[string]any {
	return map[string]any{"id": u.id, "path": u.path, "service_id": u.serviceID, "backend_id": u.backendID}
}

func (p *plan) json() map[string]any {
	return map[string]any{"id": p.id, "name": p.name, "system_name": p.systemName, "state": p.state, "approval_required": p.approvalRequired,
		"trial_period_days": p.trialPeriodDays, "setup_fee": p.setupFee, "cost_per_month": p.costPerMonth, "service_id": p.serviceID,
		"default": false, "created_at": p.created, "updated_at": p.updated}
}

func (l *limit) json() map[string]any {
	return map[string]any{"id": l.id, "metric_id": l.metricID, "plan_id": l.planID, "period": l.period, "value": l.value}
}

func (p *pricingRule) json() map[string]any {
	return map[string]any{"id": p.id, "metric_id": p.metricID, "plan_id": p.planID, "min": p.min, "max": p.max, "cost_per_unit": p.costPerUnit}
}

// systemNamePattern is porta's format for system names.
var systemNamePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// deriveSystemName turns a name into a system name when none is given, as porta does.
func deriveSystemName(name string) string {
	out := make([]rune, 0, len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}

// paginate applies page and per_page (default and maximum 500).
func paginate[T any](items []T, form url.Values) []T {
	page, _ := strconv.Atoi(form.Get("page"))
	per, _ := strconv.Atoi(form.Get("per_page"))
	if page < 1 {
		page = 1
	}
	if per < 1 || per > 500 {
		per = 500
	}
	start := (page - 1) * per
	if start >= len(items) {
		return nil
	}
	end := start + per
	if end > len(items) {
		end = len(items)
	}
	return items[start:end]
}

// sortedIDs returns the ids of m in order.
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

// wrapList builds porta's list shape {"<plural>":[{"<singular>":{...}}]}.
func wrapList[V any](plural, singular string, m map[int64]V, keep func(V) bool, toJSON func(V) map[string]any, form url.Values, paginated bool) map[string]any {
	ids := sortedIDs(m, keep)
	if paginated {
		ids = paginate(ids, form)
	}
	items := make([]any, 0, len(ids))
	for _, id := range ids {
		items = append(items, map[string]any{singular: toJSON(m[id])})
	}
	return map[string]any{plural: items}
}
