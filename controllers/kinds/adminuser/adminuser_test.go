package adminuser_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

const password = "a-long-enough-password-1"

// member is an AdminUser of the namespace's tenant: a member with a password, who sees the partners and
// plans sections of the products named.
func member(ns, name string, products ...string) *v1alpha1.AdminUser {
	return &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AdminUserSpec{Username: name, Email: name + "@acme.example", Role: v1alpha1.AdminRoleMember,
			PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: name + "-password", Key: "password"},
			Permissions: &v1alpha1.AdminPermissions{Sections: []v1alpha1.AdminSection{"partners", "plans"}, ProductRefs: &products}}}
}

func passwordSecret(ns, name, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"password": value}}
}

// remoteUser is the tenant's user of a username, read as a person would.
func remoteUser(t *testing.T, ns, username string) *tsclient.User {
	t.Helper()
	users, err := harness.ByHand(t, ns).ListAdminUsers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range users {
		if users[i].Username == username {
			return &users[i]
		}
	}
	return nil
}

// TestAdminUser (issue 45): an AdminUser makes the tenant's user with its password, activates it and
// sets its permissions on the products it names (by their ids on the tenant); a suspension made by hand
// is undone at the drift check; a changed password Secret is written once; deleted, the user goes.
func TestAdminUser(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns)
	u := member(ns, "lead", product.Name)
	harness.Create(t, harness.DefaultSecret(ns), backend, product, passwordSecret(ns, "lead-password", password), u)
	harness.WaitState(t, v1alpha1.ConditionSynced, product, u)

	r := remoteUser(t, ns, "lead")
	if r == nil || r.ID != u.Status.UserID || r.Role != "member" || r.State != "active" || r.Email != "lead@acme.example" {
		t.Fatalf("the remote user %+v, want the spec's active member (recorded id %d)", r, u.Status.UserID)
	}
	p, err := harness.ByHand(t, ns).GetAdminUserPermissions(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.AllowedSections, []string{"partners", "plans"}) || !slices.Equal(p.AllowedServiceIDs, []int64{product.Status.ProductID}) {
		t.Errorf("permissions %+v, want partners and plans of product %d", p, product.Status.ProductID)
	}

	// Suspended by hand: active again after a drift check.
	if _, err := harness.ByHand(t, ns).ChangeAdminUser(context.Background(), r.ID, tsclient.UserSuspend); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, u, "1")
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if r := remoteUser(t, ns, "lead"); r.State != "active" {
			return "state " + r.State
		}
		return ""
	})

	// A new password: one update of the user, with it.
	updates := harness.RequestsTo(ns, "PUT", "/admin/api/users/{id}.json")
	secret := passwordSecret(ns, "lead-password", "")
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"password": password + "-rotated"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if n := harness.RequestsTo(ns, "PUT", "/admin/api/users/{id}.json"); n != updates+1 {
			return fmt.Sprintf("%d user updates since the rotation, want 1", n-updates)
		}
		return ""
	})
	if u.Status.PasswordWritten == "" || strings.Contains(fmt.Sprint(u.Status), password) {
		t.Errorf("status %+v: want a digest of the password, never the password", u.Status)
	}

	// Permissions on every product: allowed_service_ids null.
	harness.EditAndWait(t, u, func() { u.Spec.Permissions.ProductRefs = nil })
	if p, _ := harness.ByHand(t, ns).GetAdminUserPermissions(context.Background(), r.ID); p.AllowedServiceIDs != nil {
		t.Errorf("allowed services %v, want every product (null)", p.AllowedServiceIDs)
	}

	harness.DeleteObjects(t, u)
	harness.WaitGone(t, u)
	if r := remoteUser(t, ns, "lead"); r != nil {
		t.Errorf("user %+v still in 3scale after its AdminUser was deleted", r)
	}
}

