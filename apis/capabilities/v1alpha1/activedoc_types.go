package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ActiveDocSpec is the desired state of a 3scale ActiveDocs spec: an OpenAPI document shown in the
// developer portal, optionally bound to a product.
// +kubebuilder:validation:XValidation:rule="has(self.systemName) == has(oldSelf.systemName)",message="systemName cannot be added or removed after creation"
// +kubebuilder:validation:XValidation:rule="[has(self.document), has(self.documentRef)].filter(x, x).size() == 1",message="set exactly one of document and documentRef"
type ActiveDocSpec struct {
	// Name is the spec's display name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// SystemName identifies the spec in the tenant. Optional: derived from metadata.name when empty.
	// Immutable once set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="systemName is immutable; create a new ActiveDoc to use another system name"
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// Description of the spec.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Description string `json:"description,omitempty"`

	// Published shows the spec in the developer portal. Default: false.
	// +optional
	Published bool `json:"published,omitempty"`

	// SkipSwaggerValidations turns off 3scale's validation of the document.
	// +optional
	SkipSwaggerValidations bool `json:"skipSwaggerValidations,omitempty"`

	// ProductRef binds the spec to a Product of this namespace, which must be on the same tenant.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ProductRef string `json:"productRef,omitempty"`

	// Document is the OpenAPI document inline, JSON or YAML (at most 1 MiB).
	// +kubebuilder:validation:MaxLength=1048576
	// +optional
	Document string `json:"document,omitempty"`

	// DocumentRef reads the OpenAPI document from a ConfigMap or a Secret key of this namespace (watched:
	// an edit re-syncs).
	// +optional
	DocumentRef *DocumentRef `json:"documentRef,omitempty"`

	CommonSpec `json:",inline"`
}

// DocumentRef selects one key of a ConfigMap or of a Secret.
// +kubebuilder:validation:XValidation:rule="[has(self.configMapKeyRef), has(self.secretKeyRef)].filter(x, x).size() == 1",message="set exactly one of configMapKeyRef and secretKeyRef"
type DocumentRef struct {
	// ConfigMapKeyRef selects a key of a ConfigMap.
	// +optional
	ConfigMapKeyRef *LocalSecretKeyRef `json:"configMapKeyRef,omitempty"`
	// SecretKeyRef selects a key of a Secret.
	// +optional
	SecretKeyRef *LocalSecretKeyRef `json:"secretKeyRef,omitempty"`
}

// ActiveDocStatus is the observed state of an ActiveDoc.
type ActiveDocStatus struct {
	CommonStatus `json:",inline"`

	// ActiveDocID is the id of the ActiveDocs spec in 3scale.
	// +optional
	ActiveDocID int64 `json:"activeDocID,omitempty"`

	// ProductID is the id of the product the spec is bound to, if any.
	// +optional
	ProductID int64 `json:"productID,omitempty"`
}

// ActiveDoc is a 3scale ActiveDocs (OpenAPI) spec.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apidoc,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="System name",type=string,JSONPath=`.status.systemName`
// +kubebuilder:printcolumn:name="Doc ID",type=integer,JSONPath=`.status.activeDocID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type ActiveDoc struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ActiveDocSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ActiveDocStatus `json:"status,omitempty"`
}

// ActiveDocList is a list of ActiveDocs.
// +kubebuilder:object:root=true
type ActiveDocList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ActiveDoc `json:"items"`
}
