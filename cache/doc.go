// Package cache keeps what apimsync knows of 3scale between reconciles, so that an unchanged object
// costs no remote call: an LRU of remote snapshots (Snapshots) and the per-tenant pool of API clients
// (ClientPool), each client with its own rate limit and cap on requests in flight.
package cache
