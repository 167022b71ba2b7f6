package main

import (
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
		"no tenant":           {args: []string{}, wantErr: "at least one --tenant"},
		"malformed tenant":    {args: []string{"--tenant", "a"}, wantErr: "NAME=TOKEN"},
		"empty token":         {args: []string{"--tenant", "a="}, wantErr: "NAME=TOKEN"},
		"all interfaces":      {args: []string{"--tenant", "a=1", "--listen", "0.0.0.0:8081"}, wantErr: "loopback"},
		"no host":             {args: []string{"--tenant", "a=1", "--listen", ":8081"}, wantErr: "loopback"},
		"public address":      {args: []string{"--tenant", "a=1", "--listen", "10.0.0.1:8081"}, wantErr: "loopback"},
		"rate out of range":   {args: []string{"--tenant", "a=1", "--error-rate", "1.5"}, wantErr: "between 0 and 1"},
		"rates add above one": {args: []string{"--tenant", "a=1", "--error-rate", "0.6", "--rate-limit-rate", "0.6"}, wantErr: "at most 1"},
		"negative latency":    {args: []string{"--tenant", "a=1", "--latency", "-1s"}, wantErr: "negative"},
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
