package client

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// contractToken is the access token of the contract tests' clients.
const contractToken = "tok-contract-5e1d7c"

// contractAdminURL is the tenant admin URL of the contract tests' clients.
const contractAdminURL = "https://acme-admin.example.com"

// newContractClient returns a client for contractAdminURL whose requests go to httpmock's responders.
// Unless cfg says otherwise, the rate limit is out of the way.
func newContractClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.AdminURL == "" {
		cfg.AdminURL = contractAdminURL
	}
	if cfg.Token == "" {
		cfg.Token = contractToken
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 1e6, 1e6
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	httpmock.ActivateNonDefault(c.http.GetClient())
	t.Cleanup(httpmock.DeactivateAndReset)
	return c
}

// seenRequest is what a request carried, as porta would read it.
type seenRequest struct {
	Method string
	Path   string
	Query  url.Values
	Form   url.Values
}

// requestLog records the requests httpmock receives and answers each with the next canned answer.
type requestLog struct {
	mu       sync.Mutex
	requests []seenRequest
	problems []string // auth or encoding problems, reported by the test
}

func (l *requestLog) responder(code int, body string, header http.Header) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		seen := seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query()}
		var problems []string
		if _, pass, ok := r.BasicAuth(); !ok || pass != contractToken {
			problems = append(problems, fmt.Sprintf("%s %s: want HTTP Basic with the token as password", r.Method, r.URL.Path))
		}
		if strings.Contains(r.URL.String(), contractToken) {
			problems = append(problems, fmt.Sprintf("%s %s: the token is in the URL %s", r.Method, r.URL.Path, r.URL))
		}
		wantAccept := "application/json"
		if strings.HasSuffix(r.URL.Path, ".xml") { // porta's one XML read, an account with its users
			wantAccept = "application/xml"
		}
		if got := r.Header.Get("Accept"); got != wantAccept {
			problems = append(problems, fmt.Sprintf("%s %s: Accept %q, want %s", r.Method, r.URL.Path, got, wantAccept))
		}
		if r.Body != nil {
			raw, _ := io.ReadAll(r.Body)
			if len(raw) > 0 {
				// porta reads form bodies; the CMS's files are uploaded as multipart (cms_api.json).
				wantType := "application/x-www-form-urlencoded"
				if strings.HasPrefix(r.URL.Path, "/admin/api/cms/files") {
					wantType = "multipart/form-data"
				}
				if ct := formMediaType(r); ct != wantType {
					problems = append(problems, fmt.Sprintf("%s %s: body sent as %q, want %s", r.Method, r.URL.Path, ct, wantType))
				}
				form, err := bodyForm(r, raw)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s %s: body %q is not form-encoded", r.Method, r.URL.Path, raw))
				}
				seen.Form = form
			}
		}
		if len(seen.Query) == 0 {
			seen.Query = nil
		}
		if len(seen.Form) == 0 {
			seen.Form = nil
		}
		l.mu.Lock()
		l.requests = append(l.requests, seen)
		l.problems = append(l.problems, problems...)
		l.mu.Unlock()
		resp := httpmock.NewStringResponse(code, body)
		resp.Header.Set("Content-Type", "application/json; charset=utf-8")
		for k, v := range header {
			resp.Header[k] = v
		}
		return resp, nil
	}
}

func paged(page int) url.Values {
	return url.Values{"page": {fmt.Sprint(page)}, "per_page": {"500"}}
}

