package tenantsettings

import (
	"strings"
	"testing"

	"github.com/apimsync/apimsync/controllers/kit"
)

// TestWebhookURLs (issue 45, bad input): a webhook URL that is not http(s), or points at a private or
// loopback address while the manager refuses those, is Invalid saying why; allowed, a private one is
// taken.
func TestWebhookURLs(t *testing.T) {
	strict, lax := &Syncer{Accounts: &kit.ProviderAccounts{}}, &Syncer{Accounts: &kit.ProviderAccounts{AllowPrivate: true}}
	for raw, want := range map[string]string{
		"ftp://hooks.acme.example/x":  "must be an http or https URL",
		"http://10.1.2.3/hook":        "private or loopback address (10.1.2.3)",
		"https://127.0.0.1:8443/hook": "private or loopback address (127.0.0.1)",
		"http://localhost/hook":       "private or loopback address (localhost)",
		"https://[::1]/hook":          "private or loopback address (::1)",
		"https://hooks.acme.example/": "",
	} {
		err := strict.checkURL(raw)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if err := lax.checkURL("http://10.1.2.3/hook"); err != nil {
		t.Errorf("a private address with private admin URLs allowed: %v", err)
	}
}
