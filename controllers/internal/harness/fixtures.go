package harness

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// PetsBackend is a Backend "pets" with a metric, two methods and three mapping rules.
func PetsBackend(ns string) *v1alpha1.Backend {
	return &v1alpha1.Backend{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pets"},
		Spec: v1alpha1.BackendSpec{
			Name: "Pets", PrivateBaseURL: "https://pets.internal:8443",
			Metrics: map[string]v1alpha1.MetricSpec{"photos_mb": {FriendlyName: "Photos", Unit: "MB"}},
			Methods: map[string]v1alpha1.MethodSpec{"list_pets": {FriendlyName: "List pets"}, "get_pet": {FriendlyName: "Get pet"}},
			MappingRules: []v1alpha1.MappingRuleSpec{
				{HTTPMethod: "GET", Pattern: "/pets$", MetricMethodRef: "list_pets", Increment: 1},
				{HTTPMethod: "GET", Pattern: "/pets/{id}$", MetricMethodRef: "get_pet", Increment: 1},
				{HTTPMethod: "GET", Pattern: "/pets/{id}/photo", MetricMethodRef: "photos_mb", Increment: 2},
			},
		},
	}
}

// PetstoreProduct is a Product "petstore" (user key, self-managed APIcast, a method "search") using
// the backends named, the first at "/" and the others at "/<name>".
func PetstoreProduct(ns string, backends ...string) *v1alpha1.Product {
	usages := map[string]v1alpha1.BackendUsageSpec{}
	for i, b := range backends {
		path := "/"
		if i > 0 {
			path = "/" + b
		}
		usages[b] = v1alpha1.BackendUsageSpec{Path: path}
	}
	return &v1alpha1.Product{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "petstore"},
		Spec: v1alpha1.ProductSpec{
			Name:       "Petstore",
			Deployment: &v1alpha1.DeploymentSpec{ApicastSelfManaged: &v1alpha1.ApicastSelfManagedSpec{ProductionPublicBaseURL: "https://api.example.com", StagingPublicBaseURL: "https://staging.example.com"}},
			Authentication: &v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{AuthUserKey: "X-API-Key",
				GatewayOptions: v1alpha1.GatewayOptions{CredentialsLocation: "headers"}}},
			Methods:       map[string]v1alpha1.MethodSpec{"search": {FriendlyName: "Search"}},
			MappingRules:  []v1alpha1.MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/search", MetricMethodRef: "search", Increment: 1}},
			BackendUsages: usages,
		},
	}
}

// OrdersProduct is a product whose applications are identified by app id and keys.
func OrdersProduct(ns string) *v1alpha1.Product {
	p := PetstoreProduct(ns, "pets")
	p.Name, p.Spec.Name = "orders", "Orders"
	p.Spec.Authentication = &v1alpha1.AuthenticationSpec{AppKeyAppID: &v1alpha1.AppKeyAppIDAuthSpec{}}
	return p
}

// BasicPlan is a published ApplicationPlan of product with limits and pricing rules on the product's
// and the pets backend's metrics.
func BasicPlan(ns, name, product string) *v1alpha1.ApplicationPlan {
	published := true
	return &v1alpha1.ApplicationPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ApplicationPlanSpec{
			ProductRef: product, Name: name, Published: &published,
			Limits: []v1alpha1.LimitSpec{
				{Period: "minute", Value: 10, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "search"}},
				{Period: "day", Value: 1000, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits", Backend: "pets"}},
			},
			PricingRules: []v1alpha1.PricingRuleSpec{
				{From: 1, To: 100, PricePerUnit: "0.10", MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "list_pets", Backend: "pets"}},
				{From: 101, To: 1000, PricePerUnit: "0.05", MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "list_pets", Backend: "pets"}},
			},
		},
	}
}

// DevAccount is a DeveloperAccount with an admin and a member, and the Secret of their passwords.
func DevAccount(ns, name string) (*v1alpha1.DeveloperAccount, *corev1.Secret) {
	pw := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-passwords"},
		StringData: map[string]string{"alice": "s3cret-alice-long-enough", "bob": "s3cret-bob-long-enough"}}
	return &v1alpha1.DeveloperAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.DeveloperAccountSpec{OrgName: "Org " + name, Users: []v1alpha1.DeveloperUserSpec{
			{Username: name + "-alice", Email: name + "-alice@example.com", Role: "admin", PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: pw.Name, Key: "alice"}},
			{Username: name + "-bob", Email: name + "-bob@example.com", Role: "member", PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: pw.Name, Key: "bob"}},
		}},
	}, pw
}

// Application is an Application of account on plan.
func Application(ns, name, account, plan string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ApplicationSpec{AccountRef: account, PlanRef: plan, Name: name, Description: "app " + name}}
}

// WithCredentials sets an Application's spec.credentialsRef.
func WithCredentials(a *v1alpha1.Application, secret string) *v1alpha1.Application {
	a.Spec.CredentialsRef = &v1alpha1.ProviderAccountRef{Name: secret}
	return a
}
