package deploy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/test/testenv"
)

func renderDir(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// clusterScoped are the core resources of config/rbac/role.yaml that no namespaced Role can grant.
var clusterScoped = map[string]bool{"namespaces": true}

// watchNamespaces returns the Deployment's --watch-namespaces, nil without it.
func watchNamespaces(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--watch-namespaces="); ok {
				return strings.Split(v, ",")
			}
		}
	}
	return nil
}

// TestNamespacedConfigAppliesServerSide renders config/namespaced and applies every object with a
// server-side dry run, into the namespaces it watches.
func TestNamespacedConfigAppliesServerSide(t *testing.T) {
	objs := renderDir(t, "config/namespaced")
	ctx := context.Background()
	watched := watchNamespaces(t, objs)
	if len(watched) == 0 {
		t.Fatal("config/namespaced runs the manager without --watch-namespaces")
	}
	for _, ns := range append([]string{"apimsync-system"}, watched...) {
		err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			continue
		}
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("apimsync-test"), client.ForceOwnership, client.DryRunAll); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// rule is one (API group, resource, verb) a role grants.
type rule struct{ group, resource, verb string }

func rulesOf(rules []rbacv1.PolicyRule) map[rule]bool {
	out := map[rule]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[rule{g, res, v}] = true
				}
			}
		}
	}
	return out
}

// ownWebhook reports whether r, of policy rule pr, is what the webhook's certificate rotation needs of the
// cluster-scoped webhook configurations: reading them, and writing its own one's caBundle only.
func ownWebhook(r rule, pr rbacv1.PolicyRule) bool {
	if r.group != "admissionregistration.k8s.io" || r.resource != "validatingwebhookconfigurations" {
		return false
	}
	return r.verb == "get" || r.verb == "list" || r.verb == "watch" || slices.Equal(pr.ResourceNames, []string{"apimsync-validating"})
}

// TestNamespacedRBAC: in config/namespaced the manager's ServiceAccount is bound to nothing cluster-wide
// but the metrics authentication (TokenReviews, SubjectAccessReviews) and its own webhook configuration's
// caBundle (ownWebhook); in each watched namespace its
// Roles grant exactly what the generated ClusterRole of config/rbac grants (so the two do not drift),
// and Secret delete only through apimsync-application-credentials.
func TestNamespacedRBAC(t *testing.T) {
	objs := renderDir(t, "config/namespaced")
	watched := watchNamespaces(t, objs)
	const sa, saNS = "apimsync-manager", "apimsync-system"
	isManager := func(s rbacv1.Subject) bool {
		return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == saNS
	}
	clusterRoles := map[string]rbacv1.ClusterRole{}
	roles := map[string]rbacv1.Role{} // by namespace/name
	var clusterBindings []rbacv1.ClusterRoleBinding
	var bindings []rbacv1.RoleBinding
	for _, u := range objs {
		var err error
		switch u.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r)
			clusterRoles[r.Name] = r
		case "Role":
			var r rbacv1.Role
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r)
			roles[r.Namespace+"/"+r.Name] = r
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b)
			clusterBindings = append(clusterBindings, b)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b)
			bindings = append(bindings, b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range clusterBindings {
		if !slices.ContainsFunc(b.Subjects, isManager) {
			continue
		}
		for _, pr := range clusterRoles[b.RoleRef.Name].Rules {
			for r := range rulesOf([]rbacv1.PolicyRule{pr}) {
				if r.group != "authentication.k8s.io" && r.group != "authorization.k8s.io" && !ownWebhook(r, pr) {
					t.Errorf("ClusterRoleBinding %s grants the manager %v cluster-wide", b.Name, r)
				}
			}
		}
	}

	// What the manager needs, as generated from the +kubebuilder:rbac markers.
	want := rulesOfFile(t, "config/rbac/role.yaml")
	for _, ns := range watched {
		got := map[rule]bool{}
		deleters := map[string]bool{}
		for _, b := range bindings {
			if b.Namespace != ns || !slices.ContainsFunc(b.Subjects, isManager) {
				continue
			}
			var rs []rbacv1.PolicyRule
			switch b.RoleRef.Kind {
			case "Role":
				role, ok := roles[ns+"/"+b.RoleRef.Name]
				if !ok {
					t.Errorf("RoleBinding %s/%s binds Role %s, which config/namespaced does not have", ns, b.Name, b.RoleRef.Name)
				}
				rs = role.Rules
			default:
				t.Errorf("RoleBinding %s/%s binds a %s: the namespaced install binds namespaced Roles only", ns, b.Name, b.RoleRef.Kind)
			}
			for r := range rulesOf(rs) {
				got[r] = true
				if r.resource == "secrets" && (r.verb == "delete" || r.verb == "*") {
					deleters[b.RoleRef.Name] = true
				}
			}
		}
		for r := range want {
			if r.group == "" && clusterScoped[r.resource] {
				continue // a namespaced Role cannot grant it; a Tenant then writes only into its own namespace
			}
			if !got[r] {
				t.Errorf("namespace %s: the manager may not %s %s (group %q), which config/rbac/role.yaml grants", ns, r.verb, r.resource, r.group)
			}
		}
		for r := range got {
			if !want[r] {
				t.Errorf("namespace %s: the manager may %s %s (group %q), which config/rbac/role.yaml does not grant", ns, r.verb, r.resource, r.group)
			}
		}
		if len(deleters) != 1 || !deleters["apimsync-application-credentials"] {
			t.Errorf("namespace %s: Secret delete comes from %v, want apimsync-application-credentials alone", ns, deleters)
		}
	}
}

func rulesOfFile(t *testing.T, path string) map[rule]bool {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) == 0 {
		t.Fatalf("%s has no rules", path)
	}
	return rulesOf(role.Rules)
}

// TestDeploySetsImage: make deploy's kustomization (bin/deploy) sets the image the Makefile names to
// IMG in every config; the name must be the one config/manager/manager.yaml uses.
func TestDeploySetsImage(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`edit set image (\S+)=\$\(IMG\)`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile's deploy does not run kustomize edit set image NAME=$(IMG)")
	}
	name := string(m[1])
	for _, config := range []string{"default", "namespaced"} {
		fs := filesys.MakeFsInMemory()
		dir := "/deploy"
		// The in-memory kustomization refers to the real config through an absolute path on disk: copy
		// the config into the in-memory file system instead.
		if err := copyTree(fs, filepath.Join(root, "config"), "/config"); err != nil {
			t.Fatal(err)
		}
		kust := "resources:\n  - ../config/" + config + "\nimages:\n  - name: " + name + "\n    newName: registry.example.test/apimsync\n    newTag: v9.9.9\n"
		if err := fs.WriteFile(dir+"/kustomization.yaml", []byte(kust)); err != nil {
			t.Fatal(err)
		}
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res.Resources() {
			if r.GetKind() != "Deployment" {
				continue
			}
			raw, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			containers, _, _ := unstructured.NestedSlice(m, "spec", "template", "spec", "containers")
			for _, c := range containers {
				found = true
				if image := c.(map[string]any)["image"]; image != "registry.example.test/apimsync:v9.9.9" {
					t.Errorf("config/%s: container %v has image %v after set image %s=IMG", config, c.(map[string]any)["name"], image, name)
				}
			}
		}
		if !found {
			t.Errorf("config/%s has no Deployment", config)
		}
	}
}

func copyTree(fs filesys.FileSystem, src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.ToSlash(filepath.Join(dst, rel))
		if d.IsDir() {
			return fs.MkdirAll(target)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fs.WriteFile(target, raw)
	})
}
