package product_test

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// promotions lists a tenant's promote requests as their answers' codes, in order.
func promotions(tenant string) []int {
	var codes []int
	for _, w := range harness.Sim.Writes(tenant) {
		if strings.HasSuffix(w.Endpoint, "/promote.json") {
			codes = append(codes, w.Code)
		}
	}
	return codes
}

// productionOf reads a Product and returns its status.production, failing when there is none.
func productionOf(t *testing.T, p *v1alpha1.Product) v1alpha1.ProductionStatus {
	t.Helper()
	harness.WaitState(t, v1alpha1.ConditionSynced, p)
	if p.Status.Production == nil {
		t.Fatalf("no status.production")
	}
	return *p.Status.Production
}

// TestProductionFollowsStaging: with promote: Latest, every configuration apimsync deploys to staging is
// promoted to production once; a re-sync promotes nothing; status and the Synced message tell the versions.
func TestProductionFollowsStaging(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromoteLatest}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	st := productionOf(t, product)
	if st.StagingVersion == 0 || st.ProductionVersion != st.StagingVersion || !st.Current || st.PromotedVersion != st.StagingVersion {
		t.Errorf("after the first sync: %+v, want production on staging's version, promoted by apimsync", st)
	}
	if got := promotions(ns); len(got) != 1 || got[0] != 201 {
		t.Errorf("promote requests answered %v, want one 201", got)
	}
	first := st.StagingVersion

	// An edit the gateway uses makes a new staging version, promoted once.
	harness.EditAndWait(t, product, func() {
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "POST", Pattern: "/orders$", MetricMethodRef: "hits", Increment: 1})
	})
	st = productionOf(t, product)
	if st.StagingVersion <= first || st.ProductionVersion != st.StagingVersion || !st.Current {
		t.Errorf("after an edit: %+v, want a newer staging version, in production", st)
	}
	_, _, msg := harness.SyncState(t, product)
	if !strings.Contains(msg, "production runs staging's configuration") {
		t.Errorf("Synced message %q does not tell what production runs", msg)
	}

	// A sync that finds nothing to change promotes nothing.
	before := len(promotions(ns))
	harness.Update(t, product, func() { product.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "1"}) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if product.Status.SyncNow != "1" {
			harness.SyncState(t, product)
			return "sync-now not handled yet"
		}
		return ""
	})
	if got := len(promotions(ns)); got != before {
		t.Errorf("%d promote requests after a sync with nothing new, want %d", got, before)
	}
}

// TestManualAndPinnedProduction: Manual never promotes and says production is behind; Pinned promotes its
// version once, waits (with a note) for a version staging does not have, and a promotion 3scale refuses
// (a version number production holds already) is recorded and announced, not retried.
func TestManualAndPinnedProduction(t *testing.T) {
	ns := harness.NewNamespace(t)
	backend, product := harness.PetsBackend(ns), harness.PetstoreProduct(ns, "pets")
	product.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromoteManual}
	harness.Create(t, harness.DefaultSecret(ns), backend, product)
	st := productionOf(t, product)
	if st.StagingVersion == 0 || st.ProductionVersion != 0 || st.Current {
		t.Errorf("Manual: %+v, want a staging version and nothing in production", st)
	}
	if got := promotions(ns); len(got) != 0 {
		t.Errorf("Manual made promote requests: %v", got)
	}
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, "production runs configuration 0, staging") {
		t.Errorf("Synced message %q does not say production is behind", msg)
	}
	harness.EditAndWait(t, product, func() {
		product.Spec.MappingRules = append(product.Spec.MappingRules, v1alpha1.MappingRuleSpec{HTTPMethod: "POST", Pattern: "/orders$", MetricMethodRef: "hits", Increment: 1})
	})
	staging := productionOf(t, product).StagingVersion

	// Pinned to the latest staging version: promoted.
	harness.EditAndWait(t, product, func() {
		product.Spec.Production = &v1alpha1.ProductionSpec{Promote: v1alpha1.PromotePinned, Version: ptr.To(staging)}
	})
	if st = productionOf(t, product); st.ProductionVersion != staging || st.PromotedVersion != staging {
		t.Errorf("Pinned %d: %+v", staging, st)
	}
	// Pinned to a version staging does not have yet: nothing sent, a note.
	harness.EditAndWait(t, product, func() { product.Spec.Production.Version = ptr.To(staging + 5) })
	if _, _, msg := harness.SyncState(t, product); !strings.Contains(msg, "is not in staging yet") {
		t.Errorf("Synced message %q does not say the pinned version is not there", msg)
	}
	// Pinned to an older version: porta copies it, but APIcast loads production's highest version, so
	// the pin cannot take effect: said once, not retried.
	sent := len(promotions(ns))
	harness.EditAndWait(t, product, func() { product.Spec.Production.Version = ptr.To(staging - 1) })
	st = productionOf(t, product)
	if st.RefusedVersion != staging-1 || !strings.Contains(st.RefusedMessage, "cannot take effect") || st.ProductionVersion != staging {
		t.Errorf("a pin older than production: %+v, want it recorded as not taking effect", st)
	}
	if got := promotions(ns); len(got) != sent+1 || got[len(got)-1] != 201 {
		t.Errorf("promote requests %v, want one more (201)", got)
	}
	// Pinned back to a version production holds already: porta refuses the number (422), recorded.
	harness.EditAndWait(t, product, func() {
		product.Spec.Production.Version = ptr.To(staging - 1)
		product.Spec.Description = "pinned again"
	})
	st = productionOf(t, product)
	if st.RefusedVersion != staging-1 || !strings.Contains(st.RefusedMessage, "refused") {
		t.Errorf("a refused promotion: %+v, want it recorded", st)
	}
	sent++
	if got := promotions(ns); len(got) != sent+1 || got[len(got)-1] != 422 {
		t.Errorf("promote requests %v, want one more, refused (422)", got)
	}
	harness.WantEvent(t, product, v1alpha1.ReasonPromotionRefused)
	harness.Update(t, product, func() { product.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: "refused"}) })
	harness.Eventually(t, harness.WaitTimeout, func() string {
		if harness.SyncState(t, product); product.Status.SyncNow != "refused" {
			return "sync-now not handled yet"
		}
		return ""
	})
	if got := promotions(ns); len(got) != sent+1 {
		t.Errorf("the refused promotion was tried again: %v", got)
	}
}
