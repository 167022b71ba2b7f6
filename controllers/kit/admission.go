package kit

import (
	"sort"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// What an object's change is warned of at apply time (admission warnings): legal, but risky.

// RemovedNames are the names of old's metrics and methods that now's lack (old nil: none).
func RemovedNames(old, now map[string]v1alpha1.MetricSpec, oldMethods, nowMethods map[string]v1alpha1.MethodSpec) []string {
	var out []string
	for name := range old {
		if _, ok := now[name]; !ok {
			out = append(out, name)
		}
	}
	for name := range oldMethods {
		if _, ok := nowMethods[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
