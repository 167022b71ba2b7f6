package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

// Porta's answers of the master API and of master's Account Management API, as its representers write
// them (SignupResultWithAccessTokenRepresenter, AccountRepresenter for a provider, AccessTokenRepresenter,
// UserRepresenter); the shapes of 3scale-porta-go-client's fixtures (client/testdata/create_tenant_response.json,
// show_tenant_response.json, user_list_response_fixture.json) with today's token name and scopes.
const (
	portaTenant = `{"id":48,"created_at":"2026-02-08T18:20:58Z","updated_at":"2026-02-08T18:20:59Z",
		"admin_domain":"globex-admin.apps.example.com","domain":"globex.apps.example.com",
		"admin_base_url":"https://globex-admin.apps.example.com","base_url":"https://globex.apps.example.com",
		"from_email":"no-reply@apps.example.com","support_email":"admin@globex.example","finance_support_email":"admin@globex.example",
		"site_access_code":"6d4a5fa0cd","credit_card_stored":false,"monthly_billing_enabled":true,"monthly_charging_enabled":true,
		"state":"approved","annotations":{"managed_by":"operator"},
		"links":[{"rel":"users","href":"https://master.apps.example.com/admin/api/accounts/48/users"}],"org_name":"Globex"}`
	portaScheduledTenant = `{"id":48,"created_at":"2026-02-08T18:20:58Z","updated_at":"2026-03-01T09:00:00Z","deletion_date":"2026-03-16T09:00:00Z",
		"admin_domain":"globex-admin.apps.example.com","domain":"globex.apps.example.com",
		"admin_base_url":"https://globex-admin.apps.example.com","base_url":"https://globex.apps.example.com",
		"credit_card_stored":false,"monthly_billing_enabled":true,"monthly_charging_enabled":true,"state":"scheduled_for_deletion",
		"annotations":{},"links":[{"rel":"users","href":"https://master.apps.example.com/admin/api/accounts/48/users"}],"org_name":"Globex"}`
	portaAdministrationToken = `{"id":53,"name":"Administration","scopes":["account_management","policy_registry"],"permission":"rw",
		"value":"9aac6a6e2e7a5837603aea9406ace278184a3016107c22481ffe18d7c9e8417d"}`
	portaTenantUsers = `{"users":[
		{"user":{"id":74,"state":"pending","role":"admin","created_at":"2026-02-08T18:20:58Z","updated_at":"2026-02-08T18:20:58Z",
			"links":[{"rel":"self","href":"https://master.apps.example.com/admin/api/users/74"}],"username":"admin","email":"admin@globex.example"}},
		{"user":{"id":75,"state":"active","role":"admin","created_at":"2026-02-08T18:20:58Z","updated_at":"2026-02-08T18:20:58Z",
			"links":[{"rel":"self","href":"https://master.apps.example.com/admin/api/users/75"}],"username":"3scaleadmin",
			"email":"3scaleadmin+globex.apps.example.com@3scale.net"}}]}`
	portaTenantAdmin = `{"id":74,"state":"active","role":"admin","created_at":"2026-02-08T18:20:58Z","updated_at":"2026-02-09T10:00:00Z",
		"links":[],"username":"admin","email":"admin@globex.example"}`
)

var (
	wantTenant = Tenant{ID: 48, OrgName: "Globex", State: "approved", AdminDomain: "globex-admin.apps.example.com",
		Domain: "globex.apps.example.com", AdminBaseURL: "https://globex-admin.apps.example.com"}
	wantScheduledTenant = Tenant{ID: 48, OrgName: "Globex", State: "scheduled_for_deletion", AdminDomain: "globex-admin.apps.example.com",
		Domain: "globex.apps.example.com", AdminBaseURL: "https://globex-admin.apps.example.com", DeletionDate: "2026-03-16T09:00:00Z"}
	wantTenantUsers = []User{{ID: 74, Username: "admin", Email: "admin@globex.example", Role: "admin", State: "pending"},
		{ID: 75, Username: "3scaleadmin", Email: "3scaleadmin+globex.apps.example.com@3scale.net", Role: "admin", State: "active"}}
)

// exchange is one request a call makes and porta's answer to it.
type exchange struct {
	want seenRequest
	code int
	body string
}

// exchangeCase is a contract case of a call that may make more than one request: its exchanges, in
// order, and what it returns.
type exchangeCase struct {
	call       func(ctx context.Context, c *Client) (any, error)
	exchanges  []exchange
	wantResult any
}

