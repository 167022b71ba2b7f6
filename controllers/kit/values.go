package kit

// Small helpers on values: maps in order, strings cut, ids as text.

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
)

// SortedKeys returns the keys of m in order, for deterministic writes.
func SortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// CutString returns s cut to at most n bytes.
func CutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Itoa64 formats an id.
func Itoa64(i int64) string { return strconv.FormatInt(i, 10) }
