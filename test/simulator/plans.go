package simulator

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// planRoutes are the endpoints of application plans, their limits and their pricing rules.
func planRoutes() []route {
	return []route{
		handle("GET", "/admin/api/application_plans.json", func(r *request) answer {
			return wrapList("plans", "application_plan", r.t.plans, nil, (*plan).json, r.form, false)
		}),
		handle("GET", "/admin/api/services/{service_id}/application_plans.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				return wrapList("plans", "application_plan", r.t.plans, func(p *plan) bool { return p.serviceID == svc.id }, (*plan).json, r.form, false)
			})
		}),
		handle("POST", "/admin/api/services/{service_id}/application_plans.json", createPlan),
		handle("GET", "/admin/api/services/{service_id}/application_plans/{id}.json", func(r *request) answer {
			return withPlan(r, func(p *plan) answer { return ok("application_plan", p.json()) })
		}),
		handle("PUT", "/admin/api/services/{service_id}/application_plans/{id}.json", updatePlan),
		// ApplicationPlansController#default makes the plan its service's default application plan
		// (application_plans_controller.rb:47-52, service.update_attribute): the one a signup contracts.
		handle("PUT", "/admin/api/services/{service_id}/application_plans/{id}/default.json", func(r *request) answer {
			return withPlan(r, func(p *plan) answer {
				for _, other := range r.t.plans {
					if other.serviceID == p.serviceID {
						other.isDefault = other.id == p.id
					}
				}
				return ok("application_plan", p.json())
			})
		}),
		handle("DELETE", "/admin/api/services/{service_id}/application_plans/{id}.json", func(r *request) answer {
			return withPlan(r, func(p *plan) answer { return planDeletion(r.t, p) })
		}),

		// Admin::Api::ApplicationPlanLimitsController#index pages with the filter's current_page and
		// per_page (app/controllers/admin/api/application_plan_limits_controller.rb:7): at most 500 a page;
		// UsageLimitsRepresenter is a wraps_collection (app/representers/usage_limits_representer.rb:4).
		handle("GET", "/admin/api/application_plans/{application_plan_id}/limits.json", func(r *request) answer {
			return withPlanID(r, func(p *plan) answer {
				ids := sortedIDs(r.t.limits, func(l *limit) bool { return l.planID == p.id })
				return listOf("limits", "limit", ids, jsonOf(r.t.limits), r.form, pagedWithMetadata)
			})
		}),
		handle("GET", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json", func(r *request) answer {
			return withPlanMetric(r, func(p *plan, m *metric) answer {
				return wrapList("limits", "limit", r.t.limits, func(l *limit) bool { return l.planID == p.id && l.metricID == m.id }, (*limit).json, r.form, false)
			})
		}),
		handle("POST", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json", createLimit),
		handle("GET", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json", func(r *request) answer {
			return withLimit(r, func(l *limit) answer { return ok("limit", l.json()) })
		}),
		handle("PUT", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json", updateLimit),
		handle("DELETE", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json", func(r *request) answer {
			return withLimit(r, func(l *limit) answer { delete(r.t.limits, l.id); return deleted() })
		}),

		handle("GET", "/admin/api/application_plans/{application_plan_id}/pricing_rules.json", func(r *request) answer {
			return withPlanID(r, func(p *plan) answer {
				return wrapList("pricing_rules", "pricing_rule", r.t.pricing, func(x *pricingRule) bool { return x.planID == p.id }, (*pricingRule).json, r.form, false)
			})
		}),
		handle("GET", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json", func(r *request) answer {
			return withPlanMetric(r, func(p *plan, m *metric) answer {
				return wrapList("pricing_rules", "pricing_rule", r.t.pricing, func(x *pricingRule) bool { return x.planID == p.id && x.metricID == m.id }, (*pricingRule).json, r.form, false)
			})
		}),
		handle("POST", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json", createPricingRule),
		handle("DELETE", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules/{id}.json", func(r *request) answer {
			return withPlanMetric(r, func(p *plan, m *metric) answer {
				x, found := r.t.pricing[r.params["id"]]
				if !found || x.planID != p.id || x.metricID != m.id {
					return notFound()
				}
				delete(r.t.pricing, x.id)
				return deleted()
			})
		}),
	}
}

func withPlan(r *request, f func(*plan) answer) answer {
	return withService(r, "service_id", func(svc *service) answer {
		p, found := r.t.plans[r.params["id"]]
		if !found || p.serviceID != svc.id {
			return notFound()
		}
		return f(p)
	})
}

func withPlanID(r *request, f func(*plan) answer) answer {
	p, found := r.t.plans[r.params["application_plan_id"]]
	if !found {
		return notFound()
	}
	return f(p)
}

