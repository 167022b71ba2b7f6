// Package image tests the manager's container image as make image builds it (internal/ociimage): its
// configuration and files, and its entrypoint, run from the image's own unpacked filesystem against a
// real control plane and the 3scale simulator with the namespaced install's RBAC (config/namespaced).
//
// The test builds the image for this machine's architecture (the Go build cache makes a second run
// quick); APIMSYNC_IMAGE_ARCHIVE=bin/image/apimsync.tar tests an archive built by `make image` instead.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/internal/ociimage"
	"github.com/apimsync/apimsync/test/simulator"
	"github.com/apimsync/apimsync/test/testenv"
)

const (
	testVersion = "v0.0.0-imagetest"
	testTag     = "example.test/apimsync:imagetest"
)

var (
	env      *testenv.Env
	workDir  string
	cleanups []func()

	buildOnce sync.Once
	built     struct {
		archive  string
		revision string // the revision the test built with; "" for an archive given by the environment
		err      error
	}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apimsync-image-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workDir = dir
	code := testenv.Main(m, func(e *testenv.Env) { env = e })
	for _, c := range cleanups {
		c()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// archive returns the image archive under test, building it once for this machine's architecture.
func archive(t *testing.T) (path, revision string) {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("APIMSYNC_IMAGE_ARCHIVE"); p != "" {
			built.archive = p
			return
		}
		root, err := testenv.RepoRoot()
		if err != nil {
			built.err = err
			return
		}
		if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
			built.revision = strings.TrimSpace(string(out))
		}
		bin := filepath.Join(workDir, "manager")
		start := time.Now()
		if err := ociimage.BuildBinary(context.Background(), root, "./cmd/manager", runtime.GOARCH, testVersion, built.revision, bin); err != nil {
			built.err = err
			return
		}
		t.Logf("built the manager for linux/%s in %.1fs", runtime.GOARCH, time.Since(start).Seconds())
		idx, err := ociimage.Build(ociimage.Options{Binaries: map[string]string{runtime.GOARCH: bin}, Version: testVersion,
			Revision: built.revision, Source: "https://example.test/apimsync", Created: time.Unix(1700000000, 0)})
		if err != nil {
			built.err = err
			return
		}
		built.archive = filepath.Join(workDir, "apimsync.tar")
		built.err = ociimage.WriteArchive(idx, testTag, built.archive, "")
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.archive, built.revision
}

var (
	readOnce sync.Mutex
	read     struct {
		idx     v1.ImageIndex
		img     v1.Image
		root    string
		entries map[string]entry
	}
)

// hostImage reads the archive's image index (once) and returns it with its image for this machine.
func hostImage(t *testing.T) (v1.ImageIndex, v1.Image) {
	t.Helper()
	path, _ := archive(t)
	readOnce.Lock()
	defer readOnce.Unlock()
	if read.img != nil {
		return read.idx, read.img
	}
	idx, cleanup, err := ociimage.ReadArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	cleanups = append(cleanups, cleanup)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			read.idx, read.img = idx, img
			return idx, img
		}
	}
	t.Fatalf("the image index has no linux/%s image: %+v", runtime.GOARCH, im.Manifests)
	return nil, nil
}

// unpacked returns the image's unpacked filesystem (made once) and its entries.
func unpacked(t *testing.T) (string, map[string]entry) {
	t.Helper()
	_, img := hostImage(t)
	readOnce.Lock()
	defer readOnce.Unlock()
	if read.root == "" {
		dir := filepath.Join(workDir, "rootfs")
		read.entries = unpack(t, img, dir)
		read.root = dir
	}
	return read.root, read.entries
}

// entry is a file of the unpacked image.
type entry struct {
	mode     os.FileMode
	uid, gid int
	typ      byte
}

// unpack writes the image's flattened filesystem into root and returns its entries.
func unpack(t *testing.T, img v1.Image, root string) map[string]entry {
	t.Helper()
	entries := map[string]entry{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")
		if !filepath.IsLocal(name) {
			t.Fatalf("the image has an unsafe path %q", h.Name)
		}
		entries[name] = entry{mode: h.FileInfo().Mode(), uid: h.Uid, gid: h.Gid, typ: h.Typeflag}
		dst := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, h.FileInfo().Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("the image has %q of tar type %q: want only folders and regular files", h.Name, h.Typeflag)
		}
	}
	return entries
}

