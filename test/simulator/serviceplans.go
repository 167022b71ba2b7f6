package simulator

import (
	"net/http"
	"strconv"
)

// Service plans and the developer accounts' service contracts (subscriptions), as porta serves them:
// app/controllers/admin/api/service_plans_controller.rb, service_subscriptions_controller.rb,
// service_contracts_controller.rb, buyers_service_plans_controller.rb; app/models/service_plan.rb,
// service_contract.rb, contract.rb, contract/states.rb; app/services/service_subscription_service.rb;
// app/representers/service_subscription_representer.rb.

// serviceContract is a developer account's subscription to a service through one of its service plans.
type serviceContract struct {
	id, accountID, planID, serviceID int64
	state                            string // "pending" or "live" (Contract::States, app/models/contract/states.rb:7-29)
	acceptedAt                       string // set when accepted after creation (states.rb:22,74-77)
	stamps
}

// json is ServiceSubscriptionRepresenter (app/representers/service_subscription_representer.rb:7-20),
// nil properties left out (trial_period_expires_at: service plans have no trial; variable_cost_paid_until;
// accepted_at of a contract accepted on creation, states.rb:74-77): paid_until is
// accepted_at || trial_period_expires_at || created_at (contract.rb:142-144); setup_fee the contract's
// decimal column copied from the plan (0), which ActiveSupport writes as a string (db/schema.rb:310);
// type "ServiceContract"; tenant_id the tenant's account id.
func (c *serviceContract) json(t *tenant) map[string]any {
	out := map[string]any{"id": c.id, "plan_id": c.planID, "user_account_id": c.accountID, "created_at": c.created, "updated_at": c.updated,
		"state": c.state, "paid_until": c.created, "setup_fee": "0.0", "type": "ServiceContract", "tenant_id": tenantAccountID(t),
		"service_id": c.serviceID}
	if c.acceptedAt != "" {
		out["accepted_at"], out["paid_until"] = c.acceptedAt, c.acceptedAt
	}
	return out
}

// createDefaultServicePlan is Service's after_create :create_default_service_plan
// (app/models/service.rb:41,528-536): a "Default" service plan, published where the provider may use
// published_service_plan_signup and the service_plans switch is hidden (default_service_plan_state), as
// on the simulator's tenants; it is not made the service's default_service_plan.
func (t *tenant) createDefaultServicePlan(svc *service) {
	p := &simplePlan{id: t.id(), serviceID: svc.id, name: "Default", systemName: "default", state: "published", stamps: newStamps()}
	t.servicePlans[p.id] = p
}

// deleteServicePlansOf removes a deleted service's service plans with their contracts (Service has_many
// :service_plans, dependent: :destroy, service.rb:55-56; destroyed by association, a plan can be
// destroyed, plan.rb:175, and takes its contracts, service_plan.rb:19,29-31).
func (t *tenant) deleteServicePlansOf(serviceID int64) {
	for id, p := range t.servicePlans {
		if p.serviceID == serviceID {
			t.dropPlanFeatures(id)
			delete(t.servicePlans, id)
		}
	}
	for id, c := range t.subscriptions {
		if c.serviceID == serviceID {
			delete(t.subscriptions, id)
		}
	}
}

// subscribe makes account acc subscribe to a service plan: pending when the plan requires approval,
// else accepted on creation, live (ServiceContract before_create :accept_on_create,
// service_contract.rb:6; contract.rb:333-341).
func (t *tenant) subscribe(acc *account, p *simplePlan) *serviceContract {
	c := &serviceContract{id: t.id(), accountID: acc.id, planID: p.id, serviceID: p.serviceID, state: "live", stamps: newStamps()}
	if p.approvalRequired {
		c.state = "pending"
	}
	t.subscriptions[c.id] = c
	return c
}

// subscribed reports whether an account has a contract with the service.
func (t *tenant) subscribed(accountID, serviceID int64) bool {
	for _, c := range t.subscriptions {
		if c.accountID == accountID && c.serviceID == serviceID {
			return true
		}
	}
	return false
}

// findOrCreateServiceContract is what BuyersApplicationsController does before creating an application
// (before_action, buyers_applications_controller.rb:4,131-135; Logic::Contracting::Provider
// #find_or_create_service_contract, app/lib/logic/contracting.rb:53-70): an account not subscribed to
// the plan's service is subscribed to its default service plan, else its first one; with none, 422
// {"error":"You cannot subscribe to that service."}. The contract stays even if the application is then
// refused.
func (t *tenant) findOrCreateServiceContract(acc *account, serviceID int64) answer {
	if t.subscribed(acc.id, serviceID) {
		return answer{}
	}
	var chosen *simplePlan
	for _, id := range sortedIDs(t.servicePlans, func(p *simplePlan) bool { return p.serviceID == serviceID }) {
		if p := t.servicePlans[id]; chosen == nil || p.isDefault {
			chosen = p
			if p.isDefault {
				break
			}
		}
	}
	if chosen == nil {
		return answer{http.StatusUnprocessableEntity, map[string]string{"error": "You cannot subscribe to that service."}}
	}
	t.subscribe(acc, chosen)
	return answer{}
}

