package application

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Keys of an Application's credentials Secret (the one it reads and the one it writes).
const (
	credentialUserKey = "user_key"
	credentialAppID   = "app_id"
	credentialAppKey  = "app_key"
	credentialAppKeys = "app_keys"
)

// Snapshot is the remote state of one application.
type Snapshot struct {
	App  tsclient.Application
	Keys []string
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.App.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	return &Snapshot{App: s.App, Keys: slices.Clone(s.Keys)}
}

// Desired is what Resolve learnt from the account, the plan and the credentials Secret.
type Desired struct {
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

// Syncer syncs Applications to 3scale applications and writes their credentials to a Secret
// the Application owns. An application is identified by its name within its account: after a lost create
// answer it is found there again (create-pending marker), never made twice.
type Syncer struct {
	// Fates tells what becomes of its owner in 3scale when this object is deleted (the table gives it).
	Fates kit.Fates
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Writer writes the credentials Secrets.
	Writer client.Client
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.Application, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.OwnedBy[*v1alpha1.Application]                         = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.Application]                       = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer: the provider account of the application's DeveloperAccount; while
// the application is being deleted, the Secret it was synced with (its account may be gone already).
func (s *Syncer) Connect(ctx context.Context, a *v1alpha1.Application) (*engine.Session, error) {
	var acc v1alpha1.DeveloperAccount
	return kit.ConnectVia(ctx, s.Accounts, s.Reader, a, a.Spec.AccountRef, &acc, acc.Spec.ProviderAccountSecretName, accountOfApplication)
}

// Validate implements engine.Validator: the credentials Secret the application writes is not, by its
// name alone, the default provider-account Secret nor its spec.credentialsRef Secret.
func (s *Syncer) Validate(a *v1alpha1.Application) error {
	return credentialsSecretNamed(a)
}

// SystemName is the system name of the object's remote object, from its spec alone: its spec.name (3scale
// has none: the name identifies it among its account's applications).
func (s *Syncer) SystemName(a *v1alpha1.Application) string { return a.Spec.Name }

// Resolve implements engine.TypedSyncer: the account and the plan must be Synced on the session's
// tenant (an Invalid one makes the application Invalid); the plan must be of the product the
// application is on.
func (s *Syncer) Resolve(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	err := s.resolve(ctx, a, sess, &r)
	return r, err
}

// resolve is Resolve's work: it fills in r's desired state and hash.
func (s *Syncer) resolve(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, r *engine.Resolved[Desired]) error {
	var acc v1alpha1.DeveloperAccount
	if err := kit.CheckDependency(ctx, s.Reader, a.Namespace, a.Spec.AccountRef, &acc, accountOfApplication); err != nil {
		return err
	}
	if err := kit.OnTenant(&acc, sess.Tenant, accountOfApplication); err != nil {
		return err
	}
	var plan v1alpha1.ApplicationPlan
	if err := kit.CheckDependency(ctx, s.Reader, a.Namespace, a.Spec.PlanRef, &plan, planOfApplication); err != nil {
		return err
	}
	if plan.Status.TenantHost != sess.Tenant {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "ApplicationPlan %q is on tenant %s, but DeveloperAccount %q on %s: an application needs both on one tenant",
			plan.Name, plan.Status.TenantHost, acc.Name, sess.Tenant)
	}
	if a.Status.ApplicationID != 0 && a.Status.ProductID != 0 && plan.Status.ProductID != a.Status.ProductID {
		return engine.Invalid(v1alpha1.ReasonPlanOfAnotherProduct,
			"ApplicationPlan %q belongs to another product than the one this application is on (3scale product %d): 3scale cannot move an application between products; create a new Application on that plan and delete this one",
			plan.Name, a.Status.ProductID)
	}
	var product v1alpha1.Product
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: plan.Spec.ProductRef}, &product); err != nil {
		return engine.Waiting(v1alpha1.ReasonProductNotFound, "waiting for Product %q of plan %q", plan.Spec.ProductRef, plan.Name)
	}
	backendVersion := product.Spec.BackendVersion()
	desired := &Desired{AccountID: acc.Status.AccountID, PlanID: plan.Status.PlanID, ProductID: plan.Status.ProductID,
		AppIDMode: backendVersion != "1", KeysLimit: appKeysLimit(backendVersion)}
	if a.Spec.RedirectURL != "" && backendVersion != "oidc" {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.redirectURL is for the applications of an OIDC Product, and Product %q authenticates its applications otherwise: remove it, or give the Product OIDC authentication",
			product.Name)
	}
	if err := lifecycleAllows(a, &plan, &product, desired); err != nil {
		return err
	}
	if err := credentialsSecretAllowed(a, sess); err != nil {
		return err
	}
	if err := s.resolveCredentials(ctx, a, desired); err != nil {
		return err
	}
	a.Status.AccountID, a.Status.ProductID = desired.AccountID, desired.ProductID
	spec := a.Spec
	spec.DeletionPolicy, spec.Adoption = "", ""
	r.Desired, r.Hash = *desired, sess.HashOf(sess.Tenant, spec, desired)
	return nil
}

