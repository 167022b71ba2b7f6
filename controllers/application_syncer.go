package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// snapshotKindApplication is the kind under which application snapshots are cached.
const snapshotKindApplication = "application"

// Condition reasons of Applications.
const (
	ReasonAccountNotFound        = "AccountNotFound"
	ReasonAccountNotSynced       = "AccountNotSynced"
	ReasonAccountInvalid         = "AccountInvalid"
	ReasonAccountDeleting        = "AccountDeleting"
	ReasonPlanNotFound           = "PlanNotFound"
	ReasonPlanNotSynced          = "PlanNotSynced"
	ReasonPlanInvalid            = "PlanInvalid"
	ReasonPlanDeleting           = "PlanDeleting"
	ReasonPlanOfAnotherProduct   = "PlanOfAnotherProduct"
	ReasonCredentialsUnavailable = "CredentialsNotFound"
)

// Keys of an Application's credentials Secret (the one it reads and the one it writes).
const (
	credentialUserKey = "user_key"
	credentialAppID   = "app_id"
	credentialAppKey  = "app_key"
	credentialAppKeys = "app_keys"
)

// applicationSnapshot is the remote state of one application.
type applicationSnapshot struct {
	App  tsclient.Application
	Keys []string
}

// RemoteID implements engine.Snapshot.
func (s *applicationSnapshot) RemoteID() int64 { return s.App.ID }

// Clone implements engine.Snapshot.
func (s *applicationSnapshot) Clone() *applicationSnapshot {
	return &applicationSnapshot{App: s.App, Keys: slices.Clone(s.Keys)}
}

// applicationDesired is what Resolve learnt from the account, the plan and the credentials Secret.
type applicationDesired struct {
	AccountID, PlanID, ProductID int64
	// AppIDMode is true for products whose applications are identified by app id and keys (and OIDC).
	AppIDMode bool
	// UserKey, AppID and AppKeys are the credentials the spec asks for; empty: 3scale generates them.
	// When AppKeys names keys, they are the application's keys: others are deleted.
	UserKey, AppID string
	AppKeys        []string
	// KeysLimit is how many keys 3scale lets the application hold.
	KeysLimit int
	// Retire: the product was retired; the application is to be suspended and its credentials Secret
	// deleted.
	Retire bool
}

// ApplicationSyncer syncs Applications to 3scale applications and writes their credentials to a Secret
// the Application owns. An application is identified by its name within its account: after a lost create
// answer it is found there again (create-pending marker), never made twice.
type ApplicationSyncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Writer writes the credentials Secrets.
	Writer client.Client
	// Accounts resolves provider-account Secrets.
	Accounts *ProviderAccounts
	// Claims arbitrates resources that resolve to the same application (account and name).
	Claims *Claims
}

var _ engine.TypedSyncer[*v1alpha1.Application, applicationDesired, *applicationSnapshot] = &ApplicationSyncer{}

// credentialsSecretName is the Secret the Application writes its credentials to.
func credentialsSecretName(a *v1alpha1.Application) string {
	if a.Spec.CredentialsSecretName != "" {
		return a.Spec.CredentialsSecretName
	}
	return a.Name + "-credentials"
}

// Connect implements engine.TypedSyncer: the provider account of the application's DeveloperAccount; while
// the application is being deleted, the Secret it was synced with (its account may be gone already).
func (s *ApplicationSyncer) Connect(ctx context.Context, a *v1alpha1.Application) (*engine.Session, error) {
	if !a.DeletionTimestamp.IsZero() && a.Status.ProviderAccountSecret != "" {
		return s.Accounts.Connect(ctx, a.Namespace, a.Status.ProviderAccountSecret)
	}
	var acc v1alpha1.DeveloperAccount
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.AccountRef}, &acc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, engine.Missing(ReasonAccountNotFound, "waiting for DeveloperAccount %q (spec.accountRef) to be created", a.Spec.AccountRef)
		}
		return nil, err
	}
	return s.Accounts.Connect(ctx, a.Namespace, acc.Spec.ProviderAccountSecretName())
}

