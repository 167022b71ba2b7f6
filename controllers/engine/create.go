package engine

// Creating remote objects and identity: the finalizer, the create-pending marker, the tenant binding.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// create creates the remote object. Unless a create is already pending, a create-pending marker is
// written first, with the finalizer in the same update of the object's metadata (one API server write
// for both): if the answer is lost, the next reconcile finds the object by system name as its own
// instead of adopting a stranger's. The marker lasts only as long as that doubt: it is settled (status)
// when the create succeeds, when its id is recorded, and when the create surely made nothing (3scale
// refused it). Left after a refusal, it would make a stranger's object given the same system name later
// look like this resource's own: taken without an adoption, and deleted with the resource. The refusal
// speaks for this try only: should an earlier one whose answer was lost have made the object after all
// (its request still under way in porta when this one looked), the object is later seen as a stranger's,
// adopted with an Event or refused; that is the safe side of the doubt. The marker is metadata: a
// replace of the whole object (kubectl replace, Argo CD's Replace=true) while a create is in doubt drops
// it with the finalizer, and the object created then is later seen as a stranger's too.
func (r *Reconciler[T, D, S]) create(ctx context.Context, obj T, s *Session, want D, w *statusWriter[T, D, S]) (Report, error) {
	if !s.CreatePending {
		mark := nextCreateMark(obj, s.Tenant)
		err := r.updateMetadata(ctx, obj, w, func(o client.Object) bool {
			annotations := maps.Clone(o.GetAnnotations())
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[v1alpha1.CreatePendingAnnotation] = mark
			o.SetAnnotations(annotations)
			controllerutil.AddFinalizer(o, Finalizer)
			return true
		})
		if err != nil {
			return Report{}, fmt.Errorf("cannot record the create-pending marker: %w", err)
		}
	}
	report, err := r.createRemote(ctx, obj, s, want)
	if err != nil && madeNothing(err) {
		r.settle(obj)
	}
	return report, err
}

// metadataNotWritten ends a reconcile whose metadata update failed: nothing was sent to 3scale. A
// conflict (the object changed since it was read: a spec edit, another controller's metadata) is looked
// at again shortly, with no condition and no event (the change's own watch event brings it back too);
// any other error is retried by the workqueue. Nothing is recorded either way.
func (r *Reconciler[T, D, S]) metadataNotWritten(w *statusWriter[T, D, S], err error) (ctrl.Result, error) {
	w.done = true
	if errors.Is(err, errObjectChanged) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// updateMetadata applies change to obj's metadata and, when it changed anything, writes it (an update
// with optimistic locking: a conflict is returned). The status obj carries, set so far by this
// reconcile, is kept for the status write at its end, and that write then diffs against the object as
// stored now. On failure obj's metadata is as it was; a conflict is errObjectChanged.
func (r *Reconciler[T, D, S]) updateMetadata(ctx context.Context, obj T, w *statusWriter[T, D, S], change func(client.Object) bool) error {
	// The update is made from the object as last read or written (w.before), not from obj: its answer is
	// decoded into the copy sent without clearing it first, so status obj holds and the API server does
	// not (an id just recorded) would stay in the copy, and the status write that diffs against it would
	// leave it out.
	stored := w.before.DeepCopyObject().(T)
	if !change(stored) {
		return nil
	}
	if err := r.Client.Update(ctx, stored); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("%w: %w", errObjectChanged, err)
		}
		return err
	}
	r.wrote(stored)
	obj.SetAnnotations(stored.GetAnnotations())
	obj.SetFinalizers(stored.GetFinalizers())
	obj.SetResourceVersion(stored.GetResourceVersion())
	obj.SetManagedFields(stored.GetManagedFields())
	// Status patches diff against the object as stored now: against the copy from before the update
	// they would carry its metadata (finalizers, managedFields, the old resourceVersion) too.
	w.before = stored
	return nil
}

// errObjectChanged is updateMetadata's conflict: the object changed since this reconcile read it.
var errObjectChanged = errors.New("the object changed since it was read")

// addFinalizer adds the remote-cleanup finalizer to obj, telling whether it was missing.
func addFinalizer(obj client.Object) bool { return controllerutil.AddFinalizer(obj, Finalizer) }

// nextCreateMark is the create-pending marker of obj's next create on tenant: "<tenant>#<n>#<uid>",
// n one more than any marker obj carries or settled (so that a marker is never written twice, even if
// the annotation was removed meanwhile), uid obj's own (so that the annotation, copied with the object
// into a new one — an export applied again, a restore — means nothing there).
func nextCreateMark(obj Object, tenant string) string {
	_, n, _ := parseCreateMark(obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation])
	_, settled, _ := parseCreateMark(obj.GetSyncStatus().CreateSettled)
	return fmt.Sprintf("%s#%d#%s", tenant, max(n, settled)+1, obj.GetUID())
}

