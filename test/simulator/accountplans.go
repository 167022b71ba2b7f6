package simulator

import (
	"fmt"
	"strings"
)

// Account plans and, in serviceplans.go, service plans, as porta's admin API serves them:
// app/controllers/admin/api/account_plans_controller.rb, service_plans_controller.rb,
// accounts_controller.rb (change_plan), buyer_account_plans_controller.rb; app/models/plan.rb,
// account_plan.rb, service_plan.rb; app/representers/plan_representer.rb, account_plan_representer.rb,
// service_plan_representer.rb.

// simplePlan is an account plan (serviceID 0, issued by the tenant) or a service plan (issued by the
// service serviceID). The API writes only name, system_name (on create), approval_required and
// state_event for them (account_plans_controller.rb:53-61, service_plans_controller.rb:56-64); their
// fees and trial stay the columns' defaults (db/schema.rb:960-968).
type simplePlan struct {
	id, serviceID           int64
	name, systemName, state string
	approvalRequired        bool
	// isDefault: the plan is the tenant's default_account_plan, or its service's default_service_plan.
	isDefault bool
	stamps
}

// json is PlanRepresenter (app/representers/plan_representer.rb:4-35): no system_name nor description
// (only ApplicationPlanRepresenter adds system_name), setup_fee and cost_per_month as Ruby floats
// (to_f), trial_period_days an integer (nil.to_i is 0), cancellation_period (default 0,
// db/schema.rb:966) and default (master?: the issuer's default plan, account_plan.rb:27-29,
// service_plan.rb:25-27). ServicePlanRepresenter adds the service and self links
// (service_plan_representer.rb:7-13); AccountPlanRepresenter none.
func (p *simplePlan) json() map[string]any {
	out := map[string]any{"id": p.id, "name": p.name, "state": p.state, "setup_fee": rubyFloat(0), "cost_per_month": rubyFloat(0),
		"trial_period_days": 0, "cancellation_period": 0, "approval_required": p.approvalRequired, "default": p.isDefault,
		"created_at": p.created, "updated_at": p.updated}
	if p.serviceID != 0 {
		out["links"] = []any{
			map[string]any{"rel": "service", "href": fmt.Sprintf("%s/admin/api/services/%d", linkBase, p.serviceID)},
			map[string]any{"rel": "self", "href": fmt.Sprintf("%s/admin/api/services/%d/service_plans/%d", linkBase, p.serviceID, p.id)},
		}
	}
	return out
}

// planAttributes are what wrap_parameters puts in the plan's key (account_plans_controller.rb:5,
// service_plans_controller.rb:4: Plan.attribute_names | state_event, db/schema.rb:955-978); a request
// with none of them fails params.require (400, application_controller.rb:50-52).
var planAttributes = []string{"id", "issuer_id", "name", "rights", "full_legal", "cost_per_month", "trial_period_days",
	"created_at", "updated_at", "position", "state", "cancellation_period", "cost_aggregation_rule", "setup_fee", "master",
	"original_id", "type", "issuer_type", "description", "approval_required", "tenant_id", "system_name", "partner_id",
	"contracts_count", "state_event"}

// Messages of Plan#can_be_destroyed? (plan.rb:174-186) for account and service plans
// (activerecord.errors.models.<plan>.has_contracts, config/locales/en.yml:2050,2056).
const (
	msgAccountPlanHasContracts = "This account plan cannot be deleted! At least one account depends on it."
	msgServicePlanHasContracts = "This service plan cannot be deleted! At least one contract depends on it."
)

// createDefaultAccountPlan gives a new tenant the account plan porta's provider signup gives it: the
// sample data's "Default" account plan, hidden (Plan's initial state, plan.rb:34), made the default
// (SampleData#create_default_account_plan!, app/lib/logic/provider_signup.rb:30-31, run by
// SignupWorker::SampleDataWorker, app/workers/signup_worker.rb:25-35). A developer signup needs it
// (signups_controller.rb:27, plans_with_defaults.rb:95-98). Its id is seededAccountPlanID, apart from the
// ids the tenant's counter gives, so that the objects a test makes keep the ids they had (porta's ids are
// per table).
func (t *tenant) createDefaultAccountPlan() {
	p := &simplePlan{id: seededAccountPlanID, name: "Default", systemName: "default", state: "hidden", isDefault: true, stamps: newStamps()}
	t.accountPlans[p.id] = p
}

