// Package client is apimsync's typed client of the 3scale Account Management API (porta's admin API):
// products (services), backends, their metrics, methods and mapping rules, proxy settings, policies,
// backend usages, application plans, limits and pricing rules. It reads every list to exhaustion,
// classifies errors (errors.go), paces the requests to each tenant with an adaptive concurrency limit
// (pacer.go: grows while answers are fast, halves on overload, pauses for Retry-After), and never lets the
// access token into a URL, an error or a log.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-resty/resty/v2"
)

// DefaultMaxInFlight is the default cap on requests in flight to one tenant.
const DefaultMaxInFlight = 32

// Defaults of Config.MaxResponseBytes, Config.MaxPages and Config.MaxRetryAfter.
const (
	DefaultMaxResponseBytes = 8 << 20
	DefaultMaxPages         = 200
	DefaultMaxRetryAfter    = 5 * time.Minute
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
	// Pacer paces the requests: an adaptive concurrency limit shared by every client of one tenant
	// (see Pacer). When nil, the client makes its own from QPS, Burst and MaxInFlight.
	Pacer *Pacer
	// QPS and Burst are an optional hard rate cap (token bucket; QPS 0: none, the default).
	QPS   float64
	Burst int
	// MaxInFlight caps the requests in flight, whatever the adaptive limit says (default 32).
	MaxInFlight int
	// Timeout bounds each call, retries included (default 30s), when the caller's context has no deadline
	// of its own. One attempt of a read gets at most half of it (or of what is left of the caller's
	// deadline), so that a read that hangs is tried again.
	Timeout time.Duration
	// Observer, when set, is called once per HTTP attempt (metrics).
	Observer Observer
	// UserAgent is sent with every request.
	UserAgent string
	// DryRun, when set, makes a client that never writes: every request but a GET is handed to it instead
	// of being sent, and answered as a success with no body (kubectl apimsync diff: the syncers' own code
	// decides what to write, the recorder lists it).
	DryRun func(Write)
	// ReadRetries bounds the retries of one call after its first attempt (default 3, so 4 attempts in
	// all; negative: none; the manager sets its --remote-retries). Reads (GET) are retried when they
	// fail for a passing reason: no answer, a timeout, 5xx or 429; writes when answered 429 or 503,
	// which say the tenant did not act on the request, or when a replayable one's answer was lost. A
	// Retry-After is always honoured (up to MaxRetryAfter); one longer than 30s, or than what is left
	// of the deadline, ends the call with its error at once, for the caller to requeue.
	ReadRetries int
	// RetryInitialInterval is the first wait before a retry (default 200ms), growing exponentially.
	RetryInitialInterval time.Duration
	// MaxResponseBytes caps the size of one answer (default DefaultMaxResponseBytes, 8 MiB): a larger one is an error, never read
	// into memory whole.
	MaxResponseBytes int
	// MaxRetryAfter caps the wait a Retry-After (of a 429 or 503) imposes (default DefaultMaxRetryAfter,
	// 5 minutes; 0 or negative: the default). The tenant's pacer holds every request to the tenant for
	// as long as the answer asks, so a broken or hostile endpoint asking for hours (or a date years
	// ahead) would stop the tenant for that long: a longer Retry-After is taken as this cap, the error
	// says so (APIError.RetryAfterAsked) and the Observer sees it (CallInfo.RetryAfterAsked).
	MaxRetryAfter time.Duration
	// MaxPages caps the pages of one list (default 200, i.e. 100,000 items at 500 a page): a server that
	// never ends a list is an error, not an endless loop.
	MaxPages int
	// Policy, when set, says which addresses the client may connect to; it is enforced when dialing, so
	// that a name resolving to an internal address is refused too, and, for a request sent through a proxy
	// of the environment (HTTPS_PROXY), on the addresses the admin host resolves to before the request is
	// handed to the proxy (see AdminURLPolicy.proxy). The controllers always set it.
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
	// RetryAfter is the pause the answer's Retry-After imposes on the tenant, at most Config.MaxRetryAfter;
	// 0 without one.
	RetryAfter time.Duration
	// RetryAfterAsked is the Retry-After the answer asked for when it was longer than Config.MaxRetryAfter
	// (RetryAfter is the cap then); 0 otherwise. A metric counts the answers whose wait was capped.
	RetryAfterAsked time.Duration
}

// Observer receives one CallInfo per HTTP attempt.
type Observer func(CallInfo)

