package kit

// Helpers over the answers of the 3scale client.

import tsclient "github.com/apimsync/apimsync/client"

// IgnoreNotFound drops a 404 of 3scale: what was to be deleted or read is already gone.
func IgnoreNotFound(err error) error {
	if tsclient.IsNotFound(err) {
		return nil
	}
	return err
}

// Deref turns a (pointer, error) answer into a value.
func Deref[T any](v *T, err error) (T, error) {
	if err != nil || v == nil {
		var zero T
		return zero, err
	}
	return *v, nil
}
