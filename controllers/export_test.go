package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kit/children"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// handMadeTenant fills a tenant by hand, as a team using the admin portal or the toolbox would: two
// backends with metrics, methods and rules; a self-managed app id/key product with a policy chain, a
// changed gateway response and header credentials; a hosted user-key product; plans with limits and
// pricing rules on product methods and backend metrics; features, one enabled on a plan; a custom policy; an ActiveDoc bound to a product and one bound to none;
// two accounts, one with an admin and a member; applications with 3scale's credentials and with their own.
func handMadeTenant(t *testing.T, c *tsclient.Client) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	desc := "The pets"
	pets, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Pets", SystemName: "pets_api", Description: &desc, PrivateEndpoint: "https://pets.internal:8443/v1"})
	must(err)
	bscope := tsclient.BackendScope(pets.ID)
	photos, err := c.CreateMetric(ctx, bscope, tsclient.MetricParams{SystemName: "photos", FriendlyName: "Photos", Unit: "MB"})
	must(err)
	backendChildren, err := children.Read(ctx, c, bscope)
	must(err)
	list, err := c.CreateMethod(ctx, bscope, backendChildren.HitsID(), tsclient.MethodParams{SystemName: "list_pets", FriendlyName: "List pets"})
	must(err)
	_, err = c.CreateMappingRule(ctx, bscope, tsclient.MappingRuleParams{HTTPMethod: "GET", Pattern: "/pets$", MetricID: list.ID, Delta: 1})
	must(err)
	_, err = c.CreateMappingRule(ctx, bscope, tsclient.MappingRuleParams{HTTPMethod: "GET", Pattern: "/pets/{id}/photo", MetricID: photos.ID, Delta: 2, Last: ptr.To(true)})
	must(err)
	orders, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Orders", SystemName: "orders", PrivateEndpoint: "http://orders.internal"})
	must(err)

	shop, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop", DeploymentOption: "self_managed", BackendVersion: "2"})
	must(err)
	_, err = c.UpdateProxy(ctx, shop.ID, tsclient.ProxyParams{"endpoint": "https://shop.example.com:443", "sandbox_endpoint": "https://shop-staging.example.com:443",
		"credentials_location": "headers", "auth_app_id": "X-App-Id", "error_status_no_match": "410", "error_no_match": "Gone", "hostname_rewrite": "shop.internal"})
	must(err)
	_, err = c.UpdatePolicies(ctx, shop.ID, []tsclient.Policy{
		{Name: "cors", Version: "builtin", Enabled: true, Configuration: json.RawMessage(`{"allow_origin":"*"}`)},
		{Name: "apicast", Version: "builtin", Enabled: true, Configuration: json.RawMessage(`{}`)}})
	must(err)
	for _, u := range []tsclient.BackendUsageParams{{BackendAPIID: pets.ID, Path: "/pets"}, {BackendAPIID: orders.ID, Path: "/"}} {
		_, err = c.CreateBackendUsage(ctx, shop.ID, u)
		must(err)
	}
	pscope := tsclient.ProductScope(shop.ID)
	shopChildren, err := children.Read(ctx, c, pscope)
	must(err)
	checkout, err := c.CreateMethod(ctx, pscope, shopChildren.HitsID(), tsclient.MethodParams{SystemName: "checkout", FriendlyName: "Checkout", Description: "Pays"})
	must(err)
	_, err = c.CreateMappingRule(ctx, pscope, tsclient.MappingRuleParams{HTTPMethod: "POST", Pattern: "/checkout$", MetricID: checkout.ID, Delta: 1})
	must(err)
	approval, trial := true, int64(14)
	gold, err := c.CreatePlan(ctx, shop.ID, tsclient.PlanParams{Name: "Gold", SystemName: "gold", ApprovalRequired: &approval, TrialPeriodDays: &trial,
		SetupFee: "10.50", CostPerMonth: "99", StateEvent: "publish"})
	must(err)
	_, err = c.CreateLimit(ctx, gold.ID, checkout.ID, tsclient.LimitParams{Period: "day", Value: 100})
	must(err)
	_, err = c.CreateLimit(ctx, gold.ID, photos.ID, tsclient.LimitParams{Period: "month", Value: 0})
	must(err)
	_, err = c.CreatePricingRule(ctx, gold.ID, photos.ID, tsclient.PricingRuleParams{Min: 1, Max: 100, CostPerUnit: "0.25"})
	must(err)
	_, err = c.CreatePlan(ctx, shop.ID, tsclient.PlanParams{Name: "Hidden", SystemName: "hidden"})
	must(err)
	// Features: one the Gold plan enables, one for service plans.
	support, err := c.CreateProductFeature(ctx, shop.ID, tsclient.FeatureParams{Name: "Support", SystemName: "support", Description: "24/7",
		Scope: tsclient.FeatureScopeApplicationPlan})
	must(err)
	must(c.EnablePlanFeature(ctx, tsclient.ApplicationPlans, gold.ID, support.ID))
	portal, err := c.CreateProductFeature(ctx, shop.ID, tsclient.FeatureParams{Name: "Portal", SystemName: "portal", Scope: tsclient.FeatureScopeServicePlan})
	must(err)

	open, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Open", SystemName: "open", DeploymentOption: "hosted", BackendVersion: "1"})
	must(err)
	free, err := c.CreatePlan(ctx, open.ID, tsclient.PlanParams{Name: "Free", SystemName: "free", StateEvent: "publish"})
	must(err)

	// Accounts with several users, and applications of both credential modes.
	acme, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "ACME Corp", Username: "alice", Email: "alice@acme.example", Password: "a-long-enough-password"})
	must(err)
	bob, err := c.CreateUser(ctx, acme.ID, tsclient.UserParams{Username: "bob", Email: "bob@acme.example", Password: "a-long-enough-password"})
	must(err)
	_, err = c.ActivateUser(ctx, acme.ID, bob.ID)
	must(err)
	// An extra field of accounts, with choices; Globex holds a value of it.
	_, err = c.CreateFieldDefinition(ctx, tsclient.FieldDefinitionParams{Target: "Account", Name: "tier", Label: "Tier", Choices: []string{"gold", "silver"}})
	must(err)
	globex, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "Globex", Username: "carol", Email: "carol@globex.example", Password: "a-long-enough-password",
		Fields: map[string]string{"tier": "silver"}})
	must(err)
	_, err = c.CreateApplication(ctx, acme.ID, tsclient.ApplicationParams{PlanID: gold.ID, Name: "ACME shop"})
	must(err)
	_, err = c.CreateApplication(ctx, acme.ID, tsclient.ApplicationParams{PlanID: free.ID, Name: "ACME open", UserKey: "acme-own-user-key-0123"})
	must(err)
	// Where the accounts stand: Globex on a second account plan, which enables an account feature; ACME's
	// subscription to shop (made with its application) moved to a service plan that enables portal.
	partners, err := c.CreateAccountPlan(ctx, tsclient.AccountPlanParams{Name: "Partners", StateEvent: "publish"})
	must(err)
	listed, err := c.CreateAccountFeature(ctx, tsclient.FeatureParams{Name: "Listed", SystemName: "listed", Description: "In the directory"})
	must(err)
	must(c.EnablePlanFeature(ctx, tsclient.AccountPlans, partners.ID, listed.ID))
	_, err = c.ChangeAccountPlan(ctx, globex.ID, partners.ID)
	must(err)
	premium, err := c.CreateServicePlan(ctx, shop.ID, tsclient.ServicePlanParams{Name: "Premium", StateEvent: "publish"})
	must(err)
	must(c.EnablePlanFeature(ctx, tsclient.ServicePlans, premium.ID, portal.ID))
	subs, err := c.ListSubscriptions(ctx, acme.ID)
	must(err)
	for _, s := range subs {
		if s.ServiceID == shop.ID {
			must(c.ChangeSubscriptionPlan(ctx, acme.ID, s.ID, premium.ID))
		}
	}
	// The free plan is its product's default (made so after the signups, which would contract it).
	_, err = c.SetDefaultPlan(ctx, open.ID, free.ID)
	must(err)
	_, err = c.CreateCustomPolicy(ctx, tsclient.CustomPolicyParams{Name: "stamp", Version: "0.1",
		Schema: json.RawMessage(`{"name":"Stamp","version":"0.1","summary":"Stamps","configuration":{"type":"object"}}`)})
	must(err)
	published, skip := true, false
	productID := shop.ID
	_, err = c.CreateActiveDoc(ctx, tsclient.ActiveDocParams{Name: "Shop API", SystemName: "shop_api", Published: &published, SkipSwaggerValidations: &skip,
		Body: `{"openapi":"3.0.3","info":{"title":"Shop","version":"1"},"paths":{}}`, ServiceID: &productID})
	must(err)
	_, err = c.CreateActiveDoc(ctx, tsclient.ActiveDocParams{Name: "Catalog", SystemName: "catalog", Published: &published, SkipSwaggerValidations: &skip,
		Body: `{"openapi":"3.0.3","info":{"title":"Catalog","version":"1"},"paths":{}}`})
	must(err)
}

