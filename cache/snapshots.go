package cache

import (
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Snapshots is an LRU of remote snapshots keyed by tenant, kind and remote id. Syncers put what they
// read or wrote and read it back instead of calling 3scale; a drift check bypasses it. Safe for
// concurrent use.
type Snapshots struct {
	lru *lru.Cache[string, any]
}

// NewSnapshots returns a cache holding at most size snapshots.
func NewSnapshots(size int) *Snapshots {
	c, err := lru.New[string, any](size)
	if err != nil { // only for size <= 0
		c, _ = lru.New[string, any](1)
	}
	return &Snapshots{lru: c}
}

func snapshotKey(tenant, kind string, id int64) string {
	return fmt.Sprintf("%s/%s/%d", tenant, kind, id)
}

// Get returns the snapshot of one remote object, if cached and of type T.
func Get[T any](s *Snapshots, tenant, kind string, id int64) (T, bool) {
	var zero T
	v, ok := s.Lookup(tenant, kind, id)
	if !ok {
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// Lookup returns the snapshot of one remote object, if cached.
func (s *Snapshots) Lookup(tenant, kind string, id int64) (any, bool) {
	if s == nil {
		return nil, false
	}
	return s.lru.Get(snapshotKey(tenant, kind, id))
}

// Put records the snapshot of one remote object.
func (s *Snapshots) Put(tenant, kind string, id int64, snapshot any) {
	if s != nil {
		s.lru.Add(snapshotKey(tenant, kind, id), snapshot)
	}
}

// Forget drops the snapshot of one remote object, e.g. after a failed write or a delete.
func (s *Snapshots) Forget(tenant, kind string, id int64) {
	if s != nil {
		s.lru.Remove(snapshotKey(tenant, kind, id))
	}
}

// Len returns the number of cached snapshots.
func (s *Snapshots) Len() int { return s.lru.Len() }
