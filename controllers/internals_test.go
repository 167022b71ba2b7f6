package controllers

// The internals the tests of package controllers_test reach (Go's export_test.go pattern): the envtest
// suites are an external package because they import the harness, which imports this package.
var (
	// ReferenceGraph is the graph itself, for a test to swap it.
	ReferenceGraph   = &referenceGraph
	FateOf           = fateOf
	KindNamed        = kindNamed
	SecretRefs       = secretRefs
	SecretUseChanged = secretUseChanged
	StripForCache    = stripForCache
	CachesSynced     = cachesSynced
	WatchedTypes     = watchedTypes
	// Kinds is the table of kinds.
	Kinds = kinds
)

// Reference is an edge of the reference graph.
type Reference = reference
