package application

// An Application's credentials: the ones its spec brings (credentialsRef), its keys, and the Secret it writes them to.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// credentialsSecretName is the Secret the Application writes its credentials to.
func credentialsSecretName(a *v1alpha1.Application) string {
	if a.Spec.CredentialsSecretName != "" {
		return a.Spec.CredentialsSecretName
	}
	return a.Name + "-credentials"
}

// credentialsSecretNamed refuses a credentials Secret whose name alone tells it is another Secret's role:
// the provider account's by default, or the credentialsRef Secret the user brought. The Application
// writes, and on retirement deletes, the Secret it names. Validate's; credentialsSecretAllowed checks
// the provider-account Secret the application's account uses.
func credentialsSecretNamed(a *v1alpha1.Application) error {
	name := credentialsSecretName(a)
	switch {
	case name == v1alpha1.DefaultProviderAccountSecret:
		return providerAccountSecretNamed(name)
	case a.Spec.CredentialsRef != nil && name == a.Spec.CredentialsRef.Name:
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "the credentials Secret %q is the spec.credentialsRef Secret, which is yours: name another one in spec.credentialsSecretName", name)
	}
	return nil
}

// credentialsSecretAllowed refuses a credentials Secret that is the provider-account Secret this
// application's account uses (sess.SecretName), which only the account tells.
func credentialsSecretAllowed(a *v1alpha1.Application, sess *engine.Session) error {
	if name := credentialsSecretName(a); name == sess.SecretName {
		return providerAccountSecretNamed(name)
	}
	return nil
}

// providerAccountSecretNamed is the refusal of a credentials Secret that is a provider-account Secret.
func providerAccountSecretNamed(name string) error {
	return engine.Invalid(v1alpha1.ReasonInvalidSpec, "the credentials Secret %q is the provider-account Secret: name another one in spec.credentialsSecretName", name)
}

// appKeysLimit is porta's Cinstance#keys_limit: one key for an OIDC application, ApplicationKey::KEYS_LIMIT
// (5) for the others (porta's app/models/cinstance.rb:219-226, app/models/application_key.rb:4).
func appKeysLimit(backendVersion string) int {
	if backendVersion == "oidc" {
		return 1
	}
	return 5
}

// resolveCredentials reads the credentials the spec names, if any. In app id mode the Secret's keys, when
// it lists any, are all the keys the application is to have (at most the product's limit).
func (s *Syncer) resolveCredentials(ctx context.Context, a *v1alpha1.Application, d *Desired) error {
	ref := a.Spec.CredentialsRef
	if ref == nil {
		return nil
	}
	var secret corev1.Secret
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: ref.Name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return engine.Waiting(v1alpha1.ReasonCredentialsUnavailable, "waiting for Secret %q (spec.credentialsRef) to be created", ref.Name)
		}
		return err
	}
	get := func(k string) string { return strings.TrimSpace(string(secret.Data[k])) }
	if d.AppIDMode {
		d.AppID = get(credentialAppID)
		for _, k := range strings.Split(get(credentialAppKeys)+","+get(credentialAppKey), ",") {
			if k = strings.TrimSpace(k); k != "" && !slices.Contains(d.AppKeys, k) {
				d.AppKeys = append(d.AppKeys, k)
			}
		}
		if d.AppID == "" {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "Secret %q (spec.credentialsRef) has no %s: the plan's product identifies applications by app id and key", ref.Name, credentialAppID)
		}
		for _, k := range d.AppKeys {
			// porta's route addresses any key without a slash, dots included (config/routes.rb:603:
			// ([^/]+?)(?=\.json|\.xml|$|/)): a key with a slash could be created but never deleted.
			if strings.Contains(k, "/") {
				return engine.Invalid(v1alpha1.ReasonInvalidSpec, "Secret %q (spec.credentialsRef) lists an app key with '/': 3scale's API cannot address such a key to delete it later", ref.Name)
			}
		}
		if len(d.AppKeys) > d.KeysLimit {
			return engine.Invalid(v1alpha1.ReasonInvalidSpec, "Secret %q (spec.credentialsRef) lists %d app keys: 3scale keeps at most %d per application of this product",
				ref.Name, len(d.AppKeys), d.KeysLimit)
		}
		return nil
	}
	if d.UserKey = get(credentialUserKey); d.UserKey == "" {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "Secret %q (spec.credentialsRef) has no %s: the plan's product identifies applications by user key", ref.Name, credentialUserKey)
	}
	return nil
}

// keysMatch reports whether the application's keys are those the credentials Secret lists, if it lists
// any (none listed: the keys are 3scale's, whatever they are).
func keysMatch(keys []string, d *Desired) bool {
	if len(d.AppKeys) == 0 {
		return true
	}
	if len(keys) != len(d.AppKeys) {
		return false
	}
	for _, k := range d.AppKeys {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// credentials returns what goes into the credentials Secret.
func credentials(snap *Snapshot) map[string][]byte {
	if snap.App.UserKey != "" {
		return map[string][]byte{credentialUserKey: []byte(snap.App.UserKey)}
	}
	out := map[string][]byte{credentialAppID: []byte(snap.App.ApplicationID)}
	if len(snap.Keys) > 0 {
		out[credentialAppKey] = []byte(snap.Keys[0])
		out[credentialAppKeys] = []byte(strings.Join(snap.Keys, ","))
	}
	return out
}

// credentialsWritten reports whether the credentials Secret holds the application's credentials.
func (s *Syncer) credentialsWritten(ctx context.Context, a *v1alpha1.Application, snap *Snapshot) bool {
	var secret corev1.Secret
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: credentialsSecretName(a)}, &secret); err != nil {
		return false
	}
	want := credentials(snap)
	if len(secret.Data) != len(want) {
		return false
	}
	for k, v := range want {
		if string(secret.Data[k]) != string(v) {
			return false
		}
	}
	return true
}

