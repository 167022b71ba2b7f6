package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PortalPublish says when what apimsync writes to the developer portal goes live.
// +kubebuilder:validation:Enum=Always;Manual
type PortalPublish string

const (
	// PortalPublishAlways publishes what Git holds: every template written is published, and a template
	// edited by hand in the admin portal is put back at the drift check.
	PortalPublishAlways PortalPublish = "Always"
	// PortalPublishManual writes templates as drafts, for a person to publish in the admin portal after a
	// look at the preview; a template edited by hand is reported, never overwritten, until Git changes it.
	PortalPublishManual PortalPublish = "Manual"
)

// PortalContentRef is where a template's or file's content is: a key of a ConfigMap of this namespace
// (data for text, binaryData for bytes), as kustomize's configMapGenerator makes them from a directory.
// ConfigMap keys cannot hold '/': the portal path is the item's own field, and the key its file name.
type PortalContentRef struct {
	// ConfigMap is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ConfigMap string `json:"configMap"`
	// Key is the key in its data or binaryData.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// PortalSection is a section of the portal: a folder of pages and files, with its own URL prefix.
type PortalSection struct {
	// SystemName identifies the section.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	SystemName string `json:"systemName"`
	// Title of the section, unique among its parent's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Title string `json:"title"`
	// Parent is the system name of the parent section. Default: root.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Parent string `json:"parent,omitempty"`
	// PartialPath is the section's path in the portal ("/docs"). Default: porta's, from the title.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	PartialPath string `json:"partialPath,omitempty"`
	// Public shows the section to every visitor; false restricts it to signed-in developers. Default: true.
	// +optional
	Public *bool `json:"public,omitempty"`
}

// PortalLayout is a layout: the page around a page's content ({% content %}).
type PortalLayout struct {
	// SystemName identifies the layout; pages name it as their layout.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^\w[\w\-/]+$`
	SystemName string `json:"systemName"`
	// Title of the layout. Default: none.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Title string `json:"title,omitempty"`
	// Liquid renders the content as a Liquid template. Default: true.
	// +optional
	Liquid *bool `json:"liquid,omitempty"`
	// Content of the layout.
	Content PortalContentRef `json:"content"`
}

// PortalPartial is a partial: a piece of Liquid that pages and layouts include.
type PortalPartial struct {
	// SystemName identifies the partial ({% include 'name' %}); not a built-in partial's name.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^\w[\w\-/]+$`
	SystemName string `json:"systemName"`
	// Content of the partial.
	Content PortalContentRef `json:"content"`
}

// PortalHandler is how a page's content is turned into HTML before Liquid.
// +kubebuilder:validation:Enum=markdown;textile
type PortalHandler string

// PortalPage is a page of the portal, at its path.
type PortalPage struct {
	// Path of the page in the portal ("/", "/about"); unique among pages. No trailing slash and no "//"
	// at the start: porta rewrites both, so the path would never match what it stores.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/$|^/[^/](.*[^/])?$`
	Path string `json:"path"`
	// Title of the page.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Title string `json:"title"`
	// SystemName of the page. Default: porta's, from the title.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^\w[\w\-/]+$`
	// +optional
	SystemName string `json:"systemName,omitempty"`
	// Section is the system name of the page's section. Default: root.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Section string `json:"section,omitempty"`
	// Layout is the system name of the page's layout: one of spec.layouts or one the tenant has (its
	// main_layout). Default: none (the content is the whole page).
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Layout string `json:"layout,omitempty"`
	// Liquid renders the content as a Liquid template. Default: true.
	// +optional
	Liquid *bool `json:"liquid,omitempty"`
	// Handler turns the content into HTML first (markdown, textile). Default: none.
	// +optional
	Handler PortalHandler `json:"handler,omitempty"`
	// ContentType of the page. Default: text/html.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ContentType string `json:"contentType,omitempty"`
	// Content of the page.
	Content PortalContentRef `json:"content"`
}

// PortalBuiltinPage overrides one of the built-in pages every tenant has (login/new, dashboards/show,
// errors/not_found...): built-ins are never deleted.
type PortalBuiltinPage struct {
	// SystemName of the built-in page.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	SystemName string `json:"systemName"`
	// Layout is the system name of its layout. Default: the one it has.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Layout string `json:"layout,omitempty"`
	// Content of the page.
	Content PortalContentRef `json:"content"`
}

// PortalBuiltinPartial overrides one of the built-in partials every tenant has (submenu, field...).
type PortalBuiltinPartial struct {
	// SystemName of the built-in partial.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	SystemName string `json:"systemName"`
	// Content of the partial.
	Content PortalContentRef `json:"content"`
}

// PortalFile is a file the portal serves at its path (CSS, JavaScript, images, downloads).
type PortalFile struct {
	// Path of the file in the portal ("/css/site.css"); unique among files.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`
	// Section is the system name of the file's section. Default: root.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Section string `json:"section,omitempty"`
	// Downloadable serves the file as an attachment (a download) rather than inline.
	// +optional
	Downloadable bool `json:"downloadable,omitempty"`
	// Content of the file.
	Content PortalContentRef `json:"content"`
}

// PortalPlanChangePermission is what a developer may do to change plans.
// +kubebuilder:validation:Enum=request;none;credit_card;request_credit_card;direct
type PortalPlanChangePermission string

// PortalSettings are the portal's settings (porta's /admin/api/settings.json); a field left out is not
// managed: it stays as it is in 3scale.
type PortalSettings struct {
	// SignupsEnabled lets developers sign up on the portal.
	// +optional
	SignupsEnabled *bool `json:"signupsEnabled,omitempty"`
	// AccountApprovalRequired makes new developer accounts wait for approval (porta applies it when the
	// tenant has one account plan).
	// +optional
	AccountApprovalRequired *bool `json:"accountApprovalRequired,omitempty"`
	// UserAccountAreaEnabled shows developers their account area.
	// +optional
	UserAccountAreaEnabled *bool `json:"userAccountAreaEnabled,omitempty"`
	// PublicSearch lets visitors search the portal.
	// +optional
	PublicSearch *bool `json:"publicSearch,omitempty"`
	// HideService hides the default product in the portal.
	// +optional
	HideService *bool `json:"hideService,omitempty"`
	// AccountPlansUIVisible and ServicePlansUIVisible show developers the account and service plans.
	// +optional
	AccountPlansUIVisible *bool `json:"accountPlansUIVisible,omitempty"`
	// +optional
	ServicePlansUIVisible *bool `json:"servicePlansUIVisible,omitempty"`
	// ChangeAccountPlanPermission and ChangeServicePlanPermission say how a developer changes plans.
	// +optional
	ChangeAccountPlanPermission PortalPlanChangePermission `json:"changeAccountPlanPermission,omitempty"`
	// +optional
	ChangeServicePlanPermission PortalPlanChangePermission `json:"changeServicePlanPermission,omitempty"`
}

// PortalSignInProvider is a "sign in with …" provider of the portal (porta's developer authentication
// providers; one per kind). Its client secret is read from a Secret, never written anywhere else.
// +kubebuilder:validation:XValidation:rule="!(self.kind in ['keycloak', 'auth0']) || has(self.site)",message="a keycloak or auth0 provider needs site"
type PortalSignInProvider struct {
	// Kind is keycloak, auth0, github, or the name of a custom OAuth provider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	Kind string `json:"kind"`
	// Name shown on the sign-in button. Default: porta's for the kind. Set when created.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// ClientID of the portal at the provider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	ClientID string `json:"clientID"`
	// ClientSecretRef is the Secret key (this namespace) holding the client secret.
	ClientSecretRef LocalSecretKeyRef `json:"clientSecretRef"`
	// Site is the provider's URL (a Keycloak realm's, an Auth0 domain's); required for keycloak and auth0.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^https?://\S+$`
	// +optional
	Site string `json:"site,omitempty"`
	// Published shows the provider on the sign-in page. Default: true.
	// +optional
	Published *bool `json:"published,omitempty"`
	// SkipSSLCertificateVerification turns off TLS verification towards the provider.
	// +optional
	SkipSSLCertificateVerification bool `json:"skipSSLCertificateVerification,omitempty"`
	// AutomaticallyApproveAccounts approves the accounts of developers who sign up through it.
	// +optional
	AutomaticallyApproveAccounts bool `json:"automaticallyApproveAccounts,omitempty"`
}

// DeveloperPortalSpec is the desired content of a tenant's developer portal. One DeveloperPortal per
// tenant; what it does not list is left as it is, unless in a section it prunes.
// +kubebuilder:validation:XValidation:rule="!has(self.prune) || !self.prune.exists(s, s == 'root')",message="the root section cannot be pruned: prune the sections apimsync owns"
type DeveloperPortalSpec struct {
	// Publish says when what apimsync writes goes live: Always (default; what Git holds is published)
	// or Manual (templates are written as drafts, published by a person in the admin portal).
	// +kubebuilder:default=Always
	// +optional
	Publish PortalPublish `json:"publish,omitempty"`

	// Sections of the portal, parents before children or not: apimsync orders them.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=500
	// +optional
	Sections []PortalSection `json:"sections,omitempty"`
	// Layouts of the portal.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Layouts []PortalLayout `json:"layouts,omitempty"`
	// Partials of the portal.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=500
	// +optional
	Partials []PortalPartial `json:"partials,omitempty"`
	// Pages of the portal, by path.
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Pages []PortalPage `json:"pages,omitempty"`
	// BuiltinPages overrides some of the built-in pages.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=100
	// +optional
	BuiltinPages []PortalBuiltinPage `json:"builtinPages,omitempty"`
	// BuiltinPartials overrides some of the built-in partials.
	// +listType=map
	// +listMapKey=systemName
	// +kubebuilder:validation:MaxItems=100
	// +optional
	BuiltinPartials []PortalBuiltinPartial `json:"builtinPartials,omitempty"`
	// Files of the portal, by path.
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Files []PortalFile `json:"files,omitempty"`

	// Settings of the portal; left out, they are not managed.
	// +optional
	Settings *PortalSettings `json:"settings,omitempty"`
	// SignInProviders are the portal's "sign in with …" providers, one per kind. porta cannot delete
	// one: a provider apimsync made that leaves the list is unpublished.
	// +listType=map
	// +listMapKey=kind
	// +kubebuilder:validation:MaxItems=20
	// +optional
	SignInProviders []PortalSignInProvider `json:"signInProviders,omitempty"`

	// RestoreBuiltins, when a built-in page or partial leaves builtinPages or builtinPartials (or the
	// DeveloperPortal is deleted), writes back the content it had before apimsync first overrode it
	// (kept in status.builtinOriginals). Default: false, the override stays as last written.
	// +optional
	RestoreBuiltins bool `json:"restoreBuiltins,omitempty"`
	// Prune names sections (system names) where apimsync deletes the pages and files the spec does not
	// list, whoever made them, and the sections under them it made. Elsewhere it deletes only what it
	// made itself and the spec no longer lists. Built-ins are never deleted.
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	// +optional
	Prune []string `json:"prune,omitempty"`

	CommonSpec `json:",inline"`
}

// PortalItemState is where an item's content stands in the portal.
type PortalItemState string

const (
	// PortalItemLive: what the spec says is published (a file: uploaded).
	PortalItemLive PortalItemState = "Live"
	// PortalItemDraft: what the spec says is the draft, waiting for a person to publish it (Manual).
	PortalItemDraft PortalItemState = "Draft"
	// PortalItemEditedByHand: the template was changed in the admin portal since apimsync wrote it, and
	// left so (Manual); a change of the spec overwrites it.
	PortalItemEditedByHand PortalItemState = "EditedByHand"
	// PortalItemLeaving: a page apimsync made that the spec no longer has, still live (Manual) while
	// drafts wait for a person to publish them — a page moved from here is one of them; it goes at the
	// first sync after they are published.
	PortalItemLeaving PortalItemState = "Leaving"
)

// PortalItemStatus is what apimsync knows of one item of the portal.
type PortalItemStatus struct {
	// Key is the item's type and name: "page:/about", "layout:main_layout", "partial:footer",
	// "builtin_page:login/new", "builtin_partial:submenu", "file:/css/site.css", "section:docs",
	// "signin:keycloak".
	Key string `json:"key"`
	// ID is its id in 3scale.
	ID int64 `json:"id"`
	// Created is true when apimsync made it (it may then delete it); false when it was there before.
	// +optional
	Created bool `json:"created,omitempty"`
	// Hash is the hash of the content apimsync last wrote.
	// +optional
	Hash string `json:"hash,omitempty"`
	// UpdatedAt is 3scale's updated_at after apimsync's last write (a file's content cannot be read
	// back cheaply: a later time means someone replaced it).
	// +optional
	UpdatedAt string `json:"updatedAt,omitempty"`
	// State is where its content stands (templates and files).
	// +optional
	State PortalItemState `json:"state,omitempty"`
}

// DeveloperPortalStatus is the observed state of a DeveloperPortal.
type DeveloperPortalStatus struct {
	CommonStatus `json:",inline"`

	// RootSectionID is the id of the tenant's root section: the portal's identity in 3scale.
	// +optional
	RootSectionID int64 `json:"rootSectionID,omitempty"`
	// Items are the portal's items apimsync syncs or made, with their ids and states.
	// +listType=map
	// +listMapKey=key
	// +optional
	Items []PortalItemStatus `json:"items,omitempty"`
	// Drafts counts the templates whose spec content waits to be published (Manual); EditedByHand those
	// changed in the admin portal and left so.
	// +optional
	Drafts int32 `json:"drafts,omitempty"`
	// +optional
	EditedByHand int32 `json:"editedByHand,omitempty"`
	// BuiltinOriginals are the contents built-in pages and partials had before apimsync first overrode
	// them, by key ("builtin_page:login/new"): what restoreBuiltins writes back.
	// +optional
	BuiltinOriginals map[string]string `json:"builtinOriginals,omitempty"`
}

// DeveloperPortal is the content of a tenant's developer portal: sections, layouts, partials, pages,
// built-in overrides and files, from ConfigMaps.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=devportal,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Publish",type=string,JSONPath=`.spec.publish`
// +kubebuilder:printcolumn:name="Drafts",type=integer,JSONPath=`.status.drafts`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type DeveloperPortal struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DeveloperPortalSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status DeveloperPortalStatus `json:"status,omitempty"`
}

// DeveloperPortalList is a list of DeveloperPortals.
// +kubebuilder:object:root=true
type DeveloperPortalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DeveloperPortal `json:"items"`
}

// EffectivePublish is the publish mode, Always when unset.
func (s *DeveloperPortalSpec) EffectivePublish() PortalPublish {
	if s.Publish == "" {
		return PortalPublishAlways
	}
	return s.Publish
}