// Resolve implements engine.TypedSyncer: the account and the plan must be Synced on the session's
// tenant (an Invalid one makes the application Invalid); the plan must be of the product the
// application is on.
func (s *ApplicationSyncer) Resolve(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) (engine.Resolved[applicationDesired], error) {
	r := engine.Resolved[applicationDesired]{SystemName: a.Spec.Name}
	desired, hash, err := s.resolve(ctx, a, sess, r.SystemName)
	if err != nil {
		return r, err
	}
	r.Desired, r.Hash = *desired, hash
	return r, nil
}

// resolve is Resolve's work: the desired state and its hash.
func (s *ApplicationSyncer) resolve(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, systemName string) (*applicationDesired, string, error) {
	var acc v1alpha1.DeveloperAccount
	if err := checkDependency(ctx, s.Reader, a.Namespace, a.Spec.AccountRef, &acc, accountOfApplication); err != nil {
		return nil, "", err
	}
	var plan v1alpha1.ApplicationPlan
	if err := checkDependency(ctx, s.Reader, a.Namespace, a.Spec.PlanRef, &plan, planOfApplication); err != nil {
		return nil, "", err
	}
	if plan.Status.TenantHost != sess.Tenant {
		return nil, "", engine.Invalid(ReasonInvalidSpec, "ApplicationPlan %q is on tenant %s, but DeveloperAccount %q on %s: an application needs both on one tenant",
			plan.Name, plan.Status.TenantHost, acc.Name, sess.Tenant)
	}
	if a.Status.ApplicationID != 0 && a.Status.ProductID != 0 && plan.Status.ProductID != a.Status.ProductID {
		return nil, "", engine.Invalid(ReasonPlanOfAnotherProduct,
			"ApplicationPlan %q belongs to another product than the one this application is on (3scale product %d): 3scale cannot move an application between products; create a new Application on that plan and delete this one",
			plan.Name, a.Status.ProductID)
	}
	var product v1alpha1.Product
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: plan.Spec.ProductRef}, &product); err != nil {
		return nil, "", engine.Waiting(ReasonProductNotFound, "waiting for Product %q of plan %q", plan.Spec.ProductRef, plan.Name)
	}
	_, backendVersion := serviceAttrs(&product)
	desired := &applicationDesired{AccountID: acc.Status.AccountID, PlanID: plan.Status.PlanID, ProductID: plan.Status.ProductID,
		AppIDMode: backendVersion != "1", KeysLimit: appKeysLimit(backendVersion)}
	if err := lifecycleAllows(a, &plan, &product, desired); err != nil {
		return nil, "", err
	}
	if err := credentialsSecretAllowed(a, sess); err != nil {
		return nil, "", err
	}
	if err := s.resolveCredentials(ctx, a, desired); err != nil {
		return nil, "", err
	}
	a.Status.AccountID, a.Status.ProductID = desired.AccountID, desired.ProductID
	if err := checkSoleOwner(ctx, s.Reader, s.Claims, a, &v1alpha1.ApplicationList{}, ownerKey(sess.Tenant, itoa64(desired.AccountID), systemName)); err != nil {
		return nil, "", err
	}
	spec := a.Spec
	spec.DeletionPolicy, spec.Adoption = "", ""
	return desired, sess.HashOf(sess.Tenant, spec, desired), nil
}

// credentialsSecretAllowed refuses a credentials Secret that is another Secret's role: the provider
// account's (the default name and the one this application's account uses) or the credentialsRef Secret
// the user brought. The Application writes, and on retirement deletes, the Secret it names.
func credentialsSecretAllowed(a *v1alpha1.Application, sess *engine.Session) error {
	name := credentialsSecretName(a)
	switch {
	case name == v1alpha1.DefaultProviderAccountSecret || name == sess.SecretName:
		return engine.Invalid(ReasonInvalidSpec, "the credentials Secret %q is the provider-account Secret: name another one in spec.credentialsSecretName", name)
	case a.Spec.CredentialsRef != nil && name == a.Spec.CredentialsRef.Name:
		return engine.Invalid(ReasonInvalidSpec, "the credentials Secret %q is the spec.credentialsRef Secret, which is yours: name another one in spec.credentialsSecretName", name)
	}
	return nil
}

