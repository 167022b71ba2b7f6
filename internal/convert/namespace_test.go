package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestConvertWithoutNamespace: with NoNamespace, the objects of an input of one namespace are written
// without one (kubectl apply -n puts them anywhere), and the report's commands name none; an input of
// several namespaces keeps each object's, and the report says why.
func TestConvertWithoutNamespace(t *testing.T) {
	res, err := Convert(readInput(t, "activedocs.yaml"), Options{NoNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) == 0 {
		t.Fatal("nothing converted")
	}
	for _, obj := range res.Objects {
		if obj.GetNamespace() != "" {
			t.Errorf("%s %s is in namespace %q, want none", kindOf(obj), obj.GetName(), obj.GetNamespace())
		}
	}
	noted := false
	for _, f := range res.Findings {
		if strings.Contains(f.Message, " -n docs") {
			t.Errorf("a command of the report names the input's namespace: %s", f)
		}
		noted = noted || strings.Contains(f.Message, "written without a namespace")
	}
	if !noted {
		t.Errorf("the report does not say the objects have no namespace")
	}

	res, err = Convert(readInput(t, "backends.yaml", "accounts.yaml"), Options{NoNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	namespaces := map[string]bool{}
	for _, obj := range res.Objects {
		namespaces[obj.GetNamespace()] = true
	}
	if namespaces[""] || len(namespaces) != 2 {
		t.Errorf("an input of two namespaces gave objects in %v, want each in its own", namespaces)
	}
	if !hasFinding(res.Findings, Finding{Severity: SeverityInfo, Message: "keeps its namespace"}) {
		t.Errorf("the report does not say why the namespaces are kept:\n%s", findingsOf(res.Findings, ""))
	}
}

// TestSecretsRead: the Secrets a conversion reads are those holding ActiveDocs' and OpenAPIs'
// documents, in the namespace their reference names or else the object's.
func TestSecretsRead(t *testing.T) {
	var in []*unstructured.Unstructured
	for _, u := range readInput(t, "activedocs.yaml", "openapi.yaml") {
		if u.GetKind() != "Secret" {
			in = append(in, u)
		}
	}
	got := SecretsRead(in)
	for _, want := range []client.ObjectKey{{Namespace: "docs", Name: "myopenapi"}, {Namespace: "shared", Name: "shared-openapi"}, {Namespace: "apis", Name: "myopenapi"}} {
		found := false
		for _, k := range got {
			found = found || cmp.Equal(k, want)
		}
		if !found {
			t.Errorf("SecretsRead: %v, want %v among them", got, want)
		}
	}
	seen := map[client.ObjectKey]bool{}
	for _, k := range got {
		if seen[k] {
			t.Errorf("SecretsRead lists %v twice", k)
		}
		seen[k] = true
	}
}
