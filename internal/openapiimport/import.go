// Package openapiimport turns an OpenAPI document (3.0, 3.1, or Swagger 2.0) into what 3scale needs to
// serve the API it describes, as 3scale toolbox's `import openapi` does: the upstream (the private base
// URL, from servers), one method per operation (its operationId, or its verb and path, named by its
// summary), one mapping rule per operation (its verb and path), and the authentication its security
// schemes ask for (an API key in a header or the query: user key; OpenID Connect or OAuth 2.0: OIDC).
//
// The document is parsed and validated with kin-openapi (github.com/getkin/kin-openapi): maintained, the
// library 3scale-operator itself uses for the same job, light on dependencies, with OpenAPI 3.1 support
// and a Swagger 2.0 converter. No reference outside the document is followed: nothing is fetched.
package openapiimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// MaxDocumentBytes is the largest document imported: a Kubernetes object (inline, ConfigMap or Secret)
// holds about 1 MiB anyway.
const MaxDocumentBytes = 1 << 20

// Limits of what one Product holds (its CRD's bounds): more operations cannot be imported into one.
const (
	MaxMethods      = 64
	MaxMappingRules = 100
	maxNameLength   = 255
	maxDescription  = 1024
)

// Auth is how API callers authenticate, as the document's security asks.
type Auth struct {
	// Kind is "userKey", "oidc" or "" (the document asks for nothing apimsync can map: 3scale's default).
	Kind string
	// Param is the user key's parameter name (header or query parameter), Location "headers" or "query".
	Param, Location string
	// Flows are the OAuth 2.0 flows of an oauth2 scheme (authorizationCode, implicit, password,
	// clientCredentials); an openIdConnect scheme names none.
	Flows []string
	// Scheme is the name of the security scheme used.
	Scheme string
}

// Method is one method of the API: an operation.
type Method struct {
	SystemName, FriendlyName, Description string
	// Operation is the operation it was made for: "GET /pets".
	Operation string
}

// Rule is one mapping rule: an operation's verb and path, counted on its method (or on the metric or
// method its x-3scale-operation names), by Increment (1 when 0), Last stopping the matching.
type Rule struct {
	Verb, Pattern, Method string
	Increment             int32
	Last                  bool
	// Operation is the path of the operation it was made for.
	Operation string
	// named: Method comes from x-3scale-operation (checked once the metrics are known).
	named bool
}

// API is what a document says 3scale needs.
type API struct {
	// Title and Description are the document's info.
	Title, Description string
	// BackendName and BackendDescription name the Backend: the title and description, or as
	// 3scale-operator names it ("<title> Backend", "Backend of <title>").
	BackendName, BackendDescription string
	// PrivateBaseURL is the upstream: the first server's URL (its variables at their defaults), or the
	// override given, with the private base path; without a path when the public base path is the same
	// (the patterns then carry it).
	PrivateBaseURL string
	// UsagePath is the path the Product uses the Backend under: "/", or the public base path when it
	// differs from the private one (the gateway strips it, and the upstream's path takes its place).
	UsagePath string
	// PublicBasePath is in front of every pattern ("" for none): where the API is on the gateway.
	PublicBasePath string
	Methods        []Method
	Rules          []Rule
	Auth           Auth
	// Metrics, Policies and Plans come from the x-3scale-product extension; Policies end with APIcast's.
	Metrics  []Metric
	Policies []v1alpha1.PolicySpec
	Plans    []Plan
	// MethodNames is, by operation ("GET /pets"), the system name of its method.
	MethodNames map[string]string
	// renamed maps the name an operation's method would have now to the one it kept (Options.MethodNames).
	renamed map[string]string
	// Notes say what was changed or left out to fit 3scale (method names made unique, unmapped security
	// schemes, a description cut short), for the status and an Event.
	Notes []string
	// JSON is the document as JSON, the form porta's ActiveDocs take.
	JSON string
}