// TestImageConfig checks the image's index, configuration and files, and that the binary in it reports
// the version and revision its labels say.
func TestImageConfig(t *testing.T) {
	_, revision := archive(t)
	idx, img := hostImage(t)

	mt, err := img.MediaType()
	if err != nil {
		t.Fatal(err)
	}
	if mt != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type %s, want an OCI manifest", mt)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("image for %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/manager"}) || len(cf.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want [/manager] and no cmd (no shell form)", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root, numeric so that runAsNonRoot can check it)", cf.Config.User)
	}
	labels := cf.Config.Labels
	for _, k := range []string{ociimage.LabelVersion, ociimage.LabelRevision, ociimage.LabelSource, ociimage.LabelCreated} {
		if labels[k] == "" && (k != ociimage.LabelRevision || revision != "") {
			t.Errorf("label %s is missing: %v", k, labels)
		}
	}
	if os.Getenv("APIMSYNC_IMAGE_ARCHIVE") == "" {
		if labels[ociimage.LabelVersion] != testVersion || labels[ociimage.LabelRevision] != revision {
			t.Errorf("labels version %q revision %q, want %q and %q", labels[ociimage.LabelVersion], labels[ociimage.LabelRevision], testVersion, revision)
		}
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.Annotations[ociimage.LabelVersion] != labels[ociimage.LabelVersion] {
		t.Errorf("the index's version annotation %q differs from the image's label %q", im.Annotations[ociimage.LabelVersion], labels[ociimage.LabelVersion])
	}

	root, entries := unpacked(t)
	bin, ok := entries["manager"]
	if !ok || bin.typ != tar.TypeReg || bin.mode.Perm()&0o111 == 0 {
		t.Fatalf("/manager is not an executable file: %+v", bin)
	}
	if bin.mode.Perm()&0o022 != 0 {
		t.Errorf("/manager is writable by others than its owner: %v", bin.mode)
	}
	f, err := elf.Open(filepath.Join(root, "manager"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("/manager is dynamically linked; the image has no libc")
		}
	}
	f.Close()
	for name := range entries {
		if base := filepath.Base(name); base == "sh" || base == "bash" || base == "busybox" {
			t.Errorf("the image has a shell: /%s", name)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd does not name user 65532: %q %v", passwd, err)
	}
	if home := entries["home/nonroot"]; home.uid != 65532 {
		t.Errorf("/home/nonroot is owned by %d, want 65532", home.uid)
	}
	pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no certificate")
	}

	out, err := exec.Command(filepath.Join(root, "manager"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("/manager --version: %v\n%s", err, out)
	}
	want := fmt.Sprintf("apimsync %s, revision %s", labels[ociimage.LabelVersion], labels[ociimage.LabelRevision])
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("/manager --version says %q, want it to start with %q (the labels)", out, want)
	}
}

