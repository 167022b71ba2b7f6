package application_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	appkind "github.com/apimsync/apimsync/controllers/kinds/application"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/test/simulator"
)

// Tests of Applications on their own: suspension, credentials (generated, brought, rotated, written),
// their dependencies (Orphan, Invalid and back) and lost create answers.

// credentialsSecret is a Secret an Application's spec.credentialsRef names.
func credentialsSecret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
}

// remoteKeys lists the keys of a synced Application's 3scale application, sorted.
func remoteKeys(t *testing.T, ns string, a *v1alpha1.Application) []string {
	t.Helper()
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	keys, err := harness.ByHand(t, ns).ListApplicationKeys(context.Background(), a.Status.AccountID, a.Status.ApplicationID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		out = append(out, k.Value)
	}
	sort.Strings(out)
	return out
}

// credentialsOf reads a credentials Secret's data as strings.
func credentialsOf(t *testing.T, ns, name string) (map[string]string, *corev1.Secret) {
	t.Helper()
	var secret corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &secret); err != nil {
		t.Fatalf("credentials Secret %s: %v", name, err)
	}
	out := map[string]string{}
	for k, v := range secret.Data {
		out[k] = string(v)
	}
	return out, &secret
}

// keyWrites lists a tenant's writes to application keys from the from-th write on, as "METHOD code".
func keyWrites(ns string, from int) []string {
	var out []string
	for _, w := range harness.Sim.Writes(ns)[from:] {
		if strings.Contains(w.Endpoint, "/keys") {
			out = append(out, fmt.Sprintf("%s %d", w.Method, w.Code))
		}
	}
	return out
}

// assertNoSecretsShown fails if a credential value is in an Application's events, status or conditions.
func assertNoSecretsShown(t *testing.T, secrets []string, apps ...*v1alpha1.Application) {
	t.Helper()
	for _, a := range apps {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
			t.Fatal(err)
		}
		shown := strings.Join(harness.EventsOf(t, a), "\n") + "\n" + fmt.Sprintf("%+v", a.Status)
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				t.Errorf("credential %q of %s is in its events or status:\n%s", s, a.Name, shown)
			}
		}
	}
}

// TestApplicationSuspendAndResume: suspended: true suspends the application in 3scale, false makes it live
// again, each with one call.
func TestApplicationSuspendAndResume(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	app := harness.Application(ns, "app", "acme", "basic")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore"), app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	if got := harness.RemoteApp(t, ns, app)["state"]; got != "live" {
		t.Fatalf("the application is %v in 3scale, want live", got)
	}
	for _, step := range []struct {
		suspended bool
		state     string
		call      string
	}{{true, "suspended", "/suspend.json"}, {false, "live", "/resume.json"}} {
		mark := len(harness.Sim.Writes(ns))
		harness.Update(t, app, func() { app.Spec.Suspended = step.suspended })
		harness.WaitState(t, v1alpha1.ConditionSynced, app)
		if got := harness.RemoteApp(t, ns, app)["state"]; got != step.state {
			t.Errorf("suspended: %v: the application is %v in 3scale, want %s", step.suspended, got, step.state)
		}
		var writes []string
		for _, w := range harness.Sim.Writes(ns)[mark:] {
			writes = append(writes, fmt.Sprintf("%s %s %d", w.Method, w.Endpoint[strings.LastIndex(w.Endpoint, "/"):], w.Code))
		}
		if want := []string{"PUT " + step.call + " 200"}; !slices.Equal(writes, want) {
			t.Errorf("suspended: %v: writes %v, want %v", step.suspended, writes, want)
		}
	}
}

