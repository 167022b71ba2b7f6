package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServicePlanSpec is the desired state of one of a Product's service plans: the terms a developer
// account subscribes to the product under (whether its subscription waits for approval), offered in the
// developer portal when published. porta's API writes a service plan's name, state and approval only
// (ServicePlansController, service_plans_controller.rb:56-64): its fees are the admin portal's.
type ServicePlanSpec struct {
	// ProductRef is the name of the Product (in this namespace) the plan belongs to. Immutable: a plan
	// never changes product. The plan is synced to the product's 3scale tenant.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="productRef is immutable: a plan never changes product; create a new ServicePlan instead"
	ProductRef string `json:"productRef"`

	// Name is the plan's display name in 3scale. porta shows a service plan without its system name
	// (PlanRepresenter), so a ServicePlan holds its plan by the id it records; before it has one (its
	// first sync), it adopts the product's plan of this name, and says so, or makes one. Every product
	// has a service plan named "Default" that porta made with it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Published offers the plan to developers in the portal. Default: false (hidden).
	// +optional
	Published *bool `json:"published,omitempty"`

	// ApprovalRequired: subscriptions to this plan wait for an administrator's approval. Unset: not
	// managed.
	// +optional
	ApprovalRequired *bool `json:"approvalRequired,omitempty"`

	// Default makes this plan its Product's default service plan: the one a signup subscribes accounts
	// to. At most one plan of a Product says it (a second one is Invalid). porta's API cannot unset a
	// default: with default removed, the plan stays the default in 3scale (the Synced message says so).
	// Default: false (not managed).
	// +optional
	Default bool `json:"default,omitempty"`

	// Features the plan enables, by system name: features of its Product's spec.features of scope
	// ServicePlan (a feature of scope ApplicationPlan is Invalid here). A feature removed from here is
	// disabled on the plan; features enabled by hand that apimsync never enabled are left alone.
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +optional
	Features []string `json:"features,omitempty"`

	// DeletionPolicy says what happens to the 3scale plan when this resource is deleted: Delete (default)
	// removes it, Retain leaves it. A plan always goes when its product is deleted from 3scale.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Adoption says whether this plan may take over an existing plan of the product with its name that it
	// did not create: IfExists (default; announced in an Event) or Never (Invalid instead).
	// +kubebuilder:default=IfExists
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`

	// Management: Full (the default) or Observe, which only reads the 3scale object and tells in
	// status.observation what a full sync would write (see CommonSpec.Management).
	// +optional
	Management ManagementPolicy `json:"management,omitempty"`
}

// ServicePlanStatus is the observed state of a ServicePlan.
type ServicePlanStatus struct {
	CommonStatus `json:",inline"`

	// ServicePlanID is the id of the service plan in 3scale.
	// +optional
	ServicePlanID int64 `json:"servicePlanID,omitempty"`

	// ProductID is the id of the plan's product in 3scale.
	// +optional
	ProductID int64 `json:"productID,omitempty"`

	// FeatureIDs are the remote ids of the features of spec.features apimsync enabled on the plan, by
	// system name: one that leaves the spec is disabled only if it is here.
	// +optional
	FeatureIDs map[string]int64 `json:"featureIDs,omitempty"`
}

// ServicePlan is one of a Product's service plans.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=svcplan,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Product",type=string,JSONPath=`.spec.productRef`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Default",type=boolean,JSONPath=`.spec.default`
// +kubebuilder:printcolumn:name="Plan ID",type=integer,JSONPath=`.status.servicePlanID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type ServicePlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ServicePlanSpec `json:"spec"`

	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ServicePlanStatus `json:"status,omitempty"`
}

// ServicePlanList is a list of ServicePlans.
// +kubebuilder:object:root=true
type ServicePlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServicePlan `json:"items"`
}