// TestArchiveLoads reads the archive the way docker load does before Docker 25 (its manifest.json)
// and as a registry gets it (make image-push, into an in-memory registry), and finds the same image.
func TestArchiveLoads(t *testing.T) {
	path, _ := archive(t)
	idx, img := hostImage(t)
	want, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	docker, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatalf("the archive's manifest.json: %v", err)
	}
	got, err := docker.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("manifest.json names config %s, want the linux/%s image's %s", got, runtime.GOARCH, want)
	}
	layers, err := docker.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("manifest.json has %d layers (%v), want 2", len(layers), err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Errorf("a layer of manifest.json does not read: %v", err)
		}
		rc.Close()
	}

	srv := &http.Server{Handler: registry.New(registry.Logger(discardLogger())), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	ref := ln.Addr().String() + "/apimsync/apimsync:test"
	ctx := context.Background()
	if err := ociimage.Push(ctx, idx, ref); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(mustRef(t, ref), remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, err := pulled.Digest()
	if err != nil || d1 != d2 {
		t.Errorf("pulled index %s (%v), pushed %s", d2, err, d1)
	}
}

// TestImageRunsNamespaced installs config/namespaced for real (its ServiceAccount, Roles and bindings),
// runs the image's entrypoint from its unpacked filesystem as that ServiceAccount with the Deployment's
// arguments, and sees the samples applied to the watched namespace reach Synced, the probes answer,
// and an object of another namespace left alone. The manager's rights stop at the watched namespace,
// so a cache or a read of anything cluster-wide (Secrets' and ConfigMaps' metadata included) would be
// forbidden and keep it from syncing.
func TestImageRunsNamespaced(t *testing.T) {
	root, _ := unpacked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k8s := env.Client

	objs, err := testenv.Render("config/namespaced")
	if err != nil {
		t.Fatal(err)
	}
	deploy := find(objs, "Deployment")
	if deploy == nil {
		t.Fatal("config/namespaced has no Deployment")
	}
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	deployArgs, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	var watched []string
	for _, a := range deployArgs {
		if v, ok := strings.CutPrefix(a, "--watch-namespaces="); ok {
			watched = strings.Split(v, ",")
		}
	}
	if len(watched) == 0 {
		t.Fatalf("the namespaced Deployment runs without --watch-namespaces: %q", deployArgs)
	}
	const unwatched = "apimsync-unwatched"
	for _, ns := range append(slices.Clone(watched), unwatched) {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { // namespaces first
		return cmpBool(b.GetKind() == "Namespace", a.GetKind() == "Namespace")
	})
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" || u.GetKind() == "Deployment" {
			continue // the CRDs are installed; the Deployment is what this test runs by hand
		}
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("apimsync-test"), client.ForceOwnership); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	sa := find(objs, "ServiceAccount")
	kubeconfig := serviceAccountKubeconfig(ctx, t, sa.GetNamespace(), sa.GetName())

	sim := simulator.New(simulator.Options{Tenants: map[string]string{"test": "test-token"}, Seed: 1})
	simLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	simSrv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = simSrv.Serve(simLn) }()
	t.Cleanup(func() { simSrv.Close() })
	simURL := "http://" + simLn.Addr().String()

	samples, err := testenv.Render("samples")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range samples {
		u.SetNamespace(watched[0])
		if u.GetKind() == "Secret" && u.GetName() == v1alpha1.DefaultProviderAccountSecret {
			u.Object["stringData"] = map[string]any{"adminURL": simURL, "token": "test-token", "allowInsecureHTTP": "true"}
			delete(u.Object, "data")
		}
		if err := k8s.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	outside := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Name: "outside", Namespace: unwatched},
		Spec: v1alpha1.BackendSpec{Name: "Outside", PrivateBaseURL: "https://outside.example.test"}}
	if err := k8s.Create(ctx, outside); err != nil {
		t.Fatal(err)
	}

	probeAddr, metricsAddr, webhookAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	// The webhook's certificate folder: the Secret the manager fills would be mounted there; nothing
	// mounts it here, and the manager serves no webhook call in this test.
	args := []string{"--kubeconfig=" + kubeconfig, "--leader-election-namespace=" + sa.GetNamespace(), "--allow-private-admin-urls",
		"--webhook-cert-dir=" + t.TempDir()}
	for _, a := range deployArgs {
		switch {
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probeAddr
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metricsAddr
		case strings.HasPrefix(a, "--webhook-port="):
			a = "--webhook-port=" + webhookPort
		}
		args = append(args, a)
	}
	var logs syncBuffer
	mgr := exec.Command(filepath.Join(root, "manager"), args...)
	// As in the container: no environment of the test's, only what the Deployment sets (its namespace,
	// from the downward API).
	mgr.Dir, mgr.Env = root, deploymentEnv(t, deploy)
	mgr.Stdout, mgr.Stderr = &logs, &logs
	start := time.Now()
	if err := mgr.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = mgr.Wait(); close(exited) }()
	defer func() {
		_ = mgr.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = mgr.Process.Kill()
			<-exited
			t.Errorf("the manager did not stop within 30s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("manager log:\n%s", logs.String())
		}
	}()

	for {
		pending, err := notSynced(ctx, k8s, watched[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the manager exited: %v", exitErr)
		case <-ctx.Done():
			t.Fatalf("not Synced after %s: %s", time.Since(start).Round(time.Second), strings.Join(pending, "; "))
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Logf("the samples are Synced %.1fs after the manager started", time.Since(start).Seconds())

	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + probeAddr + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s answered %d %s", path, resp.StatusCode, body)
		}
	}
	// Secure metrics: the manager authenticates the caller with a TokenReview (which the namespaced
	// install still lets it create); an anonymous caller is turned away.
	tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp, err := tlsClient.Get("https://" + metricsAddr + "/metrics"); err != nil {
		t.Errorf("metrics: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			t.Errorf("metrics answered an anonymous caller %d, want 401 or 403", resp.StatusCode)
		}
	}

	// The webhook's certificate, made with the namespaced install's rights: the Secret filled, the CA in
	// the configuration's caBundle.
	for {
		var secret corev1.Secret
		var hook admissionregistrationv1.ValidatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: sa.GetNamespace(), Name: "apimsync-webhook-cert"}, &secret); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Name: "apimsync-validating"}, &hook); err != nil {
			t.Fatal(err)
		}
		if len(secret.Data["tls.crt"]) > 0 && len(hook.Webhooks) > 0 && string(hook.Webhooks[0].ClientConfig.CABundle) == string(secret.Data["ca.crt"]) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the manager made no webhook certificate, or did not inject its CA")
		case <-time.After(500 * time.Millisecond):
		}
	}

	if err := k8s.Get(ctx, client.ObjectKeyFromObject(outside), outside); err != nil {
		t.Fatal(err)
	}
	if len(outside.Finalizers) != 0 || len(outside.Status.Conditions) != 0 {
		t.Errorf("the manager touched a Backend outside its namespaces: finalizers %v, conditions %v", outside.Finalizers, outside.Status.Conditions)
	}
	log := logs.String()
	if !strings.Contains(log, "starting apimsync") || !strings.Contains(log, "\"version\"") {
		t.Errorf("the manager did not log its version at start")
	}
	if strings.Contains(log, "forbidden") {
		t.Errorf("the manager was refused a request: its caches or reads reach beyond its namespaces")
	}
}

