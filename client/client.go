// Package client is apimsync's typed client of the 3scale Account Management API (porta's admin API):
// products (services), backends, their metrics, methods and mapping rules, proxy settings, policies,
// backend usages, application plans, limits and pricing rules. It reads every list to exhaustion,
// classifies errors (errors.go), rate-limits and caps the requests in flight per client, honours
// Retry-After, and never lets the access token into a URL, an error or a log.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-resty/resty/v2"
	"golang.org/x/time/rate"
)

// Config configures a Client: the tenant's admin URL and access token, TLS, and the request budget.
type Config struct {
	// AdminURL is the tenant's admin portal, e.g. https://acme-admin.3scale.net. A path prefix is kept.
	AdminURL string
	// Token is an access token with read-write access to the Account Management API.
	Token string
	// CABundle (PEM) is trusted in addition to the system's roots.
	CABundle []byte
	// InsecureSkipVerify turns TLS verification off; only for test tenants.
	InsecureSkipVerify bool
	// QPS and Burst are the token-bucket rate limit (default 10 and 20).
	QPS   float64
	Burst int
	// MaxInFlight caps the requests in flight (default 8).
	MaxInFlight int
	// Timeout bounds each call (default 30s) unless the caller's context ends sooner.
	Timeout time.Duration
	// Observer, when set, is called once per HTTP attempt (metrics).
	Observer Observer
	// UserAgent is sent with every request.
	UserAgent string
	// ReadAttempts bounds the attempts of one call that may be retried (default 4): reads failing for a
	// passing reason, and any call answered 429.
	ReadAttempts int
	// RetryInitialInterval is the first wait before a retry (default 200ms), growing exponentially.
	RetryInitialInterval time.Duration
	// MaxResponseBytes caps the size of one answer (default 8 MiB): a larger one is an error, never read
	// into memory whole.
	MaxResponseBytes int
	// MaxPages caps the pages of one list (default 200, i.e. 100,000 items at 500 a page): a server that
	// never ends a list is an error, not an endless loop.
	MaxPages int
	// Policy, when set, says which addresses the client may connect to; it is enforced when dialing, so
	// that a name resolving to an internal address is refused too. The controllers always set it.
	Policy *AdminURLPolicy
}

// CallInfo describes one HTTP attempt, for metrics.
type CallInfo struct {
	// Method is the HTTP verb.
	Method string
	// Endpoint is the path template, e.g. "/admin/api/services/{id}.json".
	Endpoint string
	// Code is the HTTP status, 0 when no answer came.
	Code int
	// Duration of the attempt.
	Duration time.Duration
}

// Observer receives one CallInfo per HTTP attempt.
type Observer func(CallInfo)

// Client talks to one 3scale tenant. Safe for concurrent use.
type Client struct {
	http     *resty.Client
	token    string
	limiter  *rate.Limiter
	inFlight chan struct{}
	timeout  time.Duration
	observer Observer

	readAttempts int
	retryInitial time.Duration
	maxPages     int
	maxBody      int
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.AdminURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("3scale admin URL %q is not an absolute http(s) URL", cfg.AdminURL)
	}
	if cfg.Token == "" {
		return nil, errors.New("3scale access token is empty")
	}
	if cfg.QPS <= 0 {
		cfg.QPS = 10
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 20
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 8
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 8 << 20
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = 200
	}
	if cfg.ReadAttempts <= 0 {
		cfg.ReadAttempts = 4
	}
	if cfg.RetryInitialInterval <= 0 {
		cfg.RetryInitialInterval = 200 * time.Millisecond
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in only
	if len(cfg.CABundle) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, errors.New("3scale CA bundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	if cfg.Policy != nil {
		transport.DialContext = cfg.Policy.dialer()
	}
	transport.MaxIdleConnsPerHost = cfg.MaxInFlight
	r := resty.New().
		SetTransport(transport).
		SetBaseURL(strings.TrimSuffix(u.String(), "/")).
		SetHeader("Accept", "application/json").
		SetDisableWarn(true).
		SetLogger(silentLogger{}).
		SetRetryCount(0).
		SetResponseBodyLimit(cfg.MaxResponseBytes)
	if cfg.UserAgent != "" {
		r.SetHeader("User-Agent", cfg.UserAgent)
	}
	return &Client{
		http:     r,
		token:    cfg.Token,
		limiter:  rate.NewLimiter(rate.Limit(cfg.QPS), cfg.Burst),
		inFlight: make(chan struct{}, cfg.MaxInFlight),
		timeout:  cfg.Timeout,
		observer: cfg.Observer,

		readAttempts: cfg.ReadAttempts,
		retryInitial: cfg.RetryInitialInterval,
		maxPages:     cfg.MaxPages,
		maxBody:      cfg.MaxResponseBytes,
	}, nil
}

// String describes the client without its token.
func (c *Client) String() string { return "3scale client for " + c.http.BaseURL }

// silentLogger keeps resty from logging requests (and so the Authorization header) anywhere.
type silentLogger struct{}

func (silentLogger) Errorf(string, ...any) {}
func (silentLogger) Warnf(string, ...any)  {}
func (silentLogger) Debugf(string, ...any) {}

// call is one request: method, endpoint template, the path values that fill it, query and form params,
// or a JSON body.
type call struct {
	method   string
	endpoint string
	args     []any
	query    url.Values
	form     url.Values
	json     any
}

