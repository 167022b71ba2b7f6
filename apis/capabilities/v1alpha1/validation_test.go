package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/test/testenv"
)

// These tests run the CRDs' OpenAPI and CEL validation on a real kube-apiserver.
var (
	k8s     client.Client
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(env *testenv.Env) { k8s, restCfg = env.Client, env.Config }))
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "validation-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func validBackend() *Backend {
	return &Backend{
		ObjectMeta: metav1.ObjectMeta{Name: "pets"},
		Spec: BackendSpec{
			Name: "Pets", PrivateBaseURL: "https://pets.internal:8443",
			Metrics:      map[string]MetricSpec{"photos": {FriendlyName: "Photos", Unit: "MB"}},
			Methods:      map[string]MethodSpec{"list": {FriendlyName: "List"}},
			MappingRules: []MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/pets", MetricMethodRef: "list"}},
		},
	}
}

func validProduct() *Product {
	return &Product{
		ObjectMeta: metav1.ObjectMeta{Name: "petstore"},
		Spec: ProductSpec{
			Name:           "Petstore",
			Deployment:     &DeploymentSpec{ApicastHosted: &ApicastHostedSpec{}},
			Authentication: &AuthenticationSpec{UserKey: &UserKeyAuthSpec{}},
			BackendUsages:  map[string]BackendUsageSpec{"pets": {Path: "/"}},
		},
	}
}

func validPlan() *ApplicationPlan {
	return &ApplicationPlan{
		ObjectMeta: metav1.ObjectMeta{Name: "basic"},
		Spec: ApplicationPlanSpec{
			ProductRef: "petstore", Name: "Basic",
			Limits:       []LimitSpec{{Period: "day", Value: 10, MetricMethodRef: MetricMethodRef{SystemName: "hits"}}},
			PricingRules: []PricingRuleSpec{{From: 1, To: 10, PricePerUnit: "0.5", MetricMethodRef: MetricMethodRef{SystemName: "hits"}}},
		},
	}
}

