package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomPolicyDefinitionSpec is the desired state of a custom APIcast policy in the tenant's policy
// registry: its name, version and JSON schema (the APIcast policy manifest). Products use it by name and
// version in spec.policies.
type CustomPolicyDefinitionSpec struct {
	// Name of the policy, as Products' spec.policies[].name name it. Immutable: a policy in use cannot
	// be renamed in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable; create a new CustomPolicyDefinition"
	Name string `json:"name"`

	// Version of the policy, e.g. "0.1" (never "builtin", which names APIcast's own policies); it must
	// equal schema.version. Immutable: publish a new version as a new CustomPolicyDefinition and move the
	// Products to it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self != 'builtin'",message="version 'builtin' names APIcast's own policies; give the custom policy a version such as 0.1"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="version is immutable; publish a new version as a new CustomPolicyDefinition"
	Version string `json:"version"`

	// Schema is the policy's manifest (APIcast policy schema): name, version (equal to spec.version),
	// summary (at most 75 characters), optional description, and configuration, a JSON Schema of the
	// policy's configuration. apimsync checks it, and compiles configuration as a JSON Schema, before
	// sending it.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Schema apiextensionsv1.JSON `json:"schema"`

	CommonSpec `json:",inline"`
}

// CustomPolicyDefinitionStatus is the observed state of a CustomPolicyDefinition.
type CustomPolicyDefinitionStatus struct {
	CommonStatus `json:",inline"`

	// PolicyID is the id of the policy in 3scale's policy registry.
	// +optional
	PolicyID int64 `json:"policyID,omitempty"`
}

// CustomPolicyDefinition is a custom APIcast policy in the tenant's policy registry.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apipolicy,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Policy ID",type=integer,JSONPath=`.status.policyID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type CustomPolicyDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec CustomPolicyDefinitionSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status CustomPolicyDefinitionStatus `json:"status,omitempty"`
}

// CustomPolicyDefinitionList is a list of CustomPolicyDefinitions.
// +kubebuilder:object:root=true
type CustomPolicyDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CustomPolicyDefinition `json:"items"`
}

// PolicyKey is how a Product's policy chain names a custom policy: its name and version.
func PolicyKey(name, version string) string { return name + "@" + version }

// BuiltinPolicyVersion is the version of APIcast's own policies; any other version names a custom
// policy of the registry.
const BuiltinPolicyVersion = "builtin"
