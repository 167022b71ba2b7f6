package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/testenv"
)

// The validating webhook, as the kube-apiserver calls it (envtest installs config/webhook's
// configuration for the namespaces harness.NewAdmissionNamespace makes).

// warningLog keeps the admission warnings the kube-apiserver passes on.
type warningLog struct {
	mu  sync.Mutex
	got []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

// take returns the warnings seen since the last take.
func (w *warningLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.got
	w.got = nil
	return out
}

// applier is a client that keeps the warnings of its writes, as kubectl shows them.
func applier(t *testing.T) (client.Client, *warningLog) {
	t.Helper()
	log := &warningLog{}
	cfg := rest.CopyConfig(harness.Env.Config)
	cfg.WarningHandler = log
	c, err := client.New(cfg, client.Options{Scheme: harness.Env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, log
}

// invalidMessage is the message obj, created in a namespace without the webhook, is Invalid with.
func invalidMessage(t *testing.T, obj engine.Object) string {
	t.Helper()
	harness.Create(t, obj)
	harness.WaitState(t, v1alpha1.ConditionInvalid, obj)
	_, _, msg := harness.SyncState(t, obj)
	return msg
}

// wantRefused checks that err is the webhook's refusal with message, and that nothing was stored.
func wantRefused(t *testing.T, err error, obj client.Object, message string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), message) {
		t.Fatalf("want the webhook to refuse %s with %q, got %v", obj.GetName(), message, err)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("a refusal should be Forbidden: %v", err)
	}
}

// TestWebhookRefusesWhatASyncWouldRefuse: a spec that can never work is refused at apply time with the
// very message the object gets as Invalid where no webhook runs; an update into such a spec too; an
// update that leaves a stored invalid spec as it is (labels, finalizers) is not.
func TestWebhookRefusesWhatASyncWouldRefuse(t *testing.T) {
	ctx := context.Background()
	plain, checked := harness.NewNamespace(t), harness.NewAdmissionNamespace(t)
	harness.Create(t, harness.DefaultSecret(plain), harness.DefaultSecret(checked))

	// (What the CRDs' schemas refuse, such as two limits on one metric and period, never reaches the
	// webhook: these are the rules only the syncers know.)
	overlapping := func(ns string) *v1alpha1.ApplicationPlan {
		p := harness.BasicPlan(ns, "overlapping", "petstore")
		p.Spec.PricingRules[1].From = 50
		return p
	}
	noSummary := func(ns string) *v1alpha1.CustomPolicyDefinition {
		return &v1alpha1.CustomPolicyDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nosummary"},
			Spec: v1alpha1.CustomPolicyDefinitionSpec{Name: "nosummary", Version: "0.1",
				Schema: apiextensionsv1.JSON{Raw: []byte(`{"name":"nosummary","version":"0.1","configuration":{"type":"object"}}`)}}}
	}
	for _, tc := range []struct {
		name string
		obj  func(ns string) engine.Object
	}{
		{"overlapping pricing ranges", func(ns string) engine.Object { return overlapping(ns) }},
		{"a policy manifest without a summary", func(ns string) engine.Object { return noSummary(ns) }},
		{"credentials written into the user's own Secret", func(ns string) engine.Object {
			return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
				Spec: v1alpha1.ApplicationSpec{AccountRef: "acme", PlanRef: "basic", Name: "App", CredentialsRef: &v1alpha1.ProviderAccountRef{Name: "app-credentials"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := invalidMessage(t, tc.obj(plain))
			obj := tc.obj(checked)
			wantRefused(t, harness.K8s.Create(ctx, obj), obj, msg)
			if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
				t.Errorf("a refused object was stored: %v", err)
			}
		})
	}

	// An update into a spec that cannot work is refused the same way.
	plan := harness.BasicPlan(checked, "basic", "petstore")
	harness.Create(t, plan)
	plan.Spec.PricingRules = overlapping(checked).Spec.PricingRules
	err := harness.K8s.Update(ctx, plan)
	wantRefused(t, err, plan, "overlaps pricingRules[0]")

	// A spec stored before the webhook saw it: its labels and finalizers still change, its spec does not
	// change into another that cannot work.
	late := harness.NewNamespace(t)
	stored := overlapping(late)
	harness.Create(t, stored)
	harness.WaitState(t, v1alpha1.ConditionInvalid, stored)
	ns := &corev1.Namespace{}
	if err := harness.K8s.Get(ctx, client.ObjectKey{Name: late}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{testenv.AdmissionLabel: "true"}
	if err := harness.K8s.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, stored, func() { stored.Labels = map[string]string{"team": "pets"} })
	err = harness.K8s.Get(ctx, client.ObjectKeyFromObject(stored), stored)
	if err == nil {
		stored.Spec.PricingRules[1].From = 60
		err = harness.K8s.Update(ctx, stored)
	}
	wantRefused(t, err, stored, "overlaps pricingRules[0]")
}

// TestWebhookWarnsOfASystemNameHeldElsewhere: on one tenant, a second resource for the remote object
// another resource holds is accepted with a warning, never naming another namespace: a GitOps rename or
// namespace move applies the new resource before it prunes the old one. Through the webhook, a rename in
// Git (a new name, the same systemName) still hands the 3scale object over when the old resource goes.
func TestWebhookWarnsOfASystemNameHeldElsewhere(t *testing.T) {
	ns, other := harness.NewAdmissionNamespace(t), harness.NewAdmissionNamespace(t)
	c, warnings := applier(t)
	ctx := context.Background()
	adminURL, token := harness.TenantOf(ns)
	owner := harness.PetsBackend(ns)
	harness.Create(t, harness.DefaultSecret(ns), owner)
	harness.WaitState(t, v1alpha1.ConditionSynced, owner)
	warnings.take()

	harness.Create(t, harness.ProviderSecret(other, v1alpha1.DefaultProviderAccountSecret, adminURL, token))
	intruder := harness.PetsBackend(other)
	if err := c.Create(ctx, intruder); err != nil {
		t.Fatalf("a resource held elsewhere is refused: %v", err)
	}
	got := warnings.take()
	wantWarning(t, got, "already managed by a resource in another namespace")
	for _, w := range got {
		if strings.Contains(w, ns) {
			t.Errorf("the warning names the owner's namespace: %q", w)
		}
	}
	harness.WaitReason(t, intruder, v1alpha1.ConditionInvalid, v1alpha1.ReasonRemoteOwnedByOtherResource)
	if err := c.Delete(ctx, intruder); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, intruder)

	// A rename in Git: the new resource is applied, then the old one pruned.
	renamed := harness.PetsBackend(ns)
	renamed.Name, renamed.Spec.SystemName = "pets-renamed", owner.Status.SystemName
	if err := c.Create(ctx, renamed); err != nil {
		t.Fatalf("a rename's new resource is refused: %v", err)
	}
	wantWarning(t, warnings.take(), fmt.Sprintf("%q in this namespace", owner.Name))
	id := owner.Status.BackendID
	if err := c.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, renamed)
	if renamed.Status.BackendID != id || harness.Sim.Count(ns, "backend_apis") != 1 {
		t.Errorf("the rename made backend %d (%d in 3scale), want backend %d handed over", renamed.Status.BackendID, harness.Sim.Count(ns, "backend_apis"), id)
	}
}

