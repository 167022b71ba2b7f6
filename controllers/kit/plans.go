package kit

import tsclient "github.com/apimsync/apimsync/client"

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
