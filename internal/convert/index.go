package convert

import (
	"cmp"
	"encoding/base64"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// productInfo is what a 3scale-operator Product becomes.
type productInfo struct {
	outName    string            // the output Product's name
	systemName string            // its system name (explicit, or 3scale-operator's default)
	plans      map[string]string // plan system name -> ApplicationPlan name
	openAPI    string            // when an OpenAPI generated it and becomes an apimsync OpenAPI: that OpenAPI's input name
}

// openAPIInfo is what a 3scale-operator OpenAPI becomes.
type openAPIInfo struct {
	outName    string // the output OpenAPI's name (and so the name of the Product and Backend it generates)
	systemName string // the system name 3scale-operator gave the Product and Backend it generated; "" if unknown
	sysSource  string // where systemName comes from
	products   []string
	backends   []string
}

// index reads what objects refer to one another by: system names, object names, plans, users and
// promotions, before anything is converted.
func (c *converter) index() {
	readable := func(it *item, kinds ...string) bool {
		_, reason := unsupported(it)
		return reason == "" && slices.Contains(kinds, it.kind)
	}
	for _, it := range c.items {
		if it.group == "" && it.version == "v1" && it.kind == "Secret" && it.name != "" {
			c.secrets[nsKey(it.namespace, it.name)] = it
		}
		if readable(it, "Product", "Backend") {
			for _, o := range it.obj.GetOwnerReferences() {
				gv, _ := schema.ParseGroupVersion(o.APIVersion)
				if gv.Group == SourceGroup && o.Kind == "OpenAPI" && o.Controller != nil && *o.Controller {
					c.generated[it.kind+"|"+nsKey(it.namespace, it.name)] = o.Name
				}
			}
		}
	}
	// The system names of the objects OpenAPIs generated are their OpenAPIs'.
	childSystemName := map[string]string{}
	for _, it := range c.items {
		oa, generated := c.generated[it.kind+"|"+nsKey(it.namespace, it.name)]
		if !generated || !readable(it, "Product", "Backend") {
			continue
		}
		var sys string
		if it.kind == "Product" {
			if s, ok := decode[srcProductSpec](c, it); ok {
				sys = s.SystemName
			}
		} else if s, ok := decode[srcBackendSpec](c, it); ok {
			sys = s.SystemName
		}
		if sys != "" {
			childSystemName[nsKey(it.namespace, oa)] = sys
		}
	}
	// OpenAPIs first: the objects they generated resolve to them.
	for _, it := range c.items {
		if !readable(it, "OpenAPI") {
			continue
		}
		s, ok := decode[srcOpenAPISpec](c, it)
		if !ok {
			continue
		}
		info := &openAPIInfo{outName: it.name}
		info.systemName, info.sysSource = c.openAPISystemName(it, s)
		if sys := childSystemName[nsKey(it.namespace, it.name)]; info.systemName == "" && sys != "" {
			info.systemName, info.sysSource = sys, "the system name of the Product it generated"
		}
		if !c.opts.ExpandOpenAPI && info.systemName != "" {
			// The apimsync OpenAPI takes 3scale-operator's system name (spec.systemName), so what it
			// generates adopts what 3scale-operator's generated.
			c.bySysName[nsKey(it.namespace, info.systemName)] = info.outName
			c.backends[nsKey(it.namespace, info.systemName)] = info.outName
		}
		c.openapis[nsKey(it.namespace, it.name)] = info
	}
	for _, it := range c.items {
		switch {
		case readable(it, "Backend"):
			s, ok := decode[srcBackendSpec](c, it)
			if !ok {
				continue
			}
			sys := cmp.Or(s.SystemName, defaultSystemName(s.Name))
			if oa := c.generatedBy(it); oa != nil {
				oa.backends = append(oa.backends, it.name)
			}
			if c.openAPIOf(it) != nil {
				continue
			}
			if _, taken := c.backends[nsKey(it.namespace, sys)]; !taken {
				c.backends[nsKey(it.namespace, sys)] = it.name
			}
		case readable(it, "Product"):
			s, ok := decode[srcProductSpec](c, it)
			if !ok {
				continue
			}
			info := &productInfo{outName: it.name, systemName: cmp.Or(s.SystemName, defaultSystemName(s.Name)), plans: map[string]string{}}
			c.products[nsKey(it.namespace, it.name)] = info
			if oa := c.generatedBy(it); oa != nil {
				oa.products = append(oa.products, it.name)
			}
			if oa := c.openAPIOf(it); oa != nil {
				info.openAPI = c.generated["Product|"+nsKey(it.namespace, it.name)]
				info.outName = oa.outName
				continue
			}
			if _, taken := c.bySysName[nsKey(it.namespace, info.systemName)]; !taken {
				c.bySysName[nsKey(it.namespace, info.systemName)] = it.name
			}
			taken := c.planNames[it.outNS]
			if taken == nil {
				taken = map[string]bool{}
				c.planNames[it.outNS] = taken
			}
			for _, plan := range sortedKeys(s.ApplicationPlans) {
				name := PlanObjectName(info.outName, plan)
				if taken[name] {
					name = ObjectName(info.outName, plan, shortHash(info.outName+"/"+plan))
				}
				taken[name] = true
				info.plans[plan] = name
			}
		case readable(it, "CustomPolicyDefinition"):
			if s, ok := decode[srcCustomPolicyDefinitionSpec](c, it); ok {
				c.policyDefs[nsKey(it.namespace, s.Name+"@"+s.Version)] = true
			}
		case readable(it, "DeveloperAccount"):
			c.accounts[nsKey(it.namespace, it.name)] = true
		case readable(it, "DeveloperUser"):
			if s, ok := decode[srcDeveloperUserSpec](c, it); ok {
				key := nsKey(it.namespace, s.DeveloperAccountRef.Name)
				c.users[key] = append(c.users[key], it)
			}
		case readable(it, "ProxyConfigPromote"):
			if s, ok := decode[srcProxyConfigPromoteSpec](c, it); ok {
				key := nsKey(it.namespace, s.ProductCRName)
				c.promotes[key] = append(c.promotes[key], it)
			}
		}
	}
}

// generatedBy returns the OpenAPI of the input that generated it, if any.
func (c *converter) generatedBy(it *item) *openAPIInfo {
	name, ok := c.generated[it.kind+"|"+nsKey(it.namespace, it.name)]
	if !ok {
		return nil
	}
	return c.openapis[nsKey(it.namespace, name)]
}

// openAPIOf returns the OpenAPI that generated it when that OpenAPI is in the input and becomes an
// apimsync OpenAPI (not with ExpandOpenAPI).
func (c *converter) openAPIOf(it *item) *openAPIInfo {
	if c.opts.ExpandOpenAPI {
		return nil
	}
	return c.generatedBy(it)
}

// openAPISystemName is the system name 3scale-operator gave the Product and Backend an OpenAPI
// generated: spec.productSystemName, else the document's title with every character but letters,
// digits and '_' replaced by '_' (when the document's Secret is in the input).
func (c *converter) openAPISystemName(it *item, s *srcOpenAPISpec) (systemName, source string) {
	if s.ProductSystemName != nil && *s.ProductSystemName != "" {
		return *s.ProductSystemName, "spec.productSystemName"
	}
	d, ok := c.openAPIDocument(it, s)
	if !ok || d.Info.Title == "" {
		return "", ""
	}
	return nonWord.ReplaceAllString(d.Info.Title, "_"), "the title of the document in Secret " + s.OpenAPIRef.SecretRef.Name
}

// openAPIHead is what the conversion reads of an OpenAPI document: its title, and the Secrets its
// x-3scale-product's policies read.
type openAPIHead struct {
	Info struct {
		Title string `json:"title"`
	} `json:"info"`
	Product struct {
		Policies []struct {
			Name             string `json:"name"`
			ConfigurationRef *struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"configurationRef"`
		} `json:"policies"`
	} `json:"x-3scale-product"`
}

// openAPIDocument reads an OpenAPI's document when its Secret is in the input; false otherwise.
func (c *converter) openAPIDocument(it *item, s *srcOpenAPISpec) (openAPIHead, bool) {
	var d openAPIHead
	ref := s.OpenAPIRef.SecretRef
	if ref == nil || ref.Name == "" {
		return d, false
	}
	_, doc, n, found := c.secretDocument(cmp.Or(ref.Namespace, it.namespace), ref.Name)
	if !found || n != 1 {
		return d, false
	}
	return d, yaml.Unmarshal([]byte(doc), &d) == nil
}

// secretDocument returns the only key of a Secret of the input, and its value: 3scale-operator reads an
// OpenAPI document from a Secret's only key, whatever its name. n is the number of keys; found is false
// when the Secret is not in the input.
func (c *converter) secretDocument(namespace, name string) (key, value string, n int, found bool) {
	it, found := c.secrets[nsKey(namespace, name)]
	if !found {
		return "", "", 0, false
	}
	values := map[string]string{}
	if data, ok := it.obj.Object["data"].(map[string]any); ok {
		for k, v := range data {
			s, _ := v.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				b = []byte(s)
			}
			values[k] = string(b)
		}
	}
	if data, ok := it.obj.Object["stringData"].(map[string]any); ok {
		for k, v := range data {
			s, _ := v.(string)
			values[k] = s
		}
	}
	if len(values) != 1 {
		return "", "", len(values), true
	}
	for k, v := range values {
		key, value = k, v
	}
	return key, value, 1, true
}
