package developeraccount

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Account and user states of porta that apimsync brings accounts and users to.
const (
	accountApproved = "approved"
	userActive      = "active"
	userSuspended   = "suspended"
	roleAdmin       = "admin"
)

// Snapshot is the remote state of one developer account and its users.
type Snapshot struct {
	Account tsclient.Account
	Users   map[string]tsclient.User // by username
	// ListDenied: porta refused to list the users (the tenant's multiple_users switch is denied).
	ListDenied bool
	// AccountPlanID is the account plan the account is on, read only for an account whose spec names one
	// (0 otherwise).
	AccountPlanID int64
	// Subscriptions are the account's service subscriptions, read only for an account that manages them
	// (nil otherwise).
	Subscriptions []tsclient.ServiceSubscription
	// Fields are the tenant's account field definitions, read only for an account that gives field
	// values (nil otherwise), as they stood for Desired.FieldsKey.
	Fields    accountFields
	FieldsKey string
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.Account.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Users = maps.Clone(s.Users)
	c.Subscriptions = slices.Clone(s.Subscriptions)
	c.Fields = maps.Clone(s.Fields)
	return &c
}

// Desired holds the users' passwords read from their Secrets, by username, and the versions of
// those Secrets (UID/resourceVersion): a version in status tells whether 3scale has the password the
// Secret held then, and reveals nothing of it to whoever can read the resource.
type Desired struct {
	Passwords map[string]string
	Versions  map[string]string
	// Initial holds the passwords of the users whose passwordPolicy is OnCreate, sent only when apimsync
	// makes the user; they are not hashed, so a change of their Secret is nothing to sync, and they are
	// not in Versions, so that a user moving to Always gets its password set once.
	Initial map[string]string `json:"-"`
	// Unavailable says why an OnCreate user's password cannot be read (no Secret, no key, empty): the
	// account waits for it only when it has to make that user.
	Unavailable map[string]error `json:"-"`
	// AccountPlanID is the id of the AccountPlan spec.accountPlanRef names (0: none named).
	AccountPlanID int64 `json:",omitempty"`
	// Subscriptions are the subscriptions spec.servicePlanRefs asks for, in product id order.
	Subscriptions []Subscription `json:",omitempty"`
	// ManagesSubscriptions is true when the account manages subscriptions (subscriptionsManaged): they
	// are read.
	ManagesSubscriptions bool `json:"-"`
	// FieldsKey sums up the namespace's FieldDefinitions of accounts (definitionsKey), for an account that
	// gives field values.
	FieldsKey string `json:",omitempty"`
}

// initialPassword returns the password to create a user with: an OnCreate user's waits for its Secret.
func (d Desired) initialPassword(username string) (string, error) {
	if err := d.Unavailable[username]; err != nil {
		return "", err
	}
	if p, ok := d.Initial[username]; ok {
		return p, nil
	}
	return d.Passwords[username], nil
}

// SentPasswords remembers, for this manager process only, a digest of each password it set in 3scale,
// keyed with a random key made when the process starts and never stored: when a password Secret
// changes (a new resourceVersion), the passwords in it that did not change are not set again. After a
// restart the memory is empty, and a changed Secret sets each of its passwords once more. Safe for
// concurrent use; the zero value is ready.
type SentPasswords struct {
	once sync.Once
	key  []byte
	sent sync.Map // tenant/account id/username → digest
}

func (p *SentPasswords) digest(password string) string {
	p.once.Do(func() {
		p.key = make([]byte, 32)
		_, _ = rand.Read(p.key)
	})
	return engine.KeyedHash(p.key, password)
}

// Remember records that password was set for the user key.
func (p *SentPasswords) Remember(key, password string) {
	if p != nil {
		p.sent.Store(key, p.digest(password))
	}
}

// Same reports whether password is the one this process last set for the user key.
func (p *SentPasswords) Same(key, password string) bool {
	if p == nil {
		return false
	}
	d, ok := p.sent.Load(key)
	return ok && d == p.digest(password)
}

// userKey identifies a user of a remote account for SentPasswords.
func userKey(sess *engine.Session, accountID int64, username string) string {
	return sess.Tenant + "/" + kit.Itoa64(accountID) + "/" + username
}

