// Package operatorapi holds the specs of 3scale-operator's capability kinds (group
// capabilities.3scale.net: v1beta1, and v1alpha1 for Tenant), as far as apimsync reads them: the
// conversion (internal/convert) and the tests that replay what 3scale-operator does to 3scale
// (test/operatorreplay). They are written from 3scale-operator's CRD reference (doc/*-reference.md) and
// API: the JSON field names are theirs; pointers mark the fields whose absence 3scale-operator treats
// differently from their zero value ("not managed"). The conversion reports a field of its input that is
// not declared here as dropped.
package operatorapi

import (
	"encoding/json"
	"fmt"
)

// LocalRef is a core/v1 LocalObjectReference.
type LocalRef struct {
	Name string `json:"name"`
}

// SecretRef is a core/v1 SecretReference: a namespace of its own is allowed by 3scale-operator,
// never by apimsync.
type SecretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// ObjectRef is a core/v1 ObjectReference; 3scale-operator reads only its name and namespace.
type ObjectRef struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace"`
	Kind            string `json:"kind"`
	APIVersion      string `json:"apiVersion"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
	FieldPath       string `json:"fieldPath"`
}

type Metric struct {
	FriendlyName string `json:"friendlyName"`
	Unit         string `json:"unit"`
	Description  string `json:"description"`
}

type Method struct {
	FriendlyName string `json:"friendlyName"`
	Description  string `json:"description"`
}

type MappingRule struct {
	HTTPMethod      string `json:"httpMethod"`
	Pattern         string `json:"pattern"`
	MetricMethodRef string `json:"metricMethodRef"`
	Increment       *int64 `json:"increment"`
	Last            *bool  `json:"last"`
}

type BackendSpec struct {
	Name               string            `json:"name"`
	SystemName         string            `json:"systemName"`
	PrivateBaseURL     string            `json:"privateBaseURL"`
	Description        string            `json:"description"`
	MappingRules       []MappingRule     `json:"mappingRules"`
	Metrics            map[string]Metric `json:"metrics"`
	Methods            map[string]Method `json:"methods"`
	ProviderAccountRef *LocalRef         `json:"providerAccountRef"`
}

type ProductSpec struct {
	Name               string                  `json:"name"`
	SystemName         string                  `json:"systemName"`
	Description        string                  `json:"description"`
	Deployment         *Deployment             `json:"deployment"`
	MappingRules       []MappingRule           `json:"mappingRules"`
	BackendUsages      map[string]BackendUsage `json:"backendUsages"`
	Metrics            map[string]Metric       `json:"metrics"`
	Methods            map[string]Method       `json:"methods"`
	ApplicationPlans   map[string]Plan         `json:"applicationPlans"`
	ProviderAccountRef *LocalRef               `json:"providerAccountRef"`
	Policies           []Policy                `json:"policies"`
}

type BackendUsage struct {
	Path string `json:"path"`
}

type Deployment struct {
	ApicastHosted      *Hosted      `json:"apicastHosted"`
	ApicastSelfManaged *SelfManaged `json:"apicastSelfManaged"`
}

type Hosted struct {
	Authentication *Authentication `json:"authentication"`
}

type SelfManaged struct {
	Authentication          *Authentication `json:"authentication"`
	StagingPublicBaseURL    *string         `json:"stagingPublicBaseURL"`
	ProductionPublicBaseURL *string         `json:"productionPublicBaseURL"`
}

type Authentication struct {
	UserKey     *UserKeyAuth `json:"userkey"`
	AppKeyAppID *AppKeyAuth  `json:"appKeyAppID"`
	OIDC        *OIDC        `json:"oidc"`
}

// Gateway holds the settings every authentication mode has.
type Gateway struct {
	Credentials     *string          `json:"credentials"`
	Security        *Security        `json:"security"`
	GatewayResponse *GatewayResponse `json:"gatewayResponse"`
}

type UserKeyAuth struct {
	AuthUserKey *string `json:"authUserKey"`
	Gateway
}

type AppKeyAuth struct {
	AppID  *string `json:"appID"`
	AppKey *string `json:"appKey"`
	Gateway
}

type OIDC struct {
	IssuerType               string     `json:"issuerType"`
	IssuerEndpoint           string     `json:"issuerEndpoint"`
	IssuerEndpointRef        *SecretRef `json:"issuerEndpointRef"`
	AuthenticationFlow       *OIDCFlow  `json:"authenticationFlow"`
	JWTClaimWithClientID     *string    `json:"jwtClaimWithClientID"`
	JWTClaimWithClientIDType *string    `json:"jwtClaimWithClientIDType"`
	Gateway
}

type OIDCFlow struct {
	StandardFlowEnabled       bool `json:"standardFlowEnabled"`
	ImplicitFlowEnabled       bool `json:"implicitFlowEnabled"`
	ServiceAccountsEnabled    bool `json:"serviceAccountsEnabled"`
	DirectAccessGrantsEnabled bool `json:"directAccessGrantsEnabled"`
}

type Security struct {
	HostHeader  *string `json:"hostHeader"`
	SecretToken *string `json:"secretToken"`
}

// GatewayResponse is 3scale-operator's flat list of the gateway's error answers.
type GatewayResponse struct {
	ErrorStatusAuthFailed      *int64  `json:"errorStatusAuthFailed"`
	ErrorHeadersAuthFailed     *string `json:"errorHeadersAuthFailed"`
	ErrorAuthFailed            *string `json:"errorAuthFailed"`
	ErrorStatusAuthMissing     *int64  `json:"errorStatusAuthMissing"`
	ErrorHeadersAuthMissing    *string `json:"errorHeadersAuthMissing"`
	ErrorAuthMissing           *string `json:"errorAuthMissing"`
	ErrorStatusNoMatch         *int64  `json:"errorStatusNoMatch"`
	ErrorHeadersNoMatch        *string `json:"errorHeadersNoMatch"`
	ErrorNoMatch               *string `json:"errorNoMatch"`
	ErrorStatusLimitsExceeded  *int64  `json:"errorStatusLimitsExceeded"`
	ErrorHeadersLimitsExceeded *string `json:"errorHeadersLimitsExceeded"`
	ErrorLimitsExceeded        *string `json:"errorLimitsExceeded"`
}

type Policy struct {
	Name             string          `json:"name"`
	Version          string          `json:"version"`
	Configuration    json.RawMessage `json:"configuration"`
	ConfigurationRef *SecretRef      `json:"configurationRef"`
	Enabled          bool            `json:"enabled"`
}

type Plan struct {
	Name                *string       `json:"name"`
	AppsRequireApproval *bool         `json:"appsRequireApproval"`
	TrialPeriod         *int64        `json:"trialPeriod"`
	SetupFee            *Amount       `json:"setupFee"`
	CostMonth           *Amount       `json:"costMonth"`
	PricingRules        []PricingRule `json:"pricingRules"`
	Limits              []Limit       `json:"limits"`
	Published           *bool         `json:"published"`
}

type MetricRef struct {
	SystemName string  `json:"systemName"`
	Backend    *string `json:"backend"`
}

type Limit struct {
	Period          string    `json:"period"`
	Value           int64     `json:"value"`
	MetricMethodRef MetricRef `json:"metricMethodRef"`
}

type PricingRule struct {
	From            int64     `json:"from"`
	To              int64     `json:"to"`
	MetricMethodRef MetricRef `json:"metricMethodRef"`
	PricePerUnit    Amount    `json:"pricePerUnit"`
}

type DeveloperAccountSpec struct {
	OrgName                string    `json:"orgName"`
	MonthlyBillingEnabled  *bool     `json:"monthlyBillingEnabled"`
	MonthlyChargingEnabled *bool     `json:"monthlyChargingEnabled"`
	ProviderAccountRef     *LocalRef `json:"providerAccountRef"`
}

type DeveloperUserSpec struct {
	Username               string    `json:"username"`
	Email                  string    `json:"email"`
	PasswordCredentialsRef SecretRef `json:"passwordCredentialsRef"`
	DeveloperAccountRef    LocalRef  `json:"developerAccountRef"`
	Suspended              bool      `json:"suspended"`
	Role                   *string   `json:"role"`
	ProviderAccountRef     *LocalRef `json:"providerAccountRef"`
}

type ApplicationSpec struct {
	AccountCR           *LocalRef `json:"accountCR"`
	ProductCR           *LocalRef `json:"productCR"`
	ApplicationPlanName string    `json:"applicationPlanName"`
	Name                string    `json:"name"`
	Description         string    `json:"description"`
	Suspend             bool      `json:"suspend"`
	AuthSecretRef       *LocalRef `json:"authSecretRef"`
}

type DocumentRef struct {
	SecretRef *ObjectRef `json:"secretRef"`
	URL       *string    `json:"url"`
}

type ActiveDocSpec struct {
	ProviderAccountRef     *LocalRef   `json:"providerAccountRef"`
	Name                   string      `json:"name"`
	SystemName             *string     `json:"systemName"`
	Description            *string     `json:"description"`
	ActiveDocOpenAPIRef    DocumentRef `json:"activeDocOpenAPIRef"`
	ProductSystemName      *string     `json:"productSystemName"`
	Published              *bool       `json:"published"`
	SkipSwaggerValidations *bool       `json:"skipSwaggerValidations"`
}

// PolicySchema is the manifest of a custom policy; it is carried over as the input has it.
type PolicySchema struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Summary       string          `json:"summary"`
	Description   json.RawMessage `json:"description"`
	Schema        *string         `json:"$schema"`
	Configuration json.RawMessage `json:"configuration"`
}

type CustomPolicyDefinitionSpec struct {
	ProviderAccountRef *LocalRef    `json:"providerAccountRef"`
	Name               string       `json:"name"`
	Version            string       `json:"version"`
	Schema             PolicySchema `json:"schema"`
}

type OpenAPISpec struct {
	OpenAPIRef              DocumentRef `json:"openapiRef"`
	ProviderAccountRef      *LocalRef   `json:"providerAccountRef"`
	ProductionPublicBaseURL *string     `json:"productionPublicBaseURL"`
	StagingPublicBaseURL    *string     `json:"stagingPublicBaseURL"`
	ProductSystemName       *string     `json:"productSystemName"`
	PrivateBaseURL          *string     `json:"privateBaseURL"`
	PrefixMatching          *bool       `json:"prefixMatching"`
	PrivateAPIHostHeader    *string     `json:"privateAPIHostHeader"`
	PrivateAPISecretToken   *string     `json:"privateAPISecretToken"`
	OIDC                    *OIDC       `json:"oidc"`
}

type ProxyConfigPromoteSpec struct {
	ProductCRName string `json:"productCRName"`
	Production    *bool  `json:"production"`
	DeleteCR      *bool  `json:"deleteCR"`
}

type TenantSpec struct {
	Username               string    `json:"username"`
	Email                  string    `json:"email"`
	OrganizationName       string    `json:"organizationName"`
	SystemMasterURL        string    `json:"systemMasterUrl"`
	TenantSecretRef        SecretRef `json:"tenantSecretRef"`
	PasswordCredentialsRef SecretRef `json:"passwordCredentialsRef"`
	MasterCredentialsRef   SecretRef `json:"masterCredentialsRef"`
	FromEmail              *string   `json:"fromEmail"`
	SupportEmail           *string   `json:"supportEmail"`
	FinanceSupportEmail    *string   `json:"financeSupportEmail"`
	SiteAccessCode         *string   `json:"siteAccessCode"`
}

// Amount is an amount of money: a string in 3scale-operator's CRD (e.g. "14.56"); a number, as some
// of its documentation's examples write it, is read as the same text.
type Amount string

// UnmarshalJSON reads a string, or a number as its text.
func (a *Amount) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Amount(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("an amount must be a string such as \"14.56\": %w", err)
	}
	*a = Amount(n.String())
	return nil
}
