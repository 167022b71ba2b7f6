package application_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// TestApplicationRedirectURL (issue 44): an application of an OIDC Product gets its redirect URL in
// 3scale, one changed by hand comes back on a drift check, and removing it from the spec writes nothing
// (not managed). On a Product that is not OIDC, where porta would keep it but never show it, a
// redirectURL is Invalid and nothing is written.
func TestApplicationRedirectURL(t *testing.T) {
	ns := harness.NewNamespace(t)
	product := harness.PetstoreProduct(ns, "pets")
	product.Spec.Authentication = &v1alpha1.AuthenticationSpec{OIDC: &v1alpha1.OIDCAuthSpec{IssuerType: "keycloak",
		IssuerEndpoint: "https://sso.example.com/auth/realms/petstore"}}
	acc, pw := harness.DevAccount(ns, "acme")
	app := harness.Application(ns, "app", "acme", "basic")
	app.Spec.RedirectURL = "https://app.example.com/callback"
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), product, harness.BasicPlan(ns, "basic", "petstore"), app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	if got := harness.RemoteApp(t, ns, app)["redirect_url"]; got != "https://app.example.com/callback" {
		t.Fatalf("redirect_url in 3scale: %v, want the spec's", got)
	}

	// Changed by hand: a drift check puts the spec's back.
	moved := "https://elsewhere.example.com/cb"
	if _, err := harness.ByHand(t, ns).UpdateApplication(context.Background(), app.Status.AccountID, app.Status.ApplicationID,
		tsclient.ApplicationParams{RedirectURL: &moved}); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, app, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	if got := harness.RemoteApp(t, ns, app)["redirect_url"]; got != "https://app.example.com/callback" {
		t.Errorf("redirect_url after the drift check: %v, want the spec's back", got)
	}

	// Left out of the spec: not managed, nothing written.
	before := harness.WritesTo(ns)
	harness.EditAndWait(t, app, func() { app.Spec.RedirectURL = "" })
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("removing redirectURL wrote %d times, want 0: %v", n, harness.LastWrites(ns, n))
	}

	// On a user-key Product: Invalid, nothing written.
	other := harness.NewNamespace(t)
	acc2, pw2 := harness.DevAccount(other, "acme")
	bad := harness.Application(other, "app", "acme", "basic")
	bad.Spec.RedirectURL = "https://app.example.com/callback"
	backend2, product2, plan2 := harness.PetsBackend(other), harness.PetstoreProduct(other, "pets"), harness.BasicPlan(other, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(other), acc2, pw2, backend2, product2, plan2)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc2, backend2, product2, plan2)
	before = harness.WritesTo(other)
	harness.Create(t, bad)
	harness.WaitReason(t, bad, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, bad); !strings.Contains(msg, "spec.redirectURL is for the applications of an OIDC Product") {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	if n := harness.WritesTo(other) - before; n != 0 {
		t.Errorf("an application refused for its redirectURL wrote %d times, want 0: %v", n, harness.LastWrites(other, n))
	}
}
