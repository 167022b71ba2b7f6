package kit

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tsclient "github.com/apimsync/apimsync/client"
)

// PlanTerms are what apimsync manages of an account plan or a service plan: porta's API writes no more
// of either (AccountPlansController and ServicePlansController permit name, state_event and
// approval_required).
type PlanTerms struct {
	Name string
	// Published offers the plan in the developer portal (nil: hidden); ApprovalRequired nil is not managed.
	Published, ApprovalRequired *bool
}

// State is the state the terms ask of the plan: published, or hidden.
func (t PlanTerms) State() string {
	if t.Published != nil && *t.Published {
		return "published"
	}
	return "hidden"
}

// Match tells whether a plan's name, state and approval are the terms'.
func (t PlanTerms) Match(name, state string, approvalRequired bool) bool {
	return name == t.Name && state == t.State() && (t.ApprovalRequired == nil || approvalRequired == *t.ApprovalRequired)
}

// Params are the attributes to write to a plan whose state is have: state_event only when it differs.
func (t PlanTerms) Params(have string) tsclient.AccountPlanParams {
	p := tsclient.AccountPlanParams{Name: t.Name, ApprovalRequired: t.ApprovalRequired}
	if want := t.State(); want != have {
		p.StateEvent = map[string]string{"published": "publish", "hidden": "hide"}[want]
	}
	return p
}

// OlderDefault finds the plan a product's default belongs to when self says default too: among the
// objects of list in self's namespace whose spec.productRef is product, another one, not being deleted
// and older than self, that says default (isDefault). nil when there is none: self may be the default.
func OlderDefault(ctx context.Context, reader client.Reader, list client.ObjectList, self client.Object, product string,
	isDefault func(client.Object) bool) (client.Object, error) {
	if err := reader.List(ctx, list, client.InNamespace(self.GetNamespace()), client.MatchingFields{IndexProductRef: product}); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if o, ok := it.(client.Object); ok && o.GetUID() != self.GetUID() && o.GetDeletionTimestamp().IsZero() && isDefault(o) && OlderThan(o, self) {
			return o, nil
		}
	}
	return nil, nil
}
