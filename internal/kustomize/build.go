// Package kustomize builds kustomization directories into objects, with kustomize's own library: the
// plugin's `diff -k` and the tests' rendering of config/ and samples/ share it.
package kustomize

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Build builds the kustomization of dir, as `kustomize build` does, into unstructured objects.
func Build(dir string) ([]*unstructured.Unstructured, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("cannot build %s: %v", dir, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	out := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, r := range resMap.Resources() {
		// A JSON round trip gives the value types Kubernetes' unstructured code expects (int64, not int).
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