// notSynced lists the apimsync objects of ns that are not Synced at their current generation.
func notSynced(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var pending []string
	count := 0
	for _, l := range []client.ObjectList{&v1alpha1.BackendList{}, &v1alpha1.ProductList{}, &v1alpha1.ApplicationPlanList{},
		&v1alpha1.DeveloperAccountList{}, &v1alpha1.ApplicationList{}, &v1alpha1.ActiveDocList{}} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(interface {
				client.Object
				v1alpha1.SyncedObject
			})
			if !ok {
				return nil, fmt.Errorf("%T is not a synced object", it)
			}
			count++
			st := obj.GetSyncStatus()
			r := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
			if r == nil || r.Reason != v1alpha1.ConditionSynced || st.ObservedGeneration != obj.GetGeneration() {
				state := "no status"
				if r != nil {
					state = r.Reason + ": " + r.Message
				}
				pending = append(pending, fmt.Sprintf("%T %s (%s)", obj, obj.GetName(), state))
			}
		}
	}
	if count == 0 {
		return nil, errors.New("no apimsync object in the watched namespace")
	}
	return pending, nil
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the ServiceAccount, with a token
// from the TokenRequest API, as a pod of it would.
func serviceAccountKubeconfig(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa", Namespace: ns}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func find(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind {
			return u
		}
	}
	return nil
}

// deploymentEnv is the environment the Deployment's container gets: its values, and its downward-API
// fields of the pod's namespace.
func deploymentEnv(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	var out []string
	for _, e := range env {
		m := e.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		value, _, _ := unstructured.NestedString(m, "value")
		if path, _, _ := unstructured.NestedString(m, "valueFrom", "fieldRef", "fieldPath"); path == "metadata.namespace" {
			value = deploy.GetNamespace()
		} else if path != "" {
			t.Fatalf("the Deployment's env %s comes from %s, which this test does not fill", name, path)
		}
		out = append(out, name+"="+value)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for the manager's two output streams.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func mustRef(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
