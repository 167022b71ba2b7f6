package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/test/testenv"
)

// writesTo counts the non-GET calls the simulator served for a tenant.
func writesTo(tenant string) int {
	n := 0
	for _, c := range sim.Stats().Calls {
		if c.Tenant == tenant && c.Method != "GET" {
			n += c.Count
		}
	}
	return n
}

// applySamples creates samples/ in ns, its provider account pointed at ns's simulator tenant, and
// returns the synced objects.
func applySamples(t *testing.T, ns string) []syncedObject {
	t.Helper()
	rendered, err := testenv.Render("samples")
	if err != nil {
		t.Fatal(err)
	}
	adminURL, token := tenantOf(ns)
	var out []syncedObject
	for _, u := range rendered {
		u.SetNamespace(ns)
		if u.GetKind() == "Secret" && u.GetName() == v1alpha1.DefaultProviderAccountSecret {
			u.Object["stringData"] = map[string]any{"adminURL": adminURL, "token": token, "allowInsecureHTTP": "true"}
			delete(u.Object, "data")
		}
		if err := k8s.Create(context.Background(), u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if obj := typedSynced(t, u); obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

func typedSynced(t *testing.T, u *unstructured.Unstructured) syncedObject {
	var obj syncedObject
	switch u.GetKind() {
	case "Backend":
		obj = &v1alpha1.Backend{}
	case "Product":
		obj = &v1alpha1.Product{}
	case "ApplicationPlan":
		obj = &v1alpha1.ApplicationPlan{}
	default:
		return nil
	}
	obj.SetNamespace(u.GetNamespace())
	obj.SetName(u.GetName())
	return obj
}

// TestDriftChecksOfTheSamplesWriteNothing: porta stores some values in its own form (explicit ports,
// the apicast policy appended to chains); after convergence, drift checks of every sample object read
// 3scale and write nothing, and report no repair.
func TestDriftChecksOfTheSamplesWriteNothing(t *testing.T) {
	ns := newNamespace(t)
	objs := applySamples(t, ns)
	waitState(t, v1alpha1.ConditionSynced, objs...)
	before := writesTo(ns)
	for round := 1; round <= 3; round++ {
		value := fmt.Sprint(round)
		for _, o := range objs {
			update(t, o, func() { o.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: value}) })
		}
		eventually(t, waitTimeout, func() string {
			for _, o := range objs {
				if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
					return err.Error()
				}
				if o.GetSyncStatus().SyncNow != value {
					return fmt.Sprintf("%s has not acted on sync-now %s", o.GetName(), value)
				}
			}
			return ""
		})
	}
	if got := writesTo(ns) - before; got != 0 {
		t.Errorf("3 drift checks of the samples made %d writes, want 0", got)
	}
	for _, o := range objs {
		if ev := strings.Join(eventsOf(t, o), "\n"); strings.Contains(ev, engine.ReasonDriftRepaired) {
			t.Errorf("%s reported a repair: %s", o.GetName(), ev)
		}
	}
}
