package developeraccount_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestChangedPasswordSecretSetsThePassword: a user's password comes from a Secret key; changing the
// Secret sets the new password in 3scale with one call, the status keeps only the Secret's version (no
// digest anyone could test guesses against), and a drift check afterwards writes nothing.
func TestChangedPasswordSecretSetsThePassword(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	alice, bob := pw.StringData["alice"], pw.StringData["bob"] // StringData is write-only: gone after the create
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	for _, u := range []struct{ name, password string }{{"acme-alice", alice}, {"acme-bob", bob}} {
		if got, ok := harness.Sim.PasswordOf(ns, u.name); !ok || got != u.password {
			t.Errorf("%s's password in 3scale: %q (exists %v), want the Secret's", u.name, got, ok)
		}
	}
	mark := len(harness.Sim.Writes(ns))
	rotated := "rotated-alice-password-1234"
	harness.Update(t, pw, func() { pw.StringData = map[string]string{"alice": rotated, "bob": bob} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got, _ := harness.Sim.PasswordOf(ns, "acme-alice"); got != rotated {
			return fmt.Sprintf("alice's password in 3scale is still %q", got)
		}
		return ""
	})
	// The account was Synced before the change, so wait for the status to name the Secret's new
	// version: the password reaches 3scale before the status is written.
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(pw), pw); err != nil {
		t.Fatal(err)
	}
	version := string(pw.UID) + "/" + pw.ResourceVersion
	want := map[string]string{"acme-alice": version, "acme-bob": version}
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(acc), acc); err != nil {
			return err.Error()
		}
		if !maps.Equal(acc.Status.PasswordVersions, want) {
			return fmt.Sprintf("password versions %v, want the Secret's version %v for each user with a password", acc.Status.PasswordVersions, want)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	var writes []string
	for _, w := range harness.Sim.Writes(ns)[mark:] {
		writes = append(writes, fmt.Sprintf("%s %s %d", w.Method, w.Endpoint, w.Code))
	}
	if want := []string{"PUT /admin/api/accounts/{account_id}/users/{id}.json 200"}; !slices.Equal(writes, want) {
		t.Errorf("writes after the password change: %v, want %v (alice's only)", writes, want)
	}
	if got, _ := harness.Sim.PasswordOf(ns, "acme-bob"); got != bob {
		t.Errorf("bob's password changed to %q", got)
	}
	if raw, err := json.Marshal(acc.Status); err != nil || strings.Contains(string(raw), "igest") {
		t.Errorf("the status holds a digest: %s (%v)", raw, err)
	}
	status := fmt.Sprint(acc.Status) + strings.Join(harness.EventsOf(t, acc), "\n")
	for _, secret := range []string{rotated, alice, bob} {
		if strings.Contains(status, secret) {
			t.Errorf("a password is in the status or the events")
		}
	}
	// A new provider token (the same tenant) re-sends no password: the digests are keyed with the
	// password Secret's UID, not with the token.
	adminURL, _ := harness.TenantOf(ns)
	rotatedToken := "rotated-" + ns
	harness.Sim.AddTenant(ns, rotatedToken)
	provider := &corev1.Secret{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v1alpha1.DefaultProviderAccountSecret}, provider); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, provider, func() { provider.StringData = map[string]string{"adminURL": adminURL, "token": rotatedToken} })
	before := harness.WritesTo(ns)
	harness.Update(t, acc, func() { acc.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "1"}) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(acc), acc); err != nil {
			return err.Error()
		}
		if acc.Status.SyncNow != "1" {
			return "sync-now not acted on"
		}
		return ""
	})
	if got := harness.WritesTo(ns) - before; got != 0 {
		t.Errorf("a drift check after the password change and a new provider token wrote %d times, want 0", got)
	}
}

