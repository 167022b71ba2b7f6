package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/internal/convert"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// The OpenAPI kind makes no call to 3scale of its own: it generates a Backend, a Product and optionally an
// ActiveDoc from an OpenAPI document (internal/openapiimport), as ordinary resources it owns (a controller
// owner reference and the apimsync.io/openapi label), and the engine syncs them as any other. Its
// status sums theirs up. A generated resource that differs from what was generated while the document and
// spec did not change was edited by hand: it is put back, and an Event says so.

// Reconciler generates and keeps the resources of OpenAPI objects.
type Reconciler struct {
	// Client reads and writes the OpenAPIs and what they generate (the manager's cache and client).
	Client client.Client
	// Reader reads the documents of ConfigMaps and Secrets (dataReader).
	Reader client.Reader
	// Recorder emits the Events.
	Recorder events.EventRecorder
	// FluxSources reads the documents of spec.sourceRef from Flux sources' artifacts (source.go).
	FluxSources
}

// generated is one resource an OpenAPI generates: an empty object of its kind and its desired spec.
type generated struct {
	obj  client.Object
	spec any
	// specOf points at the spec of an object of the same kind.
	specOf func(client.Object) any
}

// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=openapis,verbs=get;list;watch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=openapis/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=openapis/finalizers,verbs=update
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends;products;activedocs;applicationplans,verbs=create

// Reconcile generates what an OpenAPI's document says, and reports how the generated resources fare.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var o v1alpha1.OpenAPI
	if err := r.Client.Get(ctx, req.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !o.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector deletes what it owns; their finalizers clean 3scale up
	}
	before := o.Status.DeepCopy()
	result, err := r.reconcile(ctx, &o)
	if !equality.Semantic.DeepEqual(before, &o.Status) {
		switch werr := r.writeStatus(ctx, &o); {
		case apierrors.IsConflict(werr) && err == nil:
			return ctrl.Result{RequeueAfter: statusRewrite}, nil // quietly, as conflicts are
		case werr != nil && err == nil:
			return ctrl.Result{}, werr
		}
	}
	return result, err
}

// writeStatus writes the status reconcile computed. Its facts (status.generatedHash: what the generated
// resources were just set to; the generations checked; the conditions, stamped with the generation they
// were computed for) stay true whatever changed on the object since it was read, and a lost hash makes the
// next hand edit count as a regeneration. So a conflict (the object changed since it was read: a spec,
// label or annotation edit, or a cache behind the last write) is retried on the object read again, with
// the whole computed status put on it. Not a merge patch: one computed against a stale read leaves out
// the fields that read happens to share with the new status, and the stored object may hold others
// there (a mix of two reconciles); the OpenAPI controller is the only writer of this status and
// reconciles an object in one worker at a time, so replacing the status loses no one else's write.
// Retries exhausted, the OpenAPI is reconciled again (statusRewrite); the object gone, there is nothing
// to write.
func (r *Reconciler) writeStatus(ctx context.Context, o *v1alpha1.OpenAPI) error {
	status := o.Status.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := r.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			o.Status = *status.DeepCopy()
		}
		first = false
		return r.Client.Status().Update(ctx, o)
	})
	return client.IgnoreNotFound(err)
}

func (r *Reconciler) reconcile(ctx context.Context, o *v1alpha1.OpenAPI) (ctrl.Result, error) {
	wanted, api, err := r.generate(ctx, o)
	if err != nil {
		return r.fail(o, err)
	}
	o.Status.Operations, o.Status.Notes = len(api.Rules), api.Notes
	if err := r.checkNotBlocked(ctx, o, wanted); err != nil {
		return r.fail(o, err)
	}
	if err := r.checkNoPlanStillLimits(ctx, o, wanted); err != nil {
		return r.fail(o, err)
	}
	if err := r.syncDefaultCredentials(ctx, o); err != nil {
		return r.fail(o, err)
	}
	hash := engine.HashOf(specsOf(wanted))
	edited := o.Status.GeneratedHash == hash // unchanged since last generated: a difference is a hand edit
	var names []string
	var stored []client.Object
	for _, g := range wanted {
		obj, err := r.apply(ctx, o, g, edited)
		if err != nil {
			return r.fail(o, err)
		}
		if o.Status.CheckedGenerations == nil {
			o.Status.CheckedGenerations = map[string]int64{}
		}
		o.Status.CheckedGenerations[engine.KindOf(g.obj)+"/"+g.obj.GetName()] = obj.GetGeneration()
		stored = append(stored, obj)
		names = append(names, engine.KindOf(g.obj)+"/"+g.obj.GetName())
	}
	if err := r.dropStale(ctx, o, names); err != nil {
		return r.fail(o, err)
	}
	if o.Status.GeneratedHash != hash && o.Status.GeneratedHash != "" {
		r.event(o, "Normal", v1alpha1.ReasonRegenerated, "regenerated %s from the changed document or spec", strings.Join(names, ", "))
	}
	o.Status.Generated, o.Status.GeneratedHash, o.Status.MethodNames = names, hash, api.MethodNames
	state, reason, message := summarize(stored, api)
	r.setState(o, state, reason, message)
	return ctrl.Result{}, nil
}

