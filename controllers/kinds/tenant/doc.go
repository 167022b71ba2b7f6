// Package tenant syncs Tenants: 3scale provider accounts made through the master API, and the
// provider-account Secret each writes for the objects that use it.
package tenant