func servicePlanRoutes() []route {
	// The features a service plan enables (ServicePlanFeaturesController,
	// service_plan_features_controller.rb: the plan among the tenant's service plans).
	features := featuringRoutes("/admin/api/service_plans/{service_plan_id}", "service_plan_id", "ServicePlan", func(t *tenant, id int64) (int64, bool) {
		p, found := t.servicePlans[id]
		if !found {
			return 0, false
		}
		return p.serviceID, true
	})
	return append(features, []route{
		// The service plans of every service (ServicePlansController#index without service_id: scope is
		// current_account, service_base_controller.rb:11-13), not paged.
		handle("GET", "/admin/api/service_plans.json", func(r *request) answer {
			return wrapList("plans", "service_plan", r.t.servicePlans, nil, (*simplePlan).json, r.form, false)
		}),
		handle("GET", "/admin/api/services/{service_id}/service_plans.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				return wrapList("plans", "service_plan", r.t.servicePlans, func(p *simplePlan) bool { return p.serviceID == svc.id }, (*simplePlan).json, r.form, false)
			})
		}),
		handle("POST", "/admin/api/services/{service_id}/service_plans.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return createSimplePlan(r, "service_plan", svc.id, r.t.servicePlans) })
		}),
		handle("GET", "/admin/api/services/{service_id}/service_plans/{id}.json", func(r *request) answer {
			return withServicePlan(r, func(p *simplePlan) answer { return ok("service_plan", p.json()) })
		}),
		handle("PUT", "/admin/api/services/{service_id}/service_plans/{id}.json", func(r *request) answer {
			return withServicePlan(r, func(p *simplePlan) answer { return updateSimplePlan(r, "service_plan", p) })
		}),
		// ServicePlansController#default: service.update_attribute(:default_service_plan, ...)
		// (service_plans_controller.rb:48-52).
		handle("PUT", "/admin/api/services/{service_id}/service_plans/{id}/default.json", func(r *request) answer {
			return withServicePlan(r, func(p *simplePlan) answer {
				for _, o := range r.t.servicePlans {
					if o.serviceID == p.serviceID {
						o.isDefault = o.id == p.id
					}
				}
				return ok("service_plan", p.json())
			})
		}),
		// destroy: refused while an account subscribes to it (plan.rb:71,174-186, the avoid_destruction
		// callback prepended to service_plan.rb:19's destroy_contracts), 403.
		handle("DELETE", "/admin/api/services/{service_id}/service_plans/{id}.json", func(r *request) answer {
			return withServicePlan(r, func(p *simplePlan) answer {
				for _, c := range r.t.subscriptions {
					if c.planID == p.id {
						return refused(msgServicePlanHasContracts)
					}
				}
				r.t.dropPlanFeatures(p.id)
				delete(r.t.servicePlans, p.id)
				return deleted()
			})
		}),

		// BuyersServicePlansController#index: the service plans the account subscribes to
		// (buyers_service_plans_controller.rb:7-9,22-24).
		handle("GET", "/admin/api/accounts/{account_id}/service_plans.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				bought := map[int64]bool{}
				for _, c := range r.t.subscriptions {
					if c.accountID == a.id {
						bought[c.planID] = true
					}
				}
				return wrapList("plans", "service_plan", r.t.servicePlans, func(p *simplePlan) bool { return bought[p.id] }, (*simplePlan).json, r.form, false)
			})
		}),

		// ServiceSubscriptionsController (service_subscriptions_controller.rb), routes with format json
		// only (config/routes.rb:610).
		handle("GET", "/admin/api/accounts/{account_id}/service_subscriptions.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				return wrapList("service_subscriptions", "service_subscription", r.t.subscriptions, func(c *serviceContract) bool { return c.accountID == a.id },
					func(c *serviceContract) map[string]any { return c.json(r.t) }, r.form, false)
			})
		}),
		// create (:12-14): the plan among the tenant's service plans (ServicePlan.provided_by, :60-62: 404
		// otherwise); plan_id is required (params...fetch(:service_subscription), :68-70: 400); one contract
		// per service (Logic::Contracting::ServiceContract#one_contract_per_service,
		// app/lib/logic/contracting.rb:103-118: 422 on base).
		handle("POST", "/admin/api/accounts/{account_id}/service_subscriptions.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				return withSubscriptionPlan(r, func(p *simplePlan) answer {
					if r.t.subscribed(a.id, p.serviceID) {
						return unprocessable("base", "already subscribed to this service")
					}
					return created("service_subscription", r.t.subscribe(a, p).json(r.t))
				})
			})
		}),
		handle("GET", "/admin/api/accounts/{account_id}/service_subscriptions/{id}.json", func(r *request) answer {
			return withSubscription(r, func(c *serviceContract) answer { return ok("service_subscription", c.json(r.t)) })
		}),
		handle("DELETE", "/admin/api/accounts/{account_id}/service_subscriptions/{id}.json", func(r *request) answer {
			return withSubscription(r, func(c *serviceContract) answer { return unsubscribe(r.t, c) })
		}),
		// The deprecated ServiceContractsController#destroy does the same (service_contracts_controller.rb:18-22).
		handle("DELETE", "/admin/api/accounts/{account_id}/service_contracts/{id}.json", func(r *request) answer {
			return withSubscription(r, func(c *serviceContract) answer { return unsubscribe(r.t, c) })
		}),
		// change_plan (:32-35): contract.change_plan: nothing to do for the plan it has (contract.rb:274-275);
		// a plan of another service is refused (same_service_plan_update, service_contract.rb:4,66-70;
		// en.yml:2155): 422. The answer is the new plan, {"service_plan":{...}}.
		handle("PUT", "/admin/api/accounts/{account_id}/service_subscriptions/{id}/change_plan.json", func(r *request) answer {
			return withSubscription(r, func(c *serviceContract) answer {
				return withSubscriptionPlan(r, func(p *simplePlan) answer {
					if p.serviceID != c.serviceID {
						return unprocessable("plan", "must belong to the same product")
					}
					if c.planID != p.id {
						c.planID = p.id
						c.touch()
					}
					return ok("service_plan", p.json())
				})
			})
		}),
		// approve (:45-48): accept without bang, pending -> live (states.rb:27-29); from another state an
		// invalid_transition error, 422.
		handle("PUT", "/admin/api/accounts/{account_id}/service_subscriptions/{id}/approve.json", func(r *request) answer {
			return withSubscription(r, func(c *serviceContract) answer {
				if c.state != "pending" {
					return invalidTransition("accept")
				}
				c.state, c.acceptedAt = "live", now()
				c.touch()
				return ok("service_subscription", c.json(r.t))
			})
		}),
	}...)
}

