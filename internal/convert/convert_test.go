package convert

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// update rewrites the golden files (testdata/golden) from what the conversion makes: review the diff.
var update = flag.Bool("update", false, "rewrite testdata/golden from the conversion's output")

// testCase converts input files and compares the objects and findings with golden files; want lists
// findings that must be among them (the message a substring of the finding's).
type testCase struct {
	name  string
	input []string
	opts  Options
	want  []Finding
}

var cases = []testCase{
	{name: "backends", input: []string{"backends.yaml"}, want: []Finding{
		{Object: "Backend/backend1", Namespace: "apis", Field: "metadata.annotations.insecure_skip_verify", Severity: SeverityDropped, Message: "insecureSkipVerify"},
		{Object: "Backend/backend1", Namespace: "apis", Field: "spec.mappingRules[2]", Severity: SeverityDropped, Message: `"nosuchmetric" names no metric or method`},
		{Object: "Backend/backend-2", Namespace: "apis", Field: "spec.retries", Severity: SeverityDropped, Message: "not a field of 3scale-operator's Backend"},
		{Object: "Backend/backend-2", Namespace: "apis", Field: "spec.systemName", Severity: SeverityInfo, Message: `3scale-operator used "MyBackendName"`},
		{Object: "Backend/backend-2", Namespace: "apis", Field: "spec.metrics.hits", Severity: SeverityInfo, Message: "written out"},
		{Object: "Backend/*", Field: "spec.deletionPolicy", Severity: SeverityInfo, Message: "deletionPolicy Delete does the same"},
	}},
	{name: "products", input: []string{"backends.yaml", "products.yaml"}, want: []Finding{
		{Object: "Product/product1", Namespace: "apis", Field: "spec.backendUsages.MyBackendName", Severity: SeverityChanged, Message: `Backend object name "backend-2"`},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.backendUsages.backendA", Severity: SeverityChanged, Message: `no Backend with system name "backendA"`},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.policies[1].configurationRef", Severity: SeverityInfo, Message: "key configuration"},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.policies[3]", Severity: SeverityInfo, Message: "MyCustomPolicy 0.0.1"},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.applicationPlans.plan01", Severity: SeverityInfo, Message: `ApplicationPlan "product1-plan01"`},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.applicationPlans.plan01", Severity: SeverityChanged, Message: "MyBackendName → backend-2, backendA → backenda"},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.applicationPlans.plan02.name", Severity: SeverityChanged, Message: `"plan02" is written out`},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.applicationPlans.plan02.setupFee", Severity: SeverityChanged, Message: "apimsync sets 0"},
		{Object: "Product/product1", Namespace: "apis", Field: "spec.applicationPlans", Severity: SeverityChanged, Message: "leaves a plan without an ApplicationPlan object alone"},
		{Object: "ProxyConfigPromote/product1-v1-production", Namespace: "apis", Field: "spec.production", Severity: SeverityChanged, Message: "promote: Latest"},
		{Object: "ProxyConfigPromote/product1-v1-production", Namespace: "apis", Field: "spec.production", Severity: SeverityChanged, Message: "version: 7"},
		{Object: "ProxyConfigPromote/product1-v1-staging", Namespace: "apis", Field: "spec.production", Severity: SeverityInfo, Message: "nothing to convert"},
		{Object: "ProxyConfigPromote/elsewhere-production", Namespace: "apis", Field: "spec.productCRName", Severity: SeverityDropped, Message: `"elsewhere" is not in the input`},
		{Object: "Product/product2", Namespace: "apis", Field: "spec.deployment.apicastSelfManaged.authentication.appKeyAppID", Severity: SeverityChanged,
			Message: "security.hostHeader (none); gatewayResponse.errorStatusAuthFailed"},
		{Object: "Product/product2", Namespace: "apis", Field: "spec.deployment.apicastSelfManaged.authentication.appKeyAppID", Severity: SeverityChanged,
			Message: `gatewayResponse.errorHeadersNoMatch (text/plain; charset=us-ascii)`},
		{Object: "Product/product-oidc", Namespace: "apis", Field: "spec.deployment.apicastHosted.authentication.oidc.security.secretToken", Severity: SeverityChanged,
			Message: "apimsync leaves the token 3scale has"},
		{Object: "Product/product-oidc", Namespace: "apis", Field: "spec.deployment.apicastHosted.authentication.oidc.issuerEndpointRef", Severity: SeverityInfo,
			Message: "key issuerEndpoint"},
		{Object: "Product/product-minimal", Namespace: "apis", Field: "spec.deployment", Severity: SeverityChanged, Message: "apicastHosted, authentication userKey"},
		{Object: "Product/product-minimal", Namespace: "apis", Field: "spec.policies", Severity: SeverityInfo, Message: "appends the apicast policy"},
	}},
	{name: "accounts", input: []string{"accounts.yaml"}, want: []Finding{
		{Object: "DeveloperUser/developeruser-member-sample", Namespace: "apps", Field: "spec.passwordCredentialsRef.namespace", Severity: SeverityChanged, Message: `copy it to "apps"`},
		{Object: "DeveloperUser/developeruser-member-sample", Namespace: "apps", Field: "metadata.labels", Severity: SeverityDropped, Message: "tier"},
		{Object: "DeveloperUser/developeruser-admin-sample", Namespace: "apps", Field: "metadata.annotations.userID", Severity: SeverityDropped, Message: "username"},
		{Object: "DeveloperUser/lonely-user", Namespace: "apps", Field: "spec.developerAccountRef", Severity: SeverityDropped, Message: `"missing-account" is not in the input`},
		{Object: "DeveloperAccount/developeraccount-simple-sample", Namespace: "apps", Field: "spec.monthlyBillingEnabled", Severity: SeverityInfo, Message: "keeps it true"},
		{Object: "DeveloperAccount/developeraccount-simple-sample", Namespace: "apps", Severity: SeverityChanged, Message: "is deleted at the first sync"},
		{Object: "DeveloperAccount/developeraccount-simple-sample", Namespace: "apps", Severity: SeverityInfo, Message: "passwordPolicy OnCreate does the same"},
		{Object: "DeveloperAccount/no-users", Namespace: "apps", Severity: SeverityDropped, Message: "no DeveloperUser of the input with role admin"},
		{Object: "Application/application-sample", Namespace: "apps", Field: "spec.authSecretRef", Severity: SeverityDropped, Message: "spec.credentialsRef"},
		{Object: "Application/application-sample", Namespace: "apps", Field: "spec.applicationPlanName", Severity: SeverityChanged, Message: `planRef "product1-plan01"`},
		{Object: "Application/application-sample", Namespace: "apps", Field: "metadata.annotations.applicationID", Severity: SeverityDropped, Message: "by its name"},
		{Object: "Application/app-basic", Namespace: "apps", Field: "spec.applicationPlanName", Severity: SeverityChanged, Message: `no plan "basic"`},
		{Object: "Application/app-elsewhere", Namespace: "apps", Field: "spec.applicationPlanName", Severity: SeverityChanged, Message: `planRef "other-product-gold-plan"`},
		{Object: "Application/app-elsewhere", Namespace: "apps", Field: "spec.authSecretRef", Severity: SeverityChanged, Message: `"app-elsewhere-apimsync-credentials"`},
		{Object: "ApplicationAuth/application-sample-auth", Namespace: "apps", Severity: SeverityDropped, Message: "no ApplicationAuth"},
	}},
	{name: "activedocs", input: []string{"activedocs.yaml"}, want: []Finding{
		{Object: "ActiveDoc/activedoc-secret", Namespace: "docs", Field: "spec.activeDocOpenAPIRef.secretRef", Severity: SeverityInfo, Message: `"myopenapi.yaml"`},
		{Object: "ActiveDoc/activedoc-secret", Namespace: "docs", Field: "spec.systemName", Severity: SeverityInfo, Message: `"operatedactivedocfromsecret"`},
		{Object: "ActiveDoc/activedoc-secret", Namespace: "docs", Field: "spec", Severity: SeverityChanged, Message: "description (empty); published (false); skipSwaggerValidations (false)"},
		{Object: "ActiveDoc/activedoc-from-url", Namespace: "docs", Field: "spec.activeDocOpenAPIRef.url", Severity: SeverityChanged,
			Message: "curl -fsSL 'https://raw.githubusercontent.com/OAI/OpenAPI-Specification/master/examples/v3.0/petstore.yaml' -o openapi.yaml && kubectl -n docs create configmap activedoc-from-url-openapi"},
		{Object: "ActiveDoc/activedoc-from-url", Namespace: "docs", Field: "spec.productSystemName", Severity: SeverityChanged, Message: `Product object "pet-store"`},
		{Object: "ActiveDoc/activedoc-elsewhere", Namespace: "docs", Field: "spec.activeDocOpenAPIRef.secretRef.namespace", Severity: SeverityChanged, Message: `namespace "shared"`},
		{Object: "ActiveDoc/activedoc-elsewhere", Namespace: "docs", Field: "spec.activeDocOpenAPIRef.secretRef", Severity: SeverityChanged, Message: "is not in the input"},
		{Object: "ActiveDoc/activedoc-elsewhere", Namespace: "docs", Field: "spec.productSystemName", Severity: SeverityChanged, Message: `productRef is "other-product"`},
		{Object: "ActiveDoc/activedoc-with-product-link", Namespace: "docs", Field: "spec.openapiRef", Severity: SeverityDropped, Message: "not a field of 3scale-operator's ActiveDoc"},
		{Object: "ActiveDoc/activedoc-with-product-link", Namespace: "docs", Field: "spec.activeDocOpenAPIRef", Severity: SeverityDropped, Message: "skipped"},
		{Object: "Secret/myopenapi", Namespace: "docs", Severity: SeverityInfo, Message: "not converted"},
		{Object: "ActiveDoc/*", Field: "spec.deletionPolicy", Severity: SeverityInfo, Message: "deletionPolicy Retain"},
	}},
	{name: "custompolicies", input: []string{"custompolicies.yaml"}, want: []Finding{
		{Object: "CustomPolicyDefinition/custompolicydefinition-sample", Namespace: "apis", Field: "spec.schema.$schema", Severity: SeverityInfo, Message: "refuse it"},
		{Object: "CustomPolicyDefinition/mismatched", Namespace: "apis", Field: "spec.schema.version", Severity: SeverityChanged, Message: "InvalidPolicySchema"},
		{Object: "CustomPolicyDefinition/mismatched", Namespace: "apis", Field: "spec.schema.summary", Severity: SeverityChanged, Message: "at most 75"},
		{Object: "CustomPolicyDefinition/builtin", Namespace: "apis", Field: "spec.version", Severity: SeverityDropped, Message: "skipped"},
		{Object: "CustomPolicyDefinition/*", Field: "spec.deletionPolicy", Severity: SeverityInfo, Message: "deletionPolicy Retain"},
	}},
	{name: "openapi", input: []string{"openapi.yaml"}, want: []Finding{
		{Object: "OpenAPI/openapi1", Namespace: "apis", Field: "spec.systemName", Severity: SeverityInfo, Message: `"petstore", the system name 3scale-operator gave`},
		{Object: "OpenAPI/openapi1", Namespace: "apis", Field: "spec.openapiRef.secretRef", Severity: SeverityInfo, Message: `"petstore.yaml"`},
		{Object: "Product/petstore-9a1c4f1e-0000-4000-8000-000000000001", Namespace: "apis", Severity: SeverityDropped, Message: "--expand-openapi"},
		{Object: "Backend/petstore-9a1c4f1e-0000-4000-8000-000000000001", Namespace: "apis", Severity: SeverityDropped, Message: "--expand-openapi"},
		{Object: "ProxyConfigPromote/petstore-production", Namespace: "apis", Field: "spec.production", Severity: SeverityChanged, Message: `OpenAPI "openapi1"`},
		{Object: "Application/petstore-app", Namespace: "apis", Field: "spec.applicationPlanName", Severity: SeverityChanged, Message: `x-3scale-product has no plan "plan01"`},
		{Object: "ActiveDoc/petstore-doc", Namespace: "apis", Field: "spec.productSystemName", Severity: SeverityChanged, Message: `Product object "openapi1" (apimsync)`},
		{Object: "OpenAPI/openapi-example", Namespace: "apis", Field: "spec.privateAPISecretToken", Severity: SeverityInfo, Message: "now spec.security"},
		{Object: "OpenAPI/openapi-example", Namespace: "apis", Field: "spec.privateAPIHostHeader", Severity: SeverityInfo, Message: "now spec.security"},
		{Object: "OpenAPI/openapi-example", Namespace: "apis", Field: "spec.openapiRef.url", Severity: SeverityChanged, Message: "does not fetch documents"},
		{Object: "OpenAPI/openapi-example", Namespace: "apis", Field: "spec.systemName", Severity: SeverityChanged, Message: "cannot read"},
		{Object: "OpenAPI/openapi-selfmanaged", Namespace: "apis", Field: "spec.systemName", Severity: SeverityInfo, Message: `"My_API"`},
		{Object: "OpenAPI/pets-v2", Namespace: "apis", Field: "spec.systemName", Severity: SeverityInfo, Message: `"pets_v2"`},
	}},
	{name: "openapi-expanded", input: []string{"openapi.yaml"}, opts: Options{ExpandOpenAPI: true}, want: []Finding{
		{Object: "OpenAPI/openapi1", Namespace: "apis", Severity: SeverityDropped, Message: "Product/petstore-9a1c4f1e-0000-4000-8000-000000000001, Backend/petstore-9a1c4f1e"},
		{Object: "OpenAPI/openapi-example", Namespace: "apis", Severity: SeverityDropped, Message: "neither is in the input"},
		{Object: "ProxyConfigPromote/petstore-production", Namespace: "apis", Field: "spec.production", Severity: SeverityChanged,
			Message: `Product "petstore-9a1c4f1e-0000-4000-8000-000000000001" gets spec.production.promote: Latest`},
		{Object: "Application/petstore-app", Namespace: "apis", Field: "spec.applicationPlanName", Severity: SeverityChanged,
			Message: `planRef "petstore-9a1c4f1e-0000-4000-8000-000000000001-plan01"`},
		{Object: "ActiveDoc/petstore-doc", Namespace: "apis", Field: "spec.productSystemName", Severity: SeverityChanged,
			Message: `Product object "petstore-9a1c4f1e-0000-4000-8000-000000000001"`},
	}},
	{name: "tenants", input: []string{"tenants.yaml"}, want: []Finding{
		{Object: "Tenant/ecorp-tenant", Namespace: "operator", Field: "spec.masterCredentialsRef", Severity: SeverityChanged,
			Message: `kubectl -n operator create secret generic ecorp-tenant-master-account --from-literal=adminURL='https://master.apps.example.com' ` +
				`--from-literal=token="$(kubectl -n operator get secret system-seed -o jsonpath='{.data.MASTER_ACCESS_TOKEN}' | base64 -d)"`},
		{Object: "Tenant/ecorp-tenant", Namespace: "operator", Field: "spec", Severity: SeverityChanged, Message: "are TenantSettings team-ecorp/ecorp-tenant-settings's spec.account"},
		{Object: "Tenant/ecorp-tenant", Namespace: "operator", Severity: SeverityChanged, Message: "never adopts a tenant"},
		{Object: "Tenant/acme", Namespace: "operator", Field: "spec.tenantSecretRef", Severity: SeverityInfo, Message: "Secret operator/acme-acmeorg"},
		{Object: "Tenant/acme", Namespace: "operator", Field: "spec.masterCredentialsRef", Severity: SeverityChanged, Message: "kubectl -n threescale get secret system-seed"},
	}},
	{name: "others", input: []string{"others.yaml"}, want: []Finding{
		{Object: "APIManager/apimanager-sample", Namespace: "threescale", Severity: SeverityDropped, Message: "installation is not converted"},
		{Object: "ConfigMap/settings", Namespace: "apis", Severity: SeverityDropped, Message: "not a 3scale-operator capability kind"},
		{Object: "Backend/old-backend", Namespace: "apis", Severity: SeverityDropped, Message: "version v1alpha1 of Backend is not read"},
		{Object: "Widget/gadget", Namespace: "apis", Severity: SeverityDropped, Message: "not a kind the conversion knows"},
		{Object: "Backend/listed", Namespace: "apis", Severity: SeverityDropped, Message: "twice"},
		{Object: "Backend/ftp-backend", Namespace: "apis", Field: "spec.privateBaseURL", Severity: SeverityDropped, Message: "not an absolute http, https, ws or wss URL"},
		{Object: "Backend/shapeless", Namespace: "apis", Field: "spec.name", Severity: SeverityDropped, Message: "holds a JSON array where 3scale-operator has a string"},
	}},
	{name: "edge", input: []string{"edge.yaml"}, want: []Finding{
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.deployment.apicastHosted.authentication.oidc.issuerEndpointRef", Severity: SeverityDropped, Message: "used it"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.deployment.apicastHosted.authentication.oidc.credentials", Severity: SeverityDropped, Message: `"everywhere"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.deployment.apicastHosted.authentication.oidc.gatewayResponse.errorStatusAuthFailed", Severity: SeverityDropped, Message: "999"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.metrics.bad key", Severity: SeverityDropped, Message: "pattern"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.metrics.nounit", Severity: SeverityDropped, Message: "unit"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.methods.hits", Severity: SeverityDropped, Message: "hits"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.methods.shared", Severity: SeverityDropped, Message: "share one namespace"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.methods.nofriendly", Severity: SeverityDropped, Message: "friendlyName"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.mappingRules[0]", Severity: SeverityDropped, Message: `"FETCH"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.mappingRules[1]", Severity: SeverityDropped, Message: "start with '/'"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.mappingRules[2].increment", Severity: SeverityChanged, Message: "0 is not an increment"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.mappingRules[5]", Severity: SeverityDropped, Message: "as mappingRules[3]"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.mappingRules[4].increment", Severity: SeverityChanged, Message: "not set: 1"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.backendUsages.MyBackend.path", Severity: SeverityChanged, Message: `"/v1"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.backendUsages.mybackend", Severity: SeverityDropped, Message: "used already"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.policies[0]", Severity: SeverityDropped, Message: "name and version"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.policies[1].configurationRef", Severity: SeverityDropped, Message: "configuration is set too"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.policies[2].configurationRef.namespace", Severity: SeverityChanged, Message: `namespace "elsewhere"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.bad plan", Severity: SeverityDropped, Message: "no ApplicationPlan"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.trialPeriod", Severity: SeverityDropped, Message: "5000"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.setupFee", Severity: SeverityDropped, Message: `"1.999"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.costMonth", Severity: SeverityDropped, Message: "apimsync sets 0"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.limits[0]", Severity: SeverityDropped, Message: `"fortnight"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.limits[1]", Severity: SeverityDropped, Message: "negative"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.limits[2]", Severity: SeverityDropped, Message: `"nosuchmetric"`},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.limits[4]", Severity: SeverityDropped, Message: "as limits[3]"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.limits[5]", Severity: SeverityDropped, Message: "empty"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.pricingRules[0]", Severity: SeverityDropped, Message: "0 to 10"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.pricingRules[1]", Severity: SeverityDropped, Message: "20 to 10"},
		{Object: "Product/odd-product", Namespace: "edge", Field: "spec.applicationPlans.gold.pricingRules[2]", Severity: SeverityDropped, Message: `"1.00001"`},
		{Object: "Product/two-deployments", Namespace: "edge", Field: "spec.deployment", Severity: SeverityDropped, Message: "both apicastHosted and apicastSelfManaged"},
		{Object: "Product/two-modes", Namespace: "edge", Field: "spec.deployment.apicastSelfManaged.authentication", Severity: SeverityDropped, Message: "more than one"},
		{Object: "Product/oidc-without-issuer", Namespace: "edge", Field: "spec.deployment.apicastHosted.authentication.oidc", Severity: SeverityDropped, Message: "neither issuerEndpoint"},
		{Object: "Product/no-mode", Namespace: "edge", Field: "spec.deployment.apicastHosted.authentication", Severity: SeverityChanged, Message: "no authentication mode set"},
		{Object: "Backend/dotted", Namespace: "edge", Field: "spec.systemName", Severity: SeverityDropped, Message: `"dotted.backend"`},
		{Object: "DeveloperAccount/strict", Namespace: "edge", Severity: SeverityDropped, Message: `"has space"`},
		{Object: "DeveloperUser/strict-admin", Namespace: "edge", Severity: SeverityDropped, Message: "does not fit"},
		{Object: "DeveloperAccount/twins", Namespace: "edge", Severity: SeverityDropped, Message: `the username of DeveloperUser "twin-1" too`},
		{Object: "DeveloperUser/mixed-admin", Namespace: "edge", Field: "spec.providerAccountRef", Severity: SeverityDropped, Message: "threescale-provider-account"},
		{Object: "DeveloperUser/mixed-admin", Namespace: "edge", Field: "spec.passwordCredentialsRef", Severity: SeverityChanged, Message: "no passwordRef"},
		{Object: "Application/incomplete", Namespace: "edge", Field: "spec.applicationPlanName", Severity: SeverityDropped, Message: "needs its plan"},
		{Object: "Application/on-skipped-product", Namespace: "edge", Field: "spec.applicationPlanName", Severity: SeverityChanged, Message: "has no plan"},
		{Object: "Tenant/long", Namespace: "edge", Field: "spec.username", Severity: SeverityDropped, Message: "40"},
		{Object: "Tenant/nowhere", Field: "spec.tenantSecretRef.namespace", Severity: SeverityDropped, Message: "names a namespace"},
		{Object: "CustomPolicyDefinition/nameless", Namespace: "edge", Field: "spec", Severity: SeverityDropped, Message: "needs a name and a version"},
		{Object: "ActiveDoc/both-sources", Namespace: "edge", Field: "spec.activeDocOpenAPIRef.url", Severity: SeverityDropped, Message: "secretRef is set too"},
		{Object: "ActiveDoc/both-sources", Namespace: "edge", Field: "spec.activeDocOpenAPIRef.secretRef", Severity: SeverityChanged, Message: "has 2 keys"},
		{Object: "OpenAPI/bad-openapi", Namespace: "edge", Field: "spec.oidc.issuerType", Severity: SeverityDropped, Message: `"other"`},
		{Object: "ProxyConfigPromote/nowhere-staging", Namespace: "edge", Field: "spec.productCRName", Severity: SeverityDropped, Message: "nothing to convert"},
	}},
	{name: "namespace", input: []string{"backends.yaml", "products.yaml", "custompolicies.yaml"}, opts: Options{Namespace: "team-b"}, want: []Finding{
		{Severity: SeverityInfo, Message: "every object goes to namespace team-b"},
	}},
}

