package controllers

// Small helpers on values: maps in order, strings cut, ids as text.

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
)

// sortedKeys returns the keys of m in order, for deterministic writes.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// cutString returns s cut to at most n bytes.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// itoa64 formats an id.
func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
