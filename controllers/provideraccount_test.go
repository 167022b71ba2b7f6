package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	appkind "github.com/apimsync/apimsync/controllers/kinds/application"
	"github.com/apimsync/apimsync/controllers/kit"
)

// TestRefusedTokenIsInvalidUntilTheSecretChanges: a token 3scale refuses makes the object Invalid with no
// retry loop; a rotated token in the Secret takes effect within seconds.
func TestRefusedTokenIsInvalidUntilTheSecretChanges(t *testing.T) {
	ns := harness.NewNamespace(t)
	adminURL, token := harness.TenantOf(ns)
	secret := harness.ProviderSecret(ns, v1alpha1.DefaultProviderAccountSecret, adminURL, "revoked-"+ns)
	backend := harness.PetsBackend(ns)
	harness.Create(t, secret, backend)
	harness.WaitReason(t, backend, v1alpha1.ConditionInvalid, v1alpha1.ReasonUnauthorized)
	before := harness.RemoteCalls(ns)
	time.Sleep(2 * time.Second)
	if got := harness.RemoteCalls(ns) - before; got != 0 {
		t.Errorf("a refused token made %d more remote calls while nothing changed, want 0", got)
	}

	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	secret.StringData = map[string]string{"token": token}
	start := time.Now()
	if err := harness.K8s.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	t.Logf("Synced %s after the token was rotated", time.Since(start).Round(time.Millisecond))
}

// TestMetrics: remote calls are counted by tenant, verb, endpoint template and code, and objects by kind
// and state.
func TestMetrics(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), backend)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	tenant := backend.Status.TenantHost
	if got := testutil.ToFloat64(engine.RemoteCalls.WithLabelValues(tenant, "POST", "/admin/api/backend_apis.json", "201")); got != 1 {
		t.Errorf("apimsync_remote_calls_total for the backend create = %v, want 1", got)
	}
	if got := testutil.ToFloat64(engine.ObjectsByState.WithLabelValues("Backend", v1alpha1.ConditionSynced)); got < 1 {
		t.Errorf("apimsync_objects{kind=Backend,state=Synced} = %v, want at least 1", got)
	}
	if n := testutil.CollectAndCount(engine.RemoteCallSeconds); n == 0 {
		t.Errorf("no latency observed")
	}
}

