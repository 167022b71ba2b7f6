package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProductSpec is the desired state of a 3scale product (a "service"): how its gateway is deployed, how
// callers authenticate, what is counted, which backends it routes to, and its policy chain.
// +kubebuilder:validation:XValidation:rule="has(self.systemName) == has(oldSelf.systemName)",message="systemName cannot be added or removed after creation; it is fixed once the product exists"
// +kubebuilder:validation:XValidation:rule="!has(self.methods) || !has(self.metrics) || self.methods.all(m, !(m in self.metrics))",message="a system name is used both as a metric and as a method; metrics and methods share one namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.mappingRules) || self.mappingRules.all(r, r.metricMethodRef == 'hits' || (has(self.metrics) && r.metricMethodRef in self.metrics) || (has(self.methods) && r.metricMethodRef in self.methods))",message="every mappingRules[].metricMethodRef must be 'hits' or a key of metrics or methods"
type ProductSpec struct {
	// Lifecycle is where the product is in its life: Draft (plans hidden; new applications wait, except on
	// plans with allowInDraft), Published (plans follow their own published), Deprecated (plans hidden,
	// existing applications keep working, new ones are refused; status.usage reports who still uses it),
	// Retired (every application suspended, their credentials Secrets deleted). Moves: Draft → Published or
	// Retired, Published → Deprecated, Deprecated → Published or Retired; nothing leaves Retired.
	// +kubebuilder:validation:Enum=Draft;Published;Deprecated;Retired
	// +kubebuilder:default=Published
	// +kubebuilder:validation:XValidation:rule="oldSelf != 'Retired' || self == 'Retired'",message="a Retired product stays Retired: create a new Product instead"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf || oldSelf == 'Retired' || (oldSelf == 'Draft' && self in ['Published', 'Retired']) || (oldSelf == 'Published' && self == 'Deprecated') || (oldSelf == 'Deprecated' && self in ['Published', 'Retired'])",message="lifecycle moves are Draft → Published or Retired, Published → Deprecated, Deprecated → Published or Retired"
	// +optional
	Lifecycle ProductLifecycle `json:"lifecycle,omitempty"`

	// UsageReport tunes the report of who still uses a Deprecated or Retired product (status.usage).
	// +optional
	UsageReport *UsageReportSpec `json:"usageReport,omitempty"`

	// Name is the product's display name in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// SystemName is the product's unique identifier in the tenant. Optional: when empty it is derived from
	// metadata.name (and shown in status.systemName). Immutable once set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="systemName is immutable; create a new Product to use another system name"
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// Description of the product.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`

	// Deployment says where the product's APIcast gateway runs: choose exactly one of apicastHosted
	// (3scale runs it) or apicastSelfManaged (you run it, at the public base URLs given). Default: apicastHosted.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// Authentication says how API callers identify themselves: choose exactly one of userKey,
	// appKeyAppID or oidc. Default: userKey.
	// +optional
	Authentication *AuthenticationSpec `json:"authentication,omitempty"`

	// Metrics of the product, by system name. The `hits` metric always exists; list it here only to set its
	// friendly name or description.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_-]*$') && size(k) <= 255)",message="metric system names may contain only letters, digits, '_' and '-', and must not start with '-'"
	// +optional
	Metrics map[string]MetricSpec `json:"metrics,omitempty"`

	// Methods of the product (counted under `hits`), by system name.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_-]*$') && size(k) <= 255 && k != 'hits')",message="method system names may contain only letters, digits, '_' and '-', must not start with '-', and 'hits' is reserved for the metric"
	// +optional
	Methods map[string]MethodSpec `json:"methods,omitempty"`

	// MappingRules map requests to the product's metrics or methods. A request may be counted by several rules of the same
	// (httpMethod, pattern), as 3scale allows, each for another metric or method: each (httpMethod, pattern,
	// metricMethodRef) appears once.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=httpMethod
	// +listMapKey=pattern
	// +listMapKey=metricMethodRef
	// +optional
	MappingRules []MappingRuleSpec `json:"mappingRules,omitempty"`

	// BackendUsages are the backends this product routes to, keyed by the name of a Backend object in
	// this namespace, each with the path under which the product exposes it.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$') && size(k) <= 253)",message="backendUsages keys must be names of Backend objects (lowercase DNS names)"
	// +optional
	BackendUsages map[string]BackendUsageSpec `json:"backendUsages,omitempty"`

	// Features of the product, by system name: what the developer portal lists on the plans that enable
	// them (ApplicationPlan spec.features). A feature removed from here is deleted in 3scale (it leaves
	// the plans with it); features apimsync never made are left alone. When unset, the product's
	// features are not managed.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_][A-Za-z0-9_/-]+$') && size(k) <= 255)",message="feature system names are 2 to 255 letters, digits, '_', '-' or '/', not starting with '-' or '/'"
	// +optional
	Features map[string]FeatureSpec `json:"features,omitempty"`

	// Policies is the APIcast policy chain, in order. When empty, 3scale's default chain is kept.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	Policies []PolicySpec `json:"policies,omitempty"`

	// Production says how the product's gateway configuration reaches APIcast's production environment.
	// apimsync deploys every change to staging; a person or this field promotes a staging version to
	// production. Unset: apimsync neither promotes nor reads the configuration versions.
	// +optional
	Production *ProductionSpec `json:"production,omitempty"`

	CommonSpec `json:",inline"`
}

