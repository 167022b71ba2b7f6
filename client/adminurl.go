package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NormalizeTenant returns the canonical key of a tenant's admin URL: scheme and host in lower case, the
// scheme's default port (https:443, http:80) left out, no trailing slash on the path. Two spellings of one
// admin portal give one key. It identifies the tenant everywhere: the owner check and the ids recorded in
// status, the client pool (so one rate limit per tenant), the same-tenant rules and the metrics' tenant
// label. The key of an https URL is its host (and path prefix, if any), e.g. "acme-admin.3scale.net"; a
// plain http URL keeps its scheme, "http://127.0.0.1:8080", so that it never shares a key with https.
func NormalizeTenant(adminURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(adminURL))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", adminURL)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	key := host + strings.TrimRight(u.EscapedPath(), "/")
	if scheme != "https" {
		key = scheme + "://" + key
	}
	return key, nil
}

// TenantKey is NormalizeTenant, under the name it had first.
func TenantKey(adminURL string) (string, error) { return NormalizeTenant(adminURL) }

// AdminURLPolicy says which admin URLs a provider account may point the operator at.
type AdminURLPolicy struct {
	// AllowInsecureHTTP allows plain http (the Secret opts in).
	AllowInsecureHTTP bool
	// AllowPrivate allows loopback, link-local, private and cluster-internal addresses (a manager flag, for
	// demos and tests).
	AllowPrivate bool
}

// AdminURLError says why the policy refuses an admin URL. Problem is phrased to follow the URL's name:
// "must be https (...)", so that a caller can say `adminURL must be https (...)`.
type AdminURLError struct {
	Problem string
}

// Error implements error.
func (e *AdminURLError) Error() string { return "the admin URL " + e.Problem }

func refuse(format string, args ...any) error {
	return &AdminURLError{Problem: fmt.Sprintf(format, args...)}
}

// Check refuses an admin URL the policy does not allow, with a message for a person: https only unless
// http is allowed; no user info, query or fragment; no loopback, link-local, private or cluster-internal
// host unless allowed. The addresses a name resolves to are checked again when dialing. The error is an
// *AdminURLError; it never quotes the URL (which could carry a password), only its host.
func (p AdminURLPolicy) Check(adminURL string) error {
	u, err := url.Parse(strings.TrimSpace(adminURL))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return refuse("must be the tenant's admin portal URL, e.g. https://acme-admin.3scale.net")
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http" && p.AllowInsecureHTTP:
	case scheme == "http":
		return refuse(`must be https (set allowInsecureHTTP: "true" in the Secret to allow plain http)`)
	default:
		return refuse("must be https, not %q", u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return refuse("must not carry user info, a query or a fragment")
	}
	if !p.AllowPrivate && isInternalHost(u.Hostname()) {
		return refuse("must not be on a loopback, link-local, private or cluster-internal address (%q), which the manager refuses unless started with --allow-private-admin-urls", u.Hostname())
	}
	return nil
}

// internalNames are host names, and suffixes of host names, that name this machine or the cluster's
// inside.
var (
	internalNames    = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	internalSuffixes = []string{".localhost", ".local", ".internal", ".svc", ".cluster.local", ".svc.cluster.local", ".kubernetes.default"}
)

// isInternalHost reports a host that names this machine or the cluster's inside.
func isInternalHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if addr, err := netip.ParseAddr(h); err == nil {
		return isInternalAddr(addr)
	}
	if !strings.Contains(h, ".") {
		return true // a single label resolves through the cluster's search domains
	}
	for _, n := range internalNames {
		if h == n {
			return true
		}
	}
	for _, suffix := range internalSuffixes {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return strings.Contains(h, ".svc.") // <service>.<namespace>.svc.<cluster domain>
}

var (
	thisNetwork  = netip.MustParsePrefix("0.0.0.0/8")      // "this network": 0.0.0.0 reaches this machine
	sharedNAT    = netip.MustParsePrefix("100.64.0.0/10")  // carrier-grade NAT, used for cluster networks too
	nat64        = netip.MustParsePrefix("64:ff9b::/96")   // NAT64 well-known prefix (RFC 6052)
	nat64Private = netip.MustParsePrefix("64:ff9b:1::/48") // NAT64 local-use prefix (RFC 8215)
)

// isInternalAddr reports loopback, link-local (169.254/16, fe80::/10), unspecified and "this network"
// (0/8), private (RFC 1918, unique local fc00::/7) and carrier-grade NAT addresses, and the NAT64
// addresses that reach them.
//
// A NAT64 gateway turns 64:ff9b::a.b.c.d into the IPv4 address a.b.c.d, so an address of the well-known
// prefix is internal when the IPv4 address it embeds is (64:ff9b::7f00:1 is 127.0.0.1, 64:ff9b::a9fe:a9fe
// the metadata service): the NAT64 gateway, inside the cluster's network, would reach it. One embedding a
// public address is public: in an IPv6-only cluster with DNS64 every IPv4-only host, a SaaS tenant's admin
// portal among them, resolves to such an address, and refusing the whole prefix would refuse them all.
// The local-use prefix 64:ff9b:1::/48 is internal whole: the network chooses its prefix length, and so
// where the IPv4 address sits in it, and it is for translation inside one organisation's network.
func isInternalAddr(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		return isInternalAddr(netip.AddrFrom4([4]byte(b[12:])))
	}
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsPrivate() ||
		thisNetwork.Contains(a) || sharedNAT.Contains(a) || nat64Private.Contains(a)
}