// Porta's answers, as its JSON representers write them.
const (
	portaService = `{"id":42,"name":"Shop","system_name":"shop","description":"the shop","state":"incomplete",
		"deployment_option":"self_managed","backend_version":"oidc","created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z",
		"links":[{"rel":"metrics","href":"https://acme-admin.example.com/admin/api/services/42/metrics"}]}`
	portaBackend = `{"id":7,"name":"Stock","system_name":"stock","description":"stock levels","private_endpoint":"https://stock.internal:8443",
		"account_id":2,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z","links":[]}`
	portaHits   = `{"id":3,"name":"hits","system_name":"hits","friendly_name":"Hits","service_id":42,"description":"Number of API hits","unit":"hit","created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	portaMethod = `{"id":5,"name":"list_items","system_name":"list_items","friendly_name":"List items","service_id":42,"description":"","parent_id":3,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	portaRule   = `{"id":9,"metric_id":5,"pattern":"/items$","http_method":"GET","delta":1,"position":2,"last":true,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	portaProxy  = `{"service_id":42,"endpoint":"https://shop.example.com:443","sandbox_endpoint":"https://shop-staging.example.com:443","api_backend":null,
		"credentials_location":"headers","auth_app_key":"app_key","auth_app_id":"app_id","auth_user_key":"user_key","error_auth_failed":"Authentication failed",
		"error_auth_missing":"Authentication parameters missing","created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z",
		"error_status_auth_failed":403,"error_headers_auth_failed":"text/plain; charset=us-ascii","error_status_auth_missing":401,
		"error_headers_auth_missing":"text/plain; charset=us-ascii","error_no_match":"No Mapping Rule matched","error_status_no_match":404,
		"error_headers_no_match":"text/plain; charset=us-ascii","error_status_limits_exceeded":429,"error_headers_limits_exceeded":"text/plain; charset=us-ascii",
		"error_limits_exceeded":"Usage limit exceeded","secret_token":"Shared_secret","hostname_rewrite":"shop.internal","oauth_login_url":null,
		"api_test_path":"/","policies_config":[{"name":"apicast","version":"builtin","configuration":{},"enabled":true}],
		"oidc_issuer_endpoint":"https://sso.example.com/auth/realms/acme","oidc_issuer_type":"keycloak","jwt_claim_with_client_id":"azp",
		"jwt_claim_with_client_id_type":"plain","deployment_option":"self_managed","lock_version":3,"links":[]}`
	portaOIDC   = `{"id":12,"standard_flow_enabled":true,"implicit_flow_enabled":false,"service_accounts_enabled":true,"direct_access_grants_enabled":false}`
	portaUsage  = `{"id":6,"path":"/stock","service_id":42,"backend_id":7,"links":[]}`
	portaPlan   = `{"id":61,"name":"Gold","system_name":"gold","state":"published","approval_required":true,"trial_period_days":14,"setup_fee":10.5,"cost_per_month":99.0,"default":false,"custom":false,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z","links":[{"rel":"service","href":"https://acme-admin.example.com/admin/api/services/42"},{"rel":"self","href":"https://acme-admin.example.com/admin/api/services/42/application_plans/61"}]}`
	portaLimit  = `{"id":71,"metric_id":3,"plan_id":61,"period":"month","value":1000,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	portaPrice  = `{"id":81,"metric_id":3,"plan_id":61,"cost_per_unit":"0.05","min":1,"max":100,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	portaDelete = ``
	// A feature as FeatureRepresenter writes it: the scope underscored, visible, no service id.
	portaFeature = `{"id":91,"name":"Gold support","system_name":"gold","scope":"application_plan","visible":true,"description":"24/7",` +
		`"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
	// A proxy config as ProxyConfigRepresenter writes it: id, version, environment and the content, the
	// product's APIcast configuration (Apicast::ProxySource), shortened here.
	portaProxyConfigContent = `{"id":42,"account_id":2,"name":"Shop","system_name":"shop","backend_version":"1","deployment_option":"self_managed",
		"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-03T10:00:00Z","proxiable?":true,"backend_authentication_type":"service_token",
		"backend_authentication_value":"8f2c0e1a","proxy":{"id":17,"service_id":42,"endpoint":"https://shop.example.com:443",
		"sandbox_endpoint":"https://shop-staging.example.com:443","api_backend":"https://stock.internal:8443","lock_version":3,
		"hosts":["shop.example.com","shop-staging.example.com"],"backend":{"endpoint":"https://su1.3scale.net","host":"su1.3scale.net"},
		"policy_chain":[{"name":"apicast","version":"builtin","configuration":{}}],"proxy_rules":[{"id":9,"http_method":"GET","pattern":"/items$",
		"metric_id":5,"metric_system_name":"list_items","delta":1,"parameters":[],"querystring_parameters":{}}]}}`
	portaSandboxConfig    = `{"id":101,"version":4,"environment":"sandbox","content":` + portaProxyConfigContent + `}`
	portaProductionConfig = `{"id":102,"version":4,"environment":"production","content":` + portaProxyConfigContent + `}`
	// A custom policy as PolicyRepresenter writes it.
	portaPolicySchema = `{"$schema":"http://apicast.io/policy-v1.1/schema","name":"Add header","version":"1.0","summary":"Adds a header",` +
		`"configuration":{"type":"object","properties":{"header":{"type":"string"}}}}`
	portaPolicy = `{"id":3,"name":"add_header","version":"1.0","schema":` + portaPolicySchema + `,"created_at":"2026-01-02T10:00:00Z","updated_at":"2026-01-02T10:00:00Z"}`
)

var (
	wantService = &Product{ID: 42, Name: "Shop", SystemName: "shop", Description: "the shop", State: "incomplete", DeploymentOption: "self_managed",
		BackendVersion: "oidc", CreatedAt: "2026-01-02T10:00:00Z", UpdatedAt: "2026-01-03T10:00:00Z"}
	wantBackend = &Backend{ID: 7, Name: "Stock", SystemName: "stock", Description: "stock levels", PrivateEndpoint: "https://stock.internal:8443",
		AccountID: 2, CreatedAt: "2026-01-02T10:00:00Z", UpdatedAt: "2026-01-03T10:00:00Z"}
	wantHits = &Metric{ID: 3, Name: "hits", SystemName: "hits", FriendlyName: "Hits", Unit: "hit", Description: "Number of API hits",
		CreatedAt: "2026-01-02T10:00:00Z", UpdatedAt: "2026-01-02T10:00:00Z"}
	wantMethod = &Metric{ID: 5, Name: "list_items", SystemName: "list_items", FriendlyName: "List items", ParentID: 3,
		CreatedAt: "2026-01-02T10:00:00Z", UpdatedAt: "2026-01-02T10:00:00Z"}
	wantRule  = &MappingRule{ID: 9, MetricID: 5, Pattern: "/items$", HTTPMethod: "GET", Delta: 1, Position: 2, Last: true}
	wantProxy = &Proxy{ServiceID: 42, Endpoint: "https://shop.example.com:443", SandboxEndpoint: "https://shop-staging.example.com:443",
		CredentialsLocation: "headers", AuthUserKey: "user_key", AuthAppID: "app_id", AuthAppKey: "app_key", HostnameRewrite: "shop.internal",
		SecretToken: "Shared_secret", ErrorStatusAuthFailed: 403, ErrorHeadersAuthFailed: "text/plain; charset=us-ascii", ErrorAuthFailed: "Authentication failed",
		ErrorStatusAuthMissing: 401, ErrorHeadersAuthMissing: "text/plain; charset=us-ascii", ErrorAuthMissing: "Authentication parameters missing",
		ErrorStatusNoMatch: 404, ErrorHeadersNoMatch: "text/plain; charset=us-ascii", ErrorNoMatch: "No Mapping Rule matched",
		ErrorStatusLimitsExceeded: 429, ErrorHeadersLimitsExceeded: "text/plain; charset=us-ascii", ErrorLimitsExceeded: "Usage limit exceeded",
		OIDCIssuerEndpoint: "https://sso.example.com/auth/realms/acme", OIDCIssuerType: "keycloak", JWTClaimWithClientID: "azp",
		JWTClaimWithClientIDType: "plain", DeploymentOption: "self_managed", UpdatedAt: "2026-01-03T10:00:00Z"}
	wantOIDC  = &OIDCConfiguration{StandardFlowEnabled: true, ServiceAccountsEnabled: true}
	wantUsage = &BackendUsage{ID: 6, Path: "/stock", ServiceID: 42, BackendID: 7}
	wantPlan  = &ApplicationPlan{ID: 61, Name: "Gold", SystemName: "gold", State: "published", ApprovalRequired: true, TrialPeriodDays: 14,
		SetupFee: "10.5", CostPerMonth: "99.0", ServiceID: 42}
	wantLimit   = &Limit{ID: 71, MetricID: 3, PlanID: 61, Period: "month", Value: 1000}
	wantFeature = &Feature{ID: 91, Name: "Gold support", SystemName: "gold", Description: "24/7", Scope: "application_plan", Visible: true}
	wantPrice   = &PricingRule{ID: 81, MetricID: 3, PlanID: 61, Min: 1, Max: 100, CostPerUnit: "0.05"}

	wantSandboxConfig    = &ProxyConfig{ID: 101, Version: 4, Environment: "sandbox"}
	wantProductionConfig = &ProxyConfig{ID: 102, Version: 4, Environment: "production"}
	wantPolicy           = &CustomPolicy{ID: 3, Name: "add_header", Version: "1.0", Schema: json.RawMessage(portaPolicySchema)}
)

// TestEveryCallContract checks, for every call of the client, the request porta receives (method, path,
// query, form body field by field, HTTP Basic auth with the token as password and never in the URL) and
// the decoding of porta's answer. Case names start with the method's name; the test fails when an
// exported method has no case.
func TestEveryCallContract(t *testing.T) {
	cases := map[string]struct {
		call       func(ctx context.Context, c *Client) (any, error)
		code       int
		body       string
		want       seenRequest
		wantResult any
	}{
		"ListProducts": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListProducts(ctx) },
			code: 200, body: `{"services":[{"service":` + portaService + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services.json", Query: paged(1)},
			wantResult: []Product{*wantService},
		},
		"GetProduct": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetProduct(ctx, 42) },
			code: 200, body: `{"service":` + portaService + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42.json"},
			wantResult: wantService,
		},
		"CreateProduct/every field": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateProduct(ctx, ProductParams{Name: "Shop", SystemName: "shop", Description: ptrTo("the shop"),
					DeploymentOption: "self_managed", BackendVersion: "oidc"})
			},
			code: 201, body: `{"service":` + portaService + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services.json", Form: url.Values{"name": {"Shop"}, "system_name": {"shop"},
				"description": {"the shop"}, "deployment_option": {"self_managed"}, "backend_version": {"oidc"}}},
			wantResult: wantService,
		},
		"CreateProduct/only a name: nothing empty is sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateProduct(ctx, ProductParams{Name: "Shop"})
			},
			code: 201, body: `{"service":` + portaService + `}`,
			want:       seenRequest{Method: "POST", Path: "/admin/api/services.json", Form: url.Values{"name": {"Shop"}}},
			wantResult: wantService,
		},
		"UpdateProduct: system_name is immutable and not sent; an empty description is": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateProduct(ctx, 42, ProductParams{Name: "Shop", SystemName: "renamed", Description: ptrTo(""), BackendVersion: "2"})
			},
			code: 200, body: `{"service":` + portaService + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42.json", Form: url.Values{"name": {"Shop"}, "description": {""},
				"backend_version": {"2"}}},
			wantResult: wantService,
		},
		"DeleteProduct": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteProduct(ctx, 42) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42.json"},
		},
		"ListBackends": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListBackends(ctx) },
			code: 200, body: `{"backend_apis":[{"backend_api":` + portaBackend + `}],"metadata":{"per_page":500,"total_entries":1,"total_pages":1,"current_page":1}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/backend_apis.json", Query: paged(1)},
			wantResult: []Backend{*wantBackend},
		},
		"GetBackend": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetBackend(ctx, 7) },
			code: 200, body: `{"backend_api":` + portaBackend + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/backend_apis/7.json"},
			wantResult: wantBackend,
		},
		"CreateBackend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateBackend(ctx, BackendParams{Name: "Stock", SystemName: "stock", Description: ptrTo("stock levels"),
					PrivateEndpoint: "https://stock.internal:8443"})
			},
			code: 201, body: `{"backend_api":` + portaBackend + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/backend_apis.json", Form: url.Values{"name": {"Stock"}, "system_name": {"stock"},
				"description": {"stock levels"}, "private_endpoint": {"https://stock.internal:8443"}}},
			wantResult: wantBackend,
		},
		"UpdateBackend: system_name is not sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateBackend(ctx, 7, BackendParams{Name: "Stock", SystemName: "renamed", PrivateEndpoint: "https://stock2.internal"})
			},
			code: 200, body: `{"backend_api":` + portaBackend + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/backend_apis/7.json", Form: url.Values{"name": {"Stock"},
				"private_endpoint": {"https://stock2.internal"}}},
			wantResult: wantBackend,
		},
		"DeleteBackend": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteBackend(ctx, 7) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/backend_apis/7.json"},
		},
		"ListMetrics/product: not paginated; system_name defaults to name": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMetrics(ctx, ProductScope(42)) },
			code: 200, body: `{"metrics":[{"metric":` + portaHits + `},{"metric":{"id":4,"name":"bytes","friendly_name":"Bytes","unit":"byte"}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/metrics.json"},
			wantResult: []Metric{*wantHits, {ID: 4, Name: "bytes", SystemName: "bytes", FriendlyName: "Bytes", Unit: "byte"}},
		},
		"ListMetrics/backend: paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMetrics(ctx, BackendScope(7)) },
			code: 200, body: `{"metrics":[{"metric":` + portaHits + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/backend_apis/7/metrics.json", Query: paged(1)},
			wantResult: []Metric{*wantHits},
		},
		"CreateMetric/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMetric(ctx, ProductScope(42), MetricParams{SystemName: "hits", FriendlyName: "Hits", Unit: "hit", Description: "Number of API hits"})
			},
			code: 201, body: `{"metric":` + portaHits + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/metrics.json", Form: url.Values{"system_name": {"hits"},
				"friendly_name": {"Hits"}, "unit": {"hit"}, "description": {"Number of API hits"}}},
			wantResult: wantHits,
		},
		"CreateMetric/backend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMetric(ctx, BackendScope(7), MetricParams{SystemName: "hits", FriendlyName: "Hits", Unit: "hit"})
			},
			code: 201, body: `{"metric":` + portaHits + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/backend_apis/7/metrics.json", Form: url.Values{"system_name": {"hits"},
				"friendly_name": {"Hits"}, "unit": {"hit"}}},
			wantResult: wantHits,
		},
		"UpdateMetric/product: no system_name, an empty description clears it": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMetric(ctx, ProductScope(42), 3, MetricParams{SystemName: "x", FriendlyName: "Hits", Unit: "hit"})
			},
			code: 200, body: `{"metric":` + portaHits + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42/metrics/3.json", Form: url.Values{"friendly_name": {"Hits"},
				"unit": {"hit"}, "description": {""}}},
			wantResult: wantHits,
		},
		"UpdateMetric/backend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMetric(ctx, BackendScope(7), 3, MetricParams{FriendlyName: "Hits", Description: "all"})
			},
			code: 200, body: `{"metric":` + portaHits + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/backend_apis/7/metrics/3.json", Form: url.Values{"friendly_name": {"Hits"},
				"description": {"all"}}},
			wantResult: wantHits,
		},
		"DeleteMetric/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteMetric(ctx, ProductScope(42), 4)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/metrics/4.json"},
		},
		"DeleteMetric/backend": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteMetric(ctx, BackendScope(7), 4) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/backend_apis/7/metrics/4.json"},
		},
		"ListMethods/product: parent_id defaults to the metric": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMethods(ctx, ProductScope(42), 3) },
			code: 200, body: `{"methods":[{"method":` + portaMethod + `},{"method":{"id":8,"name":"add_item","friendly_name":"Add item"}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/metrics/3/methods.json"},
			wantResult: []Metric{*wantMethod, {ID: 8, Name: "add_item", SystemName: "add_item", FriendlyName: "Add item", ParentID: 3}},
		},
		"ListMethods/backend: paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMethods(ctx, BackendScope(7), 3) },
			code: 200, body: `{"methods":[{"method":` + portaMethod + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/backend_apis/7/metrics/3/methods.json", Query: paged(1)},
			wantResult: []Metric{*wantMethod},
		},
		"CreateMethod/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMethod(ctx, ProductScope(42), 3, MethodParams{SystemName: "list_items", FriendlyName: "List items", Description: "lists"})
			},
			code: 201, body: `{"method":` + portaMethod + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/metrics/3/methods.json", Form: url.Values{"system_name": {"list_items"},
				"friendly_name": {"List items"}, "description": {"lists"}}},
			wantResult: wantMethod,
		},
		"CreateMethod/backend: parent_id defaults to the metric": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMethod(ctx, BackendScope(7), 3, MethodParams{SystemName: "list_items", FriendlyName: "List items"})
			},
			code: 201, body: `{"method":{"id":5,"name":"list_items","friendly_name":"List items"}}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/backend_apis/7/metrics/3/methods.json", Form: url.Values{"system_name": {"list_items"},
				"friendly_name": {"List items"}}},
			wantResult: &Metric{ID: 5, Name: "list_items", SystemName: "list_items", FriendlyName: "List items", ParentID: 3},
		},
		"UpdateMethod/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMethod(ctx, ProductScope(42), 3, 5, MethodParams{SystemName: "x", FriendlyName: "List items"})
			},
			code: 200, body: `{"method":` + portaMethod + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42/metrics/3/methods/5.json", Form: url.Values{"friendly_name": {"List items"},
				"description": {""}}},
			wantResult: wantMethod,
		},
		"UpdateMethod/backend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMethod(ctx, BackendScope(7), 3, 5, MethodParams{FriendlyName: "List items", Description: "lists"})
			},
			code: 200, body: `{"method":` + portaMethod + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/backend_apis/7/metrics/3/methods/5.json", Form: url.Values{"friendly_name": {"List items"},
				"description": {"lists"}}},
			wantResult: wantMethod,
		},
		"DeleteMethod/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteMethod(ctx, ProductScope(42), 3, 5)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/metrics/3/methods/5.json"},
		},
		"DeleteMethod/backend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteMethod(ctx, BackendScope(7), 3, 5)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/backend_apis/7/metrics/3/methods/5.json"},
		},
		"ListMappingRules/product: under proxy, not paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMappingRules(ctx, ProductScope(42)) },
			code: 200, body: `{"mapping_rules":[{"mapping_rule":` + portaRule + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/mapping_rules.json"},
			wantResult: []MappingRule{*wantRule},
		},
		"ListMappingRules/backend: paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListMappingRules(ctx, BackendScope(7)) },
			code: 200, body: `{"mapping_rules":[{"mapping_rule":` + portaRule + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/backend_apis/7/mapping_rules.json", Query: paged(1)},
			wantResult: []MappingRule{*wantRule},
		},
		"CreateMappingRule/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMappingRule(ctx, ProductScope(42), MappingRuleParams{HTTPMethod: "GET", Pattern: "/items$", MetricID: 5, Delta: 1,
					Position: 2, Last: ptrTo(true)})
			},
			code: 201, body: `{"mapping_rule":` + portaRule + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/proxy/mapping_rules.json", Form: url.Values{"http_method": {"GET"},
				"pattern": {"/items$"}, "metric_id": {"5"}, "delta": {"1"}, "position": {"2"}, "last": {"true"}}},
			wantResult: wantRule,
		},
		"CreateMappingRule/backend: unset position and last are not sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateMappingRule(ctx, BackendScope(7), MappingRuleParams{HTTPMethod: "POST", Pattern: "/items", MetricID: 5, Delta: 3})
			},
			code: 201, body: `{"mapping_rule":` + portaRule + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/backend_apis/7/mapping_rules.json", Form: url.Values{"http_method": {"POST"},
				"pattern": {"/items"}, "metric_id": {"5"}, "delta": {"3"}}},
			wantResult: wantRule,
		},
		"UpdateMappingRule/product: PATCH": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMappingRule(ctx, ProductScope(42), 9, MappingRuleParams{HTTPMethod: "GET", Pattern: "/items$", MetricID: 5, Delta: 1,
					Last: ptrTo(false)})
			},
			code: 200, body: `{"mapping_rule":` + portaRule + `}`,
			want: seenRequest{Method: "PATCH", Path: "/admin/api/services/42/proxy/mapping_rules/9.json", Form: url.Values{"http_method": {"GET"},
				"pattern": {"/items$"}, "metric_id": {"5"}, "delta": {"1"}, "last": {"false"}}},
			wantResult: wantRule,
		},
		"UpdateMappingRule/backend: PUT": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateMappingRule(ctx, BackendScope(7), 9, MappingRuleParams{HTTPMethod: "GET", Pattern: "/items$", MetricID: 5, Delta: 1, Position: 4})
			},
			code: 200, body: `{"mapping_rule":` + portaRule + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/backend_apis/7/mapping_rules/9.json", Form: url.Values{"http_method": {"GET"},
				"pattern": {"/items$"}, "metric_id": {"5"}, "delta": {"1"}, "position": {"4"}}},
			wantResult: wantRule,
		},
		"DeleteMappingRule/product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteMappingRule(ctx, ProductScope(42), 9)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/proxy/mapping_rules/9.json"},
		},
		"DeleteMappingRule/backend": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteMappingRule(ctx, BackendScope(7), 9)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/backend_apis/7/mapping_rules/9.json"},
		},
		"GetProxy": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetProxy(ctx, 42) },
			code: 200, body: `{"proxy":` + portaProxy + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy.json"},
			wantResult: wantProxy,
		},
		"UpdateProxy: exactly the attributes given": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateProxy(ctx, 42, ProxyParams{"endpoint": "https://shop.example.com:443", "credentials_location": "headers",
					"error_status_auth_failed": "403", "secret_token": "Shared_secret", "hostname_rewrite": ""})
			},
			code: 200, body: `{"proxy":` + portaProxy + `}`,
			want: seenRequest{Method: "PATCH", Path: "/admin/api/services/42/proxy.json", Form: url.Values{"endpoint": {"https://shop.example.com:443"},
				"credentials_location": {"headers"}, "error_status_auth_failed": {"403"}, "secret_token": {"Shared_secret"}, "hostname_rewrite": {""}}},
			wantResult: wantProxy,
		},
		"DeployProxy: no parameters": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeployProxy(ctx, 42) },
			code: 201, body: `{"proxy":` + portaProxy + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/proxy/deploy.json"},
		},
		"GetOIDCConfiguration": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetOIDCConfiguration(ctx, 42) },
			code: 200, body: `{"oidc_configuration":` + portaOIDC + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/oidc_configuration.json"},
			wantResult: wantOIDC,
		},
		"UpdateOIDCConfiguration: all four flows, false included": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateOIDCConfiguration(ctx, 42, OIDCConfiguration{StandardFlowEnabled: true, ServiceAccountsEnabled: true})
			},
			code: 200, body: `{"oidc_configuration":` + portaOIDC + `}`,
			want: seenRequest{Method: "PATCH", Path: "/admin/api/services/42/proxy/oidc_configuration.json", Form: url.Values{
				"standard_flow_enabled": {"true"}, "implicit_flow_enabled": {"false"}, "service_accounts_enabled": {"true"},
				"direct_access_grants_enabled": {"false"}}},
			wantResult: wantOIDC,
		},
		"GetPolicies": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetPolicies(ctx, 42) },
			code: 200, body: `{"policies_config":[{"name":"cors","version":"builtin","configuration":{"allow_origin":"*"},"enabled":true},{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/policies.json"},
			wantResult: []Policy{{Name: "cors", Version: "builtin", Configuration: json.RawMessage(`{"allow_origin":"*"}`), Enabled: true},
				{Name: "apicast", Version: "builtin", Configuration: json.RawMessage(`{}`), Enabled: true}},
		},
		"UpdatePolicies: the chain as JSON in policies_config, a missing configuration as {}": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdatePolicies(ctx, 42, []Policy{{Name: "cors", Version: "builtin", Configuration: json.RawMessage(`{"allow_origin":"*"}`), Enabled: true},
					{Name: "apicast", Version: "builtin", Enabled: true}})
			},
			code: 200, body: `{"policies_config":[{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42/proxy/policies.json", Form: url.Values{"policies_config": {
				`[{"name":"cors","version":"builtin","configuration":{"allow_origin":"*"},"enabled":true},{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]`}}},
			wantResult: []Policy{{Name: "apicast", Version: "builtin", Configuration: json.RawMessage(`{}`), Enabled: true}},
		},
		"LatestProxyConfig: the content read and dropped": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.LatestProxyConfig(ctx, 42, EnvironmentSandbox)
			},
			code: 200, body: `{"proxy_config":` + portaSandboxConfig + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/configs/sandbox/latest.json"},
			wantResult: wantSandboxConfig,
		},
		"LatestProxyConfigContent: what a deploy is checked by": {
			call: func(ctx context.Context, c *Client) (any, error) {
				_, content, err := c.LatestProxyConfigContent(ctx, 42, EnvironmentSandbox)
				if err != nil {
					return nil, err
				}
				return []any{content.BackendVersion, content.Proxy.PolicyChain[0].Name, content.Proxy.ProxyRules,
					string(content.Proxy.Attributes["api_backend"])}, nil
			},
			code: 200, body: `{"proxy_config":` + portaSandboxConfig + `}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/configs/sandbox/latest.json"},
			wantResult: []any{"1", "apicast", []ConfigRule{{HTTPMethod: "GET", Pattern: "/items$", MetricID: 5, MetricSystemName: "list_items", Delta: 1}},
				`"https://stock.internal:8443"`},
		},
		"ListProxyConfigs: each wrapped, not paginated": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListProxyConfigs(ctx, 42, EnvironmentProduction)
			},
			code: 200, body: `{"proxy_configs":[{"proxy_config":` + portaProductionConfig + `},{"proxy_config":{"id":107,"version":6,"environment":"production","content":{}}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/proxy/configs/production.json"},
			wantResult: []ProxyConfig{*wantProductionConfig, {ID: 107, Version: 6, Environment: "production"}},
		},
		"PromoteProxyConfig: the destination in the form": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.PromoteProxyConfig(ctx, 42, EnvironmentSandbox, 4, EnvironmentProduction)
			},
			code: 201, body: `{"proxy_config":` + portaProductionConfig + `}`,
			want:       seenRequest{Method: "POST", Path: "/admin/api/services/42/proxy/configs/sandbox/4/promote.json", Form: url.Values{"to": {"production"}}},
			wantResult: wantProductionConfig,
		},
		"ListCustomPolicies: each wrapped, not paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListCustomPolicies(ctx) },
			code: 200, body: `{"policies":[{"policy":` + portaPolicy + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/registry/policies.json"},
			wantResult: []CustomPolicy{*wantPolicy},
		},
		"GetCustomPolicy": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetCustomPolicy(ctx, 3) },
			code: 200, body: `{"policy":` + portaPolicy + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/registry/policies/3.json"},
			wantResult: wantPolicy,
		},
		"CreateCustomPolicy: the schema as JSON text": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCustomPolicy(ctx, CustomPolicyParams{Name: "add_header", Version: "1.0", Schema: json.RawMessage(portaPolicySchema)})
			},
			code: 201, body: `{"policy":` + portaPolicy + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/registry/policies.json", Form: url.Values{"name": {"add_header"}, "version": {"1.0"},
				"schema": {portaPolicySchema}}},
			wantResult: wantPolicy,
		},
		"UpdateCustomPolicy": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateCustomPolicy(ctx, 3, CustomPolicyParams{Name: "add_header", Version: "1.0", Schema: json.RawMessage(portaPolicySchema)})
			},
			code: 200, body: `{"policy":` + portaPolicy + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/registry/policies/3.json", Form: url.Values{"name": {"add_header"}, "version": {"1.0"},
				"schema": {portaPolicySchema}}},
			wantResult: wantPolicy,
		},
		"UpdateCustomPolicy: the schema alone": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateCustomPolicy(ctx, 3, CustomPolicyParams{Schema: json.RawMessage(portaPolicySchema)})
			},
			code: 200, body: `{"policy":` + portaPolicy + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/registry/policies/3.json", Form: url.Values{"schema": {portaPolicySchema}}},
			wantResult: wantPolicy,
		},
		"DeleteCustomPolicy": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteCustomPolicy(ctx, 3) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/registry/policies/3.json"},
		},
		"ListBackendUsages: a bare array, paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListBackendUsages(ctx, 42) },
			code: 200, body: `[{"backend_usage":` + portaUsage + `}]`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/backend_usages.json", Query: paged(1)},
			wantResult: []BackendUsage{*wantUsage},
		},
		"CreateBackendUsage": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateBackendUsage(ctx, 42, BackendUsageParams{BackendAPIID: 7, Path: "/stock"})
			},
			code: 201, body: `{"backend_usage":` + portaUsage + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/backend_usages.json", Form: url.Values{"backend_api_id": {"7"},
				"path": {"/stock"}}},
			wantResult: wantUsage,
		},
		"UpdateBackendUsage: only the path": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateBackendUsage(ctx, 42, 6, BackendUsageParams{BackendAPIID: 7, Path: "/stock"})
			},
			code: 200, body: `{"backend_usage":` + portaUsage + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/services/42/backend_usages/6.json", Form: url.Values{"path": {"/stock"}}},
			wantResult: wantUsage,
		},
		"DeleteBackendUsage": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteBackendUsage(ctx, 42, 6) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/backend_usages/6.json"},
		},
		"ListPlans: under plans, decimals as number or string": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListPlans(ctx, 42) },
			code: 200, body: `{"plans":[{"application_plan":` + portaPlan + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/application_plans.json"},
			wantResult: []ApplicationPlan{*wantPlan},
		},
		"ListAllPlans: every product's plans, under plans": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAllPlans(ctx) },
			code: 200, body: `{"plans":[{"application_plan":` + portaPlan + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/application_plans.json"},
			wantResult: []ApplicationPlan{*wantPlan},
		},
		"ProbeCredentials": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.ProbeCredentials(ctx) },
			code: 200, body: `{"services":[]}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/services.json", Query: url.Values{"page": {"1"}, "per_page": {"1"}}},
		},
		"Signup": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Signup(ctx, SignupParams{OrgName: "ACME", Username: "alice", Email: "alice@acme.example", Password: "pw"})
			},
			code: 201, body: `{"account":` + portaAccount + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/signup.json", Form: url.Values{"org_name": {"ACME"}, "username": {"alice"},
				"email": {"alice@acme.example"}, "password": {"pw"}}},
			wantResult: wantAccount,
		},
		"Signup: on an account plan": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Signup(ctx, SignupParams{OrgName: "ACME", Username: "alice", Email: "alice@acme.example", Password: "pw", AccountPlanID: 71})
			},
			code: 201, body: `{"account":` + portaAccount + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/signup.json", Form: url.Values{"org_name": {"ACME"}, "username": {"alice"},
				"email": {"alice@acme.example"}, "password": {"pw"}, "account_plan_id": {"71"}}},
			wantResult: wantAccount,
		},
		"GetAccount": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetAccount(ctx, 81) },
			code: 200, body: `{"account":` + portaAccount + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81.json"},
			wantResult: wantAccount,
		},
		"ListAccounts": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAccounts(ctx) },
			code: 200, body: `{"accounts":[{"account":` + portaAccount + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts.json", Query: paged(1)},
			wantResult: []Account{*wantAccount},
		},
		"FindAccountByUsername": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.FindAccountByUsername(ctx, "alice") },
			code: 200, body: `{"account":` + portaAccount + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/find.json", Query: url.Values{"username": {"alice"}}},
			wantResult: wantAccount,
		},
		"UpdateAccount": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateAccount(ctx, 81, AccountParams{OrgName: "ACME", MonthlyBillingEnabled: ptrTo(false), MonthlyChargingEnabled: ptrTo(true),
					Fields: map[string]string{"tier": "gold", "vat_code": ""}})
			},
			code: 200, body: `{"account":` + portaAccount + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81.json", Form: url.Values{"org_name": {"ACME"},
				"monthly_billing_enabled": {"false"}, "monthly_charging_enabled": {"true"}, "tier": {"gold"}, "vat_code": {""}}},
			wantResult: wantAccount,
		},
		"ApproveAccount": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ApproveAccount(ctx, 81) },
			code: 200, body: `{"account":` + portaAccount + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/approve.json"},
			wantResult: wantAccount,
		},
		"DeleteAccount": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteAccount(ctx, 81) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/accounts/81.json"},
		},
		"ListUsers": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListUsers(ctx, 81) },
			code: 200, body: `{"users":[{"user":` + portaUser + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/users.json"},
			wantResult: []User{*wantUser},
		},
		"UsersOfAccount": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.UsersOfAccount(ctx, 81) },
			code: 200, body: portaAccountXML,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81.xml"},
			wantResult: []User{*wantUser, {ID: 85, Username: "bob", Email: "bob@acme.example", Role: "member", State: "pending"}},
		},
		"CreateUser": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateUser(ctx, 81, UserParams{Username: "bob", Email: "bob@acme.example", Password: "pw"})
			},
			code: 201, body: `{"user":` + portaUser + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/accounts/81/users.json", Form: url.Values{"username": {"bob"},
				"email": {"bob@acme.example"}, "password": {"pw"}}},
			wantResult: wantUser,
		},
		"UpdateUser": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateUser(ctx, 81, 82, UserParams{Email: "b@acme.example"})
			},
			code: 200, body: `{"user":` + portaUser + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82.json", Form: url.Values{"email": {"b@acme.example"}}},
			wantResult: wantUser,
		},
		"ActivateUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ActivateUser(ctx, 81, 82) },
			code: 200, body: `{"user":` + portaUser + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82/activate.json"},
			wantResult: wantUser,
		},
		"SuspendUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SuspendUser(ctx, 81, 82) },
			code: 200, body: `{"user":` + portaUser + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82/suspend.json"},
			wantResult: wantUser,
		},
		"UnsuspendUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.UnsuspendUser(ctx, 81, 82) },
			code: 200, body: `{"user":` + portaUser + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82/unsuspend.json"},
			wantResult: wantUser,
		},
		"SetUserRole: admin": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SetUserRole(ctx, 81, 82, "admin") },
			code: 200, body: `{"user":` + portaUser + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82/admin.json"},
		},
		"SetUserRole: member": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SetUserRole(ctx, 81, 82, "member") },
			code: 200, body: `{"user":` + portaUser + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/users/82/member.json"},
		},
		"DeleteUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteUser(ctx, 81, 82) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/accounts/81/users/82.json"},
		},
		"ListApplications": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListApplications(ctx, 81) },
			code: 200, body: `{"applications":[{"application":` + portaApplication + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/applications.json"},
			wantResult: []Application{*wantApplication},
		},
		"ListProductApplications: paginated, by service": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListProductApplications(ctx, 42) },
			code: 200, body: `{"applications":[{"application":` + portaApplication + `}]}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/applications.json", Query: url.Values{"page": {"1"}, "per_page": {"500"},
				"service_id": {"42"}}},
			wantResult: []Application{*wantApplication},
		},
		"ListAllApplications: every product's, paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAllApplications(ctx) },
			code: 200, body: `{"applications":[{"application":` + portaApplication + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/applications.json", Query: url.Values{"page": {"1"}, "per_page": {"500"}}},
			wantResult: []Application{*wantApplication},
		},
		"FindApplication/user key": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.FindApplication(ctx, 42, "k3y", "") },
			code: 200, body: `{"application":` + portaApplication + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/applications/find.json", Query: url.Values{"service_id": {"42"}, "user_key": {"k3y"}}},
			wantResult: wantApplication,
		},
		"FindApplication/app id": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.FindApplication(ctx, 42, "", "a1b2c3d4") },
			code: 200, body: `{"application":` + portaApplication + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/applications/find.json", Query: url.Values{"service_id": {"42"}, "app_id": {"a1b2c3d4"}}},
			wantResult: wantApplication,
		},
		"GetApplication": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetApplication(ctx, 81, 83) },
			code: 200, body: `{"application":` + portaApplication + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/applications/83.json"},
			wantResult: wantApplication,
		},
		"CreateApplication/every field": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateApplication(ctx, 81, ApplicationParams{PlanID: 61, Name: "Shop", Description: ptrTo("d"), ApplicationID: "a1b2c3d4", ApplicationKey: "k1"})
			},
			code: 201, body: `{"application":` + portaApplication + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/accounts/81/applications.json", Form: url.Values{"plan_id": {"61"}, "name": {"Shop"},
				"description": {"d"}, "application_id": {"a1b2c3d4"}, "application_key": {"k1"}}},
			wantResult: wantApplication,
		},
		"UpdateApplication: no plan or app id sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateApplication(ctx, 81, 83, ApplicationParams{PlanID: 61, Name: "Shop", Description: ptrTo("d"), UserKey: "uk", ApplicationID: "x"})
			},
			code: 200, body: `{"application":` + portaApplication + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/applications/83.json", Form: url.Values{"name": {"Shop"},
				"description": {"d"}, "user_key": {"uk"}}},
			wantResult: wantApplication,
		},
		"UpdateApplication: redirect_url": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateApplication(ctx, 81, 83, ApplicationParams{Name: "Shop", RedirectURL: ptrTo("https://app.example.com/cb")})
			},
			code: 200, body: `{"application":` + portaApplication + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/applications/83.json", Form: url.Values{"name": {"Shop"},
				"redirect_url": {"https://app.example.com/cb"}}},
			wantResult: wantApplication,
		},
		"DeleteApplication": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteApplication(ctx, 81, 83) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/accounts/81/applications/83.json"},
		},
		"SuspendApplication": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SuspendApplication(ctx, 81, 83) },
			code: 200, body: `{"application":` + portaApplication + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/applications/83/suspend.json"},
			wantResult: wantApplication,
		},
		"ResumeApplication": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ResumeApplication(ctx, 81, 83) },
			code: 200, body: `{"application":` + portaApplication + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/applications/83/resume.json"},
			wantResult: wantApplication,
		},
		"ChangeApplicationPlan: porta answers with the plan": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.ChangeApplicationPlan(ctx, 81, 83, 62)
			},
			code: 200, body: `{"application_plan":` + portaPlan + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/applications/83/change_plan.json", Form: url.Values{"plan_id": {"62"}}},
		},
		"ListApplicationKeys": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListApplicationKeys(ctx, 81, 83) },
			code: 200, body: `{"keys":[{"key":{"value":"k1","created_at":"2026-11-22T10:00:00Z"}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/applications/83/keys.json"},
			wantResult: []ApplicationKey{{Value: "k1"}},
		},
		"CreateApplicationKey": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.CreateApplicationKey(ctx, 81, 83, "k2")
			},
			code: 201, body: `{"application":` + portaApplication + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/accounts/81/applications/83/keys.json", Form: url.Values{"key": {"k2"}}},
		},
		"DeleteApplicationKey": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteApplicationKey(ctx, 81, 83, "k2")
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/accounts/81/applications/83/keys/k2.json"},
		},
		"ListActiveDocs": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListActiveDocs(ctx) },
			code: 200, body: `{"api_docs":[{"api_doc":` + portaAPIDoc + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/active_docs.json"},
			wantResult: []ActiveDoc{*wantAPIDoc},
		},
		"GetActiveDoc": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetActiveDoc(ctx, 84) },
			code: 200, body: `{"api_doc":` + portaAPIDoc + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/active_docs/84.json"},
			wantResult: wantAPIDoc,
		},
		"CreateActiveDoc/every field": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateActiveDoc(ctx, ActiveDocParams{Name: "Petstore", SystemName: "petstore", Description: ptrTo("d"), Published: ptrTo(true),
					SkipSwaggerValidations: ptrTo(false), Body: `{"openapi":"3.0.3"}`, ServiceID: ptrTo(int64(42))})
			},
			code: 201, body: `{"api_doc":` + portaAPIDoc + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/active_docs.json", Form: url.Values{"name": {"Petstore"}, "system_name": {"petstore"},
				"description": {"d"}, "published": {"true"}, "skip_swagger_validations": {"false"}, "body": {`{"openapi":"3.0.3"}`}, "service_id": {"42"}}},
			wantResult: wantAPIDoc,
		},
		"UpdateActiveDoc: unbinding the product sends an empty service_id, never the system name": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateActiveDoc(ctx, 84, ActiveDocParams{Name: "Petstore", SystemName: "petstore", Body: `{}`, ServiceID: ptrTo(int64(0))})
			},
			code: 200, body: `{"api_doc":` + portaAPIDoc + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/active_docs/84.json", Form: url.Values{"name": {"Petstore"}, "body": {`{}`},
				"service_id": {""}}},
			wantResult: wantAPIDoc,
		},
		"DeleteActiveDoc": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteActiveDoc(ctx, 84) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/active_docs/84.json"},
		},
		"GetPlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetPlan(ctx, 42, 61) },
			code: 200, body: `{"application_plan":` + portaPlan + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/application_plans/61.json"},
			wantResult: wantPlan,
		},
		"CreatePlan/every field": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePlan(ctx, 42, PlanParams{Name: "Gold", SystemName: "gold", ApprovalRequired: ptrTo(true), TrialPeriodDays: ptrTo(int64(14)),
					SetupFee: "10.5", CostPerMonth: "99.0", StateEvent: "publish"})
			},
			code: 201, body: `{"application_plan":` + portaPlan + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/application_plans.json", Form: url.Values{"name": {"Gold"},
				"system_name": {"gold"}, "approval_required": {"true"}, "trial_period_days": {"14"}, "setup_fee": {"10.5"}, "cost_per_month": {"99.0"},
				"state_event": {"publish"}}},
			wantResult: wantPlan,
		},
		"CreatePlan/false and zero are sent when set": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePlan(ctx, 42, PlanParams{Name: "Free", ApprovalRequired: ptrTo(false), TrialPeriodDays: ptrTo(int64(0))})
			},
			code: 201, body: `{"application_plan":` + portaPlan + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/application_plans.json", Form: url.Values{"name": {"Free"},
				"approval_required": {"false"}, "trial_period_days": {"0"}}},
			wantResult: wantPlan,
		},
		"UpdatePlan: system_name is not sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdatePlan(ctx, 42, 61, PlanParams{Name: "Gold", SystemName: "renamed", StateEvent: "hide"})
			},
			code: 200, body: `{"application_plan":` + portaPlan + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42/application_plans/61.json", Form: url.Values{"name": {"Gold"},
				"state_event": {"hide"}}},
			wantResult: wantPlan,
		},
		"SetDefaultPlan: nothing in the body": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SetDefaultPlan(ctx, 42, 61) },
			code: 200, body: `{"application_plan":` + portaPlan + `}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/services/42/application_plans/61/default.json"},
			wantResult: wantPlan,
		},
		"CreateAccountPlan: only what porta takes": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAccountPlan(ctx, AccountPlanParams{Name: "Partners", SystemName: "partners", ApprovalRequired: ptrTo(false), StateEvent: "publish"})
			},
			code: 201, body: `{"account_plan":{"id":71,"name":"Partners","state":"published","setup_fee":0.0,"cost_per_month":0.0,"trial_period_days":0,"cancellation_period":0,"approval_required":false,"default":false}}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/account_plans.json", Form: url.Values{"name": {"Partners"}, "system_name": {"partners"},
				"approval_required": {"false"}, "state_event": {"publish"}}},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "published"},
		},
		"ListAccountPlans: wrapped as plans": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAccountPlans(ctx) },
			code: 200, body: `{"plans":[{"account_plan":{"id":71,"name":"Partners","state":"hidden","approval_required":true,"default":true}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/account_plans.json"},
			wantResult: []AccountPlan{{ID: 71, Name: "Partners", State: "hidden", ApprovalRequired: true, Default: true}},
		},
		"ListServicePlans: the product from the link": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListServicePlans(ctx, 42) },
			code: 200, body: `{"plans":[{"service_plan":{"id":72,"name":"Gold","state":"published","default":true,"links":[{"rel":"service","href":"https://acme-admin.example.com/admin/api/services/42"}]}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/service_plans.json"},
			wantResult: []ServicePlan{{ID: 72, Name: "Gold", State: "published", Default: true, ServiceID: 42}},
		},
		"GetServicePlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetServicePlan(ctx, 42, 72) },
			code: 200, body: `{"service_plan":{"id":72,"name":"Gold","state":"hidden"}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/service_plans/72.json"},
			wantResult: &ServicePlan{ID: 72, Name: "Gold", State: "hidden"},
		},
		"CreateServicePlan": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateServicePlan(ctx, 42, ServicePlanParams{Name: "Gold", StateEvent: "publish"})
			},
			code: 201, body: `{"service_plan":{"id":72,"name":"Gold","state":"published"}}`,
			want:       seenRequest{Method: "POST", Path: "/admin/api/services/42/service_plans.json", Form: url.Values{"name": {"Gold"}, "state_event": {"publish"}}},
			wantResult: &ServicePlan{ID: 72, Name: "Gold", State: "published"},
		},
		"UpdateServicePlan: no system_name": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateServicePlan(ctx, 42, 72, ServicePlanParams{Name: "Gold", SystemName: "x", ApprovalRequired: ptrTo(true)})
			},
			code: 200, body: `{"service_plan":{"id":72,"name":"Gold","state":"hidden","approval_required":true}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/services/42/service_plans/72.json", Form: url.Values{"name": {"Gold"}, "approval_required": {"true"}}},
			wantResult: &ServicePlan{ID: 72, Name: "Gold", State: "hidden", ApprovalRequired: true},
		},
		"SetDefaultServicePlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SetDefaultServicePlan(ctx, 42, 72) },
			code: 200, body: `{"service_plan":{"id":72,"name":"Gold","state":"hidden","default":true}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/services/42/service_plans/72/default.json"},
			wantResult: &ServicePlan{ID: 72, Name: "Gold", State: "hidden", Default: true},
		},
		"DeleteServicePlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteServicePlan(ctx, 42, 72) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/service_plans/72.json"},
		},
		"Subscribe": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.Subscribe(ctx, 81, 72) },
			code: 201, body: `{"service_contract":{"id":73,"plan_id":72,"service_id":42,"state":"live"}}`,
			want:       seenRequest{Method: "POST", Path: "/admin/api/accounts/81/service_subscriptions.json", Form: url.Values{"plan_id": {"72"}}},
			wantResult: &ServiceSubscription{ID: 73, PlanID: 72, ServiceID: 42, State: "live"},
		},
		"ListAllServicePlans: every product's, each with its product from the link": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAllServicePlans(ctx) },
			code: 200, body: `{"plans":[{"service_plan":{"id":74,"name":"Gold","state":"published","approval_required":false,"default":false,` +
				`"links":[{"rel":"service","href":"https://t.example/admin/api/services/42"}]}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/service_plans.json"},
			wantResult: []ServicePlan{{ID: 74, Name: "Gold", State: "published", ServiceID: 42}},
		},
		"ListFieldDefinitions": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListFieldDefinitions(ctx) },
			code: 200, body: `{"fields_definitions":[{"fields_definition":` + portaField + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/fields_definitions.json"},
			wantResult: []FieldDefinition{*wantField},
		},
		"CreateFieldDefinition: target and name, choices as a list": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateFieldDefinition(ctx, FieldDefinitionParams{Target: "Account", Name: "tier", Label: "Tier", Required: true, Choices: []string{"gold", "silver"}, Position: 3})
			},
			code: 201, body: `{"fields_definition":` + portaField + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/fields_definitions.json", Form: url.Values{"target": {"Account"}, "name": {"tier"},
				"label": {"Tier"}, "required": {"true"}, "hidden": {"false"}, "read_only": {"false"}, "choices[]": {"gold", "silver"}}},
			wantResult: wantField,
		},
		"UpdateFieldDefinition: no name, the position": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateFieldDefinition(ctx, 51, FieldDefinitionParams{Target: "User", Name: "x", Label: "Tier", Hidden: true, Position: 2})
			},
			code: 200, body: `{"fields_definition":` + portaField + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/fields_definitions/51.json", Form: url.Values{"label": {"Tier"}, "required": {"false"},
				"hidden": {"true"}, "read_only": {"false"}, "position": {"2"}, "target": {"User"}}},
			wantResult: wantField,
		},
		"GetFieldDefinition": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetFieldDefinition(ctx, 51) },
			code: 200, body: `{"fields_definition":` + portaField + `}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/fields_definitions/51.json"},
			wantResult: wantField,
		},
		"DeleteFieldDefinition": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteFieldDefinition(ctx, 51) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/fields_definitions/51.json"},
		},
		"GetAccount: its fields' values": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetAccount(ctx, 81) },
			code: 200, body: `{"account":{"id":81,"org_name":"ACME","state":"approved","vat_code":"ES123","tier":"gold","created_at":"2026-11-22T10:00:00Z","annotations":{}}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81.json"},
			wantResult: &Account{ID: 81, OrgName: "ACME", State: "approved", Fields: map[string]string{"vat_code": "ES123", "tier": "gold"}},
		},
		"GetProvider": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetProvider(ctx) },
			code: 200, body: `{"account":{"id":2,"org_name":"ACME","admin_domain":"acme-admin.example.com","domain":"acme.example.com","from_email":"no-reply@acme.example","support_email":"support@acme.example","finance_support_email":"support@acme.example","site_access_code":"","state":"approved"}}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/provider.json"},
			wantResult: &Provider{ID: 2, OrgName: "ACME", AdminDomain: "acme-admin.example.com", Domain: "acme.example.com", FromEmail: "no-reply@acme.example",
				SupportEmail: "support@acme.example", FinanceSupportEmail: "support@acme.example"},
		},
		"UpdateProvider: only what is given, empty clears": {
			call: func(ctx context.Context, c *Client) (any, error) {
				empty, support := "", "help@acme.example"
				return c.UpdateProvider(ctx, ProviderParams{SupportEmail: &support, SiteAccessCode: &empty})
			},
			code: 200, body: `{"account":{"id":2,"org_name":"ACME","support_email":"help@acme.example"}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/provider.json", Form: url.Values{"support_email": {"help@acme.example"}, "site_access_code": {""}}},
			wantResult: &Provider{ID: 2, OrgName: "ACME", SupportEmail: "help@acme.example"},
		},
		"UpdateWebhooks: every switch sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.UpdateWebhooks(ctx, WebhookParams{URL: "https://hooks.acme.example", Active: true, Events: []string{"user_created"}})
			},
			code: 200, body: `{"webhook":{"url":"https://hooks.acme.example","active":true}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/webhooks.json", Form: func() url.Values {
				f := url.Values{"url": {"https://hooks.acme.example"}, "active": {"true"}, "provider_actions": {"false"}}
				for _, e := range WebhookEvents {
					f.Set(e+"_on", strconv.FormatBool(e == "user_created"))
				}
				return f
			}()},
		},
		"ListAdminUsers": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAdminUsers(ctx) },
			code: 200, body: `{"users":[{"user":{"id":91,"username":"lead","email":"lead@acme.example","role":"member","state":"active"}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/users.json"},
			wantResult: []User{{ID: 91, Username: "lead", Email: "lead@acme.example", Role: "member", State: "active"}},
		},
		"GetAdminUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetAdminUser(ctx, 91) },
			code: 200, body: `{"user":{"id":91,"username":"lead","email":"lead@acme.example","role":"admin","state":"pending"}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/users/91.json"},
			wantResult: &User{ID: 91, Username: "lead", Email: "lead@acme.example", Role: "admin", State: "pending"},
		},
		"CreateAdminUser: no password, none sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAdminUser(ctx, UserParams{Username: "lead", Email: "lead@acme.example"})
			},
			code: 201, body: `{"user":{"id":91,"username":"lead","email":"lead@acme.example","role":"member","state":"pending"}}`,
			want:       seenRequest{Method: "POST", Path: "/admin/api/users.json", Form: url.Values{"username": {"lead"}, "email": {"lead@acme.example"}}},
			wantResult: &User{ID: 91, Username: "lead", Email: "lead@acme.example", Role: "member", State: "pending"},
		},
		"UpdateAdminUser: the password with the rest": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateAdminUser(ctx, 91, UserParams{Username: "lead", Email: "lead@acme.example", Password: "a-long-enough-password"})
			},
			code: 200, body: `{"user":{"id":91,"username":"lead","email":"lead@acme.example","role":"member","state":"active"}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/users/91.json", Form: url.Values{"username": {"lead"}, "email": {"lead@acme.example"},
				"password": {"a-long-enough-password"}}},
			wantResult: &User{ID: 91, Username: "lead", Email: "lead@acme.example", Role: "member", State: "active"},
		},
		"DeleteAdminUser": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteAdminUser(ctx, 91) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/users/91.json"},
		},
		"ChangeAdminUser: a role": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ChangeAdminUser(ctx, 91, "admin") },
			code: 200, body: `{"user":{"id":91,"username":"lead","role":"admin","state":"active"}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/users/91/admin.json"},
			wantResult: &User{ID: 91, Username: "lead", Role: "admin", State: "active"},
		},
		"ChangeAdminUser: a state": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ChangeAdminUser(ctx, 91, UserUnsuspend) },
			code: 200, body: `{"user":{"id":91,"username":"lead","role":"member","state":"active"}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/users/91/unsuspend.json"},
			wantResult: &User{ID: 91, Username: "lead", Role: "member", State: "active"},
		},
		"GetAdminUserPermissions: every product is null": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetAdminUserPermissions(ctx, 91) },
			code: 200, body: `{"permissions":{"user_id":91,"role":"member","allowed_sections":["partners"],"allowed_service_ids":null}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/users/91/permissions.json"},
			wantResult: &Permissions{UserID: 91, Role: "member", AllowedSections: []string{"partners"}},
		},
		"SetAdminUserPermissions: some products": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SetAdminUserPermissions(ctx, 91, []string{"partners", "plans"}, false, []int64{11, 12})
			},
			code: 200, body: `{"permissions":{"user_id":91,"role":"member","allowed_sections":["partners","plans"],"allowed_service_ids":[11,12]}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/users/91/permissions.json", Form: url.Values{"allowed_sections[]": {"", "partners", "plans"},
				"allowed_service_ids[]": {"11", "12"}}},
			wantResult: &Permissions{UserID: 91, Role: "member", AllowedSections: []string{"partners", "plans"}, AllowedServiceIDs: []int64{11, 12}},
		},
		"SetAdminUserPermissions: no product, no section": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SetAdminUserPermissions(ctx, 91, nil, false, nil)
			},
			code: 200, body: `{"permissions":{"user_id":91,"role":"member","allowed_sections":[],"allowed_service_ids":[]}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/users/91/permissions.json", Form: url.Values{"allowed_sections[]": {""}, "allowed_service_ids[]": {""}}},
			wantResult: &Permissions{UserID: 91, Role: "member", AllowedSections: []string{}, AllowedServiceIDs: []int64{}},
		},
		"SetAdminUserPermissions: every product": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SetAdminUserPermissions(ctx, 91, []string{"monitoring"}, true, nil)
			},
			code: 200, body: `{"permissions":{"user_id":91,"role":"member","allowed_sections":["monitoring"],"allowed_service_ids":null}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/users/91/permissions.json", Form: url.Values{"allowed_sections[]": {"", "monitoring"},
				"allowed_service_ids": {""}}},
			wantResult: &Permissions{UserID: 91, Role: "member", AllowedSections: []string{"monitoring"}},
		},
		"ListAdminAuthenticationProviders": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAdminAuthenticationProviders(ctx) },
			code: 200, body: `{"authentication_providers":[{"authentication_provider":{"id":95,"kind":"keycloak","system_name":"corp-sso","client_id":"3scale-admin","client_secret":"s3cret","site":"https://sso.example.com","published":true}}]}`,
			want: seenRequest{Method: "GET", Path: "/admin/api/account/authentication_providers.json"},
			wantResult: []AuthenticationProvider{{ID: 95, Kind: "keycloak", SystemName: "corp-sso", ClientID: "3scale-admin", ClientSecret: "s3cret",
				Site: "https://sso.example.com", Published: true}},
		},
		"CreateAdminAuthenticationProvider: what the admin portal's controller permits": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAdminAuthenticationProvider(ctx, everyAdminProviderField())
			},
			code: 201, body: `{"authentication_provider":{"id":95,"kind":"keycloak","system_name":"corp-sso"}}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/account/authentication_providers.json", Form: url.Values{"kind": {"keycloak"}, "name": {"Corp SSO"},
				"system_name": {"corp-sso"}, "client_id": {"3scale-admin"}, "client_secret": {"s3cret"}, "site": {"https://sso.example.com/auth/realms/acme"},
				"published": {"true"}, "skip_ssl_certificate_verification": {"true"}}},
			wantResult: &AuthenticationProvider{ID: 95, Kind: "keycloak", SystemName: "corp-sso"},
		},
		"UpdateAdminAuthenticationProvider: kind, name and system name are not sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateAdminAuthenticationProvider(ctx, 95, everyAdminProviderField())
			},
			code: 200, body: `{"authentication_provider":{"id":95,"kind":"keycloak","system_name":"corp-sso"}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/account/authentication_providers/95.json", Form: url.Values{"client_id": {"3scale-admin"},
				"client_secret": {"s3cret"}, "site": {"https://sso.example.com/auth/realms/acme"}, "published": {"true"}, "skip_ssl_certificate_verification": {"true"}}},
			wantResult: &AuthenticationProvider{ID: 95, Kind: "keycloak", SystemName: "corp-sso"},
		},
		"ListSubscriptions": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListSubscriptions(ctx, 81) },
			code: 200, body: `{"service_subscriptions":[{"service_subscription":{"id":73,"plan_id":72,"service_id":42,"state":"pending"}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/service_subscriptions.json"},
			wantResult: []ServiceSubscription{{ID: 73, PlanID: 72, ServiceID: 42, State: "pending"}},
		},
		"ChangeSubscriptionPlan": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.ChangeSubscriptionPlan(ctx, 81, 73, 74)
			},
			code: 200, body: `{"service_plan":{"id":74,"name":"Gold","state":"published","approval_required":false,"default":false}}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/service_subscriptions/73/change_plan.json", Form: url.Values{"plan_id": {"74"}}},
		},
		"ApproveSubscription": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ApproveSubscription(ctx, 81, 73) },
			code: 200, body: `{"service_subscription":{"id":73,"plan_id":72,"service_id":42,"state":"live"}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/service_subscriptions/73/approve.json"},
			wantResult: &ServiceSubscription{ID: 73, PlanID: 72, ServiceID: 42, State: "live"},
		},
		"Unsubscribe": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.Unsubscribe(ctx, 81, 73) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/accounts/81/service_subscriptions/73.json"},
		},
		"GetAccountPlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.GetAccountPlan(ctx, 71) },
			code: 200, body: `{"account_plan":{"id":71,"name":"Partners","state":"hidden"}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/account_plans/71.json"},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "hidden"},
		},
		"UpdateAccountPlan: no system_name": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateAccountPlan(ctx, 71, AccountPlanParams{Name: "Partners", SystemName: "renamed", StateEvent: "hide"})
			},
			code: 200, body: `{"account_plan":{"id":71,"name":"Partners","state":"hidden"}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/account_plans/71.json", Form: url.Values{"name": {"Partners"}, "state_event": {"hide"}}},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "hidden"},
		},
		"SetDefaultAccountPlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.SetDefaultAccountPlan(ctx, 71) },
			code: 200, body: `{"account_plan":{"id":71,"name":"Partners","state":"hidden","default":true}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/account_plans/71/default.json"},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "hidden", Default: true},
		},
		"DeleteAccountPlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteAccountPlan(ctx, 71) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/account_plans/71.json"},
		},
		"AccountPlanOf": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.AccountPlanOf(ctx, 81) },
			code: 200, body: `{"account_plan":{"id":71,"name":"Partners","state":"hidden"}}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/accounts/81/plan.json"},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "hidden"},
		},
		"ChangeAccountPlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ChangeAccountPlan(ctx, 81, 71) },
			code: 200, body: `{"account_plan":{"id":71,"name":"Partners","state":"hidden","default":false}}`,
			want:       seenRequest{Method: "PUT", Path: "/admin/api/accounts/81/change_plan.json", Form: url.Values{"plan_id": {"71"}}},
			wantResult: &AccountPlan{ID: 71, Name: "Partners", State: "hidden"},
		},
		"DeletePlan": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeletePlan(ctx, 42, 61) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/application_plans/61.json"},
		},
		"ListLimits: paginated": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListLimits(ctx, 61) },
			code: 200, body: `{"limits":[{"limit":` + portaLimit + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/application_plans/61/limits.json", Query: paged(1)},
			wantResult: []Limit{*wantLimit},
		},
		"CreateLimit": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateLimit(ctx, 61, 3, LimitParams{Period: "month", Value: 1000})
			},
			code: 201, body: `{"limit":` + portaLimit + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/application_plans/61/metrics/3/limits.json", Form: url.Values{"period": {"month"},
				"value": {"1000"}}},
			wantResult: wantLimit,
		},
		"CreateLimit: a zero value is a real limit and is sent": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateLimit(ctx, 61, 3, LimitParams{Period: "eternity", Value: 0})
			},
			code: 201, body: `{"limit":` + portaLimit + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/application_plans/61/metrics/3/limits.json", Form: url.Values{"period": {"eternity"},
				"value": {"0"}}},
			wantResult: wantLimit,
		},
		"UpdateLimit": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateLimit(ctx, 61, 3, 71, LimitParams{Period: "month", Value: 2000})
			},
			code: 200, body: `{"limit":` + portaLimit + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/application_plans/61/metrics/3/limits/71.json", Form: url.Values{"period": {"month"},
				"value": {"2000"}}},
			wantResult: wantLimit,
		},
		"DeleteLimit": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteLimit(ctx, 61, 3, 71) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/application_plans/61/metrics/3/limits/71.json"},
		},
		"ListProductFeatures: all at once": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListProductFeatures(ctx, 42) },
			code: 200, body: `{"features":[{"feature":` + portaFeature + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/services/42/features.json"},
			wantResult: []Feature{*wantFeature},
		},
		"CreateProductFeature: the scope CamelCase": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateProductFeature(ctx, 42, FeatureParams{Name: "Gold support", SystemName: "gold", Description: "24/7", Scope: FeatureScopeApplicationPlan})
			},
			code: 201, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/services/42/features.json", Form: url.Values{"name": {"Gold support"},
				"system_name": {"gold"}, "description": {"24/7"}, "scope": {"ApplicationPlan"}}},
			wantResult: wantFeature,
		},
		"UpdateProductFeature: no scope, a description cleared": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateProductFeature(ctx, 42, 91, FeatureParams{Name: "Gold support", SystemName: "gold", Scope: FeatureScopeServicePlan})
			},
			code: 200, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/services/42/features/91.json", Form: url.Values{"name": {"Gold support"},
				"system_name": {"gold"}, "description": {""}}},
			wantResult: wantFeature,
		},
		"DeleteProductFeature": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteProductFeature(ctx, 42, 91) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/services/42/features/91.json"},
		},
		"ListPlanFeatures": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListPlanFeatures(ctx, ApplicationPlans, 61)
			},
			code: 200, body: `{"features":[{"feature":` + portaFeature + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/application_plans/61/features.json"},
			wantResult: []Feature{*wantFeature},
		},
		"EnablePlanFeature": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.EnablePlanFeature(ctx, ApplicationPlans, 61, 91)
			},
			code: 201, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/application_plans/61/features.json", Form: url.Values{"feature_id": {"91"}}},
		},
		"EnablePlanFeature: enabled already (409, no body) is success": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.EnablePlanFeature(ctx, ApplicationPlans, 61, 91)
			},
			code: 409, body: ``,
			want: seenRequest{Method: "POST", Path: "/admin/api/application_plans/61/features.json", Form: url.Values{"feature_id": {"91"}}},
		},
		"DisablePlanFeature": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DisablePlanFeature(ctx, ApplicationPlans, 61, 91)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/application_plans/61/features/91.json"},
		},
		"ListPlanFeatures: a service plan's": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListPlanFeatures(ctx, ServicePlans, 62) },
			code: 200, body: `{"features":[{"feature":` + portaFeature + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/service_plans/62/features.json"},
			wantResult: []Feature{*wantFeature},
		},
		"EnablePlanFeature: an account plan's": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.EnablePlanFeature(ctx, AccountPlans, 63, 92)
			},
			code: 201, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/account_plans/63/features.json", Form: url.Values{"feature_id": {"92"}}},
		},
		"DisablePlanFeature: a service plan's": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DisablePlanFeature(ctx, ServicePlans, 62, 91)
			},
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/service_plans/62/features/91.json"},
		},
		"ListAccountFeatures": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListAccountFeatures(ctx) },
			code: 200, body: `{"features":[{"feature":` + portaFeature + `}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/features.json"},
			wantResult: []Feature{*wantFeature},
		},
		"CreateAccountFeature: no scope (porta sets AccountPlan)": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAccountFeature(ctx, FeatureParams{Name: "Gold support", SystemName: "gold", Description: "24/7", Scope: FeatureScopeServicePlan})
			},
			code: 201, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/features.json", Form: url.Values{"name": {"Gold support"},
				"system_name": {"gold"}, "description": {"24/7"}}},
			wantResult: wantFeature,
		},
		"UpdateAccountFeature": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateAccountFeature(ctx, 91, FeatureParams{Name: "Gold support", SystemName: "gold"})
			},
			code: 200, body: `{"feature":` + portaFeature + `}`,
			want: seenRequest{Method: "PUT", Path: "/admin/api/features/91.json", Form: url.Values{"name": {"Gold support"},
				"system_name": {"gold"}, "description": {""}}},
			wantResult: wantFeature,
		},
		"DeleteAccountFeature": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteAccountFeature(ctx, 91) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/features/91.json"},
		},
		"ListPricingRules": {
			call: func(ctx context.Context, c *Client) (any, error) { return c.ListPricingRules(ctx, 61) },
			code: 200, body: `{"pricing_rules":[{"pricing_rule":` + portaPrice + `},{"pricing_rule":{"id":82,"metric_id":3,"plan_id":61,"cost_per_unit":0.01,"min":101,"max":null}}]}`,
			want:       seenRequest{Method: "GET", Path: "/admin/api/application_plans/61/pricing_rules.json"},
			wantResult: []PricingRule{*wantPrice, {ID: 82, MetricID: 3, PlanID: 61, Min: 101, CostPerUnit: "0.01"}},
		},
		"CreatePricingRule": {
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePricingRule(ctx, 61, 3, PricingRuleParams{Min: 1, Max: 100, CostPerUnit: "0.05"})
			},
			code: 201, body: `{"pricing_rule":` + portaPrice + `}`,
			want: seenRequest{Method: "POST", Path: "/admin/api/application_plans/61/metrics/3/pricing_rules.json", Form: url.Values{"min": {"1"},
				"max": {"100"}, "cost_per_unit": {"0.05"}}},
			wantResult: wantPrice,
		},
		"DeletePricingRule": {
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeletePricingRule(ctx, 61, 3, 81) },
			code: 200, body: portaDelete,
			want: seenRequest{Method: "DELETE", Path: "/admin/api/application_plans/61/metrics/3/pricing_rules/81.json"},
		},
	}

	// TestClientStringHidesTheToken, TestClientsShareTheirPacer, cache's TestClientPoolKeepsEveryTenantsPacer
	covered := map[string]bool{"String": true, "Pacer": true, "CloseIdleConnections": true}
	for method := range masterCallsWithContract() { // TestMasterCallsContract: calls of several requests
		covered[method] = true
	}
	for method := range methodsOf(cmsContractCases) { // TestCMSCallsContract
		covered[method] = true
	}
	for method := range methodsOf(portalSettingsContractCases) { // TestPortalSettingsCallsContract
		covered[method] = true
	}
	single := map[string]exchangeCase{}
	for name, tc := range cases {
		method, _, _ := strings.Cut(name, "/")
		method, _, _ = strings.Cut(method, ":")
		covered[method] = true
		single[name] = exchangeCase{call: tc.call, exchanges: []exchange{{tc.want, tc.code, tc.body}}, wantResult: tc.wantResult}
	}
	runExchangeCases(t, "", single)
	typ := reflect.TypeOf(&Client{})
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; !covered[name] {
			t.Errorf("(*Client).%s has no contract case", name)
		}
	}
}

// TestClientsShareTheirPacer: two clients of one tenant (two tokens) given one pacer are paced together:
// with a cap of 2, their calls together never have more than 2 requests in flight.
func TestClientsShareTheirPacer(t *testing.T) {
	pacer := NewPacer(PacerConfig{Max: 2})
	a := newContractClient(t, Config{Pacer: pacer})
	b := newContractClient(t, Config{Pacer: pacer, Token: "another-token"})
	if a.Pacer() != pacer || b.Pacer() != pacer {
		t.Fatal("the clients do not use the pacer they were given")
	}
	var peak atomic.Int32
	httpmock.RegisterNoResponder(peakResponder(&peak, 60*time.Millisecond, `{"service":{"id":42}}`))
	var wg sync.WaitGroup
	for i := range 8 {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			if _, err := c.GetProduct(context.Background(), 42); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := peak.Load(); got != 2 {
		t.Errorf("%d requests in flight at most over both clients, want 2", got)
	}
}

// TestClientStringHidesTheToken: the client may be logged.
func TestClientStringHidesTheToken(t *testing.T) {
	c := newContractClient(t, Config{AdminURL: "https://acme-admin.example.com/"})
	if diff := cmp.Diff("3scale client for https://acme-admin.example.com", c.String()); diff != "" {
		t.Errorf("String() (-want +got):\n%s", diff)
	}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v", c)} {
		if strings.Contains(s, contractToken) {
			t.Errorf("the token is in %q", s)
		}
	}
}

// TestListsReadEveryPage reads lists of several sizes: page after page with per_page=500 until a page
// is short, so 1,201 items take 3 requests and exactly 1,000 take 3 (the last one empty).
func TestListsReadEveryPage(t *testing.T) {
	cases := map[string]struct {
		total     int
		list      func(ctx context.Context, c *Client) (int, []int64, error)
		plural    string
		singular  string
		path      string
		wantPages []url.Values
	}{
		"1201 products: 3 pages, stops on the short one": {
			total: 1201, plural: "services", singular: "service", path: "/admin/api/services.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				ps, err := c.ListProducts(ctx)
				ids := make([]int64, len(ps))
				for i, p := range ps {
					ids[i] = p.ID
				}
				return len(ps), ids, err
			},
			wantPages: []url.Values{paged(1), paged(2), paged(3)},
		},
		"1000 backends: a third, empty page ends the list": {
			total: 1000, plural: "backend_apis", singular: "backend_api", path: "/admin/api/backend_apis.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				bs, err := c.ListBackends(ctx)
				ids := make([]int64, len(bs))
				for i, b := range bs {
					ids[i] = b.ID
				}
				return len(bs), ids, err
			},
			wantPages: []url.Values{paged(1), paged(2), paged(3)},
		},
		"501 backend mapping rules: 2 pages": {
			total: 501, plural: "mapping_rules", singular: "mapping_rule", path: "/admin/api/backend_apis/7/mapping_rules.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				rs, err := c.ListMappingRules(ctx, BackendScope(7))
				ids := make([]int64, len(rs))
				for i, r := range rs {
					ids[i] = r.ID
				}
				return len(rs), ids, err
			},
			wantPages: []url.Values{paged(1), paged(2)},
		},
		"501 backend usages, bare arrays: 2 pages": {
			total: 501, singular: "backend_usage", path: "/admin/api/services/42/backend_usages.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				us, err := c.ListBackendUsages(ctx, 42)
				ids := make([]int64, len(us))
				for i, u := range us {
					ids[i] = u.ID
				}
				return len(us), ids, err
			},
			wantPages: []url.Values{paged(1), paged(2)},
		},
		"1000 limits with porta's metadata: 3 pages": {
			total: 1000, plural: "limits", singular: "limit", path: "/admin/api/application_plans/61/limits.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				ls, err := c.ListLimits(ctx, 61)
				ids := make([]int64, len(ls))
				for i, l := range ls {
					ids[i] = l.ID
				}
				return len(ls), ids, err
			},
			wantPages: []url.Values{paged(1), paged(2), paged(3)},
		},
		"no limits: one request": {
			total: 0, plural: "limits", singular: "limit", path: "/admin/api/application_plans/61/limits.json",
			list: func(ctx context.Context, c *Client) (int, []int64, error) {
				ls, err := c.ListLimits(ctx, 61)
				ids := make([]int64, len(ls))
				for i, l := range ls {
					ids[i] = l.ID
				}
				return len(ls), ids, err
			},
			wantPages: []url.Values{paged(1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{})
			var mu sync.Mutex
			var pages []url.Values
			httpmock.RegisterResponder("GET", contractAdminURL+tc.path, func(r *http.Request) (*http.Response, error) {
				q := r.URL.Query()
				mu.Lock()
				pages = append(pages, q)
				mu.Unlock()
				var page, per int
				fmt.Sscan(q.Get("page"), &page)
				fmt.Sscan(q.Get("per_page"), &per)
				items := []string{}
				for id := (page-1)*per + 1; id <= min(page*per, tc.total); id++ {
					items = append(items, fmt.Sprintf(`{%q:{"id":%d}}`, tc.singular, id))
				}
				if tc.plural == "" { // a bare array, as porta answers backend usages
					return httpmock.NewStringResponse(200, "["+strings.Join(items, ",")+"]"), nil
				}
				// porta adds the pagination metadata to wraps_collection lists longer than a page
				// (app/lib/three_scale/api/collection.rb:20-22,62-66): it is not an item.
				meta := fmt.Sprintf(`{"per_page":%d,"total_entries":%d,"total_pages":%d,"current_page":%d}`, per, tc.total, (tc.total+per-1)/per, page)
				return httpmock.NewStringResponse(200, fmt.Sprintf(`{%q:[%s],"metadata":%s}`, tc.plural, strings.Join(items, ","), meta)), nil
			})
			n, ids, err := tc.list(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPages, pages); diff != "" {
				t.Errorf("pages requested (-want +got):\n%s", diff)
			}
			if n != tc.total {
				t.Errorf("read %d items, want %d", n, tc.total)
			}
			for i, id := range ids {
				if id != int64(i+1) {
					t.Fatalf("item %d has id %d: items lost, repeated or out of order", i, id)
				}
			}
		})
	}
}

