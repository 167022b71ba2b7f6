package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

const testToken = "very-secret-token"

func mockClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.AdminURL == "" {
		cfg.AdminURL = "https://acme-admin.example.com"
	}
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	httpmock.ActivateNonDefault(c.http.GetClient())
	t.Cleanup(httpmock.DeactivateAndReset)
	return c
}

// checkAuth fails the request unless it carries the token as porta takes it: HTTP Basic, token as password.
func checkAuth(r *http.Request) error {
	if _, pass, ok := r.BasicAuth(); !ok || pass != testToken {
		return errors.New("no Basic auth with the token")
	}
	if strings.Contains(r.URL.String(), testToken) {
		return errors.New("the token is in the URL")
	}
	return nil
}

func respond(code int, body string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		if err := checkAuth(r); err != nil {
			return httpmock.NewStringResponse(599, err.Error()), nil
		}
		resp := httpmock.NewStringResponse(code, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// TestDecodesPortaShapes checks a call of each response shape: list wrappers, single wrappers, the bare
// array of backend usages, the policy chain, and decimals sent as numbers.
func TestDecodesPortaShapes(t *testing.T) {
	c := mockClient(t, Config{})
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services.json",
		respond(200, `{"services":[{"service":{"id":1,"name":"Pets","system_name":"pets","backend_version":"1","deployment_option":"hosted"}}]}`))
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1/backend_usages.json",
		respond(200, `[{"backend_usage":{"id":3,"path":"/v1","service_id":1,"backend_id":9}}]`))
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1/proxy/policies.json",
		respond(200, `{"policies_config":[{"name":"apicast","version":"builtin","configuration":{},"enabled":true}]}`))
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1/application_plans/7.json",
		respond(200, `{"application_plan":{"id":7,"name":"Basic","system_name":"basic","state":"published","setup_fee":10.5,"cost_per_month":"3.0"}}`))
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1/metrics.json",
		respond(200, `{"metrics":[{"metric":{"id":2,"name":"hits","friendly_name":"Hits","unit":"hit"}},{"metric":{"id":4,"name":"list","friendly_name":"List","parent_id":2}}]}`))
	ctx := context.Background()

	products, err := c.ListProducts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Product{{ID: 1, Name: "Pets", SystemName: "pets", BackendVersion: "1", DeploymentOption: "hosted"}}, products); diff != "" {
		t.Errorf("products (-want +got):\n%s", diff)
	}
	usages, err := c.ListBackendUsages(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]BackendUsage{{ID: 3, Path: "/v1", ServiceID: 1, BackendID: 9}}, usages); diff != "" {
		t.Errorf("usages (-want +got):\n%s", diff)
	}
	chain, err := c.GetPolicies(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 1 || chain[0].Name != "apicast" || !chain[0].Enabled || string(chain[0].Configuration) != "{}" {
		t.Errorf("policies = %+v", chain)
	}
	plan, err := c.GetPlan(ctx, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if plan.SetupFee != "10.5" || plan.CostPerMonth != "3.0" || plan.State != "published" {
		t.Errorf("plan = %+v", plan)
	}
	metrics, err := c.ListMetrics(ctx, ProductScope(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(metrics) != 2 || metrics[0].SystemName != "hits" || metrics[1].ParentID != 2 {
		t.Errorf("metrics = %+v (system name must default to porta's name)", metrics)
	}
}

// TestWritesFormFields checks the form body of writes field by field.
func TestWritesFormFields(t *testing.T) {
	cases := map[string]struct {
		call     func(c *Client) error
		method   string
		url      string
		wantForm map[string]string
	}{
		"create backend": {
			call: func(c *Client) error {
				_, err := c.CreateBackend(context.Background(), BackendParams{Name: "Pets", SystemName: "pets", Description: strp(""), PrivateEndpoint: "https://p"})
				return err
			},
			method: "POST", url: "/admin/api/backend_apis.json",
			wantForm: map[string]string{"name": "Pets", "system_name": "pets", "description": "", "private_endpoint": "https://p"},
		},
		"update plan publishes and never sends the system name": {
			call: func(c *Client) error {
				_, err := c.UpdatePlan(context.Background(), 1, 7, PlanParams{Name: "B", SystemName: "b", ApprovalRequired: boolp(false), StateEvent: "publish"})
				return err
			},
			method: "PUT", url: "/admin/api/services/1/application_plans/7.json",
			wantForm: map[string]string{"name": "B", "approval_required": "false", "state_event": "publish"},
		},
		"limit with value 0 sends the 0": {
			call: func(c *Client) error {
				_, err := c.CreateLimit(context.Background(), 7, 2, LimitParams{Period: "eternity", Value: 0})
				return err
			},
			method: "POST", url: "/admin/api/application_plans/7/metrics/2/limits.json",
			wantForm: map[string]string{"period": "eternity", "value": "0"},
		},
		"policies as a JSON array in policies_config": {
			call: func(c *Client) error {
				_, err := c.UpdatePolicies(context.Background(), 1, []Policy{{Name: "cors", Version: "builtin", Enabled: true}})
				return err
			},
			method: "PUT", url: "/admin/api/services/1/proxy/policies.json",
			wantForm: map[string]string{"policies_config": `[{"name":"cors","version":"builtin","configuration":{},"enabled":true}]`},
		},
		"backend mapping rule update is a PUT": {
			call: func(c *Client) error {
				_, err := c.UpdateMappingRule(context.Background(), BackendScope(5), 4, MappingRuleParams{HTTPMethod: "GET", Pattern: "/x", MetricID: 2, Delta: 3})
				return err
			},
			method: "PUT", url: "/admin/api/backend_apis/5/mapping_rules/4.json",
			wantForm: map[string]string{"http_method": "GET", "pattern": "/x", "metric_id": "2", "delta": "3"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := mockClient(t, Config{})
			var got map[string]string
			httpmock.RegisterResponder(tc.method, "https://acme-admin.example.com"+tc.url, func(r *http.Request) (*http.Response, error) {
				if err := checkAuth(r); err != nil {
					return nil, err
				}
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
					return nil, fmt.Errorf("content type %q", ct)
				}
				_ = r.ParseForm()
				got = map[string]string{}
				for k := range r.PostForm {
					got[k] = r.PostForm.Get(k)
				}
				return httpmock.NewStringResponse(200, `{}`), nil
			})
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantForm, got); diff != "" {
				t.Errorf("form (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPaginationReadsEverything reads 1201 backends over three pages of 500.
func TestPaginationReadsEverything(t *testing.T) {
	c := mockClient(t, Config{QPS: 1000, Burst: 1000})
	var pages []string
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/backend_apis.json", func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		pages = append(pages, q.Get("page")+"/"+q.Get("per_page"))
		var page int
		fmt.Sscan(q.Get("page"), &page)
		n := 500
		if page == 3 {
			n = 201
		}
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"backend_api":{"id":%d}}`, (page-1)*500+i+1)
		}
		return httpmock.NewStringResponse(200, `{"backend_apis":[`+strings.Join(items, ",")+`]}`), nil
	})
	all, err := c.ListBackends(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1201 || all[1200].ID != 1201 {
		t.Errorf("read %d backends, want 1201", len(all))
	}
	if diff := cmp.Diff([]string{"1/500", "2/500", "3/500"}, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

// TestErrorClassification maps porta's answers to the error helpers.
func TestErrorClassification(t *testing.T) {
	type verdict struct {
		NotFound, Invalid, Taken, InUse, Forbidden, Unauthorized, RateLimited, Unavailable, Retryable, Terminal bool
	}
	cases := map[string]struct {
		method, body string
		code         int
		want         verdict
		wantMsg      string
	}{
		"404":                     {method: "GET", code: 404, body: `{"status":"Not found"}`, want: verdict{NotFound: true}, wantMsg: "404 Not Found: Not found"},
		"422 taken":               {method: "POST", code: 422, body: `{"errors":{"system_name":["has already been taken"]}}`, want: verdict{Invalid: true, Taken: true, Terminal: true}, wantMsg: "system_name has already been taken"},
		"422 base":                {method: "POST", code: 422, body: `{"errors":["is invalid"]}`, want: verdict{Invalid: true, Terminal: true}, wantMsg: "is invalid"},
		"403 in use":              {method: "DELETE", code: 403, body: `{"errors":{"base":["cannot be deleted because it is used by at least one Product"]}}`, want: verdict{InUse: true, Terminal: true}, wantMsg: "used by at least one Product"},
		"422 on delete is in use": {method: "DELETE", code: 422, body: `{"errors":{"base":["cannot be deleted because it is used by products"]}}`, want: verdict{Invalid: true, InUse: true, Terminal: true}, wantMsg: "used by products"},
		"403 access denied":       {method: "GET", code: 403, body: `{"error":"Access denied"}`, want: verdict{Forbidden: true, Terminal: true}, wantMsg: "Access denied"},
		"401":                     {method: "GET", code: 401, body: `{"error":"unauthorized"}`, want: verdict{Unauthorized: true, Terminal: true}},
		"429":                     {method: "GET", code: 429, body: `{}`, want: verdict{RateLimited: true, Retryable: true}},
		"503":                     {method: "GET", code: 503, body: `<html>down</html>`, want: verdict{Unavailable: true, Retryable: true}, wantMsg: "down"},
		"409":                     {method: "PUT", code: 409, body: `{}`, want: verdict{Retryable: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := mockClient(t, Config{})
			httpmock.RegisterResponder(tc.method, "https://acme-admin.example.com/admin/api/backend_apis/1.json", respond(tc.code, tc.body))
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			err := c.do(ctx, call{method: tc.method, endpoint: "/admin/api/backend_apis/{id}.json", args: []any{1}, form: nil}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			got := verdict{IsNotFound(err), IsInvalid(err), HasAlreadyBeenTaken(err, "system_name"), IsInUse(err), IsForbidden(err), IsUnauthorized(err),
				IsRateLimited(err), IsUnavailable(err), IsRetryable(err), IsTerminal(err)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "/admin/api/backend_apis/{id}.json") {
				t.Errorf("message %q should name the endpoint and contain %q", err, tc.wantMsg)
			}
		})
	}
}

// TestTransportErrorsAreUnavailableAndNeverLeakTheToken uses a closed server.
func TestTransportErrorsAreUnavailableAndNeverLeakTheToken(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := New(Config{AdminURL: url, Token: testToken, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetProduct(context.Background(), 1)
	if !IsUnavailable(err) || !IsRetryable(err) {
		t.Errorf("a refused connection is not Unavailable: %v", err)
	}
	if strings.Contains(err.Error(), testToken) || strings.Contains(fmt.Sprint(c), testToken) || strings.Contains(fmt.Sprintf("%+v", err), testToken) {
		t.Errorf("the token leaked: %v", err)
	}
}

// TestRetryAfterIsHonoured: a 429 with Retry-After: 1 is retried once after about a second.
func TestRetryAfterIsHonoured(t *testing.T) {
	c := mockClient(t, Config{})
	var calls atomic.Int32
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1.json", func(*http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			r := httpmock.NewStringResponse(429, `{}`)
			r.Header.Set("Retry-After", "1")
			return r, nil
		}
		return httpmock.NewStringResponse(200, `{"service":{"id":1}}`), nil
	})
	start := time.Now()
	p, err := c.GetProduct(context.Background(), 1)
	if err != nil || p.ID != 1 {
		t.Fatalf("GetProduct = %v, %v", p, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v, want about 1s", d)
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2", calls.Load())
	}
}

// TestInFlightCapAndObserver: at most MaxInFlight requests at once; the observer sees each attempt.
func TestInFlightCapAndObserver(t *testing.T) {
	var mu sync.Mutex
	var seen []CallInfo
	c := mockClient(t, Config{MaxInFlight: 2, QPS: 1000, Burst: 1000, Observer: func(ci CallInfo) {
		mu.Lock()
		seen = append(seen, ci)
		mu.Unlock()
	}})
	var peak atomic.Int32
	httpmock.RegisterResponder("GET", `=~^https://acme-admin.example.com/admin/api/backend_apis/\d+\.json`,
		peakResponder(&peak, 20*time.Millisecond, `{"backend_api":{"id":1}}`))
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.GetBackend(context.Background(), int64(i+1))
		}()
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Errorf("%d requests in flight, want at most 2", peak.Load())
	}
	if len(seen) != 10 || seen[0].Endpoint != "/admin/api/backend_apis/{id}.json" || seen[0].Method != "GET" || seen[0].Code != 200 {
		t.Errorf("observer saw %d calls, first %+v", len(seen), seen[0])
	}
}

// TestRateLimit: with QPS 20 and burst 1, 6 calls take at least ~250ms.
func TestRateLimit(t *testing.T) {
	c := mockClient(t, Config{QPS: 20, Burst: 1})
	httpmock.RegisterResponder("DELETE", `=~^https://acme-admin.example.com/admin/api/services/\d+\.json`, respond(200, ``))
	start := time.Now()
	for i := range 6 {
		if err := c.DeleteProduct(context.Background(), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 240*time.Millisecond {
		t.Errorf("6 calls at 20 QPS took %v, want at least 250ms", d)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	cases := map[string]struct {
		cfg  Config
		want string
	}{
		"relative URL": {cfg: Config{AdminURL: "acme-admin.example.com", Token: "t"}, want: "not an absolute http(s) URL"},
		"no token":     {cfg: Config{AdminURL: "https://a"}, want: "token is empty"},
		"bad CA":       {cfg: Config{AdminURL: "https://a", Token: "t", CABundle: []byte("nope")}, want: "no PEM certificate"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	c, err := New(Config{AdminURL: "http://127.0.0.1:8080/t/acme/", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.http.BaseURL; got != "http://127.0.0.1:8080/t/acme" {
		t.Errorf("base URL %q: the path prefix must be kept", got)
	}
}

// TestNotSent: a request whose wait for the tenant's pacing ended, or whose connection the admin URL
// policy refused, never reached 3scale, and says so; a failure after the request may have left does not.
func TestNotSent(t *testing.T) {
	c := mockClient(t, Config{MaxInFlight: 1})
	var calls atomic.Int32
	release := make(chan struct{})
	httpmock.RegisterResponder("POST", "https://acme-admin.example.com/admin/api/backend_apis.json", func(*http.Request) (*http.Response, error) {
		calls.Add(1)
		<-release
		return httpmock.NewStringResponse(201, `{"backend_api":{"id":1}}`), nil
	})
	httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1.json", respond(500, `{}`))
	go func() {
		_, _ = c.CreateBackend(context.Background(), BackendParams{Name: "a", PrivateEndpoint: "https://a.internal"})
	}()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.CreateBackend(ctx, BackendParams{Name: "b", PrivateEndpoint: "https://b.internal"})
	close(release)
	if !NotSent(err) || calls.Load() != 1 {
		t.Errorf("a create that waited for its slot past its deadline: %v (not sent: %v), %d requests sent; want not sent, 1 request", err, NotSent(err), calls.Load())
	}
	if _, err := c.GetProduct(context.Background(), 1); err == nil || NotSent(err) {
		t.Errorf("a request answered 500 says it was not sent: %v", err)
	}

	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	refused, err := New(Config{AdminURL: srv.URL, Token: testToken, Policy: &AdminURLPolicy{AllowInsecureHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refused.GetProduct(context.Background(), 1); !NotSent(err) {
		t.Errorf("a connection the policy refused says it was sent: %v", err)
	}
	srv.Close()
	gone, err := New(Config{AdminURL: srv.URL, Token: testToken, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.GetProduct(context.Background(), 1); err == nil || NotSent(err) {
		t.Errorf("a connection error says the request was not sent: %v", err)
	}
}

// TestTransportErrorsNeverQuoteTheURL: a lost answer to a call with a credential in its path (an
// application key) or query is told from the method and the endpoint template; neither the error, nor
// its cause, nor anything it wraps quotes the URL or the key.
func TestTransportErrorsNeverQuoteTheURL(t *testing.T) {
	const key = "rotated.key-ab12cd34"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The answer is lost: the connection closes before any byte of it.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	defer srv.Close()
	c, err := New(Config{AdminURL: srv.URL, Token: testToken, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = c.DeleteApplicationKey(context.Background(), 7, 9, key)
	if !IsUnavailable(err) {
		t.Fatalf("a lost answer: %v, want Unavailable", err)
	}
	texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		texts = append(texts, e.Error())
	}
	for _, text := range texts {
		for _, secret := range []string{key, url.PathEscape(key), testToken, srv.URL + "/admin"} {
			if strings.Contains(text, secret) {
				t.Errorf("the error quotes %q: %s", secret, text)
			}
		}
	}
	if want := "DELETE /admin/api/accounts/{account_id}/applications/{application_id}/keys/{key}.json"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the endpoint template %q", err, want)
	}
}

// TestErrorBodiesArePlainAndShort: what an error answer's body puts in the error (and so in the object's
// status) is plain text of one line: an HTML or XML page (a proxy's 502 page, whatever its Content-Type)
// gives its title or its text, without tags, scripts or entities; porta's messages, field errors and
// plain text are cut at 512 characters with "…", the token removed before the cut; many field errors are
// cut together at 1024.
func TestErrorBodiesArePlainAndShort(t *testing.T) {
	nginx := `<html>` + "\r\n" + `<head><title>502 Bad Gateway</title></head>` + "\r\n" + `<body>` + "\r\n" +
		`<center><h1>502 Bad Gateway</h1></center>` + "\r\n" + `<hr><center>nginx</center>` + "\r\n" + `</body>` + "\r\n" + `</html>` + "\r\n" +
		strings.Repeat("<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n", 6)
	long := strings.Repeat("x", 5000)
	type got struct {
		Message string
		Errors  map[string][]string
	}
	cases := map[string]struct {
		code        int
		contentType string
		body        string
		want        got
	}{
		"nginx 502 page": {code: 502, contentType: "text/html", body: nginx, want: got{Message: "502 Bad Gateway"}},
		"HTML without a title": {code: 503, contentType: "text/html; charset=utf-8",
			body: `<html><body><h1>Service Unavailable</h1><p>Try again &amp; again</p></body></html>`, want: got{Message: "Service Unavailable Try again & again"}},
		"HTML sent as text/plain": {code: 502, contentType: "text/plain",
			body: "<!DOCTYPE html><html><head><style>p{color:red}</style><script>var s = \"<b>\";</script></head><body><p>Bad <b>gateway</b></p>\n<p>retry</p></body></html>",
			want: got{Message: "Bad gateway retry"}},
		"a long page without a title": {code: 502, contentType: "text/html", body: "<p>" + long + "</p>",
			want: got{Message: strings.Repeat("x", 199) + "…"}},
		"XML":                     {code: 403, contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?><error>Access denied</error>`, want: got{Message: "Access denied"}},
		"huge error of porta":     {code: 403, contentType: "application/json", body: `{"error":"` + long + `"}`, want: got{Message: strings.Repeat("x", 511) + "…"}},
		"huge status":             {code: 404, contentType: "application/json", body: `{"status":"` + long + `"}`, want: got{Message: strings.Repeat("x", 511) + "…"}},
		"huge field error":        {code: 422, contentType: "application/json", body: `{"errors":{"name":["` + long + `"]}}`, want: got{Errors: map[string][]string{"name": {strings.Repeat("x", 511) + "…"}}}},
		"long plain text":         {code: 500, contentType: "text/plain", body: long, want: got{Message: strings.Repeat("x", 511) + "…"}},
		"plain text of two lines": {code: 500, contentType: "text/plain", body: "Internal error\n\tat line 3\x00\r\n", want: got{Message: "Internal error at line 3"}},
		"token cut in two": {code: 403, contentType: "application/json", body: `{"error":"` + strings.Repeat("a", 500) + testToken + strings.Repeat("b", 100) + `"}`,
			want: got{Message: strings.Repeat("a", 500) + "[token]bbbb…"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := mockClient(t, Config{ReadRetries: -1})
			httpmock.RegisterResponder("GET", "https://acme-admin.example.com/admin/api/services/1.json", func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(tc.code, tc.body)
				resp.Header.Set("Content-Type", tc.contentType)
				return resp, nil
			})
			_, err := c.GetProduct(context.Background(), 1)
			e, ok := asAPIError(err)
			if !ok {
				t.Fatalf("not an APIError: %v", err)
			}
			if diff := cmp.Diff(tc.want, got{Message: e.Message, Errors: e.Errors}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), testToken[:6]) {
				t.Errorf("a part of the token is in %q", err)
			}
		})
	}
	t.Run("many field errors", func(t *testing.T) {
		c := mockClient(t, Config{})
		fields := make([]string, 0, 20)
		for i := range 20 {
			fields = append(fields, fmt.Sprintf(`"field_%d":["%s"]`, i, strings.Repeat("y", 400)))
		}
		httpmock.RegisterResponder("POST", "https://acme-admin.example.com/admin/api/services.json", respond(422, `{"errors":{`+strings.Join(fields, ",")+`}}`))
		_, err := c.CreateProduct(context.Background(), ProductParams{Name: "p"})
		if n := len([]rune(err.Error())); !IsInvalid(err) || n > 1100 || !strings.HasSuffix(err.Error(), "…") {
			t.Errorf("422 with 20 field errors of 400 characters: %d characters, %q...; want at most 1024 for the errors, cut with …", n, err.Error()[:100])
		}
	})
}
