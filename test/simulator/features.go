package simulator

import (
	"net/http"
	"strconv"
	"strings"
)

// A product's features, and the application plans that enable them, as porta serves them
// (app/controllers/admin/api/service_features_controller.rb, application_plan_features_controller.rb,
// featurings_base_controller.rb; app/models/feature.rb, features_plan.rb; app/representers/
// feature_representer.rb, features_representer.rb).

type feature struct {
	id, serviceID                 int64 // serviceID 0: a feature of the tenant's account, for account plans
	name, systemName, description string
	// scope is the kind of plan that may enable it: "ApplicationPlan" (the default) or "ServicePlan";
	// "AccountPlan" for the account's (feature.rb:62-67).
	scope string
	// plans are the ids of the plans that enable it (features_plans).
	plans map[int64]bool
	stamps
}

// json is FeatureRepresenter: the scope rendered underscored ("application_plan"), visible always true
// through the API (only the model's hide!/show! change it), no service id, timestamps.
func (f *feature) json() map[string]any {
	scope := map[string]string{"ApplicationPlan": "application_plan", "ServicePlan": "service_plan", "AccountPlan": "account_plan"}[f.scope]
	return map[string]any{"id": f.id, "name": f.name, "system_name": f.systemName, "scope": scope, "visible": true,
		"description": f.description, "created_at": f.created, "updated_at": f.updated}
}

// featureRoutes are the endpoints of a product's features and of their enabling on application plans.
// None is paginated: the responder lists them all, in id order.
func featureRoutes() []route {
	return append([]route{
		handle("GET", "/admin/api/services/{service_id}/features.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				return wrapList("features", "feature", r.t.features, func(f *feature) bool { return f.serviceID == svc.id }, (*feature).json, r.form, false)
			})
		}),
		handle("POST", "/admin/api/services/{service_id}/features.json", createFeature),
		handle("GET", "/admin/api/services/{service_id}/features/{id}.json", func(r *request) answer {
			return withFeature(r, func(f *feature) answer { return ok("feature", f.json()) })
		}),
		handle("PUT", "/admin/api/services/{service_id}/features/{id}.json", updateFeature),
		// feature.destroy: has_many :features_plans, dependent: :delete_all (feature.rb:17) takes it off
		// every plan; a feature in use may be deleted.
		handle("DELETE", "/admin/api/services/{service_id}/features/{id}.json", func(r *request) answer {
			return withFeature(r, func(f *feature) answer { delete(r.t.features, f.id); return deleted() })
		}),
	},
		// The features an application plan enables.
		featuringRoutes("/admin/api/application_plans/{application_plan_id}", "application_plan_id", "ApplicationPlan", func(t *tenant, id int64) (int64, bool) {
			p, found := t.plans[id]
			return serviceOf(p), found
		})...)
}

// serviceOf is an application plan's service (0 for none).
func serviceOf(p *plan) int64 {
	if p == nil {
		return 0
	}
	return p.serviceID
}

// featuringRoutes are FeaturingsBaseController's endpoints (app/controllers/admin/api/
// featurings_base_controller.rb) under prefix, for the plans of one kind (scope): plan finds the plan of
// {param} and its issuer, a service's id or 0 for the tenant's account (404 when there is none). None
// is paginated.
func featuringRoutes(prefix, param, scope string, plan func(t *tenant, id int64) (issuer int64, found bool)) []route {
	withPlan := func(r *request, f func(planID, issuer int64) answer) answer {
		issuer, found := plan(r.t, r.params[param])
		if !found {
			return notFound()
		}
		return f(r.params[param], issuer)
	}
	return []route{
		// The features a plan enables (plan.features).
		handle("GET", prefix+"/features.json", func(r *request) answer {
			return withPlan(r, func(planID, _ int64) answer {
				return wrapList("features", "feature", r.t.features, func(f *feature) bool { return f.plans[planID] }, (*feature).json, r.form, false)
			})
		}),
		// create: the feature is found among the plan's issuer's (plan.issuer.features.find: 404 for
		// another issuer's or none), a scope other than the plan's is refused (features_plan.rb:23-29:
		// plan_type "mismatch"), and one enabled already breaks the (plan_id, feature_id) primary key:
		// 409 with no body (base_controller.rb:30).
		handle("POST", prefix+"/features.json", func(r *request) answer {
			return withPlan(r, func(planID, issuer int64) answer {
				id, _ := strconv.ParseInt(r.form.Get("feature_id"), 10, 64)
				f, found := r.t.features[id]
				if !found || f.serviceID != issuer {
					return notFound()
				}
				if f.scope != scope {
					return unprocessable("plan_type", "mismatch")
				}
				if f.plans[planID] {
					return answer{http.StatusConflict, nil}
				}
				f.plans[planID] = true
				return created("feature", f.json())
			})
		}),
		// plan.features.find(id): 404 when the plan does not enable it; 200 with no body (head :ok).
		handle("DELETE", prefix+"/features/{id}.json", func(r *request) answer {
			return withPlan(r, func(planID, _ int64) answer {
				f, found := r.t.features[r.params["id"]]
				if !found || !f.plans[planID] {
					return notFound()
				}
				delete(f.plans, planID)
				return deleted()
			})
		}),
	}
}

