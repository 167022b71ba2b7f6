package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestConvertKinds spells out, by hand, one converted object of each kind: what the golden files hold,
// written from the mapping rather than from the conversion's output.
func TestConvertKinds(t *testing.T) {
	adopt := CommonSpec{DeletionPolicy: DeletionPolicyDelete, Adoption: AdoptionIfExists}
	withProvider := func(c CommonSpec, name string) CommonSpec {
		c.ProviderAccountRef = &ProviderAccountRef{Name: name}
		return c
	}
	retain := func(c CommonSpec) CommonSpec { c.DeletionPolicy = DeletionPolicyRetain; return c }
	hits := MetricSpec{FriendlyName: "Hits", Unit: "hit", Description: "Number of API hits"}
	apicast := PolicySpec{Name: "apicast", Version: "builtin", Enabled: true, Configuration: &apiextensionsv1.JSON{Raw: []byte(`{}`)}}
	meta := func(ns, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
	}
	cases := []struct {
		name  string
		input []string
		opts  Options
		want  client.Object
	}{
		{name: "a Backend with everything", input: []string{"backends.yaml"}, want: &Backend{TypeMeta: typeMeta("Backend"),
			ObjectMeta: meta("apis", "backend1", map[string]string{"team": "pets"}),
			Spec: BackendSpec{Name: "Operated Backend 1", SystemName: "backend1", Description: "The pets upstream", PrivateBaseURL: "https://api.example.com",
				Metrics: map[string]MetricSpec{"hits": hits, "metric01": {FriendlyName: "Metric01", Unit: "1"}},
				Methods: map[string]MethodSpec{"method01": {FriendlyName: "Method01", Description: "Lists pets"}},
				MappingRules: []MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/pets", MetricMethodRef: "hits", Increment: 1},
					{HTTPMethod: "GET", Pattern: "/pets/id$", MetricMethodRef: "method01", Increment: 3, Last: true}},
				CommonSpec: withProvider(adopt, "mytenant")}}},
		{name: "a self-managed app id/key Product", input: []string{"backends.yaml", "products.yaml"}, want: &Product{TypeMeta: typeMeta("Product"),
			ObjectMeta: meta("apis", "product2", nil),
			Spec: ProductSpec{Name: "OperatedProduct 2", SystemName: "OperatedProduct2",
				Deployment: &DeploymentSpec{ApicastSelfManaged: &ApicastSelfManagedSpec{StagingPublicBaseURL: "https://staging.api.example.com",
					ProductionPublicBaseURL: "https://production.api.example.com"}},
				Authentication: &AuthenticationSpec{AppKeyAppID: &AppKeyAppIDAuthSpec{AppID: "myAppID", AppKey: "myAppKey",
					GatewayOptions: GatewayOptions{CredentialsLocation: "query", GatewayResponse: &GatewayResponseSpec{NoMatch: &GatewayErrorResponse{Status: 404, Body: "Nothing here"}}}}},
				Metrics: map[string]MetricSpec{"hits": hits}, Policies: []PolicySpec{apicast}, CommonSpec: adopt}}},
		{name: "an OIDC Product", input: []string{"products.yaml"}, want: &Product{TypeMeta: typeMeta("Product"),
			ObjectMeta: meta("apis", "product-oidc", nil),
			Spec: ProductSpec{Name: "OperatedProduct OIDC", SystemName: "product_oidc", Deployment: &DeploymentSpec{ApicastHosted: &ApicastHostedSpec{}},
				Authentication: &AuthenticationSpec{OIDC: &OIDCAuthSpec{IssuerType: "keycloak", IssuerEndpointRef: &LocalSecretKeyRef{Name: "my-issuer", Key: "issuerEndpoint"},
					AuthenticationFlow:   &OIDCAuthenticationFlowSpec{ImplicitFlowEnabled: true, ServiceAccountsEnabled: true, DirectAccessGrantsEnabled: true},
					JWTClaimWithClientID: "azp", JWTClaimWithClientIDType: "plain", GatewayOptions: GatewayOptions{CredentialsLocation: "authorization"}}},
				Metrics: map[string]MetricSpec{"hits": hits}, Policies: []PolicySpec{apicast}, CommonSpec: adopt}}},
		{name: "an embedded plan", input: []string{"backends.yaml", "products.yaml"}, want: &ApplicationPlan{TypeMeta: typeMeta("ApplicationPlan"),
			ObjectMeta: meta("apis", "product1-plan01", map[string]string{"team": "pets"}),
			Spec: ApplicationPlanSpec{ProductRef: "product1", Name: "My Plan 01", SystemName: "plan01", Published: ptr(true), ApprovalRequired: ptr(true),
				TrialPeriodDays: ptr(int32(3)), SetupFee: "14.56", CostMonth: "3.00",
				Limits: []LimitSpec{{Period: "month", Value: 300, MetricMethodRef: MetricMethodRef{SystemName: "hits", Backend: "backend1"}},
					{Period: "week", Value: 100, MetricMethodRef: MetricMethodRef{SystemName: "hits"}},
					{Period: "day", Value: 10, MetricMethodRef: MetricMethodRef{SystemName: "metric01", Backend: "backenda"}}},
				PricingRules: []PricingRuleSpec{{From: 1, To: 100, PricePerUnit: "15.45", MetricMethodRef: MetricMethodRef{SystemName: "hits"}},
					{From: 1, To: 300, PricePerUnit: "15.45", MetricMethodRef: MetricMethodRef{SystemName: "hits", Backend: "backend-2"}}},
				DeletionPolicy: DeletionPolicyDelete, Adoption: AdoptionIfExists}}},
		{name: "an account with its users", input: []string{"accounts.yaml"}, want: &DeveloperAccount{TypeMeta: typeMeta("DeveloperAccount"),
			ObjectMeta: meta("apps", "developeraccount-simple-sample", map[string]string{"tier": "gold"}),
			Spec: DeveloperAccountSpec{OrgName: "Ecorp", MonthlyBillingEnabled: ptr(true), MonthlyChargingEnabled: ptr(false),
				Users: []DeveloperUserSpec{
					{Username: "myusername", Email: "myusername@example.com", Role: "admin", PasswordRef: &LocalSecretKeyRef{Name: "mysecret", Key: "password"}, PasswordPolicy: PasswordOnCreate},
					{Username: "myusername1", Email: "myusername1@example.com", Role: "member", PasswordRef: &LocalSecretKeyRef{Name: "mysecret", Key: "password"}, PasswordPolicy: PasswordOnCreate, Suspended: true}},
				CommonSpec: withProvider(adopt, "mytenant")}}},
		{name: "an application", input: []string{"accounts.yaml"}, want: &Application{TypeMeta: typeMeta("Application"),
			ObjectMeta: meta("apps", "application-sample", nil),
			Spec: ApplicationSpec{AccountRef: "developeraccount-simple-sample", PlanRef: "product1-plan01", Name: "testApp", Description: "testing application",
				Suspended: true, DeletionPolicy: DeletionPolicyDelete, Adoption: AdoptionIfExists}}},
		{name: "an ActiveDoc from a URL", input: []string{"activedocs.yaml"}, want: &ActiveDoc{TypeMeta: typeMeta("ActiveDoc"),
			ObjectMeta: meta("docs", "activedoc-from-url", nil),
			Spec: ActiveDocSpec{Name: "Operated ActiveDoc From URL", SystemName: "petstoredoc", Description: "The pet store", Published: true, ProductRef: "pet-store",
				DocumentRef: &DocumentRef{ConfigMapKeyRef: &LocalSecretKeyRef{Name: "activedoc-from-url-openapi", Key: "openapi"}},
				CommonSpec:  retain(withProvider(adopt, "mytenant"))}}},
		{name: "an ActiveDoc from a Secret", input: []string{"activedocs.yaml"}, want: &ActiveDoc{TypeMeta: typeMeta("ActiveDoc"),
			ObjectMeta: meta("docs", "activedoc-secret", nil),
			Spec: ActiveDocSpec{Name: "Operated ActiveDoc From secret", SystemName: "operatedactivedocfromsecret",
				DocumentRef: &DocumentRef{SecretKeyRef: &LocalSecretKeyRef{Name: "myopenapi", Key: "myopenapi.yaml"}}, CommonSpec: retain(adopt)}}},
		{name: "a custom policy", input: []string{"custompolicies.yaml"}, want: &CustomPolicyDefinition{TypeMeta: typeMeta("CustomPolicyDefinition"),
			ObjectMeta: meta("apis", "custompolicydefinition-sample", nil),
			Spec: CustomPolicyDefinitionSpec{Name: "MyCustomPolicy", Version: "0.0.1", CommonSpec: retain(withProvider(adopt, "mytenant")),
				Schema: apiextensionsv1.JSON{Raw: []byte(`{"$schema":"http://json-schema.org/draft-07/schema#","configuration":{"properties":{"someAttr":` +
					`{"description":"Some attribute","type":"integer"}},"type":"object"},"description":["A policy of my own"],"name":"MyCustomPolicy",` +
					`"summary":"some summary","version":"0.0.1"}`)}}}},
		{name: "an OpenAPI with 3scale-operator's system name and conventions", input: []string{"openapi.yaml"}, want: &OpenAPI{TypeMeta: typeMeta("OpenAPI"),
			ObjectMeta: meta("apis", "openapi1", nil),
			Spec: OpenAPISpec{SystemName: "petstore", Conventions: ConventionsThreescaleOperator, DocumentRef: &DocumentRef{SecretKeyRef: &LocalSecretKeyRef{Name: "myopenapi", Key: "petstore.yaml"}},
				PrivateBaseURL: "https://petstore.internal/v1", PrefixMatching: true, Deployment: &DeploymentSpec{ApicastHosted: &ApicastHostedSpec{}},
				Production: &ProductionSpec{Promote: PromoteLatest}, CommonSpec: withProvider(adopt, "mytenant")}}},
		{name: "an OpenAPI with OIDC", input: []string{"openapi.yaml"}, want: &OpenAPI{TypeMeta: typeMeta("OpenAPI"),
			ObjectMeta: meta("apis", "openapi-example", nil),
			Spec: OpenAPISpec{Conventions: ConventionsThreescaleOperator, DocumentRef: &DocumentRef{ConfigMapKeyRef: &LocalSecretKeyRef{Name: "openapi-example-openapi", Key: "openapi"}},
				Deployment: &DeploymentSpec{ApicastHosted: &ApicastHostedSpec{}},
				OIDC: &OpenAPIOIDCSpec{IssuerType: "keycloak", IssuerEndpointRef: &LocalSecretKeyRef{Name: "my-secret", Key: "issuerEndpoint"},
					AuthenticationFlow:   &OIDCAuthenticationFlowSpec{StandardFlowEnabled: true, ImplicitFlowEnabled: true, ServiceAccountsEnabled: true, DirectAccessGrantsEnabled: true},
					JWTClaimWithClientID: "azp", JWTClaimWithClientIDType: "plain", GatewayResponse: &GatewayResponseSpec{AuthFailed: &GatewayErrorResponse{Status: 403}}},
				Security:   &SecuritySpec{HostHeader: "petstore.internal", SecretToken: "xxxx"},
				CommonSpec: adopt}}},
		{name: "a Tenant", input: []string{"tenants.yaml"}, want: &Tenant{TypeMeta: typeMeta("Tenant"),
			ObjectMeta: meta("operator", "ecorp-tenant", nil),
			Spec: TenantSpec{MasterAccountRef: ProviderAccountRef{Name: "ecorp-tenant-master-account"}, OrganizationName: "ECorp", Username: "admin",
				Email: "admin@ecorp.com", PasswordRef: LocalSecretKeyRef{Name: "ecorp-admin-secret", Key: "admin_password"},
				ProviderAccountSecret: TenantSecretRef{Namespace: "team-ecorp", Name: "tenant-secret"}, DeletionPolicy: DeletionPolicyDelete}}},
		{name: "a Backend moved to another namespace", input: []string{"backends.yaml"}, opts: Options{Namespace: "team-b"}, want: &Backend{TypeMeta: typeMeta("Backend"),
			ObjectMeta: meta("team-b", "backend-2", nil),
			Spec: BackendSpec{Name: "My Backend Name", SystemName: "MyBackendName", PrivateBaseURL: "wss://api2.example.com:8443",
				Metrics: map[string]MetricSpec{"hits": hits}, CommonSpec: adopt}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Convert(readInput(t, tc.input...), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got client.Object
			for _, obj := range res.Objects {
				if kindOf(obj) == kindOf(tc.want) && obj.GetNamespace() == tc.want.GetNamespace() && obj.GetName() == tc.want.GetName() {
					got = obj
				}
			}
			if got == nil {
				t.Fatalf("no %s %s/%s in the output", kindOf(tc.want), tc.want.GetNamespace(), tc.want.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenAPIPolicySecretOfAnotherNamespace: a document whose x-3scale-product policy reads a Secret of
// another namespace (as 3scale-operator allows) is converted with a finding that says the OpenAPI will be
// Invalid until the Secret is in its own namespace; one of its own namespace says nothing. An empty
// privateAPISecretToken is said to be left as 3scale has it.
func TestOpenAPIPolicySecretOfAnotherNamespace(t *testing.T) {
	doc := "openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\npaths: {}\nx-3scale-product:\n  policies:\n" +
		"    - {name: headers, version: builtin, configurationRef: {name: shared-headers, namespace: platform}}\n" +
		"    - {name: cors, version: builtin, configurationRef: {name: cors, namespace: apis}}\n"
	in := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "capabilities.3scale.net/v1beta1", "kind": "OpenAPI",
			"metadata": map[string]any{"name": "pets", "namespace": "apis"}, "spec": map[string]any{"openapiRef": map[string]any{"secretRef": map[string]any{"name": "pets-doc"}},
				"privateAPISecretToken": ""}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "pets-doc", "namespace": "apis"},
			"stringData": map[string]any{"pets.yaml": doc}}},
	}
	res, err := Convert(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Finding{Object: "OpenAPI/pets", Namespace: "apis", Field: "spec.openapiRef", Severity: SeverityChanged,
		Message: `x-3scale-product.policies[0] (headers) reads Secret "shared-headers" of namespace "platform"`}
	if !hasFinding(res.Findings, want) {
		t.Errorf("no finding %s\n%s", want, findingsOf(res.Findings, "OpenAPI/pets"))
	}
	// An empty secret token: 3scale-operator emptied it, apimsync keeps 3scale's: said.
	empty := Finding{Object: "OpenAPI/pets", Namespace: "apis", Field: "spec.privateAPISecretToken", Severity: SeverityChanged, Message: "3scale-operator emptied the token"}
	if !hasFinding(res.Findings, empty) {
		t.Errorf("no finding %s\n%s", empty, findingsOf(res.Findings, "OpenAPI/pets"))
	}
	if strings.Contains(findingsOf(res.Findings, "OpenAPI/pets"), "policies[1]") {
		t.Errorf("a policy Secret of the OpenAPI's own namespace was reported:\n%s", findingsOf(res.Findings, "OpenAPI/pets"))
	}
}
