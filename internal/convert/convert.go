package convert

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// SourceGroup is the API group of 3scale-operator's capability kinds.
const SourceGroup = "capabilities.3scale.net"

// Severities of a Finding.
const (
	// SeverityDropped: something of the input has no equivalent and is not in the output (a field, an
	// entry, or a whole object that is skipped).
	SeverityDropped = "dropped"
	// SeverityChanged: carried over, but with another value, name or behaviour (a reference rewritten to
	// an object name, a setting 3scale-operator left alone that apimsync manages...). Read these before
	// applying the output.
	SeverityChanged = "changed"
	// SeverityInfo: nothing is lost; what the conversion did and why (a default written out, a plan made
	// into its own object, what to do next).
	SeverityInfo = "info"
)

// Options tune a conversion. The zero value is the usual choice.
type Options struct {
	// Namespace, when set, puts every converted object in this namespace (else each keeps its own).
	// References between the input's objects are still resolved within their own namespaces.
	Namespace string

	// NoNamespace writes the objects without a namespace, to be applied to any (kubectl apply -n, or a
	// kustomization's namespace), when the input's objects are all of one namespace; of several, objects
	// of one name would collide, so each keeps its own and a Finding says so. Namespace, when set, wins.
	NoNamespace bool

	// ExpandOpenAPI (kubectl apimsync convert --expand-openapi, the name the report uses) converts the
	// Product and Backend a 3scale-operator OpenAPI generated (when they are in
	// the input; they carry the OpenAPI as their controller owner) as ordinary objects, and skips the
	// OpenAPI. They keep the system names, methods and plans 3scale-operator made, so they adopt 3scale's
	// objects as they are, and no longer follow the document. By default the OpenAPI becomes an apimsync
	// OpenAPI with 3scale-operator's conventions and system name, which generates the same objects from
	// the document (x-3scale-product's plans included), and the objects 3scale-operator generated are
	// skipped.
	ExpandOpenAPI bool
}

// Result is what a conversion made and its report.
type Result struct {
	// Objects are the apimsync objects (capabilities.apimsync.io/v1alpha1, *v1alpha1.Backend and so on),
	// TypeMeta set, ordered by kind (dependencies first: Tenant, CustomPolicyDefinition, Backend,
	// Product, ApplicationPlan, DeveloperAccount, Application, ActiveDoc, OpenAPI), then namespace and
	// name: ready to be written as YAML.
	Objects []client.Object
	// Findings report every field with no equivalent, every reference rewritten, every default written
	// out, every object skipped, in a deterministic order.
	Findings []Finding
}

// Finding is one item of the report.
type Finding struct {
	// Object is the input object the finding is about, "Kind/name" (e.g. "Product/petstore"); "Kind/*"
	// for a note about every object of a kind; empty for a note about the whole conversion.
	Object string `json:"object,omitempty"`
	// Namespace of that input object (empty for kind-wide and global notes, or objects without one).
	Namespace string `json:"namespace,omitempty"`
	// Field is the path in the input object, e.g. "spec.applicationPlans.basic.limits[0]"; empty when the
	// finding is about the whole object.
	Field string `json:"field,omitempty"`
	// Message says what happened and, where something is to be done, what.
	Message string `json:"message"`
	// Severity is SeverityDropped, SeverityChanged or SeverityInfo.
	Severity string `json:"severity"`
}

// String formats a finding on one line: "changed Product/petstore (ns) spec.x: message".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Severity)
	if f.Object != "" {
		b.WriteString(" " + f.Object)
	}
	if f.Namespace != "" {
		b.WriteString(" (" + f.Namespace + ")")
	}
	if f.Field != "" {
		b.WriteString(" " + f.Field)
	}
	b.WriteString(": " + f.Message)
	return b.String()
}