// generate reads and imports the document, and returns the resources it makes.
func (r *Reconciler) generate(ctx context.Context, o *v1alpha1.OpenAPI) ([]generated, *openapiimport.API, error) {
	text, err := r.readDocument(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	doc, err := openapiimport.Parse(ctx, []byte(text))
	if err == nil {
		var api *openapiimport.API
		opts := importOptions(o)
		if len(opts.MethodNames) == 0 {
			opts.RuleMethods = r.ruleMethods(ctx, o)
		}
		if api, err = openapiimport.Import(doc, "", opts); err == nil {
			return r.resources(ctx, o, api, text)
		}
	}
	if openapiimport.IsInvalid(err) {
		return nil, nil, engine.Invalid(v1alpha1.ReasonInvalidDocument, "%v", err)
	}
	return nil, nil, err
}

// importOptions are the import's options from an OpenAPI's spec, and the method names it last generated.
func importOptions(o *v1alpha1.OpenAPI) openapiimport.Options {
	return openapiimport.Options{PrivateBaseURL: o.Spec.PrivateBaseURL, PrefixMatching: o.Spec.PrefixMatching,
		Operator: o.Spec.Conventions == v1alpha1.ConventionsThreescaleOperator, PublicBasePath: o.Spec.PublicBasePath, PrivateBasePath: o.Spec.PrivateBasePath,
		BackendOnly: o.Spec.BackendOnly, MethodNames: o.Status.MethodNames, SystemName: systemNameOf(o), BackendObject: o.Name, Namespace: o.Namespace}
}

// ruleMethods is, by "VERB pattern", the method each mapping rule of what this OpenAPI generated counts:
// the names an import keeps when status.methodNames is lost (a restore without status), decided from what
// the cluster holds. None when nothing was generated.
func (r *Reconciler) ruleMethods(ctx context.Context, o *v1alpha1.OpenAPI) map[string]string {
	var holder client.Object = &v1alpha1.Product{}
	if o.Spec.BackendOnly {
		holder = &v1alpha1.Backend{}
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, holder); err != nil || !generatedBy(holder, o) {
		return nil
	}
	var spec any
	switch h := holder.(type) {
	case *v1alpha1.Product:
		spec = &h.Spec
	case *v1alpha1.Backend:
		spec = &h.Spec
	}
	_, methods, rules := childrenSpecOf(spec)
	out := map[string]string{}
	for _, rule := range rules {
		if _, isMethod := methods[rule.MetricMethodRef]; isMethod {
			out[rule.HTTPMethod+" "+rule.Pattern] = rule.MetricMethodRef
		}
	}
	return out
}

// systemNameOf is the system name of the Backend and Product an OpenAPI generates: its spec's, else the
// one they derive from their name (the OpenAPI's).
func systemNameOf(o *v1alpha1.OpenAPI) string {
	if o.Spec.SystemName != "" {
		return o.Spec.SystemName
	}
	return strings.ReplaceAll(o.Name, ".", "_")
}

// PlanName is the name of the ApplicationPlan an OpenAPI generates for a plan of its document: the
// name kubectl apimsync convert gives the plan of a Product (so a conversion and a generation agree).
func PlanName(openAPI, systemName string) string {
	return convert.PlanObjectName(openAPI, systemName)
}

// resources are the Backend, Product, ApplicationPlans and ActiveDoc an import makes, named after the
// OpenAPI, with its provider account, deletion, adoption and management policies.
func (r *Reconciler) resources(ctx context.Context, o *v1alpha1.OpenAPI, api *openapiimport.API, text string) ([]generated, *openapiimport.API, error) {
	common := o.Spec.CommonSpec
	backend := v1alpha1.BackendSpec{Name: api.BackendName, SystemName: o.Spec.SystemName, Description: api.BackendDescription, PrivateBaseURL: api.PrivateBaseURL, CommonSpec: common}
	metrics, methods, rules := childrenOf(api)
	var out []generated
	if o.Spec.BackendOnly {
		backend.Metrics, backend.Methods, backend.MappingRules = metrics, methods, rules
		out = append(out, generated{obj: &v1alpha1.Backend{}, spec: &backend, specOf: func(c client.Object) any { return &c.(*v1alpha1.Backend).Spec }})
	} else {
		auth, err := authenticationOf(o, api.Auth)
		if err != nil {
			return nil, nil, err
		}
		policies, err := r.policies(ctx, o, api)
		if err != nil {
			return nil, nil, err
		}
		product := v1alpha1.ProductSpec{Name: api.Title, SystemName: o.Spec.SystemName, Description: api.Description, Deployment: o.Spec.Deployment, Authentication: auth,
			BackendUsages: map[string]v1alpha1.BackendUsageSpec{o.Name: {Path: api.UsagePath}}, Production: o.Spec.Production, CommonSpec: common,
			Metrics: metrics, Methods: methods, MappingRules: rules, Policies: policies}
		out = append(out,
			generated{obj: &v1alpha1.Backend{}, spec: &backend, specOf: func(c client.Object) any { return &c.(*v1alpha1.Backend).Spec }},
			generated{obj: &v1alpha1.Product{}, spec: &product, specOf: func(c client.Object) any { return &c.(*v1alpha1.Product).Spec }})
		planOf := map[string]string{} // object name → plan system name
		for _, p := range api.Plans {
			if other, taken := planOf[PlanName(o.Name, p.SystemName)]; taken {
				return nil, nil, engine.Invalid(v1alpha1.ReasonInvalidDocument, "x-3scale-product.applicationPlans %q and %q would both be the ApplicationPlan %q: "+
					"rename one of them", other, p.SystemName, PlanName(o.Name, p.SystemName))
			}
			planOf[PlanName(o.Name, p.SystemName)] = p.SystemName
			spec := p.Spec
			spec.ProductRef, spec.DeletionPolicy, spec.Adoption, spec.Management = o.Name, common.DeletionPolicy, common.Adoption, common.Management
			plan := &v1alpha1.ApplicationPlan{}
			plan.SetName(PlanName(o.Name, p.SystemName))
			out = append(out, generated{obj: plan, spec: &spec, specOf: func(c client.Object) any { return &c.(*v1alpha1.ApplicationPlan).Spec }})
		}
	}
	if a := o.Spec.ActiveDoc; a != nil {
		doc, err := r.activeDoc(ctx, o, api, text)
		if err != nil {
			return nil, nil, err
		}
		if doc != nil {
			out = append(out, generated{obj: &v1alpha1.ActiveDoc{}, spec: doc, specOf: func(c client.Object) any { return &c.(*v1alpha1.ActiveDoc).Spec }})
		}
	}
	for _, g := range out {
		g.obj.SetNamespace(o.Namespace)
		if g.obj.GetName() == "" {
			g.obj.SetName(o.Name)
		}
	}
	return out, api, nil
}

// activeDoc is the generated ActiveDoc's spec. It reads the document where the OpenAPI does (no copy of
// it), but for a document of a Flux artifact or whose servers are rewritten to the gateway's URL
// (spec.activeDoc.servers), given inline. While the generated Product's gateway URL is not known yet, the
// ActiveDoc generated before is kept as it is (none: nil), and a note says it waits.
func (r *Reconciler) activeDoc(ctx context.Context, o *v1alpha1.OpenAPI, api *openapiimport.API, text string) (*v1alpha1.ActiveDocSpec, error) {
	a := o.Spec.ActiveDoc
	doc := &v1alpha1.ActiveDocSpec{Name: api.Title, Description: kit.CutString(api.Description, 4096), Published: a.Published,
		Document: o.Spec.Document, DocumentRef: o.Spec.DocumentRef, CommonSpec: o.Spec.CommonSpec}
	if !o.Spec.BackendOnly {
		doc.ProductRef = o.Name
	}
	if o.Spec.SourceRef != nil {
		doc.Document, doc.DocumentRef = text, nil
	}
	if a.Servers == "" || a.Servers == "Document" || o.Spec.BackendOnly {
		return doc, nil
	}
	var product v1alpha1.Product
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, &product)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	base := ""
	synced := meta.IsStatusConditionTrue(product.Status.Conditions, v1alpha1.ConditionSynced) && product.Status.ObservedGeneration == product.Generation
	if g := product.Status.Gateway; err == nil && generatedBy(&product, o) && synced && g != nil {
		base = map[string]string{"Production": g.ProductionPublicBaseURL, "Staging": g.StagingPublicBaseURL}[a.Servers]
	}
	if base == "" {
		api.Notes = append(api.Notes, fmt.Sprintf("the ActiveDoc is generated once 3scale gives the Product a %s gateway URL, its servers rewritten to it", strings.ToLower(a.Servers)))
		var kept v1alpha1.ActiveDoc
		switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, &kept); {
		case err == nil && generatedBy(&kept, o):
			return &kept.Spec, nil
		case client.IgnoreNotFound(err) != nil:
			return nil, err
		}
		return nil, nil
	}
	rewritten, err := openapiimport.WithServer(text, strings.TrimSuffix(base, "/")+api.PublicBasePath)
	if err != nil {
		return nil, engine.Invalid(v1alpha1.ReasonInvalidDocument, "%v", err)
	}
	doc.Document, doc.DocumentRef = rewritten, nil
	return doc, nil
}

