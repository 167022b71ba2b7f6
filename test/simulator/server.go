// Package simulator is a stateful, in-memory 3scale Account Management API (porta's admin API) for
// tests and the demo: services with metrics, methods, mapping rules, proxy, OIDC and policies; backend
// APIs with theirs; backend usages; application plans with limits and pricing rules; account plans and
// service plans, every tenant with a default account plan and every service with a "Default" service
// plan (accountplans.go, serviceplans.go); developer accounts with their users, account plan, service
// subscriptions and applications (accounts.go, serviceplans.go, applications.go); ActiveDocs (activedocs.go); the
// versions of each product's gateway configuration, deployed and promoted (proxyconfigs.go); the APIcast
// custom policy registry (registry.go); the fields definitions (custom fields) every tenant starts with
// and the values of accounts' and users' extra fields (fields.go); and, with a master account (Options.MasterToken), the master
// API for tenants, which makes new tenants of the simulator (master.go). It answers like porta —
// wrappers, status codes, error bodies, pagination, cascades — counts requests by tenant, verb, path
// template and status (GET /__sim/stats), and injects seeded faults: latency, 5xx, 429 with
// Retry-After, and lost responses (PUT /__sim/faults).
//
// The .json endpoints are served, and the one .xml endpoint apimsync reads (an account with its users);
// the CMS API answers .xml 406, as porta does (cms.go). Requests are authenticated as porta does: the access_token
// parameter (query or body) wins; otherwise HTTP Basic auth, whose first non-blank part (user name, then
// password) is the token. A missing or unknown token is answered 403 {"error":"Access denied"}.
// A path prefixed with /t/NAME addresses tenant NAME as its own admin host would: the token must be
// NAME's. The /__sim/ endpoints need no token and are not counted.
//
// The master API (/master/api/...) is served on master's host only: /t/master, or no prefix with the
// master token or a token of nobody's; on another tenant's host (its /t/NAME, or no prefix with its
// token) it is answered 403 with no body. There, a token that is not master's is answered 401
// "unauthorized" (text), and one without the account_management scope 403 {"error":"Your access token
// does not have the correct permissions"}. The master token also reaches master's Account Management
// API, where master's developer accounts are its tenants, with their users.
package simulator

