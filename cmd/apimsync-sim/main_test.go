package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apimsync/apimsync/test/simulator"
)

func TestParseFlags(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantListen string
		wantOpts   simulator.Options
		wantErr    string
	}{
		"defaults": {args: []string{"--tenant", "a=1"}, wantListen: "127.0.0.1:8081",
			wantOpts: simulator.Options{Tenants: map[string]string{"a": "1"}, Seed: 1, Faults: simulator.Faults{RetryAfterSeconds: 1}}},
		"two tenants and every knob": {
			args: []string{"--tenant", "a=1", "--tenant", "b=2", "--listen", "127.0.0.1:0", "--seed", "7", "--latency", "20ms", "--latency-jitter", "5ms",
				"--error-rate", "0.1", "--rate-limit-rate", "0.2", "--retry-after", "3", "--lost-response-rate", "0.3"},
			wantListen: "127.0.0.1:0",
			wantOpts: simulator.Options{Tenants: map[string]string{"a": "1", "b": "2"}, Seed: 7, Faults: simulator.Faults{Latency: 20 * time.Millisecond,
				LatencyJitter: 5 * time.Millisecond, ErrorRate: 0.1, RateLimitRate: 0.2, RetryAfterSeconds: 3, LostResponseRate: 0.3}}},
		"localhost is loopback": {args: []string{"--tenant", "a=1", "--listen", "localhost:0"}, wantListen: "localhost:0",
			wantOpts: simulator.Options{Tenants: map[string]string{"a": "1"}, Seed: 1, Faults: simulator.Faults{RetryAfterSeconds: 1}}},
		"IPv6 loopback": {args: []string{"--tenant", "a=1", "--listen", "[::1]:0"}, wantListen: "[::1]:0",
			wantOpts: simulator.Options{Tenants: map[string]string{"a": "1"}, Seed: 1, Faults: simulator.Faults{RetryAfterSeconds: 1}}},
		"a master account only": {args: []string{"--master-token", "m"}, wantListen: "127.0.0.1:8081",
			wantOpts: simulator.Options{Tenants: map[string]string{}, MasterToken: "m", Seed: 1, Faults: simulator.Faults{RetryAfterSeconds: 1}}},
		"a tenant and a master account": {args: []string{"--tenant", "a=1", "--master-token", "m"}, wantListen: "127.0.0.1:8081",
			wantOpts: simulator.Options{Tenants: map[string]string{"a": "1"}, MasterToken: "m", Seed: 1, Faults: simulator.Faults{RetryAfterSeconds: 1}}},
		"a tenant named master":          {args: []string{"--tenant", "master=1", "--master-token", "m"}, wantErr: `named "master"`},
		"a tenant with the master token": {args: []string{"--tenant", "a=m", "--master-token", "m"}, wantErr: "master token"},
		"no tenant":                      {args: []string{}, wantErr: "at least one --tenant"},
		"malformed tenant":               {args: []string{"--tenant", "a"}, wantErr: "NAME=TOKEN"},
		"empty token":                    {args: []string{"--tenant", "a="}, wantErr: "NAME=TOKEN"},
		"all interfaces":                 {args: []string{"--tenant", "a=1", "--listen", "0.0.0.0:8081"}, wantErr: "loopback"},
		"no host":                        {args: []string{"--tenant", "a=1", "--listen", ":8081"}, wantErr: "loopback"},
		"public address":                 {args: []string{"--tenant", "a=1", "--listen", "10.0.0.1:8081"}, wantErr: "loopback"},
		"rate out of range":              {args: []string{"--tenant", "a=1", "--error-rate", "1.5"}, wantErr: "between 0 and 1"},
		"rates add above one":            {args: []string{"--tenant", "a=1", "--error-rate", "0.6", "--rate-limit-rate", "0.6"}, wantErr: "at most 1"},
		"negative latency":               {args: []string{"--tenant", "a=1", "--latency", "-1s"}, wantErr: "negative"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantListen, c.listen); diff != "" {
				t.Errorf("listen (-want +got):\n%s", diff)
			}
			got := c.opts
			got.Tenants = map[string]string(c.opts.Tenants)
			if diff := cmp.Diff(tc.wantOpts, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTenantFlagNeverShowsTokens(t *testing.T) {
	tf := tenantFlags{"a": "secret-token"}
	if s := tf.String(); strings.Contains(s, "secret") {
		t.Errorf("String() = %q shows a token", s)
	}
}

// TestMasterTokenServesTenantSignups: with --master-token, master's signup answers a new tenant whose
// admin_base_url is this listener's /t/SLUG, where the signup's token reaches the tenant, and -h shows
// how.
func TestMasterTokenServesTenantSignups(t *testing.T) {
	c, err := parse([]string{"--listen", "127.0.0.1:0", "--master-token", "mtok"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: simulator.New(c.options(addr)), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	form := url.Values{"access_token": {"mtok"}, "org_name": {"Globex"}, "username": {"admin"}, "email": {"admin@globex.example"},
		"password": {"Sup3r-secret-passw0rd"}}
	resp, err := http.PostForm("http://"+addr+"/t/master/master/api/providers.json", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var signup struct {
		Signup struct {
			Account struct {
				AdminBaseURL string `json:"admin_base_url"`
			} `json:"account"`
			AccessToken struct {
				Value string `json:"value"`
			} `json:"access_token"`
		} `json:"signup"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&signup); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("signup: %d, %v", resp.StatusCode, err)
	}
	if diff := cmp.Diff("http://"+addr+"/t/globex", signup.Signup.Account.AdminBaseURL); diff != "" {
		t.Errorf("admin_base_url (-want +got):\n%s", diff)
	}
	got, err := http.Get(signup.Signup.Account.AdminBaseURL + "/admin/api/services.json?access_token=" + signup.Signup.AccessToken.Value)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if got.StatusCode != http.StatusOK {
		t.Errorf("the new tenant's services at its admin_base_url: %d, want 200", got.StatusCode)
	}

	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); err == nil || !strings.Contains(help.String(), "--master-token TOKEN") ||
		!strings.Contains(help.String(), "-master-token string") {
		t.Errorf("-h: %v\n%s\nwant the usage with an example of --master-token and the flag", err, help.String())
	}
}