func withServicePlan(r *request, f func(*simplePlan) answer) answer {
	return withService(r, "service_id", func(svc *service) answer {
		p, found := r.t.servicePlans[r.params["id"]]
		if !found || p.serviceID != svc.id {
			return notFound()
		}
		return f(p)
	})
}

// withSubscription finds {id} among the contracts of {account_id} (account.bought_service_contracts.find).
func withSubscription(r *request, f func(*serviceContract) answer) answer {
	return withAccount(r, "account_id", func(a *account) answer {
		c, found := r.t.subscriptions[r.params["id"]]
		if !found || c.accountID != a.id {
			return notFound()
		}
		return f(c)
	})
}

// withSubscriptionPlan finds the service plan of plan_id (service_subscription[plan_id]): without it,
// 400; not one of the tenant's service plans, 404.
func withSubscriptionPlan(r *request, f func(*simplePlan) answer) answer {
	if !has(r, "plan_id") {
		return parameterMissing("service_subscription")
	}
	p, found := r.t.servicePlans[formID(r, "plan_id")]
	if !found {
		return notFound()
	}
	return f(p)
}

// unsubscribe is ServiceSubscriptionService#unsubscribe (app/services/service_subscription_service.rb:8-27):
// refused while the account has applications of the service that are not suspended (base
// unsuspended_applications, config/locales/en.yml:2151-2153), rendered 403 as a refused DELETE;
// otherwise the account's (suspended) applications of the service go with the contract.
func unsubscribe(t *tenant, c *serviceContract) answer {
	active := 0
	for _, a := range t.apps {
		if a.accountID == c.accountID && a.serviceID == c.serviceID && a.state != appSuspended {
			active++
		}
	}
	switch {
	case active == 1:
		return refused("There is 1 unsuspended application subscribed to the service")
	case active > 1:
		return refused("There are " + strconv.Itoa(active) + " unsuspended applications subscribed to the service")
	}
	for id, a := range t.apps {
		if a.accountID == c.accountID && a.serviceID == c.serviceID {
			delete(t.apps, id)
		}
	}
	delete(t.subscriptions, c.id)
	return deleted()
}
