package controllers

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Sharding: several managers can split the objects between them with disjoint label selectors (for
// example set by an external sharder such as kubernetes-controller-sharding, or by hand per team). Each
// manager's cache holds only the apimsync objects its selector matches, so it never reads, writes or
// cleans up another shard's objects. Secrets and ConfigMaps are not filtered (shards may share a
// provider account); each shard keeps its own in-use finalizer on them (SecretInUseFinalizerFor).
// A shard only sees its own objects, so the one-owner check works within a shard: give shards that share
// a tenant different system names (shard by team, each with its own tenant, is the usual way).

// cacheOptions returns the cache options of a manager watching the given namespaces (all when empty)
// and, when selector is not empty, only the apimsync objects it matches.
func cacheOptions(namespaces []string, selector labels.Selector) cache.Options {
	var opts cache.Options
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, n := range namespaces {
			opts.DefaultNamespaces[n] = cache.Config{}
		}
	}
	if selector != nil && !selector.Empty() {
		opts.ByObject = map[client.Object]cache.ByObject{}
		for _, obj := range rowObjects() {
			opts.ByObject[obj] = cache.ByObject{Label: selector}
		}
	}
	return opts
}

// SecretInUseFinalizerFor is the in-use finalizer a manager puts on Secrets: SecretInUseFinalizer, or,
// for a shard (a manager with a label selector), one of its own, so that shards never remove each
// other's.
func SecretInUseFinalizerFor(selector labels.Selector) string {
	if id := ShardID(selector); id != "" {
		return SecretInUseFinalizer + "-" + id
	}
	return SecretInUseFinalizer
}

// ShardID names the shard a selector makes (a short hash of it), "" for a manager of everything. It
// keeps shards' finalizers and leader-election leases apart.
func ShardID(selector labels.Selector) string {
	if selector == nil || selector.Empty() {
		return ""
	}
	sum := sha256.Sum256([]byte(selector.String()))
	return hex.EncodeToString(sum[:])[:10]
}