func withFeature(r *request, f func(*feature) answer) answer {
	return withService(r, "service_id", func(svc *service) answer {
		x, found := r.t.features[r.params["id"]]
		if !found || x.serviceID != svc.id {
			return notFound()
		}
		return f(x)
	})
}

// featureFields are the attributes ServiceFeaturesController permits (feature_params); a body with none
// of them is refused by params.require(:feature) (400).
var featureFields = []string{"name", "system_name", "description", "scope"}

func createFeature(r *request) answer {
	return withService(r, "service_id", func(svc *service) answer { return newFeature(r, svc.id) })
}

// newFeature makes a feature of the service serviceID, or of the tenant's account (0), whose scope is
// always AccountPlan (try_to_set_scope, feature.rb:62-67; AccountFeaturesController does not permit
// scope, account_features_controller.rb:43-45).
func newFeature(r *request, serviceID int64) answer {
	if !anyOf(r, featureFields) {
		return parameterMissing("feature")
	}
	f := &feature{serviceID: serviceID, name: r.form.Get("name"), systemName: r.form.Get("system_name"),
		description: r.form.Get("description"), scope: "ApplicationPlan", plans: map[int64]bool{}, stamps: newStamps()}
	if has(r, "scope") {
		f.scope = r.form.Get("scope")
	}
	if serviceID == 0 {
		f.scope = "AccountPlan"
	}
	if f.systemName == "" { // generated on create only (feature.rb:35-62)
		f.systemName = strings.ReplaceAll(parameterize(f.name), "-", "_")
		if f.systemName == "" {
			f.systemName = "feature_" + randomHex(6)
		}
	}
	if a := validateFeature(r.t, f); a.code != 0 {
		return a
	}
	f.id = r.t.id()
	r.t.features[f.id] = f
	return created("feature", f.json())
}

// updateFeature applies name, system_name and description; the scope is dropped from the update
// (feature_update_params: feature_params.except(:scope)), silently.
func updateFeature(r *request) answer {
	return withFeature(r, func(f *feature) answer { return changeFeature(r, f) })
}

func changeFeature(r *request, f *feature) answer {
	if !anyOf(r, featureFields) {
		return parameterMissing("feature")
	}
	next := *f
	for field, to := range map[string]*string{"name": &next.name, "system_name": &next.systemName, "description": &next.description} {
		if has(r, field) {
			*to = r.form.Get(field)
		}
	}
	if a := validateFeature(r.t, &next); a.code != 0 {
		return a
	}
	next.touch()
	*f = next
	return ok("feature", f.json())
}

// validateFeature is Feature's validations: the scope, the system name (present, well formed, unique in
// its service: app/lib/system_name.rb, feature.rb:26), names of at most 255 characters. The name may be
// blank.
func validateFeature(t *tenant, f *feature) answer {
	errs := fieldErrors{}
	if f.serviceID == 0 && f.scope != "AccountPlan" { // scope_matches_featurable? (feature.rb:69-80)
		errs.add("scope", "must be an AccountPlan")
	} else if f.serviceID != 0 && f.scope != "ApplicationPlan" && f.scope != "ServicePlan" {
		errs.add("scope", "must be ApplicationPlan or ServicePlan")
	}
	switch {
	case f.systemName == "":
		errs.add("system_name", "can't be blank")
	case !systemNamePattern.MatchString(f.systemName):
		errs.add("system_name", msgSystemNameInvalid)
	default:
		for _, o := range t.features {
			if o.id != f.id && o.serviceID == f.serviceID && o.systemName == f.systemName {
				errs.add("system_name", "has already been taken")
				break
			}
		}
	}
	if len(f.systemName) > 255 {
		errs.add("system_name", "is too long (maximum is 255 characters)")
	}
	if len(f.name) > 255 {
		errs.add("name", "is too long (maximum is 255 characters)")
	}
	return errs.answer()
}

func anyOf(r *request, fields []string) bool {
	for _, f := range fields {
		if has(r, f) {
			return true
		}
	}
	return false
}
