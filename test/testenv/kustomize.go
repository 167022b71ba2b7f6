package testenv

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apimsync/apimsync/internal/kustomize"
)

// Render builds the kustomization in dir (relative to the repository root) with the kustomize Go API
// and returns its objects.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return kustomize.Build(filepath.Join(root, dir))
}