// lifecycleAllows applies the product's lifecycle to the application: in Draft new applications wait
// (unless the plan allows them in draft); Deprecated and Retired products take no new application; an
// existing application of a Retired product is retired (suspended, credentials Secret deleted) and then
// stays Invalid, saying so.
func lifecycleAllows(a *v1alpha1.Application, plan *v1alpha1.ApplicationPlan, product *v1alpha1.Product, d *applicationDesired) error {
	isNew := a.Status.ApplicationID == 0
	switch product.Spec.EffectiveLifecycle() {
	case v1alpha1.LifecycleDraft:
		if isNew && !plan.Spec.AllowInDraft {
			return engine.Waiting(ReasonProductDraft, "Product %q is in Draft: applications wait until it is Published (or use a plan with allowInDraft: true)", product.Name)
		}
	case v1alpha1.LifecycleDeprecated:
		if isNew {
			return engine.Invalid(ReasonProductDeprecated, "Product %q is Deprecated: it takes no new application (existing ones keep working); use a plan of another product", product.Name)
		}
	case v1alpha1.LifecycleRetired:
		switch {
		case isNew:
			return engine.Invalid(ReasonProductRetired, "Product %q is Retired: it takes no application; use a plan of another product", product.Name)
		case a.Status.RetiredAt != nil:
			date := "an unknown date"
			if at := product.Status.LifecycleChangedAt; at != nil {
				date = at.UTC().Format(time.DateOnly)
			}
			return engine.Invalid(ReasonProductRetired, "product %s was retired on %s: this application is suspended in 3scale and its credentials Secret deleted; "+
				"move its consumers to an Application on another product's plan, then delete this one", product.Name, date)
		}
		d.Retire = true
	}
	return nil
}

// accountOfApplication and planOfApplication are an Application's spec.accountRef and spec.planRef.
var (
	accountOfApplication = dependency{Kind: "DeveloperAccount", Field: "spec.accountRef", NotFound: ReasonAccountNotFound,
		Deleting: ReasonAccountDeleting, Invalid: ReasonAccountInvalid, NotSynced: ReasonAccountNotSynced}
	planOfApplication = dependency{Kind: "ApplicationPlan", Field: "spec.planRef", NotFound: ReasonPlanNotFound,
		Deleting: ReasonPlanDeleting, Invalid: ReasonPlanInvalid, NotSynced: ReasonPlanNotSynced}
)

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
func (s *ApplicationSyncer) resolveCredentials(ctx context.Context, a *v1alpha1.Application, d *applicationDesired) error {
	ref := a.Spec.CredentialsRef
	if ref == nil {
		return nil
	}
	var secret corev1.Secret
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: ref.Name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return engine.Waiting(ReasonCredentialsUnavailable, "waiting for Secret %q (spec.credentialsRef) to be created", ref.Name)
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
			return engine.Invalid(ReasonInvalidSpec, "Secret %q (spec.credentialsRef) has no %s: the plan's product identifies applications by app id and key", ref.Name, credentialAppID)
		}
		for _, k := range d.AppKeys {
			// porta's route addresses any key without a slash, dots included (config/routes.rb:603:
			// ([^/]+?)(?=\.json|\.xml|$|/)): a key with a slash could be created but never deleted.
			if strings.Contains(k, "/") {
				return engine.Invalid(ReasonInvalidSpec, "Secret %q (spec.credentialsRef) lists an app key with '/': 3scale's API cannot address such a key to delete it later", ref.Name)
			}
		}
		if len(d.AppKeys) > d.KeysLimit {
			return engine.Invalid(ReasonInvalidSpec, "Secret %q (spec.credentialsRef) lists %d app keys: 3scale keeps at most %d per application of this product",
				ref.Name, len(d.AppKeys), d.KeysLimit)
		}
		return nil
	}
	if d.UserKey = get(credentialUserKey); d.UserKey == "" {
		return engine.Invalid(ReasonInvalidSpec, "Secret %q (spec.credentialsRef) has no %s: the plan's product identifies applications by user key", ref.Name, credentialUserKey)
	}
	return nil
}

