package convert

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/internal/operatorapi"
)

// documentKey is the key the conversion names when it cannot know it: a Secret's only key (which
// 3scale-operator reads whatever its name) when the Secret is not in the input, and the key of the
// ConfigMap that replaces a URL.
const documentKey = "openapi"

// SecretsRead returns the Secrets a conversion of in reads when they are in its input: those that hold
// the documents of its ActiveDocs and OpenAPIs (3scale-operator reads a Secret's only key, whatever its
// name; apimsync names the key, and an OpenAPI's title gives the system names of what it generates).
// Each is named once, in the namespace its reference gives or else its object's. kubectl apimsync
// convert --from-cluster reads them with the objects.
func SecretsRead(in []*unstructured.Unstructured) []client.ObjectKey {
	var out []client.ObjectKey
	for _, u := range in {
		if u == nil || u.GroupVersionKind().Group != SourceGroup {
			continue
		}
		var path []string
		switch u.GetKind() {
		case "ActiveDoc":
			path = []string{"spec", "activeDocOpenAPIRef", "secretRef"}
		case "OpenAPI":
			path = []string{"spec", "openapiRef", "secretRef"}
		default:
			continue
		}
		name, _, _ := unstructured.NestedString(u.Object, append(path, "name")...)
		namespace, _, _ := unstructured.NestedString(u.Object, append(path, "namespace")...)
		key := client.ObjectKey{Namespace: cmp.Or(namespace, u.GetNamespace()), Name: name}
		if name != "" && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}

func (c *converter) convertActiveDoc(it *item) {
	s, ok := decode[srcActiveDocSpec](c, it)
	if !ok {
		return
	}
	if s.Name == "" {
		c.skip(it, "spec.name", "an ActiveDoc needs a name")
		return
	}
	ref, ok := c.documentRef(it, "spec.activeDocOpenAPIRef", s.ActiveDocOpenAPIRef)
	if !ok {
		return
	}
	explicit := ""
	if s.SystemName != nil {
		explicit = *s.SystemName
	}
	sys, ok := c.systemName(it, explicit, strings.ToLower(defaultSystemName(s.Name)), "spec.name in lowercase, without anything but letters and digits")
	if !ok {
		return
	}
	d := &v1alpha1.ActiveDoc{TypeMeta: typeMeta("ActiveDoc"), ObjectMeta: c.meta(it, it.name)}
	// 3scale-operator never deleted an ActiveDocs spec: Retain keeps that.
	d.Spec = v1alpha1.ActiveDocSpec{Name: s.Name, SystemName: sys, DocumentRef: ref, CommonSpec: common(s.ProviderAccountRef, v1alpha1.DeletionPolicyRetain)}
	unmanaged := []string{}
	if s.Description != nil {
		d.Spec.Description = *s.Description
	} else {
		unmanaged = append(unmanaged, "description (empty)")
	}
	if s.Published != nil {
		d.Spec.Published = *s.Published
	} else {
		unmanaged = append(unmanaged, "published (false)")
	}
	if s.SkipSwaggerValidations != nil {
		d.Spec.SkipSwaggerValidations = *s.SkipSwaggerValidations
	} else {
		unmanaged = append(unmanaged, "skipSwaggerValidations (false)")
	}
	if len(unmanaged) > 0 {
		c.changed(it, "spec", "not set: %s. 3scale-operator left these as 3scale had them; apimsync sets the value in parentheses: "+
			"write them into the output if 3scale has others", strings.Join(unmanaged, "; "))
	}
	if s.ProductSystemName != nil && *s.ProductSystemName != "" {
		d.Spec.ProductRef = c.productRef(it, "spec.productSystemName", *s.ProductSystemName)
	}
	c.info(it, "spec.activeDocOpenAPIRef", "3scale-operator sent 3scale the document as kin-openapi re-serialized it; apimsync compares documents by meaning, "+
		"so that body is adopted as it is (nothing is rewritten) while the document means the same")
	c.emit(it, d)
}

// productRef resolves the system name of a product to the name of the Product (or OpenAPI) object
// that apimsync refers to.
func (c *converter) productRef(it *item, field, sys string) string {
	if name, ok := c.bySysName[nsKey(it.namespace, sys)]; ok {
		if name == sys {
			c.info(it, field, "productRef names the Product object %q, whose system name is %q too", name, sys)
		} else {
			c.changed(it, field, "productRef names the Product object %q (apimsync), not the product system name %q (3scale-operator)", name, sys)
		}
		return name
	}
	name := ObjectName(sys)
	c.changed(it, field, "no Product with system name %q in the input: productRef is %q, the object name it would most likely have; "+
		"the object waits for it (Orphan) until a Product of that name exists: fix the name if it is another", sys, name)
	return name
}

// documentRef converts where 3scale-operator read an OpenAPI document: a Secret's only key (apimsync
// names the key: found in the Secret when the input has it), or a URL (which apimsync does not fetch: a
// ConfigMap the user fills replaces it). false when there is neither (reported).
func (c *converter) documentRef(it *item, field string, ref srcDocumentRef) (*v1alpha1.DocumentRef, bool) {
	hasURL := ref.URL != nil && *ref.URL != ""
	if ref.SecretRef != nil && ref.SecretRef.Name != "" {
		sr := ref.SecretRef
		if hasURL {
			c.dropped(it, field+".url", "secretRef is set too, and 3scale-operator used it: apimsync reads one document")
		}
		c.localSecret(it, field+".secretRef", srcSecretRef{Name: sr.Name, Namespace: sr.Namespace})
		key, _, n, found := c.secretDocument(cmp.Or(sr.Namespace, it.namespace), sr.Name)
		switch {
		case found && n == 1:
			c.info(it, field+".secretRef", "the Secret's only key, %q, is now named in documentRef.secretKeyRef", key)
		case found:
			key = documentKey
			c.changed(it, field+".secretRef", "the Secret %q has %d keys, and 3scale-operator reads a Secret with exactly one: documentRef.secretKeyRef.key is %q; "+
				"set it to the key that holds the document", sr.Name, n, key)
		default:
			key = documentKey
			c.changed(it, field+".secretRef", "3scale-operator reads the Secret's only key, whatever its name, and apimsync needs the name: the Secret %q is not "+
				"in the input, so documentRef.secretKeyRef.key is %q; set it to the Secret's key (kubectl get secret %s -o jsonpath='{.data}'), "+
				"or convert again with the Secret in the input (-f with a file of it; --from-cluster reads it from the cluster)", sr.Name, key, sr.Name)
		}
		return &v1alpha1.DocumentRef{SecretKeyRef: &v1alpha1.LocalSecretKeyRef{Name: sr.Name, Key: key}}, true
	}
	if !hasURL {
		c.skip(it, field, "neither secretRef nor url names the document (3scale-operator cannot sync it either)")
		return nil, false
	}
	name := ObjectName(strings.TrimSuffix(it.name, "-openapi"), "openapi")
	file := "openapi.json"
	if u, err := url.Parse(*ref.URL); err == nil {
		if ext := strings.ToLower(path.Ext(u.Path)); ext == ".yaml" || ext == ".yml" {
			file = "openapi" + ext
		}
	}
	namespace := ""
	if it.outNS != "" {
		namespace = " -n " + it.outNS
	}
	c.changed(it, field+".url", "apimsync does not fetch documents: documentRef names the key %q of a ConfigMap %q instead, which you make from the URL's document: "+
		"curl -fsSL '%s' -o %s && kubectl%s create configmap %s --from-file=%s=%s (make it again when the document changes)",
		documentKey, name, *ref.URL, file, namespace, name, documentKey, file)
	return &v1alpha1.DocumentRef{ConfigMapKeyRef: &v1alpha1.LocalSecretKeyRef{Name: name, Key: documentKey}}, true
}

func (c *converter) convertOpenAPI(it *item) {
	s, ok := decode[srcOpenAPISpec](c, it)
	if !ok {
		return
	}
	info := c.openapis[nsKey(it.namespace, it.name)]
	if c.opts.ExpandOpenAPI {
		if len(info.products)+len(info.backends) == 0 {
			c.skip(it, "", "with --expand-openapi the Product and Backend it generated are converted instead, and neither is in the input: "+
				"add them (they carry this OpenAPI as their owner), or convert without --expand-openapi")
		} else {
			c.skip(it, "", "with --expand-openapi the Product and Backend it generated are converted instead (%s)",
				strings.Join(append(prefixed("Product/", info.products), prefixed("Backend/", info.backends)...), ", "))
		}
		return
	}
	ref, ok := c.documentRef(it, "spec.openapiRef", s.OpenAPIRef)
	if !ok {
		return
	}
	o := &v1alpha1.OpenAPI{TypeMeta: typeMeta("OpenAPI"), ObjectMeta: c.meta(it, info.outName)}
	o.Spec = v1alpha1.OpenAPISpec{DocumentRef: ref, CommonSpec: common(s.ProviderAccountRef, v1alpha1.DeletionPolicyDelete),
		Conventions: v1alpha1.ConventionsThreescaleOperator, SystemName: info.systemName}
	c.openAPISystemNameFindings(it, info)
	c.openAPIPolicySecrets(it, s)
	// 3scale-operator makes the gateway self-managed when either public base URL is set.
	o.Spec.Deployment = &v1alpha1.DeploymentSpec{ApicastHosted: &v1alpha1.ApicastHostedSpec{}}
	if s.StagingPublicBaseURL != nil || s.ProductionPublicBaseURL != nil {
		sm := &v1alpha1.ApicastSelfManagedSpec{}
		for _, u := range []struct {
			field string
			value *string
			to    *string
		}{{"stagingPublicBaseURL", s.StagingPublicBaseURL, &sm.StagingPublicBaseURL}, {"productionPublicBaseURL", s.ProductionPublicBaseURL, &sm.ProductionPublicBaseURL}} {
			switch {
			case u.value == nil || *u.value == "":
			case !validURL(*u.value, "http", "https") || tooLong(*u.value, 2048):
				c.dropped(it, "spec."+u.field, "%q is not an absolute http or https URL with a host, as apimsync requires: left as 3scale has it", *u.value)
			default:
				*u.to = *u.value
			}
		}
		o.Spec.Deployment = &v1alpha1.DeploymentSpec{ApicastSelfManaged: sm}
		c.info(it, "spec", "the public base URLs are now spec.deployment.apicastSelfManaged (3scale-operator made the gateway self-managed when one is set)")
	}
	if v := s.PrivateBaseURL; v != nil && *v != "" {
		if validURL(*v, "http", "https") && !tooLong(*v, 2048) {
			o.Spec.PrivateBaseURL = *v
		} else {
			c.dropped(it, "spec.privateBaseURL", "%q is not an absolute http or https URL, as apimsync requires: the document's first server is used", *v)
		}
	}
	if s.PrefixMatching != nil {
		o.Spec.PrefixMatching = *s.PrefixMatching
	}
	if sec := c.openAPISecurity(it, s.PrivateAPIHostHeader, s.PrivateAPISecretToken); sec != nil {
		o.Spec.Security = sec
	}
	if s.OIDC != nil {
		o.Spec.OIDC, ok = c.openAPIOIDC(it, s.OIDC)
		if !ok {
			return
		}
	}
	// ProxyConfigPromotes name the Product the OpenAPI generated.
	for _, product := range info.products {
		if p := c.production(it.namespace, product, "OpenAPI", o.Name); p != nil {
			o.Spec.Production = p
		}
	}
	c.info(it, "spec.conventions", "ThreescaleOperator: the Backend, Product and ApplicationPlans %q generates are named as 3scale-operator named them "+
		"(methods from operationIds, the servers' path in front of the patterns, the document's x-3scale-product and x-3scale-operation read as it reads them), "+
		"so they adopt what it made in 3scale with no write; 3scale-operator left the order of mapping rules to chance, and apimsync leaves 3scale's "+
		"order as it is unless a rule is last (x-3scale-operation), where the order changes what is counted: the document's order (paths sorted, "+
		"then verbs) is then set, moving rules once", o.Name)
	for _, generated := range append(prefixed("Product/", info.products), prefixed("Backend/", info.backends)...) {
		c.info(it, "", "%s, which it generated, is replaced by what the apimsync OpenAPI generates", generated)
	}
	c.emit(it, o)
}

// openAPIPolicySecrets says which policies of the document read a Secret of another namespace than the
// one the OpenAPI goes to: 3scale-operator reads it there, apimsync reads a policy's Secret in the
// OpenAPI's namespace only, so the converted OpenAPI is Invalid until the document names one there.
func (c *converter) openAPIPolicySecrets(it *item, s *srcOpenAPISpec) {
	d, ok := c.openAPIDocument(it, s)
	if !ok {
		return
	}
	for i, p := range d.Product.Policies {
		if ref := p.ConfigurationRef; ref != nil && ref.Namespace != "" && ref.Namespace != cmp.Or(it.outNS, it.namespace) {
			c.changed(it, "spec.openapiRef", "the document's x-3scale-product.policies[%d] (%s) reads Secret %q of namespace %q: apimsync reads a policy's "+
				"Secret in the OpenAPI's own namespace only, so the OpenAPI is Invalid until the document's configurationRef names one there: "+
				"copy the Secret where the OpenAPI goes and drop the namespace from the document", i, p.Name, ref.Name, ref.Namespace)
		}
	}
}

// openAPISecurity converts privateAPIHostHeader and privateAPISecretToken into spec.security; nil when
// neither is set.
func (c *converter) openAPISecurity(it *item, host, token *string) *v1alpha1.SecuritySpec {
	sec := &v1alpha1.SecuritySpec{}
	for _, f := range []struct {
		field string
		value *string
		to    *string
	}{{"privateAPIHostHeader", host, &sec.HostHeader}, {"privateAPISecretToken", token, &sec.SecretToken}} {
		switch {
		case f.value == nil:
		case *f.value == "" && f.field == "privateAPISecretToken":
			c.changed(it, "spec."+f.field, "empty: 3scale-operator emptied the token; apimsync leaves the token 3scale has (it never empties it)")
		case *f.value == "":
		case tooLong(*f.value, 255):
			c.dropped(it, "spec."+f.field, "longer than the 255 characters apimsync allows; left as 3scale has it")
		default:
			*f.to = *f.value
			c.info(it, "spec."+f.field, "now spec.security")
		}
	}
	if *sec == (v1alpha1.SecuritySpec{}) {
		return nil
	}
	return sec
}

// openAPISystemNameFindings says whether the objects an apimsync OpenAPI generates adopt the ones
// 3scale-operator made: spec.systemName is 3scale-operator's system name, when the conversion knows it.
func (c *converter) openAPISystemNameFindings(it *item, info *openAPIInfo) {
	if info.systemName == "" {
		c.changed(it, "spec.systemName", "3scale-operator named the generated Product and Backend after the document's title, which the conversion "+
			"cannot read (the document's Secret is not in the input): spec.systemName is left out, and apimsync names them %q, after this object; "+
			"set spec.systemName to their system name in 3scale (kubectl get products.capabilities.3scale.net -o yaml shows it), or convert again with "+
			"the Secret in the input (-f with a file of it; --from-cluster reads it from the cluster)", strings.ReplaceAll(info.outName, ".", "_"))
		return
	}
	c.info(it, "spec.systemName", "%q, the system name 3scale-operator gave the generated Product and Backend (from %s)", info.systemName, info.sysSource)
}

// openAPIOIDC converts an OpenAPI's OIDC settings as 3scale-operator's OpenAPI reads them: the issuer, the
// flows, the client id's claim and the gateway's error answers. Its credentials and security it does not
// read (headers; spec.privateAPIHostHeader and spec.privateAPISecretToken): dropped, saying so.
func (c *converter) openAPIOIDC(it *item, o *srcOIDC) (*v1alpha1.OpenAPIOIDCSpec, bool) {
	const path = "spec.oidc"
	if o.Credentials != nil {
		c.dropped(it, path+".credentials", "3scale-operator's OpenAPI does not read it either: the generated Product takes its credentials from headers, "+
			"as apimsync's does with conventions ThreescaleOperator")
	}
	if o.Security != nil {
		c.dropped(it, path+".security", "3scale-operator's OpenAPI does not read it either: the generated Product's upstream security is "+
			"spec.privateAPIHostHeader and spec.privateAPISecretToken (spec.security here)")
	}
	src := *o
	src.Gateway = operatorapi.Gateway{GatewayResponse: o.GatewayResponse}
	var unmanaged []string // the flows left unset are 3scale-operator's too: none (the import's conventions)
	auth, ok := c.oidc(it, path, &src, &unmanaged)
	if !ok {
		return nil, false
	}
	return &v1alpha1.OpenAPIOIDCSpec{IssuerType: auth.IssuerType, IssuerEndpoint: auth.IssuerEndpoint, IssuerEndpointRef: auth.IssuerEndpointRef,
		AuthenticationFlow: auth.AuthenticationFlow, JWTClaimWithClientID: auth.JWTClaimWithClientID, JWTClaimWithClientIDType: auth.JWTClaimWithClientIDType,
		GatewayResponse: auth.GatewayResponse}, true
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
