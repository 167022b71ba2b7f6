package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadsAreRetriedWritesAreNot: a GET answered 503 twice then 200 succeeds in one call; a POST
// answered 503 is sent once (it may have been applied: the caller decides); a POST answered 429 is sent
// again after Retry-After (porta refused it before doing anything).
func TestReadsAreRetriedWritesAreNot(t *testing.T) {
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
			if posts.Add(1) == 1 && r.URL.Path == "/admin/api/backend_apis.json" {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
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
	if _, err := c.CreateBackend(ctx, BackendParams{Name: "b"}); !IsUnavailable(err) {
		t.Errorf("POST after a 429 then a 503: %v, want the 503", err)
	}
	if elapsed := time.Since(start); posts.Load() != 2 || elapsed < 950*time.Millisecond {
		t.Errorf("POST: %d attempts in %s; want 2, the second after Retry-After (1s)", posts.Load(), elapsed)
	}
	posts.Store(10)
	if _, err := c.CreateProduct(ctx, ProductParams{Name: "p"}); !IsUnavailable(err) || posts.Load() != 11 {
		t.Errorf("POST answered 503: %v after %d attempts; want one attempt", err, posts.Load()-10)
	}
}
