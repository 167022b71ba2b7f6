package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackendSpec is the desired state of a 3scale backend API: where the upstream service lives and what
// its traffic is counted as.
// +kubebuilder:validation:XValidation:rule="has(self.systemName) == has(oldSelf.systemName)",message="systemName cannot be added or removed after creation; it is fixed once the backend exists"
// +kubebuilder:validation:XValidation:rule="!has(self.methods) || !has(self.metrics) || self.methods.all(m, !(m in self.metrics))",message="a system name is used both as a metric and as a method; metrics and methods share one namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.mappingRules) || self.mappingRules.all(r, r.metricMethodRef == 'hits' || (has(self.metrics) && r.metricMethodRef in self.metrics) || (has(self.methods) && r.metricMethodRef in self.methods))",message="every mappingRules[].metricMethodRef must be 'hits' or a key of metrics or methods"
type BackendSpec struct {
	// Name is the backend's display name in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// SystemName is the backend's unique identifier in the tenant. Optional: when empty it is derived from
	// metadata.name (and shown in status.systemName). Immutable once set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="systemName is immutable; create a new Backend to use another system name"
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// Description of the backend.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`

	// PrivateBaseURL is the upstream API's address, as the gateway reaches it: http, https, ws or wss,
	// e.g. "https://echo-api.internal:443".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https', 'ws', 'wss'] && url(self).getHostname() != ''",message="privateBaseURL must be an absolute http, https, ws or wss URL with a host, e.g. https://api.internal:8443"
	PrivateBaseURL string `json:"privateBaseURL"`

	// Metrics of the backend, by system name. The `hits` metric always exists; list it here only to set its
	// friendly name or description.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_-]*$') && size(k) <= 255)",message="metric system names may contain only letters, digits, '_' and '-', and must not start with '-'"
	// +optional
	Metrics map[string]MetricSpec `json:"metrics,omitempty"`

	// Methods of the backend (counted under `hits`), by system name.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_-]*$') && size(k) <= 255 && k != 'hits')",message="method system names may contain only letters, digits, '_' and '-', must not start with '-', and 'hits' is reserved for the metric"
	// +optional
	Methods map[string]MethodSpec `json:"methods,omitempty"`

	// MappingRules map requests to metrics or methods. A request may be counted by several rules of the same
	// (httpMethod, pattern), as 3scale allows, each for another metric or method: each (httpMethod, pattern,
	// metricMethodRef) appears once.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=httpMethod
	// +listMapKey=pattern
	// +listMapKey=metricMethodRef
	// +optional
	MappingRules []MappingRuleSpec `json:"mappingRules,omitempty"`

	CommonSpec `json:",inline"`
}

// BackendStatus is the observed state of a Backend.
type BackendStatus struct {
	CommonStatus `json:",inline"`

	// BackendID is the id of the backend API in 3scale.
	// +optional
	BackendID int64 `json:"backendID,omitempty"`

	// GatewayRevision counts the syncs that wrote something the gateway configuration of a product using
	// this backend is built from (its private endpoint, metrics, methods, mapping rules), drift repairs
	// included: each new value deploys every Product that uses the backend once.
	// +optional
	GatewayRevision int64 `json:"gatewayRevision,omitempty"`
}

// Backend is a 3scale backend API: an upstream service that Products route traffic to.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apibe,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="System name",type=string,JSONPath=`.status.systemName`
// +kubebuilder:printcolumn:name="Backend ID",type=integer,JSONPath=`.status.backendID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type Backend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec BackendSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status BackendStatus `json:"status,omitempty"`
}

// BackendList is a list of Backends.
// +kubebuilder:object:root=true
type BackendList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backend `json:"items"`
}