// TestInvalidObjectsAreRejected creates objects the schema must refuse, each with a message a person
// understands.
func TestInvalidObjectsAreRejected(t *testing.T) {
	ns := namespace(t)
	many := func(n int) []MappingRuleSpec {
		out := make([]MappingRuleSpec, n)
		for i := range out {
			out[i] = MappingRuleSpec{HTTPMethod: "GET", Pattern: fmt.Sprintf("/r%d", i), MetricMethodRef: "hits"}
		}
		return out
	}
	cases := map[string]rejection{
		"backend: ftp privateBaseURL": {obj: with(validBackend(), func(b *Backend) { b.Spec.PrivateBaseURL = "ftp://pets" }),
			want: "privateBaseURL must be an absolute http, https, ws or wss URL"},
		"backend: no name": {obj: with(validBackend(), func(b *Backend) { b.Spec.Name = "" }), want: "spec.name"},
		"product: Pinned without a version": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Production = &ProductionSpec{Promote: PromotePinned}
		}), want: "version is set with promote: Pinned, and only then"},
		"product: a version with Latest": {obj: with(validProduct(), func(p *Product) {
			v := 3
			p.Spec.Production = &ProductionSpec{Promote: PromoteLatest, Version: &v}
		}), want: "version is set with promote: Pinned, and only then"},
		"product: unknown promote": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Production = &ProductionSpec{Promote: "Always"}
		}), want: "Unsupported value: \"Always\""},
		"backend: bad systemName characters": {obj: with(validBackend(), func(b *Backend) { b.Spec.SystemName = "pets api!" }),
			want: "spec.systemName"},
		"backend: rule pattern without slash": {obj: with(validBackend(), func(b *Backend) { b.Spec.MappingRules[0].Pattern = "pets" }),
			want: "a mapping rule pattern must start with '/'"},
		"backend: unknown httpMethod": {obj: with(validBackend(), func(b *Backend) { b.Spec.MappingRules[0].HTTPMethod = "FETCH" }),
			want: "Unsupported value: \"FETCH\""},
		"backend: increment 0": {obj: with(validBackend(), func(b *Backend) { b.Spec.MappingRules[0].Increment = -1 }),
			want: "should be greater than or equal to 1"},
		"backend: duplicate mapping rule": {obj: with(validBackend(), func(b *Backend) {
			b.Spec.MappingRules = append(b.Spec.MappingRules, b.Spec.MappingRules[0])
		}), want: "Duplicate value"},
		"backend: rule names an unknown metric": {obj: with(validBackend(), func(b *Backend) { b.Spec.MappingRules[0].MetricMethodRef = "nope" }),
			want: "must be 'hits' or a key of metrics or methods"},
		"backend: metric and method share a name": {obj: with(validBackend(), func(b *Backend) {
			b.Spec.Methods["photos"] = MethodSpec{FriendlyName: "x"}
		}), want: "metrics and methods share one namespace"},
		"backend: method named hits": {obj: with(validBackend(), func(b *Backend) { b.Spec.Methods["hits"] = MethodSpec{FriendlyName: "x"} }),
			want: "'hits' is reserved for the metric"},
		"backend: metric without unit": {obj: with(validBackend(), func(b *Backend) { b.Spec.Metrics["photos"] = MetricSpec{FriendlyName: "x"} }),
			want: "spec.metrics.photos.unit"},
		"backend: bad deletionPolicy": {obj: with(validBackend(), func(b *Backend) { b.Spec.DeletionPolicy = "Orphan" }),
			want: "Unsupported value: \"Orphan\""},
		"backend: too many mapping rules": {obj: with(validBackend(), func(b *Backend) { b.Spec.MappingRules = many(101) }),
			want: "must have at most 100 items"},
		"product: two deployment options": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Deployment.ApicastSelfManaged = &ApicastSelfManagedSpec{}
		}), want: "choose exactly one deployment option"},
		"product: no deployment option": {obj: with(validProduct(), func(p *Product) { p.Spec.Deployment.ApicastHosted = nil }),
			want: "choose exactly one deployment option"},
		"product: two authentication modes": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Authentication.AppKeyAppID = &AppKeyAppIDAuthSpec{}
		}), want: "choose exactly one authentication mode"},
		"product: no authentication mode": {obj: with(validProduct(), func(p *Product) { p.Spec.Authentication.UserKey = nil }),
			want: "choose exactly one authentication mode"},
		"product: oidc issuer given twice": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Authentication = &AuthenticationSpec{OIDC: &OIDCAuthSpec{IssuerType: "keycloak", IssuerEndpoint: "https://sso",
				IssuerEndpointRef: &LocalSecretKeyRef{Name: "s", Key: "k"}}}
		}), want: "give the OIDC issuer endpoint exactly once"},
		"product: oidc unknown issuer type": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Authentication = &AuthenticationSpec{OIDC: &OIDCAuthSpec{IssuerType: "okta", IssuerEndpoint: "https://sso"}}
		}), want: "Unsupported value: \"okta\""},
		"product: unknown credentials location": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Authentication.UserKey.CredentialsLocation = "cookie"
		}), want: "Unsupported value: \"cookie\""},
		"product: self-managed URL not http": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Deployment = &DeploymentSpec{ApicastSelfManaged: &ApicastSelfManagedSpec{ProductionPublicBaseURL: "api.example.com"}}
		}), want: "productionPublicBaseURL must be an absolute http or https URL"},
		"product: backendUsages key not a DNS name": {obj: with(validProduct(), func(p *Product) {
			p.Spec.BackendUsages = map[string]BackendUsageSpec{"Pets_API": {Path: "/"}}
		}), want: "backendUsages keys must be names of Backend objects"},
		"product: backend usage path without slash": {obj: with(validProduct(), func(p *Product) {
			p.Spec.BackendUsages = map[string]BackendUsageSpec{"pets": {Path: "v1"}}
		}), want: "a backend usage path must start with '/'"},
		"product: policy with configuration and configurationRef": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Policies = []PolicySpec{{Name: "cors", Version: "builtin", Configuration: jsonObj(`{}`), ConfigurationRef: &LocalSecretKeyRef{Name: "s", Key: "k"}}}
		}), want: "not both"},
		"product: gateway error status out of range": {obj: with(validProduct(), func(p *Product) {
			p.Spec.Authentication.UserKey.GatewayResponse = &GatewayResponseSpec{AuthFailed: &GatewayErrorResponse{Status: 999}}
		}), want: "should be less than or equal to 599"},
		"plan: limit with an unknown period": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.Limits[0].Period = "fortnight" }),
			want: "Unsupported value: \"fortnight\""},
		"plan: two limits with the same period and metric": {obj: with(validPlan(), func(a *ApplicationPlan) {
			a.Spec.Limits = append(a.Spec.Limits, LimitSpec{Period: "day", Value: 5, MetricMethodRef: MetricMethodRef{SystemName: "hits"}})
		}), want: "two limits have the same period on the same metric"},
		"plan: pricing from greater than to": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.PricingRules[0].From = 20 }),
			want: "'from' must not be greater than its 'to'"},
		"plan: bad price format": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.PricingRules[0].PricePerUnit = "1,5" }),
			want: "spec.pricingRules[0].pricePerUnit"},
		"plan: bad setup fee": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.SetupFee = "ten" }), want: "spec.setupFee"},
		"plan: negative limit": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.Limits[0].Value = -1 }),
			want: "should be greater than or equal to 0"},
		"plan: no productRef": {obj: with(validPlan(), func(a *ApplicationPlan) { a.Spec.ProductRef = "" }), want: "spec.productRef"},
	}
	checkRejected(t, ns, cases)
}

