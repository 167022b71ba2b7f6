package accountplan

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Syncer syncs AccountPlans to the tenant's account plans.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
}

// Desired is what Resolve learns beyond the spec: nothing (an account plan depends on nothing).
type Desired struct{}

// Snapshot is the remote state of one account plan.
type Snapshot struct{ tsclient.AccountPlan }

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.AccountPlan, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.AccountPlan, *Snapshot]                = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, a *v1alpha1.AccountPlan) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, a.Namespace, kit.SecretForSession(a, a.Spec.ProviderAccountSecretName()))
}

// SystemName is what identifies the plan before it records an id: its name. porta shows an account plan
// without its system name (PlanRepresenter), so the name is what a lost create or an adoption finds it by,
// and what the one-owner check keys it by.
func (s *Syncer) SystemName(a *v1alpha1.AccountPlan) string { return a.Spec.Name }

// Resolve implements engine.TypedSyncer: one default plan per tenant.
func (s *Syncer) Resolve(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	if err := s.soleDefault(ctx, a, sess.Tenant); err != nil {
		return r, err
	}
	spec := a.Spec
	spec.CommonSpec = v1alpha1.CommonSpec{}
	r.Hash = sess.HashOf(sess.Tenant, spec)
	return r, nil
}

// soleDefault makes an AccountPlan that says default Invalid while an older one of the same tenant (any
// namespace: its recorded tenant, or this namespace) says it too: a tenant has one default account plan.
// The message names the other only in this namespace.
func (s *Syncer) soleDefault(ctx context.Context, a *v1alpha1.AccountPlan, tenant string) error {
	if !a.Spec.Default {
		return nil
	}
	var plans v1alpha1.AccountPlanList
	if err := s.Reader.List(ctx, &plans); err != nil {
		return err
	}
	for i := range plans.Items {
		o := &plans.Items[i]
		sameTenant := o.Status.TenantHost == tenant || (o.Namespace == a.Namespace && o.Spec.ProviderAccountSecretName() == a.Spec.ProviderAccountSecretName())
		if o.UID == a.UID || !o.Spec.Default || !o.DeletionTimestamp.IsZero() || !sameTenant || !kit.OlderThan(o, a) {
			continue
		}
		who := "an AccountPlan in another namespace"
		if o.Namespace == a.Namespace {
			who = fmt.Sprintf("AccountPlan %q", o.Name)
		}
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "%s already is the tenant's default account plan: a tenant has one; remove default from one of them", who)
	}
	return nil
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.AccountPlan] {
	return kit.TenantFinder("account plan", sess, nil,
		func(id int64) (*tsclient.AccountPlan, error) { return sess.Remote.GetAccountPlan(ctx, id) },
		func() ([]tsclient.AccountPlan, error) { return sess.Remote.ListAccountPlans(ctx) },
		func(r tsclient.AccountPlan) (int64, string) { return r.ID, r.Name })
}

// Read implements engine.TypedSyncer: the plan by its recorded id, or, before it has one, the tenant's
// plan of its name.
func (s *Syncer) Read(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(a, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	return &Snapshot{*remote}, true, nil
}

// terms are what the spec asks of the plan.
func terms(a *v1alpha1.AccountPlan) kit.PlanTerms {
	return kit.PlanTerms{Name: a.Spec.Name, Published: a.Spec.Published, ApprovalRequired: a.Spec.ApprovalRequired}
}

// attributesMatch tells whether the plan's name, state and approval are the spec's.
func attributesMatch(r tsclient.AccountPlan, a *v1alpha1.AccountPlan) bool {
	return terms(a).Match(r.Name, r.State, r.ApprovalRequired)
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, a *v1alpha1.AccountPlan, _ *engine.Session, _ Desired, snap *Snapshot) (bool, error) {
	return attributesMatch(snap.AccountPlan, a) && (!a.Spec.Default || snap.Default), nil
}

// Create implements engine.TypedSyncer: makes the plan (porta derives its system name from its name),
// or adopts the tenant's plan of its name, then makes it the default when the spec says so.
func (s *Syncer) Create(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, _ Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.AccountPlan, error) {
		return sess.Remote.CreateAccountPlan(ctx, terms(a).Params("hidden"))
	}, a, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	a.Status.AccountPlanID = created.ID
	snap, err := s.Update(ctx, a, sess, Desired{}, &Snapshot{*created})
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: the attributes that differ, then the default.
func (s *Syncer) Update(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session, _ Desired, snap *Snapshot) (*Snapshot, error) {
	c := sess.Remote
	if !attributesMatch(snap.AccountPlan, a) {
		updated, err := c.UpdateAccountPlan(ctx, snap.ID, terms(a).Params(snap.State))
		if err != nil {
			return nil, fmt.Errorf("cannot update account plan %q: %w", a.Spec.Name, err)
		}
		snap.AccountPlan = *updated
	}
	if a.Spec.Default && !snap.Default {
		updated, err := c.SetDefaultAccountPlan(ctx, snap.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot make account plan %q the tenant's default: %w", a.Spec.Name, err)
		}
		snap.AccountPlan = *updated
	}
	return snap, nil
}

// Note implements engine.Noter: a plan 3scale has as the tenant's default though the spec does not say
// default (porta's API cannot unset one).
func (s *Syncer) Note(a *v1alpha1.AccountPlan, snap *Snapshot) string {
	if snap != nil && snap.Default && !a.Spec.Default {
		return "3scale has this plan as the tenant's default account plan, which its spec does not say: porta's API cannot unset a default; make another plan default"
	}
	return ""
}

// Delete implements engine.TypedSyncer. porta refuses (403) to delete a plan accounts are on
// (Plan#can_be_destroyed?, app/models/plan.rb:174-186): that waits, saying so, until they move or go.
func (s *Syncer) Delete(ctx context.Context, a *v1alpha1.AccountPlan, sess *engine.Session) error {
	err := kit.DeleteHeld(a, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteAccountPlan(ctx, id) })
	if tsclient.IsInUse(err) {
		return engine.Waiting(v1alpha1.ReasonDeletionBlocked, "deleting: 3scale refuses to delete account plan %q while accounts are on it: move them to another plan or delete them", a.Spec.Name)
	}
	return err
}

// SecretRefs lists the Secrets an AccountPlan reads: its provider account.
func SecretRefs(a *v1alpha1.AccountPlan) []string {
	return []string{a.Spec.ProviderAccountSecretName()}
}

// DefaultRivals maps a changed AccountPlan to the others that say default: one of them Invalid while this
// one was the default is woken when this one lets go or goes.
func DefaultRivals(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var plans v1alpha1.AccountPlanList
		if err := reader.List(ctx, &plans); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range plans.Items {
			if o := &plans.Items[i]; o.UID != obj.GetUID() && o.Spec.Default {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		}
		return reqs
	}
}
