package controllers_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// TestEveryKindForgetsEveryIDOfItsOldTenant (issue 42, item 1, as a rule of the engine): for every kind
// of the table, an object whose status holds remote ids everywhere it can — its own, its items', its
// users', its features', its metrics' — holds none after ForgetTenantIDs, which the engine calls when the
// provider account points at another tenant; only status.leftBehind (the old tenant's copy, announced)
// keeps one. A kind that adds an id to its status and forgets to forget it fails here.
func TestEveryKindForgetsEveryIDOfItsOldTenant(t *testing.T) {
	for _, k := range controllers.Kinds {
		obj, ok := k.New().(engine.Object)
		if !ok {
			t.Fatalf("%s is not an engine.Object", k.Name())
		}
		status := reflect.ValueOf(obj).Elem().FieldByName("Status")
		ids := fillIDs(status, "Status")
		if len(ids) == 0 {
			t.Errorf("%s: no remote id found in its status to fill", k.Name())
		}
		obj.ForgetTenantIDs()
		for _, left := range heldIDs(status, "Status") {
			t.Errorf("%s: %s still holds the old tenant's id after ForgetTenantIDs", k.Name(), left)
		}
	}
}

// remoteIDField reports a status field that holds remote ids: an int64 named …ID, a map of them
// (…IDs), the items of a portal (structs with an ID), the built-in originals. LeftBehind is the old
// tenant's copy on purpose.
func remoteIDField(f reflect.StructField) bool {
	switch {
	case f.Name == "LeftBehind":
		return false
	case f.Type.Kind() == reflect.Int64 && strings.HasSuffix(f.Name, "ID"),
		f.Type.Kind() == reflect.Map && (strings.HasSuffix(f.Name, "IDs") || f.Name == "BuiltinOriginals"),
		f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && hasIDField(f.Type.Elem()):
		return true
	}
	return false
}

func hasIDField(t reflect.Type) bool {
	_, ok := t.FieldByName("ID")
	return ok
}

// walkIDs calls visit with every remote-id field of v (a struct, walked through embedded and nested
// structs) and its path.
func walkIDs(v reflect.Value, path string, visit func(path string, field reflect.Value)) {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		switch {
		case remoteIDField(f):
			visit(path+"."+f.Name, fv)
		case f.Type.Kind() == reflect.Struct:
			walkIDs(fv, path+"."+f.Name, visit)
		}
	}
}

// fillIDs sets every remote-id field of v and returns their paths.
func fillIDs(v reflect.Value, path string) []string {
	var out []string
	walkIDs(v, path, func(p string, fv reflect.Value) {
		switch fv.Kind() {
		case reflect.Int64:
			fv.SetInt(94)
		case reflect.Map:
			m := reflect.MakeMap(fv.Type())
			val := reflect.New(fv.Type().Elem()).Elem()
			if val.Kind() == reflect.Int64 {
				val.SetInt(94)
			} else {
				val.SetString("tenant a's")
			}
			m.SetMapIndex(reflect.ValueOf("x"), val)
			fv.Set(m)
		case reflect.Slice:
			item := reflect.New(fv.Type().Elem()).Elem()
			item.FieldByName("ID").SetInt(94)
			fv.Set(reflect.Append(fv, item))
		}
		out = append(out, p)
	})
	return out
}

// heldIDs returns the paths of the remote-id fields of v that are not empty.
func heldIDs(v reflect.Value, path string) []string {
	var out []string
	walkIDs(v, path, func(p string, fv reflect.Value) {
		if !fv.IsZero() && (fv.Kind() == reflect.Int64 || fv.Len() > 0) {
			out = append(out, p)
		}
	})
	return out
}