// lifecycleAllows applies the product's lifecycle to the application: in Draft new applications wait
// (unless the plan allows them in draft); Deprecated and Retired products take no new application; an
// existing application of a Retired product is retired (suspended, credentials Secret deleted) and then
// stays Invalid, saying so.
func lifecycleAllows(a *v1alpha1.Application, plan *v1alpha1.ApplicationPlan, product *v1alpha1.Product, d *Desired) error {
	isNew := a.Status.ApplicationID == 0
	if product.ObserveOnly() {
		// Its lifecycle is a look too: an observed product suspends nothing, so its applications are not
		// retired by what its spec says.
		return nil
	}
	switch product.Spec.EffectiveLifecycle() {
	case v1alpha1.LifecycleDraft:
		if isNew && !plan.Spec.AllowInDraft {
			return engine.Waiting(v1alpha1.ReasonProductDraft, "Product %q is in Draft: applications wait until it is Published (or use a plan with allowInDraft: true)", product.Name)
		}
	case v1alpha1.LifecycleDeprecated:
		if isNew {
			return engine.Invalid(v1alpha1.ReasonProductDeprecated, "Product %q is Deprecated: it takes no new application (existing ones keep working); use a plan of another product", product.Name)
		}
	case v1alpha1.LifecycleRetired:
		switch {
		case isNew:
			return engine.Invalid(v1alpha1.ReasonProductRetired, "Product %q is Retired: it takes no application; use a plan of another product", product.Name)
		case a.Status.RetiredAt != nil:
			date := "an unknown date"
			if at := product.Status.LifecycleChangedAt; at != nil {
				date = at.UTC().Format(time.DateOnly)
			}
			return engine.Invalid(v1alpha1.ReasonProductRetired, "product %s was retired on %s: this application is suspended in 3scale and its credentials Secret deleted; "+
				"move its consumers to an Application on another product's plan, then delete this one", product.Name, date)
		}
		d.Retire = true
	}
	return nil
}

// accountOfApplication and planOfApplication are an Application's spec.accountRef and spec.planRef.
var (
	accountOfApplication = kit.Dependency{Kind: "DeveloperAccount", Field: "spec.accountRef", NotFound: v1alpha1.ReasonAccountNotFound,
		Deleting: v1alpha1.ReasonAccountDeleting, Invalid: v1alpha1.ReasonAccountInvalid, NotSynced: v1alpha1.ReasonAccountNotSynced}
	planOfApplication = kit.Dependency{Kind: "ApplicationPlan", Field: "spec.planRef", NotFound: v1alpha1.ReasonPlanNotFound,
		Deleting: v1alpha1.ReasonPlanDeleting, Invalid: v1alpha1.ReasonPlanInvalid, NotSynced: v1alpha1.ReasonPlanNotSynced}
)

// Compare implements engine.TypedSyncer: the application and its credentials Secret. A retiring
// application is never up to date: retiring is a one-time act (Update deletes the Secret, Resolve then
// reports it).
func (s *Syncer) Compare(ctx context.Context, a *v1alpha1.Application, _ *engine.Session, d Desired, snap *Snapshot) (bool, error) {
	if snap.App.PlanID == d.PlanID {
		a.Status.PlanID = d.PlanID
	}
	return !d.Retire && appMatches(snap, a, &d) && s.credentialsWritten(ctx, a, snap), nil
}

// Read implements engine.TypedSyncer: the application on its account, and its keys.
func (s *Syncer) Read(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, d Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(a, sess, s.finder(ctx, sess, d.AccountID))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap, err := s.readKeys(ctx, sess, &d, *remote)
	return snap, err == nil, err
}

