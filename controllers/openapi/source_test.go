package openapi_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/openapi"
)

// artifactServer plays Flux's source-controller: it serves the artifacts put on it, by path, and counts
// the requests for each path.
type artifactServer struct {
	mu        sync.Mutex
	artifacts map[string][]byte
	requests  map[string]int
	srv       *httptest.Server
}

func newArtifactServer() *artifactServer {
	a := &artifactServer{artifacts: map[string][]byte{}, requests: map[string]int{}}
	a.srv = httptest.NewServer(a)
	return a
}

func (a *artifactServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests[r.URL.Path]++
	body, ok := a.artifacts[r.URL.Path]
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(body)
}

// host is the server's host:port.
func (a *artifactServer) host() string { return strings.TrimPrefix(a.srv.URL, "http://") }

func (a *artifactServer) put(path string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.artifacts[path] = body
}

func (a *artifactServer) requestsFor(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[path]
}

// fluxSourceController is the suite's source-controller: the manager trusts its host (TestMain).
var fluxSourceController = newArtifactServer()

// tarGz is a tar.gz archive of the files, as source-controller packs an artifact.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	entries := []*tar.Header{{Name: "apis/", Typeflag: tar.TypeDir, Mode: 0o755}}
	for name, text := range files {
		entries = append(entries, &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(text))})
	}
	return openapi.PackTarGz(t, entries, func(h *tar.Header) []byte { return []byte(files[h.Name]) })
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fluxSource is a Flux source of kind with no artifact yet.
func fluxSource(ns, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(openapi.SourceGroupVersion.WithKind(kind))
	u.SetNamespace(ns)
	u.SetName(name)
	url := "https://git.example.com/pets.git"
	if kind == "OCIRepository" {
		url = "oci://registry.example.com/pets"
	}
	u.Object["spec"] = map[string]any{"url": url, "interval": "1m"}
	return u
}

// setArtifact writes the source's status.artifact, as source-controller does.
func setArtifact(t *testing.T, src *unstructured.Unstructured, url, revision, digest string) {
	t.Helper()
	ctx := context.Background()
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(src), src); err != nil {
			return err.Error()
		}
		path := url[strings.Index(url[len("http://"):], "/")+len("http://")+1:]
		src.Object["status"] = map[string]any{"artifact": map[string]any{
			"url": url, "path": path, "revision": revision, "digest": digest,
			"lastUpdateTime": time.Now().UTC().Format(time.RFC3339)}}
		if err := harness.K8s.Status().Update(ctx, src); err != nil {
			if apierrors.IsConflict(err) {
				return err.Error()
			}
			t.Fatal(err)
		}
		return ""
	})
}

// publish packs files into an artifact of the source at revision, serves it from the suite's
// source-controller and advertises it in the source's status. It returns the artifact's path.
func publish(t *testing.T, src *unstructured.Unstructured, revision string, files map[string]string) string {
	t.Helper()
	body := tarGz(t, files)
	path := "/" + strings.ToLower(src.GetKind()) + "/" + src.GetNamespace() + "/" + src.GetName() + "/" + strings.NewReplacer("@", "-", ":", "-").Replace(revision) + ".tar.gz"
	fluxSourceController.put(path, body)
	setArtifact(t, src, "http://"+fluxSourceController.host()+path, revision, sha256Digest(body))
	return path
}

// sourceOpenAPI is an OpenAPI reading apis/petstore.yaml of a source of kind.
func sourceOpenAPI(ns, name, kind, source string) *v1alpha1.OpenAPI {
	return &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.OpenAPISpec{SourceRef: &v1alpha1.OpenAPISourceRef{Kind: kind, Name: source, Path: "apis/petstore.yaml"}}}
}

// withStores is the petstore document with a third operation.
var withStores = strings.Replace(petstoreOpenAPI, "components:", `  /stores:
    get:
      operationId: listStores
      responses:
        "200": {description: the stores}
components:`, 1)

// productMethods returns the methods of the Product an OpenAPI generated.
func productMethods(t *testing.T, ns, name string) map[string]v1alpha1.MethodSpec {
	t.Helper()
	product := &v1alpha1.Product{}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, product); err != nil {
		t.Fatal(err)
	}
	return product.Spec.Methods
}