// TestApplicationBringYourOwnCredentials: credentials from spec.credentialsRef reach 3scale and the
// credentials Secret, in user key mode and in app id and keys mode; a Secret without what the product needs,
// with too many keys or with a key 3scale refuses makes the Application Invalid, saying why, and a fixed
// Secret syncs it; no credential shows in events or status.
func TestApplicationBringYourOwnCredentials(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.OrdersProduct(ns),
		harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "orders-basic", "orders"))

	const userKey, appID, key1, key2 = "byo-user-key-0001", "byo-app-id-01", "byo-key-one-1", "byo-key-two-2"
	ukApp := harness.WithCredentials(harness.Application(ns, "uk-app", "acme", "basic"), "uk-creds")
	idApp := harness.WithCredentials(harness.Application(ns, "id-app", "acme", "orders-basic"), "id-creds")
	harness.Create(t, credentialsSecret(ns, "uk-creds", map[string]string{"user_key": userKey}),
		credentialsSecret(ns, "id-creds", map[string]string{"app_id": appID, "app_keys": key1 + ", " + key2}), ukApp, idApp)
	harness.WaitState(t, v1alpha1.ConditionSynced, ukApp, idApp)

	if got := harness.RemoteApp(t, ns, ukApp)["user_key"]; got != userKey {
		t.Errorf("user key in 3scale %v, want the Secret's", got)
	}
	if got, _ := credentialsOf(t, ns, "uk-app-credentials"); got["user_key"] != userKey || len(got) != 1 {
		t.Errorf("credentials Secret of uk-app holds %v, want only the Secret's user key", kit.SortedKeys(got))
	}
	if got := harness.RemoteApp(t, ns, idApp)["application_id"]; got != appID {
		t.Errorf("app id in 3scale %v, want the Secret's", got)
	}
	if got, want := remoteKeys(t, ns, idApp), []string{key1, key2}; !slices.Equal(got, want) {
		t.Errorf("keys in 3scale are not the Secret's (%d keys, want %d)", len(got), len(want))
	}
	got, _ := credentialsOf(t, ns, "id-app-credentials")
	if got["app_id"] != appID || got["app_key"] != key1 || got["app_keys"] != key1+","+key2 || len(got) != 3 {
		t.Errorf("credentials Secret of id-app: app_id ok %v, app_key ok %v, app_keys ok %v, fields %v", got["app_id"] == appID,
			got["app_key"] == key1, got["app_keys"] == key1+","+key2, kit.SortedKeys(got))
	}

	// Invalid Secrets, each saying what is wrong.
	sixKeys := "k-one-1,k-two-2,k-three-3,k-four-4,k-five-5,k-six-6"
	cases := []struct {
		app, plan, reason, message string
		data                       map[string]string
	}{
		{"uk-missing", "basic", v1alpha1.ReasonInvalidSpec, `Secret "uk-missing-creds" (spec.credentialsRef) has no user_key: the plan's product identifies applications by user key`,
			map[string]string{"app_id": "not-what-it-needs"}},
		{"id-missing", "orders-basic", v1alpha1.ReasonInvalidSpec, `Secret "id-missing-creds" (spec.credentialsRef) has no app_id: the plan's product identifies applications by app id and key`,
			map[string]string{"user_key": "not-what-it-needs-either"}},
		{"too-many-keys", "orders-basic", v1alpha1.ReasonInvalidSpec, `Secret "too-many-keys-creds" (spec.credentialsRef) lists 6 app keys: 3scale keeps at most 5 per application of this product`,
			map[string]string{"app_id": "too-many-01", "app_keys": sixKeys}},
		{"slashed-key", "orders-basic", v1alpha1.ReasonInvalidSpec, `Secret "slashed-key-creds" (spec.credentialsRef) lists an app key with '/': 3scale's API cannot address such a key to delete it later`,
			map[string]string{"app_id": "slashed-01", "app_keys": "key/with/slash"}},
		{"refused-key", "orders-basic", v1alpha1.ReasonRemoteRejected, "application_keys is invalid",
			map[string]string{"app_id": "refused-01", "app_key": "tiny"}},
		{"taken-key", "basic", v1alpha1.ReasonRemoteRejected, "user_key has already been taken",
			map[string]string{"user_key": userKey}},
	}
	var invalid []*v1alpha1.Application
	for _, c := range cases {
		a := harness.WithCredentials(harness.Application(ns, c.app, "acme", c.plan), c.app+"-creds")
		harness.Create(t, credentialsSecret(ns, c.app+"-creds", c.data), a)
		invalid = append(invalid, a)
	}
	for i, c := range cases {
		harness.WaitReason(t, invalid[i], v1alpha1.ConditionInvalid, c.reason)
		if _, _, msg := harness.SyncState(t, invalid[i]); !strings.Contains(msg, c.message) {
			t.Errorf("%s: message %q, want it to contain %q", c.app, msg, c.message)
		}
	}
	if n := harness.Sim.Count(ns, simulator.KindApplications); n != 2 {
		t.Errorf("%d applications in 3scale, want the 2 valid ones", n)
	}

	// A fixed Secret syncs its Application (the Secret is watched).
	fixed := &corev1.Secret{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "uk-missing-creds"}, fixed); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, fixed, func() { fixed.StringData = map[string]string{"user_key": "byo-user-key-0002"} })
	harness.WaitState(t, v1alpha1.ConditionSynced, invalid[0])
	if got := harness.RemoteApp(t, ns, invalid[0])["user_key"]; got != "byo-user-key-0002" {
		t.Errorf("user key in 3scale after the fix %v, want the Secret's", got)
	}

	secrets := append([]string{userKey, appID, key1, key2, "byo-user-key-0002"}, strings.Split(sixKeys, ",")...)
	for _, c := range cases {
		for _, v := range c.data {
			secrets = append(secrets, v)
		}
	}
	assertNoSecretsShown(t, secrets, append(invalid, ukApp, idApp)...)
}