// TestAdoptedAccountGetsItsPasswords: an account deleted in 3scale by hand and signed up again by hand
// with the same admin is adopted by its first admin's username; the passwords someone chose there are
// not the Secrets', whatever digests the status still holds from before, so they are set again.
func TestAdoptedAccountGetsItsPasswords(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	alice := pw.StringData["alice"]
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	adminURL, token := harness.TenantOf(ns)
	harness.Send(t, http.MethodDelete, fmt.Sprintf("%s/admin/api/accounts/%d.json", adminURL, acc.Status.AccountID), token)
	byHand := "chosen-by-hand-password-1234"
	harness.Send(t, http.MethodPost, adminURL+"/admin/api/signup.json?org_name=Org+acme&username=acme-alice&email=acme-alice%40example.com&password="+byHand, token)
	if got, _ := harness.Sim.PasswordOf(ns, "acme-alice"); got != byHand {
		t.Fatalf("alice's password after the signup by hand: %q", got)
	}
	harness.Update(t, acc, func() { acc.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "1"}) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got, _ := harness.Sim.PasswordOf(ns, "acme-alice"); got != alice {
			return fmt.Sprintf("alice's password after adoption: %q, want the Secret's", got)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	harness.WantEvent(t, acc, "AdoptedExisting")
}

// TestOnCreatePasswordIsSetOnlyWithTheUser: with passwordPolicy OnCreate (3scale-operator's way), a
// password goes to 3scale with the user's creation only: a changed Secret writes nothing for that user
// (while an Always user beside it gets its new one), an OnCreate user whose password Secret is gone still
// syncs, moving to Always sets the Secret's password once, a new OnCreate user is made with its Secret's,
// and an account adopted from 3scale keeps the password someone chose there for its OnCreate users.
func TestOnCreatePasswordIsSetOnlyWithTheUser(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	alice, bob := pw.StringData["alice"], pw.StringData["bob"]
	acc.Spec.Users[0].PasswordPolicy = v1alpha1.PasswordOnCreate // alice; bob stays Always
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	passwordIs := func(user, want, what string) {
		t.Helper()
		if got, _ := harness.Sim.PasswordOf(ns, user); got != want {
			t.Errorf("%s's password in 3scale differs from %s", user, what)
		}
	}
	passwordIs("acme-alice", alice, "the Secret's at creation")
	passwordIs("acme-bob", bob, "the Secret's")
	syncNow := func(value string) {
		t.Helper()
		harness.SyncNow(t, acc, value)
		harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	}

	// Both passwords rotated: bob's is set (which shows the Secret was read), alice's is not.
	before := harness.WritesTo(ns)
	alice2, bob2 := "rotated-alice-password-1234", "rotated-bob-password-1234"
	harness.Update(t, pw, func() { pw.StringData = map[string]string{"alice": alice2, "bob": bob2} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got, _ := harness.Sim.PasswordOf(ns, "acme-bob"); got != bob2 {
			return "bob's new password is not set yet"
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if n := harness.WritesTo(ns) - before; n != 1 {
		t.Errorf("%d writes after both passwords changed, want 1 (bob's): %v", n, harness.LastWrites(ns, n))
	}
	passwordIs("acme-alice", alice, "the one set at creation")
	if _, ok := acc.Status.PasswordVersions["acme-alice"]; ok {
		t.Errorf("status records a password version for an OnCreate user: %v", acc.Status.PasswordVersions)
	}

	// Alice's key gone from the Secret: nothing to wait for, she exists.
	harness.Update(t, pw, func() { pw.Data = map[string][]byte{"bob": []byte(bob2)}; pw.StringData = nil })
	before = harness.WritesTo(ns)
	syncNow("1")
	if n := harness.WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes after an OnCreate user's password key went, want 0: %v", n, harness.LastWrites(ns, n))
	}

	// Alice moves to Always: her Secret's password is set, once.
	harness.Update(t, pw, func() { pw.StringData = map[string]string{"alice": alice2, "bob": bob2} })
	harness.Update(t, acc, func() { acc.Spec.Users[0].PasswordPolicy = v1alpha1.PasswordAlways })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got, _ := harness.Sim.PasswordOf(ns, "acme-alice"); got != alice2 {
			return "alice's password is not the Secret's yet"
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)

	// Back to OnCreate, and a new OnCreate user: made with its Secret's password; it waits for the key.
	carol := "carol-first-password-1234"
	harness.Update(t, acc, func() {
		acc.Spec.Users[0].PasswordPolicy = v1alpha1.PasswordOnCreate
		acc.Spec.Users = append(acc.Spec.Users, v1alpha1.DeveloperUserSpec{Username: "acme-carol", Email: "acme-carol@example.com", Role: "member",
			PasswordRef: &v1alpha1.LocalSecretKeyRef{Name: pw.Name, Key: "carol"}, PasswordPolicy: v1alpha1.PasswordOnCreate})
	})
	harness.WaitState(t, v1alpha1.ConditionOrphan, acc)
	if _, reason, msg := harness.SyncState(t, acc); reason != v1alpha1.ReasonSecretNotFound || !strings.Contains(msg, `no key "carol"`) {
		t.Errorf("a new OnCreate user without its password: %s %q, want %s naming the key", reason, msg, v1alpha1.ReasonSecretNotFound)
	}
	harness.Update(t, pw, func() { pw.StringData = map[string]string{"alice": alice2, "bob": bob2, "carol": carol} })
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	passwordIs("acme-carol", carol, "the Secret's at creation")

	// The account signed up again by hand, alice with a password of her own, bob and carol gone: adopted,
	// alice keeps hers, bob (Always) and carol (OnCreate, made again) get their Secret's.
	adminURL, token := harness.TenantOf(ns)
	harness.Send(t, http.MethodDelete, fmt.Sprintf("%s/admin/api/accounts/%d.json", adminURL, acc.Status.AccountID), token)
	byHand := "chosen-by-hand-password-1234"
	harness.Send(t, http.MethodPost, adminURL+"/admin/api/signup.json?org_name=Org+acme&username=acme-alice&email=acme-alice%40example.com&password="+byHand, token)
	syncNow("2")
	passwordIs("acme-alice", byHand, "the one chosen in 3scale")
	passwordIs("acme-bob", bob2, "the Secret's")
	passwordIs("acme-carol", carol, "the Secret's")
}

// TestAccountWithoutACreditCardIsSyncedAndSaysSo: an account that stores no credit card is a normal,
// Synced account; when monthly billing and charging are on (porta's defaults), its message says that 3scale
// cannot charge it, and turning charging off clears the note.
func TestAccountWithoutACreditCardIsSyncedAndSaysSo(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, "stores no credit card") {
		t.Errorf("Synced message %q, want a note that no credit card is stored while charging is on", msg)
	}
	if acc.Status.CreditCardStored {
		t.Errorf("status says a credit card is stored")
	}
	off := false
	harness.Update(t, acc, func() { acc.Spec.MonthlyChargingEnabled = &off })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if s, _, msg := harness.SyncState(t, acc); s != v1alpha1.ConditionSynced || strings.Contains(msg, "credit card") {
			return fmt.Sprintf("%s: %q", s, msg)
		}
		return ""
	})
	for _, a := range harness.Sim.Objects(ns, "accounts") {
		if a["monthly_charging_enabled"] != false {
			t.Errorf("account %v: monthly_charging_enabled %v, want false", a["org_name"], a["monthly_charging_enabled"])
		}
	}
}