// childrenOf are the metrics, methods and mapping rules of an import, as a Product's or Backend's spec.
func childrenOf(api *openapiimport.API) (map[string]v1alpha1.MetricSpec, map[string]v1alpha1.MethodSpec, []v1alpha1.MappingRuleSpec) {
	var metrics map[string]v1alpha1.MetricSpec
	var methods map[string]v1alpha1.MethodSpec
	var rules []v1alpha1.MappingRuleSpec
	for _, m := range api.Metrics {
		if metrics == nil {
			metrics = map[string]v1alpha1.MetricSpec{}
		}
		metrics[m.SystemName] = m.MetricSpec
	}
	for _, m := range api.Methods {
		if methods == nil {
			methods = map[string]v1alpha1.MethodSpec{}
		}
		methods[m.SystemName] = v1alpha1.MethodSpec{FriendlyName: m.FriendlyName, Description: m.Description}
	}
	for _, rule := range api.Rules {
		rules = append(rules, v1alpha1.MappingRuleSpec{HTTPMethod: rule.Verb, Pattern: rule.Pattern, MetricMethodRef: rule.Method, Increment: rule.Increment, Last: rule.Last})
	}
	return metrics, methods, rules
}

// policies is the generated Product's chain: the document's (x-3scale-product), each Secret they read
// there first (a missing one: the OpenAPI waits, generating nothing), and APIcast's default_credentials
// first with spec.defaultCredentials.
func (r *Reconciler) policies(ctx context.Context, o *v1alpha1.OpenAPI, api *openapiimport.API) ([]v1alpha1.PolicySpec, error) {
	chain := api.Policies
	o.Status.Secrets = nil
	for _, p := range chain {
		if ref := p.ConfigurationRef; ref != nil {
			o.Status.Secrets = append(o.Status.Secrets, ref.Name)
			v, err := kit.SecretValue(ctx, r.Reader, o.Namespace, ref, fmt.Sprintf("the configuration of policy %s in the document's x-3scale-product", p.Name))
			if err != nil {
				return nil, err
			}
			if config := strings.TrimSpace(v); !json.Valid([]byte(config)) || !strings.HasPrefix(config, "{") {
				return nil, engine.Invalid(v1alpha1.ReasonInvalidDocument, "the configuration of policy %s in the document's x-3scale-product, key %q of Secret %q, "+
					"is not a JSON object: nothing is generated until it is", p.Name, ref.Key, ref.Name)
			}
		}
	}
	if dc := o.Spec.DefaultCredentials; dc != nil {
		if api.Auth.Kind != "" {
			return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.defaultCredentials is for a document that asks for no security, and this one asks for %s (scheme %q): remove defaultCredentials", api.Auth.Kind, api.Auth.Scheme)
		}
		ref, err := r.defaultCredentialsRef(ctx, o)
		if err != nil {
			return nil, err
		}
		first := v1alpha1.PolicySpec{Name: "default_credentials", Version: "builtin", Enabled: true, ConfigurationRef: ref}
		if len(chain) == 0 {
			chain = []v1alpha1.PolicySpec{{Name: "apicast", Version: "builtin", Enabled: true, Configuration: &apiextensionsv1.JSON{Raw: []byte("{}")}}}
		}
		chain = append([]v1alpha1.PolicySpec{first}, chain...)
	}
	return chain, nil
}

