// Package sharding proves that managers with disjoint label selectors (one shard each) never touch each
// other's objects, on a real control plane with the simulator as 3scale.
package sharding

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(e *testenv.Env) { env = e }))
}

// startShard starts a manager that syncs only the objects selector matches; the returned func stops it.
func startShard(t *testing.T, selector string) func() {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	return startManager(t, controllers.Options{WatchLabelSelector: sel})
}

// startManager starts a manager with opts (its WatchLabelSelector set) and the test's defaults; the
// returned func stops it.
func startManager(t *testing.T, opts controllers.Options) func() {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, controllers.ManagerOptions(ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}}, nil, opts.WatchLabelSelector))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts.SkipNameValidation, opts.AllowPrivateAdminURLs = true, true
	opts.RemoteQPS, opts.RemoteBurst, opts.OrphanBackoffInitial = 200, 200, 200*time.Millisecond
	if err := controllers.SetupWithManager(ctx, mgr, opts); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() { cancel(); <-done }
}

// tenantNamespace creates namespace name with a provider-account Secret for tenant acme of a simulator
// served for the test.
func tenantNamespace(t *testing.T, name string) (*simulator.Simulator, *corev1.Namespace, *corev1.Secret) {
	t.Helper()
	sim := simulator.New(simulator.Options{Tenants: map[string]string{"acme": "acme-token-0123456789"}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: v1alpha1.DefaultProviderAccountSecret},
		StringData: map[string]string{"adminURL": srv.URL + "/t/acme", "token": "acme-token-0123456789", "allowInsecureHTTP": "true"}}
	for _, o := range []client.Object{ns, secret} {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return sim, ns, secret
}

func eventually(t *testing.T, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		if last = cond(); last == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(last)
}

func backend(ns, name, shard string) *v1alpha1.Backend {
	return &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"apimsync.io/shard": shard}},
		Spec: v1alpha1.BackendSpec{Name: name, PrivateBaseURL: "https://" + name + ".internal"}}
}

// syncedObject is synced for any kind.
func syncedObject(o interface {
	client.Object
	v1alpha1.SyncedObject
}) string {
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		return err.Error()
	}
	if !meta.IsStatusConditionTrue(o.GetSyncStatus().Conditions, v1alpha1.ConditionSynced) {
		return fmt.Sprintf("%s is not Synced: %+v", o.GetName(), o.GetSyncStatus().Conditions)
	}
	return ""
}

func synced(b *v1alpha1.Backend) string {
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		return err.Error()
	}
	for _, c := range b.Status.Conditions {
		if c.Type == v1alpha1.ConditionSynced && c.Status == metav1.ConditionTrue {
			return ""
		}
	}
	return fmt.Sprintf("%s is not Synced: %+v", b.Name, b.Status.Conditions)
}

// TestShardsNeverTouchEachOthersObjects: shard a syncs its Backend and leaves shard b's alone (no
// finalizer, no status, nothing in 3scale) until shard b's manager runs; they share the provider-account
// Secret, each with its own in-use finalizer; deleting shard a's Backend leaves shard b's untouched.
func TestShardsNeverTouchEachOthersObjects(t *testing.T) {
	sim, ns, secret := tenantNamespace(t, "sharded")
	ctx := context.Background()
	a, b := backend(ns.Name, "pets-a", "a"), backend(ns.Name, "pets-b", "b")
	for _, o := range []client.Object{a, b} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	stopA := startShard(t, "apimsync.io/shard=a")
	defer stopA()
	eventually(t, func() string { return synced(a) })
	time.Sleep(3 * time.Second)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	if len(b.Finalizers) > 0 || len(b.Status.Conditions) > 0 || b.Status.BackendID != 0 {
		t.Errorf("shard a touched shard b's Backend: finalizers %v, status %+v", b.Finalizers, b.Status)
	}
	if got := sim.Count("acme", simulator.KindBackendAPIs); got != 1 {
		t.Errorf("%d backends in 3scale with only shard a running, want 1", got)
	}
	finalizerA := controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{"apimsync.io/shard": "a"}))
	finalizerB := controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{"apimsync.io/shard": "b"}))
	secretHas := func(want ...string) func() string {
		return func() string {
			var s corev1.Secret
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &s); err != nil {
				return err.Error()
			}
			got := slices.Sorted(slices.Values(s.Finalizers))
			if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				return fmt.Sprintf("Secret finalizers %v, want %v", got, want)
			}
			return ""
		}
	}
	eventually(t, secretHas(finalizerA))

	stopB := startShard(t, "apimsync.io/shard=b")
	defer stopB()
	eventually(t, func() string { return synced(b) })
	eventually(t, secretHas(finalizerA, finalizerB))

	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() string {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), a); err == nil {
			return "shard a's Backend is still there"
		}
		return ""
	})
	eventually(t, secretHas(finalizerB))
	if msg := synced(b); msg != "" {
		t.Error(msg)
	}
	if got := sim.Count("acme", simulator.KindBackendAPIs); got != 1 {
		t.Errorf("%d backends in 3scale after deleting shard a's, want shard b's 1", got)
	}
}

