package plugin

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// SecretsFile holds the templates of the Secrets to fill in; it is not in the kustomization's resources.
const SecretsFile = "secrets-to-fill.yaml"

// WriteDir writes an export as a kustomize directory, its kustomization.yaml opened by the comment
// lines of header, and returns the files written: one YAML file per Exported.Files entry, the Secret
// templates (SecretsFile, kept out of git and of the resources), the files of Exported.Tree with a
// configMapGenerator per Generator (no hash suffix: the objects name the ConfigMaps).
func WriteDir(dir string, e *Exported, header []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(e.Files))
	for name := range e.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	var resources []string
	for _, name := range names {
		file := name + ".yaml"
		if err := writeObjects(filepath.Join(dir, file), e.Files[name], 0o644); err != nil {
			return nil, err
		}
		resources = append(resources, file)
	}
	written := slices.Clone(resources)
	if len(e.Templates) > 0 {
		objs := make([]client.Object, 0, len(e.Templates))
		for _, s := range e.Templates {
			objs = append(objs, s)
		}
		// Filled in, it holds credentials: readable by its owner only, and kept out of git.
		if err := writeObjects(filepath.Join(dir, SecretsFile), objs, 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(SecretsFile+"\n"), 0o644); err != nil {
			return nil, err
		}
		written = append(written, SecretsFile, ".gitignore")
	}
	var k strings.Builder
	for _, line := range header {
		k.WriteString("# " + line + "\n")
	}
	if len(e.Templates) > 0 {
		fmt.Fprintf(&k, "# Create the Secrets of %s (templates: keys, no values) before applying, from your secret store\n"+
			"# (an ExternalSecret, a SealedSecret) or by hand; never commit that file filled in (.gitignore lists it).\n", SecretsFile)
	}
	for _, l := range e.Left {
		fmt.Fprintf(&k, "# Not exported: %s\n", l)
	}
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		fmt.Fprintf(&k, "  - %s\n", r)
	}
	for _, p := range slices.Sorted(maps.Keys(e.Tree)) {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, e.Tree[p], 0o644); err != nil {
			return nil, err
		}
		written = append(written, p)
	}
	if len(e.Generators) > 0 {
		k.WriteString("configMapGenerator:\n")
		for _, g := range e.Generators {
			fmt.Fprintf(&k, "  - name: %s\n    files:\n", g.Name)
			for _, f := range g.Files {
				fmt.Fprintf(&k, "      - %s\n", f)
			}
		}
		k.WriteString("generatorOptions:\n  disableNameSuffixHash: true # the objects name the ConfigMaps\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k.String()), 0o644); err != nil {
		return nil, err
	}
	return append(written, "kustomization.yaml"), nil
}

// writeObjects writes objects as a YAML stream, without the fields the API server fills in.
func writeObjects(path string, objs []client.Object, mode os.FileMode) error {
	var b strings.Builder
	for i, obj := range objs {
		raw, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return err
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		if raw, err = yaml.Marshal(m); err != nil {
			return err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(raw)
	}
	return os.WriteFile(path, []byte(b.String()), mode)
}