// withPlanMetric finds the plan and {metric_id} among the metrics its plan may use: the product's
// and those of the backends the product uses (porta's application_plan.all_metrics); else 404.
func withPlanMetric(r *request, f func(*plan, *metric) answer) answer {
	return withPlanID(r, func(p *plan) answer {
		m, found := r.t.metrics[r.params["metric_id"]]
		if !found || !r.t.metricUsableBy(p.serviceID, m) {
			return notFound()
		}
		return f(p, m)
	})
}

func withLimit(r *request, f func(*limit) answer) answer {
	return withPlanMetric(r, func(p *plan, m *metric) answer {
		l, found := r.t.limits[r.params["id"]]
		if !found || l.planID != p.id || l.metricID != m.id {
			return notFound()
		}
		return f(l)
	})
}

// metricUsableBy reports whether plans of the service may limit or price metric m.
func (t *tenant) metricUsableBy(serviceID int64, m *metric) bool {
	if m.owner == (owner{ownerService, serviceID}) {
		return true
	}
	for _, u := range t.usages {
		if u.serviceID == serviceID && m.owner == (owner{ownerBackend, u.backendID}) {
			return true
		}
	}
	return false
}

func createPlan(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer {
		sys, a := newName(r, "name", "application_plan", func(sys string) bool {
			for _, o := range r.t.plans {
				if o.serviceID == svc.id && o.systemName == sys {
					return true
				}
			}
			return false
		})
		if a.code != 0 {
			return a
		}
		p := &plan{serviceID: svc.id, systemName: sys, state: "hidden", stamps: newStamps()}
		if a := applyPlanForm(r, p); a.code != 0 {
			return a
		}
		p.id = r.t.id()
		r.t.plans[p.id] = p
		return created("application_plan", p.json())
	})
}

func updatePlan(r *request) answer {
	return withPlan(r, func(p *plan) answer {
		next := *p
		if a := applyPlanForm(r, &next); a.code != 0 {
			return a
		}
		next.touch()
		*p = next
		return ok("application_plan", p.json())
	})
}

// applyPlanForm applies the plan attributes porta permits (name, description, approval_required,
// trial_period_days, setup_fee, cost_per_month, state_event) with Plan's validations. The fees are
// decimal(20,4) columns (db/schema.rb:960,968): porta keeps 4 decimals.
func applyPlanForm(r *request, p *plan) answer {
	errs := fieldErrors{}
	if has(r, "name") {
		if p.name = r.form.Get("name"); strings.TrimSpace(p.name) == "" {
			errs.add("name", "can't be blank")
		}
	}
	if has(r, "description") {
		p.description = r.form.Get("description")
	}
	if has(r, "approval_required") {
		p.approvalRequired = flag(r.form.Get("approval_required"))
	}
	for key, dst := range map[string]*float64{"setup_fee": &p.setupFee, "cost_per_month": &p.costPerMonth} {
		if !has(r, key) {
			continue
		}
		v, err := strconv.ParseFloat(r.form.Get(key), 64)
		switch {
		case err != nil:
			errs.add(key, "is not a number")
		case v < 0:
			errs.add(key, "must be greater than or equal to 0")
		default:
			*dst = math.Round(v*1e4) / 1e4
		}
	}
	if has(r, "trial_period_days") {
		v, err := strconv.ParseInt(r.form.Get("trial_period_days"), 10, 64)
		switch {
		case err != nil:
			errs.add("trial_period_days", "is not a number")
		case v < 0:
			errs.add("trial_period_days", "must be greater than or equal to 0")
		default:
			p.trialPeriodDays = v
		}
	}
	switch r.form.Get("state_event") {
	case "":
	case "publish":
		p.state = "published"
	case "hide":
		p.state = "hidden"
	default:
		errs.add("state_event", "is invalid")
	}
	return errs.answer()
}

// msgPlanHasApplications is the error Plan#can_be_destroyed? adds on base (app/models/plan.rb:174-186)
// for an application plan: activerecord.errors.models.application_plan.has_contracts
// (config/locales/en.yml:2053).
const msgPlanHasApplications = "This application plan cannot be deleted! At least one application depends on it."

// planDeletion answers porta's DELETE of a plan: while applications use it, Plan's before_destroy
// avoid_destruction aborts (plan.rb:71,483-485) and ThreeScale::Api::Responder renders the errors of a
// refused DELETE with 403 Forbidden (error_status, app/lib/three_scale/api/responder.rb:67-75), the
// responder of every Admin::Api controller (app/lib/api_support/prepare_response_representer.rb:9);
// otherwise 200 and no body.
func planDeletion(t *tenant, p *plan) answer {
	for _, a := range t.apps {
		if a.planID == p.id {
			return refused(msgPlanHasApplications)
		}
	}
	t.deletePlan(p.id)
	return deleted()
}

