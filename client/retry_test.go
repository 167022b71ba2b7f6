package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWritesAreRetriedOnlyWhenNotActedOn: a GET answered 503 twice then 200 succeeds in one call; a POST
// answered 429 is sent again after Retry-After, and one answered 503 again too (the tenant did not act
// on either); a POST answered 500 is sent once (it may have been applied: the caller decides).
func TestWritesAreRetriedOnlyWhenNotActedOn(t *testing.T) {
	var gets, posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodGet:
			if gets.Add(1) <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"service":{"id":42}}`))
		case http.MethodPost:
			n := posts.Add(1)
			switch {
			case n == 1 && r.URL.Path == "/admin/api/backend_apis.json":
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			case n == 2:
				w.WriteHeader(http.StatusServiceUnavailable)
			case r.URL.Path == "/admin/api/backend_apis.json":
				_, _ = w.Write([]byte(`{"backend_api":{"id":7}}`))
			default:
				w.WriteHeader(http.StatusInternalServerError)
			}
		}
	}))
	defer srv.Close()
	c, err := New(Config{AdminURL: srv.URL, Token: "t", RetryInitialInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if p, err := c.GetProduct(ctx, 42); err != nil || p.ID != 42 || gets.Load() != 3 {
		t.Errorf("GET: %+v, %v after %d attempts; want product 42 after 3", p, err, gets.Load())
	}
	start := time.Now()
	if b, err := c.CreateBackend(ctx, BackendParams{Name: "b"}); err != nil || b.ID != 7 {
		t.Errorf("POST after a 429 then a 503: %+v, %v; want backend 7", b, err)
	}
	if elapsed := time.Since(start); posts.Load() != 3 || elapsed < 950*time.Millisecond {
		t.Errorf("POST: %d attempts in %s; want 3, the second after Retry-After (1s)", posts.Load(), elapsed)
	}
	posts.Store(10)
	if _, err := c.CreateProduct(ctx, ProductParams{Name: "p"}); !IsUnavailable(err) || posts.Load() != 11 {
		t.Errorf("POST answered 500: %v after %d attempts; want one attempt", err, posts.Load()-10)
	}
}

// countingServer answers every request with handle, counting the requests by method.
func countingServer(t *testing.T, handle func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		handle(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestReadRetriesBoundsTheAttempts: ReadRetries is the number of retries after the first attempt;
// negative turns retries off; the default is 3 (4 attempts in all).
func TestReadRetriesBoundsTheAttempts(t *testing.T) {
	srv, n := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	for _, tc := range []struct {
		retries int
		want    int32
	}{{-1, 1}, {1, 2}, {0, 4}} {
		n.Store(0)
		c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", ReadRetries: tc.retries, RetryInitialInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetProduct(context.Background(), 1); !IsUnavailable(err) || n.Load() != tc.want {
			t.Errorf("ReadRetries %d: %v after %d attempts, want the 502 after %d", tc.retries, err, n.Load(), tc.want)
		}
	}
}

// TestHungReadIsTriedAgain: an attempt of a read gets at most half of the call's timeout, so that a
// read that hangs is tried again within the call instead of failing it.
func TestHungReadIsTriedAgain(t *testing.T) {
	srv, n := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-r.Context().Done() // hangs until the client gives up on the attempt
			return
		}
		_, _ = w.Write([]byte(`{"service":{"id":7}}`))
	})
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", Timeout: 2 * time.Second, RetryInitialInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := c.GetProduct(context.Background(), 7)
	if err != nil || p.ID != 7 || n.Load() != 2 {
		t.Fatalf("GET after a hung attempt: %+v, %v after %d attempts; want product 7 after 2", p, err, n.Load())
	}
	if elapsed := time.Since(start); elapsed < 900*time.Millisecond || elapsed > 1900*time.Millisecond {
		t.Errorf("took %s; want about half the timeout (1s) for the hung attempt, then the answer", elapsed)
	}
}

// TestRetryAfterOf503IsHonoured: a read answered 503 with Retry-After is not tried again sooner than it
// says, and RetryAfter reports it to the caller; a write answered so is tried again as often, each time
// after it.
func TestRetryAfterOf503IsHonoured(t *testing.T) {
	srv, n := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 || r.Method != http.MethodGet {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"service":{"id":7}}`))
	})
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", RetryInitialInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if p, err := c.GetProduct(context.Background(), 7); err != nil || p.ID != 7 {
		t.Fatalf("GET: %+v, %v", p, err)
	}
	if elapsed := time.Since(start); elapsed < 950*time.Millisecond {
		t.Errorf("retried after %s, sooner than Retry-After: 1", elapsed)
	}
	n.Store(10)
	start = time.Now()
	_, err = c.CreateProduct(context.Background(), ProductParams{Name: "p"})
	if d, ok := RetryAfter(err); !ok || d != time.Second || n.Load() != 14 || time.Since(start) < 2900*time.Millisecond {
		t.Errorf("POST answered 503 with Retry-After: %v (Retry-After %v, %v) after %d attempts in %s; want 4, a second apart, and the delay reported",
			err, d, ok, n.Load()-10, time.Since(start))
	}
}

