package kit

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	tsclient "github.com/apimsync/apimsync/client"
)

// TestSameEndpointSeesThroughPortasDefaultPorts: porta stores a URL without a port with its scheme's
// default port; other differences still count.
func TestSameEndpointSeesThroughPortasDefaultPorts(t *testing.T) {
	cases := []struct {
		remote, want string
		same         bool
	}{
		{"https://h:443", "https://h", true},
		{"http://h:80/v1", "http://h/v1", true},
		{"wss://h:443", "wss://h", true},
		{"HTTPS://h:443", "HTTPS://h", true},
		{"https://h:443", "https://h:443", true},
		{"https://h:8443", "https://h", false},
		{"http://h:443", "http://h", false},
		{"https://h:443/a", "https://h/b", false},
		{"https://other:443", "https://h", false},
		{"not a url", "not a url", true},
	}
	for _, c := range cases {
		if got := SameEndpoint(c.remote, c.want); got != c.same {
			t.Errorf("sameEndpoint(%q, %q) = %v, want %v", c.remote, c.want, got, c.same)
		}
	}
}

// TestImplicitApicastIsIgnored: the apicast policy porta appends is not drift when the spec leaves it
// out, and is compared like any other policy when the spec names it.
func TestImplicitApicastIsIgnored(t *testing.T) {
	cors, apicast := tsclient.Policy{Name: "cors", Version: "builtin"}, tsclient.Policy{Name: "apicast", Version: "builtin"}
	cases := map[string]struct {
		remote, want, out []tsclient.Policy
	}{
		"appended by porta":      {[]tsclient.Policy{cors, apicast}, []tsclient.Policy{cors}, []tsclient.Policy{cors}},
		"named by the spec":      {[]tsclient.Policy{apicast, cors}, []tsclient.Policy{apicast, cors}, []tsclient.Policy{apicast, cors}},
		"empty chain":            {[]tsclient.Policy{apicast}, nil, []tsclient.Policy{}},
		"another policy missing": {[]tsclient.Policy{apicast}, []tsclient.Policy{cors}, []tsclient.Policy{}},
	}
	for name, c := range cases {
		if diff := cmp.Diff(c.out, WithoutImplicitApicast(c.remote, c.want)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestSectionPartialPath: porta makes a leading run of slashes one and keeps the rest
// (app/models/cms/section.rb:200-202), as the simulator does (TestCMSSectionPartialPath).
func TestSectionPartialPath(t *testing.T) {
	for in, want := range map[string]string{"//docs": "/docs", "///api//v1/": "/api//v1/", "docs/": "docs/", "/docs": "/docs", "": ""} {
		if got := SectionPartialPath(in); got != want {
			t.Errorf("SectionPartialPath(%q) = %q, want %q", in, got, want)
		}
	}
}
