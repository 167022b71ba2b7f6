package simulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

func applicationRoutes() []route {
	return []route{
		// All applications of the tenant, optionally of one service (paginated, as
		// Admin::Api::ApplicationsController#index).
		handle("GET", "/admin/api/applications.json", func(r *request) answer {
			keep := func(a *application) bool {
				return r.form.Get("service_id") == "" || r.form.Get("service_id") == itoa(a.serviceID)
			}
			return wrapList("applications", "application", r.t.apps, keep, r.t.appJSON, r.form, true)
		}),
		handle("GET", "/admin/api/accounts/{account_id}/applications.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				return wrapList("applications", "application", r.t.apps, func(x *application) bool { return x.accountID == a.id }, r.t.appJSON, r.form, false)
			})
		}),
		handle("POST", "/admin/api/accounts/{account_id}/applications.json", createApplication),
		handle("GET", "/admin/api/accounts/{account_id}/applications/{id}.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer { return ok("application", a.json(r.t)) })
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer {
				if has(r, "name") {
					if strings.TrimSpace(r.form.Get("name")) == "" {
						return unprocessable("name", "can't be blank")
					}
					a.name = r.form.Get("name")
				}
				if has(r, "description") {
					a.description = r.form.Get("description")
				}
				if has(r, "user_key") && a.appID == "" {
					a.userKey = r.form.Get("user_key")
				}
				a.touch()
				return ok("application", a.json(r.t))
			})
		}),
		handle("DELETE", "/admin/api/accounts/{account_id}/applications/{id}.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer { delete(r.t.apps, a.id); return deleted() })
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/suspend.json", appTransition("suspended")),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/resume.json", appTransition("live")),
		// change_plan answers with the new plan (ApplicationPlanRepresenter); a plan of another service is
		// not among the application's accessible plans: 404.
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/change_plan.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer {
				p, found := r.t.plans[formID(r, "plan_id")]
				if !found || p.serviceID != a.serviceID {
					return notFound()
				}
				a.planID = p.id
				a.touch()
				return ok("application_plan", p.json())
			})
		}),
		handle("GET", "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", func(r *request) answer {
			return withApp(r, "application_id", func(a *application) answer {
				keys := make([]any, 0, len(a.keys))
				for _, k := range a.keys {
					keys = append(keys, map[string]any{"key": map[string]any{"value": k}})
				}
				return answer{http.StatusOK, map[string]any{"keys": keys}}
			})
		}),
		handle("DELETE", "/admin/api/accounts/{account_id}/applications/{application_id}/keys/{key}.json", func(r *request) answer {
			return withApp(r, "application_id", func(a *application) answer {
				i := slices.Index(a.keys, r.key)
				if i < 0 {
					return notFound()
				}
				a.keys = slices.Delete(a.keys, i, i+1)
				return deleted()
			})
		}),
		handle("POST", "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", func(r *request) answer {
			return withApp(r, "application_id", func(a *application) answer {
				k := r.form.Get("key")
				if k == "" {
					k = randomHex(16)
				}
				a.keys = append(a.keys, k)
				return created("application", a.json(r.t))
			})
		}),
	}
}

// createApplication creates an application of an account on a plan: with the given credentials or
// generated ones (a 32-hex user key for user-key services, an 8-hex application id otherwise), live
// unless the plan requires approval (pending).
func createApplication(r *request) answer {
	return withAccount(r, "account_id", func(acc *account) answer {
		p, found := r.t.plans[formID(r, "plan_id")]
		if !found {
			return notFound()
		}
		svc := r.t.services[p.serviceID]
		a := &application{accountID: acc.id, serviceID: p.serviceID, planID: p.id, name: r.form.Get("name"),
			description: r.form.Get("description"), state: "live", stamps: newStamps()}
		if p.approvalRequired {
			a.state = "pending"
		}
		if strings.TrimSpace(a.name) == "" {
			return unprocessable("name", "can't be blank")
		}
		if svc != nil && svc.backendVersion == "1" {
			if a.userKey = r.form.Get("user_key"); a.userKey == "" {
				a.userKey = randomHex(16)
			}
		} else {
			if a.appID = r.form.Get("application_id"); a.appID == "" {
				a.appID = randomHex(4)
			}
			if k := r.form.Get("application_key"); k != "" {
				a.keys = append(a.keys, k)
			}
		}
		a.id = r.t.id()
		r.t.apps[a.id] = a
		return created("application", a.json(r.t))
	})
}

func (t *tenant) appJSON(a *application) map[string]any { return a.json(t) }

