package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Owners of a dependant being deleted, whose deletion in 3scale takes the dependant's remote object along
// (a service's plans and their applications, an account's applications): the engine leaves the remote
// object to them rather than deleting it itself.

// OwnerFate is what becomes of an owner's remote object, for a dependant whose remote object 3scale
// deletes along with it.
type OwnerFate int

const (
	// OwnerStays: the owner is gone from the cache, retained (Retain policy), holds no remote object,
	// another one than the dependant lives under, or one on another tenant, or has no apimsync finalizer
	// (its deletion deletes nothing remotely): the dependant deletes its own.
	OwnerStays OwnerFate = iota
	// OwnerGoes: the owner is being deleted with its remote object (Delete policy, holds its id): its
	// deletion in 3scale takes the dependant's along, which needs no call of its own.
	OwnerGoes
	// OwnerMayGo: the owner would go that way but is not being deleted (yet): a prune that deletes
	// dependants before their owners may reach it in a moment.
	OwnerMayGo
)

// Owner is one owner of a dependant being deleted: its kind and name, for messages, and its fate.
type Owner struct {
	Kind, Name string
	Fate       OwnerFate
}

// OwnedBy is an optional part of a syncer whose remote objects live under other objects' (from the
// reference graph): Owners names them with their fates, for the engine to decide before Delete whether
// the object goes with an owner.
type OwnedBy[T Object] interface {
	Owners(ctx context.Context, obj T, s *Session) []Owner
}

// leaveToOwners tells whether a dependant's remote object is left to its owners' deletion: went when one
// of them goes; left with a quiet wait (ownerMayFollow) while one may still go within grace (a prune
// under way); neither otherwise, when the dependant deletes its own remote object.
func leaveToOwners(obj Object, grace time.Duration, owners []Owner) (left, went bool, err error) {
	var may []string
	for _, o := range owners {
		switch o.Fate {
		case OwnerGoes:
			return true, true, nil
		case OwnerMayGo:
			may = append(may, fmt.Sprintf("%s %s", o.Kind, o.Name))
		}
	}
	if len(may) == 0 || grace <= 0 {
		return false, false, nil
	}
	return true, false, ownerMayFollow(obj.GetDeletionTimestamp().Time, grace,
		"waiting a moment for %s to be deleted too (a prune), whose deletion in 3scale would take this one along",
		strings.Join(may, " or "))
}
