// Package testenv starts the real control plane the tests and the demo run against: kube-apiserver and
// etcd built by test/controlplane (KUBEBUILDER_ASSETS), with apimsync's CRDs installed.
package testenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// Env is a running control plane with a client.
type Env struct {
	// Environment is the envtest environment (for AddUser and the like).
	Environment *envtest.Environment
	// Config reaches the kube-apiserver as an admin.
	Config *rest.Config
	// Client is a direct (uncached) client.
	Client client.Client
	// Scheme knows client-go's and apimsync's kinds.
	Scheme *runtime.Scheme
}

// RepoRoot returns the repository root: the nearest parent folder of the working directory with go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "apis")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (a folder with go.mod and apis/)")
		}
		dir = parent
	}
}

// NewScheme returns a scheme with client-go's and apimsync's kinds.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Start starts kube-apiserver and etcd from KUBEBUILDER_ASSETS and installs the CRDs of config/crd/bases,
// and the stand-ins of other operators' CRDs apimsync reads (test/testenv/crds: 3scale-operator's APIManager).
func Start() (*Env, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds the control plane into bin/k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s is missing in KUBEBUILDER_ASSETS=%s: run `make envtest-assets`", bin, assets)
		}
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	hooks, err := webhookConfigurations(filepath.Join(root, "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "test", "testenv", "crds")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                scheme,
		// The validating webhook of config/webhook, called by the kube-apiserver at a local address with
		// envtest's certificate (WebhookOptions serves it), in the namespaces labelled AdmissionLabel only:
		// elsewhere tests create what the webhook would refuse, to see the engine refuse it.
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: hooks},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("cannot start the control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// AdmissionLabel marks the namespaces whose objects go through the validating webhook: the label's value
// is "true".
const AdmissionLabel = "apimsync.io/admission"

// webhookConfigurations reads the webhook configuration of path, each webhook limited to the namespaces
// labelled AdmissionLabel.
func webhookConfigurations(path string) ([]*admissionv1.ValidatingWebhookConfiguration, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c admissionv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range c.Webhooks {
		c.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{AdmissionLabel: "true"}}
	}
	return []*admissionv1.ValidatingWebhookConfiguration{&c}, nil
}

// WebhookOptions are the options of a webhook server the kube-apiserver reaches (envtest's address and
// certificate).
func (e *Env) WebhookOptions() webhook.Options {
	o := e.Environment.WebhookInstallOptions
	return webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir}
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.Environment.Stop() }

// Main is a TestMain for packages whose tests only need the control plane: it starts it, hands the Env
// to use, runs the tests and stops it. It returns the exit code.
func Main(m interface{ Run() int }, use func(*Env)) int {
	ParseTestFlags()
	env, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	use(env)
	return m.Run()
}

// ParseTestFlags parses the test binary's flags before the control plane starts: testing.M.Run would
// parse them after, and a bad flag would then exit the process without stopping it (an etcd and a
// kube-apiserver left running).
func ParseTestFlags() {
	if !flag.Parsed() {
		flag.Parse()
	}
}