// TestSamplesMovedToATenantWhoseIDsCollide (issue 42, item 1, over every kind the samples hold): the
// samples synced to tenant a, then their provider account pointed at tenant b, where objects made by
// hand hold every id the samples recorded on a (the simulator numbers each tenant's objects alike). Every
// object converges on b, and not one of b's objects made by hand is written or deleted: nothing is
// touched by an id of the old tenant.
func TestSamplesMovedToATenantWhoseIDsCollide(t *testing.T) {
	ns, ctx := harness.NewNamespace(t), context.Background()
	objs := applySamples(t, ns)
	harness.WaitState(t, v1alpha1.ConditionSynced, objs...)
	maxID := int64(0)
	for _, o := range objs {
		if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		maxID = max(maxID, o.GetRemoteID())
		if p, ok := o.(*v1alpha1.DeveloperPortal); ok {
			for _, it := range p.Status.Items {
				maxID = max(maxID, it.ID)
			}
		}
	}

	second := ns + "-b"
	b := harness.ByHand(t, second)
	for i := 0; ; i++ {
		made, err := b.CreateProduct(ctx, tsclient.ProductParams{Name: fmt.Sprintf("Hand %d", i), SystemName: fmt.Sprintf("hand_%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.CreateBackend(ctx, tsclient.BackendParams{Name: fmt.Sprintf("Hand %d", i), SystemName: fmt.Sprintf("hand_b_%d", i),
			PrivateEndpoint: "https://hand.example.com"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Signup(ctx, tsclient.SignupParams{OrgName: fmt.Sprintf("Hand %d", i), Username: fmt.Sprintf("hand%d", i),
			Email: fmt.Sprintf("hand%d@example.com", i), Password: "a-long-enough-password"}); err != nil {
			t.Fatal(err)
		}
		if made.ID > maxID || i > 2000 {
			break
		}
	}
	kinds := []string{simulator.KindServices, simulator.KindBackendAPIs, simulator.KindMetrics, simulator.KindMappingRules,
		simulator.KindPlans, simulator.KindAccounts, simulator.KindUsers, simulator.KindApplications, simulator.KindAPIDocs,
		simulator.KindCustomPolicies, simulator.KindProxies, simulator.KindBackendUsages, simulator.KindFeatures}
	// Each object by kind and id (a proxy, which has none, by its service).
	objectsOf := func() map[string]string {
		out := map[string]string{}
		for _, kind := range kinds {
			for _, o := range harness.Sim.Objects(second, kind) {
				id := o["id"]
				if id == nil {
					id = fmt.Sprintf("of service %v", o["service_id"])
				}
				out[fmt.Sprintf("%s %v", kind, id)] = fmt.Sprint(o)
			}
		}
		return out
	}
	before := objectsOf()
	if len(before) == 0 {
		t.Fatal("the second tenant holds nothing to collide with")
	}

	adminURL, token := harness.TenantOf(second)
	secret := &corev1.Secret{}
	if err := harness.K8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1alpha1.DefaultProviderAccountSecret}, secret); err != nil {
		t.Fatal(err)
	}
	harness.Update(t, secret, func() {
		secret.Data = nil
		secret.StringData = map[string]string{"adminURL": adminURL, "token": token, "allowInsecureHTTP": "true"}
	})
	harness.Eventually(t, harness.WaitTimeout, func() string {
		for _, o := range objs {
			if err := harness.K8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err.Error()
			}
			st := o.GetSyncStatus()
			if st.TenantHost == "" || !strings.HasSuffix(adminURL, st.TenantHost) || engine.SyncState(st) != v1alpha1.ConditionSynced ||
				st.ObservedGeneration != o.GetGeneration() {
				_, _, msg := harness.SyncState(t, o)
				return fmt.Sprintf("%s %s is %s on %s: %s", engine.KindOf(o), o.GetName(), engine.SyncState(st), st.TenantHost, msg)
			}
		}
		return ""
	})
	after := objectsOf()
	for key, was := range before {
		if now, ok := after[key]; !ok {
			t.Errorf("%s of the second tenant, made by hand, was deleted", key)
		} else if now != was {
			t.Errorf("%s of the second tenant, made by hand, was written:\nbefore %s\nafter  %s", key, was, now)
		}
	}
	t.Logf("%d objects of the second tenant made by hand, ids up to past %d, none touched", len(before), maxID)
}
