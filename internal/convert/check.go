package convert

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// check returns the rules of apimsync's schema (its CRDs' bounds) that obj breaks and that the
// conversion does not settle field by field: a converted object that breaks one is not written out,
// since the API server would refuse it.
func check(obj client.Object) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	length := func(field, s string, lo, hi int) {
		if n := len([]rune(s)); n < lo || n > hi {
			if lo > 0 && n == 0 {
				bad("%s is empty", field)
			} else {
				bad("%s has %d characters, outside %d to %d", field, n, lo, hi)
			}
		}
	}
	most := func(field string, n, hi int) {
		if n > hi {
			bad("%s has %d entries, at most %d are allowed", field, n, hi)
		}
	}
	if !validObjectName(obj.GetName()) {
		bad("metadata.name %q is not a valid object name", obj.GetName())
	}
	switch o := obj.(type) {
	case *v1alpha1.Backend:
		length("spec.name", o.Spec.Name, 1, 255)
		length("spec.description", o.Spec.Description, 0, 1024)
		most("spec.metrics", len(o.Spec.Metrics), 64)
		most("spec.methods", len(o.Spec.Methods), 64)
		most("spec.mappingRules", len(o.Spec.MappingRules), 100)
	case *v1alpha1.Product:
		length("spec.name", o.Spec.Name, 1, 255)
		length("spec.description", o.Spec.Description, 0, 1024)
		most("spec.metrics", len(o.Spec.Metrics), 64)
		most("spec.methods", len(o.Spec.Methods), 64)
		most("spec.mappingRules", len(o.Spec.MappingRules), 100)
		most("spec.backendUsages", len(o.Spec.BackendUsages), 32)
		most("spec.policies", len(o.Spec.Policies), 50)
	case *v1alpha1.ApplicationPlan:
		length("spec.name", o.Spec.Name, 1, 255)
		most("spec.limits", len(o.Spec.Limits), 64)
		most("spec.pricingRules", len(o.Spec.PricingRules), 64)
	case *v1alpha1.DeveloperAccount:
		length("spec.orgName", o.Spec.OrgName, 1, 255)
		if n := len(o.Spec.Users); n < 1 || n > 100 {
			bad("spec.users has %d users, 1 to 100 are allowed", n)
		}
	case *v1alpha1.Application:
		length("spec.name", o.Spec.Name, 1, 255)
		length("spec.description", o.Spec.Description, 0, 4096)
	case *v1alpha1.ActiveDoc:
		length("spec.name", o.Spec.Name, 1, 255)
		length("spec.description", o.Spec.Description, 0, 4096)
	case *v1alpha1.CustomPolicyDefinition:
		length("spec.name", o.Spec.Name, 1, 255)
		length("spec.version", o.Spec.Version, 1, 255)
		if o.Spec.Version == v1alpha1.BuiltinPolicyVersion {
			bad("spec.version is %q, the version of APIcast's own policies", o.Spec.Version)
		}
	case *v1alpha1.Tenant:
		length("spec.organizationName", o.Spec.OrganizationName, 1, 255)
		length("spec.username", o.Spec.Username, 1, 40)
	}
	return problems
}
