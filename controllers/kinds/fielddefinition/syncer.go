package fielddefinition

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Syncer syncs FieldDefinitions to the tenant's field definitions.
type Syncer struct {
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Lists shares the tenant's field definitions among the FieldDefinitions looking for theirs in one
	// burst.
	Lists *kit.BurstLists
}

// Desired is what Resolve learns beyond the spec: nothing (a field definition depends on nothing).
type Desired struct{}

// Snapshot is the remote state of one field definition.
type Snapshot struct{ tsclient.FieldDefinition }

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Choices = slices.Clone(s.Choices)
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.FieldDefinition, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.FieldDefinition, *Snapshot]                = (*Syncer)(nil)
)

// RemoteTarget is porta's name of a spec's target: an application is a Cinstance there.
func RemoteTarget(t v1alpha1.FieldTarget) string {
	if t == v1alpha1.FieldTargetApplication {
		return "Cinstance"
	}
	return string(t)
}

// requiredOnTarget are the fields porta's models require: porta makes them required, visible and
// writable whatever is asked (FieldsDefinition#set_required_if_required_field_on_target), and refuses
// to delete them (avoid_destroy_required_field_on_target): Account.required_fields, User's and
// Cinstance's (app/models/account.rb, user.rb, cinstance.rb).
var requiredOnTarget = map[string][]string{"Account": {"org_name"}, "User": {"username", "email"}, "Cinstance": {"name"}}

// forcedRequired tells whether porta requires the field whatever its definition says.
func forcedRequired(target, name string) bool { return slices.Contains(requiredOnTarget[target], name) }

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, f *v1alpha1.FieldDefinition) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, f.Namespace, kit.SecretForSession(f, f.Spec.ProviderAccountSecretName()))
}

// SystemName is what identifies the field in its tenant: its target and name ("Account/vat_code").
func (s *Syncer) SystemName(f *v1alpha1.FieldDefinition) string {
	return RemoteTarget(f.Spec.Target) + "/" + f.Spec.Name
}

// Resolve implements engine.TypedSyncer.
func (s *Syncer) Resolve(_ context.Context, f *v1alpha1.FieldDefinition, sess *engine.Session) (engine.Resolved[Desired], error) {
	spec := f.Spec
	spec.CommonSpec = v1alpha1.CommonSpec{}
	return engine.Resolved[Desired]{Hash: sess.HashOf(sess.Tenant, spec)}, nil
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.FieldDefinition] {
	f := kit.TenantFinder("field definition", sess, s.Lists,
		func(id int64) (*tsclient.FieldDefinition, error) { return sess.Remote.GetFieldDefinition(ctx, id) },
		func() ([]tsclient.FieldDefinition, error) { return sess.Remote.ListFieldDefinitions(ctx) },
		func(r tsclient.FieldDefinition) (int64, string) { return r.ID, r.Target + "/" + r.Name })
	f.UniqueField = "name"
	return f
}

