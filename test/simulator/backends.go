package simulator

import (
	"net"
	"net/url"
	"strings"
)

// backendRoutes are the endpoints of backend APIs.
func backendRoutes() []route {
	return []route{
		handle("GET", "/admin/api/backend_apis.json", func(r *request) answer {
			return wrapList("backend_apis", "backend_api", r.t.backends, nil, (*backendAPI).json, r.form, true)
		}),
		handle("POST", "/admin/api/backend_apis.json", createBackend),
		handle("GET", "/admin/api/backend_apis/{id}.json", func(r *request) answer {
			return withBackend(r, "id", func(b *backendAPI) answer { return ok("backend_api", b.json()) })
		}),
		handle("PUT", "/admin/api/backend_apis/{id}.json", updateBackend),
		handle("DELETE", "/admin/api/backend_apis/{id}.json", deleteBackend),
	}
}

func withBackend(r *request, param string, f func(*backendAPI) answer) answer {
	b, found := r.t.backends[r.params[param]]
	if !found {
		return notFound()
	}
	return f(b)
}

func createBackend(r *request) answer {
	sys, a := newName(r, "name", "backend_api", func(sys string) bool {
		for _, b := range r.t.backends {
			if b.systemName == sys {
				return true
			}
		}
		return false
	})
	errs := fieldErrors{}
	if a.code != 0 {
		errs = fieldErrors(a.body.(map[string]any)["errors"].(map[string][]string))
	}
	pe := r.form.Get("private_endpoint")
	checkEndpoint(pe, errs)
	if a := errs.answer(); a.code != 0 {
		return a
	}
	// BackendApi after_create :create_default_metrics: every backend comes with hits.
	b := &backendAPI{id: r.t.id(), name: r.form.Get("name"), systemName: sys, description: r.form.Get("description"),
		privateEndpoint: withDefaultPort(pe), stamps: newStamps()}
	r.t.backends[b.id] = b
	r.t.addHits(owner{ownerBackend, b.id})
	return created("backend_api", b.json())
}

// validURL reports whether v is an absolute http(s)/ws(s) URL with a host.
func validURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return false
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return true
	}
	return false
}

// checkEndpoint is BackendApi's private_endpoint validation: present, a URL with scheme http, https,
// ws or wss, and not on the gateway's own host (the non_localhost validator, :protected_domain).
func checkEndpoint(pe string, errs fieldErrors) {
	switch {
	case pe == "":
		errs.add("private_endpoint", "can't be blank")
	case !validURL(pe):
		errs.add("private_endpoint", "Invalid URL format")
	default:
		u, _ := url.Parse(pe)
		h := u.Hostname()
		if ip := net.ParseIP(h); h == "localhost" || strings.HasSuffix(h, ".localhost") || (ip != nil && ip.IsLoopback()) {
			errs.add("private_endpoint", "is a protected domain")
		}
	}
}

// withDefaultPort is Proxy::PortGenerator: porta stores the endpoint with its port made explicit.
func withDefaultPort(pe string) string {
	u, err := url.Parse(pe)
	if err != nil || u.Port() != "" {
		return pe
	}
	port := map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
	if port == "" {
		return pe
	}
	u.Host = net.JoinHostPort(u.Hostname(), port)
	return u.String()
}

func updateBackend(r *request) answer {
	return withBackend(r, "id", func(b *backendAPI) answer {
		next := *b
		errs := fieldErrors{}
		if has(r, "name") {
			if next.name = r.form.Get("name"); strings.TrimSpace(next.name) == "" {
				errs.add("name", "can't be blank")
			}
		}
		if has(r, "description") {
			next.description = r.form.Get("description")
		}
		if has(r, "private_endpoint") {
			pe := r.form.Get("private_endpoint")
			checkEndpoint(pe, errs)
			next.privateEndpoint = withDefaultPort(pe)
		}
		if a := errs.answer(); a.code != 0 {
			return a
		}
		next.touch()
		*b = next
		return ok("backend_api", b.json())
	})
}

// msgBackendInUse is BackendApi's :cannot_be_destroyed_with_products message.
const msgBackendInUse = "cannot be deleted because it is used by at least one Product"

// deleteBackend refuses while a product uses the backend (porta's state validation fails and its
// responder renders a DELETE's errors with 403); otherwise it removes the backend with its metrics,
// methods and mapping rules.
func deleteBackend(r *request) answer {
	return withBackend(r, "id", func(b *backendAPI) answer {
		for _, u := range r.t.usages {
			if u.backendID == b.id {
				return refused(msgBackendInUse)
			}
		}
		ow := owner{ownerBackend, b.id}
		for id, m := range r.t.rules {
			if m.owner == ow {
				delete(r.t.rules, id)
			}
		}
		for id, m := range r.t.metrics {
			if m.owner == ow && m.parentID == 0 {
				r.t.deleteMetric(id)
			}
		}
		delete(r.t.backends, b.id)
		return deleted()
	})
}