func TestConvert(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Convert(readInput(t, tc.input...), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, tc.name, res)
			for _, w := range tc.want {
				if !hasFinding(res.Findings, w) {
					t.Errorf("no finding %s\nfindings of %s:\n%s", w, w.Object, findingsOf(res.Findings, w.Object))
				}
			}
			// Every converted object passes apimsync's schema.
			for _, obj := range res.Objects {
				if problems := validate(t, obj); len(problems) > 0 {
					t.Errorf("%s %s/%s is not valid:\n  %s", kindOf(obj), obj.GetNamespace(), obj.GetName(), strings.Join(problems, "\n  "))
				}
			}
		})
	}
}

// TestConvertIsDeterministic converts all the inputs, in two orders: the same output and report.
func TestConvertIsDeterministic(t *testing.T) {
	// others.yaml is left out: which of two copies of one object is kept depends on their order.
	files := []string{"backends.yaml", "products.yaml", "accounts.yaml", "activedocs.yaml", "custompolicies.yaml", "openapi.yaml", "tenants.yaml"}
	in := readInput(t, files...)
	first, err := Convert(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reversed := make([]*unstructured.Unstructured, len(in))
	for i, u := range in {
		reversed[len(in)-1-i] = u.DeepCopy()
	}
	second, err := Convert(reversed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the output depends on the input's order (-first +second):\n%s", diff)
	}
	for _, obj := range first.Objects {
		if obj.GetObjectKind().GroupVersionKind().GroupVersion() != v1alpha1.GroupVersion {
			t.Errorf("%s/%s has apiVersion %q", kindOf(obj), obj.GetName(), obj.GetObjectKind().GroupVersionKind().GroupVersion())
		}
	}
}

func TestConvertRefusesNil(t *testing.T) {
	if _, err := Convert([]*unstructured.Unstructured{nil}, Options{}); err == nil {
		t.Fatal("a nil object converted without an error")
	}
	res, err := Convert(nil, Options{})
	if err != nil || len(res.Objects) != 0 || len(res.Findings) != 0 {
		t.Fatalf("an empty input gave %v, %v", res, err)
	}
}

// TestFindingsAreSorted: the findings of one input object come together.
func TestFindingsAreSorted(t *testing.T) {
	res, err := Convert(readInput(t, "backends.yaml", "products.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	last := ""
	for _, f := range res.Findings {
		if f.Object == last || f.Object == "" || strings.HasSuffix(f.Object, "/*") {
			last = f.Object
			continue
		}
		if seen[f.Object] {
			t.Errorf("the findings of %s are not together", f.Object)
		}
		seen[last] = true
		last = f.Object
	}
}

func TestObjectNames(t *testing.T) {
	for in, want := range map[string]string{"petstore|basic": "petstore-basic", "Pet.Store|Gold_Plan": "pet-store-gold-plan", "|": "x",
		"a|" + strings.Repeat("b", 300): "a-" + strings.Repeat("b", 242) + "-" + shortHash("a/"+strings.Repeat("b", 300))} {
		got := ObjectName(strings.Split(in, "|")...)
		if got != want {
			t.Errorf("ObjectName(%q) = %q, want %q", in, got, want)
		}
		if !validObjectName(got) {
			t.Errorf("ObjectName(%q) = %q is not an object name", in, got)
		}
	}
}

func hasFinding(got []Finding, want Finding) bool {
	for _, f := range got {
		if f.Object == want.Object && f.Namespace == want.Namespace && f.Field == want.Field && f.Severity == want.Severity &&
			strings.Contains(f.Message, want.Message) {
			return true
		}
	}
	return false
}

func findingsOf(findings []Finding, object string) string {
	var b strings.Builder
	for _, f := range findings {
		if f.Object == object {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	return b.String()
}

func kindOf(obj client.Object) string { return obj.GetObjectKind().GroupVersionKind().Kind }

// readInput reads YAML files of testdata, every document one object.
func readInput(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m != nil {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out
}

// newObject returns an empty apimsync object of kind.
func newObject(t *testing.T, kind string) client.Object {
	t.Helper()
	switch kind {
	case "Backend":
		return &v1alpha1.Backend{}
	case "Product":
		return &v1alpha1.Product{}
	case "ApplicationPlan":
		return &v1alpha1.ApplicationPlan{}
	case "DeveloperAccount":
		return &v1alpha1.DeveloperAccount{}
	case "Application":
		return &v1alpha1.Application{}
	case "ActiveDoc":
		return &v1alpha1.ActiveDoc{}
	case "CustomPolicyDefinition":
		return &v1alpha1.CustomPolicyDefinition{}
	case "OpenAPI":
		return &v1alpha1.OpenAPI{}
	case "Tenant":
		return &v1alpha1.Tenant{}
	case "TenantSettings":
		return &v1alpha1.TenantSettings{}
	}
	t.Fatalf("no apimsync kind %q", kind)
	return nil
}

// compareGolden compares the objects and findings with testdata/golden/<name>.yaml and .findings (or
// writes them with -update).
func compareGolden(t *testing.T, name string, res *Result) {
	t.Helper()
	objectsFile := filepath.Join("testdata", "golden", name+".yaml")
	findingsFile := filepath.Join("testdata", "golden", name+".findings")
	var docs []string
	for _, obj := range res.Objects {
		docs = append(docs, string(toYAML(t, obj)))
	}
	var lines []string
	for _, f := range res.Findings {
		lines = append(lines, f.String())
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(objectsFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(objectsFile, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(findingsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// The expected objects, read strictly into their types.
	raw, err := os.ReadFile(objectsFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []client.Object
	for _, doc := range strings.Split(string(raw), "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var tm struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		obj := newObject(t, tm.Kind)
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: %v", objectsFile, err)
		}
		want = append(want, obj)
	}
	if diff := cmp.Diff(want, res.Objects); diff != "" {
		t.Errorf("objects differ from %s (-want +got):\n%s", objectsFile, diff)
	}
	rawFindings, err := os.ReadFile(findingsFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(strings.TrimSuffix(string(rawFindings), "\n"), "\n"), lines); diff != "" {
		t.Errorf("findings differ from %s (-want +got):\n%s", findingsFile, diff)
	}
}

// toYAML writes an object as the conversion's user would: without status and empty metadata.
func toYAML(t *testing.T, obj client.Object) []byte {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	out, err := yaml.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
