package convert

import (
	"encoding/json"
	"fmt"
)

// The specs of 3scale-operator's capability kinds (group capabilities.3scale.net: v1beta1, and v1alpha1
// for Tenant), as far as the conversion reads them. They are written from 3scale-operator's CRD reference
// (doc/*-reference.md) and API: the JSON field names are theirs; pointers mark the fields whose absence
// 3scale-operator treats differently from their zero value ("not managed"). A field of the input that is
// not declared here is reported as dropped (see unknownFields).

// srcLocalRef is a core/v1 LocalObjectReference.
type srcLocalRef struct {
	Name string `json:"name"`
}

// srcSecretRef is a core/v1 SecretReference: a namespace of its own is allowed by 3scale-operator,
// never by apimsync.
type srcSecretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// srcObjectRef is a core/v1 ObjectReference; 3scale-operator reads only its name and namespace.
type srcObjectRef struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace"`
	Kind            string `json:"kind"`
	APIVersion      string `json:"apiVersion"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
	FieldPath       string `json:"fieldPath"`
}

type srcMetric struct {
	FriendlyName string `json:"friendlyName"`
	Unit         string `json:"unit"`
	Description  string `json:"description"`
}

type srcMethod struct {
	FriendlyName string `json:"friendlyName"`
	Description  string `json:"description"`
}

type srcMappingRule struct {
	HTTPMethod      string `json:"httpMethod"`
	Pattern         string `json:"pattern"`
	MetricMethodRef string `json:"metricMethodRef"`
	Increment       *int64 `json:"increment"`
	Last            *bool  `json:"last"`
}

type srcBackendSpec struct {
	Name               string               `json:"name"`
	SystemName         string               `json:"systemName"`
	PrivateBaseURL     string               `json:"privateBaseURL"`
	Description        string               `json:"description"`
	MappingRules       []srcMappingRule     `json:"mappingRules"`
	Metrics            map[string]srcMetric `json:"metrics"`
	Methods            map[string]srcMethod `json:"methods"`
	ProviderAccountRef *srcLocalRef         `json:"providerAccountRef"`
}

type srcProductSpec struct {
	Name               string                     `json:"name"`
	SystemName         string                     `json:"systemName"`
	Description        string                     `json:"description"`
	Deployment         *srcDeployment             `json:"deployment"`
	MappingRules       []srcMappingRule           `json:"mappingRules"`
	BackendUsages      map[string]srcBackendUsage `json:"backendUsages"`
	Metrics            map[string]srcMetric       `json:"metrics"`
	Methods            map[string]srcMethod       `json:"methods"`
	ApplicationPlans   map[string]srcPlan         `json:"applicationPlans"`
	ProviderAccountRef *srcLocalRef               `json:"providerAccountRef"`
	Policies           []srcPolicy                `json:"policies"`
}

type srcBackendUsage struct {
	Path string `json:"path"`
}

type srcDeployment struct {
	ApicastHosted      *srcHosted      `json:"apicastHosted"`
	ApicastSelfManaged *srcSelfManaged `json:"apicastSelfManaged"`
}

type srcHosted struct {
	Authentication *srcAuthentication `json:"authentication"`
}

type srcSelfManaged struct {
	Authentication          *srcAuthentication `json:"authentication"`
	StagingPublicBaseURL    *string            `json:"stagingPublicBaseURL"`
	ProductionPublicBaseURL *string            `json:"productionPublicBaseURL"`
}

type srcAuthentication struct {
	UserKey     *srcUserKeyAuth `json:"userkey"`
	AppKeyAppID *srcAppKeyAuth  `json:"appKeyAppID"`
	OIDC        *srcOIDC        `json:"oidc"`
}

// srcGateway holds the settings every authentication mode has.
type srcGateway struct {
	Credentials     *string             `json:"credentials"`
	Security        *srcSecurity        `json:"security"`
	GatewayResponse *srcGatewayResponse `json:"gatewayResponse"`
}

type srcUserKeyAuth struct {
	AuthUserKey *string `json:"authUserKey"`
	srcGateway
}

type srcAppKeyAuth struct {
	AppID  *string `json:"appID"`
	AppKey *string `json:"appKey"`
	srcGateway
}

type srcOIDC struct {
	IssuerType               string        `json:"issuerType"`
	IssuerEndpoint           string        `json:"issuerEndpoint"`
	IssuerEndpointRef        *srcSecretRef `json:"issuerEndpointRef"`
	AuthenticationFlow       *srcOIDCFlow  `json:"authenticationFlow"`
	JWTClaimWithClientID     *string       `json:"jwtClaimWithClientID"`
	JWTClaimWithClientIDType *string       `json:"jwtClaimWithClientIDType"`
	srcGateway
}

type srcOIDCFlow struct {
	StandardFlowEnabled       bool `json:"standardFlowEnabled"`
	ImplicitFlowEnabled       bool `json:"implicitFlowEnabled"`
	ServiceAccountsEnabled    bool `json:"serviceAccountsEnabled"`
	DirectAccessGrantsEnabled bool `json:"directAccessGrantsEnabled"`
}

type srcSecurity struct {
	HostHeader  *string `json:"hostHeader"`
	SecretToken *string `json:"secretToken"`
}

// srcGatewayResponse is 3scale-operator's flat list of the gateway's error answers.
type srcGatewayResponse struct {
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

type srcPolicy struct {
	Name             string          `json:"name"`
	Version          string          `json:"version"`
	Configuration    json.RawMessage `json:"configuration"`
	ConfigurationRef *srcSecretRef   `json:"configurationRef"`
	Enabled          bool            `json:"enabled"`
}

type srcPlan struct {
	Name                *string          `json:"name"`
	AppsRequireApproval *bool            `json:"appsRequireApproval"`
	TrialPeriod         *int64           `json:"trialPeriod"`
	SetupFee            *srcAmount       `json:"setupFee"`
	CostMonth           *srcAmount       `json:"costMonth"`
	PricingRules        []srcPricingRule `json:"pricingRules"`
	Limits              []srcLimit       `json:"limits"`
	Published           *bool            `json:"published"`
}

type srcMetricRef struct {
	SystemName string  `json:"systemName"`
	Backend    *string `json:"backend"`
}

type srcLimit struct {
	Period          string       `json:"period"`
	Value           int64        `json:"value"`
	MetricMethodRef srcMetricRef `json:"metricMethodRef"`
}

type srcPricingRule struct {
	From            int64        `json:"from"`
	To              int64        `json:"to"`
	MetricMethodRef srcMetricRef `json:"metricMethodRef"`
	PricePerUnit    srcAmount    `json:"pricePerUnit"`
}

type srcDeveloperAccountSpec struct {
	OrgName                string       `json:"orgName"`
	MonthlyBillingEnabled  *bool        `json:"monthlyBillingEnabled"`
	MonthlyChargingEnabled *bool        `json:"monthlyChargingEnabled"`
	ProviderAccountRef     *srcLocalRef `json:"providerAccountRef"`
}

type srcDeveloperUserSpec struct {
	Username               string       `json:"username"`
	Email                  string       `json:"email"`
	PasswordCredentialsRef srcSecretRef `json:"passwordCredentialsRef"`
	DeveloperAccountRef    srcLocalRef  `json:"developerAccountRef"`
	Suspended              bool         `json:"suspended"`
	Role                   *string      `json:"role"`
	ProviderAccountRef     *srcLocalRef `json:"providerAccountRef"`
}

type srcApplicationSpec struct {
	AccountCR           *srcLocalRef `json:"accountCR"`
	ProductCR           *srcLocalRef `json:"productCR"`
	ApplicationPlanName string       `json:"applicationPlanName"`
	Name                string       `json:"name"`
	Description         string       `json:"description"`
	Suspend             bool         `json:"suspend"`
	AuthSecretRef       *srcLocalRef `json:"authSecretRef"`
}

type srcDocumentRef struct {
	SecretRef *srcObjectRef `json:"secretRef"`
	URL       *string       `json:"url"`
}

type srcActiveDocSpec struct {
	ProviderAccountRef     *srcLocalRef   `json:"providerAccountRef"`
	Name                   string         `json:"name"`
	SystemName             *string        `json:"systemName"`
	Description            *string        `json:"description"`
	ActiveDocOpenAPIRef    srcDocumentRef `json:"activeDocOpenAPIRef"`
	ProductSystemName      *string        `json:"productSystemName"`
	Published              *bool          `json:"published"`
	SkipSwaggerValidations *bool          `json:"skipSwaggerValidations"`
}

// srcPolicySchema is the manifest of a custom policy; it is carried over as the input has it.
type srcPolicySchema struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	Summary       string          `json:"summary"`
	Description   json.RawMessage `json:"description"`
	Schema        *string         `json:"$schema"`
	Configuration json.RawMessage `json:"configuration"`
}

type srcCustomPolicyDefinitionSpec struct {
	ProviderAccountRef *srcLocalRef    `json:"providerAccountRef"`
	Name               string          `json:"name"`
	Version            string          `json:"version"`
	Schema             srcPolicySchema `json:"schema"`
}

type srcOpenAPISpec struct {
	OpenAPIRef              srcDocumentRef `json:"openapiRef"`
	ProviderAccountRef      *srcLocalRef   `json:"providerAccountRef"`
	ProductionPublicBaseURL *string        `json:"productionPublicBaseURL"`
	StagingPublicBaseURL    *string        `json:"stagingPublicBaseURL"`
	ProductSystemName       *string        `json:"productSystemName"`
	PrivateBaseURL          *string        `json:"privateBaseURL"`
	PrefixMatching          *bool          `json:"prefixMatching"`
	PrivateAPIHostHeader    *string        `json:"privateAPIHostHeader"`
	PrivateAPISecretToken   *string        `json:"privateAPISecretToken"`
	OIDC                    *srcOIDC       `json:"oidc"`
}

type srcProxyConfigPromoteSpec struct {
	ProductCRName string `json:"productCRName"`
	Production    *bool  `json:"production"`
	DeleteCR      *bool  `json:"deleteCR"`
}

type srcTenantSpec struct {
	Username               string       `json:"username"`
	Email                  string       `json:"email"`
	OrganizationName       string       `json:"organizationName"`
	SystemMasterURL        string       `json:"systemMasterUrl"`
	TenantSecretRef        srcSecretRef `json:"tenantSecretRef"`
	PasswordCredentialsRef srcSecretRef `json:"passwordCredentialsRef"`
	MasterCredentialsRef   srcSecretRef `json:"masterCredentialsRef"`
	FromEmail              *string      `json:"fromEmail"`
	SupportEmail           *string      `json:"supportEmail"`
	FinanceSupportEmail    *string      `json:"financeSupportEmail"`
	SiteAccessCode         *string      `json:"siteAccessCode"`
}

// srcAmount is an amount of money: a string in 3scale-operator's CRD (e.g. "14.56"); a number, as some
// of its documentation's examples write it, is read as the same text.
type srcAmount string

// UnmarshalJSON reads a string, or a number as its text.
func (a *srcAmount) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = srcAmount(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("an amount must be a string such as \"14.56\": %w", err)
	}
	*a = srcAmount(n.String())
	return nil
}
