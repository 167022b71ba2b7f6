package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// conformanceToken is the token of the recording client; it must only travel in the Authorization header.
const conformanceToken = "conformance-token-9f3a"

// clientCalls calls every exported method of *Client with every field it can send set (for the Scope
// methods, once per scope). TestClientCallsAreAllEnumerated fails when a method is missing here, so that
// the conformance test (and the flow against the simulator) cover every request the client can make.
var clientCalls = map[string]func(ctx context.Context, c *Client) error{
	"ListProducts": func(ctx context.Context, c *Client) error { _, err := c.ListProducts(ctx); return err },
	"GetProduct":   func(ctx context.Context, c *Client) error { _, err := c.GetProduct(ctx, 11); return err },
	"CreateProduct": func(ctx context.Context, c *Client) error {
		_, err := c.CreateProduct(ctx, everyProductField())
		return err
	},
	"UpdateProduct": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateProduct(ctx, 11, everyProductField())
		return err
	},
	"DeleteProduct": func(ctx context.Context, c *Client) error { return c.DeleteProduct(ctx, 11) },
	"ListBackends":  func(ctx context.Context, c *Client) error { _, err := c.ListBackends(ctx); return err },
	"GetBackend":    func(ctx context.Context, c *Client) error { _, err := c.GetBackend(ctx, 21); return err },
	"CreateBackend": func(ctx context.Context, c *Client) error {
		_, err := c.CreateBackend(ctx, everyBackendField())
		return err
	},
	"UpdateBackend": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateBackend(ctx, 21, everyBackendField())
		return err
	},
	"DeleteBackend": func(ctx context.Context, c *Client) error { return c.DeleteBackend(ctx, 21) },
	"ListMetrics": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.ListMetrics(ctx, s); return err })
	},
	"CreateMetric": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.CreateMetric(ctx, s, everyMetricField()); return err })
	},
	"UpdateMetric": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.UpdateMetric(ctx, s, 31, everyMetricField()); return err })
	},
	"DeleteMetric": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { return c.DeleteMetric(ctx, s, 31) })
	},
	"ListMethods": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.ListMethods(ctx, s, 31); return err })
	},
	"CreateMethod": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.CreateMethod(ctx, s, 31, everyMethodField()); return err })
	},
	"UpdateMethod": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.UpdateMethod(ctx, s, 31, 32, everyMethodField()); return err })
	},
	"DeleteMethod": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { return c.DeleteMethod(ctx, s, 31, 32) })
	},
	"ListMappingRules": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.ListMappingRules(ctx, s); return err })
	},
	"CreateMappingRule": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.CreateMappingRule(ctx, s, everyRuleField()); return err })
	},
	"UpdateMappingRule": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { _, err := c.UpdateMappingRule(ctx, s, 41, everyRuleField()); return err })
	},
	"DeleteMappingRule": func(ctx context.Context, c *Client) error {
		return eachScope(func(s Scope) error { return c.DeleteMappingRule(ctx, s, 41) })
	},
	"GetProxy": func(ctx context.Context, c *Client) error { _, err := c.GetProxy(ctx, 11); return err },
	"UpdateProxy": func(ctx context.Context, c *Client) error {
		p := ProxyParams{}
		for _, k := range proxyAttributesWritten {
			p[k] = "v"
		}
		_, err := c.UpdateProxy(ctx, 11, p)
		return err
	},
	"DeployProxy":          func(ctx context.Context, c *Client) error { return c.DeployProxy(ctx, 11) },
	"GetOIDCConfiguration": func(ctx context.Context, c *Client) error { _, err := c.GetOIDCConfiguration(ctx, 11); return err },
	"UpdateOIDCConfiguration": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateOIDCConfiguration(ctx, 11, OIDCConfiguration{StandardFlowEnabled: true, DirectAccessGrantsEnabled: true})
		return err
	},
	"GetPolicies": func(ctx context.Context, c *Client) error { _, err := c.GetPolicies(ctx, 11); return err },
	"UpdatePolicies": func(ctx context.Context, c *Client) error {
		_, err := c.UpdatePolicies(ctx, 11, []Policy{{Name: "apicast", Version: "builtin", Enabled: true}})
		return err
	},
	"ListBackendUsages": func(ctx context.Context, c *Client) error { _, err := c.ListBackendUsages(ctx, 11); return err },
	"CreateBackendUsage": func(ctx context.Context, c *Client) error {
		_, err := c.CreateBackendUsage(ctx, 11, BackendUsageParams{BackendAPIID: 21, Path: "/v1"})
		return err
	},
	"UpdateBackendUsage": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateBackendUsage(ctx, 11, 51, BackendUsageParams{BackendAPIID: 21, Path: "/v2"})
		return err
	},
	"DeleteBackendUsage": func(ctx context.Context, c *Client) error { return c.DeleteBackendUsage(ctx, 11, 51) },
	"ListPlans":          func(ctx context.Context, c *Client) error { _, err := c.ListPlans(ctx, 11); return err },
	"ListAllPlans":       func(ctx context.Context, c *Client) error { _, err := c.ListAllPlans(ctx); return err },
	"GetPlan":            func(ctx context.Context, c *Client) error { _, err := c.GetPlan(ctx, 11, 61); return err },
	"CreatePlan": func(ctx context.Context, c *Client) error {
		_, err := c.CreatePlan(ctx, 11, everyPlanField())
		return err
	},
	"UpdatePlan": func(ctx context.Context, c *Client) error {
		_, err := c.UpdatePlan(ctx, 11, 61, everyPlanField())
		return err
	},
	"SetDefaultPlan":   func(ctx context.Context, c *Client) error { _, err := c.SetDefaultPlan(ctx, 11, 61); return err },
	"ListServicePlans": func(ctx context.Context, c *Client) error { _, err := c.ListServicePlans(ctx, 11); return err },
	"GetServicePlan":   func(ctx context.Context, c *Client) error { _, err := c.GetServicePlan(ctx, 11, 72); return err },
	"CreateServicePlan": func(ctx context.Context, c *Client) error {
		_, err := c.CreateServicePlan(ctx, 11, everyAccountPlanField())
		return err
	},
	"UpdateServicePlan": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateServicePlan(ctx, 11, 72, everyAccountPlanField())
		return err
	},
	"SetDefaultServicePlan": func(ctx context.Context, c *Client) error { _, err := c.SetDefaultServicePlan(ctx, 11, 72); return err },
	"DeleteServicePlan":     func(ctx context.Context, c *Client) error { return c.DeleteServicePlan(ctx, 11, 72) },
	"Subscribe":             func(ctx context.Context, c *Client) error { _, err := c.Subscribe(ctx, 11, 72); return err },
	"Unsubscribe":           func(ctx context.Context, c *Client) error { return c.Unsubscribe(ctx, 11, 73) },
	"ListAllServicePlans":   everyCall["ListAllServicePlans"],
	"ListFieldDefinitions":  everyCall["ListFieldDefinitions"],
	"GetFieldDefinition":    everyCall["GetFieldDefinition"],
	"CreateFieldDefinition": everyCall["CreateFieldDefinition"],
	"UpdateFieldDefinition": everyCall["UpdateFieldDefinition"],
	"DeleteFieldDefinition": everyCall["DeleteFieldDefinition"],
	"ListAllApplications":   everyCall["ListAllApplications"],
	"GetProvider":           everyCall["GetProvider"], "UpdateProvider": everyCall["UpdateProvider"], "UpdateWebhooks": everyCall["UpdateWebhooks"],
	"ListAdminUsers":                    everyCall["ListAdminUsers"],
	"GetAdminUser":                      everyCall["GetAdminUser"],
	"CreateAdminUser":                   everyCall["CreateAdminUser"],
	"UpdateAdminUser":                   everyCall["UpdateAdminUser"],
	"DeleteAdminUser":                   everyCall["DeleteAdminUser"],
	"ChangeAdminUser":                   everyCall["ChangeAdminUser"],
	"GetAdminUserPermissions":           everyCall["GetAdminUserPermissions"],
	"SetAdminUserPermissions":           everyCall["SetAdminUserPermissions"],
	"ListAdminAuthenticationProviders":  everyCall["ListAdminAuthenticationProviders"],
	"CreateAdminAuthenticationProvider": everyCall["CreateAdminAuthenticationProvider"],
	"UpdateAdminAuthenticationProvider": everyCall["UpdateAdminAuthenticationProvider"],
	"ListSubscriptions":                 everyCall["ListSubscriptions"],
	"ChangeSubscriptionPlan":            everyCall["ChangeSubscriptionPlan"],
	"ApproveSubscription":               everyCall["ApproveSubscription"],
	"ListAccountPlans":                  func(ctx context.Context, c *Client) error { _, err := c.ListAccountPlans(ctx); return err },
	"GetAccountPlan":                    func(ctx context.Context, c *Client) error { _, err := c.GetAccountPlan(ctx, 71); return err },
	"CreateAccountPlan": func(ctx context.Context, c *Client) error {
		_, err := c.CreateAccountPlan(ctx, everyAccountPlanField())
		return err
	},
	"UpdateAccountPlan": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateAccountPlan(ctx, 71, everyAccountPlanField())
		return err
	},
	"SetDefaultAccountPlan": func(ctx context.Context, c *Client) error { _, err := c.SetDefaultAccountPlan(ctx, 71); return err },
	"DeleteAccountPlan":     func(ctx context.Context, c *Client) error { return c.DeleteAccountPlan(ctx, 71) },
	"AccountPlanOf":         func(ctx context.Context, c *Client) error { _, err := c.AccountPlanOf(ctx, 11); return err },
	"ChangeAccountPlan":     func(ctx context.Context, c *Client) error { _, err := c.ChangeAccountPlan(ctx, 11, 71); return err },

	"DeletePlan": func(ctx context.Context, c *Client) error { return c.DeletePlan(ctx, 11, 61) },
	"ListLimits": func(ctx context.Context, c *Client) error { _, err := c.ListLimits(ctx, 61); return err },
	"CreateLimit": func(ctx context.Context, c *Client) error {
		_, err := c.CreateLimit(ctx, 61, 31, LimitParams{Period: "month", Value: 1000})
		return err
	},
	"UpdateLimit": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateLimit(ctx, 61, 31, 71, LimitParams{Period: "month", Value: 2000})
		return err
	},
	"DeleteLimit":         func(ctx context.Context, c *Client) error { return c.DeleteLimit(ctx, 61, 31, 71) },
	"ListProductFeatures": func(ctx context.Context, c *Client) error { _, err := c.ListProductFeatures(ctx, 11); return err },
	"CreateProductFeature": func(ctx context.Context, c *Client) error {
		_, err := c.CreateProductFeature(ctx, 11, FeatureParams{Name: "Gold", SystemName: "gold", Description: "24/7", Scope: FeatureScopeApplicationPlan})
		return err
	},
	"UpdateProductFeature": func(ctx context.Context, c *Client) error {
		_, err := c.UpdateProductFeature(ctx, 11, 91, FeatureParams{Name: "Gold", SystemName: "gold", Description: "24/7"})
		return err
	},
	"DeleteProductFeature": func(ctx context.Context, c *Client) error { return c.DeleteProductFeature(ctx, 11, 91) },
	"ListPlanFeatures":     everyCall["ListPlanFeatures"],
	"EnablePlanFeature":    everyCall["EnablePlanFeature"],
	"DisablePlanFeature":   everyCall["DisablePlanFeature"],
	"ListAccountFeatures":  everyCall["ListAccountFeatures"],
	"CreateAccountFeature": everyCall["CreateAccountFeature"],
	"UpdateAccountFeature": everyCall["UpdateAccountFeature"],
	"DeleteAccountFeature": everyCall["DeleteAccountFeature"],
	"ListPricingRules":     func(ctx context.Context, c *Client) error { _, err := c.ListPricingRules(ctx, 61); return err },
	"CreatePricingRule": func(ctx context.Context, c *Client) error {
		_, err := c.CreatePricingRule(ctx, 61, 31, PricingRuleParams{Min: 1, Max: 100, CostPerUnit: "0.05"})
		return err
	},
	"DeletePricingRule": func(ctx context.Context, c *Client) error { return c.DeletePricingRule(ctx, 61, 31, 81) },
	// Accounts, users, applications and ActiveDocs share the calls of the golden-file test.
	"ProbeCredentials": everyCall["ProbeCredentials"], "Signup": everyCall["Signup"], "GetAccount": everyCall["GetAccount"],
	"FindAccountByUsername": everyCall["FindAccountByUsername"], "UpdateAccount": everyCall["UpdateAccount"], "ListAccounts": everyCall["ListAccounts"],
	"ApproveAccount": everyCall["ApproveAccount"], "DeleteAccount": everyCall["DeleteAccount"], "ListUsers": everyCall["ListUsers"],
	"UsersOfAccount": everyCall["UsersOfAccount"],
	"CreateUser":     everyCall["CreateUser"], "UpdateUser": everyCall["UpdateUser"], "ActivateUser": everyCall["ActivateUser"],
	"UnsuspendUser": everyCall["UnsuspendUser"],
	"SuspendUser":   everyCall["SuspendUser"],
	"SetUserRole":   everyCall["SetUserRole"], "DeleteUser": everyCall["DeleteUser"], "ListApplications": everyCall["ListApplications"],
	"ListProductApplications": everyCall["ListProductApplications"],
	"FindApplication":         everyCall["FindApplication"],
	"GetApplication":          everyCall["GetApplication"], "CreateApplication": everyCall["CreateApplication"],
	"UpdateApplication": everyCall["UpdateApplication"], "DeleteApplication": everyCall["DeleteApplication"],
	"SuspendApplication": everyCall["SuspendApplication"], "ResumeApplication": everyCall["ResumeApplication"],
	"ChangeApplicationPlan": everyCall["ChangeApplicationPlan"], "ListApplicationKeys": everyCall["ListApplicationKeys"],
	"CreateApplicationKey": everyCall["CreateApplicationKey"], "DeleteApplicationKey": everyCall["DeleteApplicationKey"],
	"ListActiveDocs": everyCall["ListActiveDocs"], "GetActiveDoc": everyCall["GetActiveDoc"], "CreateActiveDoc": everyCall["CreateActiveDoc"],
	"UpdateActiveDoc": everyCall["UpdateActiveDoc"], "DeleteActiveDoc": everyCall["DeleteActiveDoc"],
	// Proxy configs, in both environments; the policy registry.
	"LatestProxyConfig": func(ctx context.Context, c *Client) error {
		for _, env := range []string{EnvironmentSandbox, EnvironmentProduction} {
			if _, err := c.LatestProxyConfig(ctx, 11, env); err != nil {
				return err
			}
		}
		return nil
	},
	"LatestProxyConfigContent": everyCall["LatestProxyConfigContent"],
	"ListProxyConfigs": func(ctx context.Context, c *Client) error {
		for _, env := range []string{EnvironmentSandbox, EnvironmentProduction} {
			if _, err := c.ListProxyConfigs(ctx, 11, env); err != nil {
				return err
			}
		}
		return nil
	},
	"PromoteProxyConfig": func(ctx context.Context, c *Client) error {
		_, err := c.PromoteProxyConfig(ctx, 11, EnvironmentSandbox, 4, EnvironmentProduction)
		return err
	},
	"ListCustomPolicies": everyCall["ListCustomPolicies"], "GetCustomPolicy": everyCall["GetCustomPolicy"],
	"CreateCustomPolicy": everyCall["CreateCustomPolicy"], "UpdateCustomPolicy": everyCall["UpdateCustomPolicy"],
	"DeleteCustomPolicy": everyCall["DeleteCustomPolicy"],
	// The master API and the tenants' users through master.
	"SignupTenant": everyCall["SignupTenant"], "GetTenant": everyCall["GetTenant"], "DeleteTenant": everyCall["DeleteTenant"],
	"ResumeTenant": everyCall["ResumeTenant"], "ListTenants": everyCall["ListTenants"], "FindTenant": everyCall["FindTenant"],
	"ListTenantUsers": everyCall["ListTenantUsers"], "ActivateTenantUser": everyCall["ActivateTenantUser"],
	// The developer portal's content: every field each call can send is set there.
	"ListCMSSections": everyCall["ListCMSSections"], "CreateCMSSection": everyCall["CreateCMSSection"],
	"UpdateCMSSection": everyCall["UpdateCMSSection"], "DeleteCMSSection": everyCall["DeleteCMSSection"],
	"ListCMSTemplates": everyCall["ListCMSTemplates"], "GetCMSTemplate": everyCall["GetCMSTemplate"],
	"CreateCMSTemplate": everyCall["CreateCMSTemplate"], "UpdateCMSTemplate": everyCall["UpdateCMSTemplate"],
	"PublishCMSTemplate": everyCall["PublishCMSTemplate"], "DeleteCMSTemplate": everyCall["DeleteCMSTemplate"],
	"ListCMSFiles": everyCall["ListCMSFiles"], "CreateCMSFile": everyCall["CreateCMSFile"],
	"UpdateCMSFile": everyCall["UpdateCMSFile"], "DeleteCMSFile": everyCall["DeleteCMSFile"],
	"FileContent": everyCall["FileContent"],
	// The portal's settings and sign-in providers.
	"GetPortalSettings": everyCall["GetPortalSettings"], "UpdatePortalSettings": everyCall["UpdatePortalSettings"],
	"ListAuthenticationProviders": everyCall["ListAuthenticationProviders"], "CreateAuthenticationProvider": everyCall["CreateAuthenticationProvider"],
	"UpdateAuthenticationProvider": everyCall["UpdateAuthenticationProvider"],
}