// TestAdminUserNeverLocksOut (issue 45): a spec that would suspend, demote or delete the user apimsync's
// token belongs to is Invalid and writes nothing; so is one that takes an active admin away while the
// provider-account Secret does not say whose the token is, or that would leave the tenant no active
// admin. Retain lets the token's user go without touching it.
func TestAdminUserNeverLocksOut(t *testing.T) {
	ns := harness.NewNamespace(t)
	secret := harness.DefaultSecret(ns)
	first := remoteUser(t, ns, "admin")
	if first == nil {
		t.Fatal("the simulator's tenant has no first admin")
	}
	boss := &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin"},
		Spec: v1alpha1.AdminUserSpec{Username: "admin", Email: first.Email, Role: v1alpha1.AdminRoleAdmin, Adoption: v1alpha1.AdoptionIfExists}}
	harness.Create(t, secret, boss)
	harness.WaitState(t, v1alpha1.ConditionSynced, boss)
	harness.WantEvent(t, boss, "Adopted")
	writes := harness.WritesTo(ns)

	// The Secret does not say whose the token is: no active admin is taken away.
	harness.Update(t, boss, func() { boss.Spec.Role = v1alpha1.AdminRoleMember })
	harness.WaitReason(t, boss, v1alpha1.ConditionInvalid, v1alpha1.ReasonLockOut)
	if _, _, msg := harness.SyncState(t, boss); !strings.Contains(msg, "cannot tell whether its token belongs to") || !strings.Contains(msg, "tokenUser") {
		t.Errorf("message %q, want why and the key that lifts it", msg)
	}

	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes demoting an admin while the token's user is unknown, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}

	// A member promoted to admin by hand, behind a cached snapshot that still says member: suspending
	// it is decided from the tenant's users now, and refused while the Secret does not say whose the
	// token is.
	ops := &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: v1alpha1.AdminUserSpec{Username: "ops", Email: "ops@acme.example"}}
	harness.Create(t, ops)
	harness.WaitState(t, v1alpha1.ConditionSynced, ops)
	if _, err := harness.ByHand(t, ns).ChangeAdminUser(context.Background(), ops.Status.UserID, "admin"); err != nil {
		t.Fatal(err)
	}
	writes = harness.WritesTo(ns)
	harness.Update(t, ops, func() { ops.Spec.State = v1alpha1.AdminUserSuspended })
	harness.WaitReason(t, ops, v1alpha1.ConditionInvalid, v1alpha1.ReasonLockOut)
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes suspending an admin promoted by hand, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}
	harness.Update(t, ops, func() {
		ops.Spec.State, ops.Spec.DeletionPolicy = v1alpha1.AdminUserActive, v1alpha1.DeletionPolicyRetain
	})
	harness.DeleteObjects(t, ops)
	harness.WaitGone(t, ops)
	if err := harness.ByHand(t, ns).DeleteAdminUser(context.Background(), ops.Status.UserID); err != nil {
		t.Fatal(err)
	}
	writes = harness.WritesTo(ns)

	// The Secret says the token is admin's: suspending admin is refused before anything is read.
	harness.Update(t, secret, func() { secret.StringData = map[string]string{"tokenUser": "admin"} })
	harness.Update(t, boss, func() { boss.Spec.Role, boss.Spec.State = v1alpha1.AdminRoleAdmin, v1alpha1.AdminUserSuspended })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, _, msg := harness.SyncState(t, boss); !strings.Contains(msg, "is the one apimsync's token belongs to") {
			return "message " + msg
		}
		return ""
	})

	// Renaming it would leave the Secret's tokenUser naming no one: refused until the Secret says so.
	harness.Update(t, boss, func() { boss.Spec.State, boss.Spec.Username = v1alpha1.AdminUserActive, "root" })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, _, msg := harness.SyncState(t, boss); !strings.Contains(msg, `set the Secret's tokenUser to "root" first`) {
			return "message " + msg
		}
		return ""
	})
	harness.Update(t, boss, func() { boss.Spec.Username = "admin" })

	// Deleting it under Delete is refused too; Retain lets it go, untouched.
	harness.DeleteObjects(t, boss)
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if _, reason, msg := harness.SyncState(t, boss); reason != v1alpha1.ReasonLockOut || !strings.Contains(msg, "deleting it would lock apimsync out") {
			return reason + ": " + msg
		}
		return ""
	})
	harness.Update(t, boss, func() { boss.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain })
	harness.WaitGone(t, boss)
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes while locking out was refused, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}
	if r := remoteUser(t, ns, "admin"); r == nil || r.State != "active" || r.Role != "admin" {
		t.Errorf("the token's user %+v, want it an active admin still", r)
	}

	// The last active admin: with the token's user suspended by hand (porta keeps its token working), a
	// second admin is the last active one and is never suspended.
	second := &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"},
		Spec: v1alpha1.AdminUserSpec{Username: "second", Email: "second@acme.example", Role: v1alpha1.AdminRoleAdmin}}
	harness.Create(t, second)
	harness.WaitState(t, v1alpha1.ConditionSynced, second)
	if _, err := harness.ByHand(t, ns).ChangeAdminUser(context.Background(), first.ID, tsclient.UserSuspend); err != nil {
		t.Fatal(err)
	}
	writes = harness.WritesTo(ns)
	harness.Update(t, second, func() { second.Spec.State = v1alpha1.AdminUserSuspended })
	harness.WaitReason(t, second, v1alpha1.ConditionInvalid, v1alpha1.ReasonLockOut)
	if _, _, msg := harness.SyncState(t, second); !strings.Contains(msg, "last active admin") {
		t.Errorf("message %q, want it to say second is the last active admin", msg)
	}
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}
}

