package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// The validating webhook: every kind of the table, at one path, decided by the rules its syncs apply
// (engine.Reconciler.Admit): refused with the message the object would be Invalid with, or let through
// with warnings. The configuration's failurePolicy is Ignore, argued in docs/admission.md: the engine
// enforces the same rules on every sync, so a webhook that is down lets nothing wrong reach 3scale, while a
// failing one would block upgrades, a manager's rollout and the removal of finalizers by hand.

// WebhookPath is where the manager's webhook server answers the validating webhook.
const WebhookPath = "/validate"

// WebhookName is the name of the webhook in its configuration (ValidatingWebhookConfiguration).
const WebhookName = "validate.capabilities.apimsync.io"

// +kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=ignore,sideEffects=None,groups=capabilities.apimsync.io,resources=adminusers;backends;products;applicationplans;serviceplans;accountplans;fielddefinitions;tenantsettings;developeraccounts;applications;activedocs;developerportals;custompolicydefinitions;tenants,verbs=create;update,versions=v1alpha1,name=validate.capabilities.apimsync.io,admissionReviewVersions=v1,timeoutSeconds=5,matchPolicy=Equivalent

// RemoteCheckAnnotation, set to "remote" on an object, asks the webhook to check it against 3scale too,
// writing nothing (what kubectl apimsync diff does): what a sync would do now is a warning, and what the
// tenant's present state makes Invalid is refused. It costs the reads of a diff on every apply of the
// object, within RemoteCheckTimeout: a check that takes longer lets the object through with a warning.
const RemoteCheckAnnotation = "capabilities.apimsync.io/admission-check"

// RemoteCheckTimeout bounds the check against 3scale, within the webhook's own timeout (5 s).
const RemoteCheckTimeout = 3 * time.Second

// RemoteChecks is how many checks against 3scale run at once; a further one is skipped, with a warning
// (an apply of many annotated objects must not become a burst of reads of 3scale and of the cluster).
const RemoteChecks = 2

// admitter is the webhook's handler.
type admitter struct {
	// remote plans an object against 3scale (DiffObjects), for RemoteCheckAnnotation; checks holds a
	// token per check running.
	remote  func(ctx context.Context, obj client.Object) ([]plugin.Plan, error)
	checks  chan struct{}
	decoder admission.Decoder
	// admit decides an object of each kind (kindRow.admit), by kind name.
	admit map[string]func(ctx context.Context, old, obj client.Object) ([]string, error)
}

// setupWebhook registers the validating webhook with mgr's webhook server, built from d as the
// controllers are.
func setupWebhook(mgr ctrl.Manager, d kindDeps) {
	a := &admitter{decoder: admission.NewDecoder(mgr.GetScheme()), checks: make(chan struct{}, RemoteChecks),
		admit: map[string]func(ctx context.Context, old, obj client.Object) ([]string, error){},
		remote: func(ctx context.Context, obj client.Object) ([]plugin.Plan, error) {
			return DiffObjects(ctx, referencedData{Reader: d.Reader, obj: obj}, mgr.GetScheme(), obj.GetNamespace(), []client.Object{obj},
				DiffOptions{InstallationAdminURL: d.Opts.InstallationAdminURL, RefusePrivateAdminURLs: !d.Opts.AllowPrivateAdminURLs})
		}}
	for _, k := range kinds {
		a.admit[k.Name()] = k.admit(d)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &webhook.Admission{Handler: a})
}

// Handle implements admission.Handler. It refuses only by a Refusal: a failed read, a failed check
// against 3scale or a panic lets the object through with a warning, as the failure policy would, and the
// sync decides.
func (a *admitter) Handle(ctx context.Context, req admission.Request) (res admission.Response) {
	defer func() {
		if p := recover(); p != nil {
			log.FromContext(ctx).Error(fmt.Errorf("%v", p), "the webhook panicked", "kind", req.Kind.Kind)
			res = admission.Allowed("").WithWarnings(fmt.Sprintf("apimsync could not check this %s at apply time; its sync will", req.Kind.Kind))
		}
	}()
	k := kindNamed(req.Kind.Kind)
	admit := a.admit[req.Kind.Kind]
	if k == nil || admit == nil || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	obj := k.New()
	if err := a.decoder.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old client.Object
	specChanged := true
	if req.Operation == admissionv1.Update {
		old = k.New()
		if err := a.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if !obj.GetDeletionTimestamp().IsZero() {
			return admission.Allowed("") // being deleted: its finalizer must always be able to go
		}
		specChanged = !sameSpec(old, obj)
	}
	var warnings []string
	var err error
	if specChanged {
		// Labels, annotations, finalizers alone are never refused, whatever the spec (an object stored
		// before the webhook, a finalizer removed by hand).
		warnings, err = admit(ctx, old, obj)
	}
	if err == nil && a.remoteAsked(req, old, obj, specChanged) {
		var more []string
		more, err = a.checkRemote(ctx, obj)
		warnings = append(warnings, more...)
	}
	var refusal *engine.Refusal
	switch {
	case errors.As(err, &refusal):
		return admission.Denied(fmt.Sprintf("%s is Invalid (%s): %s", req.Kind.Kind, refusal.Reason, refusal.Message)).WithWarnings(warnings...)
	case err != nil:
		warnings = append(warnings, fmt.Sprintf("apimsync could not check this %s at apply time (%v); its sync will", req.Kind.Kind, err))
	}
	return admission.Allowed("").WithWarnings(warnings...)
}

