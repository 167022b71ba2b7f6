package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTenantKeyNormalizesSpellings(t *testing.T) {
	same := []string{"https://acme-admin.3scale.net", "HTTPS://ACME-admin.3scale.NET/", "https://acme-admin.3scale.net:443", "https://acme-admin.3scale.net:443//"}
	for _, u := range same {
		if got, err := TenantKey(u); err != nil || got != "acme-admin.3scale.net" {
			t.Errorf("TenantKey(%q) = %q, %v; want acme-admin.3scale.net", u, got, err)
		}
	}
	for u, want := range map[string]string{
		"http://127.0.0.1:80/t/acme/": "http://127.0.0.1/t/acme",
		"https://h:8443":              "h:8443",
		"https://[::1]:443":           "[::1]",
	} {
		if got, err := TenantKey(u); err != nil || got != want {
			t.Errorf("TenantKey(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
}

func TestAdminURLPolicy(t *testing.T) {
	cases := map[string]struct {
		url     string
		policy  AdminURLPolicy
		wantErr string
	}{
		"https tenant":                 {url: "https://acme-admin.3scale.net", wantErr: ""},
		"http refused":                 {url: "http://acme-admin.3scale.net", wantErr: "allowInsecureHTTP"},
		"http allowed by the Secret":   {url: "http://acme-admin.3scale.net", policy: AdminURLPolicy{AllowInsecureHTTP: true}},
		"user info":                    {url: "https://u:p@acme-admin.3scale.net", wantErr: "user info"},
		"query":                        {url: "https://acme-admin.3scale.net/?x=1", wantErr: "query"},
		"fragment":                     {url: "https://acme-admin.3scale.net/#f", wantErr: "fragment"},
		"loopback":                     {url: "https://127.0.0.1", wantErr: "--allow-private-admin-urls"},
		"localhost":                    {url: "https://localhost:8443", wantErr: "--allow-private-admin-urls"},
		"link-local metadata":          {url: "https://169.254.169.254", wantErr: "link-local"},
		"IPv6 link-local":              {url: "https://[fe80::1]", wantErr: "link-local"},
		"private":                      {url: "https://10.1.2.3", wantErr: "private"},
		"cluster service":              {url: "https://system-provider.threescale.svc.cluster.local", wantErr: "cluster-internal"},
		"single label":                 {url: "https://kubernetes", wantErr: "cluster-internal"},
		"loopback allowed by the flag": {url: "https://127.0.0.1", policy: AdminURLPolicy{AllowPrivate: true}},
		"not a URL":                    {url: "acme", wantErr: "admin portal URL"},
		"another scheme":               {url: "ftp://acme.example.com", wantErr: "https"},
	}
	for name, tc := range cases {
		err := tc.policy.Check(tc.url)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.wantErr)
		}
	}
}

// TestDialTimeCheckRefusesInternalAddresses: a client whose host resolves to a loopback address (as after
// DNS rebinding) does not connect, unless private addresses are allowed.
func TestDialTimeCheckRefusesInternalAddresses(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hit = true
		_, _ = w.Write([]byte(`{"services":[]}`))
	}))
	defer srv.Close()
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-dial-test-1234", Policy: &AdminURLPolicy{AllowInsecureHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.ProbeCredentials(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refusing to connect") || hit {
		t.Errorf("a loopback server was reached or not refused: %v", err)
	}
	c, _ = New(Config{AdminURL: srv.URL, Token: "tok-dial-test-1234", Policy: &AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err := c.ProbeCredentials(context.Background()); err != nil || !hit {
		t.Errorf("allowed private address: %v, reached %v", err, hit)
	}
}

func TestNormalizeTenantIsOneKeyPerTenant(t *testing.T) {
	for _, u := range []string{"https://acme-admin.3scale.net", "HTTPS://Acme-Admin.3scale.net:443/", " https://acme-admin.3scale.net// "} {
		if got, err := NormalizeTenant(u); err != nil || got != "acme-admin.3scale.net" {
			t.Errorf("NormalizeTenant(%q) = %q, %v; want acme-admin.3scale.net", u, got, err)
		}
	}
	a, _ := NormalizeTenant("http://acme-admin.3scale.net")
	b, _ := NormalizeTenant("https://acme-admin.3scale.net")
	if a == b {
		t.Errorf("http and https spellings share the key %q", a)
	}
	if _, err := NormalizeTenant("acme-admin.3scale.net"); err == nil {
		t.Errorf("a URL without scheme gave a key")
	}
}

// TestAdminURLPolicyRefusesClusterNames: the names that reach the cluster's inside, and addresses of
// "this network", are refused like private addresses; the message never quotes a password.
func TestAdminURLPolicyRefusesClusterNames(t *testing.T) {
	for _, u := range []string{"https://kubernetes.default", "https://kubernetes.default.svc", "https://kubernetes.default.svc.cluster.local",
		"https://porta.threescale.svc", "https://porta.cluster.local", "https://0.1.2.3", "https://[::ffff:10.0.0.1]", "https://100.64.1.1",
		"https://[fd00::1]", "https://[::]", "https://LOCALHOST.", "https://metadata.google.internal"} {
		err := AdminURLPolicy{AllowInsecureHTTP: true}.Check(u)
		var refused *AdminURLError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "--allow-private-admin-urls") {
			t.Errorf("%s: %v; want a refusal naming --allow-private-admin-urls", u, err)
		}
		if err := (AdminURLPolicy{AllowPrivate: true}).Check(u); err != nil {
			t.Errorf("%s with private addresses allowed: %v", u, err)
		}
	}
	err := AdminURLPolicy{}.Check("https://admin:s3cr3t@acme-admin.3scale.net")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("user info: %v", err)
	}
	if err := (AdminURLPolicy{}).Check("http://acme-admin.3scale.net"); err == nil ||
		err.Error() != `the admin URL must be https (set allowInsecureHTTP: "true" in the Secret to allow plain http)` {
		t.Errorf("http: %v", err)
	}
}