// TestSuspendedUserIsUnsuspended: a user suspended in 3scale behind apimsync's back is drift; porta
// refuses to activate a suspended user, so the repair unsuspends it.
func TestSuspendedUserIsUnsuspended(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	adminURL, token := harness.TenantOf(ns)
	harness.Send(t, http.MethodPut, fmt.Sprintf("%s/admin/api/accounts/%d/users/%d/suspend.json", adminURL, acc.Status.AccountID, acc.Status.UserIDs["acme-bob"]), token)
	harness.Update(t, acc, func() { acc.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "1"}) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		for _, u := range harness.Sim.Objects(ns, "users") {
			if u["username"] == "acme-bob" && u["state"] != "active" {
				return fmt.Sprintf("bob is %v", u["state"])
			}
		}
		if s, r, msg := harness.SyncState(t, acc); s != v1alpha1.ConditionSynced {
			return fmt.Sprintf("%s %s: %s", s, r, msg)
		}
		return ""
	})
	harness.WantEvent(t, acc, "DriftRepaired")
}

// userStates are the states of a tenant's users in 3scale, by username.
func userStates(ns string) map[string]string {
	out := map[string]string{}
	for _, u := range harness.Sim.Objects(ns, simulator.KindUsers) {
		out[u["username"].(string)] = u["state"].(string)
	}
	return out
}

