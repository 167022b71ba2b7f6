package adminuser

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Syncer syncs AdminUsers to the tenant's own users.
type Syncer struct {
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Lists shares the tenant's users among the AdminUsers looking for theirs in one burst.
	Lists *kit.BurstLists
}

// Desired is what Resolve learns beyond the spec: the password to write and its keyed digest, and the
// ids of the products of the permissions (AllProducts: every product).
type Desired struct {
	Password       string `json:"-"`
	PasswordDigest string `json:",omitempty"`
	Permissions    bool   `json:",omitempty"`
	AllProducts    bool   `json:",omitempty"`
	ProductIDs     []int64
}

// Snapshot is the remote state of one user, with its permissions when the spec manages them.
type Snapshot struct {
	tsclient.User
	Permissions *tsclient.Permissions
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	if s.Permissions != nil {
		p := *s.Permissions
		p.AllowedSections, p.AllowedServiceIDs = slices.Clone(p.AllowedSections), slices.Clone(p.AllowedServiceIDs)
		c.Permissions = &p
	}
	return &c
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.AdminUser, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.CacheChecker[Desired, *Snapshot]                     = (*Syncer)(nil)
)

// Serves implements engine.CacheChecker: a snapshot read without the permissions does not serve a spec
// that manages them.
func (s *Syncer) Serves(want Desired, snap *Snapshot) bool {
	return !want.Permissions || snap.Permissions != nil || snap.Role != "member"
}

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, u *v1alpha1.AdminUser) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, u.Namespace, kit.SecretForSession(u, u.Spec.ProviderAccountSecretName()))
}

// SystemName is what identifies the user in its tenant: its username.
func (s *Syncer) SystemName(u *v1alpha1.AdminUser) string { return u.Spec.Username }

// productOfPermissions is a product named in spec.permissions.productRefs.
var productOfPermissions = kit.Dependency{Kind: "Product", Field: "spec.permissions.productRefs", NotFound: v1alpha1.ReasonProductNotFound,
	Deleting: v1alpha1.ReasonProductDeleting, Invalid: v1alpha1.ReasonProductInvalid, NotSynced: v1alpha1.ReasonProductNotSynced,
	WhileDeleting: kit.WaitingFor}

// Resolve implements engine.TypedSyncer: what would lock the tenant out is Invalid before anything is
// read; the password comes from its Secret, the products' ids from the Products named (of the user's
// tenant only).
func (s *Syncer) Resolve(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	if err := lockOut(u, sess, role(u) != v1alpha1.AdminRoleAdmin || state(u) == v1alpha1.AdminUserSuspended); err != nil {
		return r, err
	}
	if ref := u.Spec.PasswordRef; ref != nil {
		pw, err := kit.SecretValue(ctx, s.Reader, u.Namespace, ref, "spec.passwordRef")
		if err != nil {
			return r, err
		}
		if len(pw) < 15 {
			return r, engine.Invalid(v1alpha1.ReasonInvalidSpec, "the password in Secret %q (key %q) has %d characters: 3scale asks for 15 at least", ref.Name, ref.Key, len(pw))
		}
		r.Desired.Password, r.Desired.PasswordDigest = pw, sess.HashOf(sess.Tenant, u.Spec.Username, pw)
	}
	if p := u.Spec.Permissions; p != nil {
		r.Desired.Permissions = true
		if p.ProductRefs == nil {
			r.Desired.AllProducts = true
		}
		for _, name := range ptrSlice(p.ProductRefs) {
			id, err := s.productID(ctx, u, sess, name)
			if err != nil {
				return r, err
			}
			r.Desired.ProductIDs = append(r.Desired.ProductIDs, id)
		}
		slices.Sort(r.Desired.ProductIDs)
	}
	spec := u.Spec
	spec.PasswordRef, spec.ProviderAccountRef, spec.DeletionPolicy, spec.Adoption = nil, nil, "", ""
	if spec.Permissions != nil {
		spec.Permissions = &v1alpha1.AdminPermissions{Sections: slices.Sorted(slices.Values(spec.Permissions.Sections))}
	}
	r.Hash = sess.HashOf(sess.Tenant, spec, r.Desired)
	return r, nil
}

func ptrSlice(p *[]string) []string {
	if p == nil {
		return nil
	}
	return *p
}

