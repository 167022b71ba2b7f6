package custompolicy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/test/simulator"
)

// customPolicy returns a CustomPolicyDefinition of policy name version 0.1 whose manifest is changed by
// edit (nil: a valid one).
func customPolicy(ns, name string, edit func(manifest map[string]any)) *v1alpha1.CustomPolicyDefinition {
	manifest := map[string]any{
		"$schema": "http://apicast.io/policy-v1.1/schema", "name": "Stamp", "version": "0.1",
		"summary": "Adds a header naming the gateway",
		"configuration": map[string]any{"type": "object",
			"properties": map[string]any{"header": map[string]any{"type": "string", "default": "X-Gateway"}}},
	}
	if edit != nil {
		edit(manifest)
	}
	raw, _ := json.Marshal(manifest)
	return &v1alpha1.CustomPolicyDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ReplaceAll(name, "_", "-")},
		Spec: v1alpha1.CustomPolicyDefinitionSpec{Name: name, Version: "0.1", Schema: apiextensionsv1.JSON{Raw: raw}}}
}

// withCustomPolicy adds a custom policy (name, version 0.1) to a Product's chain.
func withCustomPolicy(p *v1alpha1.Product, name string) *v1alpha1.Product {
	p.Spec.Policies = append(p.Spec.Policies, v1alpha1.PolicySpec{Name: name, Version: "0.1", Enabled: true,
		Configuration: &apiextensionsv1.JSON{Raw: []byte(`{"header":"X-Edge"}`)}})
	return p
}

// TestCustomPolicyDefinitionAndItsProducts: a Product whose chain names a custom policy waits for its
// definition; the definition goes into 3scale's registry and wakes it; a change 3scale refuses while the
// policy is in use is Invalid with what to do; deleting the definition waits for the Product to stop
// using it, then removes the policy from the registry.
func TestCustomPolicyDefinitionAndItsProducts(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), withCustomPolicy(harness.PetstoreProduct(ns, "pets"), "stamp")
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	harness.WaitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonCustomPolicyNotFound)
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, `policy "stamp" version "0.1"`) {
		t.Errorf("Orphan message %q does not name the policy", msg)
	}

	def := customPolicy(ns, "stamp", nil)
	harness.Create(t, def)
	harness.WaitState(t, v1alpha1.ConditionSynced, def, product)
	if def.Status.PolicyID == 0 || def.Status.SystemName != "stamp-0.1" {
		t.Errorf("status: id %d, system name %q", def.Status.PolicyID, def.Status.SystemName)
	}
	if n := harness.Sim.Count(ns, simulator.KindCustomPolicies); n != 1 {
		t.Errorf("%d policies in the registry, want 1", n)
	}

	// 3scale refuses to change a policy in use: Invalid, saying how to change it.
	harness.Update(t, def, func() {
		def.Spec.Schema.Raw = customPolicy(ns, "stamp", func(m map[string]any) { m["summary"] = "Stamps requests" }).Spec.Schema.Raw
	})
	harness.WaitReason(t, def, v1alpha1.ConditionInvalid, v1alpha1.ReasonPolicyInUse)
	if _, _, msg := harness.SyncState(t, def); !strings.Contains(msg, "new version") {
		t.Errorf("Invalid message %q does not say what to do", msg)
	}
	harness.Update(t, def, func() { def.Spec.Schema.Raw = customPolicy(ns, "stamp", nil).Spec.Schema.Raw })
	harness.WaitState(t, v1alpha1.ConditionSynced, def)

	// Deleting it waits for the Product.
	harness.DeleteObjects(t, def)
	harness.WaitReason(t, def, v1alpha1.ConditionOrphan, v1alpha1.ReasonDeletionBlocked)
	if _, _, msg := harness.SyncState(t, def); !strings.Contains(msg, "petstore") {
		t.Errorf("the blocked deletion does not name the product: %q", msg)
	}
	harness.WaitReason(t, product, v1alpha1.ConditionOrphan, v1alpha1.ReasonCustomPolicyDeleting)
	if n := harness.Sim.Count(ns, simulator.KindCustomPolicies); n != 1 {
		t.Fatalf("the policy was deleted from the registry while in use: %d left", n)
	}
	// (An empty chain leaves 3scale's as it is: the chain becomes APIcast alone.)
	harness.Update(t, product, func() {
		product.Spec.Policies = []v1alpha1.PolicySpec{{Name: "apicast", Version: v1alpha1.BuiltinPolicyVersion, Enabled: true}}
	})
	harness.WaitState(t, v1alpha1.ConditionSynced, product)
	harness.WaitGone(t, def)
	if n := harness.Sim.Count(ns, simulator.KindCustomPolicies); n != 0 {
		t.Errorf("%d policies left in the registry, want 0", n)
	}
}

