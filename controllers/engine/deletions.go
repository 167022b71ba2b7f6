package engine

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Deletions remembers, per namespace, when an apimsync object there last began to be deleted (or went
// without a finalizer): a deletion under way. An owner being deleted leaves its dependants to whoever
// deleted it while deletions go on in its namespace (see Reconciler.DependantGrace): a prune (Argo CD,
// Flux, kubectl delete -f) reaches them a moment later, each namespace one after the other. One entry
// per namespace that saw a deletion; safe for concurrent use.
type Deletions struct {
	mu   sync.Mutex
	last map[string]time.Time
	// now returns the time; tests replace it.
	now func() time.Time
}

// NewDeletions returns an empty record.
func NewDeletions() *Deletions {
	return &Deletions{last: map[string]time.Time{}, now: time.Now}
}

// Saw records a deletion in namespace now.
func (d *Deletions) Saw(namespace string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last[namespace] = d.now()
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

// Handler records the deletions an informer of one kind reports: an object whose deletion timestamp
// is set, or that is gone. It enqueues nothing.
func (d *Deletions) Handler() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero() {
				d.Saw(e.ObjectNew.GetNamespace())
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			d.Saw(e.Object.GetNamespace())
		},
	}
}