// Options tune the import.
type Options struct {
	// PrivateBaseURL replaces the servers' URL as the upstream.
	PrivateBaseURL string
	// PrefixMatching makes mapping rules match path prefixes: without the trailing "$".
	PrefixMatching bool
	// Operator names as 3scale-operator's OpenAPI does (v1alpha1.ConventionsThreescaleOperator).
	Operator bool
	// PublicBasePath and PrivateBasePath override the servers' path: in front of the patterns, and
	// on the upstream ("/" is none).
	PublicBasePath, PrivateBasePath string
	// BackendOnly: the operations are the Backend's (no policies or plans).
	BackendOnly bool
	// MethodNames is what the last import named each operation's method: an operation whose name
	// changed keeps its method. RuleMethods, by "VERB pattern", is the method each mapping rule of the
	// generated resource counts, for an operation MethodNames does not name (a status lost).
	MethodNames, RuleMethods map[string]string
	// SystemName is the system name of the generated Backend (and Product), BackendObject its object
	// name, Namespace the OpenAPI's: references of the extensions resolve against them.
	SystemName, BackendObject, Namespace string
}

// InvalidError is a document that cannot be imported, with the parser's or the importer's reason.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// IsInvalid reports whether err is a document that cannot be imported (not a passing failure).
func IsInvalid(err error) bool {
	var e *InvalidError
	return errors.As(err, &e)
}

