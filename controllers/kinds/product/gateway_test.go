package product_test

import (
	"testing"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/kinds/product"
)

// TestRecordStatusKeepsTheGatewayURLs: status.gateway is the proxy's sandbox_endpoint and endpoint as
// 3scale holds them, the port their scheme implies left out (and no other port touched); none without.
func TestRecordStatusKeepsTheGatewayURLs(t *testing.T) {
	var s product.Syncer
	p := &v1alpha1.Product{}
	s.RecordStatus(p, &product.Snapshot{Proxy: map[string]string{"sandbox_endpoint": "https://pets-staging.example.com:443",
		"endpoint": "http://pets.example.com:4430"}})
	want := v1alpha1.ProductGatewayStatus{StagingPublicBaseURL: "https://pets-staging.example.com", ProductionPublicBaseURL: "http://pets.example.com:4430"}
	if p.Status.Gateway == nil || *p.Status.Gateway != want {
		t.Errorf("gateway %+v, want %+v", p.Status.Gateway, want)
	}
	s.RecordStatus(p, &product.Snapshot{Proxy: map[string]string{}})
	if p.Status.Gateway != nil {
		t.Errorf("gateway %+v without endpoints, want none", p.Status.Gateway)
	}
}