// productID is the id of a Product the permissions name: one of another tenant is Invalid (porta would
// drop its id without a word), one moving to the user's tenant is waited for.
func (s *Syncer) productID(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, name string) (int64, error) {
	var product v1alpha1.Product
	if err := kit.CheckDependency(ctx, s.Reader, u.Namespace, name, &product, productOfPermissions); err != nil {
		return 0, err
	}
	if host := product.Status.TenantHost; host != sess.Tenant && product.Spec.ProviderAccountSecretName() != sess.SecretName {
		return 0, engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.permissions.productRefs names Product %q of tenant %s (provider-account Secret %q), not of this user's tenant %s: "+
			"a user's permissions name products of its own tenant", name, host, product.Spec.ProviderAccountSecretName(), sess.Tenant)
	}
	if err := kit.OnTenant(&product, sess.Tenant, productOfPermissions); err != nil {
		return 0, err
	}
	return product.Status.ProductID, nil
}

func role(u *v1alpha1.AdminUser) v1alpha1.AdminRole {
	if u.Spec.Role == "" {
		return v1alpha1.AdminRoleMember
	}
	return u.Spec.Role
}

func state(u *v1alpha1.AdminUser) v1alpha1.AdminUserState {
	if u.Spec.State == "" {
		return v1alpha1.AdminUserActive
	}
	return u.Spec.State
}

// lockOut refuses, when takesAway (the spec suspends, demotes or deletes the user), to act on the user
// apimsync's token belongs to: apimsync would lock itself out of the tenant.
func lockOut(u *v1alpha1.AdminUser, sess *engine.Session, takesAway bool) error {
	if takesAway && sess.TokenUser != "" && sess.TokenUser == u.Spec.Username {
		return lockedOut(u.Spec.Username, sess)
	}
	return nil
}

// takesAway refuses, before any write, to suspend, demote or delete (what) the user whose id is id, as
// 3scale holds it now — never as a cached snapshot says: the user apimsync's token belongs to (by its
// current username too, which a rename may have left behind the Secret's tokenUser), any active admin
// while the Secret does not say whose the token is, and the tenant's last active admin. It returns the
// user as listed now (nil when it is gone).
func takesAway(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, id int64, what string) (*tsclient.User, error) {
	users, err := sess.Remote.ListAdminUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the tenant's users before it %s user %q: %w", what, u.Spec.Username, err)
	}
	i := slices.IndexFunc(users, func(o tsclient.User) bool { return o.ID == id })
	if i < 0 {
		return nil, nil
	}
	remote := users[i]
	if sess.TokenUser != "" && (remote.Username == sess.TokenUser || u.Spec.Username == sess.TokenUser) {
		return nil, lockedOut(remote.Username, sess)
	}
	if remote.Role != "admin" || remote.State != "active" {
		return &remote, nil
	}
	if sess.TokenUser == "" {
		return nil, engine.Invalid(v1alpha1.ReasonLockOut, "apimsync cannot tell whether its token belongs to admin %q (3scale's API does not say whose a token is): "+
			"it %s an admin only when the provider-account Secret %q names the token's user under key %s", remote.Username, what, sess.SecretName, kit.SecretKeyTokenUser)
	}
	if !slices.ContainsFunc(users, func(o tsclient.User) bool { return o.ID != remote.ID && o.Role == "admin" && o.State == "active" }) {
		return nil, engine.Invalid(v1alpha1.ReasonLockOut, "%q is the tenant's last active admin: apimsync never %s it, which would leave no one to administer the tenant; make another admin first", remote.Username, what)
	}
	return &remote, nil
}

// lockedOut is the refusal to take away the user apimsync's token belongs to.
func lockedOut(username string, sess *engine.Session) error {
	return engine.Invalid(v1alpha1.ReasonLockOut, "user %q is the one apimsync's token belongs to (provider-account Secret %q, key %s): "+
		"suspending, demoting or deleting it would lock apimsync out of the tenant; keep it an active admin (or use deletionPolicy Retain)",
		username, sess.SecretName, kit.SecretKeyTokenUser)
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.User] {
	f := kit.TenantFinder("admin user", sess, s.Lists,
		func(id int64) (*tsclient.User, error) { return sess.Remote.GetAdminUser(ctx, id) },
		func() ([]tsclient.User, error) { return sess.Remote.ListAdminUsers(ctx) },
		func(r tsclient.User) (int64, string) { return r.ID, r.Username })
	f.UniqueField = "username"
	return f
}