// remoteAsked tells whether obj asks for the check against 3scale now: it carries RemoteCheckAnnotation,
// and its spec changed, or the annotation was just set, or the request is a dry run (a preview) — not the
// manager's own updates of its metadata.
func (a *admitter) remoteAsked(req admission.Request, old, obj client.Object, specChanged bool) bool {
	if obj.GetAnnotations()[RemoteCheckAnnotation] != "remote" {
		return false
	}
	return old == nil || specChanged || old.GetAnnotations()[RemoteCheckAnnotation] != "remote" || (req.DryRun != nil && *req.DryRun)
}

// checkRemote plans obj against 3scale as diff does, one check at a time per RemoteChecks: what 3scale's
// state makes Invalid is refused; anything else is told in a warning (what a sync would write: each
// request's method and endpoint template, never a value).
func (a *admitter) checkRemote(ctx context.Context, obj client.Object) ([]string, error) {
	select {
	case a.checks <- struct{}{}:
		defer func() { <-a.checks }()
	default:
		return []string{fmt.Sprintf("the check against 3scale (%s) was skipped: %d checks are running already", RemoteCheckAnnotation, cap(a.checks))}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, RemoteCheckTimeout)
	defer cancel()
	plans, err := a.remote(ctx, obj)
	if err != nil {
		return []string{fmt.Sprintf("the check against 3scale (%s) could not be made: %v", RemoteCheckAnnotation, err)}, nil
	}
	if len(plans) == 0 {
		return nil, nil
	}
	p := plans[0]
	if p.Action == "invalid" && p.FromRemote {
		return nil, &engine.Refusal{Reason: p.Reason, Message: "with what 3scale holds now: " + p.Message}
	}
	w := fmt.Sprintf("against 3scale now (%s): %s", p.Action, p.Message)
	if len(p.Writes) > 0 {
		calls := make([]string, 0, len(p.Writes))
		for _, wr := range p.Writes {
			calls = append(calls, wr.Method+" "+wr.Endpoint)
		}
		w += fmt.Sprintf("; %d writes: %s", len(calls), strings.Join(calls, ", "))
	}
	return []string{w}, nil
}

// referencedData is what a check against 3scale reads the cluster through: apimsync's objects as the
// manager's reader has them, and of the namespace's Secrets and ConfigMaps only those obj references (by
// the field indexes of its kind, its namespace's default provider account too), each read on its own as
// a sync reads it: the manager never lists their data.
type referencedData struct {
	client.Reader
	obj client.Object
}

// List implements client.Reader.
func (r referencedData) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var index string
	var item func() client.Object
	var add func(client.Object)
	switch l := list.(type) {
	case *corev1.SecretList:
		index, item, add = kit.IndexSecretRefs, func() client.Object { return &corev1.Secret{} }, func(o client.Object) { l.Items = append(l.Items, *o.(*corev1.Secret)) }
	case *corev1.ConfigMapList:
		index, item, add = kit.IndexConfigMapRefs, func() client.Object { return &corev1.ConfigMap{} }, func(o client.Object) { l.Items = append(l.Items, *o.(*corev1.ConfigMap)) }
	default:
		return r.Reader.List(ctx, list, opts...)
	}
	names := map[string]bool{}
	if index == kit.IndexSecretRefs {
		names[v1alpha1.DefaultProviderAccountSecret] = true
	}
	for _, ix := range fieldIndexes() {
		if ix.index == index && reflect.TypeOf(ix.obj) == reflect.TypeOf(r.obj) {
			for _, n := range ix.names(r.obj) {
				names[n] = true
			}
		}
	}
	for name := range names {
		o := item()
		err := r.Get(ctx, client.ObjectKey{Namespace: r.obj.GetNamespace(), Name: name}, o)
		switch {
		case err == nil:
			add(o)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	return nil
}

// sameSpec reports whether an update leaves the object's spec as it was.
func sameSpec(old, obj client.Object) bool {
	a, b := specOf(old), specOf(obj)
	return a.IsValid() && b.IsValid() && equality.Semantic.DeepEqual(a.Interface(), b.Interface())
}

func specOf(obj client.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Spec")
}