// TestUserSuspendedBySpec (issue 44): suspended: true suspends a user in one call (a new one is made
// active first: porta suspends only active users), a person unsuspending them is undone by a drift
// check, and suspended: false makes them active again in one call; the account stays approved.
func TestUserSuspendedBySpec(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	acc.Spec.Users[1].Suspended = true // bob, from the start
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if got := userStates(ns); got["acme-alice"] != "active" || got["acme-bob"] != "suspended" {
		t.Fatalf("users in 3scale: %v, want alice active and bob suspended", got)
	}
	suspend := "/admin/api/accounts/{account_id}/users/{id}/suspend.json"
	unsuspend := "/admin/api/accounts/{account_id}/users/{id}/unsuspend.json"
	if n := harness.RequestsTo(ns, http.MethodPut, suspend); n != 1 {
		t.Errorf("%d suspensions, want 1", n)
	}

	// A person unsuspends bob: the drift check suspends him again.
	if _, err := harness.ByHand(t, ns).UnsuspendUser(context.Background(), acc.Status.AccountID, acc.Status.UserIDs["acme-bob"]); err != nil {
		t.Fatal(err)
	}
	harness.SyncNow(t, acc, "1")
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if got := userStates(ns)["acme-bob"]; got != "suspended" {
		t.Errorf("bob after the drift check: %s, want suspended", got)
	}

	// suspended: false: one unsuspension, nothing else.
	before := harness.WritesTo(ns)
	harness.EditAndWait(t, acc, func() { acc.Spec.Users[1].Suspended = false })
	if got := harness.LastWrites(ns, harness.WritesTo(ns)-before); len(got) != 1 || got[0] != "PUT "+unsuspend {
		t.Errorf("writes to make bob active: %v, want one unsuspend", got)
	}
	if got := userStates(ns)["acme-bob"]; got != "active" {
		t.Errorf("bob: %s, want active", got)
	}
	for _, a := range harness.Sim.Objects(ns, simulator.KindAccounts) {
		if a["state"] != "approved" {
			t.Errorf("account %v is %v, want approved", a["org_name"], a["state"])
		}
	}
}

// TestTenantWithoutMultipleUsers: on a tenant whose multiple_users switch is denied, porta refuses to
// list an account's users (403). An account with only its admin syncs (its users read from the account's
// XML) and its edits are applied; one that lists a second user is Invalid, naming the switch, without
// creating that user; dropping the user makes it Synced again.
func TestTenantWithoutMultipleUsers(t *testing.T) {
	ns := harness.NewNamespace(t)
	provider := harness.DefaultSecret(ns) // makes the tenant
	if !harness.Sim.SetMultipleUsers(ns, false) {
		t.Fatalf("no tenant %s in the simulator", ns)
	}
	acc, pw := harness.DevAccount(ns, "acme")
	bob := acc.Spec.Users[1]
	acc.Spec.Users = acc.Spec.Users[:1]
	harness.Create(t, provider, pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	admin := harness.Sim.Objects(ns, "users")
	if len(admin) != 1 || admin[0]["username"] != "acme-alice" || admin[0]["id"] != acc.Status.UserIDs["acme-alice"] {
		t.Fatalf("users in 3scale %v, status user ids %v: want the admin, recorded", admin, acc.Status.UserIDs)
	}
	harness.Update(t, acc, func() { acc.Spec.Users[0].Email = "alice-new@example.com" })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if u := harness.Sim.Objects(ns, "users"); len(u) != 1 || u[0]["email"] != "alice-new@example.com" {
			return fmt.Sprintf("users in 3scale %v, want the admin's new email", u)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)

	harness.Update(t, acc, func() { acc.Spec.Users = append(acc.Spec.Users, bob) })
	harness.WaitReason(t, acc, v1alpha1.ConditionInvalid, v1alpha1.ReasonMultipleUsersDenied)
	if _, _, msg := harness.SyncState(t, acc); !strings.Contains(msg, "multiple_users switch") || !strings.Contains(msg, "Multiple Users") {
		t.Errorf("Invalid message %q does not name the switch", msg)
	}
	if u := harness.Sim.Objects(ns, "users"); len(u) != 1 {
		t.Errorf("users in 3scale %v, want the admin only", u)
	}
	harness.Update(t, acc, func() { acc.Spec.Users = acc.Spec.Users[:1] })
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
}

// TestAdminRoleMovesBetweenUsers: making the member the admin and the admin a member works although porta
// never lets an account go without an admin (the new admin is promoted first); a user removed from the
// spec is deleted in 3scale.
func TestAdminRoleMovesBetweenUsers(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	harness.Create(t, harness.DefaultSecret(ns), pw, acc)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	harness.Update(t, acc, func() {
		acc.Spec.Users[0].Role, acc.Spec.Users[1].Role = "member", "admin"
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	roles := map[string]any{}
	for _, u := range harness.Sim.Objects(ns, simulator.KindUsers) {
		roles[fmt.Sprint(u["username"])] = u["role"]
	}
	if roles["acme-alice"] != "member" || roles["acme-bob"] != "admin" {
		t.Errorf("roles in 3scale %v, want alice member and bob admin", roles)
	}
	harness.Update(t, acc, func() { acc.Spec.Users = acc.Spec.Users[1:] })
	harness.WaitState(t, v1alpha1.ConditionSynced, acc)
	if got := harness.Sim.Count(ns, simulator.KindUsers); got != 1 {
		t.Errorf("%d users in 3scale, want 1", got)
	}
}
