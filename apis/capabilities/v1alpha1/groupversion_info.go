// Package v1alpha1 holds the API of apimsync: the Backend, Product and ApplicationPlan kinds of the
// capabilities.apimsync.io group, each a projection of one 3scale object.
// +kubebuilder:object:generate=true
// +groupName=capabilities.apimsync.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "capabilities.apimsync.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
