package simulator

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	pe := withDefaultPort(r.form.Get("private_endpoint"))
	checkEndpoint("private_endpoint", pe, errs)
	if a := errs.answer(); a.code != 0 {
		return a
	}
	// BackendApi after_create :create_default_metrics: every backend comes with hits.
	b := &backendAPI{id: r.t.id(), name: r.form.Get("name"), systemName: sys, description: r.form.Get("description"),
		privateEndpoint: pe, stamps: newStamps()}
	r.t.backends[b.id] = b
	r.t.addHits(owner{ownerBackend, b.id})
	return created("backend_api", b.json())
}

// Messages of endpoint validation: porta's :invalid for a backend's private endpoint
// (config/locales/en.yml:2030; the same text for the proxy's api_backend, en.yml:2034) and for the
// proxy's endpoints (en.yml:2038,2040); NonLocalhostValidator's :protected_domain for a backend
// (app/models/backend_api.rb:42, en.yml:1909) and :localhost for the proxy's endpoints (en.yml:1955).
const (
	msgBackendEndpointInvalid = "the accepted format is 'scheme://address(:port)(/path)'. Accepted schemes are http, https, ws and wss"
	msgProxyEndpointInvalid   = "the accepted format is 'protocol://address(:port)'"
	msgProtectedDomain        = "Sorry, this domain is protected"
	msgLocalhost              = "can't be localhost"
)

// uriValid is porta's UriValidator (app/validators/uri_validator.rb): the URL parses, its scheme is one
// of schemes, it has a host, and it has no user info, query or fragment, nor a path unless allowPath
// (DEFAULT_PERMISSIONS_OF_PARTS, uri_validator.rb:5-13; a blank part is absent, so "https://h?" passes).
// The host length checks (uri_validator.rb:75-90) are not modelled.
func uriValid(v string, schemes []string, allowPath bool) bool {
	u, err := url.Parse(v)
	if err != nil || u.Opaque != "" || !slices.Contains(schemes, u.Scheme) || u.Hostname() == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return allowPath || u.Path == ""
}

// localhostPattern is NonLocalhostValidator::LOCALHOST (app/validators/non_localhost_validator.rb:5):
// only "localhost" and 127.x.y.z, not ::1 nor *.localhost.
var localhostPattern = regexp.MustCompile(`^(localhost|127(\.\d{1,3}){3})$`)

// isLocalhost reports whether the URL's host is what NonLocalhostValidator refuses.
func isLocalhost(v string) bool {
	u, err := url.Parse(v)
	return err == nil && localhostPattern.MatchString(u.Hostname())
}

// checkEndpoint is BackendApi's private_endpoint validation (app/models/backend_api.rb:39-42): present,
// a URL with scheme http, https, ws or wss (a path allowed: the proxy_private_base_path rolling update,
// on in config/examples/rolling_updates.yml:12), and not on localhost. The errors go to field.
func checkEndpoint(field, pe string, errs fieldErrors) {
	switch {
	case pe == "":
		errs.add(field, "can't be blank")
	case !uriValid(pe, []string{"http", "https", "ws", "wss"}, true):
		errs.add(field, msgBackendEndpointInvalid)
	case isLocalhost(pe):
		errs.add(field, msgProtectedDomain)
	}
}

// defaultPorts are the default ports of the schemes porta's endpoints accept (Ruby's URI::HTTP,
// URI::HTTPS, URI::WS, URI::WSS).
var defaultPorts = map[string]int{"http": 80, "ws": 80, "https": 443, "wss": 443}

// withDefaultPort is Proxy::PortGenerator (app/models/proxy.rb:667-684), which porta runs before
// validating a backend's private_endpoint (backend_api.rb:18,112-114) and a proxy's endpoint and
// sandbox_endpoint (proxy.rb:92,653-659): it rebuilds the URL with its port made explicit, so that
// "https://h" is stored as "https://h:443" and "http://h/p" as "http://h:80/p", and a port is written
// as a number ("https://h:0443" becomes "https://h:443"). A blank or unparsable value, or one without a
// host or of another scheme, is kept as it is.
func withDefaultPort(pe string) string {
	u, err := url.Parse(pe)
	if err != nil || u.Hostname() == "" {
		return pe
	}
	port, known := defaultPorts[u.Scheme]
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return pe
		}
	} else if !known {
		return pe
	}
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
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
			next.privateEndpoint = withDefaultPort(r.form.Get("private_endpoint"))
			checkEndpoint("private_endpoint", next.privateEndpoint, errs)
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