// ProductionSpec is the declarative form of 3scale's "promote to production".
// +kubebuilder:validation:XValidation:rule="self.promote == 'Pinned' ? has(self.version) : !has(self.version)",message="version is set with promote: Pinned, and only then"
type ProductionSpec struct {
	// Promote is Manual (apimsync never promotes; status shows whether production runs what staging
	// runs), Latest (each new staging version is promoted once, as soon as apimsync has deployed it) or
	// Pinned (production runs the staging version given in version, promoted once).
	// +kubebuilder:validation:Enum=Manual;Latest;Pinned
	// +kubebuilder:default=Manual
	// +optional
	Promote PromotionPolicy `json:"promote,omitempty"`

	// Version is the staging configuration version production runs, with promote: Pinned.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Version *int `json:"version,omitempty"`
}

// PromotionPolicy says whether apimsync promotes staging configurations to production.
type PromotionPolicy string

// Promotion policies.
const (
	PromoteManual PromotionPolicy = "Manual"
	PromoteLatest PromotionPolicy = "Latest"
	PromotePinned PromotionPolicy = "Pinned"
)

// ProductionStatus tells which gateway configuration each APIcast environment runs.
type ProductionStatus struct {
	// StagingVersion is the latest configuration version of staging (0: none yet).
	// +optional
	StagingVersion int `json:"stagingVersion,omitempty"`
	// ProductionVersion is the latest configuration version of production (0: none yet).
	// +optional
	ProductionVersion int `json:"productionVersion,omitempty"`
	// Current is true when production runs what staging runs (the same latest version).
	Current bool `json:"current"`
	// PromotedVersion is the last staging version apimsync promoted.
	// +optional
	PromotedVersion int `json:"promotedVersion,omitempty"`
	// RefusedVersion is a staging version whose promotion 3scale refused, and RefusedMessage why: it is
	// not tried again until staging has another version or the spec changes.
	// +optional
	RefusedVersion int `json:"refusedVersion,omitempty"`
	// +optional
	RefusedMessage string `json:"refusedMessage,omitempty"`
	// RefusedGeneration is the generation of the spec the refusal answered: an edit tries again.
	// +optional
	RefusedGeneration int64 `json:"refusedGeneration,omitempty"`
}

// BackendUsageSpec says where a product exposes a backend.
type BackendUsageSpec struct {
	// Path under the product's public base URL that routes to the backend, e.g. "/v1/pets"; "/" for all.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="a backend usage path must start with '/'"
	Path string `json:"path"`
}