// TestWebhookLetsWaitsThrough: GitOps applies in any order, so what only waits for another object (a plan
// before its Product, an object before its provider account) is accepted, without a warning, and syncs
// once the rest arrives.
func TestWebhookLetsWaitsThrough(t *testing.T) {
	ns := harness.NewAdmissionNamespace(t)
	c, warnings := applier(t)
	ctx := context.Background()
	plan, product, backend := harness.BasicPlan(ns, "basic", "petstore"), harness.PetstoreProduct(ns, "pets"), harness.PetsBackend(ns)
	for _, o := range []client.Object{plan, product, backend, harness.DefaultSecret(ns)} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("%s %s refused: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	if w := warnings.take(); len(w) != 0 {
		t.Errorf("warnings for objects that only wait: %q", w)
	}
	harness.WaitState(t, v1alpha1.ConditionSynced, plan, product, backend)
}

// TestWebhookWarns: what is legal but risky is accepted with a warning: a plan whose limit names a metric
// its Product lacks (it would be Invalid with what the cluster holds: the Product may be changed in the
// same apply), a metric removed while a plan limits it, a Retain policy on a Product with applications.
func TestWebhookWarns(t *testing.T) {
	ns := harness.NewAdmissionNamespace(t)
	c, warnings := applier(t)
	ctx := context.Background()
	product, backend := harness.PetstoreProduct(ns, "pets"), harness.PetsBackend(ns)
	plan := harness.BasicPlan(ns, "basic", "petstore")
	harness.Create(t, harness.DefaultSecret(ns), backend, product, plan)
	harness.WaitState(t, v1alpha1.ConditionSynced, plan, product, backend)
	warnings.take()

	unknown := harness.BasicPlan(ns, "unknown", "petstore")
	unknown.Spec.Limits = append(unknown.Spec.Limits, v1alpha1.LimitSpec{Period: "day", Value: 5, MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "export"}})
	if err := c.Create(ctx, unknown); err != nil {
		t.Fatalf("a plan naming a metric its Product lacks is refused: %v", err)
	}
	wantWarning(t, warnings.take(), "would be Invalid", `"export"`)

	// The product's method "search" goes while plan "basic" limits it.
	harness.UpdateWith(t, c, product, func() { product.Spec.Methods, product.Spec.MappingRules = nil, nil })
	wantWarning(t, warnings.take(), `"search" is removed while ApplicationPlan "basic"`)
	// So does the backend's "list_pets", which basic prices.
	harness.UpdateWith(t, c, backend, func() {
		delete(backend.Spec.Methods, "list_pets")
		backend.Spec.MappingRules = backend.Spec.MappingRules[1:]
	})
	wantWarning(t, warnings.take(), `"list_pets" is removed while ApplicationPlan "basic"`)

	// Retain, with an application on one of the product's plans.
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = ns, "app"
	app.Spec = v1alpha1.ApplicationSpec{AccountRef: "acme", PlanRef: "basic", Name: "App"}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	warnings.take()
	harness.UpdateWith(t, c, product, func() { product.Spec.DeletionPolicy = v1alpha1.DeletionPolicyRetain })
	wantWarning(t, warnings.take(), "deletionPolicy Retain while 1 Applications")
}

