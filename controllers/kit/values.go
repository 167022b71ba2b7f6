package kit

// Small helpers on values: maps in order, strings cut, ids as text.

import (
	"cmp"
	"encoding/json"
	"maps"
	"reflect"
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

// JSONEqual tells whether two JSON documents mean the same (an empty one is {}).
func JSONEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 {
		a = json.RawMessage(`{}`)
	}
	if len(b) == 0 {
		b = json.RawMessage(`{}`)
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
