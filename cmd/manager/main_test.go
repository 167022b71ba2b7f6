package main

import (
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestFlags(t *testing.T) {
	f, err := parseFlags([]string{"--watch-namespaces", "team-a, team-b", "--drift-check-period", "5m", "--max-concurrent-reconciles", "2",
		"--remote-qps", "3.5", "--remote-burst", "7", "--leader-elect", "--metrics-bind-address", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a", "team-b"}, splitNamespaces(f.watchNamespaces)); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	if f.opts.DriftCheckPeriod != 5*time.Minute || f.opts.MaxConcurrentReconciles != 2 || f.opts.RemoteQPS != 3.5 || f.opts.RemoteBurst != 7 ||
		!f.leaderElect || f.metricsAddr != "0" {
		t.Errorf("flags not parsed: %+v", f)
	}
	if _, err := parseFlags([]string{"--no-such-flag"}); err == nil {
		t.Errorf("an unknown flag was accepted")
	}
	if f.opts.DriftCheckBudget != 0.2 || f.opts.DataCacheSize != 1024 {
		t.Errorf("default drift-check budget %v, data cache size %d; want 0.2 and 1024", f.opts.DriftCheckBudget, f.opts.DataCacheSize)
	}
	for _, bad := range []string{"0", "1.5", "-0.1"} {
		if _, err := parseFlags([]string{"--drift-check-budget", bad}); err == nil {
			t.Errorf("--drift-check-budget %s was accepted, want it refused (a share in (0, 1])", bad)
		}
	}
	if f.opts.MaxResponseBytes != 8<<20 || f.opts.MaxListPages != 200 {
		t.Errorf("default response cap %d bytes, list cap %d pages; want 8 MiB and 200", f.opts.MaxResponseBytes, f.opts.MaxListPages)
	}
	if g, err := parseFlags([]string{"--max-response-size", "512Ki", "--max-list-pages", "20"}); err != nil || g.opts.MaxResponseBytes != 512<<10 || g.opts.MaxListPages != 20 {
		t.Errorf("--max-response-size 512Ki --max-list-pages 20: %v, %v", g, err)
	}
	for _, bad := range [][]string{{"--max-response-size", "lots"}, {"--max-response-size", "10"}, {"--max-response-size", "2Gi"}, {"--max-list-pages", "0"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
	if f.pprofAddr != "" || f.kubeQPS != 300 || f.kubeBurst != 600 {
		t.Errorf("default pprof address %q, Kubernetes API pacing %v/%d; want off and 300/600", f.pprofAddr, f.kubeQPS, f.kubeBurst)
	}
	if g, err := parseFlags([]string{"--pprof-bind-address", "127.0.0.1:6060"}); err != nil || g.pprofAddr != "127.0.0.1:6060" {
		t.Errorf("--pprof-bind-address: %v, %v", g, err)
	}
	if got := splitNamespaces(""); len(got) != 0 {
		t.Errorf("empty --watch-namespaces = %v, want all namespaces", got)
	}
}

// TestMetricsSecureServing: --metrics-secure serves metrics over TLS behind the cluster's authentication
// and authorization; without it they are plain (local runs).
func TestMetricsSecureServing(t *testing.T) {
	f, err := parseFlags([]string{"--metrics-secure", "--metrics-bind-address=:8443", "--metrics-max-tenants=7", "--allow-private-admin-urls"})
	if err != nil {
		t.Fatal(err)
	}
	o := metricsOptions(f)
	if !o.SecureServing || o.FilterProvider == nil || o.BindAddress != ":8443" {
		t.Errorf("secure metrics options: %+v", o)
	}
	tlsConfig := &tls.Config{NextProtos: []string{"h2"}}
	for _, opt := range o.TLSOpts {
		opt(tlsConfig)
	}
	if diff := cmp.Diff([]string{"http/1.1"}, tlsConfig.NextProtos); diff != "" {
		t.Errorf("the secure metrics endpoint offers HTTP/2 (-want +got):\n%s", diff)
	}
	if f.opts.MetricsMaxTenants != 7 || !f.opts.AllowPrivateAdminURLs {
		t.Errorf("options: %+v", f.opts)
	}
	f, _ = parseFlags(nil)
	if o := metricsOptions(f); o.SecureServing || o.FilterProvider != nil || f.opts.AllowPrivateAdminURLs {
		t.Errorf("default metrics options: %+v, private admin URLs allowed: %v", o, f.opts.AllowPrivateAdminURLs)
	}
}

// TestWatchLabelSelector: the selector is parsed into the options, and a bad one is refused.
func TestWatchLabelSelector(t *testing.T) {
	f, err := parseFlags([]string{"--watch-label-selector=apimsync.io/shard in (a,b)"})
	if err != nil || f.opts.WatchLabelSelector == nil || f.opts.WatchLabelSelector.String() != "apimsync.io/shard in (a,b)" {
		t.Errorf("selector %v, %v", f.opts.WatchLabelSelector, err)
	}
	other, _ := parseFlags([]string{"--watch-label-selector=apimsync.io/shard=c"})
	all, _ := parseFlags(nil)
	if ids := []string{leaderElectionID(f), leaderElectionID(other), leaderElectionID(all)}; ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Errorf("shards share a leader-election lease: %v", ids)
	}
	if _, err := parseFlags([]string{"--watch-label-selector=a in ("}); err == nil {
		t.Errorf("a bad selector was accepted")
	}
}

// TestCachesAreNamespaced: with --watch-namespaces every cache of the manager holds those namespaces
// only: the default of all kinds, and no kind (Secrets' and ConfigMaps' metadata included) widened
// past it; the synced kinds also carry the shard's label selector. test/image shows it against an API
// server with a ServiceAccount whose Roles stop at the watched namespace.
func TestCachesAreNamespaced(t *testing.T) {
	f, err := parseFlags([]string{"--watch-namespaces=team-a, team-b", "--watch-label-selector=apimsync.io/shard=a"})
	if err != nil {
		t.Fatal(err)
	}
	o := managerOptions(f, runtime.NewScheme())
	if got := slices.Sorted(maps.Keys(o.Cache.DefaultNamespaces)); !slices.Equal(got, []string{"team-a", "team-b"}) {
		t.Errorf("default namespaces of the cache %v, want [team-a team-b]", got)
	}
	labelled := 0
	for obj, by := range o.Cache.ByObject {
		for ns := range by.Namespaces {
			if ns != "team-a" && ns != "team-b" {
				t.Errorf("the cache of %T reaches namespace %q", obj, ns)
			}
		}
		if by.Label != nil && by.Label.String() == "apimsync.io/shard=a" {
			labelled++
		}
	}
	if labelled == 0 {
		t.Errorf("no kind of the cache carries the label selector")
	}
	disabled := map[string]bool{}
	for _, obj := range o.Client.Cache.DisableFor {
		disabled[fmt.Sprintf("%T", obj)] = true
	}
	if !disabled["*v1.Secret"] || !disabled["*v1.ConfigMap"] {
		t.Errorf("the client may read Secrets or ConfigMaps through a full cache: DisableFor %v", disabled)
	}

	all, _ := parseFlags(nil)
	if o := managerOptions(all, runtime.NewScheme()); len(o.Cache.DefaultNamespaces) != 0 {
		t.Errorf("without --watch-namespaces the cache holds %v, want every namespace", o.Cache.DefaultNamespaces)
	}
}

func TestVersion(t *testing.T) {
	f, err := parseFlags([]string{"--version"})
	if err != nil || !f.version {
		t.Fatalf("--version: %v %v", f, err)
	}
	version, revision = "v1.2.3", "0123abcd"
	defer func() { version, revision = "", "" }()
	if got := readBuildInfo().String(); !strings.HasPrefix(got, "apimsync v1.2.3, revision 0123abcd") {
		t.Errorf("--version says %q", got)
	}
}
