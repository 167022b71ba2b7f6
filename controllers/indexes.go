package controllers

import (
	"context"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kit"
)

// fieldIndex is one field index: of objects like obj, under index, by what names returns.
type fieldIndex struct {
	obj   client.Object
	index string
	names func(client.Object) []string
}

// registerIndexes adds the field indexes the watches and checks use.
func registerIndexes(ctx context.Context, mgr ctrl.Manager) error {
	for _, ix := range fieldIndexes() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, ix.obj, ix.index, ix.names); err != nil {
			return err
		}
	}
	return nil
}

// fieldIndexes are the field indexes the watches and checks use (registerIndexes; diff's in-memory
// reader has the same): the Secrets and the remote object of every kind of the table, each edge of the
// reference graph (and the key its To objects are found by), the kinds' own, and the OpenAPIs'.
func fieldIndexes() []fieldIndex {
	var out []fieldIndex
	for _, k := range kinds {
		obj := k.New()
		out = append(out, fieldIndex{obj, kit.IndexSecretRefs, secretRefs}, fieldIndex{obj, kit.IndexOwnerKey, ownerKeyOf})
		out = append(out, k.indexes()...)
	}
	for _, r := range referenceGraph {
		out = append(out, fieldIndex{newKind(r.From), r.Index, r.Names})
		if r.KeyIndex != "" {
			key := r.Key
			out = append(out, fieldIndex{newKind(r.To), r.KeyIndex, func(o client.Object) []string { return kit.Single(key(o)) }})
		}
	}
	return append(out,
		fieldIndex{&v1alpha1.OpenAPI{}, kit.IndexConfigMapRefs, func(o client.Object) []string {
			return kit.ConfigMapOf(o.(*v1alpha1.OpenAPI).Spec.DocumentRef)
		}},
		fieldIndex{&v1alpha1.OpenAPI{}, kit.IndexSecretRefs, secretRefs})
}

// customPolicyRefs lists the custom policies of a Product's chain (every version but "builtin") by
// v1alpha1.PolicyKey.
func customPolicyRefs(o client.Object) []string {
	p, ok := o.(*v1alpha1.Product)
	if !ok {
		return nil
	}
	set := map[string]bool{}
	for _, pol := range p.Spec.Policies {
		if pol.Version != v1alpha1.BuiltinPolicyVersion {
			set[v1alpha1.PolicyKey(pol.Name, pol.Version)] = true
		}
	}
	return kit.SortedKeys(set)
}

// policyKeyOf is the policy a CustomPolicyDefinition defines (v1alpha1.PolicyKey), "" for other objects.
func policyKeyOf(o client.Object) string {
	if c, ok := o.(*v1alpha1.CustomPolicyDefinition); ok {
		return v1alpha1.PolicyKey(c.Spec.Name, c.Spec.Version)
	}
	return ""
}

// secretRefs lists the Secrets an object reads: its provider account (by spec, or as last synced with)
// and, for Products, the Secrets of policy configurations and of the OIDC issuer.
func secretRefs(o client.Object) []string {
	set := map[string]bool{}
	switch t := o.(type) {
	case *v1alpha1.Backend:
		set[t.Spec.ProviderAccountSecretName()] = true
	case *v1alpha1.DeveloperAccount:
		set[t.Spec.ProviderAccountSecretName()] = true
		for _, u := range t.Spec.Users {
			if u.PasswordRef != nil {
				set[u.PasswordRef.Name] = true
			}
		}
	case *v1alpha1.Application:
		if t.Spec.CredentialsRef != nil {
			set[t.Spec.CredentialsRef.Name] = true
		}
	case *v1alpha1.CustomPolicyDefinition:
		set[t.Spec.ProviderAccountSecretName()] = true
	case *v1alpha1.Tenant: // the master account and the admin's password
		set[t.Spec.MasterAccountRef.Name] = true
		set[t.Spec.PasswordRef.Name] = true
	case *v1alpha1.OpenAPI: // its document; the generated resources read the provider account
		if r := t.Spec.DocumentRef; r != nil && r.SecretKeyRef != nil {
			set[r.SecretKeyRef.Name] = true
		}
	case *v1alpha1.ActiveDoc:
		set[t.Spec.ProviderAccountSecretName()] = true
		if r := t.Spec.DocumentRef; r != nil && r.SecretKeyRef != nil {
			set[r.SecretKeyRef.Name] = true
		}
	case *v1alpha1.Product:
		set[t.Spec.ProviderAccountSecretName()] = true
		for _, p := range t.Spec.Policies {
			if p.ConfigurationRef != nil {
				set[p.ConfigurationRef.Name] = true
			}
		}
		if a := t.Spec.Authentication; a != nil && a.OIDC != nil && a.OIDC.IssuerEndpointRef != nil {
			set[a.OIDC.IssuerEndpointRef.Name] = true
		}
	}
	if s, ok := o.(v1alpha1.SyncedObject); ok && s.GetSyncStatus().ProviderAccountSecret != "" {
		set[s.GetSyncStatus().ProviderAccountSecret] = true
	}
	return kit.SortedKeys(set)
}

// backendRefs lists the Backends an object names: a Product's backend usages, a plan's metric references.
func backendRefs(o client.Object) []string {
	set := map[string]bool{}
	switch t := o.(type) {
	case *v1alpha1.Product:
		for name := range t.Spec.BackendUsages {
			set[name] = true
		}
	case *v1alpha1.ApplicationPlan:
		for _, l := range t.Spec.Limits {
			if l.MetricMethodRef.Backend != "" {
				set[l.MetricMethodRef.Backend] = true
			}
		}
		for _, r := range t.Spec.PricingRules {
			if r.MetricMethodRef.Backend != "" {
				set[r.MetricMethodRef.Backend] = true
			}
		}
	}
	return kit.SortedKeys(set)
}

// ownerKeyOf indexes an object by the remote object it owns, from its status.
func ownerKeyOf(o client.Object) []string {
	s, ok := o.(v1alpha1.SyncedObject)
	if !ok {
		return nil
	}
	st := s.GetSyncStatus()
	if st.TenantHost == "" || st.SystemName == "" {
		return nil
	}
	scope := ""
	switch t := o.(type) {
	case *v1alpha1.ApplicationPlan:
		scope = strconv.FormatInt(t.Status.ProductID, 10)
	case *v1alpha1.Application:
		scope = strconv.FormatInt(t.Status.AccountID, 10)
	case *v1alpha1.Tenant:
		scope = "tenant"
	}
	return []string{kit.OwnerKey(st.TenantHost, scope, st.SystemName)}
}

func itoa(i int) string { return strconv.Itoa(i) }
