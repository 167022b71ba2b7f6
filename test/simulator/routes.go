package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
)

func (s *Simulator) buildRoutes() []route {
	rs := []route{
		s.handle("GET", "/admin/api/services.json", func(r *request) answer {
			return answer{200, wrapList("services", "service", r.t.services, nil, (*service).json, r.form, true)}
		}),
		s.handle("POST", "/admin/api/services.json", createService),
		s.handle("GET", "/admin/api/services/{id}.json", func(r *request) answer {
			return withService(r, "id", func(svc *service) answer { return answer{200, map[string]any{"service": svc.json()}} })
		}),
		s.handle("PUT", "/admin/api/services/{id}.json", updateService),
		s.handle("DELETE", "/admin/api/services/{id}.json", deleteService),

		s.handle("GET", "/admin/api/services/{service_id}/proxy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return answer{200, map[string]any{"proxy": svc.proxy}} })
		}),
		s.handle("PATCH", "/admin/api/services/{service_id}/proxy.json", updateProxy),
		s.handle("POST", "/admin/api/services/{service_id}/proxy/deploy.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				r.t.deploys++
				return answer{201, map[string]any{"proxy": svc.proxy}}
			})
		}),
		s.handle("GET", "/admin/api/services/{service_id}/proxy/oidc_configuration.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return answer{200, map[string]any{"oidc_configuration": svc.oidc}} })
		}),
		s.handle("PATCH", "/admin/api/services/{service_id}/proxy/oidc_configuration.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				for k := range svc.oidc {
					if v := r.form.Get(k); v != "" {
						svc.oidc[k] = v == "true" || v == "1"
					}
				}
				return answer{200, map[string]any{"oidc_configuration": svc.oidc}}
			})
		}),
		s.handle("GET", "/admin/api/services/{service_id}/proxy/policies.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer { return answer{200, map[string]any{"policies_config": svc.policies}} })
		}),
		s.handle("PUT", "/admin/api/services/{service_id}/proxy/policies.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				var chain []any
				if err := json.Unmarshal([]byte(r.form.Get("policies_config")), &chain); err != nil {
					return unprocessable("policies_config", "is not a valid JSON array of policies")
				}
				svc.policies = chain
				return answer{200, map[string]any{"policies_config": svc.policies}}
			})
		}),

		s.handle("GET", "/admin/api/backend_apis.json", func(r *request) answer {
			return answer{200, wrapList("backend_apis", "backend_api", r.t.backends, nil, (*backendAPI).json, r.form, true)}
		}),
		s.handle("POST", "/admin/api/backend_apis.json", createBackend),
		s.handle("GET", "/admin/api/backend_apis/{id}.json", func(r *request) answer {
			return withBackend(r, "id", func(b *backendAPI) answer { return answer{200, map[string]any{"backend_api": b.json()}} })
		}),
		s.handle("PUT", "/admin/api/backend_apis/{id}.json", updateBackend),
		s.handle("DELETE", "/admin/api/backend_apis/{id}.json", deleteBackend),

		s.handle("GET", "/admin/api/services/{service_id}/backend_usages.json", listUsages),
		s.handle("POST", "/admin/api/services/{service_id}/backend_usages.json", createUsage),
		s.handle("GET", "/admin/api/services/{service_id}/backend_usages/{id}.json", func(r *request) answer {
			return withUsage(r, func(u *backendUsage) answer { return answer{200, map[string]any{"backend_usage": u.json()}} })
		}),
		s.handle("PUT", "/admin/api/services/{service_id}/backend_usages/{id}.json", func(r *request) answer {
			return withUsage(r, func(u *backendUsage) answer {
				if p := r.form.Get("path"); p != "" {
					if !strings.HasPrefix(p, "/") {
						return unprocessable("path", "must be a path starting with /")
					}
					u.path = p
				}
				return answer{200, map[string]any{"backend_usage": u.json()}}
			})
		}),
		s.handle("DELETE", "/admin/api/services/{service_id}/backend_usages/{id}.json", func(r *request) answer {
			return withUsage(r, func(u *backendUsage) answer { delete(r.t.usages, u.id); return answer{200, nil} })
		}),

		s.handle("GET", "/admin/api/services/{service_id}/application_plans.json", func(r *request) answer {
			return withService(r, "service_id", func(svc *service) answer {
				return answer{200, wrapList("plans", "application_plan", r.t.plans, func(p *plan) bool { return p.serviceID == svc.id }, (*plan).json, r.form, false)}
			})
		}),
		s.handle("POST", "/admin/api/services/{service_id}/application_plans.json", createPlan),
		s.handle("GET", "/admin/api/services/{service_id}/application_plans/{id}.json", func(r *request) answer {
			return withPlan(r, func(p *plan) answer { return answer{200, map[string]any{"application_plan": p.json()}} })
		}),
		s.handle("PUT", "/admin/api/services/{service_id}/application_plans/{id}.json", updatePlan),
		s.handle("DELETE", "/admin/api/services/{service_id}/application_plans/{id}.json", func(r *request) answer {
			return withPlan(r, func(p *plan) answer { r.t.deletePlan(p.id); return answer{200, nil} })
		}),

		s.handle("GET", "/admin/api/application_plans/{application_plan_id}/limits.json", func(r *request) answer {
			return withPlanID(r, func(p *plan) answer {
				return answer{200, wrapList("limits", "limit", r.t.limits, func(l *limit) bool { return l.planID == p.id }, (*limit).json, r.form, true)}
			})
		}),
		s.handle("POST", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits.json", createLimit),
		s.handle("PUT", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json", updateLimit),
		s.handle("DELETE", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/limits/{id}.json", func(r *request) answer {
			l, ok := r.t.limits[r.params["id"]]
			if !ok || l.planID != r.params["application_plan_id"] || l.metricID != r.params["metric_id"] {
				return notFound()
			}
			delete(r.t.limits, l.id)
			return answer{200, nil}
		}),
		s.handle("GET", "/admin/api/application_plans/{application_plan_id}/pricing_rules.json", func(r *request) answer {
			return withPlanID(r, func(p *plan) answer {
				return answer{200, wrapList("pricing_rules", "pricing_rule", r.t.pricing, func(x *pricingRule) bool { return x.planID == p.id }, (*pricingRule).json, r.form, false)}
			})
		}),
		s.handle("POST", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules.json", createPricingRule),
		s.handle("DELETE", "/admin/api/application_plans/{application_plan_id}/metrics/{metric_id}/pricing_rules/{id}.json", func(r *request) answer {
			x, ok := r.t.pricing[r.params["id"]]
			if !ok || x.planID != r.params["application_plan_id"] || x.metricID != r.params["metric_id"] {
				return notFound()
			}
			delete(r.t.pricing, x.id)
			return answer{200, nil}
		}),
	}
	// Metrics, methods and mapping rules exist under services and backend APIs alike.
	for _, o := range []struct{ kind, base, rules, ruleUpdate string }{
		{"service", "/admin/api/services/{service_id}", "/admin/api/services/{service_id}/proxy/mapping_rules", "PATCH"},
		{"backend", "/admin/api/backend_apis/{backend_api_id}", "/admin/api/backend_apis/{backend_api_id}/mapping_rules", "PUT"},
	} {
		kind := o.kind
		paginated := kind == "backend"
		rs = append(rs,
			s.handle("GET", o.base+"/metrics.json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer {
					return answer{200, wrapList("metrics", "metric", r.t.metrics, func(m *metric) bool { return m.owner == ow }, (*metric).json, r.form, paginated)}
				})
			}),
			s.handle("POST", o.base+"/metrics.json", func(r *request) answer { return createMetric(r, kind, 0) }),
			s.handle("GET", o.base+"/metrics/{id}.json", func(r *request) answer {
				return withMetric(r, kind, "id", func(m *metric) answer { return answer{200, map[string]any{"metric": m.json()}} })
			}),
			s.handle("PUT", o.base+"/metrics/{id}.json", func(r *request) answer { return updateMetric(r, kind, "id", "metric") }),
			s.handle("DELETE", o.base+"/metrics/{id}.json", func(r *request) answer {
				return withMetric(r, kind, "id", func(m *metric) answer {
					if m.systemName == "hits" {
						return answer{http.StatusForbidden, map[string]any{"errors": map[string][]string{"base": {"the hits metric cannot be deleted"}}}}
					}
					r.t.deleteMetric(m.id)
					return answer{200, nil}
				})
			}),
			s.handle("GET", o.base+"/metrics/{metric_id}/methods.json", func(r *request) answer {
				return withMetric(r, kind, "metric_id", func(parent *metric) answer {
					return answer{200, wrapList("methods", "method", r.t.metrics, func(m *metric) bool { return m.parentID == parent.id }, (*metric).json, r.form, paginated)}
				})
			}),
			s.handle("POST", o.base+"/metrics/{metric_id}/methods.json", func(r *request) answer {
				return withMetric(r, kind, "metric_id", func(parent *metric) answer { return createMetric(r, kind, parent.id) })
			}),
			s.handle("GET", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer {
				return withMetric(r, kind, "id", func(m *metric) answer { return answer{200, map[string]any{"method": m.json()}} })
			}),
			s.handle("PUT", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer { return updateMetric(r, kind, "id", "method") }),
			s.handle("DELETE", o.base+"/metrics/{metric_id}/methods/{id}.json", func(r *request) answer {
				return withMetric(r, kind, "id", func(m *metric) answer { r.t.deleteMetric(m.id); return answer{200, nil} })
			}),
			s.handle("GET", o.rules+".json", func(r *request) answer {
				return withOwner(r, kind, func(ow owner) answer {
					return answer{200, wrapList("mapping_rules", "mapping_rule", r.t.rules, func(m *mappingRule) bool { return m.owner == ow }, (*mappingRule).json, r.form, paginated)}
				})
			}),
			s.handle("POST", o.rules+".json", func(r *request) answer { return saveMappingRule(r, kind, nil) }),
			s.handle("GET", o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { return answer{200, map[string]any{"mapping_rule": m.json()}} })
			}),
			s.handle(o.ruleUpdate, o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { return saveMappingRule(r, kind, m) })
			}),
			s.handle("DELETE", o.rules+"/{id}.json", func(r *request) answer {
				return withRule(r, kind, func(m *mappingRule) answer { delete(r.t.rules, m.id); return answer{200, nil} })
			}),
		)
	}
	return rs
}