// errorClasses is how the classification functions see one error.
type errorClasses struct {
	NotFound, Invalid, Taken, InUse, Forbidden, Unauthorized, Conflict, RateLimited bool
	RetryAfter                                                                      time.Duration
	Unavailable, Retryable, Terminal                                                bool
}

func classesOf(err error) errorClasses {
	ra, _ := RetryAfter(err)
	return errorClasses{NotFound: IsNotFound(err), Invalid: IsInvalid(err), Taken: HasAlreadyBeenTaken(err, "system_name"), InUse: IsInUse(err),
		Forbidden: IsForbidden(err), Unauthorized: IsUnauthorized(err), Conflict: IsConflict(err), RateLimited: IsRateLimited(err),
		RetryAfter: ra, Unavailable: IsUnavailable(err), Retryable: IsRetryable(err), Terminal: IsTerminal(err)}
}

func answer(code int, body string, header ...string) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(code, body)
		for i := 0; i+1 < len(header); i += 2 {
			resp.Header.Set(header[i], header[i+1])
		}
		return resp, nil
	}
}

// TestContractErrorClassification answers each call with one of porta's errors and checks how the client
// classifies it and what its message says.
func TestContractErrorClassification(t *testing.T) {
	getProduct := func(ctx context.Context, c *Client) error { _, err := c.GetProduct(ctx, 42); return err }
	createProduct := func(ctx context.Context, c *Client) error {
		_, err := c.CreateProduct(ctx, ProductParams{Name: "Shop"})
		return err
	}
	deleteBackend := func(ctx context.Context, c *Client) error { return c.DeleteBackend(ctx, 7) }
	cases := map[string]errorCase{
		"404 not found": {
			call: getProduct, respond: answer(404, `{"status":"Not found"}`),
			want:        errorClasses{NotFound: true},
			wantMessage: "3scale: GET /admin/api/services/{id}.json: 404 Not Found: Not found",
		},
		"422 system_name has already been taken": {
			call: createProduct, respond: answer(422, `{"errors":{"system_name":["has already been taken"]}}`),
			want:        errorClasses{Invalid: true, Taken: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/services.json: 422 Unprocessable Entity: system_name has already been taken",
		},
		"422 other field errors: invalid, not taken": {
			call: createProduct, respond: answer(422, `{"errors":{"name":["can't be blank"],"system_name":["invalid"]}}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/services.json: 422 Unprocessable Entity: name can't be blank; system_name invalid",
		},
		"422 errors as a list: under base": {
			call: createProduct, respond: answer(422, `{"errors":["Limit reached"]}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/services.json: 422 Unprocessable Entity: Limit reached",
		},
		"403 with errors on a backend DELETE: in use, not forbidden": {
			call: deleteBackend, respond: answer(403, `{"errors":{"base":["cannot be deleted because it is used by at least one Product"]}}`),
			want:        errorClasses{InUse: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/backend_apis/{id}.json: 403 Forbidden: cannot be deleted because it is used by at least one Product",
		},
		"422 with errors on a backend DELETE (porta's own rendering): in use": {
			call: deleteBackend, respond: answer(422, `{"errors":{"base":["cannot be deleted because it is used by at least one Product"]}}`),
			want: errorClasses{InUse: true, Invalid: true, Terminal: true},
		},
		"403 without errors on a DELETE: forbidden": {
			call: deleteBackend, respond: answer(403, `{"error":"Your access token does not have the correct permissions"}`),
			want:        errorClasses{Forbidden: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/backend_apis/{id}.json: 403 Forbidden: Your access token does not have the correct permissions",
		},
		"403 on a read: forbidden": {
			call: getProduct, respond: answer(403, `{"error":"Access denied"}`),
			want: errorClasses{Forbidden: true, Terminal: true},
		},
		"401: unauthorized": {
			call: getProduct, respond: answer(401, `{"error":"Unauthorized"}`),
			want: errorClasses{Unauthorized: true, Terminal: true},
		},
		"409: conflict, retryable": {
			call: createProduct, respond: answer(409, `{"error":"Conflict"}`),
			want: errorClasses{Conflict: true, Retryable: true},
		},
		"429 with Retry-After beyond the deadline: rate limited, the delay reported": {
			call: getProduct, respond: answer(429, `{"error":"Too Many Requests"}`, "Retry-After", "30"),
			want: errorClasses{RateLimited: true, RetryAfter: 30 * time.Second, Retryable: true},
		},
		"429 without Retry-After": {
			call: getProduct, respond: answer(429, `Too Many Requests`),
			want:        errorClasses{RateLimited: true, Retryable: true},
			wantMessage: "3scale: GET /admin/api/services/{id}.json: 429 Too Many Requests: Too Many Requests",
		},
		"500: unavailable": {
			call: getProduct, respond: answer(500, `<html>Internal Server Error</html>`),
			want: errorClasses{Unavailable: true, Retryable: true},
		},
		"502 from a proxy: unavailable": {
			call: createProduct, respond: answer(502, `Bad Gateway`),
			want: errorClasses{Unavailable: true, Retryable: true},
		},
		"503: unavailable": {
			call: deleteBackend, respond: answer(503, `{"error":"Service Unavailable"}`),
			want:        errorClasses{Unavailable: true, Retryable: true},
			wantMessage: "3scale: DELETE /admin/api/backend_apis/{id}.json: 503 Service Unavailable: Service Unavailable",
		},
		"connection refused: unavailable": {
			call: getProduct, respond: httpmock.NewErrorResponder(errors.New("dial tcp 10.0.0.1:443: connect: connection refused")),
			want:       errorClasses{Unavailable: true, Retryable: true},
			wantInText: "3scale: GET /admin/api/services/{id}.json: no answer: ",
		},
		"an answer that is not JSON: terminal": {
			call: getProduct, respond: answer(200, `<html>login</html>`),
			want:       errorClasses{Terminal: true},
			wantInText: "cannot decode the answer",
		},
		"a list of the wrong shape: terminal": {
			call:       func(ctx context.Context, c *Client) error { _, err := c.ListProducts(ctx); return err },
			respond:    answer(200, `{"services":[{"service":{"id":"forty-two"}}]}`),
			want:       errorClasses{Terminal: true},
			wantInText: "cannot decode the list",
		},
	}
	runErrorCases(t, cases)
}

// TestNoAnswerIsUnavailable covers errors that come without an HTTP answer from a real listener: a
// closed port, and a server slower than the client's Timeout.
func TestNoAnswerIsUnavailable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	cases := map[string]struct {
		adminURL string
		timeout  time.Duration
	}{
		"connection refused":  {adminURL: closedURL},
		"timeout of the call": {adminURL: slow.URL, timeout: 100 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := New(Config{AdminURL: tc.adminURL, Token: contractToken, Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.GetProduct(context.Background(), 42)
			if diff := cmp.Diff(errorClasses{Unavailable: true, Retryable: true}, classesOf(err)); diff != "" {
				t.Errorf("classes of %v (-want +got):\n%s", err, diff)
			}
			if e, ok := asAPIError(err); !ok || e.StatusCode != 0 {
				t.Errorf("want an APIError without status, got %#v", err)
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if strings.Contains(err.Error(), contractToken) {
				t.Errorf("the token is in %q", err)
			}
		})
	}
}

// TestContractRetryAfter: a 429 is retried once after its Retry-After, within the call's deadline.
func TestContractRetryAfter(t *testing.T) {
	cases := map[string]struct {
		answers     []httpmock.Responder
		deadline    time.Duration
		wantCodes   []int
		wantErr     bool
		minDuration time.Duration
		maxDuration time.Duration
	}{
		"429 with Retry-After: 1, then 200: succeeds after about a second": {
			answers:   []httpmock.Responder{answer(429, `{"error":"Too Many Requests"}`, "Retry-After", "1"), answer(200, `{"service":{"id":42}}`)},
			deadline:  10 * time.Second,
			wantCodes: []int{429, 200}, minDuration: 950 * time.Millisecond, maxDuration: 3 * time.Second,
		},
		"429 twice, then 200: each Retry-After honoured": {
			answers: []httpmock.Responder{answer(429, ``, "Retry-After", "1"), answer(429, ``, "Retry-After", "1"),
				answer(200, `{"service":{"id":42}}`)},
			deadline:  10 * time.Second,
			wantCodes: []int{429, 429, 200}, minDuration: 1950 * time.Millisecond, maxDuration: 5 * time.Second,
		},
		"429 four times: the attempts are bounded, then the error": {
			answers:   []httpmock.Responder{answer(429, ``, "Retry-After", "1")},
			deadline:  10 * time.Second,
			wantCodes: []int{429, 429, 429, 429}, wantErr: true, minDuration: 2950 * time.Millisecond, maxDuration: 7 * time.Second,
		},
		"Retry-After beyond the deadline: no wait, the 429": {
			answers:   []httpmock.Responder{answer(429, ``, "Retry-After", "120"), answer(200, `{"service":{"id":42}}`)},
			deadline:  300 * time.Millisecond,
			wantCodes: []int{429}, wantErr: true, maxDuration: time.Second,
		},
		"Retry-After as an HTTP date": {
			answers: []httpmock.Responder{func(r *http.Request) (*http.Response, error) {
				return answer(429, ``, "Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))(r)
			}, answer(200, `{"service":{"id":42}}`)},
			deadline:  10 * time.Second,
			wantCodes: []int{429, 200}, minDuration: 500 * time.Millisecond, maxDuration: 4 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var codes []int
			c := newContractClient(t, Config{Observer: func(ci CallInfo) {
				mu.Lock()
				codes = append(codes, ci.Code)
				mu.Unlock()
			}})
			var n atomic.Int32
			httpmock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
				i := int(n.Add(1)) - 1
				return tc.answers[min(i, len(tc.answers)-1)](r)
			})
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			start := time.Now()
			p, err := c.GetProduct(ctx, 42)
			elapsed := time.Since(start)
			if tc.wantErr != (err != nil) {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && p.ID != 42 {
				t.Errorf("product %+v", p)
			}
			if tc.wantErr && !IsRateLimited(err) {
				t.Errorf("error %v is not rate limited", err)
			}
			if diff := cmp.Diff(tc.wantCodes, codes); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
			if elapsed < tc.minDuration || elapsed > tc.maxDuration {
				t.Errorf("took %v, want between %v and %v", elapsed, tc.minDuration, tc.maxDuration)
			}
		})
	}
}

// TestMaxInFlightCapsConcurrency: ten concurrent calls to a slow server never have more requests in
// flight than MaxInFlight, and have as many as the adaptive limit allows from its start (4).
func TestMaxInFlightCapsConcurrency(t *testing.T) {
	cases := map[string]struct {
		maxInFlight int
		want        int32
	}{
		"MaxInFlight 2": {maxInFlight: 2, want: 2},
		"MaxInFlight 5": {maxInFlight: 5, want: 5},
		"default":       {want: DefaultMaxInFlight},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{MaxInFlight: tc.maxInFlight})
			var peak atomic.Int32
			httpmock.RegisterNoResponder(peakResponder(&peak, 60*time.Millisecond, `{"service":{"id":42}}`))
			var wg sync.WaitGroup
			errs := make(chan error, 10)
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := c.GetProduct(context.Background(), 42)
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if got := peak.Load(); got < min(tc.want, 4) || got > tc.want {
				t.Errorf("at most %d requests in flight, want between %d and %d", got, min(tc.want, 4), tc.want)
			}
		})
	}
}

// TestQPSLimitsTheRate: with QPS 20 and Burst 1, six calls take at least 5/20 s; without a low limit
// they are immediate.
func TestQPSLimitsTheRate(t *testing.T) {
	cases := map[string]struct {
		qps      float64
		burst    int
		calls    int
		min, max time.Duration
	}{
		"QPS 20, burst 1: 6 calls wait 250ms": {qps: 20, burst: 1, calls: 6, min: 240 * time.Millisecond, max: 2 * time.Second},
		"QPS 20, burst 6: 6 calls at once":    {qps: 20, burst: 6, calls: 6, max: 150 * time.Millisecond},
		"QPS 5, burst 1: 3 calls wait 400ms":  {qps: 5, burst: 1, calls: 3, min: 390 * time.Millisecond, max: 2 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{QPS: tc.qps, Burst: tc.burst})
			httpmock.RegisterNoResponder(answer(200, `{"service":{"id":42}}`))
			start := time.Now()
			for range tc.calls {
				if _, err := c.GetProduct(context.Background(), 42); err != nil {
					t.Fatal(err)
				}
			}
			if elapsed := time.Since(start); elapsed < tc.min || elapsed > tc.max {
				t.Errorf("%d calls took %v, want between %v and %v", tc.calls, elapsed, tc.min, tc.max)
			}
		})
	}
}