// holderOfCredentials deals with a create refused because the credentials it brings are taken: porta
// does not make application names unique, so an earlier create of ours that timed out but committed
// shows as its credentials taken, not its name. The application holding them (porta's find by user_key
// or app_id on the product) is this resource's own when it is on this account with this name and a create
// of ours is in doubt (the create-pending marker), or is adopted as any existing application is (announced
// by the engine, refused by adoption: Never). Anything else keeps the refusal (taken): a credential of someone else's.
func (s *Syncer) holderOfCredentials(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, d *Desired, taken error) (*tsclient.Application, error) {
	holder, err := sess.Remote.FindApplication(ctx, d.ProductID, d.UserKey, d.AppID)
	switch {
	case tsclient.IsNotFound(err):
		return nil, taken
	case err != nil:
		return nil, engine.NothingMade(fmt.Errorf("cannot look up the application holding the credentials: %w", err))
	case holder.AccountID != d.AccountID || holder.Name != a.Spec.Name:
		return nil, taken
	case !sess.CreatePending && a.GetAdoptionPolicy() == v1alpha1.AdoptionNever:
		return nil, engine.Refused(v1alpha1.ReasonAdoptionRefused,
			"an application %q with these credentials already exists on the account in 3scale (id %d) and this resource did not create it; spec.adoption is Never", holder.Name, holder.ID)
	}
	return holder, nil
}

// syncKeys makes the application's keys those the credentials Secret lists, when it lists any: the keys
// it adds are added before the ones it no longer lists are deleted, so that a rotated key (old removed,
// new added) never leaves the application without a valid key. Only when the product's key limit leaves
// no room for a new key is a removed one deleted first. porta's admin API deletes any key, the last one
// too (application_key.rb:49-54, buyer_application_keys_controller.rb:20): a Secret that lists no key
// keeps 3scale's. Errors never name a key.
func syncKeys(ctx context.Context, c *tsclient.Client, a *v1alpha1.Application, d *Desired, snap *Snapshot) error {
	if len(d.AppKeys) == 0 {
		return nil
	}
	id := snap.App.ID
	var stale []string
	for _, k := range snap.Keys {
		if !slices.Contains(d.AppKeys, k) {
			stale = append(stale, k)
		}
	}
	remove := func(k string) error {
		if err := kit.IgnoreNotFound(c.DeleteApplicationKey(ctx, d.AccountID, id, k)); err != nil {
			return fmt.Errorf("cannot delete a key of application %q: %w", a.Spec.Name, err)
		}
		snap.Keys = slices.DeleteFunc(snap.Keys, func(v string) bool { return v == k })
		return nil
	}
	for _, k := range d.AppKeys {
		if slices.Contains(snap.Keys, k) {
			continue
		}
		if len(snap.Keys) >= d.KeysLimit && len(stale) > 0 {
			if err := remove(stale[0]); err != nil {
				return err
			}
			stale = stale[1:]
		}
		if err := c.CreateApplicationKey(ctx, d.AccountID, id, k); err != nil {
			return fmt.Errorf("cannot add a key to application %q: %w", a.Spec.Name, err)
		}
		snap.Keys = append(snap.Keys, k)
	}
	for _, k := range stale {
		if err := remove(k); err != nil {
			return err
		}
	}
	return nil
}

// deleteCredentials deletes the credentials Secret, only if this Application controls it (it created it):
// a Secret of that name made by anyone else (the user's own, the provider account's) is never touched. The
// deletion is bound to the UID read, so a Secret recreated meanwhile by someone else is not deleted either.
func (s *Syncer) deleteCredentials(ctx context.Context, a *v1alpha1.Application) error {
	var secret metav1.PartialObjectMetadata
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := s.Writer.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: credentialsSecretName(a)}, &secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(&secret, a) {
		return nil
	}
	uid := secret.GetUID()
	if err := s.Writer.Delete(ctx, &secret, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("cannot delete the credentials Secret %q: %w", secret.Name, err)
	}
	return nil
}

// writeCredentials creates or updates the credentials Secret, owned by the Application.
func (s *Syncer) writeCredentials(ctx context.Context, a *v1alpha1.Application, snap *Snapshot) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: credentialsSecretName(a)}}
	_, err := controllerutil.CreateOrUpdate(ctx, s.Writer, secret, func() error {
		if secret.ResourceVersion != "" && !metav1.IsControlledBy(secret, a) {
			return fmt.Errorf("secret %q exists and is not this Application's: choose another spec.credentialsSecretName", secret.Name)
		}
		secret.Labels = map[string]string{"apimsync.io/application": a.Name}
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = credentials(snap)
		return controllerutil.SetControllerReference(a, secret, s.Writer.Scheme())
	})
	if err != nil {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "cannot write the credentials Secret %q: %v", secret.Name, err)
	}
	a.Status.CredentialsSecret = secret.Name
	return nil
}
