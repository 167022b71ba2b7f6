package v1alpha1_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestProductColumns: `kubectl get products` shows the sync state and, beside it, the lifecycle stage
// (default Published), as the apiserver renders the CRD's printer columns into a Table.
func TestProductColumns(t *testing.T) {
	ns := namespace(t)
	draft := validProduct()
	draft.Namespace, draft.Name, draft.Spec.Lifecycle = ns, "draft", "Draft"
	plain := validProduct()
	plain.Namespace, plain.Name = ns, "plain"
	for _, p := range []*Product{draft, plain} {
		if err := k8s.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(restCfg)
	cfg.APIPath, cfg.GroupVersion = "/apis", &GroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().Namespace(ns).Resource("products").SetHeader("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1").
		DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	state, lifecycle := slices.Index(names, "State"), slices.Index(names, "Lifecycle")
	if state < 0 || lifecycle != state+1 {
		t.Fatalf("columns %v, want State followed by Lifecycle", names)
	}
	got := map[string]any{}
	for _, row := range table.Rows {
		got[row.Cells[0].(string)] = row.Cells[lifecycle]
	}
	if got["draft"] != "Draft" || got["plain"] != "Published" {
		t.Errorf("LIFECYCLE column %v, want draft: Draft and plain: Published (the default)", got)
	}
}