import (
	"encoding/json"
	"io"
	"math/rand"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Simulator.
type Options struct {
	// Tenants maps tenant names to their access tokens; a request's token chooses its tenant.
	Tenants map[string]string
	// Seed makes fault injection reproducible: the same seed and the same sequence of requests draw
	// the same faults.
	Seed int64
	// Faults to inject from the start.
	Faults Faults
	// MasterToken, when set, makes the master account: tenant MasterTenant ("master"), reachable with
	// this token, which serves the master API (POST /master/api/providers.json makes a new tenant).
	MasterToken string
	// Superdomain is the installation's superdomain (porta's THREESCALE_SUPERDOMAIN, the APIManager's
	// wildcardDomain): a new tenant's developer portal is <slug>.<Superdomain>. Default
	// DefaultSuperdomain.
	Superdomain string
	// AdminDomain gives a new tenant's admin_domain, the host of its admin portal and Account Management
	// API, from its slug (the org_name parameterized, "-2"... when taken), which is also its tenant name
	// here. Default <slug>-admin.<Superdomain>, as porta makes it. A test points it at the simulator
	// itself with the /t/NAME prefix, e.g. func(slug string) string { return "127.0.0.1:PORT/t/" + slug }
	// with PlainHTTP, so that admin_base_url reaches the new tenant (listen first to know the port, then
	// serve the simulator on that listener).
	AdminDomain func(slug string) string
	// PlainHTTP makes the tenants' admin_base_url and base_url http://, as porta's force_ssl off does;
	// https:// by default.
	PlainHTTP bool
	// Trace, when set, gets one line per request of the API (not /__sim/): when it arrived (the time of
	// day, to the millisecond), how long it took, the tenant, the method, the endpoint's template, the
	// answer's code (0: answer lost) and the path (its ids). For reading how a client paced a tenant and
	// what it read again; no query, token nor body.
	Trace io.Writer
}

// Simulator is an http.Handler serving the simulated API. Safe for concurrent use.
type Simulator struct {
	mu      sync.Mutex
	tenants map[string]*tenant // by token
	names   map[string]*tenant // by name
	faults  Faults
	// scripted are the faults tests asked for on named requests of one tenant (ScriptFault).
	scripted []*ScriptedFault
	rnd      *rand.Rand
	stats    map[CallKey]int
	journal  map[string][]CallKey // writes by tenant, in order, the last maxJournal
	routes   []route
	// scopes are the scopes of the tokens SetTokenScopes restricted; any other token has them all.
	scopes map[string][]string
	// ignoredRetryAfter counts requests sent while a Retry-After of their tenant's rate limit ran.
	ignoredRetryAfter int
	// master is the master account's tenant (Options.MasterToken), nil without one.
	master *tenant
	// superdomain, adminDomain and scheme make a new tenant's domains and base URLs (Options).
	superdomain string
	adminDomain func(slug string) string
	scheme      string
	trace       io.Writer // Options.Trace
	// ownAccounts counts the tenants AddTenant made (their account ids, tenant.ownAccountID).
	ownAccounts int64
	// owners are the users the access tokens belong to, by token (adminusers.go): the current user of a
	// request is its token's owner.
	owners map[string]int64
	// ownUsers counts the users of the tenants AddTenant made (their ids, ownUserBase and up).
	ownUsers int64
}

// ownAccountBase is below the account ids of the tenants AddTenant makes: far above the ids master
// gives the tenants and buyers it makes, as all of porta's accounts are in one table.
const ownAccountBase = 1000000

// New returns a simulator with the given tenants, faults and seed.
func New(opts Options) *Simulator {
	s := &Simulator{tenants: map[string]*tenant{}, names: map[string]*tenant{}, faults: opts.Faults,
		rnd: rand.New(rand.NewSource(opts.Seed)), stats: map[CallKey]int{}, journal: map[string][]CallKey{}, scopes: map[string][]string{},
		trace: opts.Trace, owners: map[string]int64{}}
	// The domains first: a tenant's first admin has an email at its domain (AddTenant).
	s.superdomain, s.adminDomain, s.scheme = opts.Superdomain, opts.AdminDomain, "https"
	if s.superdomain == "" {
		s.superdomain = DefaultSuperdomain
	}
	if s.adminDomain == nil {
		s.adminDomain = func(slug string) string { return slug + "-admin." + s.superdomain }
	}
	if opts.PlainHTTP {
		s.scheme = "http"
	}
	names := make([]string, 0, len(opts.Tenants))
	for name := range opts.Tenants {
		names = append(names, name)
	}
	sort.Strings(names) // the tenants' account ids follow the names
	for _, name := range names {
		s.AddTenant(name, opts.Tenants[name])
	}
	if opts.MasterToken != "" {
		s.AddTenant(MasterTenant, opts.MasterToken)
		s.master = s.names[MasterTenant]
	}
	var rs []route
	rs = append(rs, serviceRoutes()...)
	rs = append(rs, backendRoutes()...)
	rs = append(rs, childRoutes()...)
	rs = append(rs, planRoutes()...)
	rs = append(rs, featureRoutes()...)
	rs = append(rs, accountPlanRoutes()...)
	rs = append(rs, servicePlanRoutes()...)
	rs = append(rs, cmsRoutes()...)
	rs = append(rs, portalSettingsRoutes()...)
	rs = append(rs, providerRoutes()...)
	rs = append(rs, accountRoutes()...)
	rs = append(rs, fieldsDefinitionRoutes()...)
	rs = append(rs, applicationRoutes()...)
	rs = append(rs, activeDocRoutes()...)
	rs = append(rs, proxyConfigRoutes()...)
	rs = append(rs, registryRoutes()...)
	rs = append(rs, masterRoutes()...)
	rs = append(rs, adminUserRoutes()...)
	rs = append(rs, adminSignInRoutes()...)
	s.routes = rs
	return s
}

// AddTenant adds a tenant reachable with token; for a tenant that exists, it adds token to it (a
// rotated or second access token). A new tenant has its first admin, user "admin", active; token
// belongs to the tenant's first admin (AddUserToken gives a token to another of its users).
func (s *Simulator) AddTenant(name, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.names[name]
	if !ok {
		t = newTenant(name)
		s.ownAccounts++
		t.ownAccountID = ownAccountBase + s.ownAccounts
		s.names[name] = t
		s.addFirstAdmin(t)
	}
	s.tenants[token] = t
	s.owners[token] = t.firstAdminID()
}

// RevokeToken makes token unusable; its tenant and objects stay.
func (s *Simulator) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tenants, token)
	delete(s.owners, token)
}