// Client talks to one 3scale tenant. Safe for concurrent use.
type Client struct {
	http     *resty.Client
	token    string
	pacer    *Pacer
	timeout  time.Duration
	observer Observer

	attempts     int
	retryInitial time.Duration
	maxPages     int
	maxBody      int
	maxPause     time.Duration // Config.MaxRetryAfter
	dryRun       func(Write)
}

// Write is a request a dry-run client did not send: its method, its endpoint template (no values in it)
// with the arguments that fill it, and its form.
type Write struct {
	Method, Endpoint string
	Args             []any
	Form             url.Values
	// JSON is the request's JSON body, if it has one.
	JSON any
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
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Pacer == nil {
		cfg.Pacer = NewPacer(PacerConfig{Max: cfg.MaxInFlight, QPS: cfg.QPS, Burst: cfg.Burst})
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	switch {
	case cfg.ReadRetries == 0:
		cfg.ReadRetries = 3
	case cfg.ReadRetries < 0:
		cfg.ReadRetries = 0
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
	transport.Proxy = environmentProxy
	transport.TLSClientConfig = tlsConfig
	if cfg.Policy != nil {
		proxies := &proxyAddrs{}
		transport.Proxy = cfg.Policy.proxy(transport.Proxy, proxies)
		transport.DialContext = cfg.Policy.dialer(proxies)
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
		pacer:    cfg.Pacer,
		timeout:  cfg.Timeout,
		observer: cfg.Observer,

		attempts:     cfg.ReadRetries + 1,
		retryInitial: cfg.RetryInitialInterval,
		maxPages:     cfg.MaxPages,
		maxBody:      cfg.MaxResponseBytes,
		maxPause:     cfg.MaxRetryAfter,
		dryRun:       cfg.DryRun,
	}, nil
}

// Recording returns a copy of c that never writes: every request but a GET is handed to record instead
// of being sent, and answered as a success with no body (as Config.DryRun). Reads go out as c's do, paced
// with c's tenant. (A function, not a method: it calls nothing of 3scale's API.)
func Recording(c *Client, record func(Write)) *Client {
	d := *c
	d.dryRun = record
	return &d
}

// Pacer returns the pacer of the client's tenant.
func (c *Client) Pacer() *Pacer { return c.pacer }

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
	// xml: the endpoint is porta's XML one (Accept application/xml); out is decoded as XML.
	xml bool
	// multipart sends form as multipart/form-data, with upload as its file part if there is one.
	multipart bool
	upload    *upload
	// rawURL, when set, is where the request goes instead of the endpoint's path: a URL porta gave (a
	// file's content), absolute or on the admin portal's host. endpoint still names the call in
	// messages. out is then a *[]byte, the answer's body as it is.
	rawURL string
}

// upload is the file part of a multipart request.
type upload struct {
	field, name, contentType string
	content                  []byte
}

// replayable reports a write that ends in the same place however often it is applied, so that one whose
// answer was lost may be sent again rather than fail the caller's whole sync: a PUT, PATCH or DELETE of
// one resource by its id (or of a product's proxy, OIDC settings or policy chain), setting attributes
// only. State transitions (approve, suspend, resume, activate, a state_event) are not: porta refuses a
// transition from the state it leads to. A DELETE sent again answers 404, which callers take as done.
// A deploy is not sent again here: one whose answer was lost is settled by its caller from what staging's
// latest configuration holds (the product's syncer), never by sending it until an answer comes.
func (r call) replayable() bool {
	switch r.method {
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	if strings.HasPrefix(r.endpoint, "/master/") || r.form.Has("state_event") {
		return false
	}
	for _, suffix := range []string{"/{id}.json", "/proxy.json", "/oidc_configuration.json", "/policies.json", "/publish.json"} {
		if strings.HasSuffix(r.endpoint, suffix) {
			return true
		}
	}
	return false
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

// ownHost tells whether target, a path or an absolute URL, is on the admin portal's host (the token
// may go there).
func (c *Client) ownHost(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	if !u.IsAbs() {
		return u.Host == ""
	}
	base, err := url.Parse(c.http.BaseURL)
	return err == nil && strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Host, base.Host)
}

// environmentProxy chooses the proxy of a request (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); tests replace it.
var environmentProxy = http.ProxyFromEnvironment

// do sends the call and decodes a 2xx answer into out (when not nil). Each attempt waits for the tenant's
// pacer (a free slot under its adaptive limit, the end of any Retry-After, the optional rate cap). A read failing for a passing reason, and any call answered 429, is
// tried again (retryDelay), within the context's deadline — c.timeout when the caller set none.
func (c *Client) do(ctx context.Context, r call, out any) error {
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	policy := backoff.NewExponentialBackOff(backoff.WithInitialInterval(c.retryInitial), backoff.WithMaxInterval(5*time.Second),
		backoff.WithRandomizationFactor(0.5), backoff.WithMaxElapsedTime(0))
	var answered error // the last attempt's error that 3scale (or the way to it) gave
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, r, out)
		if e, ok := asAPIError(err); ok && e.NotSent && answered != nil {
			// The tenant's pacer cannot admit the retry within the call's deadline: what the caller
			// learns is what the last answer said (a 429 stays a rate limit), not the wait.
			return answered
		} else if err != nil && (!ok || !e.NotSent) {
			answered = err
		}
		wait, retry := c.retryDelay(r, err, attempt, policy)
		if !retry {
			return err
		}
		if deadline, _ := ctx.Deadline(); time.Until(deadline) <= wait {
			return err // no time left to wait: the caller requeues, no worker is held for nothing
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

// maxRetryAfterInCall is the longest Retry-After the client waits for itself; beyond it the error goes to
// the caller, whose workqueue waits instead of holding a worker. (Config.MaxRetryAfter, longer, caps the
// pause of the tenant's pacer.)
const maxRetryAfterInCall = 30 * time.Second

// retryDelay decides whether a failed attempt is tried again, and after how long. Reads (GET, which
// change nothing) are retried on 5xx, timeouts, lost connections and 429, up to c.attempts attempts,
// with jittered exponential backoff; writes on 429 and 503, which say the tenant did not act on the
// request (a rate limit, or the tenant unavailable: porta answers them before its controllers run, and
// a proxy before it reaches porta), so that one such answer among a product's fifteen writes costs a
// pause, not the whole sync. A write whose answer was lost is sent again when it is replayable (an
// update by id: the same again); any other write that got no answer, or another 5xx, may have been
// applied: it is never sent again here (the caller settles it from state). A Retry-After is always
// honoured: never sooner than it says, and not at all when it is longer than maxRetryAfterInCall. A
// connection the admin URL policy refused is not retried.
func (c *Client) retryDelay(r call, err error, attempt int, policy *backoff.ExponentialBackOff) (time.Duration, bool) {
	if err == nil || attempt >= c.attempts || errors.Is(err, errAddressRefused) {
		return 0, false
	}
	e, ok := asAPIError(err)
	if !ok {
		return 0, false
	}
	read := r.method == http.MethodGet
	switch {
	case e.StatusCode == http.StatusTooManyRequests, e.StatusCode == http.StatusServiceUnavailable:
	case read && IsUnavailable(err):
	case e.StatusCode == 0 && r.replayable(): // no answer to an update by id: sending it again is safe
	default:
		return 0, false
	}
	if e.RetryAfter > maxRetryAfterInCall {
		return 0, false
	}
	return max(policy.NextBackOff(), e.RetryAfter), true
}

func (c *Client) attempt(ctx context.Context, r call, out any) (err error) {
	if c.dryRun != nil && r.method != http.MethodGet {
		w := Write{Method: r.method, Endpoint: r.endpoint, Args: r.args, Form: r.form, JSON: r.json}
		if r.upload != nil { // the file's name and size, not its bytes
			w.Form = url.Values{}
			maps.Copy(w.Form, r.form)
			w.Form.Set(r.upload.field, fmt.Sprintf("%s (%d bytes)", r.upload.name, len(r.upload.content)))
		}
		c.dryRun(w)
		return nil
	}
	release, werr := c.pacer.Acquire(ctx)
	if werr != nil {
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: "waiting for the tenant's pacing: " + werr.Error(), Cause: werr, NotSent: true}
	}
	start := time.Now()
	defer func() {
		// The pacer learns from every answer: its time, overload (429, 502-504, none) and Retry-After.
		o := Outcome{Latency: time.Since(start)}
		if e, ok := asAPIError(err); ok {
			o.Code, o.RetryAfter = e.StatusCode, e.RetryAfter
			// A connection closed without an answer, as opposed to one that timed out: no sign of load.
			o.Dropped = e.StatusCode == 0 && !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err)
		} else {
			o.Code = http.StatusOK
		}
		release(o)
	}()

	if r.method == http.MethodGet && c.attempts > 1 {
		// A read that will be retried gets at most half of the call's timeout for its exchange (the waits
		// above do not count), so that a read that hangs is tried again within the call's deadline.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout/2)
		defer cancel()
	}
	req := c.http.R().SetContext(ctx)
	target := r.path()
	if r.rawURL != "" {
		target = r.rawURL
	}
	if c.ownHost(target) { // the token never goes to another host (a storage's signed URL)
		req.SetBasicAuth("", c.token)
	}
	if r.xml {
		req.SetHeader("Accept", "application/xml")
	}
	if r.query != nil {
		req.SetQueryParamsFromValues(r.query)
	}
	switch {
	case r.json != nil:
		req.SetHeader("Content-Type", "application/json").SetBody(r.json)
	case r.multipart:
		for k, vs := range r.form {
			for _, v := range vs {
				req.SetMultipartField(k, "", "", strings.NewReader(v))
			}
		}
		if u := r.upload; u != nil {
			req.SetMultipartField(u.field, u.name, u.contentType, bytes.NewReader(u.content))
		}
	case r.form != nil:
		req.SetFormDataFromValues(r.form)
	}
	sent := time.Now()
	resp, err := req.Execute(r.method, target)
	code := 0
	if resp != nil && resp.RawResponse != nil {
		code = resp.StatusCode()
	}
	if c.observer != nil {
		info := CallInfo{Method: r.method, Endpoint: r.endpoint, Code: code, Duration: time.Since(sent)}
		defer func() { // once err, and the Retry-After it carries, is known
			if e, ok := asAPIError(err); ok {
				info.RetryAfter, info.RetryAfterAsked = e.RetryAfter, e.RetryAfterAsked
			}
			c.observer(info)
		}()
	}
	if errors.Is(err, resty.ErrResponseBodyTooLarge) {
		// Not a passing failure: retrying would read the same oversized answer again.
		return &APIError{StatusCode: code, Method: r.method, Endpoint: r.endpoint, TooLarge: true,
			Message: fmt.Sprintf("the answer is larger than %d bytes, the most this client reads", c.maxBody)}
	}
	if refused := (*addressRefused)(nil); errors.As(err, &refused) {
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: refused.Error(), Cause: refused}
	}
	if err != nil {
		cause := r.transportError(err, c.token)
		return &APIError{Method: r.method, Endpoint: r.endpoint, Message: cause.Error(), Cause: cause}
	}
	if code < 200 || code > 299 {
		return parseError(r, resp, c.token).scrubbed(c.token).capRetryAfter(c.maxPause)
	}
	if r.method != http.MethodGet {
		noteProgress(ctx)
	}
	if out == nil || len(resp.Body()) == 0 {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = append((*raw)[:0], resp.Body()...)
		return nil
	}
	decode := json.Unmarshal
	if r.xml {
		decode = xml.Unmarshal
	}
	if err := decode(resp.Body(), out); err != nil {
		return &APIError{StatusCode: code, Method: r.method, Endpoint: r.endpoint, Message: "cannot decode the answer: " + err.Error()}
	}
	return nil
}

