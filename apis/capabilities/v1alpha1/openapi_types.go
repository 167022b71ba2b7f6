package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenAPISpec is an OpenAPI document (3.0, 3.1 or Swagger 2.0) to serve through 3scale: apimsync
// generates from it a Backend (the upstream), a Product (a method and a mapping rule per operation, the
// authentication its security asks for) and optionally an ActiveDoc, as ordinary resources this object
// owns, named after it. They are regenerated when the document changes, and a change made to one by
// hand is put back (edit the document or this spec instead).
// +kubebuilder:validation:XValidation:rule="[has(self.document), has(self.documentRef), has(self.sourceRef)].filter(x, x).size() == 1",message="set exactly one of document, documentRef and sourceRef"
// +kubebuilder:validation:XValidation:rule="has(self.systemName) == has(oldSelf.systemName)",message="systemName cannot be added or removed after creation"
// +kubebuilder:validation:XValidation:rule="!has(self.backendOnly) || !self.backendOnly || (!has(self.activeDoc) || !has(self.activeDoc.servers) || self.activeDoc.servers == 'Document')",message="a backend-only import has no Product, so no gateway URL to rewrite the ActiveDoc's servers to"
// +kubebuilder:validation:XValidation:rule="!has(self.backendOnly) || !self.backendOnly || !has(self.defaultCredentials)",message="a backend-only import has no Product, so no policy chain for defaultCredentials"
// +kubebuilder:validation:XValidation:rule="(has(self.backendOnly) && self.backendOnly) == (has(oldSelf.backendOnly) && oldSelf.backendOnly)",message="backendOnly is fixed once the OpenAPI exists: switching would delete the generated Product (or move its methods) in 3scale; create a new OpenAPI instead"
// +kubebuilder:validation:XValidation:rule="(has(self.conventions) ? self.conventions : 'Apimsync') == (has(oldSelf.conventions) ? oldSelf.conventions : 'Apimsync')",message="conventions are fixed once the OpenAPI exists: they name the methods in 3scale; create a new OpenAPI instead"
type OpenAPISpec struct {
	// Document is the OpenAPI document inline, JSON or YAML (at most 1 MiB).
	// +kubebuilder:validation:MaxLength=1048576
	// +optional
	Document string `json:"document,omitempty"`

	// DocumentRef reads the document from a ConfigMap or a Secret key of this namespace (watched: an
	// edit regenerates).
	// +optional
	DocumentRef *DocumentRef `json:"documentRef,omitempty"`

	// SourceRef reads the document from the artifact a Flux source (GitRepository or OCIRepository of
	// this namespace) already fetched: the file at path in it. apimsync fetches only the artifact URL
	// the source's status gives, checks its digest, and follows the source's new revisions.
	// +optional
	SourceRef *OpenAPISourceRef `json:"sourceRef,omitempty"`

	// SystemName of the generated Product and Backend. Default: derived from metadata.name (dots become
	// underscores). Immutable: it names them in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="systemName is immutable; create a new OpenAPI to use another system name"
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// Conventions are the naming rules of what is generated: Apimsync (the default: methods named and
	// shown by operationId and summary, the upstream keeps the servers' path) or ThreescaleOperator (as
	// 3scale-operator's OpenAPI generates: method system names are operationIds lower-cased with each
	// non-word character an underscore, shown by operationId; the Backend named "<title> Backend"; the
	// servers' path in front of every pattern and not in the upstream), so that an OpenAPI
	// 3scale-operator synced is taken over with no write.
	// +kubebuilder:validation:Enum=Apimsync;ThreescaleOperator
	// +optional
	Conventions OpenAPIConventions `json:"conventions,omitempty"`

	// PublicBasePath is put in front of every mapping rule's pattern: the path under which callers
	// reach the API on the gateway. Default: none with Apimsync conventions, the first server's path
	// with ThreescaleOperator. ("/" is no prefix.)
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/[^\s$?#]*$`
	// +optional
	PublicBasePath string `json:"publicBasePath,omitempty"`

	// PrivateBasePath is the path of the upstream the API is served from. Default: the path of the first
	// server (or of privateBaseURL). When it differs from the public base path, the Product uses the
	// Backend under the public base path, and the gateway replaces one by the other.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/[^\s$?#]*$`
	// +optional
	PrivateBasePath string `json:"privateBasePath,omitempty"`

	// BackendOnly generates only the Backend, with a method and a mapping rule per operation (as 3scale
	// toolbox's import --backend), for Products of your own to use. No Product, plans or policies.
	// +optional
	BackendOnly bool `json:"backendOnly,omitempty"`

	// DefaultCredentials, for a document that asks for no security: the gateway authenticates every
	// call that carries no credentials with this user key (APIcast's default_credentials policy, first
	// in the chain), so the API stays behind 3scale's access control and counts usage on the key's
	// application. The key is read from a Secret key of this namespace (an Application's credentials
	// Secret holds one as user_key).
	// +optional
	DefaultCredentials *OpenAPIDefaultCredentials `json:"defaultCredentials,omitempty"`

	// PrivateBaseURL is the upstream the generated Backend points at, as it is (a call's whole public
	// path is passed on to it, unless privateBasePath is set too); default: the document's first server
	// URL (its variables at their defaults).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https']",message="privateBaseURL must be an absolute http or https URL"
	// +optional
	PrivateBaseURL string `json:"privateBaseURL,omitempty"`

	// PrefixMatching makes the mapping rules match path prefixes (no trailing "$"). Default: exact paths.
	// +optional
	PrefixMatching bool `json:"prefixMatching,omitempty"`

	// Deployment of the generated Product's gateway (as Product.spec.deployment). Default: apicastHosted.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// Security is the generated Product's upstream security: the Host header the gateway sends upstream
	// and its secret token (3scale-operator's privateAPIHostHeader and privateAPISecretToken; toolbox's
	// --backend-api-host-header and --backend-api-secret-token), under whichever authentication the
	// document asks for (user key when it asks for none).
	// +optional
	Security *SecuritySpec `json:"security,omitempty"`

	// OIDC says where the OpenID Connect provider is, for a document whose security is OpenID Connect or
	// OAuth 2.0 (required then).
	// +optional
	OIDC *OpenAPIOIDCSpec `json:"oidc,omitempty"`

	// Production is the generated Product's spec.production (promotion to production).
	// +optional
	Production *ProductionSpec `json:"production,omitempty"`

	// ActiveDoc, when set, also generates an ActiveDoc of the document, bound to the Product.
	// +optional
	ActiveDoc *OpenAPIActiveDocSpec `json:"activeDoc,omitempty"`

	CommonSpec `json:",inline"`
}

// OpenAPIOIDCSpec is the OpenID Connect provider of an imported API.
// +kubebuilder:validation:XValidation:rule="[has(self.issuerEndpoint), has(self.issuerEndpointRef)].filter(x, x).size() == 1",message="set exactly one of issuerEndpoint and issuerEndpointRef"
type OpenAPIOIDCSpec struct {
	// IssuerType: "keycloak" (Red Hat SSO / Keycloak) or "rest" (any other provider). Default: rest.
	// +kubebuilder:validation:Enum=keycloak;rest
	// +kubebuilder:default=rest
	// +optional
	IssuerType string `json:"issuerType,omitempty"`
	// IssuerEndpoint is the issuer URL, with the client credentials 3scale uses when it needs them.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	IssuerEndpoint string `json:"issuerEndpoint,omitempty"`
	// IssuerEndpointRef takes the issuer endpoint from a Secret key of this namespace.
	// +optional
	IssuerEndpointRef *LocalSecretKeyRef `json:"issuerEndpointRef,omitempty"`
	// AuthenticationFlow, when set, is the OAuth 2.0 flows the provider's clients allow, instead of the
	// ones the document's OAuth 2.0 scheme lists (an OpenID Connect scheme lists none: standard flow).
	// With conventions ThreescaleOperator, as 3scale-operator reads it: for an OpenID Connect scheme only.
	// +optional
	AuthenticationFlow *OIDCAuthenticationFlowSpec `json:"authenticationFlow,omitempty"`
	// JWTClaimWithClientID is the JWT claim that holds the client id (as Product.spec). Default: azp.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	JWTClaimWithClientID string `json:"jwtClaimWithClientID,omitempty"`
	// JWTClaimWithClientIDType: "plain" (a claim name) or "liquid" (a Liquid template). Default: plain.
	// +kubebuilder:validation:Enum=plain;liquid
	// +optional
	JWTClaimWithClientIDType string `json:"jwtClaimWithClientIDType,omitempty"`
	// GatewayResponse is the Product's gatewayResponse: the gateway's error answers (as Product.spec).
	// +optional
	GatewayResponse *GatewayResponseSpec `json:"gatewayResponse,omitempty"`
}

// OpenAPIActiveDocSpec is the ActiveDoc generated from the document.
type OpenAPIActiveDocSpec struct {
	// Published shows it in the developer portal. Default: false.
	// +optional
	Published bool `json:"published,omitempty"`

	// Servers is what the ActiveDoc's servers say: Document (the default: as the document has them),
	// Production or Staging (the Product's public base URL of that gateway, as 3scale holds it, followed
	// by the public base path: the developer portal's "try it out" then calls through the gateway; kept
	// in step when the URL changes).
	// +kubebuilder:validation:Enum=Document;Production;Staging
	// +optional
	Servers string `json:"servers,omitempty"`
}

// OpenAPIConventions are the naming rules of what an OpenAPI generates.
type OpenAPIConventions string

// The conventions.
const (
	ConventionsApimsync           OpenAPIConventions = "Apimsync"
	ConventionsThreescaleOperator OpenAPIConventions = "ThreescaleOperator"
)

// OpenAPISourceRef names a Flux source whose artifact holds the document.
type OpenAPISourceRef struct {
	// Kind of the source: GitRepository or OCIRepository (source.toolkit.fluxcd.io).
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository
	Kind string `json:"kind"`
	// Name of the source, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Path of the document in the artifact, e.g. "apis/petstore.yaml".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(s, s == '..')",message="path is relative to the artifact's root and stays inside it"
	Path string `json:"path"`
}

// OpenAPIDefaultCredentials is the user key the gateway uses for calls that carry none.
type OpenAPIDefaultCredentials struct {
	// UserKeyRef is the Secret key holding the user key.
	UserKeyRef LocalSecretKeyRef `json:"userKeyRef"`
}

// OpenAPIStatus is the observed state of an OpenAPI: what it generated and how that fares.
type OpenAPIStatus struct {
	// ObservedGeneration is the generation last handled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: one of InSync, Orphan, Synced and Invalid is True (and Ready, Reconciling, Stalled
	// for kstatus), as for every apimsync kind; Synced when every generated resource is.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Generated lists the resources generated ("Backend/petstore", "Product/petstore", ...).
	// +optional
	Generated []string `json:"generated,omitempty"`

	// Operations is the number of operations imported (a method and a mapping rule each).
	// +optional
	Operations int `json:"operations,omitempty"`

	// Notes say what the import changed or left out to fit 3scale (methods renamed to be unique,
	// security schemes without a 3scale equivalent).
	// +optional
	Notes []string `json:"notes,omitempty"`

	// GeneratedHash fingerprints the specs last generated: a generated resource that differs from them
	// while it is unchanged was edited by hand, and is put back.
	// +optional
	GeneratedHash string `json:"generatedHash,omitempty"`

	// CheckedGenerations is, by "Kind/name", the generation of each generated resource last found equal
	// to (or written as) the spec generated: a resource still at that generation needs no new comparison.
	// +optional
	CheckedGenerations map[string]int64 `json:"checkedGenerations,omitempty"`

	// MethodNames is, by operation ("GET /pets"), the system name of the method generated for it. An
	// operation whose operationId changes keeps its method (its id, and the limits and pricing rules
	// on it): renamed in name only.
	// +optional
	MethodNames map[string]string `json:"methodNames,omitempty"`

	// Secrets are the Secrets the document's policies read their configuration from (watched).
	// +optional
	Secrets []string `json:"secrets,omitempty"`

	// Source is the revision and digest of the Flux artifact the document was last read from.
	// +optional
	Source string `json:"source,omitempty"`
}

// OpenAPI imports an OpenAPI document into 3scale through generated Backend, Product and ActiveDoc
// resources.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apiimport,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Operations",type=integer,JSONPath=`.status.operations`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type OpenAPI struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenAPISpec `json:"spec"`
	// +optional
	Status OpenAPIStatus `json:"status,omitempty"`
}

// OpenAPIList is a list of OpenAPIs.
// +kubebuilder:object:root=true
type OpenAPIList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenAPI `json:"items"`
}

// GeneratedByLabel labels the resources an OpenAPI generated with its name.
const GeneratedByLabel = "apimsync.io/openapi"