// Read implements engine.TypedSyncer: the user by its recorded id, or, before it has one, the tenant's
// user of its username (taken only on purpose: adoption IfExists); a member's permissions when the spec
// manages them.
func (s *Syncer) Read(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(u, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	snap := &Snapshot{User: *remote}
	if err := s.readPermissions(ctx, u, sess, snap); err != nil {
		return nil, false, err
	}
	u.Status.State = remote.State
	return snap, true, nil
}

// readPermissions reads a member's permissions when the spec manages them.
func (s *Syncer) readPermissions(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, snap *Snapshot) error {
	snap.Permissions = nil
	if u.Spec.Permissions == nil || snap.Role != "member" {
		return nil
	}
	p, err := sess.Remote.GetAdminUserPermissions(ctx, snap.ID)
	if err != nil {
		return fmt.Errorf("cannot read the permissions of user %q: %w", snap.Username, err)
	}
	snap.Permissions = p
	return nil
}

// wantState is the remote state the spec asks for.
func wantState(u *v1alpha1.AdminUser) string {
	if state(u) == v1alpha1.AdminUserSuspended {
		return "suspended"
	}
	return "active"
}

// permissionsMatch tells whether a member's permissions are the spec's.
func permissionsMatch(u *v1alpha1.AdminUser, d Desired, p *tsclient.Permissions) bool {
	if u.Spec.Permissions == nil || role(u) != v1alpha1.AdminRoleMember {
		return true
	}
	if p == nil {
		return false
	}
	sections := make([]string, 0, len(u.Spec.Permissions.Sections))
	for _, s := range u.Spec.Permissions.Sections {
		sections = append(sections, string(s))
	}
	slices.Sort(sections)
	have := slices.Sorted(slices.Values(p.AllowedSections))
	ids := slices.Sorted(slices.Values(p.AllowedServiceIDs))
	if d.AllProducts != (p.AllowedServiceIDs == nil) {
		return false
	}
	return slices.Equal(sections, have) && (d.AllProducts || slices.Equal(ids, d.ProductIDs))
}

// detailsDiffer tells whether the username, email or password must be written.
func detailsDiffer(u *v1alpha1.AdminUser, d Desired, snap *Snapshot) bool {
	return snap.Username != u.Spec.Username || snap.Email != u.Spec.Email || (d.PasswordDigest != "" && u.Status.PasswordWritten != d.PasswordDigest)
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, u *v1alpha1.AdminUser, _ *engine.Session, d Desired, snap *Snapshot) (bool, error) {
	return !detailsDiffer(u, d, snap) && snap.Role == string(role(u)) && snap.State == wantState(u) && permissionsMatch(u, d, snap.Permissions), nil
}

// Create implements engine.TypedSyncer: makes the user (pending, a member) with its password, or takes
// the tenant's user of that username on purpose, then brings its role, state and permissions in line.
func (s *Syncer) Create(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, d Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.User, error) {
		return sess.Remote.CreateAdminUser(ctx, tsclient.UserParams{Username: u.Spec.Username, Email: u.Spec.Email, Password: d.Password})
	}, u, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	u.Status.UserID = created.ID
	if fresh {
		u.Status.PasswordWritten = d.PasswordDigest
	}
	snap := &Snapshot{User: *created}
	if fresh {
		// A new member has porta's defaults: no section, every product (no "services" permission row:
		// member_permission_service_ids is nil, app/models/user/permissions.rb:76-82). Nothing to read.
		snap.Permissions = &tsclient.Permissions{UserID: created.ID, Role: created.Role, AllowedSections: []string{}}
	} else if err := s.readPermissions(ctx, u, sess, snap); err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	if same, _ := s.Compare(ctx, u, sess, d, snap); !same {
		snap, err = s.Update(ctx, u, sess, d, snap)
	}
	return kit.Made(snap, fresh, err)
}