// TestApplicationKeyRotation: keys removed from the credentialsRef Secret are deleted in 3scale, after the
// new ones are added, so that the application always has a valid key; at the product's limit of 5 keys a
// removed key is deleted first to make room. A changed app_id, which 3scale cannot change, is Invalid.
func TestApplicationKeyRotation(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	app := harness.WithCredentials(harness.Application(ns, "app", "acme", "orders-basic"), "creds")
	creds := credentialsSecret(ns, "creds", map[string]string{"app_id": "rotating-app", "app_keys": "old-key-1,kept-key-2"})
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.OrdersProduct(ns), harness.BasicPlan(ns, "orders-basic", "orders"), creds, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)

	rotate := func(keys string, wantWrites []string) {
		t.Helper()
		mark := len(harness.Sim.Writes(ns))
		harness.Update(t, creds, func() { creds.StringData = map[string]string{"app_keys": keys} })
		want := strings.Split(keys, ",")
		sort.Strings(want)
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if got := remoteKeys(t, ns, app); !slices.Equal(got, want) {
				return fmt.Sprintf("keys in 3scale %v, want %v", got, want)
			}
			if got, _ := credentialsOf(t, ns, "app-credentials"); got["app_keys"] != keys {
				return fmt.Sprintf("credentials Secret app_keys %q, want %q", got["app_keys"], keys)
			}
			return ""
		})
		harness.WaitState(t, v1alpha1.ConditionSynced, app)
		if got := keyWrites(ns, mark); !slices.Equal(got, wantWrites) {
			t.Errorf("rotation to %s: key writes %v, want %v", keys, got, wantWrites)
		}
	}
	// One key rotated: the new one is added, then the old one deleted.
	rotate("kept-key-2,new-key-3", []string{"POST 201", "DELETE 200"})
	// Both keys replaced by one.
	rotate("only-key-4", []string{"POST 201", "DELETE 200", "DELETE 200"})
	// Up to the limit, then one rotated at the limit: a removed key makes room first.
	rotate("only-key-4,key-5,key-6,key-7,key-8", []string{"POST 201", "POST 201", "POST 201", "POST 201"})
	rotate("key-5,key-6,key-7,key-8,key-9", []string{"DELETE 200", "POST 201"})

	if got, _ := credentialsOf(t, ns, "app-credentials"); got["app_key"] != "key-5" {
		t.Errorf("credentials Secret app_key %q, want the first key key-5", got["app_key"])
	}
	harness.Update(t, creds, func() { creds.StringData = map[string]string{"app_id": "another-app-id"} })
	harness.WaitReason(t, app, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, app); !strings.Contains(msg, "names another app_id than the application's in 3scale, which cannot change") {
		t.Errorf("changed app_id: message %q", msg)
	}
	assertNoSecretsShown(t, []string{"old-key-1", "kept-key-2", "new-key-3", "only-key-4", "key-9", "another-app-id", "rotating-app"}, app)
}

