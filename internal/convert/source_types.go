package convert

import "github.com/apimsync/apimsync/internal/operatorapi"

// The specs of 3scale-operator's kinds, under the short names the conversion uses.
type (
	srcLocalRef                   = operatorapi.LocalRef
	srcSecretRef                  = operatorapi.SecretRef
	srcMetric                     = operatorapi.Metric
	srcMethod                     = operatorapi.Method
	srcMappingRule                = operatorapi.MappingRule
	srcBackendSpec                = operatorapi.BackendSpec
	srcProductSpec                = operatorapi.ProductSpec
	srcBackendUsage               = operatorapi.BackendUsage
	srcDeployment                 = operatorapi.Deployment
	srcAuthentication             = operatorapi.Authentication
	srcGateway                    = operatorapi.Gateway
	srcUserKeyAuth                = operatorapi.UserKeyAuth
	srcOIDC                       = operatorapi.OIDC
	srcGatewayResponse            = operatorapi.GatewayResponse
	srcPolicy                     = operatorapi.Policy
	srcPlan                       = operatorapi.Plan
	srcMetricRef                  = operatorapi.MetricRef
	srcDeveloperAccountSpec       = operatorapi.DeveloperAccountSpec
	srcDeveloperUserSpec          = operatorapi.DeveloperUserSpec
	srcApplicationSpec            = operatorapi.ApplicationSpec
	srcDocumentRef                = operatorapi.DocumentRef
	srcActiveDocSpec              = operatorapi.ActiveDocSpec
	srcCustomPolicyDefinitionSpec = operatorapi.CustomPolicyDefinitionSpec
	srcOpenAPISpec                = operatorapi.OpenAPISpec
	srcProxyConfigPromoteSpec     = operatorapi.ProxyConfigPromoteSpec
	srcTenantSpec                 = operatorapi.TenantSpec
	srcAmount                     = operatorapi.Amount
)