// TestRateLimiterRespectsTheDeadline: a call that would wait for the limiter beyond its deadline fails
// at once, as unavailable.
func TestRateLimiterRespectsTheDeadline(t *testing.T) {
	c := newContractClient(t, Config{QPS: 0.5, Burst: 1})
	httpmock.RegisterNoResponder(answer(200, `{"service":{"id":42}}`))
	if _, err := c.GetProduct(context.Background(), 42); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetProduct(ctx, 42)
	if !IsUnavailable(err) {
		t.Errorf("error %v, want unavailable", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("waited %v", elapsed)
	}
	if got := httpmock.GetTotalCallCount(); got != 1 {
		t.Errorf("%d requests sent, want 1", got)
	}
}

// TestObserverSeesEveryAttempt: the Observer gets method, endpoint template and code of each attempt,
// retries and failures included.
func TestObserverSeesEveryAttempt(t *testing.T) {
	var mu sync.Mutex
	var seen []CallInfo
	c := newContractClient(t, Config{Observer: func(ci CallInfo) {
		if ci.Duration <= 0 {
			t.Errorf("attempt %+v has no duration", ci)
		}
		ci.Duration = 0
		mu.Lock()
		seen = append(seen, ci)
		mu.Unlock()
	}})
	httpmock.RegisterResponder("GET", contractAdminURL+"/admin/api/services/42.json", answer(200, `{"service":{"id":42}}`))
	httpmock.RegisterResponder("GET", contractAdminURL+"/admin/api/services/42/proxy/mapping_rules.json", answer(200, `{"mapping_rules":[]}`))
	httpmock.RegisterResponder("DELETE", contractAdminURL+"/admin/api/backend_apis/7.json",
		answer(403, `{"errors":{"base":["cannot be deleted because it is used by at least one Product"]}}`))
	httpmock.RegisterResponder("POST", contractAdminURL+"/admin/api/services/42/metrics.json",
		answer(429, ``, "Retry-After", "1").Then(answer(201, `{"metric":{"id":3}}`)))
	httpmock.RegisterResponder("GET", contractAdminURL+"/admin/api/backend_apis/7/metrics.json",
		httpmock.NewErrorResponder(errors.New("connection reset by peer")))
	ctx := context.Background()
	_, _ = c.GetProduct(ctx, 42)
	_, _ = c.ListMappingRules(ctx, ProductScope(42))
	_ = c.DeleteBackend(ctx, 7)
	_, _ = c.CreateMetric(ctx, ProductScope(42), MetricParams{SystemName: "m", FriendlyName: "M", Unit: "hit"})
	_, _ = c.ListMetrics(ctx, BackendScope(7))
	want := []CallInfo{
		{Method: "GET", Endpoint: "/admin/api/services/{id}.json", Code: 200},
		{Method: "GET", Endpoint: "/admin/api/services/{service_id}/proxy/mapping_rules.json", Code: 200},
		{Method: "DELETE", Endpoint: "/admin/api/backend_apis/{id}.json", Code: 403},
		{Method: "POST", Endpoint: "/admin/api/services/{service_id}/metrics.json", Code: 429, RetryAfter: time.Second},
		{Method: "POST", Endpoint: "/admin/api/services/{service_id}/metrics.json", Code: 201},
		// A read that gets no answer is tried 4 times in all.
		{Method: "GET", Endpoint: "/admin/api/backend_apis/{backend_api_id}/metrics.json", Code: 0},
		{Method: "GET", Endpoint: "/admin/api/backend_apis/{backend_api_id}/metrics.json", Code: 0},
		{Method: "GET", Endpoint: "/admin/api/backend_apis/{backend_api_id}/metrics.json", Code: 0},
		{Method: "GET", Endpoint: "/admin/api/backend_apis/{backend_api_id}/metrics.json", Code: 0},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("attempts observed (-want +got):\n%s", diff)
	}
}

// TestTokenNeverInErrors: whatever quotes the token — a transport error, an error body — the error the
// client returns does not.
func TestTokenNeverInErrors(t *testing.T) {
	cases := map[string]httpmock.Responder{
		"transport error quoting the token": httpmock.NewErrorResponder(fmt.Errorf("proxy refused credentials %s: connection reset", contractToken)),
		"403 body quoting the token":        answer(403, `{"error":"access token `+contractToken+` is not valid"}`),
		"422 field error quoting the token": answer(422, `{"errors":{"base":["token `+contractToken+` is read-only"]}}`),
		"502 text quoting the token":        answer(502, `upstream said: bad token `+contractToken),
	}
	for name, respond := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{})
			httpmock.RegisterNoResponder(respond)
			_, err := c.CreateProduct(context.Background(), ProductParams{Name: "Shop"})
			if err == nil {
				t.Fatal("no error")
			}
			texts := []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
			for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
				texts = append(texts, u.Error())
			}
			for _, s := range texts {
				if strings.Contains(s, contractToken) {
					t.Errorf("the token is in %q", s)
				}
			}
		})
	}
}

