package developeraccount

// An account's field values (spec.fields): each a field the tenant defines for accounts, within its
// choices; read with the tenant's field definitions, written with the account's update (or its signup).

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// accountFields are the field definitions of the tenant's accounts, by name (org_name left out).
type accountFields map[string]tsclient.FieldDefinition

// definitionsKey sums up the namespace's FieldDefinitions of accounts on the account's tenant (the
// table gives Syncer.FieldsKey): a snapshot read before one of them changed does not serve (Serves), so
// an account waiting for a field sees it once its FieldDefinition is made.
func (s *Syncer) definitionsKey(ctx context.Context, d *v1alpha1.DeveloperAccount, tenant string) (string, error) {
	if len(d.Spec.Fields) == 0 || s.FieldsKey == nil {
		return "", nil
	}
	return s.FieldsKey(ctx, d.Namespace, tenant)
}

// readFields reads the tenant's account field definitions into snap, when the spec gives field values:
// one list per tenant per burst, shared among the accounts with the same view of the namespace's
// FieldDefinitions (a list read before one was made is not shared with those that see it made).
func (s *Syncer) readFields(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, want Desired, snap *Snapshot) error {
	if len(d.Spec.Fields) == 0 {
		return nil
	}
	defs, err := kit.SharedList(s.Lists, sess.Tenant+" field definitions "+want.FieldsKey, func() ([]tsclient.FieldDefinition, error) {
		return sess.Remote.ListFieldDefinitions(ctx)
	})
	if err != nil {
		return fmt.Errorf("cannot list the field definitions: %w", err)
	}
	snap.Fields = accountFields{}
	for _, f := range defs {
		if f.Target == "Account" && f.Name != "org_name" {
			snap.Fields[f.Name] = f
		}
	}
	snap.FieldsKey = want.FieldsKey
	return nil
}

// checkFields checks the spec's values against the tenant's definitions: each field defined (else a
// wait), each value among its choices (else Invalid); signup says whether the account is yet to be
// signed up, when a field the tenant requires needs a value.
func checkFields(d *v1alpha1.DeveloperAccount, defs accountFields, signup bool) error {
	for _, name := range kit.SortedKeys(d.Spec.Fields) {
		def, defined := defs[name]
		if !defined {
			return engine.Waiting(v1alpha1.ReasonFieldNotDefined, "field %q is not defined for the tenant's accounts: create a FieldDefinition of target Account and name %q, or remove it from spec.fields", name, name)
		}
		if v := d.Spec.Fields[name]; v != "" && len(def.Choices) > 0 && !slices.Contains(def.Choices, v) {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "field %q takes one of %q, not %q: change spec.fields, or add the value to the field's choices", name, def.Choices, v)
		}
	}
	if !signup {
		return nil
	}
	for _, name := range kit.SortedKeys(defs) {
		if defs[name].Required && d.Spec.Fields[name] == "" {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "field %q is required by the tenant at signup (3scale refuses a signup without it): give it a value in spec.fields", name)
		}
	}
	return nil
}

// fieldsToWrite are the spec's values that differ from the account's.
func fieldsToWrite(d *v1alpha1.DeveloperAccount, r tsclient.Account) map[string]string {
	var out map[string]string
	for name, v := range d.Spec.Fields {
		if r.Fields[name] != v {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

// FieldDefiners maps a changed FieldDefinition to the DeveloperAccounts of its namespace that give field
// values: one waiting for the field is woken when it is made.
func FieldDefiners(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var accounts v1alpha1.DeveloperAccountList
		if err := reader.List(ctx, &accounts, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range accounts.Items {
			if a := &accounts.Items[i]; len(a.Spec.Fields) > 0 {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(a)})
			}
		}
		return reqs
	}
}
