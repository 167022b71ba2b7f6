package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeveloperAccountSpec is the desired state of a 3scale developer (buyer) account and its users. Users
// live inside the account: a user never changes account.
type DeveloperAccountSpec struct {
	// OrgName is the organization's name, shown in 3scale and the developer portal.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	OrgName string `json:"orgName"`

	// MonthlyBillingEnabled turns monthly invoicing of the account on or off; unset leaves 3scale's value.
	// +optional
	MonthlyBillingEnabled *bool `json:"monthlyBillingEnabled,omitempty"`

	// MonthlyChargingEnabled turns monthly charging of the account's credit card on or off; unset leaves
	// 3scale's value.
	// +optional
	MonthlyChargingEnabled *bool `json:"monthlyChargingEnabled,omitempty"`

	// AccountPlanRef is the AccountPlan (in this namespace, on the same tenant) the account is on: set at
	// signup, and changed with porta's change_plan when it changes. Unset: not managed (a signup contracts
	// the tenant's default account plan, and a plan changed in the admin portal stays).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AccountPlanRef string `json:"accountPlanRef,omitempty"`

	// Fields are values of the account's fields the tenant defines (its field definitions of target
	// Account, built in or extra — a FieldDefinition or the admin portal's), by name; org_name is
	// spec.orgName. A name the tenant does not define waits (FieldNotDefined) until it does; a value
	// outside the field's choices is Invalid; a field the tenant requires must have a value here to sign
	// the account up. A field left out is not managed; "" clears a value.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'org_name')",message="org_name is spec.orgName"
	// +optional
	Fields map[string]string `json:"fields,omitempty"`

	// ServicePlanRefs are the ServicePlans (in this namespace, on the same tenant) the account subscribes
	// to its products through: one per product. A product the account does not subscribe to is subscribed
	// (and the subscription approved, when its plan requires approval: the spec is the administrator's
	// decision); one it subscribes to through another plan is moved (change_plan). A ServicePlan removed
	// from here ends the subscription apimsync made or took (porta refuses while the account has
	// applications on the product that are not suspended: the account waits, saying so). Subscriptions to
	// products no ServicePlan here names are left alone — porta makes one when an application is created.
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +optional
	ServicePlanRefs []string `json:"servicePlanRefs,omitempty"`

	// Users of the account, by username. The first admin signs the account up; at least one user is an admin.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.exists(u, u.role == 'admin')",message="an account needs at least one user with role admin"
	// +listType=map
	// +listMapKey=username
	Users []DeveloperUserSpec `json:"users"`

	CommonSpec `json:",inline"`
}

// DeveloperUserRole is a user's role in its account.
// +kubebuilder:validation:Enum=admin;member
type DeveloperUserRole string

// PasswordPolicy says when a user's password is written to 3scale.
// +kubebuilder:validation:Enum=Always;OnCreate
type PasswordPolicy string

const (
	// PasswordAlways sets the password when apimsync makes or adopts the user, and again whenever the
	// Secret's value changes: the Secret is the password.
	PasswordAlways PasswordPolicy = "Always"
	// PasswordOnCreate sets the password only when apimsync makes the user (3scale-operator's way): an
	// adopted user, and a developer who changed the password in the portal, keep theirs.
	PasswordOnCreate PasswordPolicy = "OnCreate"
)

// DeveloperUserSpec is one user of a developer account.
type DeveloperUserSpec struct {
	// Username is the user's login, unique in the tenant. It identifies the user: changing it makes
	// another user.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.@+-]+$`
	Username string `json:"username"`

	// Email of the user, unique in the tenant.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[^@\s]+@[^@\s]+$`
	Email string `json:"email"`

	// Suspended suspends the user in 3scale: they can no longer sign in to the developer portal (their
	// account and its applications are not affected); false makes them active again. Default: false.
	// +optional
	Suspended bool `json:"suspended,omitempty"`

	// Role in the account. Default: member.
	// +kubebuilder:default=member
	// +optional
	Role DeveloperUserRole `json:"role,omitempty"`

	// PasswordRef is the key of a Secret in this namespace that holds the user's password (never inline).
	// Optional: without it the user signs in through the portal's password reset or SSO.
	// +optional
	PasswordRef *LocalSecretKeyRef `json:"passwordRef,omitempty"`

	// PasswordPolicy says when passwordRef is written to 3scale: Always (default) when apimsync makes or
	// adopts the user and whenever the Secret's value changes; OnCreate only when apimsync makes the user,
	// so that an adopted user's password, or one the developer changed in the portal, stays as it is.
	// +kubebuilder:default=Always
	// +optional
	PasswordPolicy PasswordPolicy `json:"passwordPolicy,omitempty"`
}

// DeveloperAccountStatus is the observed state of a DeveloperAccount.
type DeveloperAccountStatus struct {
	CommonStatus `json:",inline"`

	// AccountID is the id of the developer account in 3scale.
	// +optional
	AccountID int64 `json:"accountID,omitempty"`

	// UserIDs are the 3scale ids of the account's users, by username.
	// +optional
	UserIDs map[string]int64 `json:"userIDs,omitempty"`

	// ServiceSubscriptionIDs are the ids of the service subscriptions apimsync made or took for
	// spec.servicePlanRefs, by the name of their Product: one whose plan leaves the spec ends only if it
	// is here.
	// +optional
	ServiceSubscriptionIDs map[string]int64 `json:"serviceSubscriptionIDs,omitempty"`

	// CreditCardStored is whether the account stores a credit card in 3scale (added through the developer
	// portal; apimsync never stores one). Without one, monthly charging cannot charge the invoices, and
	// the Synced message says so when charging is on.
	// +optional
	CreditCardStored bool `json:"creditCardStored,omitempty"`

	// PasswordVersions are, by username, the version (UID/resourceVersion) of the password Secret whose
	// password was last set in 3scale: a changed Secret sets the changed passwords in 3scale. They tell
	// nothing of the passwords (no digest is stored anywhere a reader of this resource could test guesses
	// against).
	// +optional
	PasswordVersions map[string]string `json:"passwordVersions,omitempty"`
}

// DeveloperAccount is a 3scale developer (buyer) account with its users.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apiaccount,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Org",type=string,JSONPath=`.spec.orgName`
// +kubebuilder:printcolumn:name="Account ID",type=integer,JSONPath=`.status.accountID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type DeveloperAccount struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DeveloperAccountSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status DeveloperAccountStatus `json:"status,omitempty"`
}

// DeveloperAccountList is a list of DeveloperAccounts.
// +kubebuilder:object:root=true
type DeveloperAccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DeveloperAccount `json:"items"`
}