// TestLostAnswersWhileRotatingKeysShowNoKey: while every answer of 3scale to a write is lost, a key
// rotation fails for a passing reason (InSync, retried); the message in status, the events and the
// manager's logs name the endpoint template, never a key from a request's path. Once the answers come
// back, the rotation completes.
func TestLostAnswersWhileRotatingKeysShowNoKey(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	app := harness.WithCredentials(harness.Application(ns, "app", "acme", "orders-basic"), "creds")
	creds := credentialsSecret(ns, "creds", map[string]string{"app_id": "lost-answers-app", "app_keys": "first.lost.key-1,second-lost-key-2"})
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.OrdersProduct(ns), harness.BasicPlan(ns, "orders-basic", "orders"), creds, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)

	harness.Sim.SetFaults(simulator.Faults{LostResponseRate: 1})
	defer harness.Sim.SetFaults(simulator.Faults{})
	harness.Update(t, creds, func() { creds.StringData = map[string]string{"app_keys": "third-lost-key-3"} })
	// Each lost answer is a failed reconcile, logged and, the first time, a condition and an event.
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if !strings.Contains(harness.ManagerLogs.String(), "keys/{key}.json: no answer") {
			return "no failed key deletion logged yet"
		}
		return ""
	})
	harness.Sim.SetFaults(simulator.Faults{})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if got := remoteKeys(t, ns, app); !slices.Equal(got, []string{"third-lost-key-3"}) {
			return fmt.Sprintf("keys in 3scale %v, want the rotated one", got)
		}
		return ""
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	keys := []string{"first.lost.key-1", "second-lost-key-2", "third-lost-key-3", "lost-answers-app"}
	assertNoSecretsShown(t, keys, app)
	logs := harness.ManagerLogs.String()
	for _, k := range keys {
		if strings.Contains(logs, k) {
			t.Errorf("credential %q is in the manager's logs", k)
		}
	}
}

// TestApplicationCredentialsSecretName: spec.credentialsSecretName names the Secret the credentials go to;
// a Secret of that name the Application does not control is refused, never overwritten.
func TestApplicationCredentialsSecretName(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	app := harness.Application(ns, "app", "acme", "basic")
	app.Spec.CredentialsSecretName = "consumer-api-key"
	foreign := credentialsSecret(ns, "someone-elses", map[string]string{"password": "do-not-touch"})
	squatter := harness.Application(ns, "squatter", "acme", "basic")
	squatter.Spec.CredentialsSecretName = foreign.Name
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.BasicPlan(ns, "basic", "petstore"), foreign, app, squatter)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)

	got, secret := credentialsOf(t, ns, "consumer-api-key")
	userKey := got["user_key"]
	if userKey == "" || userKey != harness.RemoteApp(t, ns, app)["user_key"] || !metav1.IsControlledBy(secret, app) {
		t.Errorf("Secret consumer-api-key: fields %v, same key as 3scale %v, owners %v", kit.SortedKeys(got), userKey == harness.RemoteApp(t, ns, app)["user_key"], secret.OwnerReferences)
	}
	if app.Status.CredentialsSecret != "consumer-api-key" {
		t.Errorf("status.credentialsSecret %q", app.Status.CredentialsSecret)
	}
	var dflt corev1.Secret
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-credentials"}, &dflt); err == nil {
		t.Errorf("the default-named Secret app-credentials was written too")
	}

	harness.WaitReason(t, squatter, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	if _, _, msg := harness.SyncState(t, squatter); !strings.Contains(msg, `secret "someone-elses" exists and is not this Application's: choose another spec.credentialsSecretName`) {
		t.Errorf("refused Secret: message %q", msg)
	}
	got, secret = credentialsOf(t, ns, foreign.Name)
	if len(got) != 1 || got["password"] != "do-not-touch" || len(secret.OwnerReferences) != 0 || len(secret.Labels) != 0 {
		t.Errorf("the foreign Secret was changed: fields %v, owners %v, labels %v", kit.SortedKeys(got), secret.OwnerReferences, secret.Labels)
	}
	// Another name works.
	harness.Update(t, squatter, func() { squatter.Spec.CredentialsSecretName = "squatter-own" })
	harness.WaitState(t, v1alpha1.ConditionSynced, squatter)
	assertNoSecretsShown(t, []string{userKey, fmt.Sprint(harness.RemoteApp(t, ns, squatter)["user_key"])}, app, squatter)
}

