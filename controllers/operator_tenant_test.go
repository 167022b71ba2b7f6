package controllers_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/internal/convert"
	"github.com/apimsync/apimsync/test/operatorreplay"
)

// operatorMadeTenant fills the namespace's tenant as 3scale-operator does from its sample-sized workload
// (test/operatorreplay) and returns the workload: 3scale-operator's resources and their Secrets.
func operatorMadeTenant(t *testing.T, ns string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := operatorreplay.Workload()
	if err != nil {
		t.Fatal(err)
	}
	if err := operatorreplay.Replay(context.Background(), harness.TenantClient(t, ns), objs); err != nil {
		t.Fatalf("replaying 3scale-operator: %v", err)
	}
	return objs
}

// operatorWorkloadKinds is what the workload holds, as apimsync objects.
var operatorWorkloadKinds = map[string]int{"Backend": 4, "Product": 6, "ApplicationPlan": 8, "CustomPolicyDefinition": 1,
	"ActiveDoc": 1, "DeveloperAccount": 2, "Application": 5}

// TestOperatorMadeTenantExportsWithNoWrite: a tenant 3scale-operator filled, exported and applied,
// adopts with no write, and a drift check writes nothing.
func TestOperatorMadeTenantExportsWithNoWrite(t *testing.T) {
	ns := harness.NewNamespace(t)
	workload := operatorMadeTenant(t, ns)
	// The OIDC product's issuer is a Secret to fill in: its user takes it from where 3scale-operator's was.
	issuer := ""
	for _, o := range workload {
		if o.GetKind() == "Secret" && o.GetName() == "pets-oidc-issuer" {
			issuer, _, _ = unstructured.NestedString(o.Object, "stringData", "issuerEndpoint")
		}
	}
	fill := func(secret, key string) string {
		if secret != "pets-oidc-oidc-issuer" || key != "issuerEndpoint" {
			t.Fatalf("a Secret to fill in that the workload does not explain: %s, key %s", secret, key)
		}
		return issuer
	}
	harness.AdoptsWithNoWrite(t, ns, exportAll(t, ns, fill), operatorWorkloadKinds)
}

// TestConvertedOperatorResourcesAdoptWithNoWrite: 3scale-operator's resources converted, applied with
// their Secrets once 3scale-operator's are gone, adopt what 3scale-operator made with no write. The
// OpenAPIs are converted both ways: as apimsync OpenAPIs with 3scale-operator's conventions, which
// generate what 3scale-operator's generated (x-3scale-product's metric, chain and plans included), and
// expanded (--expand-openapi), the Backends and Products they generated as ordinary objects.
func TestConvertedOperatorResourcesAdoptWithNoWrite(t *testing.T) {
	for name, expand := range map[string]bool{"OpenAPIs": false, "expanded": true} {
		t.Run(name, func(t *testing.T) { convertedAdoptWithNoWrite(t, expand) })
	}
}

func convertedAdoptWithNoWrite(t *testing.T, expand bool) {
	ns := harness.NewNamespace(t)
	workload := operatorMadeTenant(t, ns)
	res, err := convert.Convert(workload, convert.Options{Namespace: ns, ExpandOpenAPI: expand})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Logf("report: %s", f)
	}
	for _, o := range workload {
		if o.GetKind() == "Secret" {
			o.SetNamespace(ns)
			harness.Create(t, o)
		}
	}
	harness.AdoptsWithNoWrite(t, ns, res.Objects, operatorWorkloadKinds)
}