// TestRetryAfterBeyondTheDeadlineOrTheCapIsNotWaited: a Retry-After that the deadline cannot hold, or
// longer than the client ever waits (30s), ends the call at once with the error, for the caller to
// requeue: no worker is held waiting.
func TestRetryAfterBeyondTheDeadlineOrTheCapIsNotWaited(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		deadline   time.Duration
	}{{"5", 2 * time.Second}, {"60", 5 * time.Minute}} {
		srv, n := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", tc.retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
		})
		c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
		start := time.Now()
		_, err = c.GetProduct(ctx, 1)
		cancel()
		if elapsed := time.Since(start); !IsRateLimited(err) || n.Load() != 1 || elapsed > 500*time.Millisecond {
			t.Errorf("Retry-After %s, deadline %s: %v after %d attempts in %s; want the 429 at once", tc.retryAfter, tc.deadline, err, n.Load(), elapsed)
		}
	}
}

// TestWriteIsRetriedOn429: a write answered 429, even without Retry-After, was refused before anything
// was done: it is sent again, with backoff, as a read is.
func TestWriteIsRetriedOn429(t *testing.T) {
	srv, n := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", RetryInitialInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProduct(context.Background(), ProductParams{Name: "p"}); !IsRateLimited(err) || n.Load() != 4 {
		t.Errorf("POST answered 429 without Retry-After: %v after %d attempts; want 4", err, n.Load())
	}
	n.Store(0)
	if _, err := c.GetProduct(context.Background(), 1); !IsRateLimited(err) || n.Load() != 4 {
		t.Errorf("GET answered 429 without Retry-After: %v after %d attempts; want 4", err, n.Load())
	}
}