// DeploymentSpec chooses the gateway deployment: exactly one of its fields.
// +kubebuilder:validation:XValidation:rule="(has(self.apicastHosted) ? 1 : 0) + (has(self.apicastSelfManaged) ? 1 : 0) == 1",message="choose exactly one deployment option: apicastHosted or apicastSelfManaged"
type DeploymentSpec struct {
	// ApicastHosted: 3scale runs the gateway and chooses its public base URLs.
	// +optional
	ApicastHosted *ApicastHostedSpec `json:"apicastHosted,omitempty"`

	// ApicastSelfManaged: you run APIcast; give the public base URLs it serves.
	// +optional
	ApicastSelfManaged *ApicastSelfManagedSpec `json:"apicastSelfManaged,omitempty"`
}

// ApicastHostedSpec configures a gateway that 3scale hosts. It has no settings today.
type ApicastHostedSpec struct{}

// ApicastSelfManagedSpec configures a gateway you run.
type ApicastSelfManagedSpec struct {
	// StagingPublicBaseURL is the address of the staging gateway, e.g. "https://staging.api.example.com".
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="stagingPublicBaseURL must be an absolute http or https URL"
	// +optional
	StagingPublicBaseURL string `json:"stagingPublicBaseURL,omitempty"`

	// ProductionPublicBaseURL is the address of the production gateway, e.g. "https://api.example.com".
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="productionPublicBaseURL must be an absolute http or https URL"
	// +optional
	ProductionPublicBaseURL string `json:"productionPublicBaseURL,omitempty"`
}

// AuthenticationSpec chooses how callers authenticate: exactly one of its fields.
// +kubebuilder:validation:XValidation:rule="(has(self.userKey) ? 1 : 0) + (has(self.appKeyAppID) ? 1 : 0) + (has(self.oidc) ? 1 : 0) == 1",message="choose exactly one authentication mode: userKey, appKeyAppID or oidc"
type AuthenticationSpec struct {
	// UserKey: callers send a single API key.
	// +optional
	UserKey *UserKeyAuthSpec `json:"userKey,omitempty"`

	// AppKeyAppID: callers send an application id and an application key.
	// +optional
	AppKeyAppID *AppKeyAppIDAuthSpec `json:"appKeyAppID,omitempty"`

	// OIDC: callers send an OpenID Connect access token issued by your identity provider.
	// +optional
	OIDC *OIDCAuthSpec `json:"oidc,omitempty"`
}

// CredentialsLocation says where the gateway looks for credentials.
// +kubebuilder:validation:Enum=headers;query;authorization
type CredentialsLocation string

// GatewayOptions are the settings every authentication mode has.
type GatewayOptions struct {
	// CredentialsLocation: "headers" (HTTP headers), "query" (query string or body) or "authorization"
	// (HTTP Basic). Default: query.
	// +optional
	CredentialsLocation CredentialsLocation `json:"credentialsLocation,omitempty"`

	// Security: host header rewrite and the secret token the gateway sends upstream.
	// +optional
	Security *SecuritySpec `json:"security,omitempty"`

	// GatewayResponse: status codes, headers and bodies the gateway answers with on errors. A response
	// removed from the spec goes back to porta's default (403/403/404/429, text/plain, porta's texts).
	// +optional
	GatewayResponse *GatewayResponseSpec `json:"gatewayResponse,omitempty"`
}

// UserKeyAuthSpec configures API-key authentication.
type UserKeyAuthSpec struct {
	// AuthUserKey is the name of the parameter or header carrying the key. Default: user_key.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	AuthUserKey string `json:"authUserKey,omitempty"`

	GatewayOptions `json:",inline"`
}

// AppKeyAppIDAuthSpec configures application id + key authentication.
type AppKeyAppIDAuthSpec struct {
	// AppID is the name of the parameter or header carrying the application id. Default: app_id.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	AppID string `json:"appID,omitempty"`

	// AppKey is the name of the parameter or header carrying the application key. Default: app_key.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	AppKey string `json:"appKey,omitempty"`

	GatewayOptions `json:",inline"`
}

