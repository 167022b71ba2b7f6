package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/test/testenv"
)

// TestWebhookFlags: no webhook unless --webhook-port is set; the manager makes certificates only with
// --webhook-cert-secret, and then needs to know its namespace.
func TestWebhookFlags(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.webhook.server(context.Background()) != nil || f.opts.Webhook {
		t.Errorf("a webhook is served by default")
	}
	f, err = parseFlags([]string{"--webhook-port=9443"})
	if err != nil {
		t.Fatal(err)
	}
	if f.webhook.server(context.Background()) == nil || !f.opts.Webhook || f.webhook.certDir != "/tmp/k8s-webhook-server/serving-certs" {
		t.Errorf("--webhook-port=9443 serves no webhook, or not from controller-runtime's (and OLM's) certificate folder: %+v", f.webhook)
	}
	f, err = parseFlags([]string{"--webhook-port=9443", "--webhook-cert-secret=apimsync-webhook-cert"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("POD_NAMESPACE", "")
	saved := serviceAccountNamespace
	serviceAccountNamespace = filepath.Join(t.TempDir(), "namespace")
	defer func() { serviceAccountNamespace = saved }()
	if err := f.webhook.rotate(nil); err == nil {
		t.Errorf("certificates made for a manager that does not know its namespace")
	}
}

// TestLazyCertificate: the webhook's server starts before its certificate exists (a mounted Secret filled
// a minute later); a handshake before fails, one after is served, and a renewed certificate is picked up.
func TestLazyCertificate(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &lazyCert{dir: dir, ctx: ctx}
	if _, err := l.get(&tls.ClientHelloInfo{}); err == nil {
		t.Fatal("a certificate was served from an empty folder")
	}
	writeCert(t, dir, selfSigned(t, "first.example"))
	got, err := l.get(&tls.ClientHelloInfo{})
	if err != nil || leafName(t, got) != "first.example" {
		t.Fatalf("after the files appear: %v, %v", leafName(t, got), err)
	}
	writeCert(t, dir, selfSigned(t, "second.example"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err = l.get(&tls.ClientHelloInfo{})
		if err == nil && leafName(t, got) == "second.example" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a renewed certificate is not served: %v, %v", leafName(t, got), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestManagerMakesAndInjectsItsCertificate: with --webhook-cert-secret, the manager writes a CA and a
// serving certificate for its Service into the Secret, and the CA into its webhook configuration's
// caBundle; served from the folder the Secret is mounted at, the certificate is trusted by that CA for the
// Service's name, as the kube-apiserver calls it.
func TestManagerMakesAndInjectsItsCertificate(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "apimsync-system"
	hook := webhookConfiguration(t)
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "apimsync-webhook-cert"}}, hook} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("POD_NAMESPACE", ns)
	dir := t.TempDir()
	f, err := parseFlags([]string{"--webhook-port=9443", "--webhook-cert-secret=apimsync-webhook-cert", "--webhook-cert-dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.webhook.rotate(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); <-done }()

	secret := &corev1.Secret{}
	var ca []byte
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "apimsync-webhook-cert"}, secret); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hook), hook); err != nil {
			t.Fatal(err)
		}
		ca = hook.Webhooks[0].ClientConfig.CABundle
		if len(secret.Data["tls.crt"]) > 0 && len(ca) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate made or no CA injected: Secret keys %d, caBundle %d bytes", len(secret.Data), len(ca))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if string(ca) != string(secret.Data["ca.crt"]) {
		t.Errorf("the caBundle is not the Secret's CA")
	}
	// As the kubelet would: the Secret's keys become the mounted folder's files.
	writeCert(t, dir, [2][]byte{secret.Data["tls.crt"], secret.Data["tls.key"]})
	served, err := (&lazyCert{dir: dir, ctx: ctx}).get(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("the caBundle holds no certificate")
	}
	leaf, err := x509.ParseCertificate(served.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "apimsync-webhook.apimsync-system.svc"}); err != nil {
		t.Errorf("the served certificate is not trusted for the Service's name: %v", err)
	}
}

// webhookConfiguration is config/webhook's configuration as config/default names it.
func webhookConfiguration(t *testing.T) *admissionv1.ValidatingWebhookConfiguration {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := &admissionv1.ValidatingWebhookConfiguration{}
	if err := yaml.Unmarshal(raw, c); err != nil {
		t.Fatal(err)
	}
	c.Name = "apimsync-validating"
	c.Webhooks[0].ClientConfig.Service.Name, c.Webhooks[0].ClientConfig.Service.Namespace = "apimsync-webhook", "apimsync-system"
	return c
}

// selfSigned is a PEM certificate and key for name.
func selfSigned(t *testing.T, name string) [2][]byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return [2][]byte{pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
}

// writeCert writes a certificate and key into dir as tls.crt and tls.key, replacing both at once.
func writeCert(t *testing.T, dir string, pair [2][]byte) {
	t.Helper()
	for i, name := range []string{"tls.crt", "tls.key"} {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, pair[i], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// leafName is the DNS name of a served certificate.
func leafName(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	if c == nil || len(c.Certificate) == 0 {
		return ""
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil || len(leaf.DNSNames) == 0 {
		return ""
	}
	return leaf.DNSNames[0]
}
