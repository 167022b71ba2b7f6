package kit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Keys of the provider-account Secret.
const (
	SecretKeyAdminURL           = "adminURL"
	SecretKeyToken              = "token"
	SecretKeyCABundle           = "caBundle"
	SecretKeyInsecureSkipVerify = "insecureSkipVerify"
	SecretKeyAllowInsecureHTTP  = "allowInsecureHTTP"
	// SecretKeyTokenUser names the tenant's user the token belongs to (engine.Session.TokenUser).
	SecretKeyTokenUser = "tokenUser"
)

// SecretFlag reads a "true"/"false" key of a Secret.
func SecretFlag(secret *corev1.Secret, key string) bool {
	return strings.EqualFold(strings.TrimSpace(string(secret.Data[key])), "true")
}

// ProviderAccounts turns provider-account Secrets into sessions with a tenant's client.
type ProviderAccounts struct {
	// Reader reads Secrets (dataReader: metadata from the cache, data from the API server on change).
	Reader client.Reader
	// Pool hands out one client per tenant credentials.
	Pool *cache.ClientPool
	// AllowPrivate allows admin URLs on loopback, link-local, private and cluster-internal addresses.
	AllowPrivate bool
	// MaxResponseBytes and MaxListPages cap one answer's size and one list's pages (0: the client's
	// defaults, 8 MiB and 200 pages): a hostile or broken endpoint cannot exhaust the manager's memory.
	MaxResponseBytes int
	MaxListPages     int
	// MaxRetryAfter caps the pause a Retry-After imposes (0: the client's default, 5 minutes).
	MaxRetryAfter time.Duration
	// Retries is the clients' ReadRetries: retries of a call after its first attempt (0: the client's
	// default).
	Retries int
	// Installations reads 3scale installations (3scale-operator's APIManager resources, as unstructured
	// objects): the third place a provider account is looked up in. nil: not looked up.
	Installations client.Reader
	// InstallationAdminURL, when set, replaces the admin URL an installation implies
	// (InstallationAdminURL); a test or demo points it at a local simulator. Its URL may be plain http.
	InstallationAdminURL func(tenantName, wildcardDomain string) string
	// DryRun, when set, makes every session's client a dry-run one (tsclient.Config.DryRun): diff.
	DryRun func(tsclient.Write)
}

// Connect returns a session for the provider-account Secret name in namespace. When that is the default
// Secret (threescale-provider-account) and it does not exist, the 3scale installation of the namespace is
// used, if there is one (connectInstallation); SystemSeedSecret names that installation (an object
// synced with it records it in status.providerAccountSecret). A missing provider account makes the object
// wait (Orphan, ProviderAccountNotFound); a Secret without a usable adminURL or token makes it Invalid
// (ProviderAccountInvalid) until the Secret changes. It makes no remote call.
func (p *ProviderAccounts) Connect(ctx context.Context, namespace, name string) (*engine.Session, error) {
	if name == SystemSeedSecret {
		return p.connectInstallation(ctx, namespace)
	}
	var secret corev1.Secret
	if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			if name == v1alpha1.DefaultProviderAccountSecret && p.Installations != nil {
				return p.connectInstallation(ctx, namespace)
			}
			return nil, engine.Waiting(v1alpha1.ReasonProviderAccountNotFound,
				"the provider-account Secret %q does not exist in namespace %q: create it with the keys %s and %s",
				name, namespace, SecretKeyAdminURL, SecretKeyToken)
		}
		return nil, err
	}
	adminURL := strings.TrimSpace(string(secret.Data[SecretKeyAdminURL]))
	token := strings.TrimSpace(string(secret.Data[SecretKeyToken]))
	if adminURL == "" {
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid,
			"the provider-account Secret %q has no %s: put the tenant's admin portal URL there, e.g. https://acme-admin.3scale.net",
			name, SecretKeyAdminURL)
	}
	policy := tsclient.AdminURLPolicy{AllowInsecureHTTP: SecretFlag(&secret, SecretKeyAllowInsecureHTTP), AllowPrivate: p.AllowPrivate}
	if token == "" {
		if _, err := checkAdminURL(policy, adminURL); err != nil {
			return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid, "the provider-account Secret %q: %v", name, err)
		}
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid,
			"the provider-account Secret %q has no %s: put an access token with read-write access to the Account Management API there",
			name, SecretKeyToken)
	}
	return p.session(&secret, policy, adminURL, token, fmt.Sprintf("the provider-account Secret %q", name))
}

