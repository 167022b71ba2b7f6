package plugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Diff (kubectl apimsync diff, DiffObjects in package controllers) tells what syncing objects would do to 3scale now, with the syncers' own
// code: Connect, Resolve, Read and Compare as a sync runs them, then Update with a dry-run client, which
// reads 3scale but hands every write to a recorder instead of sending it. The writes listed are the ones
// a sync would make. The objects are read from an in-memory copy of the namespace (its apimsync objects,
// Secrets and ConfigMaps) with the given objects over it (a given object that exists keeps its status: its
// recorded identity), in the order objects are created; each one diffed is then taken as synced, so that
// its dependants resolve. Writes to the cluster (an Application's credentials Secret) go to that copy
// and are reported apart: they change nothing in 3scale. An object without a provider-account Secret in a
// namespace where 3scale-operator installed 3scale is planned against that installation's tenant, as the
// manager syncs it.

// Plan is what syncing one object would do.
type Plan struct {
	Kind, Name string
	// Action is "none" (in sync), "update" (Writes), "create", "after" (it waits only for dependencies
	// this diff creates: it syncs once they exist, and what it writes is known only then), "wait" (a
	// dependency is missing, or is not synced and is not created by this diff: the object would be
	// Orphan) or "invalid" (the spec cannot work); Message says more.
	Action  string
	Message string
	// Reason is the condition reason of a wait or of an invalid object (ProductNotSynced).
	Reason string
	// FromRemote: the wait or the invalid object is 3scale's answer, or a decision taken from what the
	// tenant holds now (an adoption refused), not from the cluster.
	FromRemote bool
	// Writes are the requests to 3scale a sync would make.
	Writes []tsclient.Write
	// ClusterWrites are the writes to the cluster a sync would make, one line each (`create Secret
	// "app-credentials"`: an Application's credentials Secret): they change nothing in 3scale.
	ClusterWrites []string
	// SecretFields name the form fields of Writes whose values come from a Secret (an ActiveDoc's document
	// in a Secret): never to be shown.
	SecretFields []string
	// Details say what would change, for a person (a portal template's unified diff).
	Details []string
}

// Changes reports whether a plan would change 3scale (ClusterWrites alone do not).
func (p Plan) Changes() bool {
	return p.Action == "update" || p.Action == "create" || p.Action == "after"
}

// Blocked reports whether applying the object would not sync it: it would be Invalid, or Orphan
// waiting for something this diff does not create.
func (p Plan) Blocked() bool { return p.Action == "wait" || p.Action == "invalid" }

