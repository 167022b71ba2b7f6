package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationSpec is the desired state of a 3scale application: one developer account's subscription to
// one application plan, with its credentials. It has two owners: the account and the plan; it goes when
// either goes.
// +kubebuilder:validation:XValidation:rule="!has(self.credentialsSecretName) || self.credentialsSecretName != 'threescale-provider-account'",message="credentialsSecretName must not name the provider-account Secret threescale-provider-account: the Application owns and rewrites the Secret it names"
// +kubebuilder:validation:XValidation:rule="!has(self.credentialsSecretName) || !has(self.credentialsRef) || self.credentialsSecretName != self.credentialsRef.name",message="credentialsSecretName must not name the credentialsRef Secret: that Secret is yours, the one named by credentialsSecretName is written by the Application"
type ApplicationSpec struct {
	// AccountRef is the name of the DeveloperAccount (in this namespace) that holds the application.
	// Immutable: 3scale cannot move an application between accounts.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="accountRef is immutable: 3scale cannot move an application to another account; create a new Application instead"
	AccountRef string `json:"accountRef"`

	// PlanRef is the name of the ApplicationPlan (in this namespace); the product is the plan's. It may move
	// to another plan of the same product (3scale's change_plan), never to another product's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PlanRef string `json:"planRef"`

	// Name is the application's name, unique within its account: it identifies the application there.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Description of the application.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Description string `json:"description,omitempty"`

	// RedirectURL is the OAuth/OIDC redirect URL of an application of an OIDC Product: where the
	// identity provider sends its user back (porta's redirect_url). Only for an OIDC Product (Invalid
	// otherwise: porta keeps it but never shows it for others). Unset: not managed.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^\S+$`
	// +optional
	RedirectURL string `json:"redirectURL,omitempty"`

	// Suspended suspends the application in 3scale (its credentials are refused); false resumes it.
	// +optional
	Suspended bool `json:"suspended,omitempty"`

	// CredentialsRef names a Secret in this namespace with the credentials to use: key `user_key` (user
	// key products), or `app_id` and optionally `app_keys` (comma-separated) for app id/key products.
	// Without it 3scale generates them. The listed app_keys are the application's complete set: keys
	// added are created in 3scale, keys removed are deleted there (a new key is added before an old one
	// goes, so a rotation never leaves the application without a key); an empty list keeps 3scale's keys.
	// app_id cannot change once the application exists.
	// +optional
	CredentialsRef *ProviderAccountRef `json:"credentialsRef,omitempty"`

	// CredentialsSecretName is the Secret the effective credentials are written to, owned by this
	// Application so that a workload can mount it. Default: <metadata.name>-credentials. It must be a
	// Secret of its own: not the provider-account Secret, not the credentialsRef Secret, and not one
	// that anything else created (the Application writes and deletes only a Secret it controls).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CredentialsSecretName string `json:"credentialsSecretName,omitempty"`

	// DeletionPolicy says what happens to the 3scale application when this resource is deleted:
	// Delete (default) removes it, Retain leaves it.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Adoption says whether this resource may take over an existing application of the account with its
	// name that it did not create: IfExists (default; announced in an Event) or Never (Invalid instead).
	// +kubebuilder:default=IfExists
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`

	// Management: Full (the default) or Observe, which only reads the 3scale object and tells in
	// status.observation what a full sync would write (see CommonSpec.Management).
	// +optional
	Management ManagementPolicy `json:"management,omitempty"`
}

// ApplicationStatus is the observed state of an Application.
type ApplicationStatus struct {
	CommonStatus `json:",inline"`

	// ApplicationID is the id of the application in 3scale.
	// +optional
	ApplicationID int64 `json:"applicationID,omitempty"`

	// AccountID, PlanID and ProductID are the 3scale ids of the application's account, plan and product.
	// +optional
	AccountID int64 `json:"accountID,omitempty"`
	// +optional
	PlanID int64 `json:"planID,omitempty"`
	// +optional
	ProductID int64 `json:"productID,omitempty"`

	// CredentialsSecret is the Secret holding the application's credentials.
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`

	// RetiredAt is when the application was retired with its product: its credentials Secret deleted;
	// the product's retirement sweep suspends it in 3scale.
	// +optional
	RetiredAt *metav1.Time `json:"retiredAt,omitempty"`
}

// Application is a 3scale application of a DeveloperAccount on an ApplicationPlan.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apiapp,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Account",type=string,JSONPath=`.spec.accountRef`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.planRef`
// +kubebuilder:printcolumn:name="App ID",type=integer,JSONPath=`.status.applicationID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ApplicationSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ApplicationStatus `json:"status,omitempty"`
}

// ApplicationList is a list of Applications.
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}
