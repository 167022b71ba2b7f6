package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantSpec is a 3scale tenant (a provider account) of an on-premises 3scale, made through the master
// API, and where its provider-account Secret goes. Tenants are for cluster admins: the master token can
// make and delete every tenant (see the apimsync-tenant-admin ClusterRole).
type TenantSpec struct {
	// MasterAccountRef names the Secret of this namespace holding the master portal's URL (key adminURL,
	// e.g. https://master.apps.example.com) and a master access token (key token), with the optional keys
	// of a provider-account Secret (caBundle, ...).
	MasterAccountRef ProviderAccountRef `json:"masterAccountRef"`

	// OrganizationName is the tenant's organization; its admin portal's subdomain derives from it
	// (acme → acme-admin.<wildcard domain>). Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="organizationName is immutable; create a new Tenant"
	OrganizationName string `json:"organizationName"`

	// Username of the tenant's first admin user. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="username is immutable; create a new Tenant"
	Username string `json:"username"`

	// Email of the tenant's first admin user.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="email is immutable; change it in the tenant's admin portal"
	Email string `json:"email"`

	// PasswordRef takes the admin user's password from a key of a Secret in this namespace.
	PasswordRef LocalSecretKeyRef `json:"passwordRef"`

	// ProviderAccountSecret is where apimsync writes the new tenant's provider-account Secret (adminURL
	// and token), so that a team's namespace syncs to its tenant at once. Immutable: the token is written
	// once, there.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="providerAccountSecret is immutable: the tenant's token was written there once"
	ProviderAccountSecret TenantSecretRef `json:"providerAccountSecret"`

	// DeletionPolicy: Delete (default) schedules the tenant's deletion in 3scale (porta deletes it for
	// good later) and deletes the Secret written; Retain leaves both.
	// +kubebuilder:validation:Enum=Delete;Retain
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// TenantSecretRef names a Secret in any namespace.
type TenantSecretRef struct {
	// Namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the Secret. Default: threescale-provider-account, the one a namespace's objects use.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=threescale-provider-account
	// +optional
	Name string `json:"name,omitempty"`
}

// TenantStatus is the observed state of a Tenant.
type TenantStatus struct {
	CommonStatus `json:",inline"`

	// TenantID is the id of the provider account in 3scale.
	// +optional
	TenantID int64 `json:"tenantID,omitempty"`
	// AdminURL is the tenant's admin portal.
	// +optional
	AdminURL string `json:"adminURL,omitempty"`
	// State is the tenant's state in 3scale (approved, scheduled_for_deletion...).
	// +optional
	State string `json:"state,omitempty"`
	// SecretWritten names the provider-account Secret written ("namespace/name").
	// +optional
	SecretWritten string `json:"secretWritten,omitempty"`
}

// Tenant is a 3scale tenant made through the master API.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Organization",type=string,JSONPath=`.spec.organizationName`
// +kubebuilder:printcolumn:name="Tenant ID",type=integer,JSONPath=`.status.tenantID`
// +kubebuilder:printcolumn:name="Admin URL",type=string,JSONPath=`.status.adminURL`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TenantSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status TenantStatus `json:"status,omitempty"`
}

// TenantList is a list of Tenants.
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

// GetSyncStatus implements SyncedObject.
func (t *Tenant) GetSyncStatus() *CommonStatus { return &t.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (t *Tenant) GetDeletionPolicy() DeletionPolicy {
	if t.Spec.DeletionPolicy == "" {
		return DeletionPolicyDelete
	}
	return t.Spec.DeletionPolicy
}

// GetRemoteID implements SyncedObject.
func (t *Tenant) GetRemoteID() int64 { return t.Status.TenantID }

// SetRemoteID implements SyncedObject.
func (t *Tenant) SetRemoteID(id int64) { t.Status.TenantID = id }

// GetAdoptionPolicy implements SyncedObject: a Tenant applied without its status (a restore, a new
// cluster) adopts the tenant of its organization and admin that master holds, with a provider-account
// Secret a Tenant of its name wrote: never a second signup.
func (t *Tenant) GetAdoptionPolicy() AdoptionPolicy { return AdoptionIfExists }

// ObserveOnly implements SyncedObject: a Tenant is always managed (it signs a tenant up or adopts one).
func (t *Tenant) ObserveOnly() bool { return false }