// Convert reads 3scale-operator objects and returns the apimsync objects that replace them, and a report.
// Objects of kind List (as `kubectl get -o yaml` writes) are read item by item. A Finding reports each
// object that cannot be converted; the error is non-nil only when the input is not a list of objects (a
// nil entry).
func Convert(in []*unstructured.Unstructured, opts Options) (*Result, error) {
	c := newConverter(opts)
	if err := c.collect(in); err != nil {
		return nil, err
	}
	c.index()
	for _, it := range c.items {
		c.convert(it)
	}
	c.leftovers()
	c.notes()
	slices.SortStableFunc(c.objects, func(a, b client.Object) int {
		ka, kb := a.GetObjectKind().GroupVersionKind().Kind, b.GetObjectKind().GroupVersionKind().Kind
		return cmp.Or(cmp.Compare(outputRank(ka), outputRank(kb)), cmp.Compare(a.GetNamespace(), b.GetNamespace()),
			cmp.Compare(a.GetName(), b.GetName()))
	})
	return &Result{Objects: c.objects, Findings: c.findings}, nil
}

// item is one input object.
type item struct {
	obj                         *unstructured.Unstructured
	group, version, kind        string
	namespace, name, outNS, ref string
}

// converter holds a conversion's state: the input, what it indexes, the output and the report.
type converter struct {
	opts     Options
	items    []*item
	objects  []client.Object
	findings []Finding

	emitted  map[string]string // "Kind|namespace|name" of an output object -> the input object it came from
	reported map[*item]bool    // input objects whose metadata was reported

	secrets    map[string]*item           // core Secrets of the input, by nsKey
	backends   map[string]string          // backend system name (nsKey) -> output Backend name
	products   map[string]*productInfo    // Product object name (nsKey) -> what it becomes
	bySysName  map[string]string          // product system name (nsKey) -> output Product (or OpenAPI) name
	openapis   map[string]*openAPIInfo    // OpenAPI object name (nsKey) -> what it becomes
	policyDefs map[string]bool            // "name@version" (nsKey) of the input's CustomPolicyDefinitions
	accounts   map[string]bool            // DeveloperAccount names (nsKey) of the input
	users      map[string][]*item         // DeveloperUsers by the account they name (nsKey)
	promotes   map[string][]*item         // ProxyConfigPromotes by the Product they name (nsKey)
	planNames  map[string]map[string]bool // ApplicationPlan names taken, by output namespace
	consumed   map[*item]bool             // DeveloperUsers and ProxyConfigPromotes used by another object
	generated  map[string]string          // "Kind|nsKey" of objects an OpenAPI generated -> the OpenAPI's name
	kinds      map[string]bool            // input kinds converted (for the kind-wide notes)
	decoded    map[*item]any              // specs decoded by index, reused by convert
	failed     map[*item]bool             // objects reported as not convertible (a spec that cannot be read...)
	guessed    map[string]bool            // backend system names taken for object names, by object (reported once)
}

func newConverter(opts Options) *converter {
	return &converter{opts: opts, emitted: map[string]string{}, reported: map[*item]bool{}, secrets: map[string]*item{},
		backends: map[string]string{}, products: map[string]*productInfo{}, bySysName: map[string]string{},
		openapis: map[string]*openAPIInfo{}, policyDefs: map[string]bool{}, accounts: map[string]bool{},
		users: map[string][]*item{}, promotes: map[string][]*item{}, planNames: map[string]map[string]bool{},
		consumed: map[*item]bool{}, generated: map[string]string{}, kinds: map[string]bool{},
		decoded: map[*item]any{}, failed: map[*item]bool{}, guessed: map[string]bool{}}
}

// nsKey keys a name within a namespace of the input.
func nsKey(namespace, name string) string { return namespace + "/" + name }

// The input's kinds, in the order they are converted (what others refer to first).
var sourceKinds = []string{"Tenant", "CustomPolicyDefinition", "Backend", "Product", "ProxyConfigPromote", "DeveloperAccount",
	"DeveloperUser", "Application", "ApplicationAuth", "ActiveDoc", "OpenAPI"}

// sourceVersions are the versions of 3scale-operator's kinds the conversion reads.
var sourceVersions = map[string]string{"Tenant": "v1alpha1"}

func sourceVersion(kind string) string {
	if v, ok := sourceVersions[kind]; ok {
		return v
	}
	return "v1beta1"
}