// Compare implements engine.TypedSyncer: the application and its credentials Secret. A retiring
// application is never up to date: retiring is a one-time act (Update deletes the Secret, Resolve then
// reports it).
func (s *ApplicationSyncer) Compare(ctx context.Context, a *v1alpha1.Application, _ *engine.Session, d applicationDesired, snap *applicationSnapshot) (bool, error) {
	if snap.App.PlanID == d.PlanID {
		a.Status.PlanID = d.PlanID
	}
	return !d.Retire && appMatches(snap, a, &d) && s.credentialsWritten(ctx, a, snap), nil
}

// Read implements engine.TypedSyncer: the application on its account, and its keys.
func (s *ApplicationSyncer) Read(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) (*applicationSnapshot, bool, error) {
	d := engine.DesiredOf[applicationDesired](sess)
	remote, err := locate(a, sess, s.finder(ctx, sess, d.AccountID))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap, err := s.readKeys(ctx, sess, &d, *remote)
	return snap, err == nil, err
}

func (s *ApplicationSyncer) readKeys(ctx context.Context, sess *engine.Session, d *applicationDesired, app tsclient.Application) (*applicationSnapshot, error) {
	snap := &applicationSnapshot{App: app}
	if d.AppIDMode {
		keys, err := sess.Remote.ListApplicationKeys(ctx, d.AccountID, app.ID)
		if err != nil {
			return nil, fmt.Errorf("cannot list the keys of application %d: %w", app.ID, err)
		}
		for _, k := range keys {
			snap.Keys = append(snap.Keys, k.Value)
		}
	}
	return snap, nil
}

// finder reads the applications of one account; an application is known by its name there.
func (s *ApplicationSyncer) finder(ctx context.Context, sess *engine.Session, accountID int64) remoteFinder[tsclient.Application] {
	return remoteFinder[tsclient.Application]{kind: "application", uniqueField: "name",
		get:    func(id int64) (*tsclient.Application, error) { return sess.Remote.GetApplication(ctx, accountID, id) },
		list:   func() ([]tsclient.Application, error) { return sess.Remote.ListApplications(ctx, accountID) },
		idName: func(r tsclient.Application) (int64, string) { return r.ID, r.Name },
	}
}

func appState(a *v1alpha1.Application) string {
	if a.Spec.Suspended {
		return appSuspended
	}
	return appLive
}

func appAttrsMatch(r tsclient.Application, a *v1alpha1.Application, d *applicationDesired) bool {
	return r.Name == a.Spec.Name && r.Description == a.Spec.Description && (d.UserKey == "" || r.UserKey == d.UserKey)
}

func appMatches(snap *applicationSnapshot, a *v1alpha1.Application, d *applicationDesired) bool {
	r := snap.App
	if !appAttrsMatch(r, a, d) || r.PlanID != d.PlanID || (r.State != appState(a) && r.State != "pending") {
		return false
	}
	return appIDMatches(r, d) && keysMatch(snap.Keys, d)
}

// appIDMatches reports whether the application has the app id the credentials Secret names, if any.
func appIDMatches(r tsclient.Application, d *applicationDesired) bool {
	return !d.AppIDMode || d.AppID == "" || r.ApplicationID == d.AppID
}

