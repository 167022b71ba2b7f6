package cache

import (
	"strings"
	"testing"

	tsclient "github.com/apimsync/apimsync/client"
)

func TestSnapshotsAreKeyedByTenantKindAndID(t *testing.T) {
	s := NewSnapshots(2)
	s.Put("acme", "product", 1, "p1")
	s.Put("other", "product", 1, "other-p1")
	if got, ok := Get[string](s, "acme", "product", 1); !ok || got != "p1" {
		t.Errorf("Get = %q, %v; want p1", got, ok)
	}
	if _, ok := Get[string](s, "acme", "backend", 1); ok {
		t.Errorf("a product snapshot was returned for a backend")
	}
	if _, ok := Get[int](s, "acme", "product", 1); ok {
		t.Errorf("a snapshot of another type was returned")
	}
	s.Put("acme", "plan", 9, "x") // evicts the least recently used: other/product/1
	if _, ok := Get[string](s, "other", "product", 1); ok {
		t.Errorf("the LRU kept more than its size")
	}
	s.Forget("acme", "product", 1)
	if _, ok := Get[string](s, "acme", "product", 1); ok {
		t.Errorf("Forget did not forget")
	}
	var nilCache *Snapshots
	nilCache.Put("a", "b", 1, "c") // a nil cache is a valid, empty one
	if _, ok := Get[string](nilCache, "a", "b", 1); ok {
		t.Errorf("a nil cache returned something")
	}
}

func TestClientPoolSharesOneClientPerCredentials(t *testing.T) {
	p := NewClientPool(8, 5, 5, 2)
	observed := map[string]bool{}
	p.Observer = func(tenant string) tsclient.Observer {
		observed[tenant] = true
		return func(tsclient.CallInfo) {}
	}
	cfg := tsclient.Config{AdminURL: "https://acme-admin.example.com", Token: "t1"}
	a, err := p.Get("acme", cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Get("acme", cfg)
	if a != b {
		t.Errorf("the same credentials gave two clients")
	}
	cfg.Token = "t2"
	c, _ := p.Get("acme", cfg)
	if c == a {
		t.Errorf("a rotated token reused the old client")
	}
	if !observed["acme"] {
		t.Errorf("the observer was not wired")
	}
	if _, err := p.Get("bad", tsclient.Config{AdminURL: "not a url", Token: "x"}); err == nil {
		t.Errorf("a bad admin URL was accepted")
	}
	if key := poolKey(cfg, tenantKeyOf(cfg)); key == "" || strings.Contains(key, cfg.Token) {
		t.Errorf("pool key leaks or is empty: %q", key)
	}
}

// TestClientPoolKeyIsTheNormalizedTenant: two spellings of one admin URL share one client (one rate
// limit); two tenants never share one, whatever label the caller gives them.
func TestClientPoolKeyIsTheNormalizedTenant(t *testing.T) {
	p := NewClientPool(8, 5, 5, 2)
	a, err := p.Get("acme-admin.example.com", tsclient.Config{AdminURL: "https://acme-admin.example.com", Token: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Get("acme-admin.example.com", tsclient.Config{AdminURL: "HTTPS://Acme-Admin.example.com:443/", Token: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two spellings of one admin URL gave two clients")
	}
	other, err := p.Get("acme-admin.example.com", tsclient.Config{AdminURL: "https://other-admin.example.com", Token: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if other == a {
		t.Errorf("another tenant got acme's client (and would have sent its calls to acme)")
	}
}