func sourceRank(it *item) int {
	if it.group == SourceGroup {
		if i := slices.Index(sourceKinds, it.kind); i >= 0 {
			return i
		}
	}
	return len(sourceKinds)
}

// The output's kinds, in the order of Result.Objects.
var outputKinds = []string{"Tenant", "CustomPolicyDefinition", "Backend", "Product", "ApplicationPlan", "DeveloperAccount",
	"Application", "ActiveDoc", "OpenAPI"}

func outputRank(kind string) int {
	if i := slices.Index(outputKinds, kind); i >= 0 {
		return i
	}
	return len(outputKinds)
}

// collect reads the input into items, Lists flattened, in conversion order.
func (c *converter) collect(in []*unstructured.Unstructured) error {
	var add func(u *unstructured.Unstructured, where string) error
	add = func(u *unstructured.Unstructured, where string) error {
		if u == nil || u.Object == nil {
			return fmt.Errorf("convert: %s is nil", where)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return fmt.Errorf("convert: %s: %w", where, err)
			}
			for i := range list.Items {
				if err := add(&list.Items[i], fmt.Sprintf("%s.items[%d]", where, i)); err != nil {
					return err
				}
			}
			return nil
		}
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		it := &item{obj: u, group: gv.Group, version: gv.Version, kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}
		it.ref = it.kind + "/" + it.name
		it.outNS = cmp.Or(c.opts.Namespace, it.namespace)
		c.items = append(c.items, it)
		return nil
	}
	for i, u := range in {
		if err := add(u, fmt.Sprintf("input[%d]", i)); err != nil {
			return err
		}
	}
	c.dropNamespaces()
	slices.SortStableFunc(c.items, func(a, b *item) int {
		return cmp.Or(cmp.Compare(sourceRank(a), sourceRank(b)), cmp.Compare(a.group, b.group), cmp.Compare(a.kind, b.kind),
			cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	// The same object twice: the first is kept.
	seen := map[string]bool{}
	kept := c.items[:0]
	for _, it := range c.items {
		key := strings.Join([]string{it.group, it.kind, it.namespace, it.name}, "|")
		if seen[key] && it.name != "" {
			c.add(it, SeverityDropped, "", "skipped: the input has this object twice; the first one is converted")
			continue
		}
		seen[key] = true
		kept = append(kept, it)
	}
	c.items = kept
	return nil
}

// unsupported says why it is not converted ("" when it is a 3scale-operator kind and version the
// conversion reads), and the severity of that finding.
func unsupported(it *item) (severity, reason string) {
	switch {
	case it.name == "":
		return SeverityDropped, "skipped: the object has no name"
	case it.group == "" && it.version == "v1" && it.kind == "Secret":
		return SeverityInfo, "not converted: apimsync uses Secrets as they are (read only to find the key of a Secret that holds an OpenAPI document)"
	case it.group == "apps.3scale.net" && it.kind == "APIManager":
		return SeverityDropped, "skipped: the 3scale installation is not converted; apimsync uses it as it is (an object without a provider-account Secret syncs to the installation's default tenant, as with 3scale-operator)"
	case it.group != SourceGroup:
		return SeverityDropped, fmt.Sprintf("skipped: %s %s is not a 3scale-operator capability kind (group %s)", cmp.Or(it.obj.GetAPIVersion(), "(no apiVersion)"), it.kind, SourceGroup)
	case it.kind == "ApplicationAuth":
		return SeverityDropped, "skipped: apimsync has no ApplicationAuth; give the Application spec.credentialsRef, a Secret with apimsync's keys " +
			"(user_key, or app_id and app_keys, comma-separated) instead of 3scale-operator's (UserKey, ApplicationID, ApplicationKey)"
	case !slices.Contains(sourceKinds, it.kind):
		return SeverityDropped, fmt.Sprintf("skipped: %s is not a kind the conversion knows", it.kind)
	case it.version != sourceVersion(it.kind):
		return SeverityDropped, fmt.Sprintf("skipped: version %s of %s is not read (the conversion reads %s/%s)", it.version, it.kind, SourceGroup, sourceVersion(it.kind))
	}
	return "", ""
}

// convert converts one input object (DeveloperUsers and ProxyConfigPromotes are read by the objects
// they name).
func (c *converter) convert(it *item) {
	if severity, reason := unsupported(it); reason != "" {
		c.add(it, severity, "", reason)
		return
	}
	c.kinds[it.kind] = true
	switch it.kind {
	case "Tenant":
		c.convertTenant(it)
	case "CustomPolicyDefinition":
		c.convertPolicy(it)
	case "Backend":
		c.convertBackend(it)
	case "Product":
		c.convertProduct(it)
	case "DeveloperAccount":
		c.convertAccount(it)
	case "Application":
		c.convertApplication(it)
	case "ActiveDoc":
		c.convertActiveDoc(it)
	case "OpenAPI":
		c.convertOpenAPI(it)
	}
}

// add records a finding about an input object.
func (c *converter) add(it *item, severity, field, message string) {
	c.findings = append(c.findings, Finding{Object: it.ref, Namespace: it.namespace, Field: field, Message: message, Severity: severity})
}

func (c *converter) dropped(it *item, field, format string, args ...any) {
	c.add(it, SeverityDropped, field, fmt.Sprintf(format, args...))
}

func (c *converter) changed(it *item, field, format string, args ...any) {
	c.add(it, SeverityChanged, field, fmt.Sprintf(format, args...))
}

func (c *converter) info(it *item, field, format string, args ...any) {
	c.add(it, SeverityInfo, field, fmt.Sprintf(format, args...))
}

// skip reports that an input object is not converted, and why.
func (c *converter) skip(it *item, field, format string, args ...any) {
	c.add(it, SeverityDropped, field, "skipped: "+fmt.Sprintf(format, args...))
}

// decode reads the spec of it into a new value of type T (memoized), reporting the fields T does not
// declare; false when the spec cannot be read (reported, once).
func decode[T any](c *converter, it *item) (*T, bool) {
	if v, ok := c.decoded[it]; ok {
		return v.(*T), true
	}
	if c.failed[it] {
		return nil, false
	}
	spec := map[string]any{}
	if raw, found := it.obj.Object["spec"]; found && raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			c.failed[it] = true
			c.skip(it, "spec", "spec is not an object")
			return nil, false
		}
		spec = m
	}
	out := new(T)
	raw, err := json.Marshal(spec)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		c.failed[it] = true
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			c.skip(it, "spec."+typeErr.Field, "the spec cannot be read as 3scale-operator's %s: it holds a JSON %s where 3scale-operator has a %s", it.kind, typeErr.Value, typeErr.Type)
		} else {
			c.skip(it, "spec", "the spec cannot be read as 3scale-operator's %s: %v", it.kind, err)
		}
		return nil, false
	}
	for _, path := range unknownFields("spec", spec, reflect.TypeFor[T]()) {
		c.dropped(it, path, "not a field of 3scale-operator's %s: no equivalent, not converted", it.kind)
	}
	c.decoded[it] = out
	return out, true
}

