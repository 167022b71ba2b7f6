package kit

import (
	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// FeatureScope is the scope of a spec's feature as porta takes it (CamelCase, ApplicationPlan unless
// said): a Product declares its features, an ApplicationPlan enables those of its scope.
func FeatureScope(f v1alpha1.FeatureSpec) string {
	if f.Scope == "" {
		return tsclient.FeatureScopeApplicationPlan
	}
	return f.Scope
}