func (s *Syncer) readKeys(ctx context.Context, sess *engine.Session, d *Desired, app tsclient.Application) (*Snapshot, error) {
	snap := &Snapshot{App: app}
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
func (s *Syncer) finder(ctx context.Context, sess *engine.Session, accountID int64) kit.RemoteFinder[tsclient.Application] {
	return kit.RemoteFinder[tsclient.Application]{Kind: "application", UniqueField: "name",
		Get:    func(id int64) (*tsclient.Application, error) { return sess.Remote.GetApplication(ctx, accountID, id) },
		List:   func() ([]tsclient.Application, error) { return sess.Remote.ListApplications(ctx, accountID) },
		IDName: func(r tsclient.Application) (int64, string) { return r.ID, r.Name },
	}
}

func appState(a *v1alpha1.Application) string {
	if a.Spec.Suspended {
		return kit.AppSuspended
	}
	return kit.AppLive
}

func appAttrsMatch(r tsclient.Application, a *v1alpha1.Application, d *Desired) bool {
	return r.Name == a.Spec.Name && r.Description == a.Spec.Description && (d.UserKey == "" || r.UserKey == d.UserKey) &&
		(a.Spec.RedirectURL == "" || r.RedirectURL == a.Spec.RedirectURL)
}

func appMatches(snap *Snapshot, a *v1alpha1.Application, d *Desired) bool {
	r := snap.App
	if !appAttrsMatch(r, a, d) || r.PlanID != d.PlanID || (r.State != appState(a) && r.State != "pending") {
		return false
	}
	return appIDMatches(r, d) && keysMatch(snap.Keys, d)
}

// redirectURL is the redirect URL to send: the spec's, or none when it leaves it out (not managed).
func redirectURL(a *v1alpha1.Application) *string {
	if a.Spec.RedirectURL == "" {
		return nil
	}
	return &a.Spec.RedirectURL
}

// appIDMatches reports whether the application has the app id the credentials Secret names, if any.
func appIDMatches(r tsclient.Application, d *Desired) bool {
	return !d.AppIDMode || d.AppID == "" || r.ApplicationID == d.AppID
}

// Create implements engine.TypedSyncer: creates the application on its account and plan, with the
// spec's credentials or 3scale's; the credentials Secret follows (Update).
func (s *Syncer) Create(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, want Desired) (engine.Created[*Snapshot], error) {
	d := &want
	p := tsclient.ApplicationParams{PlanID: d.PlanID, Name: a.Spec.Name, Description: &a.Spec.Description, UserKey: d.UserKey, ApplicationID: d.AppID,
		RedirectURL: redirectURL(a)}
	if len(d.AppKeys) > 0 {
		p.ApplicationKey = d.AppKeys[0]
	}
	held := false // found by its credentials: not made by this create
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.Application, error) {
		app, err := sess.Remote.CreateApplication(ctx, d.AccountID, p)
		if err == nil || !(tsclient.HasAlreadyBeenTaken(err, "user_key") || tsclient.HasAlreadyBeenTaken(err, "application_id")) {
			return app, err
		}
		held = true
		return s.holderOfCredentials(ctx, a, sess, d, err)
	}, a, sess, s.finder(ctx, sess, d.AccountID))
	fresh = fresh && !held
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	a.Status.ApplicationID = created.ID
	snap, err := s.readKeys(ctx, sess, d, *created)
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: attributes, plan (change_plan within the product), suspension,
// keys, then the credentials Secret.
func (s *Syncer) Update(ctx context.Context, a *v1alpha1.Application, sess *engine.Session, want Desired, snap *Snapshot) (*Snapshot, error) {
	d := &want
	c, id := sess.Remote, snap.App.ID
	if d.Retire {
		if sess.DryRun { // a look: the credentials Secret stays
			return nil, nil
		}
		return nil, s.retire(ctx, a) // the product's sweep changes its state: nothing known to cache
	}
	if !appIDMatches(snap.App, d) {
		// porta's application_id is read-only (attr_readonly, app/lib/backend/model_extensions/cinstance.rb:17).
		return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "Secret %q (spec.credentialsRef) names another %s than the application's in 3scale, which cannot change: "+
			"restore it, or create a new Application with the new one", a.Spec.CredentialsRef.Name, credentialAppID)
	}
	var err error
	if !appAttrsMatch(snap.App, a, d) {
		if snap.App, err = kit.Deref(c.UpdateApplication(ctx, d.AccountID, id, tsclient.ApplicationParams{Name: a.Spec.Name,
			Description: &a.Spec.Description, UserKey: d.UserKey, RedirectURL: redirectURL(a)})); err != nil {
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
	case a.Spec.Suspended && snap.App.State != kit.AppSuspended:
		snap.App, err = kit.Deref(c.SuspendApplication(ctx, d.AccountID, id))
	case !a.Spec.Suspended && snap.App.State == kit.AppSuspended:
		snap.App, err = kit.Deref(c.ResumeApplication(ctx, d.AccountID, id))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot change the state of application %q: %w", a.Spec.Name, err)
	}
	if err := syncKeys(ctx, c, a, d, snap); err != nil {
		return nil, err
	}
	a.Status.PlanID = snap.App.PlanID
	if sess.DryRun { // a look: the credentials Secret is not written
		return snap, nil
	}
	if err := s.writeCredentials(ctx, a, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// retire retires the application of a retired product: deletes its credentials Secret and records when.
// It makes no call: the product's retirement sweep suspends every live application on the product, this
// one included, once (product.Lifecycle.suspendAll); a suspend of its own, woken by the product from a
// snapshot that still said live, raced that sweep and was refused (7 suspends for 4 applications).
func (s *Syncer) retire(ctx context.Context, a *v1alpha1.Application) error {
	if err := s.deleteCredentials(ctx, a); err != nil {
		return err
	}
	a.Status.CredentialsSecret = ""
	a.Status.RetiredAt = &metav1.Time{Time: time.Now()}
	return nil
}

// Owners implements engine.OwnedBy: the account's deletion in 3scale takes its applications with it, the
// product's its plans' and theirs.
func (s *Syncer) Owners(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) []engine.Owner {
	if a.Status.AccountID == 0 {
		return nil
	}
	account := engine.Owner{Kind: "DeveloperAccount", Name: a.Spec.AccountRef,
		Fate: s.Fates.Of(ctx, a.Namespace, a.Spec.AccountRef, sess.Tenant, a.Status.AccountID, &v1alpha1.DeveloperAccount{})}
	product := engine.Owner{Kind: "Product"}
	var plan v1alpha1.ApplicationPlan
	if s.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.PlanRef}, &plan) == nil {
		product.Name = plan.Spec.ProductRef
		product.Fate = s.Fates.Of(ctx, a.Namespace, plan.Spec.ProductRef, sess.Tenant, a.Status.ProductID, &v1alpha1.Product{})
	}
	return []engine.Owner{account, product}
}

