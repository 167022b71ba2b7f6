// Package convert turns 3scale-operator's capability resources (group capabilities.3scale.net: v1beta1,
// and v1alpha1 for Tenant) into apimsync's (capabilities.apimsync.io/v1alpha1), with a report of
// everything that does not carry over as it was. It is the library behind `kubectl apimsync convert`:
//
//	res, err := convert.Convert(objects, convert.Options{})
//	// res.Objects: typed apimsync objects, TypeMeta set, to write as YAML
//	// res.Findings: the report (Finding.String gives one line each)
//
// The converted objects are written to adopt the 3scale objects 3scale-operator made, with no write when
// 3scale already matches: every system name is explicit (3scale-operator derives a missing one from
// spec.name, apimsync from metadata.name), spec.adoption is IfExists, spec.deletionPolicy says what
// 3scale-operator did on deletion (Delete, or Retain for ActiveDocs and custom policies, which it never
// deleted), and 3scale-operator's defaults are written out where apimsync's differ (the hits metric, the
// apicast policy, monthly billing and charging on, a plan hidden, a user a member). Where 3scale-operator
// left a setting as 3scale had it and apimsync manages it (an unset gateway response, say), a Finding says
// which value apimsync will set. Objects keep their name, namespace (or Options.Namespace; none with
// Options.NoNamespace, for an input of one namespace) and labels (an ApplicationPlan takes its Product's).
//
// What maps to what:
//
//	Backend                  → Backend
//	Product                  → Product (authentication moved out of spec.deployment; backendUsages keyed by
//	                           Backend object name), and one ApplicationPlan per entry of
//	                           spec.applicationPlans, named <product>-<plan system name> (PlanObjectName);
//	                           limits and pricing rules name a backend's metric by Backend object name
//	ProxyConfigPromote       → spec.production (promote: Latest) of the Product (or OpenAPI) it promotes
//	DeveloperAccount         → DeveloperAccount, with the DeveloperUsers of the input that name it in
//	DeveloperUser              spec.users (admins first; passwords as references to the key password)
//	Application              → Application (accountRef; planRef to the converted plan)
//	ActiveDoc                → ActiveDoc (documentRef to the same Secret, its key named; productRef by
//	                           object name)
//	CustomPolicyDefinition   → CustomPolicyDefinition (the manifest as it is)
//	OpenAPI                  → OpenAPI with conventions ThreescaleOperator and 3scale-operator's system
//	                           name: it generates what 3scale-operator's did, x-3scale-product's plans
//	                           included (or, with Options.ExpandOpenAPI, the Product and Backend it
//	                           generated, as ordinary objects)
//	Tenant                   → Tenant (with a master-account Secret the user makes; see its Finding)
//
// A reference to an object by system name (3scale-operator's backend usages, limits, an ActiveDoc's
// product) is rewritten to the object name of the converted object with that system name in the input;
// one the input lacks is taken as the object name it most likely has, and reported.
//
// What the report says (Finding.Severity in parentheses):
//
//   - fields with no equivalent (dropped): a DeveloperUser's own providerAccountRef, an
//     Application's authSecretRef, a Tenant's empty supportEmail or financeSupportEmail (the others
//     and siteAccessCode become a TenantSettings), an OpenAPI's privateAPIHostHeader, privateAPISecretToken and OIDC settings other
//     than the issuer, a ProxyConfigPromote's deleteCR (info), annotations (insecure_skip_verify and
//     3scale-operator's id records among them), a DeveloperUser's labels, and any field 3scale-operator's
//     API does not have;
//   - entries apimsync's schema refuses (dropped): metrics, methods, mapping rules, limits, pricing
//     rules, policies, URLs that break its patterns or bounds, each named with the reason;
//   - objects skipped (dropped): other kinds and groups, ApplicationAuth, objects without what apimsync
//     needs (an account without an admin DeveloperUser in the input, a system name apimsync's pattern
//     refuses, no document source...), DeveloperUsers and ProxyConfigPromotes whose object is not in the
//     input, Products and Backends an OpenAPI generated (unless Options.ExpandOpenAPI);
//   - references rewritten (changed, or info when the name is the same): backend usages, backend
//     metrics of limits and pricing rules, an ActiveDoc's product, an Application's plan, Secret keys
//     now named (password, configuration, issuerEndpoint, admin_password, a document's only key), and
//     what to check when the referenced object is not in the input;
//   - behaviour that changes (changed): settings 3scale-operator left alone that apimsync manages (the
//     deployment option, authentication mode and gateway settings, a plan's name and fees, an ActiveDoc's
//     description, published and skipSwaggerValidations), plans not listed no longer deleted, the users
//     list being complete, a promotion becoming declarative, a URL document
//     becoming a ConfigMap (with the commands to make it), an OpenAPI's system name when the
//     conversion cannot read its document, a Tenant that is never adopted and its master-account Secret
//     (with the command to make it);
//   - defaults written out (info), and per kind ("Kind/*") 3scale-operator's deletion behaviour and how
//     the objects adopt; globally, how to retire 3scale-operator's objects without deleting 3scale's.
//
// Secrets in the input are not converted; they are read to find the key of a Secret that holds an
// OpenAPI document (3scale-operator reads a Secret's only key, whatever its name; apimsync names the key)
// and an OpenAPI document's title (3scale-operator's system name for what an OpenAPI generates).
// SecretsRead names them, for a caller that reads the input from a cluster.
package convert
