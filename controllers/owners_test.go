package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

// TestEveryKindChecksOneOwnerByTheIndexedKey (issue 43, item 3): the one-owner check is the engine's,
// built by the table from each row's scope, and looks up the very key the owner-key index holds. For
// every kind: an object holding a remote object keeps it, and a younger one of the same tenant, scope
// and system name (a copy of its status, as its Resolve would record it) is refused, naming it. A kind
// whose check and index disagreed on the key would let both through.
func TestEveryKindChecksOneOwnerByTheIndexedKey(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	session := &engine.Session{Tenant: "acme-admin.3scale.net", SystemName: "pets"}
	for _, k := range kinds {
		holder, ok := k.New().(engine.Object)
		if !ok {
			t.Fatalf("%s is not an engine.Object", k.Name())
		}
		holder.SetNamespace("team")
		holder.SetName("first")
		holder.SetUID("uid-first")
		holder.SetCreationTimestamp(metav1.NewTime(time.Unix(1000, 0)))
		st := holder.GetSyncStatus()
		st.TenantHost, st.SystemName = session.Tenant, session.SystemName
		holder.SetRemoteID(7)
		younger := holder.DeepCopyObject().(engine.Object)
		younger.SetName("second")
		younger.SetUID("uid-second")
		younger.SetCreationTimestamp(metav1.NewTime(time.Unix(2000, 0)))
		younger.SetRemoteID(0)
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(holder, younger).
			WithIndex(k.New(), kit.IndexOwnerKey, ownerKeyOf).Build()
		// Each check with claims of its own, as after a restart: only the index tells who holds what.
		if err := k.checkOwner(kindDeps{Reader: c})(context.Background(), holder, session); err != nil {
			t.Errorf("%s: the holder is refused: %v", k.Name(), err)
		}
		err := k.checkOwner(kindDeps{Reader: c})(context.Background(), younger, session)
		if err == nil {
			t.Errorf("%s: a second object of the same remote object passes the one-owner check", k.Name())
			continue
		}
		if class, reason, msg := engine.Classify(err); class != engine.ClassInvalid || reason != v1alpha1.ReasonRemoteOwnedByOtherResource ||
			!strings.Contains(msg, `"first" in this namespace`) {
			t.Errorf("%s: a second object of the same remote object is not refused naming the first: %v", k.Name(), err)
		}
	}
}
