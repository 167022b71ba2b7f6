package kit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// The third place a provider account is looked up in: the 3scale installation of the namespace, as
// 3scale-operator makes it. Its APIManager resource tells the default tenant's admin host, and its
// system-seed Secret holds that tenant's admin access token. apimsync reads the APIManager as an
// unstructured object: it does not depend on 3scale-operator's Go types, and works whether or not the
// APIManager CRD is installed.

// SystemSeedSecret is the Secret in which a 3scale installation keeps its default tenant's admin access
// token; an object synced with the installation records this name in status.providerAccountSecret.
const SystemSeedSecret = "system-seed"

// SystemSeedAdminToken is the system-seed key of the default tenant's admin access token (porta's
// db/seeds.rb gives the tenant's "Administration" token, read-write with every scope, that value).
const SystemSeedAdminToken = "ADMIN_ACCESS_TOKEN"

// APIManagerGVK is the kind of 3scale-operator's installation resource.
var APIManagerGVK = schema.GroupVersionKind{Group: "apps.3scale.net", Version: "v1alpha1", Kind: "APIManager"}

// DefaultTenantName is APIManager spec.tenantName when unset (3scale-operator's default).
const DefaultTenantName = "3scale"

// InstallationAdminURL is the admin portal of an installation's default tenant, as 3scale-operator's
// routes serve it: https://{tenantName}-admin.{wildcardDomain}.
func InstallationAdminURL(tenantName, wildcardDomain string) string {
	return "https://" + tenantName + "-admin." + wildcardDomain
}

// noProviderAccount is the wait of an object that found no provider account in any of the three places.
func noProviderAccount(namespace, why string) error {
	return engine.Waiting(v1alpha1.ReasonProviderAccountNotFound,
		"no provider account in namespace %q: spec.providerAccountRef is not set, there is no Secret %q, and %s; "+
			"create the Secret %q with the keys %s and %s (or install 3scale in this namespace)",
		namespace, v1alpha1.DefaultProviderAccountSecret, why, v1alpha1.DefaultProviderAccountSecret, SecretKeyAdminURL, SecretKeyToken)
}

// connectInstallation returns a session for the default tenant of the namespace's 3scale installation:
// the token in the system-seed Secret's ADMIN_ACCESS_TOKEN, the admin URL implied by the APIManager's
// spec.tenantName and spec.wildcardDomain. Of several APIManagers (3scale-operator allows one per
// namespace), the first by name is used. It makes no remote call.
func (p *ProviderAccounts) connectInstallation(ctx context.Context, namespace string) (*engine.Session, error) {
	var seed corev1.Secret
	if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SystemSeedSecret}, &seed); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, noProviderAccount(namespace, fmt.Sprintf("no 3scale installation (no Secret %q)", SystemSeedSecret))
		}
		return nil, err
	}
	manager, err := p.installation(ctx, namespace)
	if err != nil {
		return nil, err
	}
	if manager == nil {
		return nil, noProviderAccount(namespace, fmt.Sprintf("the 3scale installation's Secret %q is there but no APIManager (%s) tells its admin URL",
			SystemSeedSecret, APIManagerGVK.GroupKind()))
	}
	what := fmt.Sprintf("the 3scale installation (APIManager %q, Secret %q)", manager.GetName(), SystemSeedSecret)
	wildcard, _, _ := unstructured.NestedString(manager.Object, "spec", "wildcardDomain")
	tenantName, found, _ := unstructured.NestedString(manager.Object, "spec", "tenantName")
	if !found || tenantName == "" {
		tenantName = DefaultTenantName
	}
	if strings.TrimSpace(wildcard) == "" {
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid, "%s: the APIManager has no spec.wildcardDomain to tell the admin URL from", what)
	}
	token := strings.TrimSpace(string(seed.Data[SystemSeedAdminToken]))
	if token == "" {
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid, "%s: the Secret has no %s", what, SystemSeedAdminToken)
	}
	adminURL, policy := InstallationAdminURL(tenantName, wildcard), tsclient.AdminURLPolicy{AllowPrivate: p.AllowPrivate}
	if p.InstallationAdminURL != nil {
		adminURL = p.InstallationAdminURL(tenantName, wildcard)
		policy.AllowInsecureHTTP = strings.HasPrefix(adminURL, "http://")
	}
	// The seed's other keys (master credentials, passwords) are not the tenant's: only the token and the
	// APIManager's host go into the session, and the session's version covers only them.
	tenantSeed := seed.DeepCopy()
	tenantSeed.Data = map[string][]byte{SystemSeedAdminToken: []byte(token), "adminURL": []byte(adminURL)}
	return p.session(tenantSeed, policy, adminURL, token, what)
}

// installation returns the namespace's APIManager, or nil when there is none (or the CRD is not
// installed).
func (p *ProviderAccounts) installation(ctx context.Context, namespace string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(APIManagerGVK.GroupVersion().WithKind(APIManagerGVK.Kind + "List"))
	if err := p.Installations.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot list the APIManagers of namespace %q: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	first := slices.MinFunc(list.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return &first, nil
}
