package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The validating webhook's serving: its certificate comes from --webhook-cert-dir, filled by whoever the
// installation chose: the manager itself (--webhook-cert-secret: a self-signed CA it makes and rotates,
// the CA bundle patched into the webhook configuration; the Secret is mounted there), cert-manager (the
// same Secret, filled by a Certificate, and its CA injector), or OLM (which mounts its own).

// webhookFlags are the webhook's settings.
type webhookFlags struct {
	port          int
	certDir       string
	certSecret    string
	service       string
	configuration string
}

func (w *webhookFlags) bind(fs interface {
	IntVar(p *int, name string, value int, usage string)
	StringVar(p *string, name string, value string, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}) {
	fs.IntVar(&w.port, "webhook-port", 0, "Port of the validating webhook's HTTPS server (9443 in the installations); 0 serves no webhook (local runs: objects are still checked by every sync).")
	fs.StringVar(&w.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Folder of the webhook's serving certificate (tls.crt, tls.key), read again whenever it changes; it may be empty at start: the webhook answers once it is filled.")
	fs.StringVar(&w.certSecret, "webhook-cert-secret", "", "Secret, in the manager's namespace (POD_NAMESPACE), that the manager fills with a self-signed CA and a serving certificate for --webhook-service, renews before they expire and whose CA it writes into the webhook configuration's caBundle; mount it at --webhook-cert-dir. Empty: the certificate comes from elsewhere (cert-manager, OLM).")
	fs.StringVar(&w.service, "webhook-service", "apimsync-webhook", "Service of the webhook, in the manager's namespace: the serving certificate's name is <service>.<namespace>.svc.")
	fs.StringVar(&w.configuration, "webhook-configuration", "apimsync-validating", "ValidatingWebhookConfiguration whose caBundle --webhook-cert-secret keeps in step.")
}

// server is the webhook server, or nil when the webhook is off; its certificate is watched until ctx ends.
func (w *webhookFlags) server(ctx context.Context) webhook.Server {
	if w.port == 0 {
		return nil
	}
	certs := &lazyCert{dir: w.certDir, ctx: ctx}
	return webhook.NewServer(webhook.Options{Port: w.port, CertDir: w.certDir,
		TLSOpts: []func(*tls.Config){disableHTTP2, func(c *tls.Config) { c.GetCertificate = certs.get }}})
}

// rotate adds the certificate rotator to mgr when the manager makes its own certificates.
func (w *webhookFlags) rotate(mgr ctrl.Manager) error {
	if w.port == 0 || w.certSecret == "" {
		return nil
	}
	ns := managerNamespace()
	if ns == "" {
		return errors.New("--webhook-cert-secret: the manager's namespace is unknown (set POD_NAMESPACE)")
	}
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: ns, Name: w.certSecret},
		CertDir:        w.certDir,
		CAName:         "apimsync-webhook-ca",
		CAOrganization: "apimsync",
		DNSName:        fmt.Sprintf("%s.%s.svc", w.service, ns),
		ExtraDNSNames:  []string{w.service, fmt.Sprintf("%s.%s", w.service, ns), fmt.Sprintf("%s.%s.svc.cluster.local", w.service, ns)},
		IsReady:        make(chan struct{}),
		Webhooks:       []rotator.WebhookInfo{{Name: w.configuration, Type: rotator.Validating}},
		// Every replica serves the webhook from the one Secret, so every replica runs the rotator (a
		// standby must not wait for an election to have its certificate); whichever renews it first wins,
		// the others see it renewed (the rotator's writes are conditional on the Secret's version).
		RequireLeaderElection: false,
		FieldOwner:            "apimsync",
	})
}

// serviceAccountNamespace is where a pod finds its namespace.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// managerNamespace is the manager's namespace: POD_NAMESPACE, or the service account's.
func managerNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// lazyCert serves the certificate of dir, watched for changes from the first handshake that finds it
// there: the server starts before the certificate exists (it is written into a mounted Secret by the
// rotator or cert-manager, which the kubelet brings a minute later), and a handshake before that fails
// (the API server then applies the failure policy) instead of the manager failing to start.
type lazyCert struct {
	dir     string
	ctx     context.Context
	mu      sync.Mutex
	watcher *certwatcher.CertWatcher
}

func (l *lazyCert) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watcher == nil {
		w, err := certwatcher.New(filepath.Join(l.dir, "tls.crt"), filepath.Join(l.dir, "tls.key"))
		if err != nil {
			return nil, fmt.Errorf("the webhook's certificate is not there yet: %w", err)
		}
		go func() { _ = w.Start(l.ctx) }()
		l.watcher = w
	}
	return l.watcher.GetCertificate(hello)
}