// SetTokenScopes restricts what token may do to the access token scopes given, as porta's access tokens
// are (AccessToken::SCOPES, app/models/access_token.rb:31: "account_management", "policy_registry"...;
// none at all when none is given): the policy registry needs "policy_registry", a product's policy
// chain "policy_registry" or "account_management", every other endpoint "account_management". A request
// the token's scopes do not allow is answered 403 {"error":"Your access token does not have the correct
// permissions"} (verify_access_token_scopes, app/lib/api_authentication/by_access_token.rb:100-103,123-130).
// A token never restricted has every scope.
func (s *Simulator) SetTokenScopes(token string, scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes[token] = append([]string{}, scopes...)
}

// scopesAllow reports whether token's scopes let it call the endpoint of template; s.mu held.
func (s *Simulator) scopesAllow(token, template string) bool {
	scopes, restricted := s.scopes[token]
	if !restricted {
		return true
	}
	for _, have := range scopes {
		if slices.Contains(scopesNeeded(template), have) {
			return true
		}
	}
	return false
}

// scopesNeeded are the scopes of which a token needs one to call the endpoint of template.
func scopesNeeded(template string) []string {
	needs := []string{scopeAccountManagement}
	switch {
	case strings.HasPrefix(template, "/admin/api/registry/"):
		// Admin::Api::Registry::PoliciesController: self.access_token_scopes = :policy_registry.
		needs = []string{scopePolicyRegistry}
	case strings.HasPrefix(template, "/admin/api/cms/"):
		// Admin::Api::CMS::BaseController: self.access_token_scopes = %i[cms account_management]
		// (app/controllers/admin/api/cms/base_controller.rb:10).
		needs = []string{scopeCMS, scopeAccountManagement}
	case strings.HasSuffix(template, "/proxy/policies.json"):
		// Admin::Api::Services::Proxy::PoliciesController: %i[policy_registry account_management].
		needs = []string{scopePolicyRegistry, scopeAccountManagement}
	}
	return needs
}

// Access token scopes (porta's AccessToken scopes).
const (
	scopeAccountManagement = "account_management"
	scopePolicyRegistry    = "policy_registry"
	scopeCMS               = "cms"
)

// msgTokenPermissions is porta's answer to a token without the endpoint's scope.
const msgTokenPermissions = "Your access token does not have the correct permissions"

// request is one parsed, authenticated API request.
type request struct {
	t      *tenant
	sim    *Simulator // for what reaches beyond the tenant: master making and dropping tenants
	method string
	token  string            // the access token, whose owner is the current user (adminusers.go)
	params map[string]int64  // path ids
	texts  map[string]string // path values that are text, not ids (route.text), as sent
	key    string            // the {key} of a path, as sent
	form   url.Values        // query and body values
	// top are the parameters' top-level names as Rails sees them: a JSON body's keys, a form's keys up
	// to "[" (template[draft] is "template"), the query's, the multipart parts' (readForm).
	top map[string]bool
	// uploads are the file parts of a multipart/form-data body, by part name.
	uploads map[string][]*multipart.FileHeader
}

// answer is a handler's reply: a status and a body encoded as JSON (nil: empty body).
type answer struct {
	code int
	body any
}

