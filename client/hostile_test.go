package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestHostileEndpoint: a 100 MiB answer is refused without being read into memory, and a list that
// never ends stops with an error naming the page cap; the heap stays small throughout.
func TestHostileEndpoint(t *testing.T) {
	chunk := []byte(strings.Repeat("x", 1<<20))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/services.json") { // an endless list: every page full
			_, _ = w.Write([]byte(`{"services":[`))
			for i := range 500 {
				if i > 0 {
					_, _ = w.Write([]byte(","))
				}
				fmt.Fprintf(w, `{"service":{"id":%d}}`, i+1)
			}
			_, _ = w.Write([]byte(`]}`))
			return
		}
		_, _ = w.Write([]byte(`{"service":{"id":1,"name":"`))
		for range 100 { // 100 MiB, streamed
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"}}`))
	}))
	defer srv.Close()
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-hostile-1234", MaxPages: 20, Policy: &AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = c.GetProduct(context.Background(), 1)
	if err == nil || !strings.Contains(err.Error(), "larger than") || IsRetryable(err) {
		t.Errorf("100 MiB answer: %v; want a non-retryable error saying it is too large", err)
	}
	_, err = c.ListProducts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "more than 20 pages") {
		t.Errorf("endless list: %v; want an error naming the page cap", err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 50<<20 {
		t.Errorf("the heap grew by %d MiB", grown>>20)
	}
	if after.TotalAlloc-before.TotalAlloc > 400<<20 {
		t.Errorf("%d MiB allocated in all: the big answer was read", (after.TotalAlloc-before.TotalAlloc)>>20)
	}
}
