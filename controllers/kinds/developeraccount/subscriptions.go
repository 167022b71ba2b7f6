package developeraccount

// An account's service subscriptions (spec.servicePlanRefs): one per product, through the ServicePlan
// named; made, moved and approved from what 3scale holds now, and ended only where apimsync made or took
// them (status.serviceSubscriptionIDs).

import (
	"context"
	"fmt"
	"slices"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// servicePlanOfAccount is one of a DeveloperAccount's spec.servicePlanRefs.
var servicePlanOfAccount = kit.Dependency{Kind: "ServicePlan", Field: "spec.servicePlanRefs", NotFound: v1alpha1.ReasonServicePlanNotFound,
	Deleting: v1alpha1.ReasonServicePlanDeleting, Invalid: v1alpha1.ReasonServicePlanInvalid, NotSynced: v1alpha1.ReasonServicePlanNotSynced,
	DeletingHint: "name another plan in spec.servicePlanRefs, or remove it", WhileDeleting: kit.WaitingFor}

// Subscription is one subscription the spec asks for: to a product, through one of its service plans.
type Subscription struct {
	// Product is the Product object's name; ProductID and PlanID are their ids in 3scale.
	Product           string
	ProductID, PlanID int64
}

// subscriptionsManaged tells whether the account manages subscriptions: it names plans, or made some
// still to be ended. An account that never named any reads none (no call).
func subscriptionsManaged(d *v1alpha1.DeveloperAccount, want []Subscription) bool {
	return len(want) > 0 || len(d.Status.ServiceSubscriptionIDs) > 0
}

// resolveSubscriptions puts in desired the subscriptions the spec names: each ServicePlan Synced, on this
// tenant, one per product.
func (s *Syncer) resolveSubscriptions(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired *Desired) error {
	byProduct := map[string]string{}
	for _, ref := range d.Spec.ServicePlanRefs {
		var plan v1alpha1.ServicePlan
		if err := kit.ReadDependency(ctx, s.Reader, d.Namespace, ref, &plan, servicePlanOfAccount); err != nil {
			return err
		}
		if other, twice := byProduct[plan.Spec.ProductRef]; twice {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "ServicePlans %q and %q are both plans of Product %q: an account subscribes to a product through one plan; "+
				"name one of them in spec.servicePlanRefs", other, ref, plan.Spec.ProductRef)
		}
		byProduct[plan.Spec.ProductRef] = ref
		if host := plan.Status.TenantHost; host != "" && host != sess.Tenant {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "ServicePlan %q is a plan of tenant %s, and this account is on tenant %s: an account subscribes to its tenant's products; "+
				"name a ServicePlan of the same provider account", ref, host, sess.Tenant)
		}
		if err := kit.ReadyDependency(&plan, servicePlanOfAccount); err != nil {
			return err
		}
		desired.Subscriptions = append(desired.Subscriptions, Subscription{Product: plan.Spec.ProductRef, ProductID: plan.Status.ProductID, PlanID: plan.Status.ServicePlanID})
	}
	slices.SortFunc(desired.Subscriptions, func(a, b Subscription) int { return int(a.ProductID - b.ProductID) })
	desired.ManagesSubscriptions = subscriptionsManaged(d, desired.Subscriptions)
	return nil
}

// readSubscriptions reads the account's subscriptions into snap, when the account manages them.
func readSubscriptions(ctx context.Context, sess *engine.Session, want Desired, snap *Snapshot) error {
	if !want.ManagesSubscriptions {
		return nil
	}
	subs, err := sess.Remote.ListSubscriptions(ctx, snap.Account.ID)
	if err != nil {
		return fmt.Errorf("cannot list the service subscriptions of account %d: %w", snap.Account.ID, err)
	}
	snap.Subscriptions = append([]tsclient.ServiceSubscription{}, subs...)
	return nil
}

// subscriptionTo is the account's subscription to a product, if any.
func subscriptionTo(subs []tsclient.ServiceSubscription, productID int64) (tsclient.ServiceSubscription, bool) {
	i := slices.IndexFunc(subs, func(s tsclient.ServiceSubscription) bool { return s.ServiceID == productID })
	if i < 0 {
		return tsclient.ServiceSubscription{}, false
	}
	return subs[i], true
}