// waitMessage waits until the OpenAPI is in state with reason and a message that contains want.
func waitMessage(t *testing.T, o *v1alpha1.OpenAPI, state, reason, want string) {
	t.Helper()
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			return err.Error()
		}
		for _, c := range o.Status.Conditions {
			if c.Type == state && c.Status == metav1.ConditionTrue && c.Reason == reason && strings.Contains(c.Message, want) {
				return ""
			}
		}
		return fmt.Sprintf("conditions %v, want %s %s saying %q", o.Status.Conditions, state, reason, want)
	})
}

// TestOpenAPIFromAFluxSource: an OpenAPI whose spec.sourceRef names a GitRepository reads its document
// from the artifact source-controller serves, generates from it, and says which revision in
// status.source; its ActiveDoc holds the document; a new revision regenerates; an artifact already read
// is not fetched again.
func TestOpenAPIFromAFluxSource(t *testing.T) {
	ns := harness.NewNamespace(t)
	src := fluxSource(ns, "GitRepository", "pets")
	harness.Create(t, harness.DefaultSecret(ns), src)
	first := publish(t, src, "main@sha1:1111111111111111111111111111111111111111", map[string]string{"apis/petstore.yaml": petstoreOpenAPI, "README.md": "pets"})
	o := sourceOpenAPI(ns, "petstore", "GitRepository", "pets")
	o.Spec.ActiveDoc = &v1alpha1.OpenAPIActiveDocSpec{} // the artifact's document, given to it inline
	harness.Create(t, o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	var doc v1alpha1.ActiveDoc
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "petstore"}, &doc); err != nil || doc.Spec.Document != petstoreOpenAPI {
		t.Errorf("the ActiveDoc of an artifact's document: %v, document %q", err, doc.Spec.Document)
	}
	if !strings.Contains(msg, "2 operations imported") {
		t.Errorf("Synced message %q", msg)
	}
	if want := "GitRepository/pets@main@sha1:1111111111111111111111111111111111111111 sha256:"; !strings.HasPrefix(o.Status.Source, want) {
		t.Errorf("status.source %q, want %q...", o.Status.Source, want)
	}
	if m := productMethods(t, ns, "petstore"); len(m) != 2 || m["listpets"].FriendlyName != "List pets" {
		t.Errorf("the Product's methods are %v, want listPets and showPet", m)
	}

	// A new revision: regenerated; the first artifact was fetched once, however often the OpenAPI was
	// reconciled (its generated resources' syncs wake it).
	second := publish(t, src, "main@sha1:2222222222222222222222222222222222222222", map[string]string{"apis/petstore.yaml": withStores})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			return err.Error()
		}
		if !strings.Contains(o.Status.Source, "sha1:2222") || o.Status.Operations != 3 {
			return "status.source " + o.Status.Source + ", want the second revision with 3 operations"
		}
		return ""
	})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if m := productMethods(t, ns, "petstore"); len(m) != 3 {
		t.Errorf("the Product's methods are %v, want 3", m)
	}
	if n := fluxSourceController.requestsFor(first); n != 1 {
		t.Errorf("the first artifact was fetched %d times, want once", n)
	}
	if n := fluxSourceController.requestsFor(second); n != 1 {
		t.Errorf("the second artifact was fetched %d times, want once", n)
	}

	// A revision whose artifact does not match its digest: nothing is regenerated, and the error, in
	// the manager's log, names the source (not the URL).
	body := tarGz(t, map[string]string{"apis/petstore.yaml": petstoreOpenAPI})
	third := "/gitrepository/" + ns + "/pets/third.tar.gz"
	fluxSourceController.put(third, body)
	setArtifact(t, src, "http://"+fluxSourceController.host()+third, "main@sha1:3333333333333333333333333333333333333333", sha256Digest([]byte("something else")))
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if fluxSourceController.requestsFor(third) == 0 {
			return "the third artifact was not fetched"
		}
		for _, line := range strings.Split(harness.ManagerLogs.String(), "\n") {
			if strings.Contains(line, ns) && strings.Contains(line, `GitRepository \"pets\" at revision main@sha1:3333333333333333333333333333333333333333 does not match its digest`) {
				if strings.Contains(line, third) {
					t.Errorf("the error names the artifact's URL: %s", line)
				}
				return ""
			}
		}
		return "no error about the digest in the manager's log"
	})
	if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.Status.Source, "sha1:2222") || len(productMethods(t, ns, "petstore")) != 3 {
		t.Errorf("status.source %q, methods %v: want the second revision's", o.Status.Source, productMethods(t, ns, "petstore"))
	}
}