// authenticationOf is the Product's authentication for what the document's security asks.
func authenticationOf(o *v1alpha1.OpenAPI, a openapiimport.Auth) (*v1alpha1.AuthenticationSpec, error) {
	switch a.Kind {
	case "userKey":
		return &v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{AuthUserKey: a.Param,
			GatewayOptions: v1alpha1.GatewayOptions{CredentialsLocation: v1alpha1.CredentialsLocation(a.Location), Security: o.Spec.Security.DeepCopy()}}}, nil
	case "oidc":
		if o.Spec.OIDC == nil {
			return nil, engine.Invalid(v1alpha1.ReasonOIDCIssuerNeeded, "the document's security scheme %q is OpenID Connect / OAuth 2.0: set spec.oidc to the provider's issuer endpoint", a.Scheme)
		}
		// An OpenID Connect scheme lists no flow: the standard flow, but 3scale-operator's conventions
		// have none.
		flow := &v1alpha1.OIDCAuthenticationFlowSpec{StandardFlowEnabled: len(a.Flows) == 0 && o.Spec.Conventions != v1alpha1.ConventionsThreescaleOperator}
		for _, f := range a.Flows {
			switch f {
			case "authorizationCode":
				flow.StandardFlowEnabled = true
			case "implicit":
				flow.ImplicitFlowEnabled = true
			case "password":
				flow.DirectAccessGrantsEnabled = true
			case "clientCredentials":
				flow.ServiceAccountsEnabled = true
			}
		}
		issuerType := o.Spec.OIDC.IssuerType
		if issuerType == "" {
			issuerType = "rest"
		}
		// spec.oidc.authenticationFlow replaces the document's flows; with 3scale-operator's conventions,
		// only an OpenID Connect scheme's (an OAuth 2.0 scheme's flows are the document's there).
		operator := o.Spec.Conventions == v1alpha1.ConventionsThreescaleOperator
		if f := o.Spec.OIDC.AuthenticationFlow; f != nil && (!operator || len(a.Flows) == 0) {
			flow = f.DeepCopy()
		}
		gateway := v1alpha1.GatewayOptions{Security: o.Spec.Security.DeepCopy(), GatewayResponse: o.Spec.OIDC.GatewayResponse.DeepCopy()}
		if operator {
			gateway.CredentialsLocation = v1alpha1.CredentialsLocation("headers") // 3scale-operator's, whatever the document says
		}
		return &v1alpha1.AuthenticationSpec{OIDC: &v1alpha1.OIDCAuthSpec{IssuerType: issuerType, IssuerEndpoint: o.Spec.OIDC.IssuerEndpoint,
			IssuerEndpointRef: o.Spec.OIDC.IssuerEndpointRef, AuthenticationFlow: flow, JWTClaimWithClientID: o.Spec.OIDC.JWTClaimWithClientID,
			JWTClaimWithClientIDType: o.Spec.OIDC.JWTClaimWithClientIDType, GatewayOptions: gateway}}, nil
	}
	if o.Spec.Security != nil { // a document that asks for no security: the Product's default, a user key
		return &v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{GatewayOptions: v1alpha1.GatewayOptions{Security: o.Spec.Security.DeepCopy()}}}, nil
	}
	return nil, nil
}