// OIDCAuthSpec configures OpenID Connect authentication.
// +kubebuilder:validation:XValidation:rule="(has(self.issuerEndpoint) ? 1 : 0) + (has(self.issuerEndpointRef) ? 1 : 0) == 1",message="give the OIDC issuer endpoint exactly once: issuerEndpoint or issuerEndpointRef"
type OIDCAuthSpec struct {
	// IssuerType: "keycloak" (Red Hat SSO / Keycloak, clients are synced) or "rest" (any other provider).
	// +kubebuilder:validation:Enum=keycloak;rest
	IssuerType string `json:"issuerType"`

	// IssuerEndpoint is the issuer URL with the client credentials 3scale uses, e.g.
	// "https://zync:secret@sso.example.com/auth/realms/apis". Prefer issuerEndpointRef: it holds credentials.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https']",message="issuerEndpoint must be an absolute http or https URL"
	// +optional
	IssuerEndpoint string `json:"issuerEndpoint,omitempty"`

	// IssuerEndpointRef takes the issuer endpoint from a key of a Secret in this namespace.
	// +optional
	IssuerEndpointRef *LocalSecretKeyRef `json:"issuerEndpointRef,omitempty"`

	// AuthenticationFlow says which OAuth 2.0 flows the provider's clients allow.
	// +optional
	AuthenticationFlow *OIDCAuthenticationFlowSpec `json:"authenticationFlow,omitempty"`

	// JWTClaimWithClientID is the JWT claim that holds the client id. Default: azp.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	JWTClaimWithClientID string `json:"jwtClaimWithClientID,omitempty"`

	// JWTClaimWithClientIDType: "plain" (a claim name) or "liquid" (a Liquid template). Default: plain.
	// +kubebuilder:validation:Enum=plain;liquid
	// +optional
	JWTClaimWithClientIDType string `json:"jwtClaimWithClientIDType,omitempty"`

	GatewayOptions `json:",inline"`
}

// OIDCAuthenticationFlowSpec selects the OAuth 2.0 flows.
type OIDCAuthenticationFlowSpec struct {
	// StandardFlowEnabled: authorization code flow.
	// +optional
	StandardFlowEnabled bool `json:"standardFlowEnabled,omitempty"`
	// ImplicitFlowEnabled: implicit flow.
	// +optional
	ImplicitFlowEnabled bool `json:"implicitFlowEnabled,omitempty"`
	// ServiceAccountsEnabled: client credentials flow.
	// +optional
	ServiceAccountsEnabled bool `json:"serviceAccountsEnabled,omitempty"`
	// DirectAccessGrantsEnabled: resource owner password flow.
	// +optional
	DirectAccessGrantsEnabled bool `json:"directAccessGrantsEnabled,omitempty"`
}

// SecuritySpec holds the gateway's upstream security settings.
type SecuritySpec struct {
	// HostHeader overrides the Host header sent upstream. Removing it empties it in 3scale.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	HostHeader string `json:"hostHeader,omitempty"`

	// SecretToken is sent upstream in X-3scale-proxy-secret-token so the backend can refuse calls that
	// bypass the gateway. Removing it keeps the token 3scale has (porta generates a random one and has
	// no default to go back to); set another value to change it.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	SecretToken string `json:"secretToken,omitempty"`
}

// GatewayErrorResponse is one error answer of the gateway.
type GatewayErrorResponse struct {
	// Status is the HTTP status code.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=599
	Status int32 `json:"status"`
	// ContentType is the Content-Type header of the answer, e.g. "text/plain; charset=us-ascii".
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ContentType string `json:"contentType,omitempty"`
	// Body of the answer.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Body string `json:"body,omitempty"`
}