func withApp(r *request, param string, f func(*application) answer) answer {
	return withAccount(r, "account_id", func(acc *account) answer {
		a, found := r.t.apps[r.params[param]]
		if !found || a.accountID != acc.id {
			return notFound()
		}
		return f(a)
	})
}

func appTransition(state string) handlerFunc {
	return func(r *request) answer {
		return withApp(r, "id", func(a *application) answer {
			a.state = state
			a.touch()
			return ok("application", a.json(r.t))
		})
	}
}

// formID reads an id parameter of the form; 0 when absent or not a number.
func formID(r *request, key string) int64 {
	var id int64
	_ = json.Unmarshal([]byte(r.form.Get(key)), &id)
	return id
}

func itoa(i int64) string { b, _ := json.Marshal(i); return string(b) }

// apiDoc is an ActiveDocs spec (ApiDocs::Service).
type apiDoc struct {
	id, serviceID                       int64
	name, systemName, description, body string
	published, skipSwaggerValidations   bool
	stamps
}

func (d *apiDoc) json() map[string]any {
	out := map[string]any{"id": d.id, "name": d.name, "system_name": d.systemName, "description": d.description, "body": d.body,
		"published": d.published, "skip_swagger_validations": d.skipSwaggerValidations, "service_id": nil,
		"created_at": d.created, "updated_at": d.updated}
	if d.serviceID != 0 {
		out["service_id"] = d.serviceID
	}
	return out
}

func activeDocRoutes() []route {
	return []route{
		handle("GET", "/admin/api/active_docs.json", func(r *request) answer {
			return wrapList("api_docs", "api_doc", r.t.docs, nil, (*apiDoc).json, r.form, false)
		}),
		handle("POST", "/admin/api/active_docs.json", func(r *request) answer {
			d := &apiDoc{stamps: newStamps()}
			d.systemName = r.form.Get("system_name")
			if d.systemName == "" {
				d.systemName = deriveSystemName(r.form.Get("name"), "api_docs_service", 0)
			}
			if a := applyDocForm(r, d); a.code != 0 {
				return a
			}
			for _, o := range r.t.docs {
				if o.systemName == d.systemName {
					return unprocessable("system_name", "has already been taken")
				}
			}
			d.id = r.t.id()
			r.t.docs[d.id] = d
			return created("api_doc", d.json())
		}),
		handle("GET", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer { return ok("api_doc", d.json()) })
		}),
		handle("PUT", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer {
				changed := *d
				if a := applyDocForm(r, &changed); a.code != 0 {
					return a
				}
				*d = changed
				d.touch()
				return ok("api_doc", d.json())
			})
		}),
		handle("DELETE", "/admin/api/active_docs/{id}.json", func(r *request) answer {
			return withDoc(r, func(d *apiDoc) answer { delete(r.t.docs, d.id); return deleted() })
		}),
	}
}

// applyDocForm applies the writable attributes (name body description published
// skip_swagger_validations service_id, Admin::Api::ApiDocsServicesController#api_docs_params) with the
// model's validations: a name, a body that parses as JSON (or YAML) unless validations are skipped, and a
// service of the tenant (else 422 "Service not found").
func applyDocForm(r *request, d *apiDoc) answer {
	if has(r, "name") {
		d.name = r.form.Get("name")
	}
	if has(r, "description") {
		d.description = r.form.Get("description")
	}
	if has(r, "body") {
		d.body = r.form.Get("body")
	}
	if has(r, "published") {
		d.published = flag(r.form.Get("published"))
	}
	if has(r, "skip_swagger_validations") {
		d.skipSwaggerValidations = flag(r.form.Get("skip_swagger_validations"))
	}
	if has(r, "service_id") {
		d.serviceID = 0
		if v := r.form.Get("service_id"); v != "" {
			id := formID(r, "service_id")
			if _, found := r.t.services[id]; !found {
				return answer{http.StatusUnprocessableEntity, map[string]string{"error": "Service not found"}}
			}
			d.serviceID = id
		}
	}
	errs := fieldErrors{}
	if strings.TrimSpace(d.name) == "" {
		errs.add("name", "can't be blank")
	}
	var doc map[string]any
	if raw, err := yaml.YAMLToJSON([]byte(d.body)); strings.TrimSpace(d.body) == "" || err != nil || json.Unmarshal(raw, &doc) != nil {
		errs.add("body", "JSON Spec is invalid")
	}
	if len(errs) > 0 {
		return errs.answer()
	}
	return answer{}
}

func withDoc(r *request, f func(*apiDoc) answer) answer {
	d, found := r.t.docs[r.params["id"]]
	if !found {
		return notFound()
	}
	return f(d)
}
