package kit

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// BurstLists shares one list of a remote collection (a tenant's backends, products or plans) among the
// objects that look for their remote counterpart by system name in one burst (a cold start, a bulk
// apply): one list per collection per tenant instead of one per object. A list is kept for TTL; objects
// that ask meanwhile get it without a call, and concurrent askers share one call.
//
// A shared list may miss what was created since it was read. That is safe: an object not found in it is
// created, and a create that collides ("has already been taken") reads the collection afresh before it
// adopts (createOrAdopt), as does an object that may have lost its own create's answer (create-pending).
// Safe for concurrent use.
type BurstLists struct {
	// TTL is how long a list is shared (default 15s).
	TTL time.Duration

	group   singleflight.Group
	mu      sync.Mutex
	entries map[string]burstEntry
}

type burstEntry struct {
	items any
	at    time.Time
}

// SharedList returns the list under key, read by list at most once per TTL.
func SharedList[R any](b *BurstLists, key string, list func() ([]R, error)) ([]R, error) {
	if b == nil {
		return list()
	}
	ttl := b.TTL
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	b.mu.Lock()
	if e, ok := b.entries[key]; ok && time.Since(e.at) < ttl {
		b.mu.Unlock()
		return e.items.([]R), nil
	}
	b.mu.Unlock()
	v, err, _ := b.group.Do(key, func() (any, error) {
		items, err := list()
		if err != nil {
			return nil, err
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.entries == nil {
			b.entries = map[string]burstEntry{}
		}
		for k, e := range b.entries { // drop what has expired, so the map stays small
			if time.Since(e.at) >= ttl {
				delete(b.entries, k)
			}
		}
		b.entries[key] = burstEntry{items: items, at: time.Now()}
		return items, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]R), nil
}