// TestOpenAPIFromAFluxSourceWaits: an OpenAPI waits (Orphan, DocumentNotFound) for its source to be
// created, for its first artifact, for a file at its path, and for an artifact source-controller
// garbage-collected to be replaced; then it is Synced. It reads an OCIRepository as a GitRepository.
func TestOpenAPIFromAFluxSourceWaits(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	o := sourceOpenAPI(ns, "petstore", "OCIRepository", "pets")
	harness.Create(t, o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonDocumentNotFound)
	if want := `waiting for OCIRepository "pets" (spec.sourceRef) to be created`; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}

	src := fluxSource(ns, "OCIRepository", "pets")
	harness.Create(t, src)
	waitMessage(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonDocumentNotFound, `waiting for OCIRepository "pets" to fetch its first artifact`)

	publish(t, src, "latest@sha256:aaaa", map[string]string{"apis/other.yaml": petstoreOpenAPI})
	waitMessage(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonDocumentNotFound,
		`the artifact of OCIRepository "pets" at revision latest@sha256:aaaa has no file "apis/petstore.yaml" (spec.sourceRef.path)`)

	// An artifact source-controller no longer serves (404): a wait for the next one.
	gone := "http://" + fluxSourceController.host() + "/ocirepository/" + ns + "/pets/gone.tar.gz"
	setArtifact(t, src, gone, "latest@sha256:bbbb", sha256Digest([]byte("gone")))
	waitMessage(t, o, v1alpha1.ConditionOrphan, v1alpha1.ReasonDocumentNotFound,
		`the artifact of OCIRepository "pets" at revision latest@sha256:bbbb is no longer served by source-controller`)

	publish(t, src, "latest@sha256:cccc", map[string]string{"./apis/petstore.yaml": petstoreOpenAPI})
	waitOpenAPI(t, o, v1alpha1.ConditionSynced, "")
	if !strings.HasPrefix(o.Status.Source, "OCIRepository/pets@latest@sha256:cccc ") {
		t.Errorf("status.source %q", o.Status.Source)
	}
}

// TestOpenAPIFromAFluxSourceNotTrusted: an artifact URL that is not source-controller's for the source
// (another host, another source's path) is never fetched: the OpenAPI is Invalid (SourceNotTrusted).
func TestOpenAPIFromAFluxSourceNotTrusted(t *testing.T) {
	ns := harness.NewNamespace(t)
	src := fluxSource(ns, "GitRepository", "pets")
	harness.Create(t, harness.DefaultSecret(ns), src)
	other := newArtifactServer()
	defer other.srv.Close()
	body := tarGz(t, map[string]string{"apis/petstore.yaml": petstoreOpenAPI})
	path := "/gitrepository/" + ns + "/pets/a.tar.gz"
	other.put(path, body)
	setArtifact(t, src, other.srv.URL+path, "main@sha1:1111", sha256Digest(body))
	o := sourceOpenAPI(ns, "petstore", "GitRepository", "pets")
	harness.Create(t, o)
	msg := waitOpenAPI(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonSourceNotTrusted)
	if want := `the artifact of GitRepository "pets" is not fetched: its artifact URL is on host "` + other.host() + `", not on source-controller's "` + fluxSourceController.host() + `"`; !strings.HasPrefix(msg, want) {
		t.Errorf("message %q, want %q...", msg, want)
	}
	if strings.Contains(msg, path) {
		t.Errorf("the message names the URL: %q", msg)
	}

	// Another source's artifact on source-controller's host.
	elsewhere := "/gitrepository/" + ns + "/other/a.tar.gz"
	fluxSourceController.put(elsewhere, body)
	setArtifact(t, src, "http://"+fluxSourceController.host()+elsewhere, "main@sha1:2222", sha256Digest(body))
	waitMessage(t, o, v1alpha1.ConditionInvalid, v1alpha1.ReasonSourceNotTrusted, `its artifact URL's path is not /gitrepository/`+ns+`/pets/<file>`)
	time.Sleep(time.Second)
	if n, m := other.requestsFor(path), fluxSourceController.requestsFor(elsewhere); n != 0 || m != 0 {
		t.Errorf("%d and %d requests for artifacts that are not the source's, want none", n, m)
	}
	if err := harness.K8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "petstore"}, &v1alpha1.Product{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Product was generated: %v", err)
	}
}