// checkNotBlocked makes generation all or nothing: when a resource of a name this OpenAPI would generate
// exists and is not controlled by it, nothing is created or updated (no Backend in 3scale for a Product
// that cannot be had), and the OpenAPI is Invalid (NotGeneratedByThisOpenAPI) naming every blocker. It is
// checked before the first write; apply checks each resource again, for one made in between.
func (r *Reconciler) checkNotBlocked(ctx context.Context, o *v1alpha1.OpenAPI, wanted []generated) error {
	var blockers []string
	for _, g := range wanted {
		current := g.obj.DeepCopyObject().(client.Object)
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(g.obj), current)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !metav1.IsControlledBy(current, o) {
			blockers = append(blockers, fmt.Sprintf("%s %q", engine.KindOf(g.obj), current.GetName()))
		}
	}
	switch len(blockers) {
	case 0:
		return nil
	case 1:
		return engine.Invalid(v1alpha1.ReasonNotGenerated, "a %s exists in this namespace and was not generated by this OpenAPI: it is left as it is, "+
			"and nothing is generated while it is there; rename this OpenAPI or delete that %s", blockers[0], strings.Fields(blockers[0])[0])
	}
	return engine.Invalid(v1alpha1.ReasonNotGenerated, "%s exist in this namespace and were not generated by this OpenAPI: they are left as they are, "+
		"and nothing is generated while they are there; rename this OpenAPI or delete them", strings.Join(blockers, ", "))
}

// apply creates a generated resource, or puts its spec back to what is generated: announced as a hand
// edit put back when edited is true (nothing changed on the OpenAPI's side), as a regeneration otherwise.
// A resource of that name that this OpenAPI does not control is never touched. It returns the resource as
// stored.
func (r *Reconciler) apply(ctx context.Context, o *v1alpha1.OpenAPI, g generated, edited bool) (client.Object, error) {
	kind := engine.KindOf(g.obj)
	current := g.obj.DeepCopyObject().(client.Object)
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(g.obj), current)
	if apierrors.IsNotFound(err) {
		obj := g.obj.DeepCopyObject().(client.Object)
		setSpec(g.specOf(obj), g.spec)
		obj.SetLabels(generatedLabels(o, nil))
		if err := controllerutil.SetControllerReference(o, obj, r.Client.Scheme()); err != nil {
			return nil, err
		}
		return obj, r.Client.Create(ctx, obj)
	}
	if err != nil {
		return nil, err
	}
	if !metav1.IsControlledBy(current, o) {
		return nil, engine.Invalid(v1alpha1.ReasonNotGenerated, "a %s %q exists in this namespace and was not generated by this OpenAPI: it is left as it is; "+
			"rename this OpenAPI or delete that %s", kind, current.GetName(), kind)
	}
	want := current.DeepCopyObject().(client.Object)
	setSpec(g.specOf(want), g.spec)
	want.SetLabels(generatedLabels(o, current.GetLabels()))
	sameLabels := equality.Semantic.DeepEqual(current.GetLabels(), want.GetLabels())
	if equality.Semantic.DeepEqual(g.specOf(current), g.specOf(want)) && sameLabels {
		return current, nil
	}
	// Checked already at this generation against this generated spec (edited: the spec generated has
	// not changed): no spec edit since, so no dry run. A generated resource's status changes wake the
	// OpenAPI (Owns) far more often than anyone edits it.
	if checked := o.Status.CheckedGenerations[kind+"/"+current.GetName()]; edited && sameLabels && checked != 0 && checked == current.GetGeneration() {
		return current, nil
	}
	// The API server's defaults (a lifecycle, an increment) are in the stored spec, not in the generated
	// one: a dry run tells whether the stored spec is the generated one once defaulted.
	defaulted := want.DeepCopyObject().(client.Object)
	if err := r.Client.Update(ctx, defaulted, client.DryRunAll); err != nil {
		return nil, err
	}
	specChanged := !equality.Semantic.DeepEqual(g.specOf(current), g.specOf(defaulted))
	if !specChanged && sameLabels {
		return current, nil
	}
	if err := r.Client.Update(ctx, want); err != nil {
		return nil, err
	}
	if edited && specChanged {
		r.event(o, "Warning", v1alpha1.ReasonEditReverted, "%s %q was changed by hand and has been put back: it is generated from this OpenAPI; change the document or this OpenAPI's spec instead", kind, current.GetName())
		r.eventOn(want, "Warning", v1alpha1.ReasonEditReverted, "this %s is generated by OpenAPI %q: a change made to it by hand has been put back", kind, o.Name)
	}
	return want, nil
}

// generatedLabels are the labels of a generated resource: the OpenAPI's own (a shard's selector then
// selects what it generates too) and the one naming it, over the ones it has.
func generatedLabels(o *v1alpha1.OpenAPI, has map[string]string) map[string]string {
	labels := map[string]string{}
	for k, v := range has {
		labels[k] = v
	}
	for k, v := range o.Labels {
		labels[k] = v
	}
	labels[v1alpha1.GeneratedByLabel] = o.Name
	return labels
}