// keysMatch reports whether the application's keys are those the credentials Secret lists, if it lists
// any (none listed: the keys are 3scale's, whatever they are).
func keysMatch(keys []string, d *applicationDesired) bool {
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
func credentials(snap *applicationSnapshot) map[string][]byte {
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
func (s *ApplicationSyncer) credentialsWritten(ctx context.Context, a *v1alpha1.Application, snap *applicationSnapshot) bool {
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

// Create implements engine.TypedSyncer: creates the application on its account and plan, with the
// spec's credentials or 3scale's; the credentials Secret follows (Update).
func (s *ApplicationSyncer) Create(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, want applicationDesired) (*applicationSnapshot, error) {
	d := &want
	p := tsclient.ApplicationParams{PlanID: d.PlanID, Name: a.Spec.Name, Description: &a.Spec.Description, UserKey: d.UserKey, ApplicationID: d.AppID}
	if len(d.AppKeys) > 0 {
		p.ApplicationKey = d.AppKeys[0]
	}
	created, _, err := createOrAdopt(sess.SystemName, func() (*tsclient.Application, error) {
		app, err := sess.Remote.CreateApplication(ctx, d.AccountID, p)
		if err == nil || !(tsclient.HasAlreadyBeenTaken(err, "user_key") || tsclient.HasAlreadyBeenTaken(err, "application_id")) {
			return app, err
		}
		return s.holderOfCredentials(ctx, a, sess, d, err)
	}, a, sess, s.finder(ctx, sess, d.AccountID))
	if err != nil {
		return nil, err
	}
	a.Status.ApplicationID = created.ID
	return s.readKeys(ctx, sess, d, *created)
}

// holderOfCredentials deals with a create refused because the credentials it brings are taken: porta
// does not make application names unique, so an earlier create of ours that timed out but committed
// shows as its credentials taken, not its name. The application holding them (porta's find by user_key
// or app_id on the product) is this resource's own when it is on this account with this name and a create
// of ours is in doubt (the create-pending marker), or is adopted as any existing application is (announced,
// refused by adoption: Never). Anything else keeps the refusal (taken): a credential of someone else's.
func (s *ApplicationSyncer) holderOfCredentials(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, d *applicationDesired, taken error) (*tsclient.Application, error) {
	holder, err := sess.Remote.FindApplication(ctx, d.ProductID, d.UserKey, d.AppID)
	switch {
	case tsclient.IsNotFound(err):
		return nil, taken
	case err != nil:
		return nil, engine.NothingMade(fmt.Errorf("cannot look up the application holding the credentials: %w", err))
	case holder.AccountID != d.AccountID || holder.Name != a.Spec.Name:
		return nil, taken
	case !sess.CreatePending && a.GetAdoptionPolicy() == v1alpha1.AdoptionNever:
		return nil, engine.Refused(engine.ReasonAdoptionRefused,
			"an application %q with these credentials already exists on the account in 3scale (id %d) and this resource did not create it; spec.adoption is Never", holder.Name, holder.ID)
	case !sess.CreatePending:
		sess.Adopted = holder.ID
	}
	return holder, nil
}

// Update implements engine.TypedSyncer: attributes, plan (change_plan within the product), suspension,
// keys, then the credentials Secret.
func (s *ApplicationSyncer) Update(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, want applicationDesired, snap *applicationSnapshot) (*applicationSnapshot, error) {
	d := &want
	c, id := sess.Remote, snap.App.ID
	if d.Retire {
		return nil, s.retire(ctx, a) // the product's sweep changes its state: nothing known to cache
	}
	if !appIDMatches(snap.App, d) {
		// porta's application_id is read-only (attr_readonly, app/lib/backend/model_extensions/cinstance.rb:17).
		return nil, engine.Invalid(ReasonInvalidSpec, "Secret %q (spec.credentialsRef) names another %s than the application's in 3scale, which cannot change: "+
			"restore it, or create a new Application with the new one", a.Spec.CredentialsRef.Name, credentialAppID)
	}
	var err error
	if !appAttrsMatch(snap.App, a, d) {
		if snap.App, err = deref(c.UpdateApplication(ctx, d.AccountID, id, tsclient.ApplicationParams{Name: a.Spec.Name,
			Description: &a.Spec.Description, UserKey: d.UserKey})); err != nil {
			return nil, fmt.Errorf("cannot update application %q: %w", a.Spec.Name, err)
		}
	}
	if snap.App.PlanID != d.PlanID {
		if err := c.ChangeApplicationPlan(ctx, d.AccountID, id, d.PlanID); err != nil {
			return nil, fmt.Errorf("cannot move application %q to plan %d: %w", a.Spec.Name, d.PlanID, err)
		}
		snap.App.PlanID = d.PlanID
	}
	switch {
	case a.Spec.Suspended && snap.App.State != appSuspended:
		snap.App, err = deref(c.SuspendApplication(ctx, d.AccountID, id))
	case !a.Spec.Suspended && snap.App.State == appSuspended:
		snap.App, err = deref(c.ResumeApplication(ctx, d.AccountID, id))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot change the state of application %q: %w", a.Spec.Name, err)
	}
	if err := syncKeys(ctx, c, a, d, snap); err != nil {
		return nil, err
	}
	a.Status.PlanID = snap.App.PlanID
	if err := s.writeCredentials(ctx, a, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// syncKeys makes the application's keys those the credentials Secret lists, when it lists any: the keys
// it adds are added before the ones it no longer lists are deleted, so that a rotated key (old removed,
// new added) never leaves the application without a valid key. Only when the product's key limit leaves
// no room for a new key is a removed one deleted first. porta's admin API deletes any key, the last one
// too (application_key.rb:49-54, buyer_application_keys_controller.rb:20): a Secret that lists no key
// keeps 3scale's. Errors never name a key.
func syncKeys(ctx context.Context, c *tsclient.Client, a *v1alpha1.Application, d *applicationDesired, snap *applicationSnapshot) error {
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
		if err := ignoreNotFound(c.DeleteApplicationKey(ctx, d.AccountID, id, k)); err != nil {
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

// retire retires the application of a retired product: deletes its credentials Secret and records when.
// It makes no call: the product's retirement sweep suspends every live application on the product, this
// one included, once (productLifecycle.suspendAll); a suspend of its own, woken by the product from a
// snapshot that still said live, raced that sweep and was refused (7 suspends for 4 applications).
func (s *ApplicationSyncer) retire(ctx context.Context, a *v1alpha1.Application) error {
	if err := s.deleteCredentials(ctx, a); err != nil {
		return err
	}
	a.Status.CredentialsSecret = ""
	a.Status.RetiredAt = &metav1.Time{Time: time.Now()}
	return nil
}

// deleteCredentials deletes the credentials Secret, only if this Application controls it (it created it):
// a Secret of that name made by anyone else (the user's own, the provider account's) is never touched. The
// deletion is bound to the UID read, so a Secret recreated meanwhile by someone else is not deleted either.
func (s *ApplicationSyncer) deleteCredentials(ctx context.Context, a *v1alpha1.Application) error {
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
func (s *ApplicationSyncer) writeCredentials(ctx context.Context, a *v1alpha1.Application, snap *applicationSnapshot) error {
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
		return engine.Invalid(ReasonInvalidSpec, "cannot write the credentials Secret %q: %v", secret.Name, err)
	}
	a.Status.CredentialsSecret = secret.Name
	return nil
}

// Delete implements engine.TypedSyncer. An application whose account or product is being deleted with it, or
// is gone from 3scale already, goes with them: no call; while either may still be deleted in a moment (a
// prune, within the deletion grace), it waits for them.
func (s *ApplicationSyncer) Delete(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) error {
	sess.SystemName = a.Spec.Name
	id, accountID := a.Status.ApplicationID, a.Status.AccountID
	if accountID == 0 {
		return nil // on no account in 3scale: nothing to delete
	}
	// The account's deletion in 3scale takes its applications with it, the product's its plans'.
	account := owner{kind: "DeveloperAccount", name: a.Spec.AccountRef, fate: fateOf(ctx, s.Reader, a.Namespace, a.Spec.AccountRef, sess.Tenant, accountID, &v1alpha1.DeveloperAccount{})}
	product := owner{kind: "Product"}
	var plan v1alpha1.ApplicationPlan
	if s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.PlanRef}, &plan) == nil {
		product.name = plan.Spec.ProductRef
		product.fate = fateOf(ctx, s.Reader, a.Namespace, plan.Spec.ProductRef, sess.Tenant, a.Status.ProductID, &v1alpha1.Product{})
	}
	if left, err := leftToOwners(a, sess, account, product); left {
		return err
	}
	if id == 0 {
		remote, err := locate(a, sess, s.finder(ctx, sess, accountID))
		if err != nil || remote == nil {
			return ignoreNotFound(err)
		}
		id = remote.ID
	}
	if err := ignoreNotFound(sess.Remote.DeleteApplication(ctx, accountID, id)); err != nil {
		return fmt.Errorf("cannot delete application %q: %w", a.Spec.Name, err)
	}
	return nil
}