// knownPasswords returns, by username, the versions of the passwords 3scale has as far as status and
// this process tell: a version recorded in status that is still the Secret's, or a newer version of a
// Secret whose password for that user is the one this process last set. Users whose passwordPolicy is
// OnCreate are not among them (see Desired.Initial).
func (s *Syncer) knownPasswords(d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired) map[string]string {
	known := map[string]string{}
	for user, version := range desired.Versions {
		switch {
		case d.Status.PasswordVersions[user] == version:
		case d.Status.PasswordVersions[user] != "" && d.Status.AccountID != 0 &&
			s.Sent.Same(userKey(sess, d.Status.AccountID, user), desired.Passwords[user]):
		default:
			continue
		}
		known[user] = version
	}
	return known
}

// passwordsSet reports whether 3scale has every password the spec's Secrets hold, as far as
// knownPasswords tells.
func (s *Syncer) passwordsSet(d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired) bool {
	return len(s.knownPasswords(d, sess, desired)) == len(desired.Versions)
}

// Syncer syncs DeveloperAccounts to 3scale developer accounts with their users. An
// account is identified by its first admin's username: porta's signup creates both, and accounts/find
// finds the account again after a lost answer.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Sent remembers the passwords this process set (nil: none remembered).
	Sent *SentPasswords
	// Lists shares the tenant's field definitions among the accounts reading them in one burst.
	Lists *kit.BurstLists
	// FieldsKey sums up a namespace's FieldDefinitions of accounts on a tenant (nil: none considered).
	FieldsKey func(ctx context.Context, namespace, tenant string) (string, error)
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.DeveloperAccount, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.DeveloperAccount]                       = (*Syncer)(nil)
	_ engine.Noter[*v1alpha1.DeveloperAccount, *Snapshot]                = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                            = (*Syncer)(nil)
)

// accountPlanOfAccount is a DeveloperAccount's spec.accountPlanRef.
var accountPlanOfAccount = kit.Dependency{Kind: "AccountPlan", Field: "spec.accountPlanRef", NotFound: v1alpha1.ReasonAccountPlanNotFound,
	Deleting: v1alpha1.ReasonAccountPlanDeleting, Invalid: v1alpha1.ReasonAccountPlanInvalid, NotSynced: v1alpha1.ReasonAccountPlanNotSynced,
	DeletingHint: "name another plan in spec.accountPlanRef, or remove it", WhileDeleting: kit.WaitingFor}

// Serves implements engine.CacheChecker: a snapshot read without the account's plan, or without its
// subscriptions, does not serve an account whose spec names them.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return (want.AccountPlanID == 0 || snap.AccountPlanID != 0) && (!want.ManagesSubscriptions || snap.Subscriptions != nil) &&
		snap.FieldsKey == want.FieldsKey
}

// resolveAccountPlan puts in desired the id of the AccountPlan the spec names: Synced, on this tenant.
func (s *Syncer) resolveAccountPlan(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired *Desired) error {
	ref := d.Spec.AccountPlanRef
	if ref == "" {
		return nil
	}
	var plan v1alpha1.AccountPlan
	if err := kit.ReadDependency(ctx, s.Reader, d.Namespace, ref, &plan, accountPlanOfAccount); err != nil {
		return err
	}
	if host := plan.Status.TenantHost; host != "" && host != sess.Tenant {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "AccountPlan %q is a plan of tenant %s, and this account is on tenant %s: an account's plan is one of its tenant's; "+
			"name an AccountPlan of the same provider account", ref, host, sess.Tenant)
	}
	if err := kit.ReadyDependency(&plan, accountPlanOfAccount); err != nil {
		return err
	}
	desired.AccountPlanID = plan.Status.AccountPlanID
	return nil
}

// readAccountPlan reads the account plan of the account snap holds, when want names one.
func (s *Syncer) readAccountPlan(ctx context.Context, sess *engine.Session, want Desired, snap *Snapshot) error {
	if want.AccountPlanID == 0 {
		return nil
	}
	p, err := sess.Remote.AccountPlanOf(ctx, snap.Account.ID)
	if err != nil {
		return fmt.Errorf("cannot read the account plan of account %d: %w", snap.Account.ID, err)
	}
	snap.AccountPlanID = p.ID
	return nil
}