// Update implements engine.TypedSyncer: the details (one call, the password with them when its Secret
// changed), the role, the state, then the permissions — each only when it differs, and never what would
// lock the tenant out.
func (s *Syncer) Update(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, d Desired, snap *Snapshot) (*Snapshot, error) {
	c := sess.Remote
	// What would take a user away (a demotion, a suspension) is decided first, from the tenant's users
	// as 3scale lists them now, not from the snapshot, which may be cached: a refusal writes nothing.
	demotes := snap.Role != string(role(u)) && role(u) == v1alpha1.AdminRoleMember
	if suspends := wantState(u) == "suspended" && snap.State != "suspended"; demotes || suspends {
		what := "demotes"
		if suspends {
			what = "suspends"
		}
		now, err := takesAway(ctx, u, sess, snap.ID, what)
		if err != nil {
			return nil, err
		}
		if now != nil {
			snap.User = *now
		}
	}
	// Renaming the token's user would leave the Secret's tokenUser naming no one: rename it there first.
	if sess.TokenUser != "" && snap.Username == sess.TokenUser && u.Spec.Username != sess.TokenUser {
		return nil, engine.Invalid(v1alpha1.ReasonLockOut, "user %q is the one apimsync's token belongs to (provider-account Secret %q, key %s): "+
			"set the Secret's %s to %q first, then rename it", snap.Username, sess.SecretName, kit.SecretKeyTokenUser, kit.SecretKeyTokenUser, u.Spec.Username)
	}
	actions, err := stateActions(snap.State, wantState(u))
	if err != nil {
		return nil, err
	}
	if detailsDiffer(u, d, snap) {
		p := tsclient.UserParams{Username: u.Spec.Username, Email: u.Spec.Email}
		if d.PasswordDigest != u.Status.PasswordWritten {
			p.Password = d.Password
		}
		updated, err := c.UpdateAdminUser(ctx, snap.ID, p)
		if err != nil {
			return nil, fmt.Errorf("cannot update user %q: %w", sess.SystemName, err)
		}
		snap.User, u.Status.PasswordWritten = *updated, d.PasswordDigest
	}
	if want := string(role(u)); snap.Role != want {
		if err := s.change(ctx, sess, snap, want); err != nil {
			return nil, err
		}
	}
	for _, action := range actions {
		if err := s.change(ctx, sess, snap, action); err != nil {
			return nil, err
		}
	}
	u.Status.State = snap.State
	if !permissionsMatch(u, d, snap.Permissions) {
		if err := s.setPermissions(ctx, u, sess, d, snap); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// setPermissions writes a member's permissions (one call). porta drops a section it does not offer
// without a word (finance on self-managed 3scale, AdminSection.permissions): that is Invalid rather than
// written again at every check.
func (s *Syncer) setPermissions(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session, d Desired, snap *Snapshot) error {
	var sections []string
	for _, s := range u.Spec.Permissions.Sections {
		sections = append(sections, string(s))
	}
	p, err := sess.Remote.SetAdminUserPermissions(ctx, snap.ID, sections, d.AllProducts, d.ProductIDs)
	if err != nil {
		return fmt.Errorf("cannot set the permissions of user %q: %w", sess.SystemName, err)
	}
	snap.Permissions = p
	if missing := slices.DeleteFunc(sections, func(s string) bool { return slices.Contains(p.AllowedSections, s) }); len(missing) > 0 {
		return engine.Invalid(v1alpha1.ReasonInvalidSpec, "3scale does not offer section(s) %v to members here (self-managed 3scale has no finance section): remove them from spec.permissions.sections", missing)
	}
	return nil
}

// change makes one role or state change of the user, and keeps its answer.
func (s *Syncer) change(ctx context.Context, sess *engine.Session, snap *Snapshot, action string) error {
	changed, err := sess.Remote.ChangeAdminUser(ctx, snap.ID, action)
	if err != nil {
		return fmt.Errorf("cannot %s user %q: %w", action, sess.SystemName, err)
	}
	snap.User = *changed
	return nil
}

// stateActions are the state changes from have to want (porta's User::States: a pending user is
// activated before it can be suspended). A user in another state (email_unverified) is left alone:
// activate would be refused, and apimsync would try again at every check.
func stateActions(have, want string) ([]string, error) {
	switch {
	case have == want:
		return nil, nil
	case have == "pending" && want == "suspended":
		return []string{tsclient.UserActivate, tsclient.UserSuspend}, nil
	case have == "pending":
		return []string{tsclient.UserActivate}, nil
	case have == "active":
		return []string{tsclient.UserSuspend}, nil
	case have == "suspended":
		return []string{tsclient.UserUnsuspend}, nil
	}
	return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "the user is %s in 3scale: apimsync changes only pending, active and suspended users; "+
		"have the user confirm their email, or change the state in the admin portal", have)
}

// Delete implements engine.TypedSyncer: never the token's user nor the last active admin.
func (s *Syncer) Delete(ctx context.Context, u *v1alpha1.AdminUser, sess *engine.Session) error {
	if err := lockOut(u, sess, true); err != nil {
		return err
	}
	f := s.finder(ctx, sess)
	return kit.DeleteHeld(u, sess, f, func(id int64) error {
		remote, err := takesAway(ctx, u, sess, id, "deletes")
		if err != nil || remote == nil {
			return err // gone already: nothing to delete
		}
		return sess.Remote.DeleteAdminUser(ctx, id)
	})
}

// SecretRefs lists the Secrets an AdminUser reads: its provider account and its password.
func SecretRefs(u *v1alpha1.AdminUser) []string {
	refs := []string{u.Spec.ProviderAccountSecretName()}
	if u.Spec.PasswordRef != nil {
		refs = append(refs, u.Spec.PasswordRef.Name)
	}
	return refs
}

// ProductRefs are the Products a user's permissions name.
func ProductRefs(o client.Object) []string {
	if u, ok := o.(*v1alpha1.AdminUser); ok && u.Spec.Permissions != nil {
		return ptrSlice(u.Spec.Permissions.ProductRefs)
	}
	return nil
}
