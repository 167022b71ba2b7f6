package controllers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// TestSecretDataIsReadOnlyWhenReferencedAndChanged: the manager lists and watches Secrets and ConfigMaps
// metadata-only; it reads the data of a referenced Secret from the API server once, again only after the
// Secret changed, never the data of a Secret nothing references, and a missing Secret costs no read.
func TestSecretDataIsReadOnlyWhenReferencedAndChanged(t *testing.T) {
	ns := harness.NewNamespace(t)
	unrelated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sh.helm.release.v1.big.v1",
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"release":"c2VjcmV0"}}`}},
		Data: map[string][]byte{"release": []byte(strings.Repeat("x", 256<<10))}}
	secret := harness.DefaultSecret(ns)
	backend := harness.PetsBackend(ns)
	waiting := harness.PetsBackend(ns)
	waiting.Name, waiting.Spec.Name = "waiting", "Waiting"
	waiting.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "not-yet"}
	harness.Create(t, unrelated, secret, backend, waiting)
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	harness.WaitState(t, v1alpha1.ConditionOrphan, waiting)

	for _, r := range harness.KubeRequests.Matching(func(r harness.KubeRequest) bool {
		collection := strings.HasSuffix(r.Path, "/secrets") || strings.HasSuffix(r.Path, "/configmaps")
		return r.Method == http.MethodGet && collection
	}) {
		if !strings.Contains(r.Accept, "as=PartialObjectMetadata") {
			t.Errorf("the manager listed or watched %s (watch=%v) with Accept %q: want metadata only", r.Path, r.Watch, r.Accept)
		}
	}
	secretPath := func(name string) string { return "/api/v1/namespaces/" + ns + "/secrets/" + name }
	if n := harness.KubeRequests.Gets(secretPath(unrelated.Name)); n != 0 {
		t.Errorf("the manager read a Secret nothing references %d times", n)
	}
	if n := harness.KubeRequests.Gets(secretPath("not-yet")); n != 0 {
		t.Errorf("the manager asked the API server %d times for a Secret its cache knows does not exist", n)
	}
	// The in-use finalizer changes the Secret once more: let the reads it causes settle.
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if err := harness.K8s.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil || !controllerutil.ContainsFinalizer(secret, controllers.SecretInUseFinalizer) {
			return "the provider-account Secret has no in-use finalizer yet"
		}
		before := harness.KubeRequests.Gets(secretPath(secret.Name))
		time.Sleep(time.Second)
		if harness.KubeRequests.Gets(secretPath(secret.Name)) != before {
			return "the Secret is still being read"
		}
		return ""
	})
	read := harness.KubeRequests.Gets(secretPath(secret.Name))
	if read == 0 {
		t.Fatalf("the provider-account Secret was never read from the API server")
	}

	harness.Update(t, backend, func() { backend.Spec.Description = "edited" })
	harness.WaitState(t, v1alpha1.ConditionSynced, backend)
	if n := harness.KubeRequests.Gets(secretPath(secret.Name)); n != read {
		t.Errorf("an edit of the Backend read its unchanged Secret again: %d reads, want %d", n, read)
	}

	harness.Update(t, secret, func() { secret.Labels = map[string]string{"rotated": "yes"} })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if harness.KubeRequests.Gets(secretPath(secret.Name)) == read {
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
	out, err := controllers.StripForCache(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if _, ok := got.Annotations[corev1.LastAppliedConfigAnnotation]; ok || got.Annotations["keep"] != "me" || got.ManagedFields != nil {
		t.Errorf("stripped metadata = annotations %v, managedFields %v; want only the last-applied annotation and managedFields gone", got.Annotations, got.ManagedFields)
	}
	b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, _ = controllers.StripForCache(b)
	if got := out.(*v1alpha1.Backend); got.ManagedFields != nil || got.Annotations[corev1.LastAppliedConfigAnnotation] != "{}" {
		t.Errorf("a Backend lost %v or kept managedFields %v: only managedFields go", got.Annotations, got.ManagedFields)
	}
}

// TestSecretUseChangesOnlyWithFinalizersDeletionOrReferences: the in-use finalizer of a provider-account
// Secret is looked at again when an object that reads it gains or loses its remote-cleanup finalizer, is being deleted,
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
		"another finalizer":          {change: func(b *v1alpha1.Backend) { b.Finalizers = []string{"example.com/other"} }},
		"deletion":                   {change: func(b *v1alpha1.Backend) { b.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, want: true},
		"another Secret":             {change: func(b *v1alpha1.Backend) { b.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "other"} }, want: true},
		"another Secret synced with": {change: func(b *v1alpha1.Backend) { b.Status.ProviderAccountSecret = "other" }, want: true},
	}
	for name, tc := range cases {
		before, after := base(), base()
		tc.change(after)
		if got := controllers.SecretUseChanged.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}); got != tc.want {
			t.Errorf("%s: the Secret's controller is told %v, want %v", name, got, tc.want)
		}
	}
	// Created without the finalizer, an object uses no Secret yet (it goes on with the first create);
	// created with it (a restore), it does.
	if controllers.SecretUseChanged.Create(event.CreateEvent{Object: base()}) {
		t.Error("a new object without the finalizer is told to the Secret's controller")
	}
	restored := base()
	restored.Finalizers = []string{engine.Finalizer}
	if !controllers.SecretUseChanged.Create(event.CreateEvent{Object: restored}) || !controllers.SecretUseChanged.Delete(event.DeleteEvent{Object: base()}) {
		t.Error("a restored object with the finalizer, or a deletion, is not told to the Secret's controller")
	}
}
