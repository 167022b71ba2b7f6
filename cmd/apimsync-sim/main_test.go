package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlags(t *testing.T) {
	cases := map[string]struct {
		args        []string
		wantTenants map[string]string
		wantErr     string
	}{
		"two tenants":         {args: []string{"--tenant", "a=1", "--tenant", "b=2"}, wantTenants: map[string]string{"a": "1", "b": "2"}},
		"no tenant":           {args: []string{}, wantErr: "at least one --tenant"},
		"malformed tenant":    {args: []string{"--tenant", "a"}, wantErr: "NAME=TOKEN"},
		"non-loopback listen": {args: []string{"--tenant", "a=1", "--listen", "0.0.0.0:8081"}, wantErr: "loopback"},
		"localhost is fine":   {args: []string{"--tenant", "a=1", "--listen", "localhost:0"}, wantTenants: map[string]string{"a": "1"}},
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
			if diff := cmp.Diff(tc.wantTenants, c.opts.Tenants); diff != "" {
				t.Errorf("tenants (-want +got):\n%s", diff)
			}
		})
	}
}
