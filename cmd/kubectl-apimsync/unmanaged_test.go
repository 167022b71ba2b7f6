package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// TestDiffUnmanaged (issue 45): diff --unmanaged lists what of the namespace's tenant no apimsync object
// holds — a backend an object of the cluster records is held, one made by hand is not, nor a product or
// an account made by hand, porta's own Default plans — exits 1, with one list per collection, and -o json
// says the same for a CI job. It writes nothing to 3scale.
func TestDiffUnmanaged(t *testing.T) {
	nsName, c, sim := diffNamespace(t)
	ctx := context.Background()
	held, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://pets.internal"})
	if err != nil {
		t.Fatal(err)
	}
	byHand, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Orders", SystemName: "orders", PrivateEndpoint: "https://orders.internal"})
	if err != nil {
		t.Fatal(err)
	}
	shop, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop", DeploymentOption: "hosted", BackendVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	globex, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example", Password: "a-long-enough-password"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: "page", Title: ptr.To("Promo"), Path: ptr.To("/promo"), Draft: ptr.To("<h1>Promo</h1>")})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster holds the pets backend: an object synced to this tenant records its id.
	var secret corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsName, Name: v1alpha1.DefaultProviderAccountSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	tenant, err := tsclient.NormalizeTenant(string(secret.Data["adminURL"]))
	if err != nil {
		t.Fatal(err)
	}
	pets := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Namespace: nsName, Name: "pets"},
		Spec: v1alpha1.BackendSpec{Name: "Pets", SystemName: "pets", PrivateBaseURL: "https://pets.internal"}}
	if err := k8s.Create(ctx, pets); err != nil {
		t.Fatal(err)
	}
	pets.Status.BackendID, pets.Status.TenantHost = held.ID, tenant
	if err := k8s.Status().Update(ctx, pets); err != nil {
		t.Fatal(err)
	}
	writes := len(sim.Writes("acme"))

	out, err := run(t, "diff", "-n", nsName, "--unmanaged")
	if exitCode(err) != 1 {
		t.Fatalf("unmanaged objects: exit %d (%v), want 1\n%s", exitCode(err), err, out)
	}
	for _, want := range []string{"Backend  ", "orders", "Product", "shop", "DeveloperAccount", "Globex", "ServicePlan", "Default", "AccountPlan", "AdminUser", "admin", "DeveloperPortal (page)", "/promo"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " pets") {
		t.Errorf("the backend the cluster holds is listed:\n%s", out)
	}

	out, err = run(t, "diff", "-n", nsName, "--unmanaged", "-o", "json")
	var report unmanagedReport
	if exitCode(err) != 1 || json.Unmarshal([]byte(out), &report) != nil {
		t.Fatalf("-o json: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	ids := map[string]int64{}
	for _, it := range report.Unmanaged {
		ids[it.Kind+"/"+it.SystemName] = it.ID
	}
	if ids["Backend/orders"] != byHand.ID || ids["Product/shop"] != shop.ID || ids["DeveloperAccount/Globex"] != globex.ID || ids["Backend/pets"] != 0 ||
		ids["DeveloperPortal//promo"] != page.ID {
		t.Errorf("unmanaged %v, want orders, shop, Globex and the /promo page by their ids, not pets", report.Unmanaged)
	}
	// One probe of the token, then one list per collection (none of them holds more than a page): 11
	// kinds' and the portal's sections, templates, files, sign-in providers and the admin portal's.
	if want := int64(1 + 16); report.Calls != want {
		t.Errorf("%d calls, want %d (the probe and one list per collection)", report.Calls, want)
	}
	if report.Tenant != tenant {
		t.Errorf("tenant %q, want %q", report.Tenant, tenant)
	}
	if got := len(sim.Writes("acme")) - writes; got != 0 {
		t.Errorf("diff --unmanaged wrote %d times to 3scale", got)
	}
	if _, err := run(t, "diff", "-n", nsName, "--unmanaged", "-f", "x.yaml"); exitCode(err) != 2 {
		t.Errorf("--unmanaged with files: exit %d, want 2", exitCode(err))
	}
}
