package cache

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tsclient "github.com/apimsync/apimsync/client"
)

// BenchmarkClientPoolTenants gives 500 tenants a client each from one pool (its own connection pool and
// pacer), has each make 4 calls at once, and reports what a tenant costs the manager: heap per tenant
// once its idle connections are closed (client, transport, pacer), and, while they are open, client
// goroutines and connections per tenant. The server runs in the same process: its goroutine per
// connection is subtracted; its heap is left out by measuring with the connections closed.
func BenchmarkClientPoolTenants(b *testing.B) {
	const tenants, calls = 500, 4
	var opened, closed atomic.Int64
	// long enough a delay for the calls of a tenant to overlap
	srv := countingServer(5*time.Millisecond, &opened, &closed)
	defer srv.Close()
	open := func() int64 { return opened.Load() - closed.Load() }
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		goroutinesBefore := runtime.NumGoroutine()
		p := NewClientPool(1024, 0, 0, 0)
		clients := make([]*tsclient.Client, tenants)
		var wg sync.WaitGroup
		for i := range tenants {
			c, err := p.Get(fmt.Sprint(i), tsclient.Config{AdminURL: fmt.Sprintf("%s/t/tenant-%d", srv.URL, i), Token: "token"})
			if err != nil {
				b.Fatal(err)
			}
			clients[i] = c
			for range calls {
				wg.Go(func() {
					if _, err := c.ListProducts(context.Background()); err != nil {
						b.Error(err)
					}
				})
			}
		}
		wg.Wait()
		time.Sleep(100 * time.Millisecond) // the idle connections' goroutines settle
		conns := open()
		goroutines := runtime.NumGoroutine() - goroutinesBefore - int(conns) // the server's: one per connection
		for _, c := range clients {
			c.CloseIdleConnections()
		}
		for deadline := time.Now().Add(5 * time.Second); open() > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/tenants/1024, "heapKiB/tenant")
		b.ReportMetric(float64(goroutines)/tenants, "goroutines/tenant")
		b.ReportMetric(float64(conns)/tenants, "conns/tenant")
		runtime.KeepAlive(p)
	}
}
