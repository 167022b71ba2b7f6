package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	tsclient "github.com/apimsync/apimsync/client"
)

// ClientPool hands out one 3scale client per tenant credentials (admin URL, token hash, TLS settings), and
// one pacer per tenant, shared by all its clients: every object of a tenant, whatever token it uses, is
// paced together (client.Pacer). A rotated token makes a new client; the old one ages out of the LRU.
// Safe for concurrent use.
type ClientPool struct {
	// QPS, Burst (optional hard rate cap, 0: none) and MaxInFlight (cap of the adaptive limit) are applied
	// to every tenant's pacer.
	QPS         float64
	Burst       int
	MaxInFlight int
	// BackgroundShare is the share of each tenant's budget its drift checks may use
	// (client.PacerConfig.BackgroundShare; 0: the default).
	BackgroundShare float64
	// Observer, when set, returns the observer of calls for one tenant (metrics).
	Observer func(tenant string) tsclient.Observer

	mu      sync.Mutex
	clients *lru.Cache[string, *tsclient.Client]
	pacers  *lru.Cache[string, *tsclient.Pacer]
}

// pacersPerClient is how many more tenants' pacers the pool remembers than it keeps clients: a tenant whose
// client aged out keeps what its pacer learnt (the tenant's rate) when it comes back.
const pacersPerClient = 4

// NewClientPool returns a pool keeping at most size clients, and the pacers of pacersPerClient times as
// many tenants. A client that ages out closes its idle connections (each is two goroutines and its
// buffers); syncs still holding it finish with it.
func NewClientPool(size int, qps float64, burst, maxInFlight int) *ClientPool {
	size = max(size, 1)
	c, _ := lru.NewWithEvict[string, *tsclient.Client](size, func(_ string, c *tsclient.Client) { c.CloseIdleConnections() })
	pacers, _ := lru.New[string, *tsclient.Pacer](pacersPerClient * size)
	return &ClientPool{QPS: qps, Burst: burst, MaxInFlight: maxInFlight, clients: c, pacers: pacers}
}

// Get returns the client for the credentials in cfg (rate settings are the pool's), making it once.
// Clients are told apart by the tenant key of cfg.AdminURL (client.NormalizeTenant), never by its
// spelling, so two spellings of one admin URL share one client and one rate limit. tenant labels the
// client's calls in metrics; callers pass that same key.
func (p *ClientPool) Get(tenant string, cfg tsclient.Config) (*tsclient.Client, error) {
	tenantKey := tenantKeyOf(cfg)
	key := poolKey(cfg, tenantKey)
	p.mu.Lock()
	defer p.mu.Unlock()
	// The tenant's pacer is as recent as its last client use: a tenant in use never loses its pacer (one
	// rate learner per tenant, never two side by side), however many tenants the manager serves.
	pacer, pacerOK := p.pacers.Get(tenantKey)
	if c, ok := p.clients.Get(key); ok && pacerOK {
		return c, nil
	}
	cfg.QPS, cfg.Burst, cfg.MaxInFlight = p.QPS, p.Burst, p.MaxInFlight
	if !pacerOK {
		pacer = tsclient.NewPacer(tsclient.PacerConfig{Max: p.MaxInFlight, QPS: p.QPS, Burst: p.Burst, BackgroundShare: p.BackgroundShare})
		p.pacers.Add(tenantKey, pacer)
	}
	cfg.Pacer = pacer
	if p.Observer != nil {
		cfg.Observer = p.Observer(tenant)
	}
	c, err := tsclient.New(cfg)
	if err != nil {
		return nil, err
	}
	p.clients.Add(key, c)
	return c, nil
}

// tenantKeyOf is the tenant key of cfg's admin URL (client.NormalizeTenant), or the URL as given when it
// does not parse (tsclient.New refuses it then).
func tenantKeyOf(cfg tsclient.Config) string {
	if tenant, err := tsclient.NormalizeTenant(cfg.AdminURL); err == nil {
		return tenant
	}
	return cfg.AdminURL
}

// poolKey identifies a tenant's credentials without keeping the token in memory as a map key. The tenant
// key of the admin URL (not the URL as spelled) makes two spellings of one admin URL share one client.
func poolKey(cfg tsclient.Config, tenant string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%t\x00%t", tenant, cfg.Token, cfg.CABundle, cfg.InsecureSkipVerify, cfg.DryRun != nil)
	if cfg.Policy != nil {
		fmt.Fprintf(h, "\x00%+v", *cfg.Policy)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// EachPacer calls f with each tenant's pacer the pool holds (the tenant key: the admin URL normalized).
func (p *ClientPool) EachPacer(f func(tenant string, pacer *tsclient.Pacer)) {
	for _, tenant := range p.pacers.Keys() {
		if pacer, ok := p.pacers.Peek(tenant); ok {
			f(tenant, pacer)
		}
	}
}
