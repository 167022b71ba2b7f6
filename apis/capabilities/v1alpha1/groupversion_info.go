// Package v1alpha1 holds the API of apimsync: the Backend, Product and ApplicationPlan kinds of the
// capabilities.apimsync.io group, each a projection of one 3scale object.
// +kubebuilder:object:generate=true
// +groupName=capabilities.apimsync.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "capabilities.apimsync.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Backend{}, &BackendList{},
		&Product{}, &ProductList{},
		&ApplicationPlan{}, &ApplicationPlanList{},
		&AccountPlan{}, &AccountPlanList{},
		&FieldDefinition{}, &FieldDefinitionList{},
		&TenantSettings{}, &TenantSettingsList{},
		&AdminUser{}, &AdminUserList{},
		&ServicePlan{}, &ServicePlanList{},
		&DeveloperAccount{}, &DeveloperAccountList{},
		&Application{}, &ApplicationList{},
		&ActiveDoc{}, &ActiveDocList{},
		&DeveloperPortal{}, &DeveloperPortalList{},
		&CustomPolicyDefinition{}, &CustomPolicyDefinitionList{},
		&OpenAPI{}, &OpenAPIList{},
		&Tenant{}, &TenantList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