// firstAdmin is the user that signs the account up and identifies it.
func firstAdmin(d *v1alpha1.DeveloperAccount) v1alpha1.DeveloperUserSpec {
	for _, u := range d.Spec.Users {
		if u.Role == roleAdmin {
			return u
		}
	}
	return d.Spec.Users[0]
}

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, d *v1alpha1.DeveloperAccount) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, d.Namespace, kit.SecretForSession(d, d.Spec.ProviderAccountSecretName()))
}

// Validate implements engine.Validator: an account needs a user (its first admin).
func (s *Syncer) Validate(d *v1alpha1.DeveloperAccount) error {
	if len(d.Spec.Users) == 0 {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "an account needs at least one user")
	}
	return nil
}

// SystemName is the system name of the object's remote object, from its spec alone: the username of its
// first admin user (3scale identifies an account by it).
func (s *Syncer) SystemName(d *v1alpha1.DeveloperAccount) string {
	return firstAdmin(d).Username
}

// Resolve implements engine.TypedSyncer: the users' password Secrets must exist; no other resource may
// own the account (same tenant, same first admin).
func (s *Syncer) Resolve(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	desired := Desired{Passwords: map[string]string{}, Versions: map[string]string{}, Initial: map[string]string{}, Unavailable: map[string]error{}}
	for _, u := range d.Spec.Users {
		if u.PasswordRef == nil {
			continue
		}
		usedFor := fmt.Sprintf("password of user %q", u.Username)
		v, version, err := kit.SecretKey(ctx, s.Reader, d.Namespace, u.PasswordRef, usedFor)
		if err == nil && v == "" {
			err = engine.Waiting(v1alpha1.ReasonSecretNotFound, "Secret %q has an empty %q (%s): fill it in", u.PasswordRef.Name, u.PasswordRef.Key, usedFor)
		}
		switch {
		case u.PasswordPolicy == v1alpha1.PasswordOnCreate && err != nil:
			if class, _, _ := engine.Classify(err); class != engine.ClassWaiting {
				return r, err // not a missing Secret or key: an error reading it
			}
			desired.Unavailable[u.Username] = err
		case u.PasswordPolicy == v1alpha1.PasswordOnCreate:
			desired.Initial[u.Username] = v
		case err != nil:
			return r, err
		default:
			desired.Passwords[u.Username] = v
			desired.Versions[u.Username] = version
		}
	}
	if err := s.resolveAccountPlan(ctx, d, sess, &desired); err != nil {
		return r, err
	}
	if err := s.resolveSubscriptions(ctx, d, sess, &desired); err != nil {
		return r, err
	}
	var err error
	if desired.FieldsKey, err = s.definitionsKey(ctx, d, sess.Tenant); err != nil {
		return r, err
	}
	r.Desired = desired
	spec := d.Spec
	spec.CommonSpec = v1alpha1.CommonSpec{}
	r.Hash = sess.HashOf(sess.Tenant, sess.SystemName, spec, &desired)
	return r, nil
}

// Compare implements engine.TypedSyncer: the account, its users and their passwords; what it reads is
// recorded in status (user ids, the card, the password Secrets' versions when only a Secret changed).
func (s *Syncer) Compare(_ context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired, snap *Snapshot) (bool, error) {
	if err := usersAllowed(d, snap); err != nil {
		return false, err
	}
	if err := checkFields(d, snap.Fields, false); err != nil {
		return false, err
	}
	passwords := s.passwordsSet(d, sess, desired)
	if passwords && !maps.Equal(d.Status.PasswordVersions, desired.Versions) {
		d.Status.PasswordVersions = maps.Clone(desired.Versions) // a Secret changed, not the passwords
	}
	recordUsers(d, snap)
	d.Status.CreditCardStored = snap.Account.CreditCardStored
	return accountMatches(snap, d) && passwords && (desired.AccountPlanID == 0 || snap.AccountPlanID == desired.AccountPlanID) &&
		subscriptionsMatch(d, desired, snap) && fieldsToWrite(d, snap.Account) == nil, nil
}

