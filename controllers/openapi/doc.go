// Package openapi is the controller of the OpenAPI kind: it makes no call to 3scale, but turns an OpenAPI
// document (inline, or from a ConfigMap or Secret) into the specs of a Backend, a Product and an ActiveDoc
// (internal/openapiimport), creates them or puts them back as their controller owner — all or nothing —
// and sums their sync states up into its own conditions. The engine syncs what it generates like any
// other object.
package openapi
