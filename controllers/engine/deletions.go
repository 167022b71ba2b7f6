package engine

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Deletions remembers, per namespace, when an apimsync object there last began to be deleted by
// someone else than apimsync (or went without a finalizer): a deletion under way. An owner being
// deleted leaves its dependants to whoever deleted it while deletions go on in its namespace, and a
// dependant waits as long for its owner (see Reconciler.DependantGrace): a prune (Argo CD, Flux,
// kubectl delete -f) reaches them a moment later, each namespace one after the other. The deletions
// apimsync asks for itself (an owner's dependants: Ours) are not a prune, and are not counted. Safe for
// concurrent use.
type Deletions struct {
	mu   sync.Mutex
	last map[string]time.Time
	// ours holds the objects apimsync itself deleted (by UID), with when.
	ours map[types.UID]time.Time
	// now returns the time; tests replace it.
	now func() time.Time
}

// deletionsMemory is how long a namespace's last deletion, or one of our own deletions, is remembered:
// far longer than any grace (dependantGraceCap graces), and it bounds the record to the namespaces and
// objects of the last hour.
const deletionsMemory = time.Hour

// NewDeletions returns an empty record.
func NewDeletions() *Deletions {
	return &Deletions{last: map[string]time.Time{}, ours: map[types.UID]time.Time{}, now: time.Now}
}

// Saw records a deletion in namespace now.
func (d *Deletions) Saw(namespace string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	d.last[namespace] = now
	d.sweep(now)
}

// Last is when a deletion in namespace was last seen; zero if none was.
func (d *Deletions) Last(namespace string) time.Time {
	if d == nil {
		return time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last[namespace]
}

// Ours records that apimsync itself is deleting the object with this UID (an owner's dependant): its
// deletion is no prune, and the object, deleted by its owner's cascade, has no grace of its own.
func (d *Deletions) Ours(uid types.UID) {
	if d == nil || uid == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	d.ours[uid] = now
	d.sweep(now)
}

// IsOurs tells whether apimsync itself deleted the object with this UID.
func (d *Deletions) IsOurs(uid types.UID) bool {
	if d == nil || uid == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.ours[uid]
	return ok
}

// sweep drops what is older than deletionsMemory, once the record has grown (d.mu held).
func (d *Deletions) sweep(now time.Time) {
	if len(d.last)+len(d.ours) < 1024 {
		return
	}
	for ns, at := range d.last {
		if now.Sub(at) > deletionsMemory {
			delete(d.last, ns)
		}
	}
	for uid, at := range d.ours {
		if now.Sub(at) > deletionsMemory {
			delete(d.ours, uid)
		}
	}
}

// Handler records the deletions an informer of one kind reports: an object whose deletion timestamp
// is set, or that goes without one (no finalizer held it), unless apimsync deleted it. It enqueues
// nothing.
func (d *Deletions) Handler() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero() && !d.IsOurs(e.ObjectNew.GetUID()) {
				d.Saw(e.ObjectNew.GetNamespace())
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// One that had a deletion timestamp was counted when it was set: its finalizers' removal is
			// the end of that deletion, not another.
			if e.Object.GetDeletionTimestamp().IsZero() && !d.IsOurs(e.Object.GetUID()) {
				d.Saw(e.Object.GetNamespace())
			}
		},
	}
}
