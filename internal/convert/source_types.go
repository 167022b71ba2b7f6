package convert

import "github.com/apimsync/apimsync/internal/operatorapi"

// The specs of 3scale-operator's kinds, under the short names the conversion uses.
type (
	srcLocalRef                   = operatorapi.LocalRef
	srcSecretRef                  = operatorapi.SecretRef
	srcObjectRef                  = operatorapi.ObjectRef
	srcMetric                     = operatorapi.Metric
	srcMethod                     = operatorapi.Method
	srcMappingRule                = operatorapi.MappingRule
	srcBackendSpec                = operatorapi.BackendSpec
	srcProductSpec                = operatorapi.ProductSpec
	srcBackendUsage               = operatorapi.BackendUsage
	srcDeployment                 = operatorapi.Deployment
	srcHosted                     = operatorapi.Hosted
	srcSelfManaged                = operatorapi.SelfManaged
	srcAuthentication             = operatorapi.Authentication
	srcGateway                    = operatorapi.Gateway
	srcUserKeyAuth                = operatorapi.UserKeyAuth
	srcAppKeyAuth                 = operatorapi.AppKeyAuth
	srcOIDC                       = operatorapi.OIDC
	srcOIDCFlow                   = operatorapi.OIDCFlow
	srcSecurity                   = operatorapi.Security
	srcGatewayResponse            = operatorapi.GatewayResponse
	srcPolicy                     = operatorapi.Policy
	srcPlan                       = operatorapi.Plan
	srcMetricRef                  = operatorapi.MetricRef
	srcLimit                      = operatorapi.Limit
	srcPricingRule                = operatorapi.PricingRule
	srcDeveloperAccountSpec       = operatorapi.DeveloperAccountSpec
	srcDeveloperUserSpec          = operatorapi.DeveloperUserSpec
	srcApplicationSpec            = operatorapi.ApplicationSpec
	srcDocumentRef                = operatorapi.DocumentRef
	srcActiveDocSpec              = operatorapi.ActiveDocSpec
	srcPolicySchema               = operatorapi.PolicySchema
	srcCustomPolicyDefinitionSpec = operatorapi.CustomPolicyDefinitionSpec
	srcOpenAPISpec                = operatorapi.OpenAPISpec
	srcProxyConfigPromoteSpec     = operatorapi.ProxyConfigPromoteSpec
	srcTenantSpec                 = operatorapi.TenantSpec
	srcAmount                     = operatorapi.Amount
)
