package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/test/testenv"
)

var (
	k8s        client.Client
	kubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(env *testenv.Env) {
		k8s = env.Client
		user, err := env.Environment.AddUser(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			panic(err)
		}
		raw, err := user.KubeConfig()
		if err != nil {
			panic(err)
		}
		dir, err := os.MkdirTemp("", "kubectl-apimsync")
		if err != nil {
			panic(err)
		}
		kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
			panic(err)
		}
	}))
}

// run runs `kubectl apimsync args...` and returns what it printed and its error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	cmd.SetContext(context.Background())
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

// namespaceWith makes a namespace with a Synced Backend on tenant t1 and an Invalid OpenAPI.
func namespaceWith(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plugin-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "pets"},
		Spec: v1alpha1.BackendSpec{Name: "Pets", PrivateBaseURL: "https://pets.internal"}}
	o := &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"}, Spec: v1alpha1.OpenAPISpec{Document: "{}"}}
	for _, obj := range []client.Object{b, o} {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	synced := metav1.NewTime(time.Now().Add(-90 * time.Second))
	b.Status.TenantHost, b.Status.BackendID, b.Status.LastSyncTime = "acme-admin.example.com", 42, &synced
	b.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionTrue, Reason: "Synced", Message: "in sync", LastTransitionTime: synced}}
	o.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInvalid, Status: metav1.ConditionTrue, Reason: "InvalidDocument", Message: "not a valid\nOpenAPI document", LastTransitionTime: synced}}
	for _, obj := range []client.Object{b, o} {
		if err := k8s.Status().Update(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return ns.Name
}

// TestStatusTable: one table per tenant, with state, reason, 3scale id, last sync and message.
func TestStatusTable(t *testing.T) {
	ns := namespaceWith(t)
	out, err := run(t, "status", "-n", ns)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"TENANT acme-admin.example.com", "Backend  pets  Synced  Synced  42", "42", "ago", "TENANT (no tenant yet)",
		"OpenAPI  catalog  Invalid  InvalidDocument", "not a valid OpenAPI document"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table has no %q:\n%s", want, out)
		}
	}
}

// TestStatusJSON: -o json gives every object with its fields; an unknown format is refused.
func TestStatusJSON(t *testing.T) {
	ns := namespaceWith(t)
	out, err := run(t, "status", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got struct{ Items []statusRow }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Items) != 2 || got.Items[1].Kind != "Backend" || got.Items[1].RemoteID != 42 || got.Items[1].State != "Synced" {
		t.Errorf("items %+v", got.Items)
	}
	_, err = run(t, "status", "-n", ns, "-o", "wide")
	if err == nil || !strings.Contains(err.Error(), `unknown output format "wide"`) || exitCode(err) != 1 {
		t.Errorf("-o wide: %v, want a clear refusal and exit code 1", err)
	}
}
