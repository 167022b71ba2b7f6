package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// TestRefusedTokenIsInvalidUntilTheSecretChanges: a token 3scale refuses makes the object Invalid with no
// retry loop; a rotated token in the Secret takes effect within seconds.
func TestRefusedTokenIsInvalidUntilTheSecretChanges(t *testing.T) {
	ns := newNamespace(t)
	adminURL, token := tenantOf(ns)
	secret := providerSecret(ns, v1alpha1.DefaultProviderAccountSecret, adminURL, "revoked-"+ns)
	backend := petsBackend(ns)
	create(t, secret, backend)
	waitReason(t, backend, v1alpha1.ConditionInvalid, engine.ReasonUnauthorized)
	before := remoteCalls(ns)
	time.Sleep(2 * time.Second)
	if got := remoteCalls(ns) - before; got != 0 {
		t.Errorf("a refused token made %d more remote calls while nothing changed, want 0", got)
	}

	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	secret.StringData = map[string]string{"token": token}
	start := time.Now()
	if err := k8s.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	waitState(t, v1alpha1.ConditionSynced, backend)
	t.Logf("Synced %s after the token was rotated", time.Since(start).Round(time.Millisecond))
}

// TestMetrics: remote calls are counted by tenant, verb, endpoint template and code, and objects by kind
// and state.
func TestMetrics(t *testing.T) {
	ns := newNamespace(t)
	backend := petsBackend(ns)
	create(t, defaultSecret(ns), backend)
	waitState(t, v1alpha1.ConditionSynced, backend)
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