// TestApplicationInvalidDependenciesCascadeAndRecover: an Application whose account or plan is Invalid is
// Invalid too, naming it and why, and syncs once they are fixed; moving to a plan of another product is
// Invalid, saying 3scale cannot, and moving back syncs.
func TestApplicationInvalidDependenciesCascadeAndRecover(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	pw.StringData["alice"] = "short" // porta wants 15 characters at least
	plan := harness.BasicPlan(ns, "gold", "petstore")
	plan.Spec.Limits[0].MetricMethodRef.SystemName = "no_such_metric"
	okAcc, okPw := harness.DevAccount(ns, "okcorp")
	onBadAccount, onBadPlan := harness.Application(ns, "on-bad-account", "acme", "basic"), harness.Application(ns, "on-bad-plan", "okcorp", "gold")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, okAcc, okPw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), harness.OrdersProduct(ns),
		harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "foreign", "orders"), plan, onBadAccount, onBadPlan)

	harness.WaitReason(t, acc, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteRejected)
	harness.WaitReason(t, onBadAccount, v1alpha1.ConditionInvalid, v1alpha1.ReasonAccountInvalid)
	if _, _, msg := harness.SyncState(t, onBadAccount); !strings.Contains(msg, `DeveloperAccount "acme" is invalid: `) || !strings.Contains(msg, "password is too short") {
		t.Errorf("account cascade: message %q", msg)
	}
	harness.WaitReason(t, plan, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidSpec)
	harness.WaitReason(t, onBadPlan, v1alpha1.ConditionInvalid, v1alpha1.ReasonPlanInvalid)
	if _, _, msg := harness.SyncState(t, onBadPlan); !strings.Contains(msg, `ApplicationPlan "gold" is invalid: metric or method "no_such_metric" is not defined`) {
		t.Errorf("plan cascade: message %q", msg)
	}
	if n := harness.Sim.Count(ns, simulator.KindApplications); n != 0 {
		t.Errorf("%d applications in 3scale while their account or plan is invalid", n)
	}

	harness.Update(t, pw, func() { pw.StringData = map[string]string{"alice": "a-long-enough-password"} })
	harness.Update(t, plan, func() { plan.Spec.Limits[0].MetricMethodRef.SystemName = "search" })
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, plan, onBadAccount, onBadPlan)

	harness.Update(t, onBadAccount, func() { onBadAccount.Spec.PlanRef = "foreign" })
	harness.WaitReason(t, onBadAccount, v1alpha1.ConditionInvalid, v1alpha1.ReasonPlanOfAnotherProduct)
	if _, _, msg := harness.SyncState(t, onBadAccount); !strings.Contains(msg, `ApplicationPlan "foreign" belongs to another product`) ||
		!strings.Contains(msg, "3scale cannot move an application between products") {
		t.Errorf("move to another product: message %q", msg)
	}
	harness.Update(t, onBadAccount, func() { onBadAccount.Spec.PlanRef = "basic" })
	harness.WaitState(t, v1alpha1.ConditionSynced, onBadAccount)
	if n := harness.Sim.Count(ns, simulator.KindApplications); n != 2 {
		t.Errorf("%d applications in 3scale, want 2", n)
	}
}

// wokenWithin is how soon after its dependency an orphan woken by a watch syncs: about 0.1 s when the
// machine is idle, with room for a loaded CI machine; the backoff alone (the next retry 4.5 s after the
// dependency) takes longer.
const wokenWithin = 2500 * time.Millisecond