// letGo are the products whose subscription apimsync made or took and the spec no longer names.
func letGo(d *v1alpha1.DeveloperAccount, want []Subscription) []string {
	var out []string
	for _, product := range kit.SortedKeys(d.Status.ServiceSubscriptionIDs) {
		if !slices.ContainsFunc(want, func(w Subscription) bool { return w.Product == product }) {
			out = append(out, product)
		}
	}
	return out
}

// recordSubscriptions records the subscriptions the spec names that 3scale holds, and keeps those let go
// that are still there (to be ended).
func recordSubscriptions(d *v1alpha1.DeveloperAccount, want []Subscription, subs []tsclient.ServiceSubscription) {
	if subs == nil {
		return
	}
	ids := map[string]int64{}
	for _, w := range want {
		if sub, found := subscriptionTo(subs, w.ProductID); found {
			ids[w.Product] = sub.ID
		}
	}
	for _, product := range letGo(d, want) {
		id := d.Status.ServiceSubscriptionIDs[product]
		if slices.ContainsFunc(subs, func(s tsclient.ServiceSubscription) bool { return s.ID == id }) {
			ids[product] = id
		}
	}
	if len(ids) == 0 {
		ids = nil
	}
	d.Status.ServiceSubscriptionIDs = ids
}

// subscriptionsMatch reports whether the account subscribes to each product named, through the plan
// named, live, and no longer to those it let go; it records what it finds.
func subscriptionsMatch(d *v1alpha1.DeveloperAccount, want Desired, snap *Snapshot) bool {
	if !want.ManagesSubscriptions {
		return true
	}
	if snap.Subscriptions == nil {
		return false
	}
	recordSubscriptions(d, want.Subscriptions, snap.Subscriptions)
	for _, w := range want.Subscriptions {
		if sub, found := subscriptionTo(snap.Subscriptions, w.ProductID); !found || sub.PlanID != w.PlanID || sub.State != "live" {
			return false
		}
	}
	return len(letGo(d, want.Subscriptions)) == 0
}

// syncSubscriptions subscribes, moves and approves what the spec names, then ends what it let go; porta
// refusing to end one while the account has unsuspended applications on the product is a wait.
func syncSubscriptions(ctx context.Context, c *tsclient.Client, d *v1alpha1.DeveloperAccount, want Desired, snap *Snapshot) error {
	accountID := snap.Account.ID
	defer func() { recordSubscriptions(d, want.Subscriptions, snap.Subscriptions) }()
	replace := func(sub tsclient.ServiceSubscription) {
		snap.Subscriptions = slices.DeleteFunc(snap.Subscriptions, func(s tsclient.ServiceSubscription) bool { return s.ID == sub.ID })
		snap.Subscriptions = append(snap.Subscriptions, sub)
	}
	for _, w := range want.Subscriptions {
		sub, found := subscriptionTo(snap.Subscriptions, w.ProductID)
		if !found {
			made, err := c.Subscribe(ctx, accountID, w.PlanID)
			if err != nil {
				return fmt.Errorf("cannot subscribe account %d to Product %q: %w", accountID, w.Product, err)
			}
			sub = *made
		} else if sub.PlanID != w.PlanID {
			if err := c.ChangeSubscriptionPlan(ctx, accountID, sub.ID, w.PlanID); err != nil {
				return fmt.Errorf("cannot move the subscription of account %d to Product %q to service plan %d: %w", accountID, w.Product, w.PlanID, err)
			}
			sub.PlanID = w.PlanID
		}
		replace(sub)
		if sub.State == "pending" {
			approved, err := c.ApproveSubscription(ctx, accountID, sub.ID)
			if err != nil {
				return fmt.Errorf("cannot approve the subscription of account %d to Product %q: %w", accountID, w.Product, err)
			}
			replace(*approved)
		}
	}
	for _, product := range letGo(d, want.Subscriptions) {
		id := d.Status.ServiceSubscriptionIDs[product]
		err := kit.IgnoreNotFound(c.Unsubscribe(ctx, accountID, id))
		if tsclient.IsInUse(err) {
			return engine.Waiting(v1alpha1.ReasonSubscriptionInUse, "3scale refuses to end the account's subscription to Product %q while the account has applications on it that are not suspended: "+
				"suspend or delete them, or name one of the product's ServicePlans in spec.servicePlanRefs again", product)
		}
		if err != nil {
			return fmt.Errorf("cannot end the subscription of account %d to Product %q: %w", accountID, product, err)
		}
		snap.Subscriptions = slices.DeleteFunc(snap.Subscriptions, func(s tsclient.ServiceSubscription) bool { return s.ID == id })
	}
	return nil
}
