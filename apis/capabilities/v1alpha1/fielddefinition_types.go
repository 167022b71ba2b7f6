package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldTarget is what a field is a field of: developer accounts, their users, or applications.
// +kubebuilder:validation:Enum=Account;User;Application
type FieldTarget string

// The targets of fields (porta's FieldsDefinition targets: Account, User, Cinstance).
const (
	FieldTargetAccount     FieldTarget = "Account"
	FieldTargetUser        FieldTarget = "User"
	FieldTargetApplication FieldTarget = "Application"
)

// FieldDefinitionSpec is the desired state of one of a tenant's field definitions: a field the developer
// portal's signup and the admin portal show for accounts, users or applications — one of 3scale's
// built-in fields (org_name, vat_code, ...: their label and flags), or an extra field of the tenant's.
// +kubebuilder:validation:XValidation:rule="!(has(self.required) && self.required && ((has(self.hidden) && self.hidden) || (has(self.readOnly) && self.readOnly)))",message="a field cannot be required and hidden or read-only (porta refuses it)"
type FieldDefinitionSpec struct {
	// Target is what the field belongs to: Account, User or Application. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="target is immutable: create another FieldDefinition"
	Target FieldTarget `json:"target"`

	// Name of the field: the key of its value (DeveloperAccount spec.extraFields for an account's extra
	// field). Starts with a letter; letters, digits, '_' and '-'. Immutable. A built-in field's name
	// (every tenant has them from its creation) takes that field and manages its label and flags.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable: create another FieldDefinition"
	Name string `json:"name"`

	// Label shown next to the field.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Label string `json:"label"`

	// Required: a value must be given (porta makes the fields its models require required whatever the
	// spec says; the Synced message says so). Default: false.
	// +optional
	Required bool `json:"required,omitempty"`

	// Hidden from developers in the portal. Default: false.
	// +optional
	Hidden bool `json:"hidden,omitempty"`

	// ReadOnly for developers in the portal. Default: false.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// Choices, when set, are the only values the field takes (a drop-down in the portal). A change that
	// leaves out a value an account already holds is Invalid, naming the accounts, and nothing is
	// written: change their values first, or keep the value among the choices.
	// +kubebuilder:validation:MaxItems=200
	// +listType=atomic
	// +optional
	Choices []string `json:"choices,omitempty"`

	// Position among the target's fields (1 first). Unset: not managed (a new field comes last).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Position *int32 `json:"position,omitempty"`

	CommonSpec `json:",inline"`
}

// FieldDefinitionStatus is the observed state of a FieldDefinition.
type FieldDefinitionStatus struct {
	CommonStatus `json:",inline"`

	// FieldDefinitionID is the id of the field definition in 3scale.
	// +optional
	FieldDefinitionID int64 `json:"fieldDefinitionID,omitempty"`
}

// FieldDefinition is one of a tenant's field definitions (custom fields).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fielddef,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.target`
// +kubebuilder:printcolumn:name="Field",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Field ID",type=integer,JSONPath=`.status.fieldDefinitionID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type FieldDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec FieldDefinitionSpec `json:"spec"`

	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status FieldDefinitionStatus `json:"status,omitempty"`
}

// FieldDefinitionList is a list of FieldDefinitions.
// +kubebuilder:object:root=true
type FieldDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FieldDefinition `json:"items"`
}