// parseCreateMark splits a create-pending marker into its tenant, count and UID.
func parseCreateMark(mark string) (tenant string, n int, uid types.UID) {
	parts := strings.SplitN(mark, "#", 3)
	if len(parts) != 3 {
		return "", 0, ""
	}
	n, _ = strconv.Atoi(parts[1])
	return parts[0], n, types.UID(parts[2])
}

// PendingCreate is the tenant on which a create of obj's remote object was sent and its answer not seen
// (it may have made the object): the create-pending annotation written for this very object (its UID)
// while status does not record that create settled. "" when no create is in doubt.
func PendingCreate(obj Object) string {
	st := obj.GetSyncStatus()
	mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]
	if mark == "" || mark == st.CreateSettled {
		return ""
	}
	if tenant, _, uid := parseCreateMark(mark); uid == obj.GetUID() {
		return tenant
	}
	return ""
}

// settle is settleCreate, remembered: should the status write that records it fail, the next reconcile
// still knows that the create under this marker made nothing or was settled (recallSettled), and never
// takes a same-named stranger for its own. Forgotten with the object.
func (r *Reconciler[T, D, S]) settle(obj T) {
	settleCreate(obj)
	if mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]; mark != "" {
		r.settled.Store(client.ObjectKeyFromObject(obj), mark)
	}
}

// recallSettled settles again, in obj as read, a create this reconciler settled whose status write may
// have failed.
func (r *Reconciler[T, D, S]) recallSettled(key types.NamespacedName, obj T) {
	v, ok := r.settled.Load(key)
	if !ok {
		return
	}
	switch mark := v.(string); {
	case obj.GetSyncStatus().CreateSettled == mark:
		r.settled.Delete(key) // recorded: nothing more to remember
	case obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation] == mark:
		settleCreate(obj)
	}
}

// settleCreate records in obj's status that no create of its remote object is in doubt any more.
func settleCreate(obj Object) {
	st := obj.GetSyncStatus()
	if mark := obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation]; mark != "" {
		st.CreateSettled = mark
	}
}

// rebindTenant forgets a remote id recorded on another tenant than the one the provider account now
// points at: an id is bound to its tenant and never used against another. The object is then resolved
// by system name on the new tenant; the old remote object is left as it is.
// maxLeftBehind is how many copies left on earlier tenants status keeps, the latest.
const maxLeftBehind = 5

// leftBehindNote is what the Synced message says of the copies obj left on earlier tenants, "" for none.
func leftBehindNote(kind string, st *v1alpha1.CommonStatus) string {
	if len(st.LeftBehind) == 0 {
		return ""
	}
	parts := make([]string, len(st.LeftBehind))
	for i, c := range st.LeftBehind {
		parts[i] = fmt.Sprintf("%s %d on tenant %s", kind, c.ID, c.Tenant)
	}
	return "left untouched when its provider account moved: " + strings.Join(parts, ", ")
}

func (r *Reconciler[T, D, S]) rebindTenant(obj T, s *Session) (rebound bool) {
	st := obj.GetSyncStatus()
	if pending := PendingCreate(obj); pending != "" && pending != s.Tenant {
		r.settle(obj)
		rebound = true
	}
	if st.TenantHost == "" || st.TenantHost == s.Tenant {
		return rebound
	}
	if id := obj.GetRemoteID(); id != 0 {
		r.event(obj, "Warning", v1alpha1.ReasonTenantChanged, "Rebind",
			"the provider account now points at tenant %s: %s %d on tenant %s is left there untouched, and the %s is looked up by system name on %s",
			s.Tenant, r.Kind, id, st.TenantHost, r.Kind, s.Tenant)
		// Recorded, and told in every Synced message from now on: a copy left behind is never unannounced.
		st.LeftBehind = append(st.LeftBehind, v1alpha1.RemoteCopy{Tenant: st.TenantHost, ID: id, Since: metav1.Time{Time: r.now()}})
		if n := len(st.LeftBehind); n > maxLeftBehind {
			st.LeftBehind = st.LeftBehind[n-maxLeftBehind:]
		}
		rebound = true
	}
	// Every id the status holds is the old tenant's, not only the object's own: a portal's items, an
	// account's users, a product's features and metrics. None is used on the new tenant.
	obj.ForgetTenantIDs()
	return rebound
}

// checkCredentials checks the provider account once per tenant when its Secret changed since the
// object last synced, so that a refused token shows at once on every object using it.
func (r *Reconciler[T, D, S]) checkCredentials(ctx context.Context, st *v1alpha1.CommonStatus, s *Session) error {
	if st.ProviderAccountVersion != s.AccountVersion && st.ProviderAccountVersion != "" && r.Credentials != nil {
		if err := r.Credentials.Check(ctx, s); err != nil {
			return err
		}
	}
	st.ProviderAccountVersion = s.AccountVersion
	return nil
}
