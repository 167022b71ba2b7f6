package openapi

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// An OpenAPI's spec.sourceRef reads its document from the artifact of a Flux source (a GitRepository
// or an OCIRepository of its namespace, source.toolkit.fluxcd.io/v1): the tar.gz source-controller
// already fetched, verified and serves over HTTP at the URL the source's status.artifact gives. The
// sources are read as unstructured objects (no Flux Go module), and the artifact is fetched the way
// kustomize-controller does, with more distrust: status.artifact is written by whoever may update the
// source's status, so apimsync fetches
//
//   - only http://<source-controller's advertised host>/<kind>/<namespace>/<name>/<file>, the one URL
//     source-controller gives that source (FluxSources.SourceHost; SOURCE_CONTROLLER_LOCALHOST, as for
//     Flux's own controllers, only changes where it connects);
//   - with no redirect followed, no proxy, a deadline and a cap on the size;
//   - and uses nothing of it before its digest (status.artifact.digest, sha256 by default) matched.
//
// The archive is read as a stream: only the file at spec.sourceRef.path is kept (at most
// openapiimport.MaxDocumentBytes), the rest goes through the digest and is dropped. What a verified
// artifact holds at a path never changes, so it is kept by digest and path (sourceCacheSize entries):
// an OpenAPI reconciled again, or a second one reading the same artifact, fetches nothing.

// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories,verbs=get;list;watch

// SourceGroupVersion is the API of the Flux sources an OpenAPI reads its document from.
var SourceGroupVersion = schema.GroupVersion{Group: "source.toolkit.fluxcd.io", Version: "v1"}

// SourceKinds are the kinds of Flux sources spec.sourceRef may name.
var SourceKinds = []string{"GitRepository", "OCIRepository"}

// DefaultSourceHost is the host source-controller advertises its artifacts at in Flux's default install
// (--storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local.).
const DefaultSourceHost = "source-controller.flux-system.svc.cluster.local."

const (
	// maxArtifactBytes caps an artifact's download (compressed): a larger one is refused.
	maxArtifactBytes = 50 << 20
	// maxUnpackedBytes caps what is unpacked of an artifact while looking for the document.
	maxUnpackedBytes = 256 << 20
	// fetchTimeout bounds one fetch of an artifact, its body included.
	fetchTimeout = 30 * time.Second
	// sourceCacheSize is the number of documents kept by artifact digest and path.
	sourceCacheSize = 64
)

// FluxSources reads documents from Flux sources' artifacts (spec.sourceRef). Its zero value trusts
// source-controller at DefaultSourceHost. It must not be copied after first use.
type FluxSources struct {
	// SourceHost is the host (host:port; the port 80 may be left out) source-controller advertises its
	// artifacts at: an artifact URL on another host is never fetched. Empty: DefaultSourceHost.
	SourceHost string
	// SourceLocalhost, when set, is the host:port the artifacts are fetched from instead of the one
	// their URL names (SOURCE_CONTROLLER_LOCALHOST, as Flux's controllers read it: a manager run
	// outside the cluster with a port-forward to source-controller). The URL is checked all the same.
	SourceLocalhost string

	// watched are the source kinds whose CRD was installed at setup: they are watched, and read from
	// the manager's cache (cache); the others are read through the Reconciler's Reader.
	watched map[string]bool
	cache   client.Reader

	once      sync.Once
	http      *http.Client
	documents *lru.Cache[artifactKey, artifactFile]
}

// artifactKey is a verified artifact (its digest) and a path in it.
type artifactKey struct{ digest, path string }

// artifactFile is what a verified artifact holds at a path.
type artifactFile struct {
	outcome fileOutcome
	text    string
	size    int64  // fileTooLarge: the file's size
	problem string // notAnArchive: why
}

// fileOutcome says what a verified artifact has at a path: the file, none, one too large to import; or
// that the artifact is no tar.gz.
type fileOutcome int

const (
	fileFound fileOutcome = iota
	fileMissing
	fileTooLarge
	notAnArchive
)

