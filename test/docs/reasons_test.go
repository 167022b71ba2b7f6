package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReasonsAreCommentedAndDocumented: every reason of apimsync's conditions and Events is a constant of
// apis/capabilities/v1alpha1/reasons.go with a comment that says when it is used, and docs/status.md tells
// every one of them; every reason docs/status.md's table of reasons names is one of them.
func TestReasonsAreCommentedAndDocumented(t *testing.T) {
	file := filepath.Join(root, "apis", "capabilities", "v1alpha1", "reasons.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{} // value -> constant
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			v := spec.(*ast.ValueSpec)
			for i, name := range v.Names {
				if !strings.HasPrefix(name.Name, "Reason") {
					t.Errorf("%s: constant %s is not a reason", file, name.Name)
					continue
				}
				if v.Doc == nil || !strings.HasPrefix(v.Doc.Text(), name.Name+" ") && !strings.HasPrefix(v.Doc.Text(), name.Name+":") {
					t.Errorf("%s: %s has no comment saying when it is used", file, name.Name)
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: %s is not a string literal", file, name.Name)
					continue
				}
				value, _ := strconv.Unquote(lit.Value)
				if other, dup := reasons[value]; dup {
					t.Errorf("%s: %s and %s are both %q", file, other, name.Name, value)
				}
				reasons[value] = name.Name
			}
		}
	}
	if len(reasons) < 50 {
		t.Fatalf("%d reasons found in %s, want all of them", len(reasons), file)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "status.md"))
	if err != nil {
		t.Fatal(err)
	}
	status := string(raw)
	for value, name := range reasons {
		if !strings.Contains(status, "`"+value+"`") {
			t.Errorf("docs/status.md does not tell %s (`%s`)", name, value)
		}
	}
	// The table of reasons: | state | reason | what to do |.
	row := regexp.MustCompile(`^\| *(Synced|InSync|Orphan|Invalid)[^|]*\|([^|]*)\|`)
	quoted := regexp.MustCompile("`([A-Za-z]+)`")
	rows := 0
	for _, line := range strings.Split(status, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
			if _, ok := reasons[q[1]]; !ok {
				t.Errorf("docs/status.md names the reason `%s`, which apis/capabilities/v1alpha1/reasons.go does not have", q[1])
			}
		}
	}
	if rows < 20 {
		t.Errorf("docs/status.md: %d rows of the table of reasons found, want the table", rows)
	}
}