// typeMeta is the TypeMeta of an apimsync kind.
func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind}
}

// meta is the metadata of an object made from it: the name given, its output namespace and its labels.
func (c *converter) meta(it *item, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: it.outNS, Labels: maps.Clone(it.obj.GetLabels())}
}

// emit adds obj, made from it, to the output unless an object of its kind and name is there already or
// it breaks a rule of apimsync's schema that the conversion could not avoid (reported).
func (c *converter) emit(it *item, obj client.Object) bool {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	key := strings.Join([]string{kind, obj.GetNamespace(), obj.GetName()}, "|")
	if from, dup := c.emitted[key]; dup {
		c.skip(it, "metadata.name", "%s %q is made already from %s (the same name in namespace %q)", kind, obj.GetName(), from, obj.GetNamespace())
		return false
	}
	if problems := check(obj); len(problems) > 0 {
		c.skip(it, "", "the %s would break apimsync's schema: %s", kind, strings.Join(problems, "; "))
		return false
	}
	c.emitted[key] = it.ref
	c.objects = append(c.objects, obj)
	c.reportMetadata(it)
	return true
}

// Annotations 3scale-operator reads on its objects.
var annotationNotes = map[string]string{
	"insecure_skip_verify": `3scale-operator's switch for TLS verification: apimsync reads it from the provider-account Secret (key insecureSkipVerify: "true"; or caBundle)`,
	"accountID":            "3scale-operator's record of the account id: apimsync finds the account by its first admin's username",
	"applicationID":        "3scale-operator's record of the application id: apimsync finds the application by its name in the account",
	"userID":               "3scale-operator's record of the user id: apimsync finds users by username",
	"tenantID":             "3scale-operator's record of the tenant id: apimsync never adopts a tenant",
}