// PlanOne plans one object with its kind's engine (Preview), then records it in mem as synced (its
// remote id if it has one), for its dependants to resolve.
func PlanOne[T engine.Object, D any, S engine.Snapshot[S]](ctx context.Context, mem client.Client, r *engine.Reconciler[T, D, S], obj T, plan *Plan) error {
	p, err := r.Preview(ctx, obj)
	sess := p.Session
	plan.Details = p.Details
	if err == nil {
		switch {
		case !p.Exists:
			plan.Action, plan.Message = "create", fmt.Sprintf("create %s %q (with what it holds) on tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
		case !p.UpToDate:
			plan.Action, plan.Message = "update", fmt.Sprintf("update %s %q on tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
			if len(plan.Writes) == 0 {
				// Nothing for 3scale: what is out of date is in the cluster (ClusterWrites).
				plan.Action, plan.Message = "none", fmt.Sprintf("%s %q is in sync with tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
				if len(plan.ClusterWrites) > 0 {
					plan.Message += "; a sync would write to the cluster only"
				}
			}
		default:
			plan.Action, plan.Message = "none", fmt.Sprintf("%s %q is in sync with tenant %s", plan.Kind, sess.SystemName, sess.Tenant)
		}
		if p.Adopted != 0 {
			plan.Message += fmt.Sprintf(" (adopting the existing %s %d)", plan.Kind, p.Adopted)
		}
		observed(obj, sess, plan)
	}
	if err != nil {
		class, reason, message := engine.Classify(err)
		var reasoned *engine.ReasonedError
		if !errors.As(err, &reasoned) {
			return err
		}
		plan.Action, plan.Message, plan.Reason, plan.FromRemote = "wait", message, reason, engine.FromRemote(err)
		if class == engine.ClassInvalid {
			plan.Action = "invalid"
		}
		return nil
	}
	// Taken as synced: what depends on it resolves (with its id; one to be created has none, and its
	// dependants wait for it).
	st := obj.GetSyncStatus()
	st.TenantHost, st.SystemName, st.SyncedHash, st.ObservedGeneration = sess.Tenant, sess.SystemName, sess.Hash, obj.GetGeneration()
	engine.SetSyncState(st, v1alpha1.ConditionSynced, v1alpha1.ReasonSynced, "planned", obj.GetGeneration())
	return mem.Status().Update(ctx, obj)
}

// observed turns the plan of an object only observed (spec.management: Observe) into what applying it
// does: nothing to 3scale. The writes listed are those switching it to Full would make, as its
// status.observation tells; with nothing to observe, it waits.
func observed(obj engine.Object, sess *engine.Session, plan *Plan) {
	if !obj.ObserveOnly() {
		return
	}
	switch plan.Action {
	case "create":
		plan.Action, plan.Reason = "wait", v1alpha1.ReasonNothingToObserve
		plan.Message = fmt.Sprintf("observe only: tenant %s has no %s %q to observe, and none is created", sess.Tenant, plan.Kind, sess.SystemName)
	case "update":
		plan.Action = "none"
		plan.Message = fmt.Sprintf("observe only: applying it writes nothing to 3scale; spec.management: Full would make these %d writes (%s)",
			len(plan.Writes), plan.Message)
	default:
		plan.Message = "observe only: " + plan.Message
	}
}

// MemoryKinds is what Memory knows of the kinds diff plans: their lists (the cluster's objects of those
// kinds are copied), the field indexes their syncers read by, and the kinds whose status is a subresource.
type MemoryKinds struct {
	Lists      []client.ObjectList
	Indexes    func(*fake.ClientBuilder) *fake.ClientBuilder
	WithStatus []client.Object
}

// Memory is the in-memory namespace diff reads: the cluster's objects of kinds, Secrets and ConfigMaps of
// namespace, with objs over them (an object that exists keeps its status and metadata, and takes objs'
// spec and labels).
func Memory(ctx context.Context, cluster client.Reader, scheme *runtime.Scheme, namespace string, objs []client.Object, kinds MemoryKinds) (client.Client, error) {
	b := kinds.Indexes(fake.NewClientBuilder().WithScheme(scheme)).WithStatusSubresource(kinds.WithStatus...)
	have := map[string]client.Object{}
	lists := append([]client.ObjectList{&corev1.SecretList{}, &corev1.ConfigMapList{}}, kinds.Lists...)
	if cluster != nil {
		for i, l := range lists {
			kind := strings.TrimSuffix(reflect.TypeOf(l).Elem().Name(), "List") // *v1alpha1.BackendList: Backend
			err := cluster.List(ctx, l, client.InNamespace(namespace))
			switch {
			case meta.IsNoMatchError(err) && i >= 2:
				return nil, fmt.Errorf("apimsync's CRDs are not installed in this cluster (it has no %s of %s): install apimsync first (docs/install.md)",
					kind, v1alpha1.GroupVersion)
			case err != nil && !apierrors.IsNotFound(err):
				return nil, fmt.Errorf("cannot list the %ss of namespace %q: %w", kind, namespace, err)
			}
			_ = kit.ForEachItem(l, func(o client.Object) {
				o.SetResourceVersion("")
				have[engine.KindOf(o)+"/"+o.GetName()] = o
			})
		}
	}
	for _, given := range objs {
		if secret, ok := given.(*corev1.Secret); ok && len(secret.StringData) > 0 {
			given = withStringData(secret) // as the API server stores it: the syncers read Data
		}
		key := engine.KindOf(given) + "/" + given.GetName()
		if existing, ok := have[key]; ok {
			merged := given.DeepCopyObject().(client.Object)
			copyStatus(existing, merged)
			merged.SetAnnotations(existing.GetAnnotations())
			merged.SetFinalizers(existing.GetFinalizers())
			merged.SetUID(existing.GetUID())
			merged.SetGeneration(existing.GetGeneration() + 1)
			have[key] = merged
			continue
		}
		have[key] = given.DeepCopyObject().(client.Object)
	}
	for _, o := range have {
		b = b.WithObjects(o)
	}
	return b.Build(), nil
}

// copyStatus copies from's whole status into into (both of one kind): the recorded identity, ids of
// dependencies, password versions.
func copyStatus(from, into client.Object) {
	f, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
	if err != nil {
		return
	}
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(into)
	if err != nil {
		return
	}
	t["status"] = f["status"]
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(t, into)
}

// IsApimsyncObject tells an apimsync object from the Secrets and ConfigMaps given with them.
func IsApimsyncObject(obj client.Object) bool {
	switch obj.(type) {
	case *corev1.Secret, *corev1.ConfigMap:
		return false
	}
	return true
}

// withStringData returns a copy of secret with its stringData merged into data, as the API server stores
// a Secret (stringData wins).
func withStringData(secret *corev1.Secret) *corev1.Secret {
	out := secret.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	for k, v := range out.StringData {
		out.Data[k] = []byte(v)
	}
	out.StringData = nil
	return out
}

// ClusterRecorder is the client syncers write Kubernetes objects with in a diff: each write goes to the
// in-memory namespace, and is recorded as one line (`create Secret "app-credentials"`), to be reported
// apart from the writes to 3scale.
type ClusterRecorder struct {
	client.Client
	Record func(write string)
}

// Create implements client.Writer, recording the create.
func (r ClusterRecorder) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return r.recorded("create", obj, r.Client.Create(ctx, obj, opts...))
}

// Update implements client.Writer, recording the update.
func (r ClusterRecorder) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return r.recorded("update", obj, r.Client.Update(ctx, obj, opts...))
}

// Patch implements client.Writer, recording the patch as an update.
func (r ClusterRecorder) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return r.recorded("update", obj, r.Client.Patch(ctx, obj, patch, opts...))
}

// Delete implements client.Writer, recording the delete.
func (r ClusterRecorder) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return r.recorded("delete", obj, r.Client.Delete(ctx, obj, opts...))
}

// recorded records a write that succeeded, as its verb, the object's kind and name, and returns err.
func (r ClusterRecorder) recorded(verb string, obj client.Object, err error) error {
	if err == nil {
		kind := engine.KindOf(obj)
		if gvk, gvkErr := r.Client.GroupVersionKindFor(obj); gvkErr == nil {
			kind = gvk.Kind
		}
		r.Record(fmt.Sprintf("%s %s %q", verb, kind, obj.GetName()))
	}
	return err
}
