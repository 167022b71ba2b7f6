// Package backend syncs Backends: 3scale backend APIs with their metrics, methods and mapping rules.
package backend