// dropStale deletes what this OpenAPI generated and no longer generates: a plan the document no longer
// has, the ActiveDoc once spec.activeDoc is removed, the Product once backendOnly is set. Only what it
// controls, found by the label it puts on what it generates.
func (r *Reconciler) dropStale(ctx context.Context, o *v1alpha1.OpenAPI, keep []string) error {
	for _, list := range []client.ObjectList{&v1alpha1.ApplicationPlanList{}, &v1alpha1.ActiveDocList{}, &v1alpha1.ProductList{}} {
		if err := r.Client.List(ctx, list, client.InNamespace(o.Namespace), client.MatchingLabels{v1alpha1.GeneratedByLabel: o.Name}); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj := item.(client.Object)
			if !metav1.IsControlledBy(obj, o) || !obj.GetDeletionTimestamp().IsZero() || slices.Contains(keep, engine.KindOf(obj)+"/"+obj.GetName()) {
				continue
			}
			if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return err
			}
			r.event(o, "Normal", v1alpha1.ReasonRegenerated, "deleted %s %q: the document or spec no longer generates it", engine.KindOf(obj), obj.GetName())
		}
	}
	return nil
}

// checkNoPlanStillLimits keeps an operation's method while an ApplicationPlan this OpenAPI did not
// generate limits or prices it: the OpenAPI waits, naming the plan, and changes nothing (deleting the
// method would make 3scale delete the plan's limits and pricing rules with it).
func (r *Reconciler) checkNoPlanStillLimits(ctx context.Context, o *v1alpha1.OpenAPI, wanted []generated) error {
	holder := wanted[holderIndex(wanted)] // the Product, or the Backend of a backend-only import
	current := holder.obj.DeepCopyObject().(client.Object)
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(holder.obj), current); err != nil || !generatedBy(current, o) {
		return client.IgnoreNotFound(err)
	}
	had, have := namesOf(holder.specOf(current)), namesOf(holder.spec)
	var removed []string
	for _, name := range had {
		if !slices.Contains(have, name) && name != "hits" { // hits always exists: only its names may go
			removed = append(removed, name)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	var plans v1alpha1.ApplicationPlanList
	if err := r.Client.List(ctx, &plans, client.InNamespace(o.Namespace)); err != nil {
		return err
	}
	_, backendOnly := holder.obj.(*v1alpha1.Backend)
	var held []string
	for _, p := range plans.Items {
		if generatedBy(&p, o) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		for _, ref := range planRefs(&p) {
			ours := (!backendOnly && p.Spec.ProductRef == o.Name && ref.Backend == "") || (backendOnly && ref.Backend == o.Name)
			if ours && slices.Contains(removed, ref.SystemName) {
				held = append(held, fmt.Sprintf("ApplicationPlan %q limits or prices %q", p.Name, ref.SystemName))
			}
		}
	}
	if len(held) == 0 {
		return nil
	}
	slices.Sort(held)
	return engine.Waiting(v1alpha1.ReasonOperationStillLimited, "the document no longer has the operation (or metric) of a method a plan still uses: %s; "+
		"nothing is regenerated until the plan no longer names it (3scale would delete its limits and pricing rules with the method)", strings.Join(slices.Compact(held), ", "))
}

// namesOf lists the metrics and methods of a generated Backend's or Product's spec.
func namesOf(spec any) []string {
	metrics, methods, _ := childrenSpecOf(spec)
	var out []string
	for name := range metrics {
		out = append(out, name)
	}
	for name := range methods {
		out = append(out, name)
	}
	return out
}

// childrenSpecOf are the metrics, methods and mapping rules of a generated Backend's or Product's spec.
func childrenSpecOf(spec any) (map[string]v1alpha1.MetricSpec, map[string]v1alpha1.MethodSpec, []v1alpha1.MappingRuleSpec) {
	switch s := spec.(type) {
	case *v1alpha1.BackendSpec:
		return s.Metrics, s.Methods, s.MappingRules
	case *v1alpha1.ProductSpec:
		return s.Metrics, s.Methods, s.MappingRules
	}
	return nil, nil, nil
}

// planRefs are the metrics and methods a plan limits or prices.
func planRefs(p *v1alpha1.ApplicationPlan) []v1alpha1.MetricMethodRef {
	var out []v1alpha1.MetricMethodRef
	for _, l := range p.Spec.Limits {
		out = append(out, l.MetricMethodRef)
	}
	for _, pr := range p.Spec.PricingRules {
		out = append(out, pr.MetricMethodRef)
	}
	return out
}

// defaultCredentialsKey is the key of the Secret holding the default_credentials policy's configuration.
const defaultCredentialsKey = "configuration"

// defaultCredentialsName is the Secret holding an OpenAPI's default_credentials policy configuration.
func defaultCredentialsName(o *v1alpha1.OpenAPI) string {
	const suffix = "-default-credentials-policy" // not "-credentials": no Application's Secret is named so
	return kit.CutString(o.Name, 253-len(suffix)) + suffix
}

// defaultCredentialsRef checks what spec.defaultCredentials needs before anything is written (the
// user key's Secret, and that the Secret its configuration goes to is not someone else's) and returns
// where the generated policy reads its configuration.
func (r *Reconciler) defaultCredentialsRef(ctx context.Context, o *v1alpha1.OpenAPI) (*v1alpha1.LocalSecretKeyRef, error) {
	if _, err := kit.SecretValue(ctx, r.Reader, o.Namespace, &o.Spec.DefaultCredentials.UserKeyRef, "spec.defaultCredentials.userKeyRef"); err != nil {
		return nil, err
	}
	name := defaultCredentialsName(o)
	var secret corev1.Secret
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, &secret)
	if err == nil && !metav1.IsControlledBy(&secret, o) {
		return nil, engine.Invalid(v1alpha1.ReasonNotGenerated, "a Secret %q exists in this namespace and was not written by this OpenAPI: it would hold the default "+
			"credentials' configuration; it is left as it is: rename this OpenAPI or delete that Secret", name)
	}
	return &v1alpha1.LocalSecretKeyRef{Name: name, Key: defaultCredentialsKey}, client.IgnoreNotFound(err)
}