// recordUsers records the ids of the account's users in status.
func recordUsers(d *v1alpha1.DeveloperAccount, snap *Snapshot) {
	d.Status.UserIDs = map[string]int64{}
	for name, u := range snap.Users {
		d.Status.UserIDs[name] = u.ID
	}
}

// Read implements engine.TypedSyncer: the account (by id, or its first admin's username) and its users.
func (s *Syncer) Read(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, want Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(d, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap, err := s.readUsers(ctx, sess, *remote)
	if err == nil {
		err = s.readAccountPlan(ctx, sess, want, snap)
	}
	if err == nil {
		err = readSubscriptions(ctx, sess, want, snap)
	}
	if err == nil {
		err = s.readFields(ctx, d, sess, want, snap)
	}
	return snap, err == nil, err
}

// usersAllowed refuses an account whose spec has more users than its admin on a tenant that does not
// offer several users per account (its multiple_users switch is denied), before any user is created:
// porta would create them, but would not list them. Refused, the account is looked at again after
// the invalid-retry period, in case the switch was allowed meanwhile.
func usersAllowed(d *v1alpha1.DeveloperAccount, snap *Snapshot) error {
	if !snap.ListDenied || len(d.Spec.Users) <= 1 {
		return nil
	}
	return engine.Refused(v1alpha1.ReasonMultipleUsersDenied,
		"the tenant's multiple_users switch is denied (3scale refuses to list the users of account %d): a developer account can have only its admin there; list only %q in spec.users, or have the tenant's \"Multiple Users\" feature allowed (its plan's switch)",
		snap.Account.ID, firstAdmin(d).Username)
}

// readUsers reads the account's users into a new snapshot. Porta lists an account's users only for a
// tenant whose multiple_users switch is allowed (403 otherwise): on such a tenant they are read from
// the account's XML (usersAllowed then refuses more users than the admin).
func (s *Syncer) readUsers(ctx context.Context, sess *engine.Session, remote tsclient.Account) (*Snapshot, error) {
	users, err := sess.Remote.ListUsers(ctx, remote.ID)
	denied := tsclient.IsForbidden(err)
	if denied {
		users, err = sess.Remote.UsersOfAccount(ctx, remote.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the users of account %d: %w", remote.ID, err)
	}
	snap := &Snapshot{Account: remote, Users: map[string]tsclient.User{}, ListDenied: denied}
	for _, u := range users {
		snap.Users[u.Username] = u
	}
	return snap, nil
}

// finder reads accounts of the session's tenant; the "list" is porta's find by the first admin's username.
func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.Account] {
	return kit.RemoteFinder[tsclient.Account]{Kind: "account", UniqueField: "username",
		Get: func(id int64) (*tsclient.Account, error) { return sess.Remote.GetAccount(ctx, id) },
		List: func() ([]tsclient.Account, error) {
			a, err := sess.Remote.FindAccountByUsername(ctx, sess.SystemName)
			if tsclient.IsNotFound(err) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return []tsclient.Account{*a}, nil
		},
		IDName: func(a tsclient.Account) (int64, string) { return a.ID, sess.SystemName },
	}
}

func accountAttrsMatch(r tsclient.Account, d *v1alpha1.DeveloperAccount) bool {
	b, c := d.Spec.MonthlyBillingEnabled, d.Spec.MonthlyChargingEnabled
	return r.OrgName == d.Spec.OrgName && (b == nil || *b == r.MonthlyBillingEnabled) && (c == nil || *c == r.MonthlyChargingEnabled)
}

func userMatches(r tsclient.User, u v1alpha1.DeveloperUserSpec) bool {
	return r.Email == u.Email && r.Role == userRole(u) && r.State == userState(u)
}

// userState is the state the spec asks of a user: suspended, or active.
func userState(u v1alpha1.DeveloperUserSpec) string {
	if u.Suspended {
		return userSuspended
	}
	return userActive
}

func userRole(u v1alpha1.DeveloperUserSpec) string {
	if u.Role == "" {
		return "member"
	}
	return string(u.Role)
}

func accountMatches(snap *Snapshot, d *v1alpha1.DeveloperAccount) bool {
	if !accountAttrsMatch(snap.Account, d) || snap.Account.State != accountApproved || len(snap.Users) != len(d.Spec.Users) {
		return false
	}
	for _, u := range d.Spec.Users {
		if r, ok := snap.Users[u.Username]; !ok || !userMatches(r, u) {
			return false
		}
	}
	return true
}

// Create implements engine.TypedSyncer: porta's signup makes the account with its first admin; the other
// users and settings follow (Update).
func (s *Syncer) Create(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired) (engine.Created[*Snapshot], error) {
	admin := firstAdmin(d)
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.Account, error) {
		password, err := desired.initialPassword(admin.Username)
		if err != nil {
			return nil, err
		}
		fields := &Snapshot{}
		if err := s.readFields(ctx, d, sess, desired, fields); err != nil {
			return nil, err
		}
		if err := checkFields(d, fields.Fields, true); err != nil {
			return nil, err
		}
		return sess.Remote.Signup(ctx, tsclient.SignupParams{OrgName: d.Spec.OrgName, Username: admin.Username, Email: admin.Email,
			Password: password, AccountPlanID: desired.AccountPlanID, Fields: d.Spec.Fields})
	}, d, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	d.Status.AccountID = created.ID
	d.Status.PasswordVersions = nil                      // an adopted account's passwords are unknown: set them all
	if fresh && desired.Versions[admin.Username] != "" { // the signup set the admin's
		d.Status.PasswordVersions = map[string]string{admin.Username: desired.Versions[admin.Username]}
		s.Sent.Remember(userKey(sess, created.ID, admin.Username), desired.Passwords[admin.Username])
	}
	snap, err := s.readUsers(ctx, sess, *created)
	if err == nil && fresh {
		snap.AccountPlanID = desired.AccountPlanID // signed up on it
	} else if err == nil {
		err = s.readAccountPlan(ctx, sess, desired, snap)
	}
	if err == nil {
		err = readSubscriptions(ctx, sess, desired, snap)
	}
	if err == nil {
		err = s.readFields(ctx, d, sess, desired, snap)
	}
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: the account's attributes and approval, then each user: created,
// updated, given its role, activated; users no longer in the spec are deleted.
func (s *Syncer) Update(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired, snap *Snapshot) (*Snapshot, error) {
	c, id := sess.Remote, snap.Account.ID
	if fields := fieldsToWrite(d, snap.Account); !accountAttrsMatch(snap.Account, d) || fields != nil {
		updated, err := c.UpdateAccount(ctx, id, tsclient.AccountParams{OrgName: d.Spec.OrgName,
			MonthlyBillingEnabled: d.Spec.MonthlyBillingEnabled, MonthlyChargingEnabled: d.Spec.MonthlyChargingEnabled, Fields: fields})
		if err != nil {
			return nil, fmt.Errorf("cannot update account %q: %w", sess.SystemName, err)
		}
		snap.Account = *updated
	}
	if snap.Account.State != accountApproved {
		approved, err := kit.Deref(c.ApproveAccount(ctx, id))
		if err != nil {
			return nil, fmt.Errorf("cannot approve account %q: %w", sess.SystemName, err)
		}
		snap.Account = approved
	}
	if desired.AccountPlanID != 0 && snap.AccountPlanID != desired.AccountPlanID {
		if _, err := c.ChangeAccountPlan(ctx, id, desired.AccountPlanID); err != nil {
			return nil, fmt.Errorf("cannot move account %q to account plan %d: %w", sess.SystemName, desired.AccountPlanID, err)
		}
		snap.AccountPlanID = desired.AccountPlanID
	}
	if !subscriptionsMatch(d, desired, snap) {
		if err := syncSubscriptions(ctx, c, d, desired, snap); err != nil {
			return nil, err
		}
	}
	if err := s.syncUsers(ctx, d, sess, desired, snap); err != nil {
		return nil, err
	}
	recordUsers(d, snap)
	d.Status.CreditCardStored = snap.Account.CreditCardStored
	return snap, nil
}

// Note implements engine.Noter: the Synced message says when monthly charging is on without a credit
// card (status.creditCardStored records whether the account stores one). An account without a card is a
// normal state (accounts billed offline, free plans): apimsync never stores or asks for a card, which
// only the developer portal or a payment gateway's tokens can provide; it only makes the consequence
// visible.
func (s *Syncer) Note(_ *v1alpha1.DeveloperAccount, snap *Snapshot) string {
	if a := snap.Account; a.MonthlyBillingEnabled && a.MonthlyChargingEnabled && !a.CreditCardStored {
		return "monthly billing and charging are on but the account stores no credit card: 3scale cannot charge its invoices until one is added in the developer portal (or set monthlyChargingEnabled: false)"
	}
	return ""
}

// syncUsers makes the account's users match the spec. Porta refuses to demote or delete an account's
// last admin, so users are created, updated, activated and promoted first, demoted next, and deleted last.
func (s *Syncer) syncUsers(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session, desired Desired, snap *Snapshot) error {
	c, id := sess.Remote, snap.Account.ID
	passwords := desired.Passwords
	set := s.knownPasswords(d, sess, desired)          // versions of the passwords 3scale has, by username
	defer func() { d.Status.PasswordVersions = set }() // what was sent, whatever fails later
	want := map[string]bool{}
	for _, promote := range []bool{true, false} {
		for _, u := range d.Spec.Users {
			want[u.Username] = true
			if (userRole(u) == roleAdmin) != promote {
				continue
			}
			r, ok := snap.Users[u.Username]
			version := desired.Versions[u.Username]
			newPassword := version != "" && set[u.Username] != version
			var err error
			switch {
			case !ok:
				var password string
				if password, err = desired.initialPassword(u.Username); err == nil {
					r, err = kit.Deref(c.CreateUser(ctx, id, tsclient.UserParams{Username: u.Username, Email: u.Email, Password: password}))
				}
			case r.Email != u.Email || newPassword:
				params := tsclient.UserParams{Email: u.Email}
				if newPassword { // a changed password Secret (or a user whose password was never set by us)
					params.Password = passwords[u.Username]
				}
				r, err = kit.Deref(c.UpdateUser(ctx, id, r.ID, params))
			}
			if err == nil && version != "" {
				set[u.Username] = version
				if !sess.DryRun { // a look sent no password
					s.Sent.Remember(userKey(sess, id, u.Username), passwords[u.Username])
				}
			}
			switch {
			case err != nil || r.State == userActive || (r.State == userSuspended && u.Suspended):
			case r.State == userSuspended: // suspended behind our back: porta refuses to activate it
				r, err = kit.Deref(c.UnsuspendUser(ctx, id, r.ID))
			default: // a new user is activated even when the spec suspends it: porta suspends only active users
				r, err = kit.Deref(c.ActivateUser(ctx, id, r.ID))
			}
			if err == nil && r.Role != userRole(u) {
				r, err = kit.Deref(c.SetUserRole(ctx, id, r.ID, userRole(u)))
			}
			if err == nil && u.Suspended && r.State != userSuspended {
				r, err = kit.Deref(c.SuspendUser(ctx, id, r.ID))
			}
			if err != nil {
				return fmt.Errorf("cannot sync user %q of account %q: %w", u.Username, sess.SystemName, err)
			}
			snap.Users[u.Username] = r
		}
	}
	for _, name := range kit.SortedKeys(snap.Users) {
		if want[name] {
			continue
		}
		if err := kit.IgnoreNotFound(c.DeleteUser(ctx, id, snap.Users[name].ID)); err != nil {
			return fmt.Errorf("cannot delete user %q of account %q: %w", name, sess.SystemName, err)
		}
		delete(snap.Users, name)
	}
	return nil
}

// Delete implements engine.TypedSyncer: deleting the account deletes its users and applications in 3scale.
func (s *Syncer) Delete(ctx context.Context, d *v1alpha1.DeveloperAccount, sess *engine.Session) error {
	return kit.DeleteHeld(d, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteAccount(ctx, id) })
}

// SecretRefs lists the Secrets a DeveloperAccount reads: its provider account, its users' passwords.
func SecretRefs(d *v1alpha1.DeveloperAccount) []string {
	out := []string{d.Spec.ProviderAccountSecretName()}
	for _, u := range d.Spec.Users {
		if u.PasswordRef != nil {
			out = append(out, u.PasswordRef.Name)
		}
	}
	return out
}
