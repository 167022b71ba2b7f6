// Package plugin is what kubectl apimsync runs against a tenant or a cluster: export reads a tenant
// into apimsync resources that adopt it with no write.
package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kinds/developeraccount"
	"github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// Export reads a tenant and writes it as apimsync resources that adopt what is there with no write: the
// inverse of the syncers' mappings, next to them so that both read 3scale the same way (readChildren,
// proxyAttributes, proxyDefaults). What the kinds cannot model is reported, never dropped silently.

// ExportOptions select what is exported.
type ExportOptions struct {
	// Products and Backends, by system name, restrict the export (with the backends the products use);
	// Accounts (organization names) the accounts, with their applications. All empty: everything.
	Products, Backends, Accounts []string
	// CredentialsToSecrets makes users' passwords and applications' credentials references to Secrets
	// whose templates (keys, no values) are in Exported.Templates, for the user to fill in: each user gets
	// passwordRef (the Secret becomes the password: adopting sets it, one write per user) and each
	// application credentialsRef (a user_key or app_keys filled in replace 3scale's, or match them: no
	// write; an app_id must be 3scale's, it cannot change). By
	// default users get no passwordRef (passwords stay as they are) and applications no credentialsRef
	// (each keeps 3scale's credentials and writes them to its own Secret). A policy whose configuration
	// holds what looks like a credential reads it from a Secret (configurationRef, a template too) instead
	// of having it inline, flagged in Left, as by default.
	CredentialsToSecrets bool
}

// Exported is a tenant as apimsync resources, by the file they belong in ("backends", "product-<name>",
// "custom-policies"), and what could not be exported.
type Exported struct {
	Files map[string][]client.Object
	// Templates are Secrets to fill in (values 3scale does not give back, or that must not be written):
	// names only, their keys empty.
	Templates []*corev1.Secret
	// Left lists what the kinds cannot model, one line each, with the object it is in.
	Left []string
}

func (e *Exported) add(file string, obj client.Object) {
	e.Files[file] = append(e.Files[file], obj)
}

// credentialWord finds a word that names a credential: in a key of a policy's configuration, or in the
// name of the header or parameter an entry of it sets.
var credentialWord = regexp.MustCompile(`(?i)secret|passw|token|api[-_]?key|authorization|credential|cookie`)

// policyConfigurationKey is the key of the Secret a policy's configuration is read from (configurationRef).
const policyConfigurationKey = "configuration"

// policyCredentials returns where a policy's configuration holds what looks like a credential, as paths
// ("request[0].value"): the value of a key that names one, when it can hold one (a string, an object, a
// list; not a flag such as CORS's allow_credentials), and the value of an entry that sets a header or a
// parameter whose name is a credential's (the headers policy's {"header": "Authorization", "value": ...}).
func policyCredentials(raw []byte) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	var out []string
	findCredentials(v, "", &out)
	return out
}

// findCredentials adds to out the paths under v (at path) that policyCredentials reports.
func findCredentials(v any, path string, out *[]string) {
	at := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			findCredentials(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		names := false // an entry of this object names a credential: the header or parameter it sets
		for _, k := range keys {
			if s, ok := t[k].(string); ok && k != "value" && credentialWord.MatchString(s) {
				names = true
			}
		}
		for _, k := range keys {
			switch e := t[k].(type) {
			case string:
				if e != "" && (credentialWord.MatchString(k) || (names && k == "value")) {
					*out = append(*out, at(k))
				}
			case map[string]any, []any:
				if credentialWord.MatchString(k) {
					*out = append(*out, at(k))
				} else {
					findCredentials(e, at(k), out)
				}
			}
		}
	}
}

// objectName makes a Kubernetes object name of a 3scale system name (lowercase, '-' for what a DNS label
// cannot hold).
var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

func objectName(systemName string) string {
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(systemName), "-"), "-")
	if name == "" {
		name = "x"
	}
	return kit.CutString(name, 63)
}

