package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

func petsBackend(ns string) *v1alpha1.Backend {
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

func petstoreProduct(ns string, backends ...string) *v1alpha1.Product {
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

func basicPlan(ns, name, product string) *v1alpha1.ApplicationPlan {
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
