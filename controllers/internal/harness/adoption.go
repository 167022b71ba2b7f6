package harness

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// ApplyToTenant creates the namespace's provider-account Secret and the objects in the namespace, and
// returns those that are synced with 3scale.
func ApplyToTenant(t *testing.T, ns string, objs []client.Object) []engine.Object {
	t.Helper()
	Create(t, DefaultSecret(ns))
	var synced []engine.Object
	for _, obj := range objs {
		obj.SetNamespace(ns)
		Create(t, obj)
		if s, ok := obj.(engine.Object); ok {
			synced = append(synced, s)
		}
	}
	return synced
}

// AdoptsWithNoWrite applies objects to a namespace whose tenant already has what they describe: every
// object must be Synced with no write to 3scale, each announcing its adoption in an Event, at least the given number
// of each kind; a drift check of everything (sync-now) must write nothing either.
func AdoptsWithNoWrite(t *testing.T, ns string, objs []client.Object, want map[string]int) {
	t.Helper()
	kinds := map[string]int{}
	for _, obj := range objs { // before the create, which clears TypeMeta
		if _, ok := obj.(engine.Object); ok {
			kinds[obj.GetObjectKind().GroupVersionKind().Kind]++
		}
	}
	before := WritesTo(ns)
	synced := ApplyToTenant(t, ns, objs)
	for _, g := range GeneratedBy(t, objs) {
		synced = append(synced, g)
		kinds[engine.KindOf(g)]++
	}
	for k, n := range want {
		if kinds[k] < n {
			t.Errorf("%d %s, want %d at least (%v)", kinds[k], k, n, kinds)
		}
	}
	WaitState(t, v1alpha1.ConditionSynced, synced...)
	if n := WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes to 3scale to adopt the tenant, want 0: %v", n, LastWrites(ns, n))
	}
	for _, s := range synced { // each adoption is announced by an Event
		WantEvent(t, s, v1alpha1.ReasonAdopted+": adopted existing")
	}
	// A drift check of everything: 3scale is read again, nothing written.
	for _, s := range synced {
		Update(t, s, func() { s.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "adopted"}) })
	}
	Eventually(t, WaitTimeout, func() string {
		for _, s := range synced {
			if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(s), s); err != nil || s.GetSyncStatus().SyncNow != "adopted" {
				return "not every object was checked yet"
			}
		}
		return ""
	})
	if n := WritesTo(ns) - before; n != 0 {
		t.Errorf("%d writes to 3scale after a drift check of the adopted tenant, want 0: %v", n, LastWrites(ns, n))
	}
}

// AsFiles returns objects as files hold them: spec and metadata, no status.
func AsFiles(ns string, objs ...client.Object) []client.Object {
	var out []client.Object
	for _, o := range objs {
		c := o.DeepCopyObject().(client.Object)
		c.SetNamespace(ns)
		c.SetResourceVersion("")
		c.SetUID("")
		c.SetFinalizers(nil)
		c.SetAnnotations(nil)
		c.SetGeneration(0)
		c.SetCreationTimestamp(metav1.Time{})
		if s, ok := c.(v1alpha1.SyncedObject); ok {
			*s.GetSyncStatus() = v1alpha1.CommonStatus{}
			s.SetRemoteID(0)
		}
		out = append(out, c)
	}
	return out
}

// PlannedWrites adds up the writes of plans, and tells whether any would change 3scale.
func PlannedWrites(t *testing.T, ns string, files []client.Object) (int, bool, []plugin.Plan) {
	t.Helper()
	plans, err := controllers.DiffObjects(context.Background(), K8s, Env.Scheme, ns, files, controllers.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, changes := 0, false
	for _, p := range plans {
		n += len(p.Writes)
		changes = changes || p.Changes()
	}
	return n, changes, plans
}

// PlanOf returns the plan of the object kind/name among plans.
func PlanOf(t *testing.T, plans []plugin.Plan, kind, name string) plugin.Plan {
	t.Helper()
	for _, p := range plans {
		if p.Kind == kind && p.Name == name {
			return p
		}
	}
	t.Fatalf("no plan for %s %s: %+v", kind, name, plans)
	return plugin.Plan{}
}

// GeneratedBy waits until the OpenAPIs among objs have generated what their documents describe (each
// Synced, or failing the test when one is Invalid), and returns what they generated.
func GeneratedBy(t *testing.T, objs []client.Object) []engine.Object {
	t.Helper()
	var out []engine.Object
	for _, obj := range objs {
		o, ok := obj.(*v1alpha1.OpenAPI)
		if !ok {
			continue
		}
		Eventually(t, WaitTimeout, func() string {
			if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
				return err.Error()
			}
			if c := meta.FindStatusCondition(o.Status.Conditions, v1alpha1.ConditionSynced); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == o.Generation {
				return ""
			}
			return fmt.Sprintf("OpenAPI %s: %v", o.Name, o.Status.Conditions)
		})
		for _, list := range []client.ObjectList{&v1alpha1.BackendList{}, &v1alpha1.ProductList{}, &v1alpha1.ApplicationPlanList{}, &v1alpha1.ActiveDocList{}} {
			if err := K8s.List(context.Background(), list, client.InNamespace(o.Namespace), client.MatchingLabels{v1alpha1.GeneratedByLabel: o.Name}); err != nil {
				t.Fatal(err)
			}
			items, _ := meta.ExtractList(list)
			for _, item := range items {
				out = append(out, item.(engine.Object))
			}
		}
	}
	return out
}
