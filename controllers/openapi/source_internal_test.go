package openapi

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// TestArtifactURL: only http://<source-controller's host>/<kind>/<namespace>/<name>/<file> is fetched,
// from SourceLocalhost when set; an error never repeats the URL.
func TestArtifactURL(t *testing.T) {
	const ok = "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/abc.tar.gz"
	cases := []struct {
		name, host, localhost, url, fetch, err string
	}{
		{name: "default host", url: ok, fetch: ok},
		{name: "without the root's dot", url: "http://source-controller.flux-system.svc.cluster.local/gitrepository/team-a/pets/abc.tar.gz",
			fetch: "http://source-controller.flux-system.svc.cluster.local/gitrepository/team-a/pets/abc.tar.gz"},
		{name: "port 80 and upper case", url: "http://Source-Controller.flux-system.svc.cluster.local.:80/gitrepository/team-a/pets/abc.tar.gz",
			fetch: "http://Source-Controller.flux-system.svc.cluster.local.:80/gitrepository/team-a/pets/abc.tar.gz"},
		{name: "localhost override", localhost: "localhost:9090", url: ok, fetch: "http://localhost:9090/gitrepository/team-a/pets/abc.tar.gz"},
		{name: "configured host", host: "source-controller.flux.svc:9090", url: "http://source-controller.flux.svc:9090/gitrepository/team-a/pets/abc.tar.gz",
			fetch: "http://source-controller.flux.svc:9090/gitrepository/team-a/pets/abc.tar.gz"},
		{name: "default host not trusted when another is configured", host: "source-controller.flux.svc:9090", url: ok, err: `on host "source-controller.flux-system.svc.cluster.local."`},
		{name: "other host", url: "http://evil.example/gitrepository/team-a/pets/abc.tar.gz", err: `on host "evil.example"`},
		{name: "other port", url: "http://source-controller.flux-system.svc.cluster.local.:8080/gitrepository/team-a/pets/abc.tar.gz", err: "not on source-controller's"},
		{name: "https", url: "https://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/abc.tar.gz", err: "plain http"},
		{name: "credentials", url: "http://user:s3cret@source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/abc.tar.gz", err: "user information"},
		{name: "query", url: ok + "?token=s3cret", err: "a query"},
		{name: "another source", url: "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/other/abc.tar.gz", err: "path is not /gitrepository/team-a/pets/<file>"},
		{name: "another kind", url: "http://source-controller.flux-system.svc.cluster.local./ocirepository/team-a/pets/abc.tar.gz", err: "path is not"},
		{name: "deeper", url: "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/x/abc.tar.gz", err: "path is not"},
		{name: "dot dot", url: "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/..", err: "path is not"},
		{name: "encoded slash", url: "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/a%2Fb.tar.gz", err: "path is not"},
		{name: "no file", url: "http://source-controller.flux-system.svc.cluster.local./gitrepository/team-a/pets/", err: "path is not"},
		{name: "empty", url: "", err: "no url"},
		{name: "not a URL", url: "http://%zz", err: "not a URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{FluxSources: FluxSources{SourceHost: c.host, SourceLocalhost: c.localhost}}
			u, err := r.artifactURL("GitRepository", "team-a", "pets", c.url)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "" && u.String() != c.fetch:
				t.Errorf("fetches %s, want %s", u, c.fetch)
			case c.err != "" && err == nil:
				t.Fatalf("fetches %s, want it refused", u)
			case c.err != "" && !strings.Contains(err.Error(), c.err):
				t.Errorf("error %q, want it to say %q", err, c.err)
			case err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "abc.tar.gz")):
				t.Errorf("the error repeats the URL: %v", err)
			}
		})
	}
}

// TestDigestOf: sha256, sha384 and sha512 are checked; another algorithm or a malformed sum is refused.
func TestDigestOf(t *testing.T) {
	for digest, want := range map[string]string{
		"sha256:" + strings.Repeat("ab", 32): "",
		"sha384:" + strings.Repeat("ab", 48): "",
		"sha512:" + strings.Repeat("ab", 64): "",
		"blake3:" + strings.Repeat("ab", 32): "blake3, which apimsync does not check",
		"sha256:abcd":                        "not a sha256 sum",
		"sha256:" + strings.Repeat("zz", 32): "not a sha256 sum",
		strings.Repeat("ab", 32):             "not <algorithm>:<hex>",
		"":                                   "not <algorithm>:<hex>",
	} {
		_, _, err := digestOf(digest)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", digest, err, want)
		}
	}
}

// archive is a tar.gz of the entries, each regular file made of x's.
func archive(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	return PackTarGz(t, entries, func(h *tar.Header) []byte { return bytes.Repeat([]byte("x"), int(h.Size)) })
}