// syncDefaultCredentials writes, from the user key spec.defaultCredentials names, the configuration of
// APIcast's default_credentials policy into the Secret this OpenAPI owns for it (in its namespace): the
// generated Product's policy reads it there, and no key is ever in a spec. Without defaultCredentials (or
// with backendOnly), the Secret it wrote goes. A Secret of that name it does not own is never touched.
func (r *Reconciler) syncDefaultCredentials(ctx context.Context, o *v1alpha1.OpenAPI) error {
	err := r.writeDefaultCredentials(ctx, o)
	if apierrors.IsForbidden(err) {
		return engine.Waiting(v1alpha1.ReasonSecretNotFound, "the manager may not write the Secret %q of the default credentials in this namespace: "+
			"bind it the apimsync-application-credentials Role here (the chart's applicationCredentialsNamespaces)", defaultCredentialsName(o))
	}
	return err
}

func (r *Reconciler) writeDefaultCredentials(ctx context.Context, o *v1alpha1.OpenAPI) error {
	name := defaultCredentialsName(o)
	var secret corev1.Secret
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, &secret)
	if client.IgnoreNotFound(err) != nil || err == nil && !metav1.IsControlledBy(&secret, o) {
		return err
	}
	exists := err == nil
	if o.Spec.DefaultCredentials == nil || o.Spec.BackendOnly {
		if exists && secret.DeletionTimestamp.IsZero() {
			return client.IgnoreNotFound(r.Client.Delete(ctx, &secret))
		}
		return nil
	}
	key, err := kit.SecretValue(ctx, r.Reader, o.Namespace, &o.Spec.DefaultCredentials.UserKeyRef, "spec.defaultCredentials.userKeyRef")
	if err != nil {
		return err
	}
	config, err := json.Marshal(map[string]string{"auth_type": "user_key", "user_key": strings.TrimSpace(key)})
	if err != nil {
		return err
	}
	if !exists {
		secret = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: name, Labels: map[string]string{v1alpha1.GeneratedByLabel: o.Name}},
			Data: map[string][]byte{defaultCredentialsKey: config}}
		if err := controllerutil.SetControllerReference(o, &secret, r.Client.Scheme()); err != nil {
			return err
		}
		return r.Client.Create(ctx, &secret)
	}
	if string(secret.Data[defaultCredentialsKey]) == string(config) {
		return nil
	}
	secret.Data = map[string][]byte{defaultCredentialsKey: config}
	return r.Client.Update(ctx, &secret)
}

// summarize is the OpenAPI's state from its generated resources' as stored: Synced when all are; else
// Invalid when one is, or waiting (Orphan when one is, else InSync), naming them.
func summarize(stored []client.Object, api *openapiimport.API) (state, reason, message string) {
	state, reason = v1alpha1.ConditionSynced, v1alpha1.ReasonSynced
	var waiting []string
	for _, o := range stored {
		obj, ok := o.(engine.Object)
		if !ok {
			continue
		}
		s := engine.SyncState(obj.GetSyncStatus())
		c := meta.FindStatusCondition(obj.GetSyncStatus().Conditions, s)
		what := fmt.Sprintf("%s %q", engine.KindOf(o), o.GetName())
		switch {
		case s == v1alpha1.ConditionInvalid:
			return v1alpha1.ConditionInvalid, v1alpha1.ReasonGeneratedInvalid, fmt.Sprintf("generated %s is Invalid: %s", what, c.Message)
		case s != v1alpha1.ConditionSynced || obj.GetSyncStatus().ObservedGeneration != o.GetGeneration():
			w := what + " is " + stateName(s)
			if s == v1alpha1.ConditionOrphan && c != nil { // what it waits for is what the OpenAPI waits for
				w += " (" + c.Message + ")"
			}
			waiting = append(waiting, w)
			if s == v1alpha1.ConditionOrphan {
				state = v1alpha1.ConditionOrphan
			} else if state != v1alpha1.ConditionOrphan {
				state = v1alpha1.ConditionInSync
			}
		}
	}
	if len(waiting) > 0 {
		return state, v1alpha1.ReasonGeneratedWaiting, "waiting for the generated resources: " + strings.Join(waiting, ", ")
	}
	message = fmt.Sprintf("%d operations imported; the generated resources are Synced", len(api.Rules))
	if len(api.Notes) > 0 {
		message += "; " + strings.Join(api.Notes, "; ")
	}
	return state, reason, message
}