// TestNewValidatesItsConfig: New refuses what cannot work and keeps a path prefix of the admin URL.
func TestNewValidatesItsConfig(t *testing.T) {
	cases := map[string]struct {
		cfg     Config
		wantErr string
	}{
		"relative admin URL":        {cfg: Config{AdminURL: "acme-admin.example.com", Token: contractToken}, wantErr: "is not an absolute http(s) URL"},
		"path only":                 {cfg: Config{AdminURL: "/admin/api", Token: contractToken}, wantErr: "is not an absolute http(s) URL"},
		"not http":                  {cfg: Config{AdminURL: "ftp://acme-admin.example.com", Token: contractToken}, wantErr: "is not an absolute http(s) URL"},
		"no host":                   {cfg: Config{AdminURL: "https://", Token: contractToken}, wantErr: "is not an absolute http(s) URL"},
		"empty admin URL":           {cfg: Config{Token: contractToken}, wantErr: "is not an absolute http(s) URL"},
		"empty token":               {cfg: Config{AdminURL: contractAdminURL}, wantErr: "access token is empty"},
		"CA bundle without PEM":     {cfg: Config{AdminURL: contractAdminURL, Token: contractToken, CABundle: []byte("not a certificate")}, wantErr: "holds no PEM certificate"},
		"https admin URL and token": {cfg: Config{AdminURL: contractAdminURL, Token: contractToken}},
		"http admin URL with port":  {cfg: Config{AdminURL: "http://127.0.0.1:3000", Token: contractToken}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			got := ""
			if err != nil {
				got = err.Error()
				if strings.Contains(got, contractToken) {
					t.Errorf("the token is in %q", got)
				}
			}
			if (tc.wantErr == "") != (err == nil) || !strings.Contains(got, tc.wantErr) {
				t.Errorf("New: error %q, want one containing %q", got, tc.wantErr)
			}
		})
	}
}