// transportError is a failure without an answer (timeout, lost connection, refused TLS) told without the
// request's URL: net/http's *url.Error quotes the whole URL, whose path or query may carry a credential
// (an application key in DELETE .../keys/{key}.json, a user_key in a find). The text keeps the operation
// and the underlying error only, with the token and every value the call filled into its path or query
// removed should that error quote them too; errors.Is and errors.As still reach the underlying error
// (redactedError).
func (r call) transportError(err error, token string) error {
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	text := "transport error"
	if inner != nil {
		text = inner.Error()
	}
	text = scrub(text, token)
	for _, a := range r.args {
		if v, ok := a.(string); ok && v != "" {
			text = strings.ReplaceAll(strings.ReplaceAll(text, url.PathEscape(v), "[redacted]"), v, "[redacted]")
		}
	}
	for _, vs := range r.query {
		for _, v := range vs {
			if v != "" {
				text = strings.ReplaceAll(strings.ReplaceAll(text, url.QueryEscape(v), "[redacted]"), v, "[redacted]")
			}
		}
	}
	return &redactedError{text: text, inner: inner}
}

// redactedError is a transport error whose text was made safe to show (transportError).
type redactedError struct {
	text  string
	inner error
}

func (e *redactedError) Error() string { return e.text }

// Is and As reach the underlying error (a timeout, a refused connection) for errors.Is and errors.As.
// There is no Unwrap: whoever walks the chain with errors.Unwrap and prints each link would print the
// underlying error's own text, which may quote what e.text removed (a proxy's error quoting the token).
func (e *redactedError) Is(target error) bool { return errors.Is(e.inner, target) }
func (e *redactedError) As(target any) bool   { return errors.As(e.inner, target) }

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