// session returns the session of a tenant's admin URL and token, read from secret (whose CA bundle and
// TLS switch apply); what names where they came from in messages.
func (p *ProviderAccounts) session(secret *corev1.Secret, policy tsclient.AdminURLPolicy, adminURL, token, what string) (*engine.Session, error) {
	tenant, err := checkAdminURL(policy, adminURL)
	if err != nil {
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid, "%s: %v", what, err)
	}
	remote, err := p.Pool.Get(tenant, tsclient.Config{
		AdminURL:           adminURL,
		Token:              token,
		CABundle:           secret.Data[SecretKeyCABundle],
		InsecureSkipVerify: SecretFlag(secret, SecretKeyInsecureSkipVerify),
		Policy:             &policy,
		UserAgent:          "apimsync",
		MaxResponseBytes:   p.MaxResponseBytes,
		MaxPages:           p.MaxListPages,
		MaxRetryAfter:      p.MaxRetryAfter,
		ReadRetries:        p.Retries,
		DryRun:             p.DryRun,
	})
	if err != nil {
		return nil, engine.Invalid(v1alpha1.ReasonProviderAccountInvalid, "%s cannot be used: %v", what, err)
	}
	s := &engine.Session{Remote: remote, Tenant: tenant, SecretName: secret.Name, HashKey: hashKeyOf(token),
		TokenUser: strings.TrimSpace(string(secret.Data[SecretKeyTokenUser]))}
	s.AccountVersion = accountVersion(secret, s)
	return s, nil
}

// accountVersion identifies the provider-account Secret's content: its UID and a keyed hash of its data.
// Not its resourceVersion: that changes with every metadata write too (our own in-use finalizer, a GitOps
// tool's labels and annotations), and a new version makes every object of the Secret check its
// credentials and record the version, one status write each, for nothing.
func accountVersion(secret *corev1.Secret, s *engine.Session) string {
	return string(secret.UID) + "/" + s.HashOf(secret.Data)
}

// checkAdminURL applies the admin URL policy and returns the URL's tenant key (tsclient.NormalizeTenant),
// the one identity of the tenant: the session's Tenant, the client pool's key and the metrics' label. A
// refusal reads `adminURL must be https (...)`.
func checkAdminURL(policy tsclient.AdminURLPolicy, adminURL string) (string, error) {
	if err := policy.Check(adminURL); err != nil {
		var refused *tsclient.AdminURLError
		if errors.As(err, &refused) {
			return "", fmt.Errorf("%s %s", SecretKeyAdminURL, refused.Problem)
		}
		return "", err
	}
	tenant, err := tsclient.NormalizeTenant(adminURL)
	if err != nil {
		return "", fmt.Errorf("%s must be the tenant's admin portal URL, e.g. https://acme-admin.3scale.net", SecretKeyAdminURL)
	}
	return tenant, nil
}

// hashKeyOf derives the key of status hashes from the provider account's token: stable while the token
// is, and unknown to whoever can only read the resources.
func hashKeyOf(token string) []byte {
	sum := sha256.Sum256([]byte("apimsync status hash\x00" + token))
	return sum[:]
}

// SecretForSession returns the provider-account Secret to use: while the object is being deleted, the
// one it was synced with (the spec may have moved on), otherwise the spec's.
func SecretForSession(obj engine.Object, fromSpec string) string {
	if !obj.GetDeletionTimestamp().IsZero() && obj.GetSyncStatus().ProviderAccountSecret != "" {
		return obj.GetSyncStatus().ProviderAccountSecret
	}
	return fromSpec
}