// TestMoveBetweenShardsCostsNoCall: a Synced Product and its Backend relabelled from shard a to shard b
// one after the other are taken over from their status, as a restarted manager takes them: no call to
// 3scale, and no Orphan written meanwhile, by b (the Product before its Backend) nor by a (the Product
// after its Backend left).
func TestMoveBetweenShardsCostsNoCall(t *testing.T) {
	sim, ns, secret := tenantNamespace(t, "moved")
	ctx := context.Background()
	pets := backend(ns.Name, "pets", "a")
	product := func(name string) *v1alpha1.Product {
		return &v1alpha1.Product{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name, Labels: map[string]string{"apimsync.io/shard": "a"}},
			Spec: v1alpha1.ProductSpec{Name: name, BackendUsages: map[string]v1alpha1.BackendUsageSpec{"pets": {Path: "/"}}}}
	}
	shop, store := product("shop"), product("store")
	for _, o := range []client.Object{pets, shop, store} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	stopA, stopB := startShard(t, "apimsync.io/shard=a"), startShard(t, "apimsync.io/shard=b")
	defer stopA()
	defer stopB()
	eventually(t, func() string { return synced(pets) })
	eventually(t, func() string { return syncedObject(store) })
	eventually(t, func() string { return syncedObject(shop) })
	time.Sleep(2 * time.Second)
	sim.ResetStats()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"apimsync.io/shard":"b"}}}`))
	move := func(o client.Object) {
		if err := env.Client.Patch(ctx, o, patch); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		for _, p := range []*v1alpha1.Product{shop, store} {
			if msg := syncedObject(p); msg != "" {
				t.Errorf("after %s moved: %s", o.GetName(), msg)
			}
		}
	}
	// shop before its backend (shard b sees it first), store after (shard a still holds it).
	move(shop)
	move(pets)
	move(store)
	finalizerB := controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{"apimsync.io/shard": "b"}))
	eventually(t, func() string {
		var s corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &s); err != nil {
			return err.Error()
		}
		if !slices.Contains(s.Finalizers, finalizerB) {
			return fmt.Sprintf("Secret finalizers %v, want shard b's", s.Finalizers)
		}
		return ""
	})
	time.Sleep(3 * time.Second)
	if st := sim.Stats(); st.Total != 0 {
		t.Errorf("%d calls to 3scale after the move, want 0: %+v", st.Total, st.Calls)
	}
}

// TestARetiredShardsFinalizerDoesNotKeepTheSecret: a shard stopped for good leaves its in-use finalizer on
// the provider-account Secret, which no live manager would remove. Once its objects are relabelled to
// shard b, deleting the Secret keeps it (and both finalizers) while b's Backend still reads it; deleting
// that Backend then cleans 3scale up, and b removes its own finalizer and the retired shard's: the Secret
// goes.
func TestARetiredShardsFinalizerDoesNotKeepTheSecret(t *testing.T) {
	sim, ns, secret := tenantNamespace(t, "retired")
	ctx := context.Background()
	b := backend(ns.Name, "pets", "a")
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	finalizerA := controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{"apimsync.io/shard": "a"}))
	finalizerB := controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{"apimsync.io/shard": "b"}))
	finalizers := func() ([]string, error) {
		var s corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &s)
		return slices.Sorted(slices.Values(s.Finalizers)), err
	}
	secretHas := func(want ...string) func() string {
		return func() string {
			if got, err := finalizers(); err != nil || !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				return fmt.Sprintf("Secret finalizers %v (%v), want %v", got, err, want)
			}
			return ""
		}
	}
	stopA := startShard(t, "apimsync.io/shard=a")
	eventually(t, func() string { return synced(b) })
	eventually(t, secretHas(finalizerA))
	stopA() // retired: its finalizer stays

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	b.Labels["apimsync.io/shard"] = "b"
	if err := env.Client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	stopB := startShard(t, "apimsync.io/shard=b")
	defer stopB()
	eventually(t, secretHas(finalizerA, finalizerB))

	if err := env.Client.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // shard b looks at the Secret being deleted: its Backend still reads it
	if msg := secretHas(finalizerA, finalizerB)(); msg != "" {
		t.Errorf("while shard b's Backend reads the Secret being deleted: %s", msg)
	}
	if err := env.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() string {
		if got, err := finalizers(); err == nil {
			return fmt.Sprintf("the Secret is still there, finalizers %v", got)
		}
		return ""
	})
	if got := sim.Count("acme", simulator.KindBackendAPIs); got != 0 {
		t.Errorf("%d backends left in 3scale, want the Backend's deleted", got)
	}
}
