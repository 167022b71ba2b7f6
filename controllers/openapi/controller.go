package openapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
// +kubebuilder:rbac:groups=capabilities.apimsync.io,resources=backends;products;activedocs,verbs=create

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
	o.Status.Operations, o.Status.Notes = len(api.Methods), api.Notes
	if err := r.checkNotBlocked(ctx, o, wanted); err != nil {
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
	if err := r.dropActiveDoc(ctx, o); err != nil {
		return r.fail(o, err)
	}
	if o.Status.GeneratedHash != hash && o.Status.GeneratedHash != "" {
		r.event(o, "Normal", v1alpha1.ReasonRegenerated, "regenerated %s from the changed document or spec", strings.Join(names, ", "))
	}
	o.Status.Generated, o.Status.GeneratedHash = names, hash
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
		if api, err = openapiimport.Import(doc, "", openapiimport.Options{PrivateBaseURL: o.Spec.PrivateBaseURL, PrefixMatching: o.Spec.PrefixMatching}); err == nil {
			return r.resources(o, api)
		}
	}
	if openapiimport.IsInvalid(err) {
		return nil, nil, engine.Invalid(v1alpha1.ReasonInvalidDocument, "%v", err)
	}
	return nil, nil, err
}

// resources are the Backend, Product and ActiveDoc an import makes, named after the OpenAPI, with its
// provider account, deletion and adoption policies.
func (r *Reconciler) resources(o *v1alpha1.OpenAPI, api *openapiimport.API) ([]generated, *openapiimport.API, error) {
	common := o.Spec.CommonSpec
	backend := v1alpha1.BackendSpec{Name: api.Title, Description: api.Description, PrivateBaseURL: api.PrivateBaseURL, CommonSpec: common}
	auth, err := authenticationOf(o, api.Auth)
	if err != nil {
		return nil, nil, err
	}
	product := v1alpha1.ProductSpec{Name: api.Title, Description: api.Description, Deployment: o.Spec.Deployment, Authentication: auth,
		BackendUsages: map[string]v1alpha1.BackendUsageSpec{o.Name: {Path: "/"}}, Production: o.Spec.Production, CommonSpec: common}
	if len(api.Methods) > 0 {
		product.Methods = map[string]v1alpha1.MethodSpec{}
	}
	for _, m := range api.Methods {
		product.Methods[m.SystemName] = v1alpha1.MethodSpec{FriendlyName: m.FriendlyName, Description: m.Description}
	}
	for _, rule := range api.Rules {
		product.MappingRules = append(product.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: rule.Verb, Pattern: rule.Pattern, MetricMethodRef: rule.Method, Increment: 1})
	}
	out := []generated{
		{obj: &v1alpha1.Backend{}, spec: &backend, specOf: func(c client.Object) any { return &c.(*v1alpha1.Backend).Spec }},
		{obj: &v1alpha1.Product{}, spec: &product, specOf: func(c client.Object) any { return &c.(*v1alpha1.Product).Spec }},
	}
	if a := o.Spec.ActiveDoc; a != nil {
		// The ActiveDoc reads the document where the OpenAPI does: no copy of it.
		doc := v1alpha1.ActiveDocSpec{Name: api.Title, Description: kit.CutString(api.Description, 4096), Published: a.Published, ProductRef: o.Name,
			Document: o.Spec.Document, DocumentRef: o.Spec.DocumentRef, CommonSpec: common}
		out = append(out, generated{obj: &v1alpha1.ActiveDoc{}, spec: &doc, specOf: func(c client.Object) any { return &c.(*v1alpha1.ActiveDoc).Spec }})
	}
	for _, g := range out {
		g.obj.SetNamespace(o.Namespace)
		g.obj.SetName(o.Name)
	}
	return out, api, nil
}

// authenticationOf is the Product's authentication for what the document's security asks.
func authenticationOf(o *v1alpha1.OpenAPI, a openapiimport.Auth) (*v1alpha1.AuthenticationSpec, error) {
	switch a.Kind {
	case "userKey":
		return &v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{AuthUserKey: a.Param,
			GatewayOptions: v1alpha1.GatewayOptions{CredentialsLocation: v1alpha1.CredentialsLocation(a.Location)}}}, nil
	case "oidc":
		if o.Spec.OIDC == nil {
			return nil, engine.Invalid(v1alpha1.ReasonOIDCIssuerNeeded, "the document's security scheme %q is OpenID Connect / OAuth 2.0: set spec.oidc to the provider's issuer endpoint", a.Scheme)
		}
		flow := &v1alpha1.OIDCAuthenticationFlowSpec{StandardFlowEnabled: len(a.Flows) == 0}
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
		return &v1alpha1.AuthenticationSpec{OIDC: &v1alpha1.OIDCAuthSpec{IssuerType: issuerType, IssuerEndpoint: o.Spec.OIDC.IssuerEndpoint,
			IssuerEndpointRef: o.Spec.OIDC.IssuerEndpointRef, AuthenticationFlow: flow}}, nil
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

// dropActiveDoc deletes the ActiveDoc this OpenAPI generated once spec.activeDoc is removed.
func (r *Reconciler) dropActiveDoc(ctx context.Context, o *v1alpha1.OpenAPI) error {
	if o.Spec.ActiveDoc != nil {
		return nil
	}
	var d v1alpha1.ActiveDoc
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, &d)
	if err != nil || !metav1.IsControlledBy(&d, o) || !d.DeletionTimestamp.IsZero() {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, &d))
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
			waiting = append(waiting, what+" is "+stateName(s))
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
	message = fmt.Sprintf("%d operations imported; the generated resources are Synced", len(api.Methods))
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

// fail records an error in the OpenAPI's status: Invalid and Orphan as such; anything else is retried.
func (r *Reconciler) fail(o *v1alpha1.OpenAPI, err error) (ctrl.Result, error) {
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
	}
}

// New is an empty OpenAPI, NewList an empty list of them.
func New() client.Object         { return &v1alpha1.OpenAPI{} }
func NewList() client.ObjectList { return &v1alpha1.OpenAPIList{} }

// SecretRefs lists the Secrets an OpenAPI reads: its document's (the resources it generates read the
// provider account); none for another object.
func SecretRefs(obj client.Object) []string {
	if o, ok := obj.(*v1alpha1.OpenAPI); ok {
		if r := o.Spec.DocumentRef; r != nil && r.SecretKeyRef != nil {
			return []string{r.SecretKeyRef.Name}
		}
	}
	return nil
}

// ConfigMapRefs lists the ConfigMap an OpenAPI reads its document from, if it does.
func ConfigMapRefs(obj client.Object) []string {
	if o, ok := obj.(*v1alpha1.OpenAPI); ok {
		return kit.ConfigMapOf(o.Spec.DocumentRef)
	}
	return nil
}