// TestConnectAppliesTheAdminURLPolicy: Connect refuses an admin URL the policy does not allow with
// ProviderAccountInvalid and a message naming the Secret, the key and the way out; the session's tenant
// is the normalized key, the same for two spellings of one admin URL.
func TestConnectAppliesTheAdminURLPolicy(t *testing.T) {
	secret := func(name, adminURL string, extra ...string) *corev1.Secret {
		data := map[string][]byte{kit.SecretKeyAdminURL: []byte(adminURL), kit.SecretKeyToken: []byte("tok-connect-1234")}
		for i := 0; i+1 < len(extra); i += 2 {
			data[extra[i]] = []byte(extra[i+1])
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Data: data}
	}
	reader := fake.NewClientBuilder().WithObjects(
		secret("http", "http://acme-admin.3scale.net"),
		secret("http-allowed", "HTTP://Acme-Admin.3scale.net:80/", kit.SecretKeyAllowInsecureHTTP, "true"),
		secret("https", "https://acme-admin.3scale.net"),
		secret("https-respelled", "HTTPS://ACME-admin.3scale.net:443/"),
		secret("private", "https://10.0.0.5"),
		secret("service", "https://system-provider.threescale.svc.cluster.local"),
		secret("userinfo", "https://admin:s3cr3t@acme-admin.3scale.net"),
		secret("empty", ""),
	).Build()
	accounts := &kit.ProviderAccounts{Reader: reader, Pool: cache.NewClientPool(8, 10, 10, 2)}
	refused := map[string]string{
		"http":     `the provider-account Secret "http": adminURL must be https (set allowInsecureHTTP: "true" in the Secret to allow plain http)`,
		"private":  `the provider-account Secret "private": adminURL must not be on a loopback, link-local, private or cluster-internal address ("10.0.0.5"), which the manager refuses unless started with --allow-private-admin-urls`,
		"service":  `--allow-private-admin-urls`,
		"userinfo": `adminURL must not carry user info, a query or a fragment`,
		"empty":    `the provider-account Secret "empty" has no adminURL`,
	}
	for name, want := range refused {
		_, err := accounts.Connect(context.Background(), "team-a", name)
		var re *engine.ReasonedError
		if !errors.As(err, &re) || re.Reason != v1alpha1.ReasonProviderAccountInvalid || !strings.Contains(re.Message, want) {
			t.Errorf("%s: %v; want ProviderAccountInvalid saying %q", name, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the message quotes the password: %v", name, err)
		}
	}
	tenants := map[string]string{"http-allowed": "http://acme-admin.3scale.net", "https": "acme-admin.3scale.net", "https-respelled": "acme-admin.3scale.net"}
	for name, want := range tenants {
		s, err := accounts.Connect(context.Background(), "team-a", name)
		if err != nil || s.Tenant != want {
			t.Fatalf("%s: %+v, %v; want tenant %q", name, s, err, want)
		}
	}
	a, _ := accounts.Connect(context.Background(), "team-a", "https")
	b, _ := accounts.Connect(context.Background(), "team-a", "https-respelled")
	if a.Remote != b.Remote {
		t.Errorf("two spellings of one admin URL got two clients (two rate limits)")
	}
	accounts.AllowPrivate = true
	if _, err := accounts.Connect(context.Background(), "team-a", "private"); err != nil {
		t.Errorf("private address with --allow-private-admin-urls: %v", err)
	}
}

// TestConnectAppliesTheResponseCaps: the manager's --max-response-size and --max-list-pages reach the
// clients Connect hands out: a larger answer and a longer list fail, naming the cap.
func TestConnectAppliesTheResponseCaps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/services.json") { // every page full: the list never ends
			items := make([]string, 500)
			for i := range items {
				items[i] = fmt.Sprintf(`{"service":{"id":%d}}`, i+1)
			}
			_, _ = fmt.Fprintf(w, `{"services":[%s]}`, strings.Join(items, ","))
			return
		}
		_, _ = fmt.Fprintf(w, `{"service":{"id":1,"name":%q}}`, strings.Repeat("x", 64<<10))
	}))
	defer srv.Close()
	reader := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "capped"},
		Data: map[string][]byte{kit.SecretKeyAdminURL: []byte(srv.URL), kit.SecretKeyToken: []byte("tok-caps-1234"), kit.SecretKeyAllowInsecureHTTP: []byte("true")}}).Build()
	accounts := &kit.ProviderAccounts{Reader: reader, Pool: cache.NewClientPool(8, 10, 10, 2), AllowPrivate: true,
		MaxResponseBytes: 16 << 10, MaxListPages: 3}
	s, err := accounts.Connect(context.Background(), "team-a", "capped")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remote.GetProduct(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 64 KiB answer with a 16 KiB cap: %v; want an error saying it is too large", err)
	}
	if _, err := s.Remote.ListProducts(context.Background()); err == nil || !strings.Contains(err.Error(), "more than 3 pages") {
		t.Errorf("an endless list with a 3-page cap: %v; want an error naming the cap", err)
	}
}

// TestApplicationsAreWokenByTheirAccountsProviderAccount: a provider-account Secret maps to the
// Applications of the DeveloperAccounts that use it, so that a fixed token wakes them directly; the
// Applications of accounts on another Secret are not woken.
func TestApplicationsAreWokenByTheirAccountsProviderAccount(t *testing.T) {
	acme := &v1alpha1.DeveloperAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "acme"}}
	other := &v1alpha1.DeveloperAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other"}}
	other.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "other-tenant"}
	app := func(name, account string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Spec: v1alpha1.ApplicationSpec{AccountRef: account}}
	}
	reader := fake.NewClientBuilder().WithScheme(harness.K8s.Scheme()).
		WithIndex(&v1alpha1.DeveloperAccount{}, kit.IndexSecretRefs, controllers.SecretRefs).
		WithIndex(&v1alpha1.Application{}, kit.IndexAccountRef, func(o client.Object) []string { return []string{o.(*v1alpha1.Application).Spec.AccountRef} }).
		WithObjects(acme, other, app("a1", "acme"), app("a2", "acme"), app("b1", "other")).Build()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: v1alpha1.DefaultProviderAccountSecret}}
	var got []string
	for _, r := range appkind.OfAccountsReading(reader)(context.Background(), secret) {
		got = append(got, r.Name)
	}
	slices.Sort(got)
	if want := []string{"a1", "a2"}; !slices.Equal(got, want) {
		t.Errorf("woken %v, want %v", got, want)
	}
}
