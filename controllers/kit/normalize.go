package kit

import (
	"net/url"
	"strings"

	tsclient "github.com/apimsync/apimsync/client"
)

// Porta rewrites some values it stores; comparing the spec with what 3scale answers must see through
// these rewrites, or a drift check would "repair" them forever.

// defaultPorts are the ports porta writes out when a URL has none.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}

// SameEndpoint compares two URLs as porta stores them: porta adds the scheme's default port to a URL
// without one (https://h becomes https://h:443), so both are brought to that form first.
func SameEndpoint(remote, want string) bool {
	return withExplicitPort(remote) == withExplicitPort(want)
}

// withExplicitPort returns u with the scheme's default port when it has none (and the scheme in lower
// case, as URL schemes are case-insensitive); u unchanged when it does not parse.
func withExplicitPort(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return u
	}
	if port, ok := defaultPorts[parsed.Scheme]; ok && parsed.Port() == "" {
		parsed.Host += ":" + port
	}
	return parsed.String()
}

// apicastPolicy is the gateway's own policy, which porta appends to every chain that lacks it.
const apicastPolicy = "apicast"

// WithoutImplicitApicast returns the remote chain without the apicast policy porta added, when the
// wanted chain does not name it.
func WithoutImplicitApicast(remote, want []tsclient.Policy) []tsclient.Policy {
	for _, w := range want {
		if w.Name == apicastPolicy {
			return remote
		}
	}
	out := make([]tsclient.Policy, 0, len(remote))
	for _, r := range remote {
		if r.Name != apicastPolicy {
			out = append(out, r)
		}
	}
	return out
}

// SectionPartialPath is a CMS section's partial_path as porta stores it: a leading run of slashes made
// one (Section#strip_trailing_slashes despite its name, app/models/cms/section.rb:50,200-202:
// partial_path.gsub!(/^\/+/, "/")); the rest, trailing slashes included, is kept. Compared as stored,
// "//docs" is not a difference at every drift check.
func SectionPartialPath(p string) string {
	trimmed := strings.TrimLeft(p, "/")
	if len(trimmed) == len(p) {
		return p
	}
	return "/" + trimmed
}