// TestOrphanApplicationIsWokenByItsDependencies: an Application waits, saying for what, for its account to
// be created and for its plan to be synced, and a watch wakes it when they are. Its orphan backoff is let
// grow to its maximum (5s in the suite), then an edit of the Application makes it retry at a known time:
// its next retry on backoff is 5s (±10%) later. The dependency is created 0.5s after that retry, so the
// Application syncs within wokenWithin of it only if the dependency's change woke it.
func TestOrphanApplicationIsWokenByItsDependencies(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	late, latePw := harness.DevAccount(ns, "late")
	waitsForPlan := harness.Application(ns, "waits-for-plan", "acme", "basic")
	waitsForAccount := harness.Application(ns, "waits-for-account", "late", "basic")
	// The plan exists but cannot sync: its product is missing.
	plan := harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), plan, waitsForPlan, waitsForAccount)
	harness.WaitReason(t, waitsForPlan, v1alpha1.ConditionOrphan, v1alpha1.ReasonPlanNotSynced)
	if _, _, msg := harness.SyncState(t, waitsForPlan); msg != `waiting for ApplicationPlan "basic" to be Synced` {
		t.Errorf("plan not synced: message %q", msg)
	}
	harness.WaitReason(t, waitsForAccount, v1alpha1.ConditionOrphan, v1alpha1.ReasonAccountNotFound)
	if _, _, msg := harness.SyncState(t, waitsForAccount); msg != `waiting for DeveloperAccount "late" (spec.accountRef) to be created` {
		t.Errorf("account not found: message %q", msg)
	}
	// 0.2+0.4+0.8+1.6+3.2 s of backoff: the retries are 5s apart from now on.
	time.Sleep(7 * time.Second)

	// wakeUp makes app retry now (an edit), creates objs 0.5s later and returns how long after dep was
	// seen Synced app was seen Synced.
	wakeUp := func(dep, app engine.Object, objs ...client.Object) time.Duration {
		t.Helper()
		harness.Update(t, app, func() { app.SetLabels(map[string]string{"retry": "now"}) })
		time.Sleep(500 * time.Millisecond)
		harness.Create(t, objs...)
		var depAt time.Time
		harness.Eventually(t, harness.WaitTimeout, func() string {
			if s, _, _ := harness.SyncState(t, dep); s == v1alpha1.ConditionSynced && depAt.IsZero() {
				depAt = time.Now()
			}
			if s, r, m := harness.SyncState(t, app); s != v1alpha1.ConditionSynced {
				return fmt.Sprintf("%s is %s (%s: %s)", app.GetName(), s, r, m)
			}
			return ""
		})
		return time.Since(depAt)
	}
	if d := wakeUp(plan, waitsForPlan, harness.PetstoreProduct(ns, "pets")); d > wokenWithin {
		t.Errorf("the application synced %s after its plan: not woken by the plan's change", d.Round(time.Millisecond))
	} else {
		t.Logf("synced %s after its plan", d.Round(time.Millisecond))
	}
	// The other one waited for its account only now.
	if d := wakeUp(late, waitsForAccount, late, latePw); d > wokenWithin {
		t.Errorf("the application synced %s after its account: not woken by the account's change", d.Round(time.Millisecond))
	} else {
		t.Logf("synced %s after its account", d.Round(time.Millisecond))
	}
}