// TestDialTimeRefusalIsNotRetried: a connection the policy refuses is one attempt, not a passing
// failure retried with backoff.
func TestDialTimeRefusalIsNotRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var attempts atomic.Int32
	c, err := New(Config{AdminURL: srv.URL, Token: "tok-dial-test-1234", Policy: &AdminURLPolicy{AllowInsecureHTTP: true},
		Observer: func(CallInfo) { attempts.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetProduct(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "refusing to connect to 127.0.0.1") || attempts.Load() != 1 {
		t.Errorf("refused dial: %v after %d attempts; want the refusal after 1", err, attempts.Load())
	}
}

// TestProxyOfTheEnvironmentMayBePrivate: a proxy the manager's environment names (HTTPS_PROXY) is
// reached even on a private address: the operator chose it, and it resolves the admin host itself.
func TestProxyOfTheEnvironmentMayBePrivate(t *testing.T) {
	var proxied atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(r.URL.String())
		_, _ = w.Write([]byte(`{"service":{"id":1}}`))
	}))
	defer proxy.Close()
	useProxy(t, proxy.URL, map[string][]string{"acme-admin.example.com": {"93.184.215.14"}})

	c, err := New(Config{AdminURL: "http://acme-admin.example.com", Token: "tok-proxy-1234", Policy: &AdminURLPolicy{AllowInsecureHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetProduct(context.Background(), 1); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if got, _ := proxied.Load().(string); got != "http://acme-admin.example.com/admin/api/services/1.json" {
		t.Errorf("the proxy got %q", got)
	}
}

// TestNAT64AddressesAreCheckedLikeWhatTheyReach: an address of the NAT64 well-known prefix is internal
// when the IPv4 address it embeds is (the gateway would reach it), public otherwise (DNS64 gives one to
// every IPv4-only host); the local-use prefix 64:ff9b:1::/48 is internal whole. Both the admin URL check
// and the dial-time check refuse them.
func TestNAT64AddressesAreCheckedLikeWhatTheyReach(t *testing.T) {
	type verdict struct{ Check, Dial bool }
	cases := map[string]verdict{
		"64:ff9b::7f00:1":          {true, true}, // 127.0.0.1
		"64:ff9b::10.1.2.3":        {true, true},
		"64:ff9b::169.254.169.254": {true, true}, // the metadata service
		"64:ff9b::100.64.0.1":      {true, true},
		"64:ff9b::0.0.0.1":         {true, true},
		"64:ff9b::192.168.1.1":     {true, true},
		"64:ff9b::8.8.8.8":         {false, false},
		"64:ff9b:1::8.8.8.8":       {true, true},
		"64:ff9b:1:ab::1":          {true, true},
		"2606:4700::1111":          {false, false},
	}
	for addr, want := range cases {
		got := verdict{
			Check: AdminURLPolicy{}.Check("https://["+addr+"]") != nil,
			Dial:  AdminURLPolicy{}.dialControl("tcp6", "["+addr+"]:443", nil) != nil,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s refused (-want +got):\n%s", addr, diff)
		}
		if err := (AdminURLPolicy{AllowPrivate: true}).Check("https://[" + addr + "]"); err != nil {
			t.Errorf("%s with private addresses allowed: %v", addr, err)
		}
	}
}

// useProxy makes the environment name proxyURL as the proxy of every request, and the resolver answer the
// check of proxied requests from addrs (host: addresses; an unknown host does not resolve), for the test.
func useProxy(t *testing.T, proxyURL string, addrs map[string][]string) *atomic.Int32 {
	t.Helper()
	u, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	savedProxy, savedLookup := environmentProxy, lookupIP
	t.Cleanup(func() { environmentProxy, lookupIP = savedProxy, savedLookup })
	environmentProxy = func(*http.Request) (*url.URL, error) { return u, nil }
	var lookups atomic.Int32
	lookupIP = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		as, ok := addrs[host]
		if !ok {
			return nil, fmt.Errorf("lookup %s: no such host", host)
		}
		out := make([]netip.Addr, 0, len(as))
		for _, a := range as {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
	return &lookups
}

// TestPolicyAppliesToTheTargetOfAProxy: with a proxy in the environment (HTTPS_PROXY), the proxy resolves
// the admin host and the dial-time check sees only the proxy: the client resolves the admin host itself
// and refuses, before the proxy gets anything, one with an internal address (or name), as it refuses a
// direct connection (a refusal is, as at dial time, no answer: Unavailable, but not retried); one that does
// not resolve is not sent either. A public host goes through the proxy,
// resolved once for several requests; private addresses allowed, nothing is checked.
func TestPolicyAppliesToTheTargetOfAProxy(t *testing.T) {
	type outcome struct {
		Proxied, Refused, NotSent, Unavailable bool
		Attempts, Lookups                      int32
	}
	cases := map[string]struct {
		adminURL     string
		addrs        []string
		allowPrivate bool
		want         outcome
		wantErr      string
	}{
		"public host":     {adminURL: "http://acme-admin.example.com", addrs: []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"}, want: outcome{Proxied: true, Attempts: 2, Lookups: 1}},
		"private address": {adminURL: "http://acme-admin.example.com", addrs: []string{"10.0.0.5"}, want: outcome{Refused: true, NotSent: true, Unavailable: true, Attempts: 1, Lookups: 1}, wantErr: "refusing to connect to acme-admin.example.com (10.0.0.5) through the proxy"},
		"one of two is internal": {adminURL: "http://acme-admin.example.com", addrs: []string{"93.184.215.14", "64:ff9b::a9fe:a9fe"},
			want: outcome{Refused: true, NotSent: true, Unavailable: true, Attempts: 1, Lookups: 1}, wantErr: "--allow-private-admin-urls"},
		"metadata address": {adminURL: "http://169.254.169.254", want: outcome{Refused: true, NotSent: true, Unavailable: true, Attempts: 1}, wantErr: "refusing to connect to 169.254.169.254"},
		"cluster name": {adminURL: "http://porta.threescale.svc.cluster.local", want: outcome{Refused: true, NotSent: true, Unavailable: true, Attempts: 1},
			wantErr: "refusing to connect to porta.threescale.svc.cluster.local"},
		"does not resolve": {adminURL: "http://acme-admin.example.com", want: outcome{Unavailable: true, Attempts: 1, Lookups: 1}, wantErr: "cannot check the addresses of acme-admin.example.com"},
		"private allowed":  {adminURL: "http://acme-admin.example.com", addrs: []string{"10.0.0.5"}, allowPrivate: true, want: outcome{Proxied: true, Attempts: 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var proxied atomic.Bool
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				proxied.Store(true)
				_, _ = w.Write([]byte(`{"service":{"id":1}}`))
			}))
			defer proxy.Close()
			host, _ := url.Parse(tc.adminURL)
			lookups := useProxy(t, proxy.URL, map[string][]string{host.Hostname(): tc.addrs})
			if tc.addrs == nil {
				lookups = useProxy(t, proxy.URL, nil)
			}
			var attempts atomic.Int32
			c, err := New(Config{AdminURL: tc.adminURL, Token: "tok-proxy-1234", ReadRetries: -1, Observer: func(CallInfo) { attempts.Add(1) },
				Policy: &AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: tc.allowPrivate}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetProduct(context.Background(), 1)
			if err == nil {
				_, err = c.GetProduct(context.Background(), 1)
			}
			got := outcome{Proxied: proxied.Load(), Refused: IsAddressRefused(err), NotSent: NotSent(err), Unavailable: err != nil && IsUnavailable(err),
				Attempts: attempts.Load(), Lookups: lookups.Load()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error %v (-want +got):\n%s", err, diff)
			}
			if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v; want one saying %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "tok-proxy-1234") {
				t.Errorf("the token is in %q", err)
			}
		})
	}
}
