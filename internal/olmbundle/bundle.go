// Package olmbundle writes apimsync's OLM bundle (bundle/: a ClusterServiceVersion, the CRDs, the
// metrics Service and the bundle's metadata) from the sources of truth in the repository: the
// hand-written CSV base in config/manifests, the CRDs, RBAC and Deployment of config/, and the
// examples of samples/. Nothing in bundle/ is edited by hand; `make bundle` writes it and a test
// fails when the committed bundle differs from what the sources give.
package olmbundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	operators "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/operator-framework/api/pkg/lib/version"
)

// Package is the OLM package name and the prefix of the CSV's name.
const Package = "apimsync"

// Options say what to write and from where.
type Options struct {
	Root    string // the repository's root
	Out     string // the bundle directory (bundle/)
	Version string // the release's semantic version (no "v")
	Image   string // the manager's image the bundle installs
	Channel string // the OLM channel (also the default channel)
}

// targetNamespacesEnv carries OLM's olm.targetNamespaces annotation (the OperatorGroup's namespaces,
// comma-separated; empty in AllNamespaces mode) into the manager's --watch-namespaces.
const targetNamespacesEnv = "WATCH_NAMESPACES"

// Write writes the bundle into o.Out, replacing what is there.
func Write(o Options) error {
	v, err := semver.Parse(o.Version)
	if err != nil {
		return fmt.Errorf("version %q is not a semantic version: %w", o.Version, err)
	}
	csv, err := readCSVBase(filepath.Join(o.Root, "config/manifests/bases", Package+".clusterserviceversion.yaml"))
	if err != nil {
		return err
	}
	csv.Name = fmt.Sprintf("%s.v%s", Package, v)
	csv.Spec.Version = version.OperatorVersion{Version: v}
	csv.Annotations["containerImage"] = o.Image
	icon, err := os.ReadFile(filepath.Join(o.Root, "config/manifests/icon.svg"))
	if err != nil {
		return err
	}
	csv.Spec.Icon = []operators.Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}}

	crds, err := readCRDs(filepath.Join(o.Root, "config/crd/bases"))
	if err != nil {
		return err
	}
	for _, c := range crds {
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, ownedCRD(c))
	}
	examples, err := readExamples(filepath.Join(o.Root, "samples"), crds)
	if err != nil {
		return err
	}
	csv.Annotations["alm-examples"] = examples
	strategy, err := installStrategy(o.Root, o.Image)
	if err != nil {
		return err
	}
	csv.Spec.InstallStrategy = strategy
	hooks, err := webhookDefinitions(o.Root, strategy.StrategySpec.DeploymentSpecs[0].Name)
	if err != nil {
		return err
	}
	csv.Spec.WebhookDefinitions = hooks

	files := map[string]any{filepath.Join("manifests", Package+".clusterserviceversion.yaml"): csv}
	for _, c := range crds {
		files[filepath.Join("manifests", c.Spec.Group+"_"+c.Spec.Names.Plural+".yaml")] = c
	}
	svc := &corev1.Service{}
	if err := readObject(filepath.Join(o.Root, "config/manager/metrics_service.yaml"), svc); err != nil {
		return err
	}
	svc.Namespace = "" // OLM installs it in the operator's namespace
	files[filepath.Join("manifests", "apimsync-metrics_v1_service.yaml")] = svc
	files[filepath.Join("metadata", "annotations.yaml")] = annotations(o.Channel)

	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	for name, obj := range files {
		raw, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		path := filepath.Join(o.Out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(o.Out, "bundle.Dockerfile"), []byte(dockerfile(o.Channel)), 0o644)
}

