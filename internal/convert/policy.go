package convert

import (
	"encoding/json"
	"regexp"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// apicastManifestSchemas are the $schema values current porta releases take in a policy manifest.
var apicastManifestSchemas = map[string]bool{"http://apicast.io/policy-v1.1/schema": true, "http://apicast.io/policy-v1/schema": true,
	"http://apicast.io/policy-v1.1/schema#": true, "http://apicast.io/policy-v1/schema#": true}

// policyVersion is the pattern apimsync checks a custom policy's version against (as porta does: a
// version such as 1, 0.1 or 1.2.3 at its start).
var policyVersion = regexp.MustCompile(`(?m)^((\d+\.)?(\d+\.)?(\*|\d+))|builtin$`)

func (c *converter) convertPolicy(it *item) {
	s, ok := decode[srcCustomPolicyDefinitionSpec](c, it)
	if !ok {
		return
	}
	switch {
	case s.Name == "" || s.Version == "":
		c.skip(it, "spec", "a CustomPolicyDefinition needs a name and a version")
		return
	case s.Version == v1alpha1.BuiltinPolicyVersion:
		c.skip(it, "spec.version", "version builtin names APIcast's own policies; apimsync refuses it for a custom policy")
		return
	}
	// The manifest goes as the input has it: porta stores what 3scale-operator sent, and apimsync compares
	// the two as JSON values.
	schema, _ := it.obj.Object["spec"].(map[string]any)["schema"].(map[string]any)
	raw, err := json.Marshal(schema)
	if err != nil || schema == nil {
		c.skip(it, "spec.schema", "the manifest is not a JSON object")
		return
	}
	p := &v1alpha1.CustomPolicyDefinition{TypeMeta: typeMeta("CustomPolicyDefinition"), ObjectMeta: c.meta(it, it.name)}
	// 3scale-operator never deleted a policy from the registry: Retain keeps that.
	p.Spec = v1alpha1.CustomPolicyDefinitionSpec{Name: s.Name, Version: s.Version, Schema: apiextensionsv1.JSON{Raw: raw},
		CommonSpec: common(s.ProviderAccountRef, v1alpha1.DeletionPolicyRetain)}
	if s.Schema.Version != s.Version {
		c.changed(it, "spec.schema.version", "%q differs from spec.version %q: apimsync requires them equal, so the CustomPolicyDefinition is Invalid "+
			"(InvalidPolicySchema) until they are (changing the manifest rewrites it in 3scale, which porta refuses while a product uses the policy)", s.Schema.Version, s.Version)
	}
	if !policyVersion.MatchString(s.Version) {
		c.changed(it, "spec.version", "%q is not a version such as 1, 0.1 or 1.2.3: apimsync finds the manifest Invalid (InvalidPolicySchema)", s.Version)
	}
	if n := len([]rune(s.Schema.Summary)); n > 75 {
		c.changed(it, "spec.schema.summary", "%d characters: apimsync takes at most 75, so the CustomPolicyDefinition is Invalid (InvalidPolicySchema) until it is shortened", n)
	}
	if s.Schema.Schema != nil && !apicastManifestSchemas[*s.Schema.Schema] {
		c.info(it, "spec.schema.$schema", "%q is not one of APIcast's manifest URIs (http://apicast.io/policy-v1.1/schema): current porta releases refuse it when the "+
			"policy is written, which adopting an unchanged policy does not do; change it (or leave it out) before changing the policy", *s.Schema.Schema)
	}
	c.emit(it, p)
}