// PackTarGz is a tar.gz of the entries, each regular file's content given by body (for the tests of
// this room, source_test.go's artifacts too).
func PackTarGz(t *testing.T, entries []*tar.Header, body func(*tar.Header) []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(body(h)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFindFile: the regular file at the path, named with or without "./"; a symbolic link is not
// followed; a file over the import's limit and a broken archive are told apart.
func TestFindFile(t *testing.T) {
	reg := func(name string, size int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644}
	}
	for name, c := range map[string]struct {
		archive []byte
		want    fileOutcome
		text    string
	}{
		"found":         {archive: archive(t, &tar.Header{Name: "apis/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("apis/a.yaml", 3)), want: fileFound, text: "xxx"},
		"dot slash":     {archive: archive(t, reg("./apis/a.yaml", 2)), want: fileFound, text: "xx"},
		"missing":       {archive: archive(t, reg("apis/b.yaml", 2)), want: fileMissing},
		"symbolic link": {archive: archive(t, &tar.Header{Name: "apis/a.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), want: fileMissing},
		"too large":     {archive: archive(t, reg("apis/a.yaml", openapiimport.MaxDocumentBytes+1)), want: fileTooLarge},
		"not gzip":      {archive: []byte("plain text"), want: notAnArchive},
	} {
		got := findFile(bytes.NewReader(c.archive), cleanPath("./apis//a.yaml"))
		if got.outcome != c.want || got.text != c.text {
			t.Errorf("%s: outcome %d %q (%s), want %d %q", name, got.outcome, got.text, got.problem, c.want, c.text)
		}
	}
}

// TestFetchArtifact: the body must match the digest; a 404 is a wait; a redirect is not followed; an
// artifact over the size cap is Invalid; a cached artifact is not fetched again.
func TestFetchArtifact(t *testing.T) {
	good := archive(t, &tar.Header{Name: "apis/a.yaml", Typeflag: tar.TypeReg, Size: 4, Mode: 0o644})
	sum := sha512.Sum512(good)
	digest := "sha512:" + hex.EncodeToString(sum[:])
	var redirected int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/good":
			_, _ = w.Write(good)
		case "/redirect":
			http.Redirect(w, req, "/elsewhere", http.StatusFound)
		case "/elsewhere":
			redirected++
			_, _ = w.Write(good)
		case "/huge":
			w.Header().Set("Content-Length", "104857600")
			_, _ = w.Write(good)
		case "/broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		default:
			http.NotFound(w, req)
		}
	}))
	defer srv.Close()
	r := &Reconciler{}
	r.FluxSources.ready()
	fetch := func(path, digest string) (artifactFile, error) {
		u, _ := url.Parse(srv.URL + path)
		return r.fetchArtifact(context.Background(), u, digest, "apis/a.yaml", "the artifact of GitRepository \"pets\"")
	}
	if f, err := fetch("/good", digest); err != nil || f.outcome != fileFound || f.text != "xxxx" {
		t.Errorf("good: %+v, %v", f, err)
	}
	bad := "sha512:" + strings.Repeat("00", 64)
	if _, err := fetch("/good", bad); err == nil || !strings.Contains(err.Error(), `the artifact of GitRepository "pets" does not match its digest`) || reasoned(err) {
		t.Errorf("wrong digest: %v, want a retried error naming the source", err)
	}
	if _, err := fetch("/gone", digest); !isReason(err, v1alpha1.ReasonDocumentNotFound) {
		t.Errorf("404: %v, want a wait", err)
	}
	if _, err := fetch("/redirect", digest); err == nil || !strings.Contains(err.Error(), "redirects are not followed") || redirected != 0 {
		t.Errorf("redirect: %v (%d fetches of its target), want it refused", err, redirected)
	}
	if _, err := fetch("/huge", digest); !isReason(err, v1alpha1.ReasonInvalidDocument) {
		t.Errorf("huge: %v, want Invalid", err)
	}
	if _, err := fetch("/broken", digest); err == nil || reasoned(err) {
		t.Errorf("500: %v, want a retried error", err)
	}
}

func reasoned(err error) bool {
	var re *engine.ReasonedError
	return errors.As(err, &re)
}

func isReason(err error, reason string) bool {
	_, r, _ := engine.Classify(err)
	return err != nil && reasoned(err) && r == reason
}

// TestCappedReader: a stream of exactly the cap is read whole; one byte more fails.
func TestCappedReader(t *testing.T) {
	if b, err := io.ReadAll(&cappedReader{r: strings.NewReader("abcd"), left: 4}); err != nil || string(b) != "abcd" {
		t.Errorf("at the cap: %q, %v", b, err)
	}
	if _, err := io.ReadAll(&cappedReader{r: strings.NewReader("abcde"), left: 4}); err != errArtifactTooLarge {
		t.Errorf("over the cap: %v", err)
	}
}

// TestReadSourceWithoutFlux: without Flux's CRDs, an OpenAPI reading a source waits for
// source-controller to be installed.
func TestReadSourceWithoutFlux(t *testing.T) {
	// What the manager's client answers for a kind the API server does not serve.
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gvk := obj.GetObjectKind().GroupVersionKind()
			return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
		}}).Build()
	r := &Reconciler{Client: c, Reader: c}
	o := &v1alpha1.OpenAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pets"},
		Spec: v1alpha1.OpenAPISpec{SourceRef: &v1alpha1.OpenAPISourceRef{Kind: "GitRepository", Name: "pets", Path: "a.yaml"}}}
	_, err := r.readDocument(context.Background(), o)
	class, reason, message := engine.Classify(err)
	if class != engine.ClassWaiting || reason != v1alpha1.ReasonDocumentNotFound || !strings.Contains(message, "waiting for Flux's source-controller: there is no GitRepository kind") {
		t.Errorf("%v, want a wait for Flux", err)
	}
}