// path fills the endpoint template's {placeholders} in order with the call's args.
func (r call) path() string {
	p := r.endpoint
	for _, a := range r.args {
		i := strings.Index(p, "{")
		j := strings.Index(p, "}")
		if i < 0 || j < i {
			break
		}
		p = p[:i] + url.PathEscape(fmt.Sprint(a)) + p[j+1:]
	}
	return p
}

// do sends the call and decodes a 2xx answer into out (when not nil). It waits for the rate limiter and
// a free in-flight slot; on 429 it waits Retry-After (bounded by ctx) and tries once more.
func (c *Client) do(ctx context.Context, r call, out any) error {
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	policy := backoff.NewExponentialBackOff(backoff.WithInitialInterval(c.retryInitial), backoff.WithMaxInterval(5*time.Second),
		backoff.WithRandomizationFactor(0.5), backoff.WithMaxElapsedTime(0))
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, r, out)
		wait, retry := c.retryDelay(r, err, attempt, policy)
		if !retry {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// maxRetryAfter is the longest Retry-After the client waits for itself; beyond it the error goes to the
// caller, whose workqueue waits instead of holding a worker.
const maxRetryAfter = 30 * time.Second

// retryDelay decides whether a failed attempt is tried again, and after how long. Reads (GET, which
// change nothing) are retried on 5xx, timeouts, lost connections and 429, up to c.readAttempts attempts,
// with jittered exponential backoff; writes only on 429, which porta answers before doing anything. A
// Retry-After is always honoured: never sooner than it says.
func (c *Client) retryDelay(r call, err error, attempt int, policy *backoff.ExponentialBackOff) (time.Duration, bool) {
	if err == nil || attempt >= c.readAttempts {
		return 0, false
	}
	after, limited := RetryAfter(err)
	switch {
	case limited && after > maxRetryAfter:
		return 0, false
	case limited:
	case r.method == http.MethodGet && (IsUnavailable(err) || IsRateLimited(err)):
	default:
		return 0, false
	}
	return max(policy.NextBackOff(), after), true
}

func (c *Client) attempt(ctx context.Context, r call, out any) error {
	if err := c.limiter.Wait(ctx); err != nil {
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: "rate limiter: " + err.Error(), Cause: err}
	}
	select {
	case c.inFlight <- struct{}{}:
	case <-ctx.Done():
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: ctx.Err().Error(), Cause: ctx.Err()}
	}
	defer func() { <-c.inFlight }()

	req := c.http.R().SetContext(ctx).SetBasicAuth("", c.token)
	if r.query != nil {
		req.SetQueryParamsFromValues(r.query)
	}
	switch {
	case r.json != nil:
		req.SetHeader("Content-Type", "application/json").SetBody(r.json)
	case r.form != nil:
		req.SetFormDataFromValues(r.form)
	}
	start := time.Now()
	resp, err := req.Execute(r.method, r.path())
	code := 0
	if resp != nil && resp.RawResponse != nil {
		code = resp.StatusCode()
	}
	if c.observer != nil {
		c.observer(CallInfo{Method: r.method, Endpoint: r.endpoint, Code: code, Duration: time.Since(start)})
	}
	if errors.Is(err, resty.ErrResponseBodyTooLarge) {
		// Not a passing failure: retrying would read the same oversized answer again.
		return &APIError{StatusCode: code, Method: r.method, Endpoint: r.endpoint,
			Message: fmt.Sprintf("the answer is larger than %d bytes, the most this client reads", c.maxBody)}
	}
	if err != nil {
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: scrub(err.Error(), c.token), Cause: errors.New(scrub(err.Error(), c.token))}
	}
	if code < 200 || code > 299 {
		return parseError(r, resp).scrubbed(c.token)
	}
	if out == nil || len(resp.Body()) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		return &APIError{StatusCode: code, Method: r.method, Endpoint: r.endpoint, Message: "cannot decode the answer: " + err.Error()}
	}
	return nil
}

// scrub removes the token from a text, should a transport error ever quote it.
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[token]")
}

// scrubbed removes the token from everything porta's answer put in e: a body may quote the token.
func (e *APIError) scrubbed(token string) *APIError {
	e.Message = scrub(e.Message, token)
	for f, msgs := range e.Errors {
		for i := range msgs {
			msgs[i] = scrub(msgs[i], token)
		}
		e.Errors[f] = msgs
	}
	return e
}

// parseError turns a non-2xx answer into an APIError, reading porta's bodies: {"errors":{...}},
// {"error":"..."}, {"status":"Not found"}, or plain text.
func parseError(r call, resp *resty.Response) *APIError {
	e := &APIError{StatusCode: resp.StatusCode(), Method: r.method, Endpoint: r.endpoint}
	if s := resp.Header().Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = time.Until(t)
		}
	}
	var body struct {
		Errors json.RawMessage `json:"errors"`
		Error  string          `json:"error"`
		Status string          `json:"status"`
	}
	if json.Unmarshal(resp.Body(), &body) == nil {
		e.Errors = parseFieldErrors(body.Errors)
		switch {
		case body.Error != "":
			e.Message = body.Error
		case body.Status != "":
			e.Message = body.Status
		}
	} else if text := strings.TrimSpace(string(resp.Body())); len(text) > 0 && len(text) < 300 {
		e.Message = text
	}
	return e
}

// parseFieldErrors reads {"field":["msg"]} or ["msg"] (under "base").
func parseFieldErrors(raw json.RawMessage) map[string][]string {
	if len(raw) == 0 {
		return nil
	}
	var byField map[string][]string
	if json.Unmarshal(raw, &byField) == nil && len(byField) > 0 {
		return byField
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return map[string][]string{"base": list}
	}
	return nil
}
