package controllers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// roomOf is the folder of a kind of the table, under controllers/kinds.
func roomOf(kind string) string {
	if kind == "CustomPolicyDefinition" {
		return "kinds/custompolicy"
	}
	return "kinds/" + strings.ToLower(kind)
}

// TestNoFileOutsideAKindsRoomNamesItsTypes: a kind's Go types (its API types Kind, KindList, KindSpec,
// KindStatus, and its folder's package) are named only in its folder, the table (table.go) and the
// folders of the kinds it is related to by the reference graph — those it references, directly or
// through others, and those that reference it (a Backend deploys the Products using it). The OpenAPI
// generator names what it generates, and the test harness (internal/harness, never run by the manager)
// builds fixtures of every kind. Adding a kind is its folder and one row: nothing else names it.
func TestNoFileOutsideAKindsRoomNamesItsTypes(t *testing.T) {
	refs := map[string][]string{} // kind -> kinds it references
	for _, r := range referenceGraph {
		refs[r.From] = append(refs[r.From], r.To)
	}
	// may tells whether the folder of kind from may name kind to.
	may := func(from, to string) bool {
		seen := map[string]bool{}
		var reach func(k string) bool
		reach = func(k string) bool {
			if k == to {
				return true
			}
			if seen[k] {
				return false
			}
			seen[k] = true
			return slices.ContainsFunc(refs[k], reach)
		}
		return reach(from) || slices.Contains(refs[to], from)
	}
	generated := map[string]bool{"Backend": true, "Product": true, "ActiveDoc": true, "ApplicationPlan": true} // by the OpenAPI generator
	folderKind := map[string]string{}
	for _, k := range kinds {
		folderKind[roomOf(k.Name())] = k.Name()
	}

	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		dir := filepath.ToSlash(filepath.Dir(path))
		named := map[string]bool{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, "github.com/apimsync/apimsync/controllers/kinds/"); ok {
				for _, k := range kinds {
					if roomOf(k.Name()) == "kinds/"+rest {
						named[k.Name()] = true
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "v1alpha1" {
				for _, k := range kinds {
					if name := k.Name(); slices.Contains([]string{name, name + "List", name + "Spec", name + "Status"}, sel.Sel.Name) {
						named[name] = true
					}
				}
			}
			return true
		})
		for kind := range named {
			switch own := folderKind[dir]; {
			case path == "table.go", dir == "internal/harness", dir == roomOf(kind), own != "" && may(own, kind),
				dir == "openapi" && generated[kind]:
			default:
				t.Errorf("%s names the %s kind's types: only its folder (%s), the table and related kinds' folders may", path, kind, roomOf(kind))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("checked %d files, want the controllers' (is the test run from controllers/?)", checked)
	}
}

// TestEveryKindIsInTheRBACLists: the RBAC lists kept by hand (controller-gen reads the markers in
// manager.go; the namespaced install, the chart and the tenant-admin role are written out) name every
// kind of the table, with its status and finalizers where the manager needs them: a new kind's row is
// not enough for the manager to be allowed to sync it.
func TestEveryKindIsInTheRBACLists(t *testing.T) {
	files := map[string][]string{ // file -> the suffixes each kind's resource must appear with
		"../config/rbac/role.yaml":                       {"", "/status", "/finalizers"},
		"../config/namespaced/watched/role.yaml":         {"", "/status", "/finalizers"},
		"../charts/apimsync/templates/manager_rbac.yaml": {"", "/status", "/finalizers"},
		"../config/rbac/tenant_admin_role.yaml":          {"", "/status"},
	}
	for file, suffixes := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		words := map[string]bool{}
		for _, w := range regexp.MustCompile(`[a-z]+(/[a-z]+)?`).FindAllString(string(raw), -1) {
			words[w] = true
		}
		for _, k := range kinds {
			if file == "../config/rbac/tenant_admin_role.yaml" && k.Name() == "Tenant" {
				continue // tenants are the cluster admin's, not a tenant admin's
			}
			plural := strings.ToLower(k.Name())
			if !strings.HasSuffix(plural, "s") { // TenantSettings: tenantsettings
				plural += "s"
			}
			for _, suffix := range suffixes {
				if !words[plural+suffix] {
					t.Errorf("%s does not name %s%s: add the %s kind's resources to it", file, plural, suffix, k.Name())
				}
			}
		}
	}
}