// callsWithoutRequest are exported methods that send nothing, with the reason.
var callsWithoutRequest = map[string]string{
	"String": "describes the client (fmt.Stringer); no request",
	"Pacer":  "returns the tenant's pacer; no request",
	// Closes idle keep-alive connections (the pool, when the client ages out); no request.
	"CloseIdleConnections": "closes the client's idle connections; no request",
}

// proxyAttributesWritten are the proxy attributes the Product controller writes
// (controllers/product_syncer.go resolveProxy): UpdateProxy sends whatever keys it is given, so the
// conformance test checks these.
var proxyAttributesWritten = []string{
	"endpoint", "sandbox_endpoint", "credentials_location", "auth_user_key", "auth_app_id", "auth_app_key",
	"oidc_issuer_endpoint", "oidc_issuer_type", "jwt_claim_with_client_id", "jwt_claim_with_client_id_type",
	"hostname_rewrite", "secret_token",
	"error_status_auth_failed", "error_headers_auth_failed", "error_auth_failed",
	"error_status_auth_missing", "error_headers_auth_missing", "error_auth_missing",
	"error_status_no_match", "error_headers_no_match", "error_no_match",
	"error_status_limits_exceeded", "error_headers_limits_exceeded", "error_limits_exceeded",
}

func eachScope(f func(Scope) error) error {
	for _, s := range []Scope{ProductScope(11), BackendScope(21)} {
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

func everyAccountPlanField() AccountPlanParams {
	return AccountPlanParams{Name: "Partners", SystemName: "partners", ApprovalRequired: ptrTo(true), StateEvent: "publish"}
}

func everyProductField() ProductParams {
	return ProductParams{Name: "Shop", SystemName: "shop", Description: ptrTo("the shop"), DeploymentOption: "self_managed", BackendVersion: "oidc"}
}

func everyBackendField() BackendParams {
	return BackendParams{Name: "Stock", SystemName: "stock", Description: ptrTo("stock levels"), PrivateEndpoint: "https://stock.internal:8443"}
}

func everyMetricField() MetricParams {
	return MetricParams{SystemName: "bytes", FriendlyName: "Bytes", Unit: "byte", Description: "bytes out"}
}

func everyMethodField() MethodParams {
	return MethodParams{SystemName: "list", FriendlyName: "List", Description: "lists"}
}

func everyRuleField() MappingRuleParams {
	return MappingRuleParams{HTTPMethod: "GET", Pattern: "/items/{id}$", MetricID: 31, Delta: 2, Position: 3, Last: ptrTo(true)}
}

func everyPlanField() PlanParams {
	return PlanParams{Name: "Gold", SystemName: "gold", ApprovalRequired: ptrTo(true), TrialPeriodDays: ptrTo(int64(14)),
		SetupFee: "10.50", CostPerMonth: "99", StateEvent: "publish"}
}

// wireRequest is one request as it left the client.
type wireRequest struct {
	call        string // clientCalls key
	endpoint    string // the client's own template, from its Observer
	method      string
	path        string
	query       url.Values
	form        url.Values
	contentType string
	basicPass   string
	basicOK     bool
	rawURL      string
}

// recordClientRequests runs every clientCalls entry, in name order, against a responder that records
// each request and answers 200 {}.
func recordClientRequests(t *testing.T) []wireRequest {
	t.Helper()
	var mu sync.Mutex
	var sent []wireRequest
	var endpoints []string
	c, err := New(Config{AdminURL: "https://acme-admin.example.com", Token: conformanceToken, QPS: 1e6, Burst: 1e6,
		Observer: func(ci CallInfo) {
			mu.Lock()
			endpoints = append(endpoints, ci.Endpoint)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	httpmock.ActivateNonDefault(c.http.GetClient())
	t.Cleanup(httpmock.DeactivateAndReset)
	current := ""
	httpmock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		w := wireRequest{call: current, method: r.Method, path: r.URL.Path, query: r.URL.Query(), rawURL: r.URL.String(),
			contentType: r.Header.Get("Content-Type")}
		if r.Body != nil {
			raw, _ := io.ReadAll(r.Body)
			if len(raw) > 0 {
				w.form, _ = bodyForm(r, raw)
			}
		}
		_, w.basicPass, w.basicOK = r.BasicAuth()
		mu.Lock()
		sent = append(sent, w)
		mu.Unlock()
		return httpmock.NewStringResponse(200, emptyAnswer(r)), nil
	})
	names := make([]string, 0, len(clientCalls))
	for n := range clientCalls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mu.Lock()
		current = n
		mu.Unlock()
		if err := clientCalls[n](context.Background(), c); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	if len(endpoints) != len(sent) {
		t.Fatalf("observer saw %d attempts, the responder %d requests", len(endpoints), len(sent))
	}
	for i := range sent {
		sent[i].endpoint = endpoints[i]
	}
	return sent
}

// emptyAnswer is a 200 body the client accepts for any request: an empty list, in porta's shape for the
// path, to a GET (the key of a list answer is checked: see decodeList); a tenant to the master API and
// an account to Account Find; {} to the rest.
func emptyAnswer(r *http.Request) string {
	switch key := listKey(r.URL.Path); {
	case strings.HasPrefix(r.URL.Path, "/master/api/providers"):
		return `{"signup":{"account":{"id":16},"access_token":{"value":"v"}}}`
	case strings.HasSuffix(r.URL.Path, "/accounts/find.json"):
		return `{"account":{"id":16}}`
	case strings.HasSuffix(r.URL.Path, ".xml"):
		return `<?xml version="1.0" encoding="UTF-8"?><account></account>`
	case r.Method != http.MethodGet:
		return `{}`
	case key == "":
		return `[]`
	default:
		return fmt.Sprintf(`{%q:[]}`, key)
	}
}

// TestClientCallsAreAllEnumerated fails when *Client gains an exported method that clientCalls does not
// call: the conformance test would silently miss its requests.
func TestClientCallsAreAllEnumerated(t *testing.T) {
	typ := reflect.TypeOf(&Client{})
	var missing []string
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		_, called := clientCalls[name]
		_, exempt := callsWithoutRequest[name]
		if !called && !exempt {
			missing = append(missing, name)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("exported *Client methods missing from clientCalls (-want +got):\n%s", diff)
	}
	for name := range clientCalls {
		if _, ok := typ.MethodByName(name); !ok {
			t.Errorf("clientCalls lists %s, which *Client does not have", name)
		}
	}
}

// --- porta's OpenAPI description ---

type oasSchema struct {
	Ref        string                     `json:"$ref"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	// AdditionalProperties, when set and not false, declares parameters beyond Properties (an
	// account's fields, by their names).
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

// open tells whether a schema declares parameters beyond its properties.
func (s oasSchema) open() bool {
	return len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "false"
}

type oasParameter struct {
	Name        string `json:"name"`
	In          string `json:"in"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
}

type oasOperation struct {
	Parameters  []oasParameter `json:"parameters"`
	RequestBody struct {
		Content map[string]struct {
			Schema oasSchema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

// oasRoute is one path of the description, with its operations by upper-case method.
type oasRoute struct {
	template string // as written, extension removed: /admin/api/services/{service_id}/metrics
	segments []string
	ops      map[string]oasOperation
}

// declared is what an operation accepts besides its path parameters.
type declared struct {
	params      map[string]bool // query, header and body parameter names
	required    []string        // required ones, access_token excepted
	perPageMax  int             // the documented maximum of per_page, 0 if none
	contentType map[string]bool // request body media types
	open        bool            // any other body parameter is declared too (additionalProperties)
}

var documentedMax = regexp.MustCompile(`max is (\d+)`)

// loadPortaDescription reads porta's descriptions (portaDescriptions: the Account Management API's and
// the policy registry's) into routes.
func loadPortaDescription(t *testing.T) []oasRoute {
	t.Helper()
	byTemplate := map[string]*oasRoute{}
	for _, file := range portaDescriptions {
		loadPortaDescriptionFile(t, file, byTemplate)
	}
	routes := make([]oasRoute, 0, len(byTemplate))
	for _, r := range byTemplate {
		routes = append(routes, *r)
	}
	return routes
}

// loadPortaDescriptionFile adds the routes of one of porta's descriptions to byTemplate.
func loadPortaDescriptionFile(t *testing.T, file string, byTemplate map[string]*oasRoute) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]oasSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) == 0 {
		t.Fatalf("%s is not an OpenAPI 3 description with paths (openapi %q, %d paths)", file, doc.OpenAPI, len(doc.Paths))
	}
	for p, methods := range doc.Paths {
		tmpl := strings.TrimSuffix(strings.TrimSuffix(p, ".xml"), ".json")
		key := positional(tmpl)
		r, ok := byTemplate[key]
		if !ok {
			r = &oasRoute{template: tmpl, segments: strings.Split(tmpl, "/"), ops: map[string]oasOperation{}}
			byTemplate[key] = r
		}
		for m, rawOp := range methods {
			switch m {
			case "get", "put", "post", "delete", "patch":
			default:
				continue
			}
			var op oasOperation
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatalf("%s %s: %v", m, p, err)
			}
			for ct, c := range op.RequestBody.Content {
				if ref := c.Schema.Ref; ref != "" {
					s, ok := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
					if !ok {
						t.Fatalf("%s %s: unresolved %s", m, p, ref)
					}
					c.Schema = s
					op.RequestBody.Content[ct] = c
				}
			}
			r.ops[strings.ToUpper(m)] = op
		}
	}
}

// positional replaces every {name} by {}: porta's description names the same placeholder differently
// from one path to the next, only positions matter.
func positional(template string) string {
	segs := strings.Split(template, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// matchRoute finds the description's route of a concrete path (ids in place of placeholders).
func matchRoute(routes []oasRoute, path string) (*oasRoute, bool) {
	segs := strings.Split(strings.TrimSuffix(strings.TrimSuffix(path, ".json"), ".xml"), "/")
	for i := range routes {
		r := &routes[i]
		if len(r.segments) != len(segs) {
			continue
		}
		ok := true
		for j, s := range r.segments {
			if s == "{environment}" {
				// A proxy config's environment: the description's enum, sandbox or production.
				if segs[j] != EnvironmentSandbox && segs[j] != EnvironmentProduction {
					ok = false
					break
				}
				continue
			}
			if strings.HasPrefix(s, "{") {
				// Ids are numbers; an application key ({key}) is any text.
				if _, err := strconv.ParseInt(segs[j], 10, 64); err != nil && s != "{key}" {
					ok = false
					break
				}
			} else if s != segs[j] {
				ok = false
				break
			}
		}
		if ok {
			return r, true
		}
	}
	return nil, false
}

func (op oasOperation) declared() declared {
	d := declared{params: map[string]bool{}, contentType: map[string]bool{}}
	for _, p := range op.Parameters {
		if p.In == "path" {
			continue
		}
		d.params[p.Name] = true
		if p.Required && p.Name != "access_token" {
			d.required = append(d.required, p.Name)
		}
		if p.Name == "per_page" {
			if m := documentedMax.FindStringSubmatch(p.Description); m != nil {
				d.perPageMax, _ = strconv.Atoi(m[1])
			}
		}
	}
	for ct, c := range op.RequestBody.Content {
		d.contentType[ct] = true
		for name := range c.Schema.Properties {
			d.params[name] = true
		}
		d.open = d.open || c.Schema.open()
		for _, name := range c.Schema.Required {
			if name != "access_token" {
				d.required = append(d.required, name)
			}
		}
	}
	return d
}

// portaDescriptionGaps are what the client sends that porta's description does not declare, each checked
// against porta's source. Key: "METHOD template param" (template without extension, placeholders as in
// the description), or "METHOD template param=value" for a value beyond a documented maximum. An entry
// the client no longer needs fails the test, so the list stays true.
var portaDescriptionGaps = map[string]string{
	"PUT /admin/api/settings service_plans_ui_visible": "porta's SettingsController permits it (settings_controller.rb:18-22) and renders it; the description omits it",
	"POST /admin/api/cms/templates content_type":       "porta takes a page's content_type (TemplatesController AVAILABLE_PARAMS, templates_controller.rb:3-15; Page default text/html); the description omits it",
	"PUT /admin/api/cms/templates/{id} content_type":   "porta takes a page's content_type on update too (templates_controller.rb:3-15); the description omits it",
	"POST /admin/api/services/{service_id}/application_plans system_name": "the create body lists no system_name, but " +
		"porta's Admin::Api::ApplicationPlansController#application_plan_create_params permits DEFAULT_PARAMS | [:system_name]; " +
		"adoption by system name needs it",
	"PATCH /admin/api/services/{service_id}/proxy hostname_rewrite": "not in the description's proxy body; " +
		"Admin::Api::Services::ProxiesController#proxy_params permits :hostname_rewrite (Host header rewrite)",
	"PATCH /admin/api/services/{service_id}/proxy secret_token": "not in the description's proxy body; " +
		"Admin::Api::Services::ProxiesController#proxy_params permits :secret_token (X-3scale-proxy-secret-token)",
	"PATCH /admin/api/services/{service_id}/proxy error_headers_no_match": "the description lists error_headers_* for " +
		"auth_failed, auth_missing and limits_exceeded but not no_match; ProxiesController#proxy_params permits :error_headers_no_match",
	"GET /admin/api/application_plans/{application_plan_id}/limits per_page=500": "the description says 'Default and max is 50', " +
		"but ApplicationPlanLimitsController#index paginates with Admin::Api::Filters::Pagination#per_page, whose " +
		"per_page_range is 1..500; the client stops on a page shorter than 500, so a real cap of 50 would truncate the list",
	"GET /admin/api/services/{service_id}/backend_usages page": "the description declares no pagination, but " +
		"Admin::Api::Services::BackendUsagesController declares paginate only: :index and pages the usages with " +
		"pagination_params (porta app/controllers/admin/api/services/backend_usages_controller.rb:14,19): without page the " +
		"client would read the first 500 only",
	"GET /admin/api/services/{service_id}/backend_usages per_page": "as page: BackendUsagesController#index pages with " +
		"Admin::Api::Filters::Pagination#per_page, 1..500 (porta app/controllers/admin/api/filters/pagination.rb:26-27,60-68)",
	"PUT /master/api/providers/{id} account[state_event]": "master_api.json declares state_event unwrapped (TenantUpdateRequest), " +
		"but Master::Api::ProvidersController#update_account_params reads params.require(:account), and of a tenant scheduled " +
		"for deletion permits state_event only (porta app/controllers/master/api/providers_controller.rb:136-139); porta's " +
		"test of resume sends account[state_event] (test/integration/master/api/providers_controller_integration_test.rb:216-231). " +
		"Sent wrapped, it does not depend on wrap_parameters wrapping a top-level state_event",
}

// TestRequestsConformToPortaDescription checks every request the client can send against porta's
// OpenAPI description: the path exists, the method is declared (porta routes PUT and PATCH alike), every
// query and form parameter is declared for the operation (or a listed, verified gap), the required ones
// are sent, per_page stays within the documented maximum, the body's media type is declared, and the
// token travels only in the Authorization header.
func TestRequestsConformToPortaDescription(t *testing.T) {
	routes := loadPortaDescription(t)
	sent := recordClientRequests(t)
	gapsUsed := map[string]bool{}
	callsSeen := map[string]bool{}
	for _, r := range sent {
		callsSeen[r.call] = true
		where := r.call + ": " + r.method + " " + r.path
		if _, notAPI := notAPICalls[r.call]; notAPI {
			continue
		}
		if !r.basicOK || r.basicPass != conformanceToken {
			t.Errorf("%s: not authenticated by HTTP Basic with the token as password", where)
		}
		if strings.Contains(r.rawURL, conformanceToken) {
			t.Errorf("%s: the token is in the URL", where)
		}
		// JSON everywhere, but for the one read porta serves only as XML (an account with its users).
		format := ".json"
		if r.call == "UsersOfAccount" {
			format = ".xml"
		}
		if !strings.HasSuffix(r.path, format) {
			t.Errorf("%s: not a %s path", where, format)
		}
		if !strings.HasSuffix(r.endpoint, format) {
			t.Errorf("%s: endpoint template %q does not end in %s", where, r.endpoint, format)
		}
		route, ok := matchRoute(routes, r.path)
		if !ok {
			t.Errorf("%s: no such path in porta's description", where)
			continue
		}
		if positional(strings.TrimSuffix(r.endpoint, ".json")) != positional(route.template) {
			t.Errorf("%s: the client's endpoint template %q does not match the description's %q", where, r.endpoint, route.template)
		}
		op, ok := route.ops[r.method]
		if !ok && (r.method == http.MethodPut || r.method == http.MethodPatch) {
			op, ok = route.ops[map[string]string{http.MethodPut: http.MethodPatch, http.MethodPatch: http.MethodPut}[r.method]]
		}
		if !ok {
			t.Errorf("%s: porta's description declares no %s on %s", where, r.method, route.template)
			continue
		}
		d := op.declared()
		sentKeys := map[string]bool{}
		for k := range r.query {
			sentKeys[k] = true
		}
		for k := range r.form {
			sentKeys[k] = true
		}
		keys := make([]string, 0, len(sentKeys))
		for k := range sentKeys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "access_token" {
				t.Errorf("%s: sends access_token as a parameter; the token must only go in the Authorization header", where)
				continue
			}
			if d.params[k] || (d.open && !strings.Contains(k, "[")) { // additionalProperties are flat names
				continue
			}
			gap := r.method + " " + route.template + " " + k
			gapsUsed[gap] = true
			if _, listed := portaDescriptionGaps[gap]; !listed {
				t.Errorf("%s: sends %q, which porta's description does not declare for %s %s", where, k, r.method, route.template)
			}
		}
		for _, k := range d.required {
			if !sentKeys[k] {
				t.Errorf("%s: does not send %q, which porta's description requires", where, k)
			}
		}
		if pp := r.query.Get("per_page"); pp != "" && d.perPageMax > 0 {
			if n, _ := strconv.Atoi(pp); n > d.perPageMax {
				gap := r.method + " " + route.template + " per_page=" + pp
				gapsUsed[gap] = true
				if _, listed := portaDescriptionGaps[gap]; !listed {
					t.Errorf("%s: per_page=%s is beyond the documented maximum %d", where, pp, d.perPageMax)
				}
			}
		}
		if len(r.form) > 0 {
			ct, _, _ := strings.Cut(r.contentType, ";")
			if !d.contentType[ct] {
				t.Errorf("%s: body sent as %q; the description takes %v", where, ct, d.contentType)
			}
		}
		if len(r.query) > 0 && len(r.form) > 0 {
			t.Errorf("%s: parameters split between the query (%v) and the body (%v)", where, r.query, r.form)
		}
	}
	for gap := range portaDescriptionGaps {
		if !gapsUsed[gap] {
			t.Errorf("portaDescriptionGaps lists %q, but the client sends nothing undeclared there: remove the entry", gap)
		}
	}
	for name := range clientCalls {
		if !callsSeen[name] {
			t.Errorf("%s sent no request", name)
		}
	}
}

// TestDescriptionGapsAreRealGaps makes sure each allow-listed parameter is indeed absent from the
// description (and so is not hiding a typo in the client), and that the route and method exist.
func TestDescriptionGapsAreRealGaps(t *testing.T) {
	routes := loadPortaDescription(t)
	byTemplate := map[string]oasRoute{}
	for _, r := range routes {
		byTemplate[r.template] = r
	}
	for gap := range portaDescriptionGaps {
		fields := strings.Fields(gap)
		if len(fields) != 3 {
			t.Errorf("%q: want METHOD template param", gap)
			continue
		}
		method, template, param := fields[0], fields[1], fields[2]
		r, ok := byTemplate[template]
		if !ok {
			t.Errorf("%q: no route %s in the description", gap, template)
			continue
		}
		op, ok := r.ops[method]
		if !ok {
			t.Errorf("%q: no %s on %s in the description", gap, method, template)
			continue
		}
		d := op.declared()
		if name, value, isValue := strings.Cut(param, "="); isValue {
			n, _ := strconv.Atoi(value)
			if !d.params[name] || d.perPageMax == 0 || n <= d.perPageMax {
				t.Errorf("%q: the description does not cap %s below %s", gap, name, value)
			}
			continue
		}
		if d.params[param] {
			t.Errorf("%q: the description declares %s: not a gap", gap, param)
		}
	}
}