// ready makes the HTTP client and the cache of documents, once.
func (f *FluxSources) ready() {
	f.once.Do(func() {
		f.documents, _ = lru.New[artifactKey, artifactFile](sourceCacheSize)
		f.http = &http.Client{
			// source-controller is in the cluster: never through a proxy; the body as it is stored
			// (no transparent decompression), since the digest is of those bytes.
			Transport: &http.Transport{
				Proxy:                 nil,
				DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				DisableCompression:    true,
				MaxIdleConns:          4,
				IdleConnTimeout:       90 * time.Second,
				ResponseHeaderTimeout: fetchTimeout,
			},
			// A redirect is answered as such, and refused below: only the checked URL is fetched.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	})
}

// readDocument returns the OpenAPI's document: from the Flux source spec.sourceRef names (and records
// which artifact in status.source), or inline or from a ConfigMap or Secret.
func (r *Reconciler) readDocument(ctx context.Context, o *v1alpha1.OpenAPI) (string, error) {
	if o.Spec.SourceRef == nil {
		o.Status.Source = ""
		return kit.ReadDocument(ctx, r.Reader, o.Namespace, o.Spec.Document, o.Spec.DocumentRef)
	}
	text, source, err := r.readSource(ctx, o)
	if err != nil {
		return "", err
	}
	o.Status.Source = source
	return text, nil
}

// readSource reads the document of spec.sourceRef from its source's artifact. It returns the document
// and the artifact it was read from, "<kind>/<name>@<revision> <digest>". A source, an artifact or a
// file that is not there (yet) is a wait (DocumentNotFound); an artifact URL that is not
// source-controller's for that source, or a digest that cannot be checked, is Invalid
// (SourceNotTrusted); an artifact that does not match its digest is retried.
func (r *Reconciler) readSource(ctx context.Context, o *v1alpha1.OpenAPI) (text, source string, err error) {
	ref := o.Spec.SourceRef
	if !isSourceKind(ref.Kind) {
		return "", "", engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.sourceRef.kind %q is not a Flux source apimsync reads: %s", ref.Kind, strings.Join(SourceKinds, " or "))
	}
	src := &unstructured.Unstructured{}
	src.SetGroupVersionKind(SourceGroupVersion.WithKind(ref.Kind))
	switch err := r.sourceReader(ref.Kind).Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: ref.Name}, src); {
	case apierrors.IsNotFound(err):
		return "", "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "waiting for %s %q (spec.sourceRef) to be created", ref.Kind, ref.Name)
	case meta.IsNoMatchError(err):
		return "", "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "waiting for Flux's source-controller: there is no %s kind (%s) in this cluster (spec.sourceRef)", ref.Kind, SourceGroupVersion)
	case err != nil:
		return "", "", err
	}
	what := fmt.Sprintf("%s %q", ref.Kind, ref.Name)
	artifact, found, _ := unstructured.NestedMap(src.Object, "status", "artifact")
	if !found || artifact == nil {
		return "", "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "waiting for %s to fetch its first artifact", what)
	}
	rawURL, _, _ := unstructured.NestedString(artifact, "url")
	digest, _, _ := unstructured.NestedString(artifact, "digest")
	revision, _, _ := unstructured.NestedString(artifact, "revision")
	fetchURL, err := r.artifactURL(ref.Kind, o.Namespace, ref.Name, rawURL)
	if err != nil {
		return "", "", engine.Invalid(v1alpha1.ReasonSourceNotTrusted, "the artifact of %s is not fetched: %v", what, err)
	}
	if _, _, err := digestOf(digest); err != nil {
		return "", "", engine.Invalid(v1alpha1.ReasonSourceNotTrusted, "the artifact of %s is not fetched: %v", what, err)
	}
	atRevision := fmt.Sprintf("the artifact of %s at revision %s", what, revision)
	source = fmt.Sprintf("%s/%s@%s %s", ref.Kind, ref.Name, revision, digest)

	r.FluxSources.ready()
	key := artifactKey{digest: digest, path: cleanPath(ref.Path)}
	file, ok := r.FluxSources.documents.Get(key)
	if !ok {
		if file, err = r.fetchArtifact(ctx, fetchURL, digest, key.path, atRevision); err != nil {
			return "", "", err
		}
		r.FluxSources.documents.Add(key, file)
	}
	switch file.outcome {
	case fileMissing:
		return "", "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "%s has no file %q (spec.sourceRef.path)", atRevision, ref.Path)
	case fileTooLarge:
		return "", "", engine.Invalid(v1alpha1.ReasonInvalidDocument, "the file %q of %s has %d bytes; at most %d are imported", ref.Path, atRevision, file.size, openapiimport.MaxDocumentBytes)
	case notAnArchive:
		return "", "", engine.Invalid(v1alpha1.ReasonInvalidDocument, "%s is not a tar.gz archive: %s", atRevision, file.problem)
	}
	return file.text, source, nil
}

// sourceReader reads sources of kind: from the manager's cache when they are watched.
func (r *Reconciler) sourceReader(kind string) client.Reader {
	if r.FluxSources.watched[kind] && r.FluxSources.cache != nil {
		return r.FluxSources.cache
	}
	return r.Reader
}

func isSourceKind(kind string) bool {
	for _, k := range SourceKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// artifactURL checks the URL a source of kind, namespace and name advertises its artifact at, and
// returns the URL to fetch it from: http, on source-controller's host, at /<kind>/<namespace>/<name>/<file>,
// with no credentials, query or fragment. Its error tells what is wrong, never the URL itself (it
// might carry a credential).
func (r *Reconciler) artifactURL(kind, namespace, name, raw string) (*url.URL, error) {
	trusted := r.FluxSources.SourceHost
	if trusted == "" {
		trusted = DefaultSourceHost
	}
	if raw == "" {
		return nil, errors.New("its status.artifact has no url")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("its status.artifact.url is not a URL")
	}
	if u.Scheme != "http" || u.Opaque != "" {
		return nil, fmt.Errorf("its artifact URL is not http://%s/...; source-controller serves artifacts over plain http", strings.TrimSuffix(trusted, "."))
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, errors.New("its artifact URL carries user information, a query or a fragment, which source-controller's do not")
	}
	if normalHost(u.Host) != normalHost(trusted) {
		return nil, fmt.Errorf("its artifact URL is on host %q, not on source-controller's %q: apimsync fetches artifacts only from source-controller (the manager's --flux-source-host)", u.Host, trusted)
	}
	prefix := "/" + strings.ToLower(kind) + "/" + namespace + "/" + name + "/"
	file, ok := strings.CutPrefix(u.Path, prefix)
	if !ok || file == "" || file == "." || file == ".." || strings.Contains(file, "/") || (u.RawPath != "" && u.RawPath != u.Path) {
		return nil, fmt.Errorf("its artifact URL's path is not %s<file>, where source-controller serves this source's artifacts", prefix)
	}
	host := u.Host
	if r.FluxSources.SourceLocalhost != "" {
		host = r.FluxSources.SourceLocalhost
	}
	return &url.URL{Scheme: "http", Host: host, Path: u.Path}, nil
}

// normalHost is a host:port compared: lower case, without the root's trailing dot and the default port.
func normalHost(h string) string {
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		host, port = h, ""
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if port == "" || port == "80" {
		return host
	}
	return net.JoinHostPort(host, port)
}

// digestOf returns the hash a digest "<algorithm>:<hex>" is computed with, and the sum it says.
func digestOf(digest string) (hash.Hash, []byte, error) {
	algorithm, sum, ok := strings.Cut(digest, ":")
	if !ok || digest == "" {
		return nil, nil, fmt.Errorf("its status.artifact.digest %q is not <algorithm>:<hex>", digest)
	}
	var h hash.Hash
	switch algorithm {
	case "sha256":
		h = sha256.New()
	case "sha384":
		h = sha512.New384()
	case "sha512":
		h = sha512.New()
	default:
		return nil, nil, fmt.Errorf("its digest is %s, which apimsync does not check (sha256, sha384 or sha512: source-controller's --artifact-digest-algo)", algorithm)
	}
	want, err := hex.DecodeString(sum)
	if err != nil || len(want) != h.Size() {
		return nil, nil, fmt.Errorf("its status.artifact.digest is not a %s sum", algorithm)
	}
	return h, want, nil
}

// cleanPath is a path in an archive as compared: relative, without "./" and "..".
func cleanPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// fetchArtifact fetches the artifact at u, checks it against digest, and returns what it holds at
// file. A 404 (source-controller garbage-collected that artifact: the source advertises a newer one)
// is a wait; an artifact larger than maxArtifactBytes is Invalid; any other failure, a mismatch of the
// digest included, is returned to be retried.
func (r *Reconciler) fetchArtifact(ctx context.Context, u *url.URL, digest, file, what string) (artifactFile, error) {
	h, want, err := digestOf(digest)
	if err != nil {
		return artifactFile{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return artifactFile{}, err
	}
	resp, err := r.FluxSources.http.Do(req)
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // the URL stays out of the message
	}
	if err != nil {
		return artifactFile{}, fmt.Errorf("cannot fetch %s from source-controller: %w", what, err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return artifactFile{}, engine.Waiting(v1alpha1.ReasonDocumentNotFound, "%s is no longer served by source-controller (garbage-collected): waiting for the source to advertise its new artifact", what)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return artifactFile{}, fmt.Errorf("source-controller answered %s for %s: redirects are not followed", resp.Status, what)
	case resp.StatusCode != http.StatusOK:
		return artifactFile{}, fmt.Errorf("source-controller answered %s for %s", resp.Status, what)
	case resp.ContentLength > maxArtifactBytes:
		return artifactFile{}, tooLargeArtifact(what)
	}
	body := &cappedReader{r: resp.Body, left: maxArtifactBytes}
	out := findFile(io.TeeReader(body, h), file)
	// The rest of the archive goes through the digest too.
	if _, err := io.Copy(io.Discard, io.TeeReader(body, h)); err != nil {
		if errors.Is(err, errArtifactTooLarge) {
			return artifactFile{}, tooLargeArtifact(what)
		}
		return artifactFile{}, fmt.Errorf("cannot fetch %s from source-controller: %w", what, err)
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return artifactFile{}, fmt.Errorf("%s does not match its digest %s: not used; retrying", what, digest)
	}
	return out, nil
}

func tooLargeArtifact(what string) error {
	return engine.Invalid(v1alpha1.ReasonInvalidDocument, "%s is larger than %d MiB, the most apimsync fetches: keep the API documents in a smaller source (a GitRepository's spec.ignore, an OCIRepository of their own)", what, maxArtifactBytes>>20)
}

// findFile reads the tar.gz archive r until the regular file named file, and returns what it holds
// there. It leaves the rest of r unread; a broken archive (or one cut by the size cap: the digest check
// tells which) is notAnArchive.
func findFile(r io.Reader, file string) artifactFile {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return artifactFile{outcome: notAnArchive, problem: err.Error()}
	}
	unpacked := &cappedReader{r: gz, left: maxUnpackedBytes}
	tr := tar.NewReader(unpacked)
	for {
		hdr, err := tr.Next()
		switch {
		case err == io.EOF:
			return artifactFile{outcome: fileMissing}
		case errors.Is(err, errArtifactTooLarge):
			return artifactFile{outcome: notAnArchive, problem: fmt.Sprintf("it unpacks to more than %d MiB before the document", maxUnpackedBytes>>20)}
		case err != nil:
			return artifactFile{outcome: notAnArchive, problem: err.Error()}
		}
		if hdr.Typeflag != tar.TypeReg || cleanPath(hdr.Name) != file { // (the reader makes the old TypeRegA TypeReg)
			continue
		}
		if hdr.Size > openapiimport.MaxDocumentBytes {
			return artifactFile{outcome: fileTooLarge, size: hdr.Size}
		}
		text, err := io.ReadAll(tr)
		if err != nil {
			return artifactFile{outcome: notAnArchive, problem: err.Error()}
		}
		return artifactFile{outcome: fileFound, text: string(text)}
	}
}

var errArtifactTooLarge = errors.New("artifact too large")

// cappedReader reads at most left bytes of r, then fails with errArtifactTooLarge.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One more byte tells a stream that ends here from one that goes on.
		var one [1]byte
		if n, err := c.r.Read(one[:]); n > 0 {
			return 0, errArtifactTooLarge
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