// errAddressRefused marks a connection the policy refused at dial time: not a passing failure, so it is
// not retried inside the client.
var errAddressRefused = errors.New("address refused by the admin URL policy")

// addressRefused is the error of a refused dial, or of a request the policy kept from a proxy; it says
// which address and how to allow it.
type addressRefused struct{ host string }

func (e *addressRefused) Error() string {
	return fmt.Sprintf("refusing to connect to %s: a loopback, link-local, private or cluster-internal address (start the manager with --allow-private-admin-urls to allow it)", e.host)
}

func (e *addressRefused) Is(target error) bool { return target == errAddressRefused }

// dialControl refuses, at dial time, an address the policy does not allow: a name that resolved to an
// internal address (DNS rebinding) is refused like the address itself.
func (p AdminURLPolicy) dialControl(_, address string, _ syscall.RawConn) error {
	if p.AllowPrivate {
		return nil
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if addr, err := netip.ParseAddr(host); err == nil && isInternalAddr(addr) {
		return &addressRefused{host: host}
	}
	return nil
}

// dialer returns the dialer of a client under the policy, with the timeouts of http.DefaultTransport.
// Connections to an HTTP(S) proxy the manager's environment names (proxies.has) are not checked: the
// operator chose that proxy, and it is often on a private address. The proxy, not this process, resolves
// and reaches the admin host, so the dial-time check cannot see where it goes: proxy checks the admin
// host before a request is handed to the proxy.
func (p AdminURLPolicy) dialer(proxies *proxyAddrs) func(ctx context.Context, network, address string) (net.Conn, error) {
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.dialControl}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if proxies.has(address) {
			return plain.DialContext(ctx, network, address)
		}
		return checked.DialContext(ctx, network, address)
	}
}

// proxy returns a transport's Proxy function under the policy: the environment's (HTTPS_PROXY,
// HTTP_PROXY, NO_PROXY: proxy), remembering in proxies the address of every proxy it names, so that the
// dialer lets it through; and, for a request it sends through a proxy, applying the policy to the admin
// host first.
//
// Through a proxy, the proxy resolves the admin host's name and connects to it: the dial-time check sees
// only the proxy's address, and a name resolving to an internal address (DNS rebinding, or a tenant's
// admin URL pointed at the cluster's inside) would be reached through the proxy. So before a request goes
// to a proxy, the admin host is resolved here and refused if any of its addresses is internal, as a
// direct connection to it would be. (The alternative, refusing a proxy unless an explicit opt-in lifts
// the policy, would turn away every cluster whose egress goes through a proxy.) The verdict on a host is
// kept for proxyCheckTTL, so that not every request costs a DNS query. This closes the gap as far as this
// process can: the proxy resolves the name again, and in a split-horizon DNS it may get another answer;
// a name that does not resolve here (a cluster whose only way to external DNS is its proxy) is not sent,
// the error says why. AllowPrivate lifts the check, as it lifts the dial-time check.
func (p AdminURLPolicy) proxy(proxy func(*http.Request) (*url.URL, error), proxies *proxyAddrs) func(*http.Request) (*url.URL, error) {
	if proxy == nil {
		return nil
	}
	checks := &hostChecks{}
	return func(r *http.Request) (*url.URL, error) {
		u, err := proxy(r)
		if err != nil || u == nil {
			return u, err
		}
		if !p.AllowPrivate {
			if err := checks.check(r.Context(), r.URL.Hostname()); err != nil {
				return nil, err
			}
		}
		proxies.seen.Store(proxyAddr(u), true)
		return u, nil
	}
}

// lookupIP resolves a host name for the check of a request sent through a proxy; tests replace it.
var lookupIP = net.DefaultResolver.LookupNetIP

// proxyCheckTTL is how long a host found public is not resolved again for the check of proxied requests.
const proxyCheckTTL = 30 * time.Second

// hostChecks checks hosts before requests to them go through a proxy, keeping the hosts found public for
// proxyCheckTTL.
type hostChecks struct {
	mu     sync.Mutex
	public map[string]time.Time // host: when its check expires
}

// check refuses (an *addressRefused) a host that is internal by its name or by any address it resolves
// to; it fails with the resolver's error when the host does not resolve.
func (c *hostChecks) check(ctx context.Context, host string) error {
	c.mu.Lock()
	until, ok := c.public[host]
	c.mu.Unlock()
	if ok && time.Now().Before(until) {
		return nil
	}
	if isInternalHost(host) {
		return &addressRefused{host: host}
	}
	addrs, err := lookupIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("cannot check the addresses of %s before sending a request to it through the proxy: %w", host, err)
	}
	for _, a := range addrs {
		if isInternalAddr(a) {
			return &addressRefused{host: fmt.Sprintf("%s (%s) through the proxy", host, a)}
		}
	}
	c.mu.Lock()
	if c.public == nil {
		c.public = map[string]time.Time{}
	}
	c.public[host] = time.Now().Add(proxyCheckTTL)
	c.mu.Unlock()
	return nil
}

// proxyAddrs remembers the addresses of the proxies a transport's Proxy function chose.
type proxyAddrs struct{ seen sync.Map }

func (s *proxyAddrs) has(address string) bool {
	if s == nil {
		return false
	}
	_, ok := s.seen.Load(address)
	return ok
}

// proxyAddr is the host:port net/http dials for a proxy URL.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// IsAddressRefused reports a call the admin URL policy refused at dial time: the admin host resolved to
// an internal address. It will not pass by itself.
func IsAddressRefused(err error) bool { return errors.Is(err, errAddressRefused) }