type handlerFunc func(r *request) answer

// route is one endpoint: a verb and a path template such as
// /admin/api/services/{service_id}/metrics/{id}.json.
type route struct {
	method   string
	template string
	format   string // ".json" or ".xml"
	segments []string
	// text are the placeholders (names without braces) that take any text, not only an id: an
	// environment, a policy's id or name-version.
	text   map[string]bool
	handle handlerFunc
}

func handle(method, template string, h handlerFunc) route {
	format := formatOf(template)
	return route{method: method, template: template, format: format, segments: strings.Split(strings.TrimSuffix(template, format), "/"), handle: h}
}

// withText makes the route's placeholders names take any text (request.texts) rather than ids only.
func (rt route) withText(names ...string) route {
	rt.text = map[string]bool{}
	for _, n := range names {
		rt.text[n] = true
	}
	return rt
}

// formatOf is a path's format extension, ".json" or ".xml" ("" for another).
func formatOf(path string) string {
	for _, f := range []string{".json", ".xml"} {
		if strings.HasSuffix(path, f) {
			return f
		}
	}
	return ""
}

// isWrite reports whether a verb changes state (a lost response only makes sense for those).
func isWrite(method string) bool { return method != http.MethodGet && method != http.MethodHead }

// match returns the route for method and path with its path ids and text values, and whether some
// route has this path (for 405). PUT and PATCH are interchangeable, as in porta's routes (resources
// accept both).
func (s *Simulator) match(method, path string) (*route, map[string]int64, map[string]string, bool) {
	format := formatOf(path)
	if format == "" {
		return nil, nil, nil, false
	}
	segs := strings.Split(strings.TrimSuffix(path, format), "/")
	pathKnown := false
	for i := range s.routes {
		rt := &s.routes[i]
		if rt.format != format || len(rt.segments) != len(segs) {
			continue
		}
		params, texts := map[string]int64{}, map[string]string{}
		ok := true
		for j, seg := range rt.segments {
			if seg == "{key}" { // an application key: any text (request.key)
				continue
			}
			if name := strings.Trim(seg, "{}"); rt.text[name] && strings.HasPrefix(seg, "{") {
				texts[name] = segs[j]
				continue
			}
			if strings.HasPrefix(seg, "{") {
				id, err := strconv.ParseInt(segs[j], 10, 64)
				if err != nil {
					ok = false
					break
				}
				params[strings.Trim(seg, "{}")] = id
			} else if seg != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		pathKnown = true
		if rt.method == method || (method == http.MethodPatch && rt.method == http.MethodPut) || (method == http.MethodPut && rt.method == http.MethodPatch) {
			return rt, params, texts, true
		}
	}
	return nil, nil, nil, pathKnown
}

// tenantNamed reports whether a tenant has that name.
func (s *Simulator) tenantNamed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name] != nil
}

