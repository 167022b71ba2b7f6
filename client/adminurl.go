package client

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// TenantKey returns the canonical key of a tenant's admin URL: scheme and host in lower case, the
// scheme's default port left out, no trailing slash. Two spellings of one admin portal give one key, for
// the owner check, the client pool and rate limiter, the same-tenant rules and metrics.
func TenantKey(adminURL string) (string, error) {
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

// AdminURLPolicy says which admin URLs a provider account may point the operator at.
type AdminURLPolicy struct {
	// AllowInsecureHTTP allows plain http (the Secret opts in).
	AllowInsecureHTTP bool
	// AllowPrivate allows loopback, link-local, private and cluster-internal addresses (a manager flag, for
	// demos and tests).
	AllowPrivate bool
}

// Check refuses an admin URL the policy does not allow, with a message for a person: https only unless
// http is allowed; no user info, query or fragment; no loopback, link-local, private or cluster-internal
// host unless allowed. The addresses a name resolves to are checked again when dialing (DialControl).
func (p AdminURLPolicy) Check(adminURL string) error {
	u, err := url.Parse(strings.TrimSpace(adminURL))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("it must be the tenant's admin portal URL, e.g. https://acme-admin.3scale.net")
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http" && p.AllowInsecureHTTP:
	case scheme == "http":
		return fmt.Errorf(`it must be https (set allowInsecureHTTP: "true" in the Secret to allow plain http)`)
	default:
		return fmt.Errorf("its scheme must be https, not %q", u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("it must not carry user info, a query or a fragment")
	}
	if !p.AllowPrivate && isInternalHost(u.Hostname()) {
		return fmt.Errorf("its host %q is a loopback, link-local, private or cluster-internal address, which the manager refuses unless started with --allow-private-admin-urls", u.Hostname())
	}
	return nil
}

// isInternalHost reports a host that names this machine or the cluster's inside.
func isInternalHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if addr, err := netip.ParseAddr(h); err == nil {
		return isInternalAddr(addr)
	}
	if h == "localhost" || h == "kubernetes" || !strings.Contains(h, ".") {
		return true // a single label resolves through the cluster's search domains
	}
	for _, suffix := range []string{".localhost", ".local", ".internal", ".svc", ".kubernetes.default"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return strings.Contains(h, ".svc.") // <service>.<namespace>.svc.<cluster domain>
}

// isInternalAddr reports loopback, link-local (169.254/16, fe80::/10), unspecified, private (RFC 1918,
// unique local fc00::/7) and carrier-grade NAT addresses.
func isInternalAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsPrivate() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(a)
}

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
		return fmt.Errorf("refusing to connect to %s: a loopback, link-local or private address (start the manager with --allow-private-admin-urls to allow it)", host)
	}
	return nil
}

// dialer returns the dialer of a client under the policy.
func (p AdminURLPolicy) dialer() func(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{Control: p.dialControl}
	return d.DialContext
}