// TestRetryAfterIsCapped: a Retry-After longer than Config.MaxRetryAfter (in seconds or as a date) pauses
// the tenant's pacer for the cap only; the error reports the cap and what 3scale asked for, and so does
// the observer (for the metric of capped waits). One under the cap is honoured as it is.
func TestRetryAfterIsCapped(t *testing.T) {
	type result struct {
		RetryAfter, Asked, ObservedAfter, ObservedAsked time.Duration
	}
	cases := map[string]struct {
		max        time.Duration
		retryAfter string
		want       result
		note       string // a regexp the error must match; empty: no note
	}{
		"2h, default cap": {retryAfter: "7200",
			want: result{RetryAfter: 5 * time.Minute, Asked: 2 * time.Hour, ObservedAfter: 5 * time.Minute, ObservedAsked: 2 * time.Hour},
			note: `: 429 Too Many Requests: Too many requests; 3scale asked to wait 2h; waiting 5m at most \(--max-retry-after\)$`},
		"a date a year ahead, cap 90s": {max: 90 * time.Second, retryAfter: time.Now().Add(365 * 24 * time.Hour).UTC().Format(http.TimeFormat),
			want: result{RetryAfter: 90 * time.Second, Asked: 365 * 24 * time.Hour, ObservedAfter: 90 * time.Second, ObservedAsked: 365 * 24 * time.Hour},
			note: `; 3scale asked to wait 87(59h59m\d+s|60h); waiting 1m30s at most \(--max-retry-after\)$`},
		"under the cap": {retryAfter: "240", want: result{RetryAfter: 4 * time.Minute, ObservedAfter: 4 * time.Minute}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tc.retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":"Too many requests"}`))
			})
			var observed CallInfo
			c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", MaxRetryAfter: tc.max, Observer: func(ci CallInfo) { observed = ci }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CreateProduct(context.Background(), ProductParams{Name: "p"})
			e, ok := asAPIError(err)
			if !ok {
				t.Fatalf("not an APIError: %v", err)
			}
			got := result{RetryAfter: e.RetryAfter.Round(time.Second), Asked: e.RetryAfterAsked.Round(time.Hour), ObservedAfter: observed.RetryAfter.Round(time.Second),
				ObservedAsked: observed.RetryAfterAsked.Round(time.Hour)}
			if tc.want.Asked == 0 {
				got.Asked, got.ObservedAsked = e.RetryAfterAsked, observed.RetryAfterAsked
			}
			if tc.note == "" && strings.Contains(err.Error(), "asked to wait") || tc.note != "" && !regexp.MustCompile(tc.note).MatchString(err.Error()) {
				t.Errorf("error %q; want it to match %q", err, tc.note)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v (-want +got):\n%s", err, diff)
			}
			if d, _ := RetryAfter(err); d != e.RetryAfter {
				t.Errorf("RetryAfter(err) = %v, want %v", d, e.RetryAfter)
			}
			c.pacer.mu.Lock()
			pause := time.Until(c.pacer.pauseUntil)
			c.pacer.mu.Unlock()
			if pause > tc.want.RetryAfter || pause < tc.want.RetryAfter-time.Minute {
				t.Errorf("the tenant is paused for %s, want %s", pause.Round(time.Second), tc.want.RetryAfter)
			}
		})
	}
}

// TestCappedRetryAfterIsWaitedInTheCall: a read answered 429 with Retry-After of an hour, under a cap
// of one second, is tried again after that second and succeeds within the call.
func TestCappedRetryAfterIsWaitedInTheCall(t *testing.T) {
	srv, n := countingServer(t, func(n int32, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"service":{"id":7}}`))
	})
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", MaxRetryAfter: time.Second, RetryInitialInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	p, err := c.GetProduct(ctx, 7)
	if elapsed := time.Since(start); err != nil || p.ID != 7 || n.Load() != 2 || elapsed < 950*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("GET after Retry-After 3600 capped at 1s: %+v, %v after %d attempts in %s; want product 7 after 2 attempts, about 1s",
			p, err, n.Load(), elapsed)
	}
}

// TestLostAnswerOfAnUpdateIsReplayed: a PUT by id whose answer is lost (the connection closed after the
// request) is sent again, as it ends in the same place; a POST, and a state transition, are not.
func TestLostAnswerOfAnUpdateIsReplayed(t *testing.T) {
	srv, n := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 || r.Method == http.MethodPost || strings.HasSuffix(r.URL.Path, "/suspend.json") {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
			return
		}
		_, _ = w.Write([]byte(`{"metric":{"id":5,"system_name":"m","friendly_name":"M","unit":"hit"}}`))
	})
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-retry-1234", RetryInitialInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.UpdateMetric(context.Background(), ProductScope(1), 5, MetricParams{FriendlyName: "M", Unit: "hit"}); err != nil || m.ID != 5 || n.Load() != 2 {
		t.Errorf("PUT of a metric whose first answer was lost: %+v, %v after %d attempts; want metric 5 after 2", m, err, n.Load())
	}
	n.Store(10)
	// A create is not sent again blindly: it is settled with one read (settle.go), which fails here.
	if _, err := c.CreateMetric(context.Background(), ProductScope(1), MetricParams{SystemName: "m", FriendlyName: "M", Unit: "hit"}); err == nil || n.Load() != 12 {
		t.Errorf("POST whose answer was lost: %v after %d requests; want the error after the POST and one read", err, n.Load()-10)
	}
	n.Store(20)
	if _, err := c.SuspendApplication(context.Background(), 1, 2); err == nil || n.Load() != 21 {
		t.Errorf("a suspension whose answer was lost: %v after %d attempts; want the error after one", err, n.Load()-20)
	}
}