// ServeHTTP implements http.Handler.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	arrived := time.Now()
	if strings.HasPrefix(hr.URL.Path, "/__sim/") {
		s.serveControl(w, hr)
		return
	}
	if s.serveCMSFile(w, hr) {
		return
	}
	form, top := readForm(hr)
	token := accessToken(hr, form)
	// "/t/NAME/admin/api/..." addresses tenant NAME, as a tenant's own admin host would: the token must
	// be NAME's. It lets tests give each tenant its own admin URL on one listener.
	path, hostTenant := hr.URL.Path, ""
	if rest, ok := strings.CutPrefix(path, "/t/"); ok {
		hostTenant, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	rt, params, texts, pathKnown := s.match(hr.Method, path)
	template := path
	if rt != nil {
		template = rt.template
	} else if pathKnown {
		template = path // a known path with a wrong verb is counted under its concrete path
	}
	masterAPI := strings.HasPrefix(path, "/master/api/")

	s.mu.Lock()
	t := s.tenants[token]
	if token == "" || (hostTenant != "" && (t == nil || t.name != hostTenant)) {
		t = nil
	}
	fault := s.drawFault(t, isWrite(hr.Method))
	if t != nil {
		if sf, ok := s.takeScripted(t.name, hr.Method, template); ok {
			fault = sf
		}
	}
	gate := accountGate(t)
	if masterAPI {
		gate = s.masterGate(hostTenant, t)
	}
	retry, limited := 0, false
	scoped := true
	if t != nil && rt != nil && gate == nil {
		retry, limited = s.overTenantLimit(t, time.Now())
		scoped = s.scopesAllow(token, rt.template) && (masterAPI || s.ownerScopesAllow(t, token, rt.template))
	}
	masterHost := masterAPI && hostTenant == "" && t == nil && s.master != nil
	s.mu.Unlock()

	var a answer
	switch {
	case gate != nil:
		a = *gate
	case limited:
		a = answer{http.StatusTooManyRequests, retryAfter(retry)}
	case t == nil:
		// porta's Filters::ProviderRequired: render_error 'Access denied', status: :forbidden.
		a = answer{http.StatusForbidden, map[string]string{"error": "Access denied"}}
	case !scoped:
		a = answer{http.StatusForbidden, map[string]string{"error": msgTokenPermissions}}
	case rt == nil && pathKnown:
		a = answer{http.StatusMethodNotAllowed, map[string]string{"error": "Method not allowed"}}
	case rt == nil:
		a = notFound()
	default:
		if fault.delay > 0 {
			time.Sleep(fault.delay)
		}
		if fault.code != 0 {
			a = fault.answer()
			break
		}
		req := &request{t: t, sim: s, method: hr.Method, token: token, params: params, texts: texts, form: form, top: top}
		if hr.MultipartForm != nil {
			req.uploads = hr.MultipartForm.File
		}
		if strings.HasSuffix(rt.template, "/{key}.json") {
			req.key = strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".json")
		}
		// A key may hold dots: porta's route constrains the key segment to ([^/]+?)(?=\.json|\.xml|$|/)
		// (config/routes.rb:603), so only the last extension is the format.
		s.mu.Lock()
		a = rt.handle(req)
		s.mu.Unlock()
		if fault.lose && a.code < 300 {
			s.record(arrived, t.name, hr.Method, template, path, 0)
			loseResponse(w)
			return
		}
	}
	name := ""
	switch {
	case t != nil:
		name = t.name
	case hostTenant != "" && s.tenantNamed(hostTenant):
		name = hostTenant // refused on the tenant's own admin host: its own log has it
	case masterHost:
		name = MasterTenant // the master API refused on master's host
	}
	s.record(arrived, name, hr.Method, template, path, a.code)
	writeJSON(w, a)
}

// wrappedKey matches porta's wrapped form keys (service[name]=...) to unwrap them.
var wrappedKey = regexp.MustCompile(`^[a-z_]+\[([a-z_]+)\]$`)

// readForm merges query and body parameters as Rails does: form-encoded and multipart bodies, JSON
// bodies (top-level fields, or fields of a wrapper object such as {"service":{...}}), and wrapped keys
// (service[name]). It also returns the parameters' top-level names (request.top).
func readForm(hr *http.Request) (url.Values, map[string]bool) {
	ct, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type"))
	form, top := url.Values{}, map[string]bool{}
	if ct == "application/json" && hr.Body != nil {
		raw, _ := io.ReadAll(io.LimitReader(hr.Body, 10<<20))
		var obj map[string]any
		if json.Unmarshal(raw, &obj) == nil {
			for k, v := range obj {
				top[k] = true
				// A policy chain and a registry policy's schema are values, not wrappers.
				if inner, ok := v.(map[string]any); ok && k != "policies_config" && k != "schema" {
					for ik, iv := range inner {
						form.Set(ik, jsonParam(iv))
					}
					continue
				}
				form.Set(k, jsonParam(v))
			}
		}
		for k, vs := range hr.URL.Query() {
			form[k] = append(form[k], vs...)
			top[topName(k)] = true
		}
	} else {
		if ct == "multipart/form-data" {
			_ = hr.ParseMultipartForm(32 << 20) // larger files go to temporary files, removed after the request
		} else {
			_ = hr.ParseForm()
		}
		for k, vs := range hr.Form {
			form[k] = vs
			top[topName(k)] = true
		}
		if hr.MultipartForm != nil {
			for k := range hr.MultipartForm.File {
				top[topName(k)] = true
			}
		}
	}
	for k, vs := range form {
		if m := wrappedKey.FindStringSubmatch(k); m != nil {
			if _, ok := form[m[1]]; !ok {
				form[m[1]] = vs
			}
		}
	}
	return form, top
}

