package convert

import (
	"cmp"
	"slices"
	"strings"
)

// leftovers reports the DeveloperUsers and ProxyConfigPromotes no converted object took.
func (c *converter) leftovers() {
	for _, it := range c.items {
		if _, reason := unsupported(it); reason != "" || c.failed[it] {
			continue
		}
		switch it.kind {
		case "DeveloperUser":
			s, ok := decode[srcDeveloperUserSpec](c, it)
			if !ok {
				continue
			}
			account := s.DeveloperAccountRef.Name
			switch {
			case !c.consumed[it]:
				c.skip(it, "spec.developerAccountRef", "its DeveloperAccount %q is not in the input: apimsync keeps users in their account's spec.users; "+
					"convert it with its account", account)
			case c.emitted["DeveloperAccount|"+it.outNS+"|"+account] == "":
				c.skip(it, "spec.developerAccountRef", "its DeveloperAccount %q is not converted (see its findings)", account)
			}
		case "ProxyConfigPromote":
			if c.consumed[it] {
				continue
			}
			s, ok := decode[srcProxyConfigPromoteSpec](c, it)
			if !ok {
				continue
			}
			if s.Production != nil && *s.Production {
				c.skip(it, "spec.productCRName", "the Product %q is not in the input or not converted: set spec.production.promote: Latest on its apimsync Product "+
					"(the promotion becomes declarative: every new staging configuration is promoted to production)", s.ProductCRName)
			} else {
				c.skip(it, "spec.productCRName", "a promotion to staging: apimsync deploys every change to staging itself; nothing to convert")
			}
		}
	}
}

// deletionNotes say, per apimsync kind made, what 3scale-operator did when its object was deleted and
// the deletion policy the conversion wrote to keep that.
var deletionNotes = map[string]string{
	"Backend": "3scale-operator deletes the backend in 3scale when its Backend is deleted (a finalizer, after removing it from the Products that use it): " +
		"deletionPolicy Delete does the same",
	"Product": "3scale-operator deletes the product in 3scale, with its plans, when its Product is deleted (a finalizer): deletionPolicy Delete does the same",
	"ApplicationPlan": "3scale-operator deleted a plan removed from Product.spec.applicationPlans, and all of them with the product: deletionPolicy Delete " +
		"deletes the plan when its ApplicationPlan is deleted (and 3scale deletes a product's plans with it)",
	"DeveloperAccount": "3scale-operator deletes the account when its DeveloperAccount is deleted, and a user when its DeveloperUser is (finalizers): " +
		"deletionPolicy Delete deletes the account, and a user removed from spec.users is deleted",
	"Application": "3scale-operator deletes the application when its Application is deleted (a finalizer): deletionPolicy Delete does the same",
	"ActiveDoc": "3scale-operator leaves the ActiveDocs spec in 3scale when its ActiveDoc is deleted (no finalizer): deletionPolicy Retain keeps that " +
		"(apimsync's default, Delete, would delete it)",
	"CustomPolicyDefinition": "3scale-operator leaves the policy in 3scale's registry when its CustomPolicyDefinition is deleted (no finalizer): " +
		"deletionPolicy Retain keeps that (apimsync's default, Delete, would delete it)",
	"OpenAPI": "deleting a 3scale-operator OpenAPI deletes the Product and Backend it generated, and their finalizers delete them in 3scale: " +
		"deletionPolicy Delete, which the apimsync OpenAPI passes on to what it generates, does the same",
	"Tenant": "3scale-operator schedules the tenant's deletion in 3scale when its Tenant is deleted (a finalizer): deletionPolicy Delete does the same",
}

// adoptionNotes say how apimsync finds the 3scale object an object of each kind adopts.
var adoptionNotes = map[string]string{
	"Backend":                "found by system name",
	"Product":                "found by system name",
	"ApplicationPlan":        "found by system name within its product",
	"DeveloperAccount":       "found by the username of its first admin",
	"Application":            "found by name within its account",
	"ActiveDoc":              "found by system name",
	"CustomPolicyDefinition": "found by name and version",
}

// finalizerKinds are 3scale-operator's kinds whose finalizers delete 3scale objects.
var finalizerKinds = []string{"Backend", "Product", "DeveloperAccount", "DeveloperUser", "Application", "Tenant", "OpenAPI"}

// notes adds the kind-wide and global findings, and orders the findings by input object.
func (c *converter) notes() {
	made := map[string]bool{}
	for _, o := range c.objects {
		made[o.GetObjectKind().GroupVersionKind().Kind] = true
	}
	for _, kind := range outputKinds {
		if made[kind] {
			c.findings = append(c.findings, Finding{Object: kind + "/*", Field: "spec.deletionPolicy", Message: deletionNotes[kind], Severity: SeverityInfo})
			switch note := adoptionNotes[kind]; {
			case kind == "OpenAPI":
				c.findings = append(c.findings, Finding{Object: kind + "/*", Field: "spec.adoption", Severity: SeverityInfo,
					Message: "IfExists, passed on to the Backend and Product each OpenAPI generates: they adopt the 3scale objects of their system name, " +
						"which apimsync derives from the OpenAPI's name (see each OpenAPI's findings)"})
			case note != "":
				c.findings = append(c.findings, Finding{Object: kind + "/*", Field: "spec.adoption", Severity: SeverityInfo,
					Message: "IfExists: each object adopts the 3scale object 3scale-operator made (" + note + "; an Event says so) instead of making another"})
			}
		}
	}
	var deleting []string
	for _, kind := range finalizerKinds {
		if c.kinds[kind] {
			deleting = append(deleting, kind)
		}
	}
	if len(deleting) > 0 {
		c.findings = append(c.findings, Finding{Severity: SeverityInfo, Message: "3scale-operator's finalizers delete the 3scale objects of its " +
			strings.Join(deleting, ", ") + " objects when those are deleted, and both operators would write the same 3scale objects: stop 3scale-operator first, " +
			"check that kubectl apimsync diff exits 0, apply, and once every object is Synced with no write, remove the finalizers of its objects, " +
			"then delete them (docs/migration.md)"})
	}
	if c.opts.Namespace != "" {
		c.findings = append(c.findings, Finding{Severity: SeverityInfo, Message: "every object goes to namespace " + c.opts.Namespace +
			": the Secrets and ConfigMaps they name must exist there (apimsync's references never leave an object's namespace)"})
	}
	// Findings of one input object together, in the order of the input objects; kind-wide notes, then
	// global ones, last.
	position := map[string]int{}
	for i, it := range c.items {
		key := it.ref + "|" + it.namespace
		if _, ok := position[key]; !ok {
			position[key] = i
		}
	}
	rank := func(f Finding) int {
		switch {
		case f.Object == "":
			return len(c.items) + 2
		case strings.HasSuffix(f.Object, "/*"):
			return len(c.items) + 1
		}
		if p, ok := position[f.Object+"|"+f.Namespace]; ok {
			return p
		}
		return len(c.items)
	}
	slices.SortStableFunc(c.findings, func(a, b Finding) int { return cmp.Compare(rank(a), rank(b)) })
}