// wantWarning checks that one of got has every part of want.
func wantWarning(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range got {
		ok := true
		for _, part := range want {
			ok = ok && strings.Contains(w, part)
		}
		if ok {
			return
		}
	}
	t.Errorf("no warning with %q among %q", want, got)
}

// TestWebhookChecksAgainst3scaleOnRequest: with the admission-check annotation set to remote, the webhook
// also plans the object against 3scale, writing nothing: a dry-run apply tells what a sync would do, and
// what the tenant's present state refuses (a backend of that system name made by hand, with adoption
// Never) is refused; without the annotation, the same object is accepted and turns Invalid on its sync.
func TestWebhookChecksAgainst3scaleOnRequest(t *testing.T) {
	ns := harness.NewAdmissionNamespace(t)
	c, warnings := applier(t)
	ctx := context.Background()
	harness.Create(t, harness.DefaultSecret(ns))
	checked := func() *v1alpha1.Backend {
		b := harness.PetsBackend(ns)
		b.Annotations = map[string]string{controllers.RemoteCheckAnnotation: "remote"}
		return b
	}

	if err := c.Create(ctx, checked(), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	wantWarning(t, warnings.take(), "against 3scale now (create)", `create Backend "pets"`)
	if n := harness.Sim.Count(ns, "backend_apis"); n != 0 {
		t.Fatalf("the check wrote to 3scale: %d backends", n)
	}

	if _, err := harness.ByHand(t, ns).CreateBackend(ctx, tsclient.BackendParams{Name: "Pets", SystemName: "pets", PrivateEndpoint: "https://pets.internal"}); err != nil {
		t.Fatal(err)
	}
	never := checked()
	never.Spec.Adoption = v1alpha1.AdoptionNever
	err := c.Create(ctx, never)
	wantRefused(t, err, never, "with what 3scale holds now")
	if !strings.Contains(err.Error(), v1alpha1.ReasonAdoptionRefused) {
		t.Errorf("the refusal does not say why: %v", err)
	}
	// What the cluster alone makes Invalid (a provider-account Secret without a token) is no refusal, even
	// with the check asked for: the Secret may be fixed in the same apply.
	harness.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-token"}, StringData: map[string]string{"adminURL": "https://example.com"}})
	tokenless := checked()
	tokenless.Name, tokenless.Spec.SystemName = "tokenless", "tokenless"
	tokenless.Spec.ProviderAccountRef = &v1alpha1.ProviderAccountRef{Name: "no-token"}
	if err := c.Create(ctx, tokenless, client.DryRunAll); err != nil {
		t.Fatalf("an object the cluster alone makes Invalid is refused by the check against 3scale: %v", err)
	}
	wantWarning(t, warnings.take(), "would be Invalid")

	unchecked := harness.PetsBackend(ns)
	unchecked.Spec.Adoption = v1alpha1.AdoptionNever
	if err := c.Create(ctx, unchecked); err != nil {
		t.Fatalf("without the annotation, the object is refused: %v", err)
	}
	harness.WaitReason(t, unchecked, v1alpha1.ConditionInvalid, v1alpha1.ReasonAdoptionRefused)
}
