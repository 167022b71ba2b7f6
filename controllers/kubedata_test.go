package controllers

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// kubeRequests records the requests the manager makes to the API server.
var kubeRequests kubeLog

type kubeLog struct {
	mu   sync.Mutex
	reqs []kubeRequest
}

type kubeRequest struct {
	method, path, accept string
	watch                bool
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (l *kubeLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, kubeRequest{method: r.Method, path: r.URL.Path, accept: r.Header.Get("Accept"), watch: r.URL.Query().Get("watch") == "true"})
		l.mu.Unlock()
		return next.RoundTrip(r)
	})
}

// matching returns the recorded requests that keep says to.
func (l *kubeLog) matching(keep func(kubeRequest) bool) []kubeRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []kubeRequest
	for _, r := range l.reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// gets counts the manager's GETs of one object by its path.
func (l *kubeLog) gets(path string) int {
	return len(l.matching(func(r kubeRequest) bool { return r.method == http.MethodGet && r.path == path }))
}

// TestSecretDataIsReadOnlyWhenReferencedAndChanged: the manager lists and watches Secrets and ConfigMaps
// metadata-only; it reads the data of a referenced Secret from the API server once, again only after the
// Secret changed, never the data of a Secret nothing references, and a missing Secret costs no read.
func TestSecretDataIsReadOnlyWhenReferencedAndChanged(t *testing.T) {
	ns := newNamespace(t)
	unrelated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sh.helm.release.v1.big.v1",
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"release":"c2VjcmV0"}}`}},
		Data: map[string][]byte{"release": []byte(strings.Repeat("x", 256<<10))}}
	secret := defaultSecret(ns)
	backend := petsBackend(ns)
	waiting := petsBackend(ns)
	waiting.Name, waiting.Spec.Name = "waiting", "Waiting"
	waiting.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "not-yet"}
	create(t, unrelated, secret, backend, waiting)
	waitState(t, v1alpha1.ConditionSynced, backend)
	waitState(t, v1alpha1.ConditionOrphan, waiting)

	for _, r := range kubeRequests.matching(func(r kubeRequest) bool {
		collection := strings.HasSuffix(r.path, "/secrets") || strings.HasSuffix(r.path, "/configmaps")
		return r.method == http.MethodGet && collection
	}) {
		if !strings.Contains(r.accept, "as=PartialObjectMetadata") {
			t.Errorf("the manager listed or watched %s (watch=%v) with Accept %q: want metadata only", r.path, r.watch, r.accept)
		}
	}
	secretPath := func(name string) string { return "/api/v1/namespaces/" + ns + "/secrets/" + name }
	if n := kubeRequests.gets(secretPath(unrelated.Name)); n != 0 {
		t.Errorf("the manager read a Secret nothing references %d times", n)
	}
	if n := kubeRequests.gets(secretPath("not-yet")); n != 0 {
		t.Errorf("the manager asked the API server %d times for a Secret its cache knows does not exist", n)
	}
	// The in-use finalizer changes the Secret once more: let the reads it causes settle.
	eventually(t, waitTimeout, func() string {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil || !controllerutil.ContainsFinalizer(secret, SecretInUseFinalizer) {
			return "the provider-account Secret has no in-use finalizer yet"
		}
		before := kubeRequests.gets(secretPath(secret.Name))
		time.Sleep(time.Second)
		if kubeRequests.gets(secretPath(secret.Name)) != before {
			return "the Secret is still being read"
		}
		return ""
	})
	read := kubeRequests.gets(secretPath(secret.Name))
	if read == 0 {
		t.Fatalf("the provider-account Secret was never read from the API server")
	}

	update(t, backend, func() { backend.Spec.Description = "edited" })
	waitState(t, v1alpha1.ConditionSynced, backend)
	if n := kubeRequests.gets(secretPath(secret.Name)); n != read {
		t.Errorf("an edit of the Backend read its unchanged Secret again: %d reads, want %d", n, read)
	}

	update(t, secret, func() { secret.Labels = map[string]string{"rotated": "yes"} })
	eventually(t, waitTimeout, func() string {
		if kubeRequests.gets(secretPath(secret.Name)) == read {
			return "the changed Secret was not read again"
		}
		return ""
	})
}

// TestCacheTransformDropsWhatApimsyncNeverReads: managedFields go from every cached object, and kubectl's
// last-applied-configuration (a Secret's data in clear) from the metadata of Secrets and ConfigMaps.
func TestCacheTransformDropsWhatApimsyncNeverReads(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "s",
		Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "keep": "me"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := stripForCache(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if _, ok := got.Annotations[corev1.LastAppliedConfigAnnotation]; ok || got.Annotations["keep"] != "me" || got.ManagedFields != nil {
		t.Errorf("stripped metadata = annotations %v, managedFields %v; want only the last-applied annotation and managedFields gone", got.Annotations, got.ManagedFields)
	}
	b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, _ = stripForCache(b)
	if got := out.(*v1alpha1.Backend); got.ManagedFields != nil || got.Annotations[corev1.LastAppliedConfigAnnotation] != "{}" {
		t.Errorf("a Backend lost %v or kept managedFields %v: only managedFields go", got.Annotations, got.ManagedFields)
	}
}

// TestSecretUseChangesOnlyWithFinalizersDeletionOrReferences: the in-use finalizer of a provider-account
// Secret is looked at again when an object that reads it gains or loses its finalizer, is being deleted,
// or names another Secret; not at each of its status writes (in a burst, each made the Secret's controller
// list every object that reads it).
func TestSecretUseChangesOnlyWithFinalizersDeletionOrReferences(t *testing.T) {
	base := func() *v1alpha1.Backend {
		b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Name: "pets", Namespace: "team-a"}}
		b.Status.ProviderAccountSecret = v1alpha1.DefaultProviderAccountSecret
		return b
	}
	cases := map[string]struct {
		change func(b *v1alpha1.Backend)
		want   bool
	}{
		"a status write":             {change: func(b *v1alpha1.Backend) { b.Status.SyncedHash = "h2"; b.Status.BackendID = 7 }},
		"a spec edit":                {change: func(b *v1alpha1.Backend) { b.Spec.Name = "Pets v2" }},
		"the finalizer":              {change: func(b *v1alpha1.Backend) { b.Finalizers = []string{engine.Finalizer} }, want: true},
		"deletion":                   {change: func(b *v1alpha1.Backend) { b.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, want: true},
		"another Secret":             {change: func(b *v1alpha1.Backend) { b.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "other"} }, want: true},
		"another Secret synced with": {change: func(b *v1alpha1.Backend) { b.Status.ProviderAccountSecret = "other" }, want: true},
	}
	for name, tc := range cases {
		before, after := base(), base()
		tc.change(after)
		if got := secretUseChanged.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}); got != tc.want {
			t.Errorf("%s: the Secret's controller is told %v, want %v", name, got, tc.want)
		}
	}
}
