// Package kit is the toolkit the rooms of controllers/ share (the OpenAPI generator, the kinds): reading
// what objects name in Secrets and ConfigMaps, and small helpers on values. It never imports a kind.
package kit