// TestLostApplicationCreateAnswersMakeNoDuplicates: with half of the write answers lost, Applications are
// created until at least one POST of an application lost its answer (the application was made, the
// answer never came); every application is in 3scale once.
func TestLostApplicationCreateAnswersMakeNoDuplicates(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	plan := harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets"), plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, acc, plan)

	lostCreates := func() int {
		n := 0
		for _, c := range harness.Sim.Stats().Calls {
			if c.Tenant == ns && c.Method == http.MethodPost && c.Endpoint == "/admin/api/accounts/{account_id}/applications.json" && c.Code == 0 {
				n += c.Count
			}
		}
		return n
	}
	harness.Sim.SetFaults(simulator.Faults{LostResponseRate: 0.5})
	defer harness.Sim.SetFaults(simulator.Faults{})
	var apps []engine.Object
	for i := 0; lostCreates() == 0 || len(apps) < 3; i++ {
		if i == 20 {
			t.Fatalf("20 applications and no lost create answer: the test exercised nothing")
		}
		a := harness.Application(ns, fmt.Sprintf("app-%d", i), "acme", "basic")
		harness.Create(t, a)
		apps = append(apps, a)
		harness.WaitState(t, v1alpha1.ConditionSynced, a)
	}
	harness.Sim.SetFaults(simulator.Faults{})
	names := map[string]int{}
	for _, r := range harness.Sim.Objects(ns, simulator.KindApplications) {
		names[fmt.Sprint(r["name"])]++
	}
	for _, a := range apps {
		if n := names[a.GetName()]; n != 1 {
			t.Errorf("application %s is %d times in 3scale, want once", a.GetName(), n)
		}
	}
	if len(names) != len(apps) {
		t.Errorf("3scale has applications %v, want %d", names, len(apps))
	}
	t.Logf("%d applications, %d lost create answers, %d lost answers in all", len(apps), lostCreates(), harness.LostAnswers(ns))
}

