package cache

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	tsclient "github.com/apimsync/apimsync/client"
)

// TestClientPoolKeepsEveryTenantsPacer: with more tenants than clients kept (the manager serving
// hundreds of tenants), a tenant whose client aged out gets a new client with the same pacer back: what it
// learnt of the tenant's rate is kept, and no two pacers ever pace one tenant side by side. The client
// that aged out closes its idle connections.
func TestClientPoolKeepsEveryTenantsPacer(t *testing.T) {
	var open, closed atomic.Int64
	srv := countingServer(0, &open, &closed)
	defer srv.Close()
	const size, tenants = 2, 6
	p := NewClientPool(size, 0, 0, 4)
	cfg := func(i int) tsclient.Config {
		return tsclient.Config{AdminURL: fmt.Sprintf("%s/t/tenant-%d", srv.URL, i), Token: "token"}
	}
	get := func(i int) *tsclient.Client {
		c, err := p.Get(fmt.Sprint(i), cfg(i))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := get(0)
	if _, err := first.ListProducts(context.Background()); err != nil {
		t.Fatal(err)
	}
	pacers := map[int]*tsclient.Pacer{0: first.Pacer()}
	for round := range 3 {
		for i := range tenants {
			c := get(i)
			if want, ok := pacers[i]; ok && c.Pacer() != want {
				t.Fatalf("round %d: tenant %d got a new pacer after its client aged out (pool of %d clients, %d tenants)", round, i, size, tenants)
			}
			pacers[i] = c.Pacer()
		}
	}
	if again := get(0); again == first {
		t.Errorf("tenant 0's client did not age out: the test shows nothing")
	}
	deadline := time.Now().Add(5 * time.Second)
	for closed.Load() < open.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if open.Load() == 0 || closed.Load() != open.Load() {
		t.Errorf("%d connections opened, %d closed: the client that aged out kept its idle connection", open.Load(), closed.Load())
	}
}

// countingServer answers every request with an empty product list after delay, and counts the connections
// opened and closed.
func countingServer(delay time.Duration, open, closed *atomic.Int64) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"services":[]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			closed.Add(1)
		}
	}
	srv.Start()
	return srv
}