func stateName(s string) string {
	if s == "" {
		return "not synced yet"
	}
	return s
}

// fail records an error in the OpenAPI's status: Invalid and Orphan as such; anything else is retried
// (a conflict quietly).
func (r *Reconciler) fail(o *v1alpha1.OpenAPI, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		// A generated resource changed since it was read (its own controller wrote it): looked at again,
		// quietly, as the engine does with its conflicts. (Not AlreadyExists: a resource of that name
		// outside a shard's cache answers it every time, and the backoff and the log must say so.)
		return ctrl.Result{RequeueAfter: statusRewrite}, nil
	}
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) && strings.Contains(err.Error(), "denied the request") {
		// The API server or the webhook refuses what was generated: the document asks for what the kinds
		// cannot hold. Retrying cannot help; a change of the document or spec wakes it.
		err = engine.Invalid(v1alpha1.ReasonInvalidDocument, "what the document generates is refused: %v", err)
	}
	var reasoned *engine.ReasonedError
	if !errors.As(err, &reasoned) {
		return ctrl.Result{}, err
	}
	class, reason, message := engine.Classify(err)
	state := v1alpha1.ConditionOrphan
	if class == engine.ClassInvalid {
		state = v1alpha1.ConditionInvalid
	}
	r.setState(o, state, reason, message)
	if state == v1alpha1.ConditionInvalid {
		return ctrl.Result{}, nil // woken when the OpenAPI, its document or what it generated changes
	}
	return ctrl.Result{RequeueAfter: orphanRecheck}, nil
}

// statusRewrite is how soon an OpenAPI whose status write still conflicted after the retries is
// reconciled again.
const statusRewrite = time.Second

// orphanRecheck is how soon an OpenAPI waiting for its document looks again (a watch wakes it sooner).
const orphanRecheck = 30 * time.Second

// setState sets the OpenAPI's sync conditions, with an Event when the state or reason changes.
func (r *Reconciler) setState(o *v1alpha1.OpenAPI, state, reason, message string) {
	st := &v1alpha1.CommonStatus{Conditions: o.Status.Conditions}
	previous := engine.SyncState(st)
	prevReason := ""
	if c := meta.FindStatusCondition(st.Conditions, previous); c != nil {
		prevReason = c.Reason
	}
	engine.SetSyncState(st, state, reason, message, o.Generation)
	o.Status.Conditions = st.Conditions
	if state == v1alpha1.ConditionSynced || state == v1alpha1.ConditionInvalid {
		o.Status.ObservedGeneration = o.Generation
	}
	if previous != state || prevReason != reason {
		kind := "Normal"
		if state == v1alpha1.ConditionInvalid {
			kind = "Warning"
		}
		r.event(o, kind, reason, "%s", message)
	}
}

func (r *Reconciler) event(o *v1alpha1.OpenAPI, kind, reason, format string, args ...any) {
	r.eventOn(o, kind, reason, format, args...)
}

func (r *Reconciler) eventOn(obj client.Object, kind, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, kind, reason, "Generate", format, args...)
	}
}

// specsOf lists the desired specs, for their fingerprint.
func specsOf(gs []generated) []any {
	out := make([]any, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.spec)
	}
	return out
}

// setSpec copies the desired spec into an object's spec (both pointers to the same type).
func setSpec(into, from any) {
	switch t := into.(type) {
	case *v1alpha1.BackendSpec:
		*t = *from.(*v1alpha1.BackendSpec)
	case *v1alpha1.ProductSpec:
		*t = *from.(*v1alpha1.ProductSpec)
	case *v1alpha1.ActiveDocSpec:
		*t = *from.(*v1alpha1.ActiveDocSpec)
	case *v1alpha1.ApplicationPlanSpec:
		*t = *from.(*v1alpha1.ApplicationPlanSpec)
	}
}

// New is an empty OpenAPI, NewList an empty list of them.
func New() client.Object         { return &v1alpha1.OpenAPI{} }
func NewList() client.ObjectList { return &v1alpha1.OpenAPIList{} }

// SecretRefs lists the Secrets an OpenAPI reads: its document's, its default credentials', and those
// its document's policies read (status.secrets); none for another object. (The resources it generates
// read the provider account.)
func SecretRefs(obj client.Object) []string {
	o, ok := obj.(*v1alpha1.OpenAPI)
	if !ok {
		return nil
	}
	var out []string
	if r := o.Spec.DocumentRef; r != nil && r.SecretKeyRef != nil {
		out = append(out, r.SecretKeyRef.Name)
	}
	if dc := o.Spec.DefaultCredentials; dc != nil {
		out = append(out, dc.UserKeyRef.Name)
	}
	return append(out, o.Status.Secrets...)
}

// ConfigMapRefs lists the ConfigMap an OpenAPI reads its document from, if it does.
func ConfigMapRefs(obj client.Object) []string {
	if o, ok := obj.(*v1alpha1.OpenAPI); ok {
		return kit.ConfigMapOf(o.Spec.DocumentRef)
	}
	return nil
}