// topName is a parameter's top-level name: service[name] is "service".
func topName(key string) string { name, _, _ := strings.Cut(key, "["); return name }

// jsonParam renders a JSON value as the string a form would carry (arrays and objects stay JSON).
func jsonParam(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		raw, _ := json.Marshal(x)
		return string(raw)
	}
}

// accessToken finds the token as porta's ApiAuthentication::ByAccessToken does: the access_token
// parameter if present (even blank), else the first non-blank part of HTTP Basic credentials.
func accessToken(hr *http.Request, form url.Values) string {
	if vs, ok := form["access_token"]; ok && len(vs) > 0 {
		return vs[0]
	}
	if user, pass, ok := hr.BasicAuth(); ok {
		if user != "" {
			return user
		}
		return pass
	}
	return ""
}

// loseResponse drops the connection without an answer: the write has committed, the client never hears
// (as when a proxy or the network drops the reply). Where the connection cannot be taken over (HTTP/2),
// it answers 502 with no body instead.
func loseResponse(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// xmlDocument is an answer's body already rendered as XML.
type xmlDocument string

// plainText is an answer's body that is text, not JSON.
type plainText string

func writeJSON(w http.ResponseWriter, a answer) {
	if doc, ok := a.body.(xmlDocument); ok {
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(doc))
		return
	}
	if text, ok := a.body.(plainText); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(text))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if ra, ok := a.body.(retryAfter); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(ra)))
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(`{"error":"Too Many Requests"}`))
		return
	}
	w.WriteHeader(a.code)
	if a.body != nil {
		_ = json.NewEncoder(w).Encode(a.body)
	}
}

// notFound is porta's answer to an unknown id: 404 {"status":"Not found"}.
func notFound() answer { return answer{http.StatusNotFound, map[string]string{"status": "Not found"}} }

// fieldErrors collects porta's validation errors, {"errors":{"field":["message"...]}}.
type fieldErrors map[string][]string

func (e fieldErrors) add(field, msg string) { e[field] = append(e[field], msg) }

// answer is 422 with the errors, or the zero answer when there are none.
func (e fieldErrors) answer() answer {
	if len(e) == 0 {
		return answer{}
	}
	return answer{http.StatusUnprocessableEntity, map[string]any{"errors": map[string][]string(e)}}
}

func unprocessable(field, msg string) answer { return fieldErrors{field: {msg}}.answer() }

// parameterMissing is porta's answer to a required parameter left out or blank (params.require raising
// ActionController::ParameterMissing): 400 with text, not JSON (app/controllers/application_controller.rb:50-52).
func parameterMissing(name string) answer {
	return answer{http.StatusBadRequest, plainText("Required parameter missing: " + name)}
}

// refused is porta's answer to a DELETE its model refuses: the responder renders the errors with 403.
func refused(msg string) answer {
	return answer{http.StatusForbidden, map[string]any{"errors": map[string][]string{"base": {msg}}}}
}

// ok, created and deleted are porta's success answers: 200 or 201 with the wrapped object, 200 and an
// empty body after a DELETE (ThreeScale::Api::Responder: head :ok).
func ok(key string, v any) answer      { return answer{http.StatusOK, map[string]any{key: v}} }
func created(key string, v any) answer { return answer{http.StatusCreated, map[string]any{key: v}} }
func deleted() answer                  { return answer{http.StatusOK, nil} }