// methodsOf are the client methods cases cover (a case's name starts with its method's, up to ":").
func methodsOf(cases map[string]exchangeCase) map[string]bool {
	out := map[string]bool{}
	for name := range cases {
		method, _, _ := strings.Cut(name, ":")
		out[method] = true
	}
	return out
}

// runExchangeCases runs cases against a client of adminURL: each request porta receives (method, path,
// query, form body field by field, HTTP Basic auth with the token as password and never in the URL),
// in order, and the decoding of porta's answers.
func runExchangeCases(t *testing.T, adminURL string, cases map[string]exchangeCase) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{AdminURL: adminURL})
			log := &requestLog{}
			n := 0
			httpmock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
				if n >= len(tc.exchanges) {
					return nil, fmt.Errorf("request %d (%s %s) not expected", n+1, r.Method, r.URL.Path)
				}
				e := tc.exchanges[n]
				n++
				return log.responder(e.code, e.body, nil)(r)
			})
			got, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			want := make([]seenRequest, 0, len(tc.exchanges))
			for _, e := range tc.exchanges {
				want = append(want, e.want)
			}
			if diff := cmp.Diff(want, log.requests); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			for _, p := range log.problems {
				t.Error(p)
			}
			if tc.wantResult == nil {
				return
			}
			if diff := cmp.Diff(tc.wantResult, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// masterContractCases are the contract cases of the master calls, which may make more than one request
// each (a signup reads the tenant's users for its admin; a find checks its candidate's users): each
// request, in order, is checked field by field, and answered as porta does. TestEveryCallContract counts
// them as its own (masterCallsWithContract).
var masterContractCases = map[string]exchangeCase{
	"SignupTenant: the signup, then the tenant's users for the admin's id": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.SignupTenant(ctx, TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example", Password: "a-strong-passw0rd"})
		},
		exchanges: []exchange{
			{seenRequest{Method: "POST", Path: "/master/api/providers.json", Form: url.Values{"org_name": {"Globex"}, "username": {"admin"},
				"email": {"admin@globex.example"}, "password": {"a-strong-passw0rd"}}},
				201, `{"signup":{"account":` + portaTenant + `,"access_token":` + portaAdministrationToken + `}}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 200, portaTenantUsers},
		},
		wantResult: &TenantSignup{Tenant: wantTenant, AccessToken: "9aac6a6e2e7a5837603aea9406ace278184a3016107c22481ffe18d7c9e8417d", AdminUserID: 74},
	},
	"SignupTenant: no password sent when empty; the admin's id stays 0 when the users cannot be read": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.SignupTenant(ctx, TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example"})
		},
		exchanges: []exchange{
			{seenRequest{Method: "POST", Path: "/master/api/providers.json", Form: url.Values{"org_name": {"Globex"}, "username": {"admin"},
				"email": {"admin@globex.example"}}},
				201, `{"signup":{"account":` + portaTenant + `,"access_token":` + portaAdministrationToken + `}}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 403, `{"status":"Forbidden"}`},
		},
		wantResult: &TenantSignup{Tenant: wantTenant, AccessToken: "9aac6a6e2e7a5837603aea9406ace278184a3016107c22481ffe18d7c9e8417d"},
	},
	"GetTenant: without token": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetTenant(ctx, 48) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/master/api/providers/48.json"}, 200,
			`{"signup":{"account":` + portaTenant + `}}`}},
		wantResult: &wantTenant,
	},
	"GetTenant: scheduled for deletion, with its deletion date": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetTenant(ctx, 48) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/master/api/providers/48.json"}, 200,
			`{"signup":{"account":` + portaScheduledTenant + `}}`}},
		wantResult: &wantScheduledTenant,
	},
	"DeleteTenant: 200 with no body": {
		call:      func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteTenant(ctx, 48) },
		exchanges: []exchange{{seenRequest{Method: "DELETE", Path: "/master/api/providers/48.json"}, 200, ``}},
	},
	"ResumeTenant: the state event wrapped in account": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ResumeTenant(ctx, 48) },
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/master/api/providers/48.json", Form: url.Values{"account[state_event]": {"resume"}}},
			200, `{"signup":{"account":` + portaTenant + `}}`}},
		wantResult: &wantTenant,
	},
	"ListTenantUsers: the impersonation admin included": {
		call:       func(ctx context.Context, c *Client) (any, error) { return c.ListTenantUsers(ctx, 48) },
		exchanges:  []exchange{{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 200, portaTenantUsers}},
		wantResult: wantTenantUsers,
	},
	"ActivateTenantUser": {
		call: func(ctx context.Context, c *Client) (any, error) { return nil, c.ActivateTenantUser(ctx, 48, 74) },
		exchanges: []exchange{{seenRequest{Method: "PUT", Path: "/admin/api/accounts/48/users/74/activate.json"}, 200,
			`{"user":` + portaTenantAdmin + `}`}},
	},
	"ListTenants: master's accounts, paginated": {
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListTenants(ctx) },
		exchanges: []exchange{{seenRequest{Method: "GET", Path: "/admin/api/accounts.json", Query: paged(1)}, 200,
			`{"accounts":[{"account":` + portaTenant + `},{"account":` + portaScheduledTenant + `}]}`}},
		wantResult: []Tenant{wantTenant, wantScheduledTenant},
	},
	"FindTenant: by username, checked against the tenant's users": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.FindTenant(ctx, "admin", "admin@globex.example")
		},
		exchanges: []exchange{
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/find.json", Query: url.Values{"username": {"admin"}}}, 200,
				`{"account":` + portaTenant + `}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 200, portaTenantUsers},
		},
		wantResult: &wantTenant,
	},
	"FindTenant: another tenant's admin has the username: by email": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.FindTenant(ctx, "admin", "admin@globex.example")
		},
		exchanges: []exchange{
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/find.json", Query: url.Values{"username": {"admin"}}}, 200,
				`{"account":{"id":12,"org_name":"Acme","state":"approved","admin_domain":"acme-admin.apps.example.com"}}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/12/users.json"}, 200,
				`{"users":[{"user":{"id":20,"state":"active","role":"admin","username":"admin","email":"admin@acme.example"}}]}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/find.json", Query: url.Values{"email": {"admin@globex.example"}}}, 200,
				`{"account":` + portaTenant + `}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 200, portaTenantUsers},
		},
		wantResult: &wantTenant,
	},
	"FindTenant: by email alone": {
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.FindTenant(ctx, "", "admin@globex.example")
		},
		exchanges: []exchange{
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/find.json", Query: url.Values{"email": {"admin@globex.example"}}}, 200,
				`{"account":` + portaTenant + `}`},
			{seenRequest{Method: "GET", Path: "/admin/api/accounts/48/users.json"}, 200, portaTenantUsers},
		},
		wantResult: &wantTenant,
	},
}

