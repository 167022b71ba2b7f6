// Package olm tests the OLM bundle (bundle/, written by make bundle): it is what the sources give, and
// the operator-framework's own validators accept it.
package olm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/operator-framework/api/pkg/manifests"
	operators "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apimsync/apimsync/internal/olmbundle"
)

const root = "../.."

// committed reads the committed bundle's CSV.
func committed(t *testing.T) *operators.ClusterServiceVersion {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatalf("the committed bundle does not load (run make bundle): %v", err)
	}
	return b.CSV
}

// makefileVar reads a `NAME ?= value` of the Makefile.
func makefileVar(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("the Makefile has no %s ?= ...", name)
	}
	return string(m[1])
}

// TestBundleIsUpToDate: bundle/ is exactly what make bundle writes from config/, samples/ and the
// Makefile's RELEASE (the one variable a version bump changes); an edit of a CRD, the RBAC role, the
// Deployment or a sample without make bundle fails here.
func TestBundleIsUpToDate(t *testing.T) {
	release, repo := makefileVar(t, "RELEASE"), makefileVar(t, "IMAGE_REPO")
	out := t.TempDir()
	if err := olmbundle.Write(olmbundle.Options{Root: root, Out: out, Version: release, Image: repo + ":v" + release, Channel: makefileVar(t, "CHANNEL")}); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, out)
	got := readTree(t, filepath.Join(root, "bundle"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle/ is not what make bundle writes (run make bundle and commit) (-want +got):\n%s", diff)
	}
	if csv := committed(t); csv.Spec.Version.String() != release || csv.Name != "apimsync.v"+release {
		t.Errorf("the bundle's CSV is %s version %s, want RELEASE %s", csv.Name, csv.Spec.Version.String(), release)
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// knownWarnings are validator warnings that do not apply, each with the reason.
var knownWarnings = map[string]string{
	// The removed-APIs check flags any RBAC rule on events.k8s.io events, whatever the version:
	// RBAC rules name no version, and the manager's recorder writes events.k8s.io/v1 (GA since
	// Kubernetes 1.19), not the v1beta1 removed in 1.25.
	"Migrate the API(s) for events": "RBAC on events.k8s.io/v1, not v1beta1",
}

// TestBundleValidates: the operator-framework's validators (those of operator-sdk bundle validate, and
// the OperatorHub and good-practices suites) find no error, and no warning but the known ones.
func TestBundleValidates(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	validators := append(validation.DefaultBundleValidators, validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator, validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator)
	results := validators.Validate(b, b.CSV)
	checked := 0
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: error: %v", r.Name, e)
		}
		for _, w := range r.Warnings {
			known := false
			for text := range knownWarnings {
				known = known || strings.Contains(w.Error(), text)
			}
			if !known {
				t.Errorf("%s: warning: %v", r.Name, w)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no validator ran")
	}
}

// TestBundleContents: what a user of OperatorHub relies on is in the CSV.
func TestBundleContents(t *testing.T) {
	csv := committed(t)
	crds, err := filepath.Glob(filepath.Join(root, "config/crd/bases/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	owned := csv.Spec.CustomResourceDefinitions.Owned
	if len(owned) != len(crds) {
		t.Errorf("%d owned CRDs, want the %d of config/crd/bases", len(owned), len(crds))
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	kinds := map[string]bool{}
	for _, e := range examples {
		kinds[e["kind"].(string)] = true
	}
	for _, o := range owned {
		if !kinds[o.Kind] {
			t.Errorf("no example of %s in alm-examples", o.Kind)
		}
		if o.Description == "" || len(o.SpecDescriptors) == 0 || len(o.StatusDescriptors) == 0 {
			t.Errorf("%s: description %q, %d spec and %d status descriptors; want all", o.Kind, o.Description, len(o.SpecDescriptors), len(o.StatusDescriptors))
		}
		if !slices.ContainsFunc(o.StatusDescriptors, func(d operators.StatusDescriptor) bool {
			return d.Path == "conditions" && slices.Contains(d.XDescriptors, "urn:alm:descriptor:io.kubernetes.conditions")
		}) {
			t.Errorf("%s: the conditions are not described as conditions", o.Kind)
		}
	}
	modes := map[operators.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		modes[m.Type] = m.Supported
	}
	for _, m := range []operators.InstallModeType{operators.InstallModeTypeOwnNamespace, operators.InstallModeTypeSingleNamespace,
		operators.InstallModeTypeMultiNamespace, operators.InstallModeTypeAllNamespaces} {
		if !modes[m] {
			t.Errorf("install mode %s not supported", m)
		}
	}
	if csv.Spec.Maturity != "alpha" || len(csv.Spec.Icon) == 0 || csv.Annotations["containerImage"] == "" {
		t.Errorf("maturity %q, %d icons, containerImage %q", csv.Spec.Maturity, len(csv.Spec.Icon), csv.Annotations["containerImage"])
	}

	// The manager watches the OperatorGroup's namespaces: --watch-namespaces from olm.targetNamespaces.
	strategy := csv.Spec.InstallStrategy.StrategySpec
	if len(strategy.DeploymentSpecs) != 1 {
		t.Fatalf("%d deployments, want the manager", len(strategy.DeploymentSpecs))
	}
	c := strategy.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	if c.Image != csv.Annotations["containerImage"] {
		t.Errorf("the manager runs %s, the CSV names %s", c.Image, csv.Annotations["containerImage"])
	}
	env := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--watch-namespaces=$("); ok {
			env = strings.TrimSuffix(v, ")")
		}
	}
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == env }); env == "" || i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("args %v, env %v: want --watch-namespaces from the olm.targetNamespaces annotation", c.Args, c.Env)
	}

	// The validating webhook: OLM serves its certificate (mounted where the manager reads it by default)
	// and writes its CA bundle, so the manager serves it and makes no certificate of its own.
	if len(csv.Spec.WebhookDefinitions) != 1 {
		t.Fatalf("%d webhook definitions, want config/webhook's one", len(csv.Spec.WebhookDefinitions))
	}
	hook := csv.Spec.WebhookDefinitions[0]
	if hook.Type != operators.ValidatingAdmissionWebhook || hook.DeploymentName != strategy.DeploymentSpecs[0].Name || hook.WebhookPath == nil ||
		*hook.WebhookPath != "/validate" || hook.TargetPort == nil || hook.TargetPort.IntValue() != 9443 || len(hook.Rules) != 1 || len(hook.Rules[0].Resources) < 14 {
		t.Errorf("webhook definition %+v: want the validating webhook of every kind at the manager's /validate on 9443", hook)
	}
	if !slices.Contains(c.Args, "--webhook-port=9443") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--webhook-cert-secret") }) {
		t.Errorf("args %v: want the webhook served on 9443 with OLM's certificate", c.Args)
	}

	// Namespaced permissions (OLM grants them in the target namespaces, cluster-wide only in
	// AllNamespaces mode): everything the manager does with apimsync's objects, Secrets and ConfigMaps;
	// cluster permissions hold nothing of those.
	if len(strategy.Permissions) != 1 || !grants(strategy.Permissions[0].Rules, "", "secrets", "delete") ||
		!grants(strategy.Permissions[0].Rules, "capabilities.apimsync.io", "products", "update") ||
		!grants(strategy.Permissions[0].Rules, "coordination.k8s.io", "leases", "create") {
		t.Errorf("permissions %+v lack the manager's or leader election's rules", strategy.Permissions)
	}
	for _, p := range strategy.ClusterPermissions {
		for _, r := range p.Rules {
			if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "configmaps") || slices.Contains(r.APIGroups, "capabilities.apimsync.io") {
				t.Errorf("a cluster permission on %v %v", r.APIGroups, r.Resources)
			}
		}
	}
}

func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}