// Parse reads an OpenAPI 3.x or Swagger 2.0 document, JSON or YAML, and validates it. A Swagger 2.0
// document is converted to OpenAPI 3.
func Parse(ctx context.Context, data []byte) (*openapi3.T, error) {
	if len(data) > MaxDocumentBytes {
		return nil, invalid("the document has %d bytes; at most %d are imported", len(data), MaxDocumentBytes)
	}
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, invalid("the document is neither JSON nor YAML: %v", err)
	}
	var head struct {
		OpenAPI string `json:"openapi"`
		Swagger string `json:"swagger"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, invalid("the document is not an object: %v", err)
	}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	var doc *openapi3.T
	switch {
	case strings.HasPrefix(head.OpenAPI, "3."):
		if doc, err = loader.LoadFromData(raw); err != nil {
			return nil, invalid("not a valid OpenAPI %s document: %v", head.OpenAPI, err)
		}
	case head.Swagger == "2.0":
		var doc2 openapi2.T
		if err := json.Unmarshal(raw, &doc2); err != nil {
			return nil, invalid("not a valid Swagger 2.0 document: %v", err)
		}
		if doc, err = openapi2conv.ToV3(&doc2); err != nil {
			return nil, invalid("not a valid Swagger 2.0 document: %v", err)
		}
		if err := loader.ResolveRefsIn(doc, nil); err != nil {
			return nil, invalid("not a valid Swagger 2.0 document: %v", err)
		}
	case head.OpenAPI != "":
		return nil, invalid("OpenAPI version %q is not supported: import OpenAPI 3.x or Swagger 2.0", head.OpenAPI)
	default:
		return nil, invalid(`the document has no "openapi" (3.x) or "swagger" ("2.0") version field`)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, invalid("not a valid OpenAPI document: %v", err)
	}
	return doc, nil
}

// verbs are the HTTP methods of operations, in the order methods and rules are listed for one path.
var verbs = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}

// Import is what doc says 3scale needs. json is the document as JSON (for ActiveDocs).
func Import(doc *openapi3.T, json string, opts Options) (*API, error) {
	api := &API{JSON: json}
	if doc.Info != nil {
		api.Title, api.Description = strings.TrimSpace(doc.Info.Title), strings.TrimSpace(doc.Info.Description)
	}
	if api.Title == "" {
		return nil, invalid("info.title is empty: the product and backend are named after it")
	}
	if len(api.Title) > maxNameLength {
		api.Title = api.Title[:maxNameLength]
		api.Notes = append(api.Notes, fmt.Sprintf("info.title cut to %d characters", maxNameLength))
	}
	if len(api.Description) > maxDescription {
		api.Description = api.Description[:maxDescription]
		api.Notes = append(api.Notes, fmt.Sprintf("info.description cut to %d characters", maxDescription))
	}
	api.BackendName, api.BackendDescription = api.Title, api.Description
	if opts.Operator {
		api.BackendName, api.BackendDescription = cut(api.Title+" Backend", maxNameLength), cut("Backend of "+api.Title, maxDescription)
	}
	upstream, err := privateBaseURL(doc, opts.PrivateBaseURL)
	if err != nil {
		return nil, err
	}
	public, err := api.paths(doc, upstream, opts)
	if err != nil {
		return nil, err
	}
	api.PublicBasePath = public
	if err := api.operations(doc, public, opts); err != nil {
		return nil, err
	}
	if err := api.productExtensions(doc, opts); err != nil {
		return nil, err
	}
	if err := api.checkRules(); err != nil {
		return nil, err
	}
	api.Auth, api.Notes = authOf(doc, api.Notes)
	return api, nil
}

// paths sets the upstream and the Backend's usage path from the base paths, and returns the public base
// path ("" for none). The public one defaults to none (Apimsync conventions: the upstream keeps the
// servers' path) or to the servers' path (ThreescaleOperator, as 3scale toolbox too); the private one to
// the servers' path. An upstream given (spec.privateBaseURL) without a private base path is used as it
// is, the whole public path passed on to it.
func (api *API) paths(doc *openapi3.T, upstream string, opts Options) (string, error) {
	u, _ := url.Parse(upstream) // checked by privateBaseURL
	private, serverPath := basePath(u.Path), ""
	if server, err := privateBaseURL(doc, ""); err == nil {
		s, _ := url.Parse(server)
		serverPath = basePath(s.Path)
	}
	if opts.PrivateBasePath != "" {
		private = basePath(opts.PrivateBasePath)
	}
	public := ""
	if opts.Operator {
		public = serverPath
	}
	if opts.PublicBasePath != "" {
		public = basePath(opts.PublicBasePath)
	}
	origin := u.Scheme + "://" + u.Host
	api.PrivateBaseURL, api.UsagePath = origin+private, "/"
	if opts.PrivateBaseURL != "" && opts.PrivateBasePath == "" {
		// An upstream given is taken as it is, and gets the whole public path (as 3scale-operator
		// passes its servers' path on to spec.privateBaseURL).
		api.PrivateBaseURL = upstream
		return public, nil
	}
	switch {
	case public == private:
		api.PrivateBaseURL = origin // the patterns carry the path, and the gateway passes it on
	case opts.BackendOnly && public != "":
		return "", invalid("backendOnly with a public base path (%q) other than the private one (%q): a Backend alone cannot replace one by the other; "+
			"leave publicBasePath out, or set it to the private base path", public, private)
	case public != "":
		api.UsagePath = public
	}
	return public, nil
}

// basePath is a base path without its trailing slash ("" for the root).
func basePath(p string) string {
	return strings.TrimRight(p, "/")
}

// privateBaseURL is the upstream: the override, else the first server's URL with its variables at their
// defaults; an absolute http(s) URL either way.
func privateBaseURL(doc *openapi3.T, override string) (string, error) {
	raw, from := override, "spec.privateBaseURL"
	if raw == "" {
		if len(doc.Servers) == 0 {
			return "", invalid("the document has no servers: set spec.privateBaseURL to the API's upstream")
		}
		s := doc.Servers[0]
		raw, from = s.URL, "servers[0].url"
		for name, v := range s.Variables {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", invalid("%s %q is not an absolute http or https URL: set spec.privateBaseURL to the API's upstream", from, raw)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// operations makes a method and a mapping rule of each operation, paths in alphabetical order, verbs in
// a fixed order: the same document always gives the same names. An operation whose method the last
// import named (opts.MethodNames) keeps that name, whatever its operationId says now (its id, limits and
// pricing rules stay): those names are given first, and no other operation takes one of them.
func (api *API) operations(doc *openapi3.T, public string, opts Options) error {
	api.MethodNames, api.renamed = map[string]string{}, map[string]string{}
	type operation struct {
		verb, path string
		op         *openapi3.Operation
		m          Method
		derived    string // the name its operationId gives
	}
	var all []*operation
	if doc.Paths != nil {
		for _, path := range sortedKeys(doc.Paths.Map()) {
			item := doc.Paths.Value(path)
			if item == nil {
				continue
			}
			ops := item.Operations()
			for _, verb := range verbs {
				if op := ops[verb]; op != nil {
					m := methodOf(verb, path, op, opts.Operator)
					m.Operation = verb + " " + path
					if m.SystemName == "hits" {
						return invalid("%s %s: its operationId makes a method named hits, which is 3scale's metric of every call: give the operation another operationId", verb, path)
					}
					all = append(all, &operation{verb: verb, path: path, op: op, m: m, derived: m.SystemName})
				}
			}
		}
	}
	if len(all) > MaxMethods || len(all) > MaxMappingRules {
		return invalid("the document has more than %d operations; one product holds at most %d methods and %d mapping rules: split the API into several documents",
			min(MaxMethods, MaxMappingRules), MaxMethods, MaxMappingRules)
	}
	owner := map[string]*operation{} // method name → the operation whose method it is
	for _, o := range all {          // first, the names kept
		kept, ok := opts.MethodNames[o.m.Operation]
		if !ok {
			kept, ok = opts.RuleMethods[o.verb+" "+pattern(public, o.path, opts)]
		}
		if ok && (owner[kept] == nil || opts.Operator) {
			o.m.SystemName = kept
			if owner[kept] == nil {
				owner[kept] = o
			}
		}
	}
	for _, o := range all { // then the others, by their operationId, made unique
		if first, ok := owner[o.m.SystemName]; ok && (first == o || opts.Operator && o.m.SystemName != o.derived) {
			continue // kept
		}
		base := o.m.SystemName
		switch first := owner[base]; {
		case first == nil:
			owner[base] = o
		case opts.Operator: // as 3scale-operator: one method, counted by both operations' rules
			api.Notes = append(api.Notes, fmt.Sprintf("%s %s: method %q is another operation's too (3scale-operator's names): both rules count it", o.verb, o.path, base))
		default:
			for i := 2; owner[o.m.SystemName] != nil; i++ {
				o.m.SystemName = fmt.Sprintf("%s_%d", base, i)
			}
			owner[o.m.SystemName] = o
		}
	}
	for _, o := range all {
		name := o.m.SystemName
		switch {
		case name == o.derived:
		case owner[o.derived] != nil && owner[o.derived] != o:
			api.Notes = append(api.Notes, fmt.Sprintf("%s %s: method %q was taken by another operation, named %q", o.verb, o.path, o.derived, name))
		default:
			// Renamed: its operationId gives another name, which no operation has: the document (an
			// extension) may name the method by it, and that stands for the kept one.
			api.renamed[o.derived] = name
			api.Notes = append(api.Notes, fmt.Sprintf("%s %s: its operationId now names a method %q; it keeps its method %q (its id, limits and pricing rules)", o.verb, o.path, o.derived, name))
		}
		api.MethodNames[o.m.Operation] = name
		if owner[name] == o {
			api.Methods = append(api.Methods, o.m)
		}
		pattern := pattern(public, o.path, opts)
		if len(pattern) > maxNameLength {
			return invalid("%s %s: the path is longer than a mapping rule's %d characters", o.verb, o.path, maxNameLength)
		}
		rule := Rule{Verb: o.verb, Pattern: pattern, Method: name, Increment: 1, Operation: o.path}
		if err := api.operationExtensionOf(o.verb, o.path, o.op, &rule); err != nil {
			return err
		}
		api.Rules = append(api.Rules, rule)
	}
	return nil
}

// pattern is an operation's mapping rule pattern: the public base path, its path, and "$" unless prefix
// matching.
func pattern(public, path string, opts Options) string {
	if opts.PrefixMatching {
		return public + path
	}
	return public + path + "$"
}

// notName is what a 3scale system name cannot hold; notWord what 3scale-operator replaces.
var notName = regexp.MustCompile(`[^A-Za-z0-9]+`)
var notWord = regexp.MustCompile(`\W`)

// methodOf names an operation's method: its operationId (or verb and path) made a system name, shown as
// its summary (or operationId, or verb and path). 3scale-operator's names (operator): the operationId
// (or the verb and the path's word characters) shown as it is, lower-cased with every non-word
// character an underscore for the system name, described by the operation's description.
func methodOf(verb, path string, op *openapi3.Operation, operator bool) Method {
	if operator {
		friendly := op.OperationID
		if friendly == "" {
			friendly = verb + notWord.ReplaceAllString(path, "")
		}
		return Method{SystemName: cut(notWord.ReplaceAllString(strings.ToLower(friendly), "_"), maxNameLength), FriendlyName: cut(friendly, maxNameLength),
			Description: cut(op.Description, maxDescription)}
	}
	source := op.OperationID
	if source == "" {
		source = strings.ToLower(verb) + "_" + path
	}
	name := strings.Trim(notName.ReplaceAllString(source, "_"), "_")
	if name == "" || name == "hits" {
		name = strings.ToLower(verb) + "_" + name
	}
	name = strings.ToLower(cut(name, maxNameLength-4)) // room for a _N suffix
	friendly := firstOf(op.Summary, op.OperationID, verb+" "+path)
	return Method{SystemName: name, FriendlyName: cut(friendly, maxNameLength), Description: cut(strings.TrimSpace(op.Description), maxDescription)}
}

// authOf maps the security the document requires (its top-level requirements, else those of its
// operations) to 3scale's authentication: the first scheme apimsync can map.
func authOf(doc *openapi3.T, notes []string) (Auth, []string) {
	if doc.Components == nil || len(doc.Components.SecuritySchemes) == 0 {
		return Auth{}, notes
	}
	var names []string
	add := func(reqs openapi3.SecurityRequirements) {
		for _, req := range reqs {
			for _, name := range sortedKeys(req) {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	add(doc.Security)
	if doc.Paths != nil {
		for _, path := range sortedKeys(doc.Paths.Map()) {
			for _, verb := range verbs {
				if op := doc.Paths.Value(path).GetOperation(verb); op != nil && op.Security != nil {
					add(*op.Security)
				}
			}
		}
	}
	for _, name := range names {
		ref := doc.Components.SecuritySchemes[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		s := ref.Value
		switch {
		case s.Type == "apiKey" && (s.In == "header" || s.In == "query"):
			location := map[string]string{"header": "headers", "query": "query"}[s.In]
			return Auth{Kind: "userKey", Param: s.Name, Location: location, Scheme: name}, notes
		case s.Type == "openIdConnect":
			return Auth{Kind: "oidc", Scheme: name}, notes
		case s.Type == "oauth2":
			a := Auth{Kind: "oidc", Scheme: name}
			if f := s.Flows; f != nil {
				for flow, set := range map[string]bool{"authorizationCode": f.AuthorizationCode != nil, "implicit": f.Implicit != nil,
					"password": f.Password != nil, "clientCredentials": f.ClientCredentials != nil} {
					if set {
						a.Flows = append(a.Flows, flow)
					}
				}
				slices.Sort(a.Flows)
			}
			return a, notes
		default:
			notes = append(notes, fmt.Sprintf("security scheme %q (%s) has no 3scale equivalent and was left out", name, s.Type))
		}
	}
	return Auth{}, notes
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// WithServer is a document whose servers are the one URL given (OpenAPI 3: servers; Swagger 2.0: schemes,
// host and basePath), as JSON: what 3scale toolbox puts in an ActiveDoc so that the developer portal's
// "try it out" calls the gateway. Everything else is kept as it is.
func WithServer(text, server string) (string, error) {
	raw, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return "", invalid("the document is neither JSON nor YAML: %v", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers as written: an example's large integer stays exact
	if err := dec.Decode(&doc); err != nil {
		return "", invalid("the document is not an object: %v", err)
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", invalid("the gateway URL %q is not an absolute URL", server)
	}
	if _, swagger := doc["swagger"]; swagger {
		doc["schemes"], doc["host"], doc["basePath"] = []string{u.Scheme}, u.Host, firstOf(u.Path, "/")
	} else {
		doc["servers"] = []map[string]string{{"url": server}}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	if len(out) > MaxDocumentBytes {
		return "", invalid("the document with its servers rewritten has %d bytes as JSON; an ActiveDoc holds at most %d", len(out), MaxDocumentBytes)
	}
	return string(out), nil
}
