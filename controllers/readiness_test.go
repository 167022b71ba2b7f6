package controllers

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// The manager is ready only once its cache holds every type its controllers watch: before, an object
// applied waits seconds for a manager that said it was ready.
func TestReadyOnceTheCachesSynced(t *testing.T) {
	c, err := ctrlcache.New(env.Config, ctrlcache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	check := cachesSynced(c, watchedTypes(false))
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err == nil {
		t.Fatal("ready before the cache started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	deadline := time.Now().Add(waitTimeout)
	for err = check(req); err != nil; err = check(req) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready %s after the cache started: %v", waitTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	openAPI := false
	for _, obj := range watchedTypes(false) {
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