// TestAdminURLPathPrefixIsKept: a tenant behind a path prefix (and a trailing slash) is addressed under it.
func TestAdminURLPathPrefixIsKept(t *testing.T) {
	cases := map[string]struct {
		adminURL string
		wantURL  string
	}{
		"prefix":           {adminURL: "https://gw.example.com/3scale/acme", wantURL: "https://gw.example.com/3scale/acme/admin/api/services/42.json"},
		"prefix and slash": {adminURL: "https://gw.example.com/3scale/acme/", wantURL: "https://gw.example.com/3scale/acme/admin/api/services/42.json"},
		"no prefix, slash": {adminURL: "https://acme-admin.example.com/", wantURL: "https://acme-admin.example.com/admin/api/services/42.json"},
		"port and prefix":  {adminURL: "http://10.0.0.5:8080/porta", wantURL: "http://10.0.0.5:8080/porta/admin/api/services/42.json"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{AdminURL: tc.adminURL})
			var got []string
			httpmock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
				got = append(got, r.URL.String())
				return httpmock.NewStringResponse(200, `{"service":{"id":42}}`), nil
			})
			if _, err := c.GetProduct(context.Background(), 42); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.wantURL}, got); diff != "" {
				t.Errorf("URLs requested (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTLSConfig talks to a real TLS listener: its certificate is refused unless the CA bundle holds it or
// verification is off, and a UserAgent is sent.
func TestTLSConfig(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"service":{"id":42}}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cases := map[string]struct {
		cfg          Config
		wantRefused  bool
		wantAgentSet bool
	}{
		"system roots only: refused":   {cfg: Config{}, wantRefused: true},
		"CA bundle with the server's":  {cfg: Config{CABundle: caPEM, UserAgent: "apimsync/test"}, wantAgentSet: true},
		"verification off (test only)": {cfg: Config{InsecureSkipVerify: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			agents = nil
			mu.Unlock()
			cfg := tc.cfg
			cfg.AdminURL, cfg.Token = srv.URL, contractToken
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetProduct(context.Background(), 42)
			if tc.wantRefused {
				if !IsUnavailable(err) || !strings.Contains(err.Error(), "certificate") {
					t.Errorf("error %v, want an unavailable certificate error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.wantAgentSet {
				if diff := cmp.Diff([]string{"apimsync/test"}, agents); diff != "" {
					t.Errorf("User-Agent (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// porta's answers for accounts, users, applications and ActiveDocs (AccountRepresenter, UserRepresenter,
// CinstanceRepresenter, ApiDocs::ServiceRepresenter), with the extra fields the client ignores.
const (
	portaAccount = `{"id":81,"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z","credit_card_stored":false,` +
		`"monthly_billing_enabled":false,"monthly_charging_enabled":true,"state":"approved","org_name":"ACME","annotations":{},` +
		`"links":[{"rel":"self","href":"https://acme-admin.example.com/admin/api/accounts/81"}]}`
	portaUser = `{"id":82,"state":"active","role":"admin","created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z",` +
		`"username":"alice","email":"alice@acme.example","links":[]}`
	// portaAccountXML is Account#to_xml with its bought plans and users (app/models/account.rb:445-491).
	portaAccountXML = `<?xml version="1.0" encoding="UTF-8"?><account><id>81</id><created_at>2026-11-22T10:00:00Z</created_at>` +
		`<updated_at>2026-11-22T10:00:00Z</updated_at><state>approved</state><extra_fields></extra_fields><org_name>ACME</org_name>` +
		`<monthly_billing_enabled>false</monthly_billing_enabled><monthly_charging_enabled>true</monthly_charging_enabled>` +
		`<credit_card_stored>false</credit_card_stored><plans><plan default="true"><id>7</id><name>Default</name><type>account_plan</type></plan></plans>` +
		`<users><user><id>82</id><created_at>2026-11-22T10:00:00Z</created_at><updated_at>2026-11-22T10:00:00Z</updated_at>` +
		`<account_id>81</account_id><state>active</state><role>admin</role><extra_fields></extra_fields><username>alice</username>` +
		`<email>alice@acme.example</email></user><user><id>85</id><account_id>81</account_id><state>pending</state><role>member</role>` +
		`<username>bob</username><email>bob@acme.example</email></user></users></account>`
	portaApplication = `{"id":83,"state":"live","enabled":true,"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z",` +
		`"service_id":42,"service_name":"Shop","plan_id":61,"plan_name":"Gold","account_id":81,"org_name":"ACME",` +
		`"first_traffic_at":null,"first_daily_traffic_at":null,"application_id":"a1b2c3d4","name":"Shop","description":"d","links":[]}`
	portaAPIDoc = `{"id":84,"system_name":"petstore","name":"Petstore","description":"d","published":true,"skip_swagger_validations":false,` +
		`"body":"{\"openapi\":\"3.0.3\"}","service_id":42,"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z"}`
)

var (
	portaField      = `{"id":51,"target":"Account","name":"tier","label":"Tier","required":true,"hidden":false,"read_only":false,"choices":["gold","silver"],"position":3,"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z"}`
	wantField       = &FieldDefinition{ID: 51, Target: "Account", Name: "tier", Label: "Tier", Required: true, Choices: []string{"gold", "silver"}, Position: 3}
	wantAccount     = &Account{ID: 81, OrgName: "ACME", State: "approved", MonthlyChargingEnabled: true}
	wantUser        = &User{ID: 82, Username: "alice", Email: "alice@acme.example", Role: "admin", State: "active"}
	wantApplication = &Application{ID: 83, State: "live", Enabled: true, Name: "Shop", Description: "d", AccountID: 81, ServiceID: 42,
		PlanID: 61, PlanName: "Gold", OrgName: "ACME", ApplicationID: "a1b2c3d4"}
	wantAPIDoc = &ActiveDoc{ID: 84, Name: "Petstore", SystemName: "petstore", Description: "d", Published: true, Body: `{"openapi":"3.0.3"}`, ServiceID: 42}
)

// errorCase is one erroneous answer of porta's and what the client must make of it.
type errorCase struct {
	call        func(ctx context.Context, c *Client) error
	respond     httpmock.Responder
	want        errorClasses
	wantMessage string // whole message; "" to skip
	wantInText  string // part of the message
}

// runErrorCases sends each case's call, answers it as the case says and checks the error's classes and
// message, which always says it comes from 3scale.
func runErrorCases(t *testing.T, cases map[string]errorCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{})
			httpmock.RegisterNoResponder(tc.respond)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := tc.call(ctx, c)
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, classesOf(err)); diff != "" {
				t.Errorf("classes of %q (-want +got):\n%s", err, diff)
			}
			if tc.wantMessage != "" && tc.wantMessage != err.Error() {
				t.Errorf("message (-want +got):\n%s", cmp.Diff(tc.wantMessage, err.Error()))
			}
			if !strings.Contains(err.Error(), tc.wantInText) {
				t.Errorf("message %q does not contain %q", err, tc.wantInText)
			}
			if !strings.HasPrefix(err.Error(), "3scale: ") {
				t.Errorf("message %q does not say it comes from 3scale", err)
			}
		})
	}
}

// peakResponder answers every request with body after holding it for hold, and records in peak the most
// requests it held at once.
func peakResponder(peak *atomic.Int32, hold time.Duration, body string) httpmock.Responder {
	var now atomic.Int32
	return func(*http.Request) (*http.Response, error) {
		n := now.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(hold)
		now.Add(-1)
		return httpmock.NewStringResponse(200, body), nil
	}
}
