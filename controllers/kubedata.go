package controllers

import (
	"context"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Secrets and ConfigMaps: a cluster holds many of them (Helm keeps every release in a Secret of up to a
// MiB), and apimsync reads a handful. So the manager never caches their data:
//
//   - its cache watches them metadata-only (PartialObjectMetadata), without managedFields and without
//     kubectl's last-applied-configuration annotation (which holds a Secret's data in clear): enough to
//     wake the objects that read one, and to know whether it exists and at which resourceVersion;
//   - their data is read on demand from the API server by the objects that reference them (dataReader),
//     and kept, by resourceVersion, in a bounded LRU: a Secret is read again only after it changed;
//   - the manager's client never reads them through the cache (client.CacheOptions.DisableFor), so no
//     code path can start a full informer on them by accident.

// dataKinds are the kinds whose data is never cached by the manager.
func dataKinds() []client.Object { return []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} }

// isDataKind reports whether obj is a Secret or a ConfigMap.
func isDataKind(obj client.Object) bool {
	switch obj.(type) {
	case *corev1.Secret, *corev1.ConfigMap:
		return true
	}
	return false
}

// ManagerOptions returns o with the cache and client options apimsync's controllers need: the watched
// namespaces (all when empty), the shard's label selector (none when nil or empty), metadata-only
// Secrets and ConfigMaps, and no managedFields in the cache.
func ManagerOptions(o ctrl.Options, namespaces []string, selector labels.Selector) ctrl.Options {
	o.Cache = cacheOptions(namespaces, selector)
	o.Cache.DefaultTransform = stripForCache
	o.Client.Cache = &client.CacheOptions{DisableFor: dataKinds()}
	return o
}

// stripForCache is the cache's transform: managedFields are never read by apimsync; the metadata of
// Secrets and ConfigMaps also loses kubectl's last-applied-configuration annotation, which is their data.
func stripForCache(in any) (any, error) {
	if m, ok := in.(*metav1.PartialObjectMetadata); ok && m.Annotations != nil {
		delete(m.Annotations, corev1.LastAppliedConfigAnnotation)
	}
	return cache.TransformStripManagedFields()(in)
}

// dataReader is the manager's reader with Secrets and ConfigMaps read as the comment above says; every
// other kind comes from the embedded reader (the manager's cache). Safe for concurrent use.
type dataReader struct {
	client.Reader
	// meta reads the metadata-only cache of Secrets and ConfigMaps; api reads the API server.
	meta, api client.Reader
	read      *lru.Cache[dataKey, client.Object]
}

type dataKey struct {
	kind string
	name types.NamespacedName
}

// newDataReader returns a dataReader keeping the data of at most size Secrets and ConfigMaps.
func newDataReader(objects, meta, api client.Reader, size int) *dataReader {
	read, _ := lru.New[dataKey, client.Object](max(size, 1))
	return &dataReader{Reader: objects, meta: meta, api: api, read: read}
}

// Get implements client.Reader. A Secret or ConfigMap the metadata cache does not hold is NotFound
// without a call; one it holds at the resourceVersion last read comes from memory; otherwise it is read
// from the API server.
func (r *dataReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var kind string
	switch obj.(type) {
	case *corev1.Secret:
		kind = "Secret"
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	default:
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	if err := r.meta.Get(ctx, key, m); err != nil {
		return err
	}
	k := dataKey{kind: kind, name: key}
	if kept, ok := r.read.Get(k); ok && kept.GetResourceVersion() == m.ResourceVersion {
		return copyData(kept, obj)
	}
	if err := r.api.Get(ctx, key, obj, opts...); err != nil {
		if apierrors.IsNotFound(err) {
			r.read.Remove(k)
		}
		return err
	}
	r.read.Add(k, obj.DeepCopyObject().(client.Object))
	return nil
}

// copyData copies a kept Secret or ConfigMap into obj, of the same type.
func copyData(kept, obj client.Object) error {
	switch o := obj.(type) {
	case *corev1.Secret:
		kept.(*corev1.Secret).DeepCopyInto(o)
	case *corev1.ConfigMap:
		kept.(*corev1.ConfigMap).DeepCopyInto(o)
	default:
		return fmt.Errorf("no kept data for %T", obj)
	}
	return nil
}
