package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationPlanSpec is the desired state of a 3scale application plan: the terms (limits, prices,
// approval) under which applications use one product.
// +kubebuilder:validation:XValidation:rule="has(self.systemName) == has(oldSelf.systemName)",message="systemName cannot be added or removed after creation; it is fixed once the plan exists"
type ApplicationPlanSpec struct {
	// ProductRef is the name of the Product (in this namespace) the plan belongs to. Immutable: a plan never
	// changes product. The plan is synced to the product's 3scale tenant.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="productRef is immutable: a plan never changes product; create a new ApplicationPlan instead"
	ProductRef string `json:"productRef"`

	// Name is the plan's display name in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// SystemName is the plan's identifier within its product. Optional: when empty it is derived from
	// metadata.name (and shown in status.systemName). Immutable once set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="systemName is immutable; create a new ApplicationPlan to use another system name"
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// Published makes the plan visible to developers in the portal. Default: false (hidden).
	// +optional
	Published *bool `json:"published,omitempty"`

	// Default makes this plan its Product's default application plan: the one 3scale's signup of a
	// developer account contracts (an application named "API signup" on it) and the portal offers first.
	// At most one plan of a Product says it (a second one is Invalid). porta's API cannot unset a
	// default: with default removed, the plan stays the default in 3scale until another plan is made
	// default or a person unsets it in the admin portal (the Synced message says so). Default: false (not
	// managed).
	// +optional
	Default bool `json:"default,omitempty"`

	// AllowInDraft lets applications be made on this plan while its Product is in Draft (an internal
	// team testing it); the plan itself follows published even then. Default: false.
	// +optional
	AllowInDraft bool `json:"allowInDraft,omitempty"`

	// ApprovalRequired: applications on this plan wait for an administrator's approval. Default: false.
	// +optional
	ApprovalRequired *bool `json:"approvalRequired,omitempty"`

	// TrialPeriodDays is the number of free days before billing starts.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3650
	// +optional
	TrialPeriodDays *int32 `json:"trialPeriodDays,omitempty"`

	// SetupFee is charged once, in the tenant's currency, e.g. "10.00". Removing it sets 0 in 3scale.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,2})?$`
	// +optional
	SetupFee string `json:"setupFee,omitempty"`

	// CostMonth is the fixed monthly fee, e.g. "99.90". Removing it sets 0 in 3scale.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,2})?$`
	// +optional
	CostMonth string `json:"costMonth,omitempty"`

	// Limits cap the usage of metrics per period. At most one limit per metric and period.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.period == a.period && b.metricMethodRef.systemName == a.metricMethodRef.systemName && (has(b.metricMethodRef.backend) ? b.metricMethodRef.backend : '') == (has(a.metricMethodRef.backend) ? a.metricMethodRef.backend : '')))",message="two limits have the same period on the same metric; keep one"
	// +listType=atomic
	// +optional
	Limits []LimitSpec `json:"limits,omitempty"`

	// PricingRules price the usage of metrics by ranges of units per month. Ranges of one metric must not overlap.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	PricingRules []PricingRuleSpec `json:"pricingRules,omitempty"`

	// Features the plan enables, by system name: features of its Product's spec.features (of scope
	// ApplicationPlan). A feature removed from here is disabled on the plan; features enabled by hand
	// that apimsync never enabled are left alone.
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +optional
	Features []string `json:"features,omitempty"`

	// DeletionPolicy says what happens to the 3scale plan when this resource is deleted:
	// Delete (default) removes it, Retain leaves it. A plan always goes when its product is deleted from 3scale.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
	// Adoption says whether this plan may take over an existing plan of the product with its system name
	// that it did not create: IfExists (default; announced in an Event) or Never (Invalid instead).
	// +kubebuilder:default=IfExists
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`

	// Management: Full (the default) or Observe, which only reads the 3scale object and tells in
	// status.observation what a full sync would write (see CommonSpec.Management).
	// +optional
	Management ManagementPolicy `json:"management,omitempty"`
}

// LimitPeriod is the period a limit counts over.
// +kubebuilder:validation:Enum=eternity;year;month;week;day;hour;minute
type LimitPeriod string

// LimitSpec caps a metric's usage per period.
type LimitSpec struct {
	// Period the limit counts over.
	Period LimitPeriod `json:"period"`

	// Value is the maximum usage in one period; 0 blocks the metric.
	// +kubebuilder:validation:Minimum=0
	Value int64 `json:"value"`

	// MetricMethodRef names the metric or method limited.
	MetricMethodRef MetricMethodRef `json:"metricMethodRef"`
}

// PricingRuleSpec prices a range of units of a metric.
// +kubebuilder:validation:XValidation:rule="self.from <= self.to",message="a pricing rule's 'from' must not be greater than its 'to'"
type PricingRuleSpec struct {
	// From is the first unit of the range (1 for the first call of the month).
	// +kubebuilder:validation:Minimum=1
	From int64 `json:"from"`

	// To is the last unit of the range.
	// +kubebuilder:validation:Minimum=1
	To int64 `json:"to"`

	// PricePerUnit in the tenant's currency, e.g. "0.05".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,10}(\.[0-9]{1,4})?$`
	PricePerUnit string `json:"pricePerUnit"`

	// MetricMethodRef names the metric or method priced.
	MetricMethodRef MetricMethodRef `json:"metricMethodRef"`
}

// MetricMethodRef names a metric or method of the plan's product, or of one of the backends it uses.
type MetricMethodRef struct {
	// SystemName of the metric or method.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	SystemName string `json:"systemName"`

	// Backend is the name of a Backend object in this namespace when the metric is the backend's;
	// empty for the product's own metrics.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Backend string `json:"backend,omitempty"`
}

// ApplicationPlanStatus is the observed state of an ApplicationPlan.
type ApplicationPlanStatus struct {
	CommonStatus `json:",inline"`

	// PlanID is the id of the application plan in 3scale.
	// +optional
	PlanID int64 `json:"planID,omitempty"`

	// ProductID is the id of the 3scale product the plan belongs to.
	// +optional
	ProductID int64 `json:"productID,omitempty"`

	// FeatureIDs are the remote ids of the features of spec.features apimsync enabled on the plan, by
	// system name: one that leaves the spec is disabled only if it is here.
	// +optional
	FeatureIDs map[string]int64 `json:"featureIDs,omitempty"`
}

// ApplicationPlan is a 3scale application plan of one Product.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apiplan,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Product",type=string,JSONPath=`.spec.productRef`
// +kubebuilder:printcolumn:name="Plan ID",type=integer,JSONPath=`.status.planID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type ApplicationPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ApplicationPlanSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ApplicationPlanStatus `json:"status,omitempty"`
}

// ApplicationPlanList is a list of ApplicationPlans.
// +kubebuilder:object:root=true
type ApplicationPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationPlan `json:"items"`
}