// rejection is an object the schema must refuse, and what the refusal must say.
type rejection struct {
	obj  client.Object
	want string
}

// checkRejected creates each object in ns and expects a refusal mentioning its want.
func checkRejected(t *testing.T, ns string, cases map[string]rejection) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.obj.SetNamespace(ns)
			err := k8s.Create(context.Background(), tc.obj)
			if err == nil {
				t.Fatalf("accepted; want a rejection mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("rejected with %q; want it to mention %q", err, tc.want)
			}
		})
	}
}

// refusedChange is an update the CEL transition rules must refuse, and what the refusal must say.
type refusedChange struct {
	obj    client.Object
	change func()
	want   string
}

// checkUpdatesRefused applies each change to a fresh copy of its object and expects the update refused.
func checkUpdatesRefused(t *testing.T, cases map[string]refusedChange) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tc.obj), tc.obj); err != nil {
				t.Fatal(err)
			}
			tc.change()
			err := k8s.Update(context.Background(), tc.obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("update error = %v; want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestImmutableFields checks the CEL transition rules: systemName and productRef never change, and
// systemName can be neither added nor removed after creation.
func TestImmutableFields(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	named := validBackend()
	named.Namespace, named.Name, named.Spec.SystemName = ns, "named", "pets_v1"
	unnamed := validBackend()
	unnamed.Namespace, unnamed.Name = ns, "unnamed"
	plan := validPlan()
	plan.Namespace = ns
	tenant := &Tenant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"}, Spec: TenantSpec{MasterAccountRef: ProviderAccountRef{Name: "master"},
		OrganizationName: "Team A", Username: "admin", Email: "admin@team-a.example", PasswordRef: LocalSecretKeyRef{Name: "pw", Key: "password"},
		ProviderAccountSecret: TenantSecretRef{Namespace: "team-a"}}}
	for _, o := range []client.Object{named, unnamed, plan, tenant} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]refusedChange{
		"changing systemName":     {obj: named, change: func() { named.Spec.SystemName = "pets_v2" }, want: "systemName is immutable"},
		"removing systemName":     {obj: named, change: func() { named.Spec.SystemName = "" }, want: "systemName cannot be added or removed"},
		"adding systemName later": {obj: unnamed, change: func() { unnamed.Spec.SystemName = "late" }, want: "systemName cannot be added or removed"},
		"changing productRef":     {obj: plan, change: func() { plan.Spec.ProductRef = "other" }, want: "productRef is immutable"},
		"moving a tenant's Secret": {obj: tenant, change: func() { tenant.Spec.ProviderAccountSecret.Namespace = "team-b" },
			want: "providerAccountSecret is immutable"},
	}
	checkUpdatesRefused(t, cases)
	// Other fields stay editable.
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(named), named); err != nil {
		t.Fatal(err)
	}
	named.Spec.Description = "edited"
	if err := k8s.Update(ctx, named); err != nil {
		t.Errorf("a description edit was refused: %v", err)
	}
}

// TestDefaults checks the schema's defaults.
func TestDefaults(t *testing.T) {
	b := validBackend()
	b.Namespace = namespace(t)
	b.Spec.MappingRules[0].Increment = 0
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if b.Spec.DeletionPolicy != DeletionPolicyDelete || b.Spec.MappingRules[0].Increment != 1 {
		t.Errorf("defaults: deletionPolicy %q, increment %d; want Delete and 1", b.Spec.DeletionPolicy, b.Spec.MappingRules[0].Increment)
	}
}