// capRetryAfter caps e's Retry-After at most, keeping the delay asked for in RetryAfterAsked: the pacer
// pauses the whole tenant for e.RetryAfter, and the caller requeues after it.
func (e *APIError) capRetryAfter(most time.Duration) *APIError {
	if e.RetryAfter > most {
		e.RetryAfterAsked, e.RetryAfter = e.RetryAfter, most
	}
	return e
}

// parseError turns a non-2xx answer into an APIError, reading porta's bodies: {"errors":{...}},
// {"error":"..."}, {"status":"Not found"}, or text. What it takes from the body goes into the object's
// status, so it is made plain and short (plainMessage): the token removed first (so that a cut never
// leaves a part of it), each message at most maxMessage characters, and a page of markup (a proxy's or a
// load balancer's HTML error page) reduced to its title, or its text, of at most maxPageMessage.
func parseError(r call, resp *resty.Response, token string) *APIError {
	e := &APIError{StatusCode: resp.StatusCode(), Method: r.method, Endpoint: r.endpoint}
	if s := resp.Header().Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = time.Until(t)
		}
	}
	raw := resp.Body()
	var body struct {
		Errors json.RawMessage `json:"errors"`
		Error  string          `json:"error"`
		Status string          `json:"status"`
	}
	if json.Unmarshal(raw, &body) == nil {
		e.Errors = parseFieldErrors(body.Errors)
		for f, msgs := range e.Errors {
			for i, m := range msgs {
				msgs[i] = plainMessage(scrub(m, token), maxMessage)
			}
			e.Errors[f] = msgs
		}
		switch {
		case body.Error != "":
			e.Message = plainMessage(scrub(body.Error, token), maxMessage)
		case body.Status != "":
			e.Message = plainMessage(scrub(body.Status, token), maxMessage)
		}
		return e
	}
	if len(raw) > maxBodyRead {
		raw = raw[:maxBodyRead]
	}
	text := scrub(strings.ToValidUTF8(string(raw), ""), token)
	if isMarkup(resp.Header().Get("Content-Type"), text) {
		e.Message = plainMessage(markupText(text), maxPageMessage)
	} else {
		e.Message = plainMessage(text, maxMessage)
	}
	return e
}

