package kit

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ForEachItem calls f for each item of list.
func ForEachItem(list client.ObjectList, f func(client.Object)) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, it := range items {
		if o, ok := it.(client.Object); ok {
			f(o)
		}
	}
	return nil
}
