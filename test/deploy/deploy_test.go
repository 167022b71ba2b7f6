// Package deploy checks the production manifests: config/default renders with kustomize and every
// object is accepted by a real kube-apiserver (server-side apply, dry run).
package deploy

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/test/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(env *testenv.Env) { k8s = env.Client }))
}

func render(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.Render("config/default")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestDefaultConfigAppliesServerSide renders config/default and applies every object with a server-side
// dry run.
func TestDefaultConfigAppliesServerSide(t *testing.T) {
	objs := render(t)
	ctx := context.Background()
	// The namespace is created for real, so that the namespaced objects can be dry-run into it.
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apimsync-system"}}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, u := range objs {
		kinds[u.GetKind()] = true
		if u.GetKind() == "Namespace" {
			continue
		}
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("apimsync-test"), client.ForceOwnership, client.DryRunAll); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, k := range []string{"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount", "Deployment", "Service", "Namespace"} {
		if !kinds[k] {
			t.Errorf("config/default has no %s", k)
		}
	}
}

// TestSecretsRBACIsLeastPrivilege: on Secrets the manager may only get, list, watch and patch (the in-use
// finalizer), create, update and delete (the credentials Secrets Applications own, deleted when their
// product is retired); never deletecollection, never escalate.
func TestSecretsRBACIsLeastPrivilege(t *testing.T) {
	for _, u := range render(t) {
		if u.GetKind() != "ClusterRole" && u.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
			t.Fatal(err)
		}
		for _, rule := range role.Rules {
			if !slices.Contains(rule.Resources, "secrets") && !slices.Contains(rule.Resources, "*") {
				continue
			}
			for _, verb := range rule.Verbs {
				if !slices.Contains([]string{"get", "list", "watch", "patch", "create", "update", "delete"}, verb) {
					t.Errorf("%s %s grants %q on secrets", u.GetKind(), u.GetName(), verb)
				}
			}
		}
	}
}

// TestManagerRunsRestricted: the Deployment's pod passes the restricted Pod Security Standard essentials.
func TestManagerRunsRestricted(t *testing.T) {
	for _, u := range render(t) {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			cm := c.(map[string]any)
			if v, _, _ := unstructured.NestedBool(cm, "securityContext", "allowPrivilegeEscalation"); v {
				t.Errorf("container %v allows privilege escalation", cm["name"])
			}
			if v, ok, _ := unstructured.NestedBool(cm, "securityContext", "readOnlyRootFilesystem"); !ok || !v {
				t.Errorf("container %v has a writable root filesystem", cm["name"])
			}
			for _, probe := range []string{"livenessProbe", "readinessProbe"} {
				if _, ok := cm[probe]; !ok {
					t.Errorf("container %v has no %s", cm["name"], probe)
				}
			}
		}
		if v, _, _ := unstructured.NestedBool(u.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot"); !v {
			t.Errorf("the manager pod may run as root")
		}
	}
}

// TestMetricsAreServedSecurely: config/default serves the manager's metrics with TLS behind the
// cluster's authentication and authorization (--metrics-secure), on the port its Service targets, and
// lets the manager's ServiceAccount create the TokenReviews and SubjectAccessReviews that this takes; a
// reader role exists for scrapers.
func TestMetricsAreServedSecurely(t *testing.T) {
	objs := render(t)
	var account, namespace, metricsAddr string
	secure := false
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		namespace = u.GetNamespace()
		account, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "serviceAccountName")
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
			for _, a := range args {
				secure = secure || a == "--metrics-secure" || a == "--metrics-secure=true"
				if v, ok := strings.CutPrefix(a, "--metrics-bind-address="); ok {
					metricsAddr = v
				}
			}
		}
	}
	if !secure || metricsAddr == "" || metricsAddr == "0" {
		t.Fatalf("the manager runs with metrics secure=%v on %q; want --metrics-secure and an address", secure, metricsAddr)
	}
	_, port, _ := strings.Cut(metricsAddr, ":")
	served := false
	for _, u := range objs {
		if u.GetKind() != "Service" {
			continue
		}
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		for _, p := range ports {
			target := fmt.Sprint(p.(map[string]any)["targetPort"])
			served = served || target == port || target == "metrics"
		}
	}
	if !served {
		t.Errorf("no Service targets the metrics port %s", port)
	}
	mayCreate := map[string]bool{}
	roles := map[string]rbacv1.ClusterRole{}
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" {
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
				t.Fatal(err)
			}
			roles[role.Name] = role
		}
	}
	readable := false
	for _, role := range roles {
		for _, r := range role.Rules {
			readable = readable || (slices.Contains(r.NonResourceURLs, "/metrics") && slices.Contains(r.Verbs, "get"))
		}
	}
	for _, u := range objs {
		if u.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.ClusterRoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == account && s.Namespace == namespace
		}) {
			continue
		}
		for _, r := range roles[b.RoleRef.Name].Rules {
			for _, res := range r.Resources {
				if slices.Contains(r.Verbs, "create") {
					mayCreate[res] = true
				}
			}
		}
	}
	for _, res := range []string{"tokenreviews", "subjectaccessreviews"} {
		if !mayCreate[res] {
			t.Errorf("the manager's ServiceAccount %s/%s may not create %s, which secure metrics need", namespace, account, res)
		}
	}
	if !readable {
		t.Errorf("no ClusterRole grants get on /metrics for scrapers")
	}
}