// TestExportedTenantAdoptsWithNoWrite: a tenant filled by hand, exported, applied to a namespace: every
// object is Synced with no write to 3scale, each adoption announced; a drift check of everything (sync-now)
// writes nothing either.
func TestExportedTenantAdoptsWithNoWrite(t *testing.T) {
	ns := harness.NewNamespace(t)
	handMadeTenant(t, harness.TenantClient(t, ns))
	noTemplate := func(secret, key string) string { t.Fatalf("a Secret to fill in: %s", secret); return "" }
	objs := exportAll(t, ns, noTemplate)
	// The features, and the one a plan enables, are exported (and adopted below with no write).
	for _, obj := range objs {
		switch o := obj.(type) {
		case *v1alpha1.Product:
			if want := map[string]v1alpha1.FeatureSpec{"support": {Name: "Support", Description: "24/7", Scope: "ApplicationPlan"},
				"portal": {Name: "Portal", Scope: "ServicePlan"}}; o.Spec.SystemName == "shop" && !maps.Equal(o.Spec.Features, want) {
				t.Errorf("exported features of shop: %v, want %v", o.Spec.Features, want)
			}
		case *v1alpha1.ApplicationPlan:
			if o.Spec.SystemName == "gold" && !slices.Equal(o.Spec.Features, []string{"support"}) {
				t.Errorf("exported features of plan gold: %v, want [support]", o.Spec.Features)
			}
			if o.Spec.Default != (o.Spec.SystemName == "free") {
				t.Errorf("exported plan %s with default %v: only free is its product's default", o.Spec.SystemName, o.Spec.Default)
			}
		case *v1alpha1.ServicePlan:
			if want := map[bool][]string{true: {"portal"}}[o.Name == "shop-service-premium"]; !slices.Equal(o.Spec.Features, want) {
				t.Errorf("exported features of service plan %s: %v, want %v", o.Name, o.Spec.Features, want)
			}
		case *v1alpha1.AccountPlan:
			if want := map[bool]map[string]v1alpha1.AccountFeatureSpec{true: {"listed": {Name: "Listed", Description: "In the directory"}}}[o.Name == "partners"]; !maps.Equal(o.Spec.Features, want) {
				t.Errorf("exported features of account plan %s: %v, want %v", o.Name, o.Spec.Features, want)
			}
		case *v1alpha1.DeveloperAccount:
			wantPlan := map[string]string{"acme-corp": "default", "globex": "partners"}[o.Name]
			wantSubs := map[string][]string{"acme-corp": {"open-service-default", "shop-service-premium"}}[o.Name]
			if want := map[string]map[string]string{"globex": {"tier": "silver"}}[o.Name]; !maps.Equal(o.Spec.Fields, want) {
				t.Errorf("exported account %s with fields %v, want %v", o.Name, o.Spec.Fields, want)
			}
			if o.Spec.AccountPlanRef != wantPlan || !slices.Equal(o.Spec.ServicePlanRefs, wantSubs) {
				t.Errorf("exported account %s on %q through %v, want %q through %v", o.Name, o.Spec.AccountPlanRef, o.Spec.ServicePlanRefs, wantPlan, wantSubs)
			}
		}
	}
	harness.AdoptsWithNoWrite(t, ns, objs, map[string]int{"Backend": 2, "Product": 2, "ApplicationPlan": 3,
		"CustomPolicyDefinition": 1, "ActiveDoc": 2, "DeveloperAccount": 2, "Application": 2, "ServicePlan": 3, "AccountPlan": 2, "FieldDefinition": 6, "TenantSettings": 1})
}

