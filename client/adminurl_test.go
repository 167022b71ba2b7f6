package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
