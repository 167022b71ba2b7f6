package engine

import (
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"k8s.io/apimachinery/pkg/types"
)

// OrphanBackoff hands out per-object exponential delays for objects waiting on a dependency
// (cenkalti/backoff/v4): each wait doubles the delay up to Max, a success resets it. Watches on the
// dependency wake the object earlier; the backoff is the safety net.
type OrphanBackoff struct {
	// Initial and Max bound the delays; Multiplier grows them.
	Initial, Max time.Duration
	Multiplier   float64

	mu    sync.Mutex
	perID map[types.NamespacedName]*backoff.ExponentialBackOff
}

// NewOrphanBackoff returns an OrphanBackoff starting at initial and capped at max.
func NewOrphanBackoff(initial, max time.Duration) *OrphanBackoff {
	return &OrphanBackoff{Initial: initial, Max: max, Multiplier: 2, perID: map[types.NamespacedName]*backoff.ExponentialBackOff{}}
}

// Next returns the next delay for the object.
func (o *OrphanBackoff) Next(id types.NamespacedName) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	b, ok := o.perID[id]
	if !ok {
		b = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(o.Initial),
			backoff.WithMaxInterval(o.Max),
			backoff.WithMultiplier(o.Multiplier),
			backoff.WithRandomizationFactor(0.1),
			backoff.WithMaxElapsedTime(0), // never give up: an orphan waits as long as it takes
		)
		o.perID[id] = b
	}
	return b.NextBackOff()
}

// Reset forgets the object's backoff, after a success or when it is deleted.
func (o *OrphanBackoff) Reset(id types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.perID, id)
}
