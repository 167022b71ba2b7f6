package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantSettingsSpec is the desired state of a tenant's own settings: its provider account's details and
// its webhooks. One TenantSettings per tenant (a second one is Invalid, naming the first). A field left
// out is not managed: 3scale keeps what it has.
type TenantSettingsSpec struct {
	// Account holds the provider account's details (porta's PUT /admin/api/provider).
	// +optional
	Account *ProviderDetails `json:"account,omitempty"`

	// Webhooks say where 3scale posts the tenant's events, and which (porta's PUT /admin/api/webhooks).
	// +optional
	Webhooks *WebhooksSpec `json:"webhooks,omitempty"`

	// AdminSignIn are the admin portal's single sign-on providers, for the tenant's own users (porta's
	// /admin/api/account/authentication_providers). Each is known by its systemName; one apimsync made or
	// took that leaves the list is unpublished (porta cannot delete one). Left out: not managed.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=10
	// +optional
	AdminSignIn []AdminSignInProvider `json:"adminSignIn,omitempty"`

	// Unmanaged asks for a report of what of the tenant no apimsync object holds.
	// +optional
	Unmanaged *UnmanagedSpec `json:"unmanaged,omitempty"`

	CommonSpec `json:",inline"`
}

// ProviderDetails are the provider account's details a tenant's admin sets in the admin portal's
// account settings (porta's API writes these four; the organization's name is the admin portal's). Each
// field left out is not managed.
type ProviderDetails struct {
	// FromEmail is the address the tenant's emails to developers come from; "" empties it.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[^@\\\\s]+@[^@\\\\s]+$')",message="fromEmail must be an email address"
	// +optional
	FromEmail *string `json:"fromEmail,omitempty"`

	// SupportEmail is the address developers are told to write to. It cannot be emptied here: porta shows
	// the first admin's email for an empty one (account.rb:515-518), which a spec could never match.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^@\\\\s]+@[^@\\\\s]+$')",message="supportEmail must be an email address"
	// +optional
	SupportEmail *string `json:"supportEmail,omitempty"`

	// FinanceSupportEmail is the address developers are told to write to about invoices. It cannot be
	// emptied here: porta shows the support email for an empty one (account.rb:520-522).
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^@\\\\s]+@[^@\\\\s]+$')",message="financeSupportEmail must be an email address"
	// +optional
	FinanceSupportEmail *string `json:"financeSupportEmail,omitempty"`

	// SiteAccessCode is the code the developer portal asks of visitors before it is launched; "" opens
	// the portal to everyone.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	SiteAccessCode *string `json:"siteAccessCode,omitempty"`
}

// AdminSignInProvider is one of the admin portal's single sign-on providers.
type AdminSignInProvider struct {
	// Kind is keycloak (Red Hat SSO) or auth0. Set when created.
	// +kubebuilder:validation:Enum=keycloak;auth0
	Kind string `json:"kind"`
	// SystemName identifies the provider in the tenant; an existing provider of this system name is taken
	// over (announced). Set when created.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	SystemName string `json:"systemName"`
	// Name shown on the sign-in button. Default: porta's for the kind. Set when created.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// ClientID of the admin portal at the provider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	ClientID string `json:"clientID"`
	// ClientSecretRef is the Secret key (this namespace) holding the client secret; until the Secret
	// exists the TenantSettings is Orphan. The secret is never shown in status, Events, logs or diff.
	ClientSecretRef LocalSecretKeyRef `json:"clientSecretRef"`
	// Site is the provider's URL: a Keycloak realm's (https://sso.example.com/auth/realms/acme), an
	// Auth0 domain's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^https?://\S+$`
	Site string `json:"site"`
	// Published shows the provider on the admin portal's sign-in page. Default: true.
	// +optional
	Published *bool `json:"published,omitempty"`
	// SkipSSLCertificateVerification turns off TLS verification towards the provider.
	// +optional
	SkipSSLCertificateVerification bool `json:"skipSSLCertificateVerification,omitempty"`
}

// WebhookEvent is an event 3scale can post to the tenant's webhook URL.
// +kubebuilder:validation:Enum=account_created;account_updated;account_deleted;user_created;user_updated;user_deleted;application_created;application_updated;application_deleted;account_plan_changed;application_plan_changed;application_user_key_updated;application_key_created;application_key_deleted;application_key_updated;application_suspended
type WebhookEvent string

