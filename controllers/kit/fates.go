package kit

import (
	"context"

	"github.com/apimsync/apimsync/controllers/engine"
)

// Fates reads the named owner object into owner and tells its fate (engine.OwnerFate) for a dependant on
// tenant that lives under the owner's remote object held (the id the dependant's status records for it).
// The table of kinds gives every syncer that has owners the one function that knows the reference graph.
type Fates func(ctx context.Context, namespace, name, tenant string, held int64, owner engine.Object) engine.OwnerFate

// Of is f's answer; with no f (a syncer built without the graph) the owner stays.
func (f Fates) Of(ctx context.Context, namespace, name, tenant string, held int64, owner engine.Object) engine.OwnerFate {
	if f == nil {
		return engine.OwnerStays
	}
	return f(ctx, namespace, name, tenant, held, owner)
}