// TestCustomPolicySchemaIsChecked: a manifest porta would refuse, or whose configuration is not a JSON
// Schema, is Invalid before anything is sent, with what is wrong.
func TestCustomPolicySchemaIsChecked(t *testing.T) {
	ns := harness.NewNamespace(t)
	harness.Create(t, harness.DefaultSecret(ns))
	cases := map[string]struct {
		edit func(map[string]any)
		want string
	}{
		"no summary":              {func(m map[string]any) { delete(m, "summary") }, "missing summary"},
		"another version":         {func(m map[string]any) { m["version"] = "0.2" }, `version is "0.2" but spec.version is "0.1"`},
		"a long summary":          {func(m map[string]any) { m["summary"] = strings.Repeat("s", 80) }, "summary has 80 characters"},
		"not a JSON Schema":       {func(m map[string]any) { m["configuration"] = map[string]any{"type": 12} }, "configuration is not a valid JSON Schema"},
		"a reference outside":     {func(m map[string]any) { m["configuration"] = map[string]any{"$ref": "https://example.com/s.json"} }, "references outside the schema are not followed"},
		"configuration not a map": {func(m map[string]any) { m["configuration"] = "object" }, "configuration is not a valid JSON Schema"},
	}
	before := harness.RemoteCalls(ns)
	var defs []*v1alpha1.CustomPolicyDefinition
	for name, c := range cases {
		def := customPolicy(ns, "p_"+strings.ReplaceAll(strings.ToLower(name), " ", "_"), c.edit)
		harness.Create(t, def)
		defs = append(defs, def)
		harness.WaitReason(t, def, v1alpha1.ConditionInvalid, v1alpha1.ReasonInvalidPolicySchema)
		if _, _, msg := harness.SyncState(t, def); !strings.Contains(msg, c.want) {
			t.Errorf("%s: message %q, want %q", name, msg, c.want)
		}
	}
	if got := harness.RemoteCalls(ns) - before; got != 0 {
		t.Errorf("%d calls to 3scale for manifests that cannot work, want 0", got)
	}
	for _, d := range defs {
		if err := harness.K8s.Delete(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCustomPolicyOnATenantWithoutTheRegistry: a tenant without porta's policy registry feature answers
// 403 to the registry; the definition says so (PolicyRegistryUnavailable), not that the token is wrong,
// and syncs once the tenant has it.
func TestCustomPolicyOnATenantWithoutTheRegistry(t *testing.T) {
	ns := harness.NewNamespace(t)
	secret := harness.DefaultSecret(ns)
	if !harness.Sim.SetPolicyRegistry(ns, false) {
		t.Fatalf("no tenant %s in the simulator", ns)
	}
	def := customPolicy(ns, "stamp", nil)
	harness.Create(t, secret, def)
	harness.WaitReason(t, def, v1alpha1.ConditionInvalid, v1alpha1.ReasonPolicyRegistryUnavailable)
	if _, _, msg := harness.SyncState(t, def); !strings.Contains(msg, "policy registry") || strings.Contains(msg, "token was refused") {
		t.Errorf("Invalid message %q does not say the tenant lacks the policy registry", msg)
	}
	harness.Sim.SetPolicyRegistry(ns, true)
	harness.Update(t, def, func() { def.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "enabled"}) })
	harness.WaitState(t, v1alpha1.ConditionSynced, def)
}