// WebhooksSpec is the tenant's webhook: one URL, and the events posted to it.
type WebhooksSpec struct {
	// URL receives the events (http or https). The manager refuses a private or loopback address unless it
	// allows private admin URLs (--allow-private-admin-urls): 3scale would post from inside its network.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s/?#]+([/?#]\S*)?$`
	URL string `json:"url"`

	// Active posts the events; false keeps the settings but posts nothing. Default: true.
	// +kubebuilder:default=true
	// +optional
	Active *bool `json:"active,omitempty"`

	// ProviderActions also posts the events the tenant's own admins cause (not only developers'). Default:
	// false.
	// +optional
	ProviderActions bool `json:"providerActions,omitempty"`

	// Events are the events posted; every other is off.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Events []WebhookEvent `json:"events,omitempty"`
}

// UnmanagedSpec is the report of what of the tenant no apimsync object holds.
type UnmanagedSpec struct {
	// Report counts, at each sync and drift check of the TenantSettings, the tenant's objects of each kind
	// that no apimsync object the manager watches holds (what `kubectl apimsync diff --unmanaged` lists),
	// into status.unmanaged and the gauge apimsync_unmanaged_objects{tenant,kind}. It costs one list per
	// collection (about sixteen calls) per check. Nothing is deleted unless prune asks. Default: false.
	// +optional
	Report bool `json:"report,omitempty"`

	// Prune deletes, after a grace period, the tenant's objects of the kinds listed that no apimsync
	// object holds, with an Event per object. Left out: nothing is ever deleted (the default: never touch
	// what is not ours).
	// +optional
	Prune *PruneSpec `json:"prune,omitempty"`
}

// PrunableKind is a kind whose unmanaged objects a TenantSettings may prune.
// +kubebuilder:validation:Enum=CustomPolicyDefinition;Backend;Product;ApplicationPlan;ServicePlan;FieldDefinition;AccountPlan;DeveloperAccount;Application;ActiveDoc;AdminUser
type PrunableKind string

// PruneSpec says what of a tenant no apimsync object holds is deleted, and when.
type PruneSpec struct {
	// Kinds whose unmanaged objects are deleted: an explicit list, nothing by default.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=11
	// +listType=set
	Kinds []PrunableKind `json:"kinds"`

	// GracePeriod an object must stay unmanaged, seen at successive checks, before it is deleted (a
	// Kubernetes duration, e.g. 24h). Default: 24h.
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`

	// WithTraffic lists the kinds among Application, Product and DeveloperAccount whose objects are
	// pruned even when an application (theirs) had traffic in the last 30 days; an object of another
	// of those kinds with live traffic is kept, and an Event says why. Default: none.
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	// +optional
	WithTraffic []TrafficKind `json:"withTraffic,omitempty"`
}

// TrafficKind is a kind whose deletion takes applications, and their traffic, with it.
// +kubebuilder:validation:Enum=Application;Product;DeveloperAccount
type TrafficKind string

// TenantSettingsStatus is the observed state of a TenantSettings.
type TenantSettingsStatus struct {
	CommonStatus `json:",inline"`

	// ProviderAccountID is the id of the tenant's provider account in 3scale.
	// +optional
	ProviderAccountID int64 `json:"providerAccountID,omitempty"`

	// WebhooksWritten is a digest of the webhook settings last written to 3scale (keyed by the provider
	// account's token, it tells nothing of them): porta's API cannot read a webhook back, so what was
	// written is all apimsync knows of it, and spec.webhooks is written again only when it changes.
	// +optional
	WebhooksWritten string `json:"webhooksWritten,omitempty"`

	// Pruning are the unmanaged objects of the kinds spec.unmanaged.prune lists ("Kind/id"), with when
	// each was first seen unmanaged (or last kept, for one a safety rule kept): each is deleted, or
	// checked again, once its grace period has passed.
	// +optional
	Pruning map[string]metav1.Time `json:"pruning,omitempty"`

	// AdminSignIn are the admin-portal sign-in providers apimsync made or took, by system name, with their
	// ids: one that leaves spec.adminSignIn is unpublished, then forgotten.
	// +optional
	AdminSignIn map[string]int64 `json:"adminSignIn,omitempty"`

	// Unmanaged counts, by kind, the tenant's objects no apimsync object holds, at the last sync or drift
	// check (spec.unmanaged.report).
	// +optional
	Unmanaged map[string]int32 `json:"unmanaged,omitempty"`
}

// TenantSettings are a tenant's own settings: its provider account's details and its webhooks.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tenantsettings,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Account ID",type=integer,JSONPath=`.status.providerAccountID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type TenantSettings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TenantSettingsSpec `json:"spec"`

	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status TenantSettingsStatus `json:"status,omitempty"`
}

// TenantSettingsList is a list of TenantSettings.
// +kubebuilder:object:root=true
type TenantSettingsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantSettings `json:"items"`
}
