package tenantsettings

import (
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// TestValidateWebhookURL (issue 45, bad input): a webhook URL that is not an http(s) URL is Invalid
// before anything is read, saying so; whether its address is private is not Validate's to tell (the
// manager's flags decide).
func TestValidateWebhookURL(t *testing.T) {
	for raw, invalid := range map[string]bool{
		"ftp://hooks.acme.example/x":  true,
		"hooks.acme.example/x":        true,
		"https:///hook":               true,
		"https://hooks.acme.example/": false,
		"http://10.1.2.3/hook":        false,
	} {
		err := (&Syncer{}).Validate(&v1alpha1.TenantSettings{Spec: v1alpha1.TenantSettingsSpec{Webhooks: &v1alpha1.WebhooksSpec{URL: raw}}})
		if !invalid {
			if err != nil {
				t.Errorf("%s: %v, want valid", raw, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: valid, want Invalid", raw)
			continue
		}
		if class, reason, msg := engine.Classify(err); class != engine.ClassInvalid || reason != v1alpha1.ReasonInvalidSpec || msg != "webhooks.url must be an http or https URL" {
			t.Errorf("%s: %v, want Invalid (%s) saying it must be an http or https URL", raw, err, v1alpha1.ReasonInvalidSpec)
		}
	}
	if err := (&Syncer{}).Validate(&v1alpha1.TenantSettings{}); err != nil {
		t.Errorf("no webhooks: %v, want valid", err)
	}
}

// TestWebhookURLs (issue 45, bad input): a webhook URL that points at a private or loopback address
// while the manager refuses those is Invalid saying why; allowed, a private one is taken.
func TestWebhookURLs(t *testing.T) {
	strict, lax := &Syncer{Accounts: &kit.ProviderAccounts{}}, &Syncer{Accounts: &kit.ProviderAccounts{AllowPrivate: true}}
	for raw, want := range map[string]string{
		"http://10.1.2.3/hook":        "private or loopback address (10.1.2.3)",
		"https://127.0.0.1:8443/hook": "private or loopback address (127.0.0.1)",
		"http://localhost/hook":       "private or loopback address (localhost)",
		"https://[::1]/hook":          "private or loopback address (::1)",
		"https://hooks.acme.example/": "",
	} {
		err := strict.checkAddress(raw)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if err := lax.checkAddress("http://10.1.2.3/hook"); err != nil {
		t.Errorf("a private address with private admin URLs allowed: %v", err)
	}
}