// seededAccountPlanID is the id of a new tenant's "Default" account plan: far above the ids a test makes,
// below the tenants' account ids (ownAccountBase).
const seededAccountPlanID = ownAccountBase - 1

// defaultAccountPlan is the tenant's default account plan; nil when it has none.
func (t *tenant) defaultAccountPlan() *simplePlan {
	for _, id := range sortedIDs(t.accountPlans, func(p *simplePlan) bool { return p.isDefault }) {
		return t.accountPlans[id]
	}
	return nil
}

// settingsAccountPlan is the plan whose approval_required is the portal's account_approval_required:
// the default account plan, else the first account plan (Settings#default_account_plan,
// app/models/settings.rb:56-58,108-115).
func (t *tenant) settingsAccountPlan() *simplePlan {
	if p := t.defaultAccountPlan(); p != nil {
		return p
	}
	for _, id := range sortedIDs(t.accountPlans, nil) {
		return t.accountPlans[id]
	}
	return nil
}

// accountApprovalRequired is the portal setting account_approval_required (settings.rb:56-58).
func (t *tenant) accountApprovalRequired() bool {
	p := t.settingsAccountPlan()
	return p != nil && p.approvalRequired
}

// setAccountApprovalRequired writes it to the plan (Settings#update_approval_required, settings.rb:112-115).
func (t *tenant) setAccountApprovalRequired(required bool) {
	if p := t.settingsAccountPlan(); p != nil {
		p.approvalRequired = required
		p.touch()
	}
}

func accountPlanRoutes() []route {
	// The features of the tenant's account (AccountFeaturesController, account_features_controller.rb),
	// for account plans, and those an account plan enables (AccountPlanFeaturesController,
	// account_plan_features_controller.rb: the plan among the tenant's account plans).
	features := append([]route{
		handle("GET", "/admin/api/features.json", func(r *request) answer {
			return wrapList("features", "feature", r.t.features, func(f *feature) bool { return f.serviceID == 0 }, (*feature).json, r.form, false)
		}),
		handle("POST", "/admin/api/features.json", func(r *request) answer { return newFeature(r, 0) }),
		handle("GET", "/admin/api/features/{id}.json", func(r *request) answer {
			return withAccountFeature(r, func(f *feature) answer { return ok("feature", f.json()) })
		}),
		handle("PUT", "/admin/api/features/{id}.json", func(r *request) answer {
			return withAccountFeature(r, func(f *feature) answer { return changeFeature(r, f) })
		}),
		handle("DELETE", "/admin/api/features/{id}.json", func(r *request) answer {
			return withAccountFeature(r, func(f *feature) answer { delete(r.t.features, f.id); return deleted() })
		}),
	}, featuringRoutes("/admin/api/account_plans/{account_plan_id}", "account_plan_id", "AccountPlan", func(t *tenant, id int64) (int64, bool) {
		_, found := t.accountPlans[id]
		return 0, found
	})...)
	return append(features, []route{
		// AccountPlansController#index: current_account.account_plans, not paged (account_plans_controller.rb:11-13).
		handle("GET", "/admin/api/account_plans.json", func(r *request) answer {
			return wrapList("plans", "account_plan", r.t.accountPlans, nil, (*simplePlan).json, r.form, false)
		}),
		handle("POST", "/admin/api/account_plans.json", func(r *request) answer {
			return createSimplePlan(r, "account_plan", 0, r.t.accountPlans)
		}),
		handle("GET", "/admin/api/account_plans/{id}.json", func(r *request) answer {
			return withAccountPlan(r, "id", func(p *simplePlan) answer { return ok("account_plan", p.json()) })
		}),
		handle("PUT", "/admin/api/account_plans/{id}.json", func(r *request) answer {
			return withAccountPlan(r, "id", func(p *simplePlan) answer { return updateSimplePlan(r, "account_plan", p) })
		}),
		// AccountPlansController#default: current_account.update_attribute(:default_account_plan, ...)
		// (account_plans_controller.rb:45-49).
		handle("PUT", "/admin/api/account_plans/{id}/default.json", func(r *request) answer {
			return withAccountPlan(r, "id", func(p *simplePlan) answer {
				for _, o := range r.t.accountPlans {
					o.isDefault = o.id == p.id
				}
				return ok("account_plan", p.json())
			})
		}),
		// destroy: refused while an account has it (can_be_destroyed?, plan.rb:174-186, before_destroy
		// avoid_destruction prepended, plan.rb:71,483-485), rendered 403 as every refused DELETE. The
		// default plan is no exception: the provider's default_account_plan is then none.
		handle("DELETE", "/admin/api/account_plans/{id}.json", func(r *request) answer {
			return withAccountPlan(r, "id", func(p *simplePlan) answer {
				for _, a := range r.t.accounts {
					if a.planID == p.id {
						return refused(msgAccountPlanHasContracts)
					}
				}
				r.t.dropPlanFeatures(p.id)
				delete(r.t.accountPlans, p.id)
				return deleted()
			})
		}),

		// AccountsController#change_plan (accounts_controller.rb:64-71): plan_id among the tenant's account
		// plans (404 otherwise, :131-133); change_plan! changes nothing when it is the plan the account has
		// (contract.rb:198-204,274-275); the answer is the account's plan, {"account_plan":{...}}.
		handle("PUT", "/admin/api/accounts/{id}/change_plan.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer {
				p, found := r.t.accountPlans[formID(r, "plan_id")]
				if !found {
					return notFound()
				}
				if a.planID != p.id {
					a.planID = p.id
				}
				return ok("account_plan", p.json())
			})
		}),
		// BuyerAccountPlansController#show: the account's bought account plan (buyer_account_plans_controller.rb:6-14).
		handle("GET", "/admin/api/accounts/{account_id}/plan.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				p, found := r.t.accountPlans[a.planID]
				if !found {
					return notFound()
				}
				return ok("account_plan", p.json())
			})
		}),
	}...)
}

