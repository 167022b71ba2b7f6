// Package controllers wires apimsync's controllers into a controller-runtime manager, all derived from one
// table of kinds (table.go): each row names a kind, how its syncer is built and what it watches beyond the
// reference graph (table.go, refgraph.go: creation and deletion orders, dependants, users, owners' fates).
// SetupWithManager (manager.go) registers the field indexes (indexes.go), one engine.Reconciler per row
// with its watches (watches.go), the OpenAPI generator's controller (controllers/openapi) and the in-use
// finalizer of provider-account Secrets (secret_controller.go); the manager is ready once its caches hold
// every watched type (readiness.go) and labels its remote-call metrics by tenant (metrics.go). The
// manager's cache of Secrets and ConfigMaps (kubedata.go), shards (sharding.go) and what kubectl apimsync
// runs over the table (kubectl.go: diff and export) live here too. The generic sync engine is controllers/engine, what every kind shares
// controllers/kit, and each kind's syncer its own room under controllers/kinds.
package controllers
