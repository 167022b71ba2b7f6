package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdminRole is what a tenant's user may do in the admin portal.
// +kubebuilder:validation:Enum=admin;member
type AdminRole string

// The roles of a tenant's users.
const (
	AdminRoleAdmin  AdminRole = "admin"
	AdminRoleMember AdminRole = "member"
)

// AdminUserState is whether a tenant's user may sign in.
// +kubebuilder:validation:Enum=Active;Suspended
type AdminUserState string

// The states a spec may ask of a tenant's user.
const (
	AdminUserActive    AdminUserState = "Active"
	AdminUserSuspended AdminUserState = "Suspended"
)

// AdminSection is a section of the admin portal a member may be given (porta's AdminSection::PERMISSIONS).
// +kubebuilder:validation:Enum=portal;finance;settings;partners;monitoring;plans;policy_registry
type AdminSection string

// AdminUserSpec is the desired state of one of a tenant's own users: someone who signs in to its admin
// portal, as an admin or as a member with permissions.
// +kubebuilder:validation:XValidation:rule="!has(self.permissions) || !has(self.role) || self.role == 'member'",message="permissions are a member's: an admin may do everything (porta refuses an admin's permissions)"
type AdminUserSpec struct {
	// Username the user signs in with; what the user is known by in the tenant (unique there). 3 to 40
	// characters: a letter, digit or '_' first, then those or '.', '-', '@', '+' (porta's RE_LOGIN_OK).
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.@+-]+$`
	Username string `json:"username"`

	// Email of the user (unique in the tenant).
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^@\\\\s]+@[^@\\\\s]+$')",message="email must be an email address"
	Email string `json:"email"`

	// Role: admin (everything) or member (the sections and products of spec.permissions). Default: member.
	// apimsync never demotes the user its token belongs to, nor the tenant's last active admin.
	// +kubebuilder:default=member
	// +optional
	Role AdminRole `json:"role,omitempty"`

	// State: Active (may sign in) or Suspended. Default: Active. apimsync never suspends the user its
	// token belongs to, nor the tenant's last active admin.
	// +kubebuilder:default=Active
	// +optional
	State AdminUserState `json:"state,omitempty"`

	// PasswordRef selects the user's password (15 characters at least) in a Secret of this namespace.
	// It is written when the user is made and whenever the Secret's value changes; without it the user
	// has no password and signs in through the admin portal's single sign-on (TenantSettings
	// spec.adminSignIn) or sets one with "forgot password".
	// +optional
	PasswordRef *LocalSecretKeyRef `json:"passwordRef,omitempty"`

	// Permissions of a member: the admin portal's sections and the products it may see.
	// +optional
	Permissions *AdminPermissions `json:"permissions,omitempty"`

	// ProviderAccountRef names the Secret with the 3scale tenant's credentials. Default: the Secret
	// `threescale-provider-account` in the same namespace.
	// +optional
	ProviderAccountRef *ProviderAccountRef `json:"providerAccountRef,omitempty"`

	// DeletionPolicy: Delete (default) deletes the user from 3scale with this resource (never the user
	// apimsync's token belongs to, nor the last admin: such a deletion is refused), Retain leaves it.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Adoption: Never (default) — a user of that username apimsync did not make leaves this resource
	// Invalid; IfExists takes it over, on purpose, and says so in an Event.
	// +kubebuilder:default=Never
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`

	// Management: Full (the default) or Observe, which only reads the 3scale object and tells in
	// status.observation what a full sync would write (see CommonSpec.Management).
	// +optional
	Management ManagementPolicy `json:"management,omitempty"`
}

// AdminPermissions are what a member may see of the admin portal.
type AdminPermissions struct {
	// Sections of the admin portal the member may use; none when empty.
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +optional
	Sections []AdminSection `json:"sections,omitempty"`

	// ProductRefs name the Products (in this namespace, on the user's tenant) whose sections the member
	// may see. Left out: every product, present and future; empty: none.
	// +kubebuilder:validation:MaxItems=500
	// +listType=set
	// +optional
	ProductRefs *[]string `json:"productRefs,omitempty"`
}

// ProviderAccountSecretName returns the provider-account Secret of the user's tenant.
func (s *AdminUserSpec) ProviderAccountSecretName() string {
	return (&CommonSpec{ProviderAccountRef: s.ProviderAccountRef}).ProviderAccountSecretName()
}

// AdminUserStatus is the observed state of an AdminUser.
type AdminUserStatus struct {
	CommonStatus `json:",inline"`

	// UserID is the id of the user in 3scale.
	// +optional
	UserID int64 `json:"userID,omitempty"`

	// State is the user's state in 3scale (pending, active, suspended).
	// +optional
	State string `json:"state,omitempty"`

	// PasswordWritten is a keyed digest of the password last written (it tells nothing of the password):
	// 3scale never shows a password, so the password is written again only when the Secret's value changes.
	// +optional
	PasswordWritten string `json:"passwordWritten,omitempty"`
}

// AdminUser is one of a tenant's own users (admin portal).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Username",type=string,JSONPath=`.spec.username`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="User ID",type=integer,JSONPath=`.status.userID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type AdminUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AdminUserSpec `json:"spec"`

	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status AdminUserStatus `json:"status,omitempty"`
}

// AdminUserList is a list of AdminUsers.
// +kubebuilder:object:root=true
type AdminUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdminUser `json:"items"`
}
