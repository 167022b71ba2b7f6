package product

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit/children"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the products the options select (all without a filter) with their gateway, policy
// chain, features and backend usages, each to "product-<name>" (its plans and ActiveDocs follow it
// there). A product whose deployment option apimsync does not model is left out, and said.
func Export(ctx context.Context, x *plugin.Exporter) error {
	return x.EachSelectedProduct(ctx, func(p tsclient.Product, usages []tsclient.BackendUsage) error {
		return export(ctx, x, p, usages)
	})
}

// export exports one product.
func export(ctx context.Context, x *plugin.Exporter, p tsclient.Product, usages []tsclient.BackendUsage) error {
	name := plugin.ObjectName(p.SystemName)
	what := fmt.Sprintf("Product %q", p.SystemName)
	if p.DeploymentOption != "hosted" && p.DeploymentOption != "self_managed" {
		x.Leave("%s: deployment option %q has no apimsync equivalent (hosted or self_managed): not exported", what, p.DeploymentOption)
		return nil
	}
	c := x.Client
	proxy, err := c.GetProxy(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot read the proxy of %s: %w", what, err)
	}
	attrs := proxyAttributes(proxy)
	kids, err := children.Read(ctx, c, tsclient.ProductScope(p.ID))
	if err != nil {
		return err
	}
	x.RecordRefs(kids, "")
	policies, err := c.GetPolicies(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("cannot read the policy chain of %s: %w", what, err)
	}
	spec := v1alpha1.ProductSpec{Name: p.Name, SystemName: p.SystemName, Description: p.Description, BackendUsages: map[string]v1alpha1.BackendUsageSpec{}}
	own := x.SpecOf(kids, what)
	spec.Metrics, spec.Methods, spec.MappingRules = own.Metrics, own.Methods, own.Rules
	spec.Deployment = &v1alpha1.DeploymentSpec{ApicastHosted: &v1alpha1.ApicastHostedSpec{}}
	if p.DeploymentOption == "self_managed" {
		spec.Deployment = &v1alpha1.DeploymentSpec{ApicastSelfManaged: &v1alpha1.ApicastSelfManagedSpec{
			StagingPublicBaseURL: attrs["sandbox_endpoint"], ProductionPublicBaseURL: attrs["endpoint"]}}
	}
	if spec.Authentication, err = authentication(ctx, x, p, attrs, name); err != nil {
		return err
	}
	for _, pol := range policies {
		ps := v1alpha1.PolicySpec{Name: pol.Name, Version: pol.Version, Enabled: pol.Enabled}
		if len(pol.Configuration) > 0 && string(pol.Configuration) != "null" {
			ps.Configuration = &apiextensionsv1.JSON{Raw: pol.Configuration}
			if where := policyCredentials(pol.Configuration); len(where) > 0 {
				policyWithCredential(x, &ps, what, name, where)
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
		fs := v1alpha1.FeatureSpec{Name: f.Name, Description: f.Description, Scope: remoteScope(f)}
		if fs.Name == "" {
			fs.Name = f.SystemName
			x.Leave("%s: feature %q has no name (3scale allows none, apimsync requires one): exported with its system name as its name, which applying it writes", what, f.SystemName)
		}
		spec.Features[f.SystemName] = fs
		featureNames[f.ID] = f.SystemName
	}
	for _, u := range usages {
		backend, ok := x.BackendNames[u.BackendID]
		if !ok {
			x.Leave("%s: the usage of backend %d at %q names a backend that was not exported", what, u.BackendID, u.Path)
			continue
		}
		spec.BackendUsages[backend] = v1alpha1.BackendUsageSpec{Path: u.Path}
	}
	file := "product-" + name
	x.Add(file, &v1alpha1.Product{TypeMeta: plugin.TypeMeta("Product"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	x.Products = append(x.Products, plugin.ExportedProduct{Product: p, Name: name, File: file, Features: featureNames})
	return nil
}

// policyWithCredential deals with a policy whose configuration holds what looks like a credential (at the
// paths where): with CredentialsToSecrets, the policy reads its configuration from a Secret
// (configurationRef) whose template is added, the configuration nowhere in the export; otherwise it stays
// inline. Either way a Left line says which policy and where, never the value.
func policyWithCredential(x *plugin.Exporter, ps *v1alpha1.PolicySpec, what, product string, where []string) {
	if !x.Options.CredentialsToSecrets {
		x.Leave("%s: the configuration of policy %q is written inline and holds what looks like a credential (%s): "+
			"move it to a Secret (configurationRef) before committing it, or export with --credentials secret-refs", what, ps.Name, strings.Join(where, ", "))
		return
	}
	secret := x.Template(product+"-policy-"+plugin.ObjectName(ps.Name), []string{policyConfigurationKey})
	ps.Configuration, ps.ConfigurationRef = nil, &v1alpha1.LocalSecretKeyRef{Name: secret.Name, Key: policyConfigurationKey}
	x.Leave("%s: the configuration of policy %q holds what looks like a credential (%s), so it is not in the files: "+
		"the policy reads it from Secret %q (configurationRef); fill the template's key %s with the configuration as 3scale has it (the policy chain's JSON)",
		what, ps.Name, strings.Join(where, ", "), secret.Name, policyConfigurationKey)
}

// authentication is the spec of a product's authentication and gateway options: only what differs from
// porta's defaults (proxyDefaults), which resolveProxy sends for what the spec leaves out.
func authentication(ctx context.Context, x *plugin.Exporter, p tsclient.Product, attrs map[string]string, name string) (*v1alpha1.AuthenticationSpec, error) {
	differs := func(key string) string {
		if v := attrs[key]; v != proxyDefaults[key] {
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
		cfg, err := x.Client.GetOIDCConfiguration(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot read the OIDC configuration of product %q: %w", p.SystemName, err)
		}
		// The issuer endpoint holds the client's credentials: a Secret reference, with a template.
		secret := x.Template(name+"-oidc-issuer", []string{"issuerEndpoint"})
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

// Inventory lists the tenant's products for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListProducts(ctx)
	return plugin.Items("Product", "products", all, err, func(r tsclient.Product) (int64, string, string) { return r.ID, r.SystemName, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteProduct(ctx, it.ID)
}