// TestAdminUserBadInput (issue 45): a permission naming a product of another tenant is Invalid and writes
// nothing (porta would drop its id without a word); a user without email, an admin with permissions and a
// username porta refuses are refused at apply time; a user of that username apimsync did not make is not
// taken without adoption IfExists.
func TestAdminUserBadInput(t *testing.T) {
	ns, other := harness.NewNamespace(t), harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(other)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns)
	backend.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "other-tenant"}
	product.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "other-tenant"}
	harness.Create(t, harness.DefaultSecret(ns), harness.ProviderSecret(ns, "other-tenant", adminURL, token), backend, product)
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	writes := harness.WritesTo(ns)
	u := member(ns, "stranger", product.Name)
	harness.Create(t, passwordSecret(ns, "stranger-password", password), u)
	harness.WaitReason(t, u, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, u); !strings.Contains(msg, "not of this user's tenant") {
		t.Errorf("message %q, want it to say the product is another tenant's", msg)
	}
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}

	for what, spec := range map[string]v1alpha1.AdminUserSpec{
		"email must be an email address": {Username: "no-email", Email: "nobody"},
		"permissions are a member's":     {Username: "boss", Email: "boss@acme.example", Role: v1alpha1.AdminRoleAdmin, Permissions: &v1alpha1.AdminPermissions{}},
		"spec.username":                  {Username: "-bad name", Email: "bad@acme.example"},
	} {
		err := harness.K8s.Create(context.Background(), &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"}, Spec: spec})
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%+v: error %v, want a refusal saying %q", spec, err, what)
		}
	}

	// The tenant's first admin exists: without adoption IfExists it is not taken.
	taken := &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin"},
		Spec: v1alpha1.AdminUserSpec{Username: "admin", Email: "admin@acme.example", Role: v1alpha1.AdminRoleAdmin}}
	harness.Create(t, taken)
	harness.WaitState(t, v1alpha1.ConditionInvalid, taken)
	if n := harness.WritesTo(ns); n != writes {
		t.Errorf("%d writes, want 0: %v", n-writes, harness.LastWrites(ns, n-writes))
	}
}

// TestAdminUserLostAnswers (issue 45): the create of a user and its activation are applied but their
// answers lost; each is settled from 3scale's state — one user, recorded, active, no duplicate, and no
// refusal of an activation replayed on a user already active.
func TestAdminUserLostAnswers(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "POST", Template: "/admin/api/users.json", Count: 1, Lose: true})
	harness.Sim.ScriptFault(simulator.ScriptedFault{Tenant: ns, Method: "PUT", Template: "/admin/api/users/{id}/activate.json", Count: 1, Lose: true})
	u := &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lead"},
		Spec: v1alpha1.AdminUserSpec{Username: "lead", Email: "lead@acme.example"}}
	harness.Create(t, harness.DefaultSecret(ns), u)
	harness.WaitState(t, v1alpha1.ConditionSynced, u)
	if n := harness.LostAnswers(ns); n != 2 {
		t.Fatalf("%d answers lost, want 2: the test did not exercise recovery", n)
	}
	var leads []map[string]any
	for _, o := range harness.Sim.Objects(ns, simulator.KindAdminUsers) {
		if o["username"] == "lead" {
			leads = append(leads, o)
		}
	}
	if len(leads) != 1 || fmt.Sprint(leads[0]["id"]) != fmt.Sprint(u.Status.UserID) || leads[0]["state"] != "active" {
		t.Errorf("users named lead %v, want one, active, recorded as %d", leads, u.Status.UserID)
	}
}
