package developeraccount

import "testing"

// TestSecretKeyOf: usernames become Secret keys ([-._a-zA-Z0-9]+, not "." or ".."), distinct.
func TestSecretKeyOf(t *testing.T) {
	taken := map[string]string{}
	for _, c := range []struct{ username, want string }{
		{"alice", "alice"}, {"bob@acme.example", "bob_acme.example"}, {"bob+acme.example", "bob_acme.example-2"},
		{".", "_."}, {"..", "_.."}, {"a b", "a_b"},
	} {
		got := secretKeyOf(c.username, taken)
		if got != c.want {
			t.Errorf("%q: key %q, want %q", c.username, got, c.want)
		}
		taken[got] = ""
	}
}