// deletePlan removes a plan with its limits, pricing rules, enabled features and, when its service goes (destroyed by
// association), its applications (ApplicationPlan has_many :cinstances, dependent: :destroy).
func (t *tenant) deletePlan(id int64) {
	for aid, a := range t.apps {
		if a.planID == id {
			delete(t.apps, aid)
		}
	}
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
	for _, f := range t.features { // Plan has_many :features_plans, dependent: :delete_all
		delete(f.plans, id)
	}
	delete(t.plans, id)
}

// periods is UsageLimit::PERIODS as the API accepts them.
var periods = map[string]bool{"eternity": true, "year": true, "month": true, "week": true, "day": true, "hour": true, "minute": true}

func createLimit(r *request) answer {
	return withPlanMetric(r, func(p *plan, m *metric) answer {
		l := &limit{planID: p.id, metricID: m.id, stamps: newStamps()}
		if a := applyLimitForm(r, l, true); a.code != 0 {
			return a
		}
		l.id = r.t.id()
		r.t.limits[l.id] = l
		return created("limit", l.json())
	})
}

func updateLimit(r *request) answer {
	return withLimit(r, func(l *limit) answer {
		next := *l
		if a := applyLimitForm(r, &next, false); a.code != 0 {
			return a
		}
		next.touch()
		*l = next
		return ok("limit", l.json())
	})
}

// applyLimitForm applies period and value with UsageLimit's rules: the period one of PERIODS ("is
// invalid") and unique per plan and metric; a blank or negative value is stored as 0.
func applyLimitForm(r *request, l *limit, create bool) answer {
	if has(r, "period") || create {
		l.period = r.form.Get("period")
	}
	if has(r, "value") || create {
		v, err := strconv.ParseInt(strings.TrimSpace(r.form.Get("value")), 10, 64)
		if err != nil || v < 0 {
			v = 0
		}
		l.value = v
	}
	if !periods[l.period] {
		return unprocessable("period", "is invalid")
	}
	for _, o := range r.t.limits {
		if o.planID == l.planID && o.metricID == l.metricID && o.period == l.period && o.id != l.id {
			return unprocessable("period", "has already been taken")
		}
	}
	return answer{}
}

// Messages of PricingRule's range checks (errors :overlap on min, :min_max_mismatch on max).
const (
	msgPricingOverlap  = "overlaps with other pricing rule"
	msgPricingMinAbove = "must be greater than min"
)

// createPricingRule checks as PricingRule does: min an integer >= 1; max absent (no upper bound) or
// not below min; cost_per_unit a number with at most 4 decimals; the range [min, max] not overlapping
// another rule of the same plan and metric.
func createPricingRule(r *request) answer {
	return withPlanMetric(r, func(p *plan, m *metric) answer {
		x := &pricingRule{planID: p.id, metricID: m.id, stamps: newStamps()}
		errs := fieldErrors{}
		minSet := false
		if v, err := strconv.ParseInt(r.form.Get("min"), 10, 64); err != nil {
			errs.add("min", "is not a number")
		} else if x.min, minSet = v, true; v < 1 {
			errs.add("min", "must be greater than or equal to 1")
		}
		if raw := r.form.Get("max"); raw != "" {
			v, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				errs.add("max", "is not a number")
			} else {
				x.max = &v
			}
		}
		// PricingRule checks the format of the stored BigDecimal, not of the text sent
		// (app/models/pricing_rule.rb:19-20): "1.50000" passes, "-1" and "0.12345" do not.
		if v, err := strconv.ParseFloat(strings.TrimSpace(r.form.Get("cost_per_unit")), 64); err != nil {
			errs.add("cost_per_unit", "is not a number")
		} else {
			x.costPerUnit = v
			if whole, frac, _ := strings.Cut(rubyDecimal(v), "."); strings.HasPrefix(whole, "-") || len(frac) > 4 {
				errs.add("cost_per_unit", "maximum decimals is 4.")
			}
		}
		if minSet {
			for _, o := range r.t.pricing {
				if o.planID == x.planID && o.metricID == x.metricID && overlaps(o, x) {
					errs.add("min", msgPricingOverlap)
					break
				}
			}
			if x.max != nil && *x.max < x.min {
				errs.add("max", msgPricingMinAbove)
			}
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		x.id = r.t.id()
		r.t.pricing[x.id] = x
		return answer{http.StatusCreated, map[string]any{"pricing_rule": x.json()}}
	})
}

// overlaps is Range#overlaps? on [min, max] with a missing max as infinity.
func overlaps(a, b *pricingRule) bool {
	aMaxBelow := a.max != nil && *a.max < b.min
	bMaxBelow := b.max != nil && *b.max < a.min
	return !aMaxBelow && !bMaxBelow
}
