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
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apimsync/apimsync/controllers/engine"
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

// admitter is the webhook's handler.
type admitter struct {
	// remote plans an object against 3scale (DiffObjects), for RemoteCheckAnnotation.
	remote  func(ctx context.Context, obj client.Object) ([]plugin.Plan, error)
	decoder admission.Decoder
	// admit decides an object of each kind (kindRow.admit), by kind name.
	admit map[string]func(ctx context.Context, old, obj client.Object) ([]string, error)
}

// setupWebhook registers the validating webhook with mgr's webhook server, built from d as the
// controllers are.
func setupWebhook(mgr ctrl.Manager, d kindDeps) {
	a := &admitter{decoder: admission.NewDecoder(mgr.GetScheme()),
		admit: map[string]func(ctx context.Context, old, obj client.Object) ([]string, error){},
		remote: func(ctx context.Context, obj client.Object) ([]plugin.Plan, error) {
			// Secrets and ConfigMaps are read whole, from the API server (the cache holds their metadata only).
			return DiffObjects(ctx, mgr.GetAPIReader(), mgr.GetScheme(), obj.GetNamespace(), []client.Object{obj},
				DiffOptions{InstallationAdminURL: d.Opts.InstallationAdminURL, RefusePrivateAdminURLs: !d.Opts.AllowPrivateAdminURLs})
		}}
	for _, k := range kinds {
		a.admit[k.Name()] = k.admit(d)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &webhook.Admission{Handler: a, RecoverPanic: ptrTrue()})
}

func ptrTrue() *bool { t := true; return &t }

// Handle implements admission.Handler.
func (a *admitter) Handle(ctx context.Context, req admission.Request) admission.Response {
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
	if req.Operation == admissionv1.Update {
		old = k.New()
		if err := a.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if !obj.GetDeletionTimestamp().IsZero() || sameSpec(old, obj) {
			// Labels, annotations, finalizers, an object being deleted: never refused, whatever its spec
			// (an object stored before the webhook, a finalizer removed by hand).
			return admission.Allowed("")
		}
	}
	warnings, err := admit(ctx, old, obj)
	if err == nil && obj.GetAnnotations()[RemoteCheckAnnotation] == "remote" {
		var more []string
		more, err = a.checkRemote(ctx, obj)
		warnings = append(warnings, more...)
	}
	var refusal *engine.Refusal
	switch {
	case errors.As(err, &refusal):
		return admission.Denied(fmt.Sprintf("%s is Invalid (%s): %s", req.Kind.Kind, refusal.Reason, refusal.Message)).WithWarnings(warnings...)
	case err != nil: // a failed read: the failure policy (Ignore) lets it through, the sync decides
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("").WithWarnings(warnings...)
}

// checkRemote plans obj against 3scale as diff does: a plan that is invalid is refused, any other is told
// in a warning (what a sync would write: each request's method and endpoint template, never a value).
func (a *admitter) checkRemote(ctx context.Context, obj client.Object) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, RemoteCheckTimeout)
	defer cancel()
	plans, err := a.remote(ctx, obj)
	if err != nil || len(plans) == 0 {
		return []string{fmt.Sprintf("the check against 3scale (%s) could not be made: %v", RemoteCheckAnnotation, err)}, nil
	}
	p := plans[0]
	if p.Action == "invalid" {
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
