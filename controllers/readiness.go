package controllers

import (
	"fmt"
	"net/http"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/apimsync/apimsync/controllers/kit"
)

// cachesSynced is the manager's readiness check: ready once the cache holds every type the controllers
// watch (watchedTypes), its informers made and synced, which is when the controllers start their
// workers. Until then an object applied waits for a manager that said it was ready (a rollout, a
// benchmark's clock): seconds when the API server asks the informers to retry. Every replica's cache
// runs, the leader's or not, so a replica waiting for the lease is ready too.
func cachesSynced(c ctrlcache.Informers, watched []client.Object) healthz.Checker {
	var synced atomic.Bool
	return func(req *http.Request) error {
		if synced.Load() {
			return nil
		}
		for _, obj := range watched {
			inf, err := c.GetInformer(req.Context(), obj, ctrlcache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return fmt.Errorf("the cache of %s is not synced yet", typeName(obj))
			}
		}
		synced.Store(true)
		return nil
	}
}

// watchedTypes are the types the controllers watch: every row's kind (the OpenAPI generator's too), the
// metadata of Secrets and ConfigMaps, and APIManagers when their CRD is installed.
func watchedTypes(installations bool) []client.Object {
	out := rowObjects()
	for _, gvk := range []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("ConfigMap")} {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		out = append(out, m)
	}
	if installations {
		manager := &unstructured.Unstructured{}
		manager.SetGroupVersionKind(kit.APIManagerGVK)
		out = append(out, manager)
	}
	return out
}

// typeName names obj's type for a message: its kind when it says it, else its Go type.
func typeName(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}