func withAccountFeature(r *request, f func(*feature) answer) answer {
	x, found := r.t.features[r.params["id"]]
	if !found || x.serviceID != 0 {
		return notFound()
	}
	return f(x)
}

func withAccountPlan(r *request, param string, f func(*simplePlan) answer) answer {
	p, found := r.t.accountPlans[r.params[param]]
	if !found {
		return notFound()
	}
	return f(p)
}

// createSimplePlan is AccountPlansController#create and ServicePlansController#create: name required,
// system_name (given or derived from the name) unique among the issuer's plans of the kind
// (has_system_name uniqueness_scope type and issuer, plan.rb:17), state hidden unless state_event says
// otherwise (plan.rb:32-45). 201 with the plan.
func createSimplePlan(r *request, key string, serviceID int64, plans map[int64]*simplePlan) answer {
	if !anyOf(r, planAttributes) {
		return parameterMissing(key)
	}
	sys, a := newName(r, "name", key, func(sys string) bool {
		for _, o := range plans {
			if o.serviceID == serviceID && o.systemName == sys {
				return true
			}
		}
		return false
	})
	if a.code != 0 {
		return a
	}
	p := &simplePlan{serviceID: serviceID, systemName: sys, state: "hidden", stamps: newStamps()}
	if a := applySimplePlanForm(r, p); a.code != 0 {
		return a
	}
	p.id = r.t.id()
	plans[p.id] = p
	return created(key, p.json())
}

func updateSimplePlan(r *request, key string, p *simplePlan) answer {
	if !anyOf(r, planAttributes) {
		return parameterMissing(key)
	}
	next := *p
	if a := applySimplePlanForm(r, &next); a.code != 0 {
		return a
	}
	next.touch()
	*p = next
	return ok(key, p.json())
}

// applySimplePlanForm applies the attributes the controllers permit, DEFAULT_PARAMS = name, state_event,
// approval_required (account_plans_controller.rb:53, service_plans_controller.rb:56); any other
// (setup_fee, description...) is dropped silently. The name may not be blank (plan.rb:55).
func applySimplePlanForm(r *request, p *simplePlan) answer {
	errs := fieldErrors{}
	if has(r, "name") {
		if p.name = r.form.Get("name"); strings.TrimSpace(p.name) == "" {
			errs.add("name", "can't be blank")
		}
	}
	if has(r, "approval_required") {
		p.approvalRequired = flag(r.form.Get("approval_required"))
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

// dropPlanFeatures takes a plan off the features it enabled (Plan has_many :features_plans,
// dependent: :delete_all, plan.rb:93).
func (t *tenant) dropPlanFeatures(planID int64) {
	for _, f := range t.features {
		delete(f.plans, planID)
	}
}