// TestNewObjectsAreNotYetObserved: before the controller writes anything, a new object of every kind reads
// as not yet observed (status.observedGeneration 0, a CRD default), so that kstatus (Flux, kubectl
// wait --for=jsonpath, cli-utils) sees it InProgress rather than Current. The engine may leave a new
// object's status unwritten for a while (a quiet wait on a dependency being synced).
func TestNewObjectsAreNotYetObserved(t *testing.T) {
	ns := namespace(t)
	account := &DeveloperAccount{ObjectMeta: metav1.ObjectMeta{Name: "acme"}, Spec: DeveloperAccountSpec{OrgName: "Acme",
		Users: []DeveloperUserSpec{{Username: "alice", Email: "alice@example.com", Role: "admin"}}}}
	app := &Application{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Spec: ApplicationSpec{AccountRef: "acme", PlanRef: "basic", Name: "App"}}
	doc := &ActiveDoc{ObjectMeta: metav1.ObjectMeta{Name: "doc"}, Spec: ActiveDocSpec{Name: "Doc",
		DocumentRef: &DocumentRef{SecretKeyRef: &LocalSecretKeyRef{Name: "doc", Key: "openapi.json"}}}}
	for _, obj := range []client.Object{validBackend(), validProduct(), validPlan(), account, app, doc} {
		obj.SetNamespace(ns)
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		u.SetGroupVersionKind(GroupVersion.WithKind(fmt.Sprintf("%T", obj)[len("*v1alpha1."):]))
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), &u); err != nil {
			t.Fatal(err)
		}
		res, err := status.Compute(&u)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != status.InProgressStatus {
			t.Errorf("%s: kstatus %s (%s), want InProgress; status %v", u.GetKind(), res.Status, res.Message, u.Object["status"])
		}
	}
}

// TestSamplesAreAccepted applies every object of samples/ (rendered with kustomize) with a server-side
// dry run, then for real, then a dry-run update.
func TestSamplesAreAccepted(t *testing.T) {
	objs, err := testenv.Render("samples")
	if err != nil {
		t.Fatal(err)
	}
	tenants, err := testenv.Render("samples/tenants")
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, tenants...)
	ns := namespace(t)
	kinds := map[string]int{}
	for _, u := range objs {
		u.SetNamespace(ns)
		if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
			continue
		}
		if err := k8s.Create(context.Background(), u); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
			continue
		}
		if err := k8s.Update(context.Background(), u, client.DryRunAll); err != nil {
			t.Errorf("%s %s update: %v", u.GetKind(), u.GetName(), err)
		}
		kinds[u.GetKind()]++
	}
	want := map[string]int{"Secret": 5, "ConfigMap": 5, "Backend": 2, "Product": 3, "ApplicationPlan": 5, "DeveloperAccount": 1, "AdminUser": 1, "TenantSettings": 1,
		"Application": 3, "ActiveDoc": 1, "CustomPolicyDefinition": 1, "OpenAPI": 1, "Tenant": 1, "DeveloperPortal": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("samples have %d %s, want %d", kinds[k], k, n)
		}
	}
}

func with[T any](obj T, f func(T)) T { f(obj); return obj }

// TestLifecycleMoves: each allowed move of Product.spec.lifecycle is accepted and each other one refused
// by the API server, with the rule's message; nothing leaves Retired.
func TestLifecycleMoves(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	stages := []ProductLifecycle{LifecycleDraft, LifecyclePublished, LifecycleDeprecated, LifecycleRetired}
	allowed := map[[2]ProductLifecycle]bool{
		{LifecycleDraft, LifecyclePublished}: true, {LifecycleDraft, LifecycleRetired}: true,
		{LifecyclePublished, LifecycleDeprecated}: true,
		{LifecycleDeprecated, LifecyclePublished}: true, {LifecycleDeprecated, LifecycleRetired}: true,
	}
	n := 0
	for _, from := range stages {
		for _, to := range stages {
			if from == to {
				continue
			}
			n++
			p := validProduct()
			p.Name, p.Namespace, p.Spec.Lifecycle = fmt.Sprintf("move-%d", n), ns, from
			if err := k8s.Create(ctx, p); err != nil {
				t.Fatalf("create a %s product: %v", from, err)
			}
			p.Spec.Lifecycle = to
			err := k8s.Update(ctx, p)
			switch {
			case allowed[[2]ProductLifecycle{from, to}] && err != nil:
				t.Errorf("%s → %s refused: %v", from, to, err)
			case !allowed[[2]ProductLifecycle{from, to}] && err == nil:
				t.Errorf("%s → %s accepted, want refused", from, to)
			case !allowed[[2]ProductLifecycle{from, to}] && from == LifecycleRetired && !strings.Contains(err.Error(), "stays Retired"):
				t.Errorf("%s → %s: %v, want the Retired message", from, to, err)
			case !allowed[[2]ProductLifecycle{from, to}] && from != LifecycleRetired && !strings.Contains(err.Error(), "lifecycle moves are"):
				t.Errorf("%s → %s: %v, want the moves message", from, to, err)
			}
		}
	}
	p := validProduct()
	p.Name, p.Namespace = "default-lifecycle", ns
	if err := k8s.Create(ctx, p); err != nil || p.Spec.Lifecycle != LifecyclePublished {
		t.Errorf("default lifecycle %q, %v; want Published", p.Spec.Lifecycle, err)
	}
}