// masterCallsWithContract are the methods masterContractCases covers.
func masterCallsWithContract() map[string]bool { return methodsOf(masterContractCases) }

// TestMasterCallsContract checks, for every master call, each request porta receives, in order, and
// the decoding of porta's answers.
func TestMasterCallsContract(t *testing.T) {
	runExchangeCases(t, "https://master.apps.example.com", masterContractCases)
}

// TestMasterRefusalsAsPortaSendsThem answers the master calls with porta's refusals and checks how the
// client classifies them: a token that is not master's (401, text), one without the scope (403 JSON),
// a host that is not master's (403, no body), an unknown or already scheduled tenant (404), porta's
// validation of a signup (422) and a resume of a tenant that is not scheduled (422).
func TestMasterRefusalsAsPortaSendsThem(t *testing.T) {
	signup := func(ctx context.Context, c *Client) error {
		_, err := c.SignupTenant(ctx, TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example", Password: "a-strong-passw0rd"})
		return err
	}
	get := func(ctx context.Context, c *Client) error { _, err := c.GetTenant(ctx, 48); return err }
	del := func(ctx context.Context, c *Client) error { return c.DeleteTenant(ctx, 48) }
	resume := func(ctx context.Context, c *Client) error { _, err := c.ResumeTenant(ctx, 48); return err }
	cases := map[string]errorCase{
		// authenticate_access_token plain: 'unauthorized' (providers_controller.rb:9).
		"a token that is not master's: unauthorized": {
			call: signup, respond: answer(401, `unauthorized`, "Content-Type", "text/plain; charset=utf-8"),
			want:        errorClasses{Unauthorized: true, Terminal: true},
			wantMessage: "3scale: POST /master/api/providers.json: 401 Unauthorized: unauthorized",
		},
		// by_access_token.rb:100-103,123-135: no account_management scope, a ro token, a member without partners.
		"a token without the scope: forbidden": {
			call: get, respond: answer(403, `{"error":"Your access token does not have the correct permissions"}`),
			want:        errorClasses{Forbidden: true, Terminal: true},
			wantMessage: "3scale: GET /master/api/providers/{id}.json: 403 Forbidden: Your access token does not have the correct permissions",
		},
		// Master::BaseController#force_master_domain: head 403.
		"a host that is not master's: forbidden": {
			call: del, respond: answer(403, ``),
			want:        errorClasses{Forbidden: true, Terminal: true},
			wantMessage: "3scale: DELETE /master/api/providers/{id}.json: 403 Forbidden",
		},
		"an unknown tenant, or one already scheduled for deletion: not found": {
			call: del, respond: answer(404, `{"status":"Not found"}`),
			want:        errorClasses{NotFound: true},
			wantMessage: "3scale: DELETE /master/api/providers/{id}.json: 404 Not Found: Not found",
		},
		// Signup::Result#errors: full messages under account and user (result.rb:49-54).
		"a signup porta refuses: invalid": {
			call: signup, respond: answer(422, `{"errors":{"account":["Users invalid"],"user":["Password is too short (minimum is 15 characters)"]}}`),
			want: errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /master/api/providers.json: 422 Unprocessable Entity: account Users invalid; " +
				"user Password is too short (minimum is 15 characters)",
		},
		"master without its plans: invalid": {
			call: signup, respond: answer(422, `{"error":"Provider signup not enabled."}`),
			want: errorClasses{Invalid: true, Terminal: true}, wantInText: "Provider signup not enabled.",
		},
		// The state machine's invalid_event (config/locales/en.yml:1958).
		"resuming a tenant that is approved: invalid": {
			call: resume, respond: answer(422, `{"errors":{"account":["State event cannot transition when approved"]}}`),
			want: errorClasses{Invalid: true, Terminal: true}, wantInText: "State event cannot transition when approved",
		},
		"a signup answer without the token's value: an error saying the tenant was made": {
			call: signup, respond: answer(201, `{"signup":{"account":`+portaTenant+`,"access_token":{"id":53,"name":"Administration"}}}`),
			want: errorClasses{Terminal: true}, wantInText: "tenant 48 was created",
		},
	}
	runErrorCases(t, cases)
}

// TestSignupErrorsNeverQuoteThePassword: whatever porta (or a proxy before it) answers to a signup,
// echoing the request included, and when no answer comes, the error never contains the password, nor
// the token.
func TestSignupErrorsNeverQuoteThePassword(t *testing.T) {
	const password = "Sup3r-secret-passw0rd!"
	echo := func(code int, contentType string) httpmock.Responder {
		return func(r *http.Request) (*http.Response, error) {
			_ = r.ParseForm()
			body := fmt.Sprintf(`{"errors":{"user":["Password %s is not allowed"],"account":["%s"]}}`, r.PostForm.Get("password"), r.Form.Encode())
			if contentType != "application/json" {
				body = "<html><title>Bad request " + r.PostForm.Get("password") + "</title></html>"
			}
			resp := httpmock.NewStringResponse(code, body)
			resp.Header.Set("Content-Type", contentType)
			return resp, nil
		}
	}
	cases := map[string]httpmock.Responder{
		"422 quoting the password":           echo(422, "application/json"),
		"a proxy's page quoting the request": echo(400, "text/html"),
		"no answer":                          httpmock.NewErrorResponder(errors.New("connection reset by peer: password=" + password)),
	}
	for name, respond := range cases {
		t.Run(name, func(t *testing.T) {
			c := newContractClient(t, Config{AdminURL: "https://master.apps.example.com", ReadRetries: -1})
			httpmock.RegisterNoResponder(respond)
			_, err := c.SignupTenant(context.Background(), TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example", Password: password})
			if err == nil {
				t.Fatal("no error")
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				for _, text := range []string{e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
					if strings.Contains(text, password) || strings.Contains(text, url.QueryEscape(password)) || strings.Contains(text, contractToken) {
						t.Errorf("error %q quotes the password or the token", text)
					}
				}
			}
			if !strings.HasPrefix(err.Error(), "3scale: POST /master/api/providers.json: ") {
				t.Errorf("error %q does not say which call failed", err)
			}
		})
	}
}

// TestTenantSignupPrintsNoToken: a signup printed by mistake (%v, %+v, %#v, %s) never shows the token.
func TestTenantSignupPrintsNoToken(t *testing.T) {
	s := TenantSignup{Tenant: wantTenant, AccessToken: "9aac6a6e2e7a5837603aea9406ace278", AdminUserID: 74}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{s, &s} {
			if text := fmt.Sprintf(verb, v); strings.Contains(text, s.AccessToken) || !strings.Contains(text, "globex-admin.apps.example.com") {
				t.Errorf("%s: %q", verb, text)
			}
		}
	}
}