// annotationLabels are the bundle's metadata, the same in annotations.yaml and the bundle image's labels.
func annotationLabels(channel string) [][2]string {
	return [][2]string{
		{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
		{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
		{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
		{"operators.operatorframework.io.bundle.package.v1", Package},
		{"operators.operatorframework.io.bundle.channels.v1", channel},
		{"operators.operatorframework.io.bundle.channel.default.v1", channel},
	}
}

func annotations(channel string) map[string]map[string]string {
	out := map[string]string{}
	for _, kv := range annotationLabels(channel) {
		out[kv[0]] = kv[1]
	}
	return map[string]map[string]string{"annotations": out}
}

// dockerfile builds the bundle image (podman build -f bundle/bundle.Dockerfile bundle/).
func dockerfile(channel string) string {
	var b strings.Builder
	b.WriteString("# Written by `make bundle`: the OLM bundle image (podman build -f bundle.Dockerfile . in bundle/).\nFROM scratch\n")
	for _, kv := range annotationLabels(channel) {
		fmt.Fprintf(&b, "LABEL %s=%s\n", kv[0], kv[1])
	}
	b.WriteString("COPY manifests /manifests/\nCOPY metadata /metadata/\n")
	return b.String()
}

func readCSVBase(path string) (*operators.ClusterServiceVersion, error) {
	csv := &operators.ClusterServiceVersion{}
	if err := readObject(path, csv); err != nil {
		return nil, err
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	return csv, nil
}

// readObject reads one YAML object (comments allowed) into obj, strictly: an unknown field is an error.
func readObject(path string, obj any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readObjects reads every object of a multi-document YAML file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func readCRDs(dir string) ([]*apiextv1.CustomResourceDefinition, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var crds []*apiextv1.CustomResourceDefinition
	for _, p := range paths {
		c := &apiextv1.CustomResourceDefinition{}
		if err := readObject(p, c); err != nil {
			return nil, err
		}
		crds = append(crds, c)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRD in %s", dir)
	}
	return crds, nil
}

// storageVersion is the CRD's stored version.
func storageVersion(c *apiextv1.CustomResourceDefinition) apiextv1.CustomResourceDefinitionVersion {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v
		}
	}
	return c.Spec.Versions[0]
}

// sampleFiles lists the files of samples/ in the order of its kustomization, then those of
// samples/tenants/ (the cluster admins' samples: Tenants), if any.
func sampleFiles(dir string) ([]string, error) {
	var files []string
	for i, d := range []string{dir, filepath.Join(dir, "tenants")} {
		raw, err := os.ReadFile(filepath.Join(d, "kustomization.yaml"))
		if i > 0 && os.IsNotExist(err) {
			break
		}
		if err != nil {
			return nil, err
		}
		var k struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(d, "kustomization.yaml"), err)
		}
		for _, name := range k.Resources {
			files = append(files, filepath.Join(d, name))
		}
	}
	return files, nil
}

// readExamples is alm-examples: for each owned kind, the first object of that kind in samples/ (its
// files in the order of its kustomization, then samples/tenants/), in the CRDs' order, without namespace (the console fills in
// the one it creates it in).
func readExamples(dir string, crds []*apiextv1.CustomResourceDefinition) (string, error) {
	files, err := sampleFiles(dir)
	if err != nil {
		return "", err
	}
	first := map[string]map[string]any{}
	for _, file := range files {
		objs, err := readObjects(file)
		if err != nil {
			return "", err
		}
		for _, u := range objs {
			if _, seen := first[u.GetKind()]; !seen && strings.HasPrefix(u.GetAPIVersion(), crds[0].Spec.Group+"/") {
				u.SetNamespace("")
				first[u.GetKind()] = u.Object
			}
		}
	}
	var examples []map[string]any
	for _, c := range crds {
		ex, ok := first[c.Spec.Names.Kind]
		if !ok {
			return "", fmt.Errorf("samples/ has no %s: every owned kind needs an example", c.Spec.Names.Kind)
		}
		examples = append(examples, ex)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(examples); err != nil {
		return "", err
	}
	return b.String(), nil
}

// webhookPort is the manager's webhook port in the bundle's Deployment.
const webhookPort = 9443

// webhookDefinitions are config/webhook's validating webhooks as OLM deploys them, to deployment.
func webhookDefinitions(root, deployment string) ([]operators.WebhookDescription, error) {
	var c admissionregistrationv1.ValidatingWebhookConfiguration
	if err := readObject(filepath.Join(root, "config/webhook/manifests.yaml"), &c); err != nil {
		return nil, err
	}
	out := make([]operators.WebhookDescription, 0, len(c.Webhooks))
	for _, w := range c.Webhooks {
		target := intstr.FromInt32(webhookPort)
		d := operators.WebhookDescription{GenerateName: w.Name, Type: operators.ValidatingAdmissionWebhook, DeploymentName: deployment,
			ContainerPort: 443, TargetPort: &target, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
			SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions}
		if w.ClientConfig.Service != nil {
			d.WebhookPath = w.ClientConfig.Service.Path
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("config/webhook/manifests.yaml has no webhook")
	}
	return out, nil
}

// installStrategy is the manager's Deployment of config/manager with the bundle's image and the
// OperatorGroup's namespaces as --watch-namespaces; permissions are the manager's role (namespaced:
// OLM grants them in the target namespaces, cluster-wide in AllNamespaces mode) and leader election's;
// cluster permissions only what is cluster-scoped (the metrics endpoint's token and access reviews).
func installStrategy(root, image string) (operators.NamedInstallStrategy, error) {
	var s operators.NamedInstallStrategy
	dep := &appsv1.Deployment{}
	if err := readObject(filepath.Join(root, "config/manager/manager.yaml"), dep); err != nil {
		return s, err
	}
	pod := &dep.Spec.Template.Spec
	c := &pod.Containers[0]
	c.Image = image
	// OLM serves the webhook's certificate itself, mounted where the manager reads it by default, and
	// writes the webhook's CA bundle and its namespace selector (the OperatorGroup's namespaces).
	c.Args = append(c.Args, "--watch-namespaces=$("+targetNamespacesEnv+")", fmt.Sprintf("--webhook-port=%d", webhookPort))
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "webhook", ContainerPort: webhookPort})
	c.Env = append(c.Env, corev1.EnvVar{Name: targetNamespacesEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}})

	var manager rbacv1.ClusterRole
	var election rbacv1.Role
	var metrics []*unstructured.Unstructured
	if err := readObject(filepath.Join(root, "config/rbac/role.yaml"), &manager); err != nil {
		return s, err
	}
	if err := readObject(filepath.Join(root, "config/rbac/leader_election_role.yaml"), &election); err != nil {
		return s, err
	}
	metrics, err := readObjects(filepath.Join(root, "config/rbac/metrics_auth_role.yaml"))
	if err != nil {
		return s, err
	}
	var clusterRules []rbacv1.PolicyRule
	for _, u := range metrics {
		if u.GetKind() != "ClusterRole" || u.GetName() != "apimsync-metrics-auth" {
			continue
		}
		var r rbacv1.ClusterRole
		raw, _ := json.Marshal(u.Object)
		if err := json.Unmarshal(raw, &r); err != nil {
			return s, err
		}
		clusterRules = append(clusterRules, r.Rules...)
	}
	if len(clusterRules) == 0 {
		return s, fmt.Errorf("config/rbac/metrics_auth_role.yaml has no ClusterRole apimsync-metrics-auth")
	}
	account := pod.ServiceAccountName
	s.StrategyName = operators.InstallStrategyNameDeployment
	s.StrategySpec = operators.StrategyDetailsDeployment{
		DeploymentSpecs: []operators.StrategyDeploymentSpec{{Name: dep.Name, Label: dep.Labels, Spec: dep.Spec}},
		Permissions: []operators.StrategyDeploymentPermissions{{ServiceAccountName: account,
			Rules: slices.Concat(manager.Rules, election.Rules)}},
		ClusterPermissions: []operators.StrategyDeploymentPermissions{{ServiceAccountName: account, Rules: clusterRules}},
	}
	return s, nil
}