// ExportTenant reads the tenant c talks to and returns it as apimsync resources.
func ExportTenant(ctx context.Context, c *tsclient.Client, opts ExportOptions) (*Exported, error) {
	e := &Exported{Files: map[string][]client.Object{}}
	x := &exporter{c: c, e: e, opts: opts, backendNames: map[int64]string{}, metricRefs: map[int64]v1alpha1.MetricMethodRef{}, planNames: map[int64]string{}, appNames: map[string]bool{}}
	products, err := c.ListProducts(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the products: %w", err)
	}
	backends, err := c.ListBackends(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the backends: %w", err)
	}
	usages := map[int64][]tsclient.BackendUsage{}
	wantBackend := map[int64]bool{}
	for _, p := range products {
		if len(opts.Products) > 0 && !slices.Contains(opts.Products, p.SystemName) {
			continue
		}
		if usages[p.ID], err = c.ListBackendUsages(ctx, p.ID); err != nil {
			return nil, fmt.Errorf("cannot list the backend usages of product %q: %w", p.SystemName, err)
		}
		for _, u := range usages[p.ID] {
			wantBackend[u.BackendID] = true
		}
	}
	for _, b := range backends {
		selected := len(opts.Backends) == 0 && len(opts.Products) == 0 || slices.Contains(opts.Backends, b.SystemName) || wantBackend[b.ID]
		if selected {
			if err := x.backend(ctx, b); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range products {
		if _, selected := usages[p.ID]; selected {
			if err := x.product(ctx, p, usages[p.ID]); err != nil {
				return nil, err
			}
		}
	}
	if len(opts.Backends) == 0 || len(opts.Products) > 0 {
		if err := x.customPolicies(ctx); err != nil {
			return nil, err
		}
	}
	if len(opts.Products) == 0 && len(opts.Backends) == 0 || len(opts.Accounts) > 0 {
		if err := x.accounts(ctx, opts.Accounts); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// exporter carries what the objects exported so far tell the next ones: the Backend object names by id,
// and the metric references of the product and backend metrics by id.
type exporter struct {
	c            *tsclient.Client
	e            *Exported
	opts         ExportOptions
	backendNames map[int64]string
	metricRefs   map[int64]v1alpha1.MetricMethodRef
	planNames    map[int64]string
	appNames     map[string]bool // Application object names given so far
}

// backend exports a backend API and its metrics, methods and mapping rules.
func (x *exporter) backend(ctx context.Context, b tsclient.Backend) error {
	kids, err := children.Read(ctx, x.c, tsclient.BackendScope(b.ID))
	if err != nil {
		return err
	}
	name := objectName(b.SystemName)
	x.backendNames[b.ID] = name
	x.refs(kids, name)
	spec := v1alpha1.BackendSpec{Name: b.Name, SystemName: b.SystemName, Description: b.Description, PrivateBaseURL: b.PrivateEndpoint}
	spec.Metrics, spec.Methods, spec.MappingRules = x.specOf(kids, fmt.Sprintf("Backend %q", b.SystemName))
	x.e.add("backends", &v1alpha1.Backend{TypeMeta: typeMeta("Backend"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	return nil
}

// refs records the metric references of children's metrics and methods (backend: "" for a product's).
func (x *exporter) refs(kids *children.Snapshot, backend string) {
	for _, set := range []map[string]tsclient.Metric{kids.Metrics, kids.Methods} {
		for name, m := range set {
			x.metricRefs[m.ID] = v1alpha1.MetricMethodRef{SystemName: name, Backend: backend}
		}
	}
}

// product exports a product (service), its gateway, policy chain, backend usages, plans and ActiveDocs.
func (x *exporter) product(ctx context.Context, p tsclient.Product, usages []tsclient.BackendUsage) error {
	file := "product-" + objectName(p.SystemName)
	name := objectName(p.SystemName)
	what := fmt.Sprintf("Product %q", p.SystemName)
	if p.DeploymentOption != "hosted" && p.DeploymentOption != "self_managed" {
		x.e.Left = append(x.e.Left, fmt.Sprintf("%s: deployment option %q has no apimsync equivalent (hosted or self_managed): not exported", what, p.DeploymentOption))
		return nil
	}
	c := x.c
	proxy, err := c.GetProxy(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot read the proxy of %s: %w", what, err)
	}
	attrs := product.ProxyAttributes(proxy)
	kids, err := children.Read(ctx, c, tsclient.ProductScope(p.ID))
	if err != nil {
		return err
	}
	x.refs(kids, "")
	policies, err := c.GetPolicies(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot read the policy chain of %s: %w", what, err)
	}
	spec := v1alpha1.ProductSpec{Name: p.Name, SystemName: p.SystemName, Description: p.Description, BackendUsages: map[string]v1alpha1.BackendUsageSpec{}}
	spec.Metrics, spec.Methods, spec.MappingRules = x.specOf(kids, what)
	spec.Deployment = &v1alpha1.DeploymentSpec{ApicastHosted: &v1alpha1.ApicastHostedSpec{}}
	if p.DeploymentOption == "self_managed" {
		spec.Deployment = &v1alpha1.DeploymentSpec{ApicastSelfManaged: &v1alpha1.ApicastSelfManagedSpec{
			StagingPublicBaseURL: attrs["sandbox_endpoint"], ProductionPublicBaseURL: attrs["endpoint"]}}
	}
	if spec.Authentication, err = x.authentication(ctx, p, attrs, name); err != nil {
		return err
	}
	for _, pol := range policies {
		ps := v1alpha1.PolicySpec{Name: pol.Name, Version: pol.Version, Enabled: pol.Enabled}
		if len(pol.Configuration) > 0 && string(pol.Configuration) != "null" {
			ps.Configuration = &apiextensionsv1.JSON{Raw: pol.Configuration}
			if where := policyCredentials(pol.Configuration); len(where) > 0 {
				x.policyWithCredential(&ps, what, name, where)
			}
		}
		spec.Policies = append(spec.Policies, ps)
	}
	features, err := c.ListProductFeatures(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot list the features of %s: %w", what, err)
	}
	featureNames := map[int64]string{}
	for _, f := range features {
		if spec.Features == nil {
			spec.Features = map[string]v1alpha1.FeatureSpec{}
		}
		fs := v1alpha1.FeatureSpec{Name: f.Name, Description: f.Description, Scope: product.RemoteScope(f)}
		if fs.Name == "" {
			fs.Name = f.SystemName
			x.e.Left = append(x.e.Left, fmt.Sprintf("%s: feature %q has no name (3scale allows none, apimsync requires one): exported with its system name as its name, which applying it writes", what, f.SystemName))
		}
		spec.Features[f.SystemName] = fs
		featureNames[f.ID] = f.SystemName
	}
	for _, u := range usages {
		backend, ok := x.backendNames[u.BackendID]
		if !ok {
			x.e.Left = append(x.e.Left, fmt.Sprintf("%s: the usage of backend %d at %q names a backend that was not exported", what, u.BackendID, u.Path))
			continue
		}
		spec.BackendUsages[backend] = v1alpha1.BackendUsageSpec{Path: u.Path}
	}
	x.e.add(file, &v1alpha1.Product{TypeMeta: typeMeta("Product"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	if err := x.plans(ctx, p, name, file, featureNames); err != nil {
		return err
	}
	return x.activeDocs(ctx, p, name, file)
}

// policyWithCredential deals with a policy whose configuration holds what looks like a credential (at the
// paths where): with CredentialsToSecrets, the policy reads its configuration from a Secret
// (configurationRef) whose template is added, the configuration nowhere in the export; otherwise it stays
// inline. Either way a Left line says which policy and where, never the value.
func (x *exporter) policyWithCredential(ps *v1alpha1.PolicySpec, what, product string, where []string) {
	if !x.opts.CredentialsToSecrets {
		x.e.Left = append(x.e.Left, fmt.Sprintf("%s: the configuration of policy %q is written inline and holds what looks like a credential (%s): "+
			"move it to a Secret (configurationRef) before committing it, or export with --credentials secret-refs", what, ps.Name, strings.Join(where, ", ")))
		return
	}
	secret := x.template(product+"-policy-"+objectName(ps.Name), []string{policyConfigurationKey})
	ps.Configuration, ps.ConfigurationRef = nil, &v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: policyConfigurationKey}
	x.e.Left = append(x.e.Left, fmt.Sprintf("%s: the configuration of policy %q holds what looks like a credential (%s), so it is not in the files: "+
		"the policy reads it from Secret %q (configurationRef); fill the template's key %s with the configuration as 3scale has it (the policy chain's JSON)",
		what, ps.Name, strings.Join(where, ", "), secret.Name, policyConfigurationKey))
}

// authentication is the spec of a product's authentication and gateway options: only what differs from
// porta's defaults (proxyDefaults), which resolveProxy sends for what the spec leaves out.
func (x *exporter) authentication(ctx context.Context, p tsclient.Product, attrs map[string]string, name string) (*v1alpha1.AuthenticationSpec, error) {
	differs := func(key string) string {
		if v := attrs[key]; v != product.ProxyDefaults[key] {
			return v
		}
		return ""
	}
	var gw v1alpha1.GatewayOptions
	gw.CredentialsLocation = v1alpha1.CredentialsLocation(differs("credentials_location"))
	if h := attrs["hostname_rewrite"]; h != "" {
		gw.Security = &v1alpha1.SecuritySpec{HostHeader: h}
	}
	responses := &v1alpha1.GatewayResponseSpec{}
	for suffix, into := range map[string]**v1alpha1.GatewayErrorResponse{"auth_failed": &responses.AuthFailed, "auth_missing": &responses.AuthMissing,
		"no_match": &responses.NoMatch, "limits_exceeded": &responses.LimitsExceeded} {
		status, headers, body := "error_status_"+suffix, "error_headers_"+suffix, "error_"+suffix
		if differs(status) == "" && differs(headers) == "" && differs(body) == "" {
			continue
		}
		code, _ := strconv.Atoi(attrs[status])
		*into = &v1alpha1.GatewayErrorResponse{Status: int32(code), ContentType: attrs[headers], Body: attrs[body]}
	}
	if *responses != (v1alpha1.GatewayResponseSpec{}) {
		gw.GatewayResponse = responses
	}
	a := &v1alpha1.AuthenticationSpec{}
	switch p.BackendVersion {
	case "2":
		a.AppKeyAppID = &v1alpha1.AppKeyAppIDAuthSpec{AppID: differs("auth_app_id"), AppKey: differs("auth_app_key"), GatewayOptions: gw}
	case "oidc":
		cfg, err := x.c.GetOIDCConfiguration(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot read the OIDC configuration of product %q: %w", p.SystemName, err)
		}
		// The issuer endpoint holds the client's credentials: a Secret reference, with a template.
		secret := x.template(name+"-oidc-issuer", []string{"issuerEndpoint"})
		a.OIDC = &v1alpha1.OIDCAuthSpec{IssuerType: attrs["oidc_issuer_type"],
			IssuerEndpointRef:    &v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: "issuerEndpoint"},
			JWTClaimWithClientID: attrs["jwt_claim_with_client_id"], JWTClaimWithClientIDType: attrs["jwt_claim_with_client_id_type"],
			AuthenticationFlow: &v1alpha1.OIDCAuthenticationFlowSpec{StandardFlowEnabled: cfg.StandardFlowEnabled, ImplicitFlowEnabled: cfg.ImplicitFlowEnabled,
				ServiceAccountsEnabled: cfg.ServiceAccountsEnabled, DirectAccessGrantsEnabled: cfg.DirectAccessGrantsEnabled},
			GatewayOptions: gw}
	default:
		a.UserKey = &v1alpha1.UserKeyAuthSpec{AuthUserKey: differs("auth_user_key"), GatewayOptions: gw}
	}
	return a, nil
}

// plans exports a product's application plans with their limits, pricing rules and the features they
// enable.
func (x *exporter) plans(ctx context.Context, p tsclient.Product, product, file string, featureNames map[int64]string) error {
	plans, err := x.c.ListPlans(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot list the plans of product %q: %w", p.SystemName, err)
	}
	for _, plan := range plans {
		published, approval := plan.State == "published", plan.ApprovalRequired
		trial := int32(plan.TrialPeriodDays)
		spec := v1alpha1.ApplicationPlanSpec{ProductRef: product, Name: plan.Name, SystemName: plan.SystemName, Published: &published,
			ApprovalRequired: &approval, TrialPeriodDays: &trial, SetupFee: string(plan.SetupFee), CostMonth: string(plan.CostPerMonth)}
		limits, err := x.c.ListLimits(ctx, plan.ID)
		if err != nil {
			return fmt.Errorf("cannot list the limits of plan %q: %w", plan.SystemName, err)
		}
		for _, l := range limits {
			ref, ok := x.metricRefs[l.MetricID]
			if !ok {
				x.e.Left = append(x.e.Left, fmt.Sprintf("ApplicationPlan %q: a limit on metric %d, of a backend not exported, is left out", plan.SystemName, l.MetricID))
				continue
			}
			spec.Limits = append(spec.Limits, v1alpha1.LimitSpec{Period: v1alpha1.LimitPeriod(l.Period), Value: l.Value, MetricMethodRef: ref})
		}
		rules, err := x.c.ListPricingRules(ctx, plan.ID)
		if err != nil {
			return fmt.Errorf("cannot list the pricing rules of plan %q: %w", plan.SystemName, err)
		}
		for _, r := range rules {
			ref, ok := x.metricRefs[r.MetricID]
			if !ok {
				x.e.Left = append(x.e.Left, fmt.Sprintf("ApplicationPlan %q: a pricing rule on metric %d, of a backend not exported, is left out", plan.SystemName, r.MetricID))
				continue
			}
			spec.PricingRules = append(spec.PricingRules, v1alpha1.PricingRuleSpec{From: r.Min, To: r.Max, PricePerUnit: string(r.CostPerUnit), MetricMethodRef: ref})
		}
		if len(featureNames) > 0 { // a product with no feature has no plan enabling one
			enabled, err := x.c.ListPlanFeatures(ctx, plan.ID)
			if err != nil {
				return fmt.Errorf("cannot list the features of plan %q: %w", plan.SystemName, err)
			}
			for _, f := range enabled {
				spec.Features = append(spec.Features, featureNames[f.ID])
			}
			slices.Sort(spec.Features)
		}
		name := kit.CutString(product+"-"+objectName(plan.SystemName), 253)
		x.planNames[plan.ID] = name
		x.e.add(file, &v1alpha1.ApplicationPlan{TypeMeta: typeMeta("ApplicationPlan"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	return nil
}

// activeDocs exports the ActiveDocs bound to a product (product "" : the unbound ones), each document in a
// ConfigMap beside it.
func (x *exporter) activeDocs(ctx context.Context, p tsclient.Product, product, file string) error {
	docs, err := x.c.ListActiveDocs(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the ActiveDocs: %w", err)
	}
	for _, d := range docs {
		if d.ServiceID != p.ID {
			continue
		}
		name := objectName(d.SystemName)
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name + "-openapi"},
			Data: map[string]string{"openapi.json": d.Body}}
		x.e.add(file, cm)
		x.e.add(file, &v1alpha1.ActiveDoc{TypeMeta: typeMeta("ActiveDoc"), ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ActiveDocSpec{Name: d.Name, SystemName: d.SystemName, Description: d.Description, Published: d.Published,
				SkipSwaggerValidations: d.SkipSwaggerValidations, ProductRef: product,
				DocumentRef: &v1alpha1.DocumentRef{ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: cm.Name, Key: "openapi.json"}}}})
	}
	return nil
}

// customPolicies exports the tenant's policy registry.
func (x *exporter) customPolicies(ctx context.Context) error {
	policies, err := x.c.ListCustomPolicies(ctx)
	if err != nil {
		if tsclient.IsForbidden(err) || tsclient.IsNotFound(err) {
			x.e.Left = append(x.e.Left, "the policy registry: the token may not read it (the policy_registry scope): custom policies not exported")
			return nil
		}
		return fmt.Errorf("cannot list the custom policies: %w", err)
	}
	for _, pol := range policies {
		x.e.add("custom-policies", &v1alpha1.CustomPolicyDefinition{TypeMeta: typeMeta("CustomPolicyDefinition"),
			ObjectMeta: metav1.ObjectMeta{Name: objectName(pol.Name + "-" + pol.Version)},
			Spec:       v1alpha1.CustomPolicyDefinitionSpec{Name: pol.Name, Version: pol.Version, Schema: apiextensionsv1.JSON{Raw: pol.Schema}}})
	}
	return nil
}

// accounts exports the developer accounts (all, or those of the organizations given) with their users,
// admins first, and their applications on exported plans. Passwords are not exported (3scale does not
// give them back; a user without passwordRef keeps the one it has), nor are credentials: an Application
// without credentialsRef keeps 3scale's and writes them to its own Secret. With CredentialsToSecrets,
// both are references to Secret templates.
func (x *exporter) accounts(ctx context.Context, only []string) error {
	accounts, err := x.c.ListAccounts(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the developer accounts: %w", err)
	}
	taken := map[string]bool{}
	for _, a := range accounts {
		if len(only) > 0 && !slices.Contains(only, a.OrgName) {
			continue
		}
		what := fmt.Sprintf("DeveloperAccount %q", a.OrgName)
		users, err := x.c.ListUsers(ctx, a.ID)
		if tsclient.IsForbidden(err) { // a tenant without multiple_users: the account's XML lists them
			users, err = x.c.UsersOfAccount(ctx, a.ID)
		}
		if err != nil {
			return fmt.Errorf("cannot read the users of %s: %w", what, err)
		}
		slices.SortStableFunc(users, func(p, q tsclient.User) int {
			return boolRank(q.Role == developeraccount.RoleAdmin) - boolRank(p.Role == developeraccount.RoleAdmin)
		})
		name := objectName(a.OrgName)
		if taken[name] {
			name = kit.CutString(name, 50) + "-" + strconv.FormatInt(a.ID, 10)
		}
		taken[name] = true
		billing, charging := a.MonthlyBillingEnabled, a.MonthlyChargingEnabled
		spec := v1alpha1.DeveloperAccountSpec{OrgName: a.OrgName, MonthlyBillingEnabled: &billing, MonthlyChargingEnabled: &charging}
		var passwords *corev1.Secret
		if x.opts.CredentialsToSecrets && len(users) > 0 {
			passwords = x.template(name+"-passwords", nil)
		}
		for _, u := range users {
			user := v1alpha1.DeveloperUserSpec{Username: u.Username, Email: u.Email, Role: v1alpha1.DeveloperUserRole(u.Role)}
			if passwords != nil {
				key := secretKeyOf(u.Username, passwords.StringData)
				passwords.StringData[key] = ""
				user.PasswordRef = &v1alpha1.LocalSecretKeyRef{Name: passwords.Name, Key: key}
			}
			spec.Users = append(spec.Users, user)
			if u.State != developeraccount.UserActive {
				x.e.Left = append(x.e.Left, fmt.Sprintf("%s: user %q is %s; applying activates it", what, u.Username, u.State))
			}
		}
		if len(spec.Users) == 0 {
			x.e.Left = append(x.e.Left, fmt.Sprintf("%s has no user: not exported (an account needs one)", what))
			continue
		}
		if a.State != developeraccount.AccountApproved {
			x.e.Left = append(x.e.Left, fmt.Sprintf("%s is %s; applying approves it", what, a.State))
		}
		x.e.add("accounts", &v1alpha1.DeveloperAccount{TypeMeta: typeMeta("DeveloperAccount"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		if err := x.applications(ctx, a, name); err != nil {
			return err
		}
	}
	return nil
}

// applications exports an account's applications on exported plans.
func (x *exporter) applications(ctx context.Context, a tsclient.Account, account string) error {
	apps, err := x.c.ListApplications(ctx, a.ID)
	if err != nil {
		return fmt.Errorf("cannot list the applications of account %q: %w", a.OrgName, err)
	}
	for _, app := range apps {
		plan, ok := x.planNames[app.PlanID]
		if !ok {
			x.e.Left = append(x.e.Left, fmt.Sprintf("Application %q of %q: its plan %d was not exported", app.Name, a.OrgName, app.PlanID))
			continue
		}
		name := kit.CutString(account+"-"+objectName(app.Name), 240)
		if x.appNames[name] { // within the account, or account "a" app "b-c" and account "a-b" app "c"
			name += "-" + strconv.FormatInt(app.ID, 10)
		}
		x.appNames[name] = true
		spec := v1alpha1.ApplicationSpec{AccountRef: account, PlanRef: plan, Name: app.Name, Description: app.Description, Suspended: app.State == kit.AppSuspended}
		if x.opts.CredentialsToSecrets {
			keys := []string{"app_id", "app_keys"}
			if app.UserKey != "" {
				keys = []string{"user_key"}
			}
			spec.CredentialsRef = &v1alpha1.ProviderAccountRef{Name: x.template(name+"-keys", keys).Name}
		}
		x.e.add("accounts", &v1alpha1.Application{TypeMeta: typeMeta("Application"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	return nil
}

// template adds a Secret to fill in, with the keys given and no value; a name taken by another template
// (two policies of one name in a chain) gets a number.
func (x *exporter) template(name string, keys []string) *corev1.Secret {
	name = kit.CutString(name, 240)
	for i, base := 2, name; slices.ContainsFunc(x.e.Templates, func(s *corev1.Secret) bool { return s.Name == name }); i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{}}
	for _, k := range keys {
		secret.StringData[k] = ""
	}
	x.e.Templates = append(x.e.Templates, secret)
	return secret
}

// notSecretKey is what a Secret's key cannot hold (keys are [-._a-zA-Z0-9]+); a username can hold '@'
// and '+'.
var notSecretKey = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// secretKeyOf makes a Secret key of a username that no key of taken has yet ("." and ".." are no keys).
func secretKeyOf(username string, taken map[string]string) string {
	base := notSecretKey.ReplaceAllString(username, "_")
	if strings.Trim(base, ".") == "" {
		base = "_" + base
	}
	key := base
	for i := 2; ; i++ {
		if _, ok := taken[key]; !ok {
			return key
		}
		key = base + "-" + strconv.Itoa(i)
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind}
}

// specOf is children.SpecOf, what it leaves out said in Left.
func (x *exporter) specOf(kids *children.Snapshot, what string) (map[string]v1alpha1.MetricSpec, map[string]v1alpha1.MethodSpec, []v1alpha1.MappingRuleSpec) {
	spec, left := children.SpecOf(kids, what)
	x.e.Left = append(x.e.Left, left...)
	return spec.Metrics, spec.Methods, spec.Rules
}