// Delete implements engine.TypedSyncer: deletes the application this Application holds (by id, or by
// name on its account after its own lost create); an account or product gone from 3scale already took it
// along.
func (s *Syncer) Delete(ctx context.Context, a *v1alpha1.Application, sess *engine.Session) error {
	id, accountID := a.Status.ApplicationID, a.Status.AccountID
	if accountID == 0 {
		return nil // on no account in 3scale: nothing to delete
	}
	if id == 0 {
		remote, err := kit.Locate(a, sess, s.finder(ctx, sess, accountID))
		if err != nil || remote == nil {
			return kit.IgnoreNotFound(err)
		}
		id = remote.ID
	}
	if err := kit.IgnoreNotFound(sess.Remote.DeleteApplication(ctx, accountID, id)); err != nil {
		return fmt.Errorf("cannot delete application %q: %w", a.Spec.Name, err)
	}
	return nil
}

// SecretRefs lists the Secrets an Application reads: its credentials, when it names them.
func SecretRefs(a *v1alpha1.Application) []string {
	if a.Spec.CredentialsRef != nil {
		return []string{a.Spec.CredentialsRef.Name}
	}
	return nil
}

// Scope is the scope of an Application's remote object: its account.
func Scope(a *v1alpha1.Application) string { return kit.Itoa64(a.Status.AccountID) }

// ClaimScope is Scope read from the Application's DeveloperAccount, before it synced ("0" when it is not
// there).
func ClaimScope(ctx context.Context, reader client.Reader, a *v1alpha1.Application) string {
	return kit.ScopeOf(ctx, reader, a.Namespace, a.Spec.AccountRef, &v1alpha1.DeveloperAccount{})
}

// OfProduct maps a Product to the Applications on its plans.
func OfProduct(reader client.Reader) handler.MapFunc {
	return kit.ReferencingThrough(reader, &v1alpha1.ApplicationPlanList{}, kit.IndexProductRef, &v1alpha1.ApplicationList{}, kit.IndexPlanRef)
}

// OfAccountsReading maps a Secret to the Applications of the DeveloperAccounts that read it
// (their provider account): an Application talks to 3scale with its account's provider account, so a
// changed Secret (a fixed token) wakes it directly, not one hop later through its account.
func OfAccountsReading(reader client.Reader) handler.MapFunc {
	return kit.ReferencingThrough(reader, &v1alpha1.DeveloperAccountList{}, kit.IndexSecretRefs, &v1alpha1.ApplicationList{}, kit.IndexAccountRef)
}

// SuspendedIn is a Product's Suspended hook over the snapshot cache: the cached snapshot of an
// application its retirement sweep suspends says so, so that its Application object, if any, does not
// read it again; one that is gone is forgotten.
func SuspendedIn(store engine.SnapshotStore) func(tenant string, appID int64, gone bool) {
	return func(tenant string, appID int64, gone bool) {
		if gone {
			store.Forget(tenant, "Application", appID)
			return
		}
		engine.Amend(store, tenant, "Application", appID, func(app *Snapshot) { app.App.State = kit.AppSuspended })
	}
}