// GatewayResponseSpec sets the gateway's error answers; unset ones keep 3scale's defaults.
type GatewayResponseSpec struct {
	// AuthFailed: credentials were given but are wrong (default 403).
	// +optional
	AuthFailed *GatewayErrorResponse `json:"authFailed,omitempty"`
	// AuthMissing: no credentials were given (default 403).
	// +optional
	AuthMissing *GatewayErrorResponse `json:"authMissing,omitempty"`
	// NoMatch: no mapping rule matched (default 404).
	// +optional
	NoMatch *GatewayErrorResponse `json:"noMatch,omitempty"`
	// LimitsExceeded: a usage limit was reached (default 429).
	// +optional
	LimitsExceeded *GatewayErrorResponse `json:"limitsExceeded,omitempty"`
}

// PolicySpec is one policy of the APIcast policy chain.
// +kubebuilder:validation:XValidation:rule="!(has(self.configuration) && has(self.configurationRef))",message="give a policy's configuration inline or from a Secret (configurationRef), not both"
type PolicySpec struct {
	// Name of the policy, e.g. "apicast", "cors", "headers".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Version of the policy, e.g. "builtin".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Version string `json:"version"`

	// Configuration of the policy, a JSON object as the policy's schema describes it.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Configuration *apiextensionsv1.JSON `json:"configuration,omitempty"`

	// ConfigurationRef takes the configuration (a JSON object) from a key of a Secret in this namespace,
	// for policies whose settings hold credentials.
	// +optional
	ConfigurationRef *LocalSecretKeyRef `json:"configurationRef,omitempty"`

	// Enabled turns the policy on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// ProductLifecycle is a product's stage: Draft, Published, Deprecated or Retired.
type ProductLifecycle string

// Product lifecycle stages.
const (
	LifecycleDraft      ProductLifecycle = "Draft"
	LifecyclePublished  ProductLifecycle = "Published"
	LifecycleDeprecated ProductLifecycle = "Deprecated"
	LifecycleRetired    ProductLifecycle = "Retired"
)

// EffectiveLifecycle returns the lifecycle, Published when unset.
func (s *ProductSpec) EffectiveLifecycle() ProductLifecycle {
	if s.Lifecycle == "" {
		return LifecyclePublished
	}
	return s.Lifecycle
}

// UsageReportSpec tunes the usage report of a Deprecated or Retired product.
type UsageReportSpec struct {
	// Top is how many accounts the report lists, those with the most applications first. Default 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	Top int32 `json:"top,omitempty"`
}

// ProductUsage reports who still uses a Deprecated or Retired product.
type ProductUsage struct {
	// LiveApplications is the number of the product's applications that are live (not suspended).
	LiveApplications int32 `json:"liveApplications"`
	// SuspendedApplications is the number of its suspended applications.
	SuspendedApplications int32 `json:"suspendedApplications"`
	// Accounts lists the accounts with live applications, those with the most first (at most usageReport.top).
	// +optional
	Accounts []AccountUsage `json:"accounts,omitempty"`
	// RefreshedAt is when the report was read from 3scale.
	RefreshedAt metav1.Time `json:"refreshedAt"`
	// Lifecycle is the stage the report was taken in. A Retired product's first report in that stage is
	// taken as it suspends every live application on the product.
	// +optional
	Lifecycle ProductLifecycle `json:"lifecycle,omitempty"`
}

// AccountUsage is one account's live applications on a product.
type AccountUsage struct {
	// Account is the developer account's organization name.
	Account string `json:"account"`
	// AccountID is its 3scale id.
	AccountID int64 `json:"accountID"`
	// Applications are its live applications on the product.
	Applications []ApplicationUsage `json:"applications"`
}

// ApplicationUsage is one live application of a usage report.
type ApplicationUsage struct {
	// Name of the application.
	Name string `json:"name"`
	// Plan is the name of its application plan.
	Plan string `json:"plan"`
}

// ProductStatus is the observed state of a Product.
type ProductStatus struct {
	CommonStatus `json:",inline"`

	// ProductID is the id of the service in 3scale.
	// +optional
	ProductID int64 `json:"productID,omitempty"`

	// FeatureIDs are the remote ids of the features of spec.features that apimsync made or took, by
	// system name: plans enable them by id, and a feature that leaves the spec is deleted only if it
	// is here.
	// +optional
	FeatureIDs map[string]int64 `json:"featureIDs,omitempty"`

	// Lifecycle is the lifecycle stage last acted upon, and LifecycleChangedAt when it was entered.
	// +optional
	Lifecycle ProductLifecycle `json:"lifecycle,omitempty"`
	// +optional
	LifecycleChangedAt *metav1.Time `json:"lifecycleChangedAt,omitempty"`

	// RetirementSweepPending is true from the move to Retired that apimsync saw (from an earlier stage
	// in this status) until it has suspended every live application on the product, once: a product
	// created Retired, restored or re-applied without status, or adopted, is not swept, and applications
	// a person resumed after the sweep are never suspended again.
	// +optional
	RetirementSweepPending bool `json:"retirementSweepPending,omitempty"`

	// Usage reports who still uses the product while it is Deprecated or Retired.
	// +optional
	Usage *ProductUsage `json:"usage,omitempty"`

	// Production tells the configuration versions of staging and production, with spec.production.
	// +optional
	Production *ProductionStatus `json:"production,omitempty"`

	// Gateway is where callers reach the product, as 3scale holds it: the public base URLs of its
	// staging and production gateways (3scale's own for apicastHosted). An OpenAPI's ActiveDoc can point
	// its servers there.
	// +optional
	Gateway *ProductGatewayStatus `json:"gateway,omitempty"`

	// DeployedHash is a keyed hash of the gateway-relevant state (the product's and that of every Backend
	// it uses) that staging's configuration was last built from: a deploy is due whenever it differs from
	// the current one, whatever an earlier attempt wrote or lost. "Undeployed" while writes apimsync made
	// wait for their deploy; empty when apimsync never deployed the product (adopted, restored without
	// status, or synced by an earlier version): staging is then taken as deployed.
	// +optional
	DeployedHash string `json:"deployedHash,omitempty"`
}

// ProductGatewayStatus is where a product's gateways serve it.
type ProductGatewayStatus struct {
	// StagingPublicBaseURL is the staging gateway's public base URL.
	// +optional
	StagingPublicBaseURL string `json:"stagingPublicBaseURL,omitempty"`
	// ProductionPublicBaseURL is the production gateway's public base URL.
	// +optional
	ProductionPublicBaseURL string `json:"productionPublicBaseURL,omitempty"`
}

// Product is a 3scale product (service): the API that callers subscribe to through application plans.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apiprod,categories=apimsync
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Lifecycle",type=string,JSONPath=`.spec.lifecycle`
// +kubebuilder:printcolumn:name="System name",type=string,JSONPath=`.status.systemName`
// +kubebuilder:printcolumn:name="Product ID",type=integer,JSONPath=`.status.productID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type Product struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ProductSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status ProductStatus `json:"status,omitempty"`
}

// ProductList is a list of Products.
// +kubebuilder:object:root=true
type ProductList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Product `json:"items"`
}

// FeatureSpec is one of a product's features.
type FeatureSpec struct {
	// Name is the feature's name in the developer portal.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`
	// Description of the feature.
	// +optional
	Description string `json:"description,omitempty"`
	// Scope is the kind of plan that may enable it: ApplicationPlan (the default) or ServicePlan (the
	// product's service plans: a ServicePlan's spec.features). 3scale cannot change a feature's scope:
	// a change makes the feature again (it leaves the plans that enabled it).
	// +kubebuilder:validation:Enum=ApplicationPlan;ServicePlan
	// +kubebuilder:default=ApplicationPlan
	// +optional
	Scope string `json:"scope,omitempty"`
}

// BackendVersion is 3scale's backend_version of the product's authentication mode: "1" (user key, the
// default), "2" (app id and app key) or "oidc". It decides what credentials its applications have.
func (s *ProductSpec) BackendVersion() string {
	if a := s.Authentication; a != nil {
		switch {
		case a.AppKeyAppID != nil:
			return "2"
		case a.OIDC != nil:
			return "oidc"
		}
	}
	return "1"
}
