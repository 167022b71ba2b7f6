package olmbundle

import (
	"regexp"
	"sort"
	"strings"

	operators "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ownedCRD describes an owned CRD for the console: its kind, the description of its schema, a
// descriptor for each top-level field of spec and status (the console's form and details page), and the
// Kubernetes resources it reads (Secrets, ConfigMaps).
func ownedCRD(c *apiextv1.CustomResourceDefinition) operators.CRDDescription {
	v := storageVersion(c)
	d := operators.CRDDescription{Name: c.Name, Version: v.Name, Kind: c.Spec.Names.Kind, DisplayName: words(c.Spec.Names.Kind)}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return d
	}
	root := v.Schema.OpenAPIV3Schema
	d.Description = firstSentence(root.Description)
	spec, status := root.Properties["spec"], root.Properties["status"]
	for _, name := range sortedKeys(spec.Properties) {
		p := spec.Properties[name]
		d.SpecDescriptors = append(d.SpecDescriptors, operators.SpecDescriptor{Path: name, DisplayName: words(name),
			Description: firstSentence(p.Description), XDescriptors: specXDescriptors(name, p)})
	}
	for _, name := range sortedKeys(status.Properties) {
		p := status.Properties[name]
		d.StatusDescriptors = append(d.StatusDescriptors, operators.StatusDescriptor{Path: name, DisplayName: words(name),
			Description: firstSentence(p.Description), XDescriptors: statusXDescriptors(name, p)})
	}
	d.Resources = resourcesOf(spec)
	return d
}

// secretRef tells a field that names a Secret of the namespace (credentialsRef, providerAccountRef...).
var secretRef = regexp.MustCompile(`(?i)secret|credentialsRef|providerAccountRef`)

func specXDescriptors(name string, p apiextv1.JSONSchemaProps) []string {
	switch {
	case secretRef.MatchString(name) && (p.Type == "object" || p.Type == "string"):
		return []string{"urn:alm:descriptor:io.kubernetes:Secret"}
	case p.Type == "boolean":
		return []string{"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	case p.Type == "string" && len(p.Enum) > 0:
		out := make([]string, 0, len(p.Enum))
		for _, e := range p.Enum {
			out = append(out, "urn:alm:descriptor:com.tectonic.ui:select:"+strings.Trim(string(e.Raw), `"`))
		}
		return out
	case p.Type == "integer" || p.Type == "number":
		return []string{"urn:alm:descriptor:com.tectonic.ui:number"}
	case p.Type == "string":
		return []string{"urn:alm:descriptor:com.tectonic.ui:text"}
	case p.Type == "array":
		return []string{"urn:alm:descriptor:com.tectonic.ui:arrayFieldGroup:" + name}
	default:
		return []string{"urn:alm:descriptor:com.tectonic.ui:fieldGroup:" + name}
	}
}

func statusXDescriptors(name string, p apiextv1.JSONSchemaProps) []string {
	switch {
	case name == "conditions":
		return []string{"urn:alm:descriptor:io.kubernetes.conditions"}
	case secretRef.MatchString(name) && p.Type == "string":
		return []string{"urn:alm:descriptor:io.kubernetes:Secret"}
	case p.Type == "string" || p.Type == "integer" || p.Type == "number" || p.Type == "boolean":
		return []string{"urn:alm:descriptor:text"}
	default:
		return nil
	}
}

// resourcesOf lists the core kinds an object references from its spec.
func resourcesOf(spec apiextv1.JSONSchemaProps) []operators.APIResourceReference {
	var out []operators.APIResourceReference
	seen := map[string]bool{}
	var walk func(name string, p apiextv1.JSONSchemaProps)
	walk = func(name string, p apiextv1.JSONSchemaProps) {
		kind := ""
		switch {
		case secretRef.MatchString(name):
			kind = "Secret"
		case strings.Contains(strings.ToLower(name), "configmap"):
			kind = "ConfigMap"
		}
		if kind != "" && !seen[kind] {
			seen[kind] = true
			out = append(out, operators.APIResourceReference{Name: strings.ToLower(kind) + "s", Kind: kind, Version: "v1"})
		}
		for _, n := range sortedKeys(p.Properties) {
			walk(n, p.Properties[n])
		}
		if p.Items != nil && p.Items.Schema != nil {
			walk(name, *p.Items.Schema)
		}
	}
	walk("spec", spec)
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// words turns a Go or JSON name into words for a person: "credentialsRef" → "Credentials Ref",
// "ApplicationPlan" → "Application Plan", "productID" → "Product ID".
func words(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		upper := r >= 'A' && r <= 'Z'
		if i > 0 && upper {
			prevLower := runes[i-1] >= 'a' && runes[i-1] <= 'z'
			nextLower := i+1 < len(runes) && runes[i+1] >= 'a' && runes[i+1] <= 'z'
			prevUpper := runes[i-1] >= 'A' && runes[i-1] <= 'Z'
			if prevLower || (prevUpper && nextLower) {
				b.WriteByte(' ')
			}
		}
		if i == 0 {
			r = []rune(strings.ToUpper(string(r)))[0]
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstSentence is the first sentence of a schema description (its first paragraph, joined).
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(strings.SplitN(s, "\n\n", 2)[0]), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