// Read implements engine.TypedSyncer: the field by its recorded id, or, before it has one, the tenant's
// field of its target and name.
func (s *Syncer) Read(ctx context.Context, f *v1alpha1.FieldDefinition, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(f, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	return &Snapshot{*remote}, true, nil
}

// params are what the spec asks of the field.
func params(f *v1alpha1.FieldDefinition) tsclient.FieldDefinitionParams {
	p := tsclient.FieldDefinitionParams{Target: RemoteTarget(f.Spec.Target), Name: f.Spec.Name, Label: f.Spec.Label,
		Required: f.Spec.Required, Hidden: f.Spec.Hidden, ReadOnly: f.Spec.ReadOnly, Choices: f.Spec.Choices}
	if f.Spec.Position != nil {
		p.Position = int64(*f.Spec.Position)
	}
	return p
}

// matches tells whether the remote field is the spec's: porta's forced flags are taken as asked.
func matches(r tsclient.FieldDefinition, f *v1alpha1.FieldDefinition) bool {
	p := params(f)
	if forcedRequired(r.Target, r.Name) {
		p.Required, p.Hidden, p.ReadOnly = true, false, false
	}
	return r.Label == p.Label && r.Required == p.Required && r.Hidden == p.Hidden && r.ReadOnly == p.ReadOnly &&
		slices.Equal(nonNil(r.Choices), nonNil(p.Choices)) && (p.Position == 0 || r.Position == p.Position)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, f *v1alpha1.FieldDefinition, _ *engine.Session, _ Desired, snap *Snapshot) (bool, error) {
	return matches(snap.FieldDefinition, f), nil
}

// Create implements engine.TypedSyncer: makes the field, or takes the tenant's field of its target and
// name (a built-in one always exists), then updates what differs.
func (s *Syncer) Create(ctx context.Context, f *v1alpha1.FieldDefinition, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.FieldDefinition, error) {
		return sess.Remote.CreateFieldDefinition(ctx, params(f))
	}, f, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	f.Status.FieldDefinitionID = created.ID
	snap := &Snapshot{*created}
	if !matches(snap.FieldDefinition, f) {
		snap, err = s.Update(ctx, f, sess, d, snap)
	}
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: refused, with nothing written, when the choices asked would
// leave out a value an account holds; otherwise one update.
func (s *Syncer) Update(ctx context.Context, f *v1alpha1.FieldDefinition, sess *engine.Session, _ Desired, snap *Snapshot) (*Snapshot, error) {
	if len(f.Spec.Choices) > 0 && !slices.Equal(nonNil(snap.Choices), f.Spec.Choices) && snap.Target == "Account" {
		if err := valuesAmong(ctx, sess.Remote, f.Spec.Name, f.Spec.Choices); err != nil {
			return nil, err
		}
	}
	updated, err := sess.Remote.UpdateFieldDefinition(ctx, snap.ID, params(f))
	if err != nil {
		return nil, fmt.Errorf("cannot update field %q: %w", sess.SystemName, err)
	}
	snap.FieldDefinition = *updated
	return snap, nil
}

// valuesAmong refuses choices that leave out a value an account of the tenant holds for the field:
// porta keeps such a value, but then refuses every save of that account until it changes, so apimsync
// never narrows the choices under an account (one list of the accounts, read only when the choices
// change).
func valuesAmong(ctx context.Context, c *tsclient.Client, name string, choices []string) error {
	accounts, err := c.ListAccounts(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the accounts to check their values of field %q: %w", name, err)
	}
	var outside []string
	for _, a := range accounts {
		if v := a.Fields[name]; v != "" && !slices.Contains(choices, v) {
			outside = append(outside, fmt.Sprintf("%s (%q)", a.OrgName, v))
		}
	}
	if len(outside) == 0 {
		return nil
	}
	slices.Sort(outside)
	more := ""
	if len(outside) > 3 {
		more = fmt.Sprintf(" and %d more", len(outside)-3)
		outside = outside[:3]
	}
	return engine.Invalid(v1alpha1.ReasonInvalidSpec, "choices leave out values accounts hold for field %q: %s%s; add those values to choices, or change the accounts' values first",
		name, strings.Join(outside, ", "), more)
}

// Note implements engine.Noter: a field porta requires whatever its definition says.
func (s *Syncer) Note(f *v1alpha1.FieldDefinition, snap *Snapshot) string {
	if snap != nil && forcedRequired(snap.Target, snap.Name) && (!f.Spec.Required || f.Spec.Hidden || f.Spec.ReadOnly) {
		return fmt.Sprintf("3scale requires field %s of every %s: it stays required, visible and writable whatever the spec says", snap.Name, f.Spec.Target)
	}
	return ""
}

// Delete implements engine.TypedSyncer. A field porta requires cannot be deleted (porta refuses): it is
// left in 3scale, as with deletionPolicy Retain.
func (s *Syncer) Delete(ctx context.Context, f *v1alpha1.FieldDefinition, sess *engine.Session) error {
	if forcedRequired(RemoteTarget(f.Spec.Target), f.Spec.Name) {
		return nil
	}
	return kit.DeleteHeld(f, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteFieldDefinition(ctx, id) })
}

// SecretRefs lists the Secrets a FieldDefinition reads: its provider account.
func SecretRefs(f *v1alpha1.FieldDefinition) []string {
	return []string{f.Spec.ProviderAccountSecretName()}
}

// AccountFieldsKey sums up a namespace's FieldDefinitions of accounts on a tenant — name, id and choices,
// sorted — for the DeveloperAccounts that give field values: it changes when one is made or changed.
func AccountFieldsKey(reader client.Reader) func(ctx context.Context, namespace, tenant string) (string, error) {
	return func(ctx context.Context, namespace, tenant string) (string, error) {
		var defs v1alpha1.FieldDefinitionList
		if err := reader.List(ctx, &defs, client.InNamespace(namespace)); err != nil {
			return "", err
		}
		var keys []string
		for _, f := range defs.Items {
			if f.Spec.Target == v1alpha1.FieldTargetAccount && f.Status.TenantHost == tenant {
				keys = append(keys, fmt.Sprintf("%s=%d/%s", f.Spec.Name, f.Status.FieldDefinitionID, strings.Join(f.Spec.Choices, ",")))
			}
		}
		slices.Sort(keys)
		return strings.Join(keys, ";"), nil
	}
}