// reportMetadata reports, once per input object, the annotations that are not carried over (labels are).
func (c *converter) reportMetadata(it *item) {
	if c.reported[it] {
		return
	}
	c.reported[it] = true
	for _, k := range slices.Sorted(maps.Keys(it.obj.GetAnnotations())) {
		if k == "kubectl.kubernetes.io/last-applied-configuration" {
			continue
		}
		note := annotationNotes[k]
		if note == "" {
			note = "annotations are not carried over"
		}
		c.dropped(it, "metadata.annotations."+k, "%s", note)
	}
}

// providerRef converts a provider-account reference (same Secret, same keys adminURL and token).
func providerRef(ref *srcLocalRef) *v1alpha1.ProviderAccountRef {
	if ref == nil || ref.Name == "" {
		return nil
	}
	return &v1alpha1.ProviderAccountRef{Name: ref.Name}
}

// common is the CommonSpec of a converted object: its provider account, the deletion policy that keeps
// what 3scale-operator did, and adoption of the existing 3scale object.
func common(ref *srcLocalRef, deletion v1alpha1.DeletionPolicy) v1alpha1.CommonSpec {
	return v1alpha1.CommonSpec{ProviderAccountRef: providerRef(ref), DeletionPolicy: deletion, Adoption: v1alpha1.AdoptionIfExists}
}

// dropNamespaces applies Options.NoNamespace: the items' output namespace is none when the objects to
// convert are all of one namespace, and a Finding says which way it went.
func (c *converter) dropNamespaces() {
	if !c.opts.NoNamespace || c.opts.Namespace != "" {
		return
	}
	namespaces := map[string]bool{}
	for _, it := range c.items {
		if it.group == SourceGroup {
			namespaces[it.namespace] = true
		}
	}
	if len(namespaces) > 1 {
		c.findings = append(c.findings, Finding{Severity: SeverityInfo, Message: "the input holds objects of namespaces " +
			strings.Join(slices.Sorted(maps.Keys(namespaces)), ", ") + ": each object keeps its namespace (objects of one name in two namespaces " +
			"would collide without it); convert one namespace at a time for objects without a namespace"})
		return
	}
	for _, it := range c.items {
		it.outNS = ""
	}
	c.findings = append(c.findings, Finding{Severity: SeverityInfo, Message: "the objects are written without a namespace: apply them to the " +
		"namespace of your choice (kubectl apply -n, or the kustomization's namespace); the Secrets and ConfigMaps they name must exist there"})
}

// localSecret checks that a Secret reference of it stays in its namespace, as apimsync's references do;
// 3scale-operator allowed another one.
func (c *converter) localSecret(it *item, field string, ref srcSecretRef) {
	if ref.Namespace != "" && ref.Namespace != it.namespace {
		c.changed(it, field+".namespace", "the Secret %q is in namespace %q: apimsync reads Secrets only from the object's own namespace; copy it to %q",
			ref.Name, ref.Namespace, cmp.Or(it.outNS, "the object's namespace"))
	}
}

func ptr[T any](v T) *T { return &v }

// SourceKinds are the 3scale-operator kinds the conversion reads (group SourceGroup), with the version of
// each.
func SourceKinds() map[string]string {
	out := map[string]string{}
	for _, k := range sourceKinds {
		out[k] = sourceVersion(k)
	}
	return out
}
