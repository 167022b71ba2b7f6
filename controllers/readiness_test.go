package controllers_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// The manager is ready only once its cache holds every type its controllers watch: before, an object
// applied waits seconds for a manager that said it was ready.
func TestReadyOnceTheCachesSynced(t *testing.T) {
	c, err := ctrlcache.New(harness.Env.Config, ctrlcache.Options{Scheme: harness.Env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	check := controllers.CachesSynced(c, controllers.WatchedTypes(false))
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err == nil {
		t.Fatal("ready before the cache started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	deadline := time.Now().Add(harness.WaitTimeout)
	for err = check(req); err != nil; err = check(req) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready %s after the cache started: %v", harness.WaitTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	openAPI := false
	for _, obj := range controllers.WatchedTypes(false) {
		_, isOpenAPI := obj.(*v1alpha1.OpenAPI)
		openAPI = openAPI || isOpenAPI
		inf, err := c.GetInformer(ctx, obj)
		if err != nil || !inf.HasSynced() {
			t.Fatalf("ready while the cache of %T is not synced (%v)", obj, err)
		}
	}
	if !openAPI { // issue 43, item 4: the OpenAPI generator's own type was left out
		t.Errorf("the readiness check leaves out OpenAPIs, which the OpenAPI controller watches")
	}
}