// TestCreateInDoubtFindsItsApplicationByItsCredentials: porta does not make application names unique, so
// a create of ours that timed out but committed shows, when the create is sent again with the same
// brought credentials, as 422 "user_key has already been taken". The application holding them on this
// account with this name is then our own (create-pending) or adopted (announced); one on another account
// keeps the refusal. No duplicate is made either way.
func TestCreateInDoubtFindsItsApplicationByItsCredentials(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	c := harness.ByHand(t, ns)
	svc, err := c.CreateProduct(ctx, tsclient.ProductParams{Name: "Shop", SystemName: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.CreatePlan(ctx, svc.ID, tsclient.PlanParams{Name: "basic", SystemName: "basic"})
	if err != nil {
		t.Fatal(err)
	}
	account := func(name string) int64 {
		acc, err := c.Signup(ctx, tsclient.SignupParams{OrgName: name, Username: name, Email: name + "@example.com", Password: "s3cret-long-enough"})
		if err != nil {
			t.Fatal(err)
		}
		return acc.ID
	}
	ours, theirs := account("ours"), account("theirs")
	committed, err := c.CreateApplication(ctx, ours, tsclient.ApplicationParams{PlanID: plan.ID, Name: "app", UserKey: "byo-key-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := c.CreateApplication(ctx, theirs, tsclient.ApplicationParams{PlanID: plan.ID, Name: "app", UserKey: "their-key-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	syncer := &appkind.Syncer{Reader: harness.K8s, Writer: harness.K8s}
	for name, tc := range map[string]struct {
		pending    bool
		userKey    string
		wantID     int64
		wantAdopt  bool
		wantRefuse bool
	}{
		"our create in doubt":     {pending: true, userKey: "byo-key-0123456789", wantID: committed.ID},
		"an existing one adopted": {userKey: "byo-key-0123456789", wantID: committed.ID, wantAdopt: true},
		"another account's key":   {pending: true, userKey: "their-key-0123456789", wantRefuse: true},
	} {
		t.Run(name, func(t *testing.T) {
			a := harness.Application(ns, "app", "ours", "basic")
			a.UID = types.UID("uid-" + strings.ReplaceAll(strings.ReplaceAll(name, " ", "-"), "'", ""))
			a.Spec.CredentialsSecretName = "creds-" + string(a.UID)
			want := appkind.Desired{AccountID: ours, PlanID: plan.ID, ProductID: svc.ID, UserKey: tc.userKey}
			sess := &engine.Session{Remote: c, Tenant: "t", SystemName: "app", CreatePending: tc.pending}
			before := harness.Sim.Count(ns, simulator.KindApplications)
			made, err := syncer.Create(ctx, a, sess, want)
			if got := harness.Sim.Count(ns, simulator.KindApplications); got != before {
				t.Errorf("%d applications in 3scale after the create, want %d: a duplicate", got, before)
			}
			if tc.wantRefuse {
				if !tsclient.HasAlreadyBeenTaken(err, "user_key") {
					t.Errorf("create with another account's key: %v, want porta's refusal", err)
				}
				if a.Status.ApplicationID == stranger.ID {
					t.Errorf("took another account's application %d", stranger.ID)
				}
				return
			}
			if err != nil || a.Status.ApplicationID != tc.wantID {
				t.Fatalf("create: %v, application %d; want %d", err, a.Status.ApplicationID, tc.wantID)
			}
			// The adoption the engine announces (Created.AdoptedBy, as its create path tells it).
			if adopted := made.AdoptedBy(sess) == tc.wantID; adopted != tc.wantAdopt {
				t.Errorf("adoption announced: %v (adopted %d), want %v", adopted, made.AdoptedBy(sess), tc.wantAdopt)
			}
		})
	}
}

// TestAppIDProductWithoutMandatoryAppKey: porta makes a first key for an app id/key application only when
// its product requires app keys (mandatory_app_key, on by default; switched in the admin portal). Without
// it, the application has no key: it syncs, and its credentials Secret holds app_id alone.
func TestAppIDProductWithoutMandatoryAppKey(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	orders := harness.OrdersProduct(ns)
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, harness.PetsBackend(ns), orders)
	harness.WaitState(t, v1alpha1.ConditionSynced, orders)
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(orders), orders); err != nil {
		t.Fatal(err)
	}
	if !harness.Sim.SetMandatoryAppKey(ns, orders.Status.ProductID, false) {
		t.Fatal("no such service in the simulator")
	}
	app := harness.Application(ns, "keyless", "acme", "orders-basic")
	harness.Create(t, harness.BasicPlan(ns, "orders-basic", "orders"), app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	got, _ := credentialsOf(t, ns, "keyless-credentials")
	if _, hasKey := got["app_key"]; hasKey || got["app_id"] == "" || len(got) != 1 {
		t.Errorf("credentials of an application without keys: keys %v, want app_id alone", slices.Sorted(maps.Keys(got)))
	}
	if keys := remoteKeys(t, ns, app); len(keys) != 0 {
		t.Errorf("keys in 3scale %v, want none", keys)
	}
}

// TestApplicationMovesBetweenPlans: to another plan of the same product with one change_plan call; to a
// plan of another product it is Invalid, saying why.
func TestApplicationMovesBetweenPlans(t *testing.T) {
	ns := harness.NewNamespace(t)
	acc, pw := harness.DevAccount(ns, "acme")
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	other := harness.PetstoreProduct(ns, "pets")
	other.Name = "other"
	basic, gold, foreign := harness.BasicPlan(ns, "basic", "petstore"), harness.BasicPlan(ns, "gold", "petstore"), harness.BasicPlan(ns, "foreign", "other")
	app := harness.Application(ns, "app", "acme", "basic")
	harness.Create(t, harness.DefaultSecret(ns), acc, pw, backend, product, other, basic, gold, foreign, app)
	harness.WaitState(t, v1alpha1.ConditionSynced, app, gold, foreign)
	harness.Sim.ResetStats()
	harness.Update(t, app, func() { app.Spec.PlanRef = "gold" })
	harness.WaitState(t, v1alpha1.ConditionSynced, app)
	changes := 0
	for _, c := range harness.Sim.Stats().Calls {
		if c.Tenant == ns && strings.HasSuffix(c.Endpoint, "/change_plan.json") {
			changes += c.Count
		}
	}
	if changes != 1 || app.Status.PlanID != gold.Status.PlanID {
		t.Errorf("%d change_plan calls, plan %d; want 1 and %d", changes, app.Status.PlanID, gold.Status.PlanID)
	}
	harness.Update(t, app, func() { app.Spec.PlanRef = "foreign" })
	harness.WaitReason(t, app, v1alpha1.ConditionInvalid, v1alpha1.ReasonPlanOfAnotherProduct)
}