// Caps of the messages parseError takes from a body: maxMessage for porta's messages (each field error
// apart) and plain text, maxPageMessage for the text of an HTML (or XML) page; maxBodyRead is how much of
// a body that is not JSON is read for it.
const (
	maxMessage     = 512
	maxPageMessage = 200
	maxBodyRead    = 64 << 10
)

// isMarkup reports an HTML or XML body: by its Content-Type, or by its first character, for proxies that
// send their error pages as text/plain or with none.
func isMarkup(contentType, text string) bool {
	ct := strings.ToLower(contentType)
	return strings.Contains(ct, "html") || strings.Contains(ct, "xml") || strings.HasPrefix(strings.TrimSpace(text), "<")
}

var (
	markupComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	markupScript  = regexp.MustCompile(`(?is)<script\b.*?(</script\s*>|\z)`)
	markupStyle   = regexp.MustCompile(`(?is)<style\b.*?(</style\s*>|\z)`)
	markupTitle   = regexp.MustCompile(`(?is)<title\b[^>]*>(.*?)</title\s*>`)
	markupTag     = regexp.MustCompile(`(?s)<[^>]*(>|\z)`)
)

// markupText is the text of an HTML or XML page: its title when it has one (an error page's title says
// it all, "502 Bad Gateway"), else its text without comments, scripts, styles and tags; entities
// decoded. (Go's regexp runs in linear time, whatever the page.)
func markupText(page string) string {
	page = markupComment.ReplaceAllString(page, " ")
	if m := markupTitle.FindStringSubmatch(page); m != nil {
		if title := strings.TrimSpace(html.UnescapeString(markupTag.ReplaceAllString(m[1], " "))); title != "" {
			return title
		}
	}
	page = markupScript.ReplaceAllString(page, " ")
	page = markupStyle.ReplaceAllString(page, " ")
	return html.UnescapeString(markupTag.ReplaceAllString(page, " "))
}

// plainMessage makes s one line of at most most characters: control characters and runs of white space
// become one space, and a longer text is cut at a character's end, "…" marking the cut.
func plainMessage(s string, most int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= most {
		return s
	}
	runes := []rune(s)
	return strings.TrimSpace(string(runes[:most-1])) + "…"
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

// isTimeout reports a network error that is a timeout (net.Error.Timeout), as opposed to a connection
// closed or refused.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// CloseIdleConnections closes the client's idle keep-alive connections (the pool calls it when the
// client ages out); requests in flight are not touched.
func (c *Client) CloseIdleConnections() { c.http.GetClient().CloseIdleConnections() }