// TestExportFilters: --product exports the product with its plans, ActiveDocs and the backends it uses,
// and the policy registry its chain may name; --backend the backend alone; --account the account with
// its applications (with the products, whose plans they are on). Each kind reads only what is selected.
func TestExportFilters(t *testing.T) {
	ns := harness.NewNamespace(t)
	c := harness.TenantClient(t, ns)
	handMadeTenant(t, c)
	names := func(opts plugin.ExportOptions) []string {
		t.Helper()
		exported, err := controllers.ExportTenant(context.Background(), c, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, objs := range exported.Files {
			for _, o := range objs {
				if kind := o.GetObjectKind().GroupVersionKind().Kind; kind != "ConfigMap" {
					out = append(out, kind+"/"+o.GetName())
				}
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		opts plugin.ExportOptions
		want []string
	}{
		{plugin.ExportOptions{Products: []string{"shop"}}, []string{"ActiveDoc/shop-api", "ApplicationPlan/shop-gold", "ApplicationPlan/shop-hidden",
			"Backend/orders", "Backend/pets-api", "CustomPolicyDefinition/stamp-0-1", "Product/shop", "ServicePlan/shop-service-default", "ServicePlan/shop-service-premium"}},
		{plugin.ExportOptions{Backends: []string{"orders"}}, []string{"Backend/orders"}},
		{plugin.ExportOptions{Products: []string{"open"}, Backends: []string{"orders"}}, []string{"ApplicationPlan/open-free", "Backend/orders",
			"CustomPolicyDefinition/stamp-0-1", "Product/open", "ServicePlan/open-service-default"}},
		{plugin.ExportOptions{Products: []string{"open"}, Accounts: []string{"ACME Corp"}}, []string{"Application/acme-corp-acme-open", "ApplicationPlan/open-free",
			"CustomPolicyDefinition/stamp-0-1", "DeveloperAccount/acme-corp", "Product/open", "ServicePlan/open-service-default"}},
	} {
		if got := names(tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("export %+v: %q, want %q", tc.opts, got, tc.want)
		}
	}
}

// exportAll exports the namespace's tenant whole and fails when anything is left out; fill gives the
// value of each key of the Secret templates (the user's part), which come first in the objects returned.
func exportAll(t *testing.T, ns string, fill func(secret, key string) string) []client.Object {
	t.Helper()
	exported, err := controllers.ExportTenant(context.Background(), harness.TenantClient(t, ns), plugin.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(exported.Left) != 0 {
		t.Errorf("left out: %q, want nothing", exported.Left)
	}
	var objs []client.Object
	for _, s := range exported.Templates {
		for k := range s.StringData {
			s.StringData[k] = fill(s.Name, k)
		}
		objs = append(objs, s)
	}
	for _, file := range slices.Sorted(maps.Keys(exported.Files)) {
		objs = append(objs, exported.Files[file]...)
	}
	return objs
}

// TestExportedPolicyCredentials: a policy whose configuration holds a credential (a headers policy that
// sets Authorization) is flagged when written inline, naming where; with CredentialsToSecrets it is a
// configurationRef to a Secret template instead, the credential nowhere in the export, and, filled in
// with the configuration, it adopts the product with no write.
func TestExportedPolicyCredentials(t *testing.T) {
	ns := harness.NewNamespace(t)
	c := harness.TenantClient(t, ns)
	ctx := context.Background()
	product, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Gate", SystemName: "gate", DeploymentOption: "hosted", BackendVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	const credential = "upstream-credential-0123"
	config := `{"request":[{"op":"set","header":"Authorization","value_type":"plain","value":"Bearer ` + credential + `"}]}`
	if _, err := c.UpdatePolicies(ctx, product.ID, []tsclient.Policy{{Name: "headers", Version: "builtin", Enabled: true, Configuration: json.RawMessage(config)},
		{Name: "apicast", Version: "builtin", Enabled: true, Configuration: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}

	kept, err := controllers.ExportTenant(ctx, c, plugin.ExportOptions{Products: []string{"gate"}})
	if err != nil {
		t.Fatal(err)
	}
	flagged := false
	for _, l := range kept.Left {
		flagged = flagged || (strings.Contains(l, `policy "headers"`) && strings.Contains(l, "request[0].value") && !strings.Contains(l, credential))
	}
	if !flagged {
		t.Errorf("the inline credential is not flagged where it is: %q", kept.Left)
	}

	exported, err := controllers.ExportTenant(ctx, c, plugin.ExportOptions{Products: []string{"gate"}, CredentialsToSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	objs := asObjects(exported.Templates)
	for _, file := range slices.Sorted(maps.Keys(exported.Files)) {
		objs = append(objs, exported.Files[file]...)
	}
	raw, err := json.Marshal(append(objs, &corev1.Secret{StringData: map[string]string{"left": strings.Join(exported.Left, "\n")}}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), credential) {
		t.Errorf("the export holds the policy's credential")
	}
	var ref *v1alpha1.LocalSecretKeyRef
	for _, obj := range exported.Files["product-gate"] {
		if p, ok := obj.(*v1alpha1.Product); ok {
			for _, pol := range p.Spec.Policies {
				if pol.Name == "headers" {
					if pol.Configuration != nil {
						t.Errorf("the headers policy's configuration is inline")
					}
					ref = pol.ConfigurationRef
				}
			}
		}
	}
	var template *corev1.Secret
	for _, s := range exported.Templates {
		if ref != nil && s.Name == ref.Name {
			template = s
		}
	}
	if template == nil {
		t.Fatalf("the headers policy's configurationRef %v names no template", ref)
	}
	if v, ok := template.StringData[ref.Key]; !ok || v != "" {
		t.Fatalf("template %s: key %q %v with value %q, want it empty", template.Name, ref.Key, ok, v)
	}
	template.StringData[ref.Key] = config // filled in, as the user would
	harness.AdoptsWithNoWrite(t, ns, objs, map[string]int{"Product": 1})
}

// TestExportedCredentialsAsSecretReferences: with CredentialsToSecrets, users' passwords and applications'
// credentials are references to Secret templates with keys and no value, and no credential is in the
// export. Filled in (new passwords, the applications' keys as 3scale has them) and applied, the tenant is
// adopted with one write per user, each setting the Secret's password, and none for the applications.
func TestExportedCredentialsAsSecretReferences(t *testing.T) {
	ns := harness.NewNamespace(t)
	c := harness.TenantClient(t, ns)
	handMadeTenant(t, c)
	ctx := context.Background()
	exported, err := controllers.ExportTenant(ctx, c, plugin.ExportOptions{CredentialsToSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, file := range slices.Sorted(maps.Keys(exported.Files)) {
		objs = append(objs, exported.Files[file]...)
	}
	templates := map[string]*corev1.Secret{}
	for _, s := range exported.Templates {
		templates[s.Name] = s
		for k, v := range s.StringData {
			if v != "" {
				t.Errorf("template %s has a value for %s", s.Name, k)
			}
		}
	}
	// Fill the templates in, as the user would: new passwords, the applications' keys from 3scale.
	appKeys := map[string]map[string]string{}
	accounts, err := c.ListAccounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts {
		apps, err := c.ListApplications(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, app := range apps {
			keys, err := c.ListApplicationKeys(ctx, a.ID, app.ID)
			if err != nil {
				t.Fatal(err)
			}
			values := make([]string, 0, len(keys))
			for _, k := range keys {
				values = append(values, k.Value)
			}
			appKeys[app.Name] = map[string]string{"user_key": app.UserKey, "app_id": app.ApplicationID, "app_keys": strings.Join(values, ",")}
		}
	}
	// No credential 3scale holds is in the export: no user key, application id or key.
	raw, err := json.Marshal(append(slices.Clone(objs), asObjects(exported.Templates)...))
	if err != nil {
		t.Fatal(err)
	}
	for app, creds := range appKeys {
		for k, v := range creds {
			for _, value := range strings.Split(v, ",") {
				if value != "" && strings.Contains(string(raw), value) {
					t.Errorf("the export holds the %s of application %q", k, app)
				}
			}
		}
	}
	passwords, users := map[string]string{}, 0
	for _, obj := range objs {
		switch o := obj.(type) {
		case *v1alpha1.DeveloperAccount:
			for _, u := range o.Spec.Users {
				ref := u.PasswordRef
				if ref == nil || templates[ref.Name] == nil {
					t.Fatalf("user %s: passwordRef %v names no template", u.Username, ref)
				}
				passwords[u.Username] = "filled-in-" + u.Username + "-password"
				templates[ref.Name].StringData[ref.Key] = passwords[u.Username]
				users++
			}
		case *v1alpha1.Application:
			ref := o.Spec.CredentialsRef
			if ref == nil || templates[ref.Name] == nil {
				t.Fatalf("application %s: credentialsRef %v names no template", o.Name, ref)
			}
			for k := range templates[ref.Name].StringData {
				templates[ref.Name].StringData[k] = appKeys[o.Spec.Name][k]
			}
		}
	}
	before := harness.WritesTo(ns)
	for _, s := range exported.Templates {
		s.Namespace = ns
		harness.Create(t, s)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, harness.ApplyToTenant(t, ns, objs)...)
	var writes []string
	for _, w := range harness.Sim.Writes(ns)[before:] {
		writes = append(writes, w.Method+" "+w.Endpoint)
	}
	want := slices.Repeat([]string{"PUT /admin/api/accounts/{account_id}/users/{id}.json"}, users)
	if !slices.Equal(writes, want) {
		t.Errorf("writes to adopt: %v, want one password update per user (%d)", writes, users)
	}
	for username, password := range passwords {
		if got, _ := harness.Sim.PasswordOf(ns, username); got != password {
			t.Errorf("%s's password in 3scale differs from the filled-in Secret's", username)
		}
	}
}

func asObjects(secrets []*corev1.Secret) []client.Object {
	out := make([]client.Object, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, s)
	}
	return out
}

// TestExportedApplicationNamesAreUnique: account "a" with application "b c" and account "a b" with
// application "c" make two Applications of different names (and, as references, two keys Secrets).
func TestExportedApplicationNamesAreUnique(t *testing.T) {
	ns := harness.NewNamespace(t)
	c := harness.TenantClient(t, ns)
	ctx := context.Background()
	product, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop", DeploymentOption: "hosted", BackendVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.CreatePlan(ctx, product.ID, tsclient.PlanParams{Name: "Free", SystemName: "free", StateEvent: "publish"})
	if err != nil {
		t.Fatal(err)
	}
	for i, names := range [][2]string{{"a", "b c"}, {"a b", "c"}} {
		acc, err := c.Signup(ctx, tsclient.SignupParams{OrgName: names[0], Username: fmt.Sprintf("user%d", i), Email: fmt.Sprintf("user%d@example.com", i),
			Password: "a-long-enough-password"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateApplication(ctx, acc.ID, tsclient.ApplicationParams{PlanID: plan.ID, Name: names[1]}); err != nil {
			t.Fatal(err)
		}
	}
	exported, err := controllers.ExportTenant(ctx, c, plugin.ExportOptions{CredentialsToSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	names, refs := map[string]bool{}, map[string]bool{}
	for _, obj := range exported.Files["accounts"] {
		if app, ok := obj.(*v1alpha1.Application); ok {
			names[app.Name], refs[app.Spec.CredentialsRef.Name] = true, true
		}
	}
	if len(names) != 2 || len(refs) != 2 {
		t.Errorf("applications %v with keys Secrets %v, want 2 distinct of each", names, refs)
	}
}
