package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AccountPlanSpec is the desired state of one of a tenant's account plans: the terms its developer
// accounts sign up under (whether they wait for approval), offered in the developer portal when
// published. porta's API writes an account plan's name, state and approval only
// (AccountPlansController, account_plans_controller.rb:53-61): its fees and trial are the admin portal's.
type AccountPlanSpec struct {
	// Name is the plan's display name in 3scale. porta shows an account plan without its system name
	// (PlanRepresenter), so an AccountPlan holds its plan by the id it records; before it has one (its
	// first sync), it adopts the tenant's plan of this name, and says so, or makes one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Published offers the plan to developers in the portal's signup. Default: false (hidden).
	// +optional
	Published *bool `json:"published,omitempty"`

	// ApprovalRequired: accounts signed up on this plan wait for an administrator's approval (porta makes
	// the tenant's "account approval required" setting the default account plan's). Unset: not managed.
	// +optional
	ApprovalRequired *bool `json:"approvalRequired,omitempty"`

	// Default makes this plan the tenant's default account plan: the one a signup without a plan
	// contracts. At most one AccountPlan of a tenant says it (a second one is Invalid). porta's API cannot
	// unset a default: with default removed, the plan stays the default in 3scale until another plan is
	// made default (the Synced message says so). Default: false (not managed).
	// +optional
	Default bool `json:"default,omitempty"`

	// Features the plan enables: the tenant's account features (porta's features of scope AccountPlan),
	// by system name, each declared with its name and description. A feature no account plan has yet is
	// made; one that exists with this system name is taken and updated. Several AccountPlans of a tenant
	// may declare one feature, alike (a different name or description is Invalid in the younger). A
	// feature removed from here is disabled on the plan, and deleted in 3scale once no AccountPlan of the
	// tenant declares it; features enabled by hand that apimsync never enabled are left alone.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_/-]+$') && size(k) <= 255)",message="feature system names are 2 to 255 letters, digits, '_', '-' or '/', not starting with '-' or '/'"
	// +optional
	Features map[string]AccountFeatureSpec `json:"features,omitempty"`

	CommonSpec `json:",inline"`
}

// AccountFeatureSpec is one of the tenant's account features.
type AccountFeatureSpec struct {
	// Name is the feature's name in the developer portal.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`
	// Description of the feature.
	// +optional
	Description string `json:"description,omitempty"`
}

// AccountPlanStatus is the observed state of an AccountPlan.
type AccountPlanStatus struct {
	CommonStatus `json:",inline"`

	// AccountPlanID is the id of the account plan in 3scale.
	// +optional
	AccountPlanID int64 `json:"accountPlanID,omitempty"`

	// FeatureIDs are the remote ids of the account features of spec.features apimsync enabled on the
	// plan, by system name: one that leaves the spec is disabled (or deleted) only if it is here.
	// +optional
	FeatureIDs map[string]int64 `json:"featureIDs,omitempty"`
}

// AccountPlan is one of a tenant's account plans.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=accplan,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Default",type=boolean,JSONPath=`.spec.default`
// +kubebuilder:printcolumn:name="Plan ID",type=integer,JSONPath=`.status.accountPlanID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type AccountPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AccountPlanSpec `json:"spec"`

	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status AccountPlanStatus `json:"status,omitempty"`
}

// AccountPlanList is a list of AccountPlans.
// +kubebuilder:object:root=true
type AccountPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccountPlan `json:"items"`
}
