package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
)

// The shards phase, as docs/operations.md tells a user to split the work: the single manager is stopped
// and two are started, each with --watch-label-selector (shardLabel=a, =b) and --leader-elect; the
// workload is applied again (the tenants were emptied), every namespace's objects labelled for one shard,
// namespaces alternating. It measures the time until all are Synced against one manager's, each
// manager's calls and tenants (from its own apimsync_remote_calls_total, by tenant), the tenants both
// called (must be none), and the calls at rest. Then it moves the last namespace of shard a to shard b by
// relabelling its objects: no remote write and no deletion may follow, both managers hand the
// provider-account Secret's in-use finalizer over, and an edit of a moved plan is synced by b alone.
// Last, everything is deleted and the single manager started again.

// shardLabel is the label the bench shards by.
const shardLabel = "bench.apimsync.io/shard"

// ShardsPhase is the outcome of the shards phase.
type ShardsPhase struct {
	Seconds float64 `json:"seconds"` // until every object is Synced, two managers
	// OneManager is a single manager's time on the same apply (the slow-tenant phase's apply without the
	// slow tenant when it ran; the cold run otherwise), OneManagerWhat says which.
	OneManager     float64 `json:"oneManagerSeconds"`
	OneManagerWhat string  `json:"oneManager"`
	Shards         []Shard `json:"shards"`
	// OnBoth counts the tenants both managers called; SimCalls the calls the simulator counted meanwhile
	// (the managers' together must make them).
	OnBoth   int       `json:"tenantsCalledByBoth"`
	SimCalls int       `json:"simulatorCalls"`
	AtRest   int       `json:"callsAtRest"`
	Move     ShardMove `json:"move"`
	Left     int       `json:"remoteObjectsLeft"`
}

// Shard is one manager's share.
type Shard struct {
	Selector string `json:"selector"`
	Objects  int    `json:"objects"`
	Tenants  int    `json:"tenants"` // the tenants it called
	Calls    int    `json:"calls"`   // its own count
}

// ShardMove is the move of one namespace's objects from shard a to shard b by relabelling.
type ShardMove struct {
	Namespace string `json:"namespace"`
	Objects   int    `json:"objects"`
	// Seconds until both managers handed the provider-account Secret's in-use finalizer over.
	Seconds float64 `json:"seconds"`
	// Reads, Writes and Deletes are the simulator's calls meanwhile; Duplicates the services and backends
	// beyond the workload's after it.
	Reads, Writes, Deletes, Duplicates int
	// ReadsBy counts the reads by endpoint template.
	ReadsBy map[string]int `json:"readsByEndpoint"`
	// Synced counts the moved objects shard b counts Synced after the move (its apimsync_objects).
	Synced int `json:"synced"`
	// ByA counts shard a's calls to the moved tenant from the relabelling to the end of the phase (an
	// edit of a moved plan, then everything deleted); EditByB shard b's from the relabelling until the
	// edit was Synced.
	ByA, EditByB int
}

// shards runs the shards phase unless cfg.NoShards, with two tenants or more.
func (b *bench) shards(ctx context.Context) (err error) {
	if b.cfg.NoShards || len(b.work.Namespaces) < 2 {
		b.logf("shards: skipped (BENCH_SHARDS=0, or a single tenant)")
		return nil
	}
	sp := &ShardsPhase{OneManager: b.res.Cold.Seconds, OneManagerWhat: "cold run"}
	if b.res.Slow != nil {
		sp.OneManager, sp.OneManagerWhat = b.res.Slow.Without, "slow-tenant phase, every tenant fast"
	}
	b.res.Shards = sp
	b.mgr.stop()
	managers := map[string]*managerProc{}
	defer func() {
		for _, m := range managers {
			m.proc.stop()
		}
		if err == nil {
			err = b.startManager(ctx, "")
		}
	}()
	for _, id := range []string{"a", "b"} {
		sel := shardLabel + "=" + id
		m, err := b.launchManager(ctx, "manager-"+id, []string{"--watch-label-selector", sel, "--leader-elect",
			"--leader-election-namespace", "default", "--metrics-max-tenants", fmt.Sprint(len(b.work.Namespaces) + 1)})
		if m != nil {
			managers[id] = m
		}
		if err != nil {
			return err
		}
		sp.Shards = append(sp.Shards, Shard{Selector: sel})
	}
	shardOf := func(i int) string { return string(rune('a' + i%2)) }
	var objs []client.Object
	for i, ns := range b.work.Namespaces {
		for _, o := range freshCopies(ns.Objects()) {
			o.GetLabels()[shardLabel] = shardOf(i) // fresh copies: the workload's own labels stay as they are
			sp.Shards[i%2].Objects++
			objs = append(objs, o)
		}
	}
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	start := time.Now()
	if err := b.apply(ctx, objs, func(ctx context.Context, o client.Object) error { return b.k8s.Create(ctx, o) }); err != nil {
		return err
	}
	if err := b.waitCensus(ctx, b.seriesInterval(), func(_, synced int) bool { return synced == len(objs) }); err != nil {
		return err
	}
	sp.Seconds = time.Since(start).Seconds()
	st, err := simStats(b.simURL)
	if err != nil {
		return err
	}
	sp.SimCalls = st.Total
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	time.Sleep(b.cfg.Steady)
	if st, err = simStats(b.simURL); err != nil {
		return err
	}
	sp.AtRest = st.Total
	sp.SimCalls += sp.AtRest
	// The managers' own counts, read once nothing is in flight (after the window at rest): the
	// simulator counts a call when it arrives, a manager when its answer does.
	called := map[string]map[string]int{}
	for i, id := range []string{"a", "b"} {
		if called[id], err = callsByTenant(managers[id].metrics); err != nil {
			return err
		}
		sp.Shards[i].Tenants = len(called[id])
		for _, n := range called[id] {
			sp.Shards[i].Calls += n
		}
	}
	for tenant := range called["a"] {
		if _, ok := called["b"][tenant]; ok {
			sp.OnBoth++
		}
	}
	b.logf("shards: %d objects Synced in %.1fs by two managers (one manager: %.1fs); a: %d objects, %d calls, %d tenants; b: %d objects, %d calls, %d tenants; %d tenants called by both",
		len(objs), sp.Seconds, sp.OneManager, sp.Shards[0].Objects, sp.Shards[0].Calls, sp.Shards[0].Tenants, sp.Shards[1].Objects, sp.Shards[1].Calls, sp.Shards[1].Tenants, sp.OnBoth)

	// The last namespace of shard a moves to shard b.
	last := len(b.work.Namespaces) - 1
	if shardOf(last) != "a" {
		last--
	}
	moved := b.work.Namespaces[last].Name
	aBefore, err := callsByTenant(managers["a"].metrics)
	if err != nil {
		return err
	}
	if err := b.moveShard(ctx, managers, b.work.Namespaces[last], &sp.Move); err != nil {
		return err
	}

	if err := b.apply(ctx, objs, func(ctx context.Context, o client.Object) error { return client.IgnoreNotFound(b.k8s.Delete(ctx, o)) }); err != nil {
		return err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(exist, _ int) bool { return exist == 0 }); err != nil {
		return err
	}
	aAfter, err := callsByTenant(managers["a"].metrics)
	if err != nil {
		return err
	}
	tenant := tenantLabelOf(aBefore, moved)
	sp.Move.ByA = aAfter[tenant] - aBefore[tenant]
	sp.Left, err = b.remoteObjects()
	b.logf("shards: deleted; a called the moved tenant %d times from the move on; %d remote objects left", sp.Move.ByA, sp.Left)
	return err
}

// moveShard relabels ns's objects from shard a to shard b and measures what follows (mv).
func (b *bench) moveShard(ctx context.Context, managers map[string]*managerProc, ns Namespace, mv *ShardMove) error {
	mv.Namespace, mv.Objects = ns.Name, len(ns.Objects())
	bBefore, err := callsByTenant(managers["b"].metrics)
	if err != nil {
		return err
	}
	bSynced, err := syncedBy(managers["b"].metrics)
	if err != nil {
		return err
	}
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	start := time.Now()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+shardLabel+`":"b"}}}`))
	if err := b.apply(ctx, ns.Objects(), func(ctx context.Context, o client.Object) error {
		return b.k8s.Patch(ctx, o.DeepCopyObject().(client.Object), patch)
	}); err != nil {
		return err
	}
	// Handed over once shard a dropped its in-use finalizer from the namespace's provider-account Secret
	// and shard b added its own (the finalizers of managers of earlier phases, with selectors of their
	// own, stay: each manager removes only its own).
	finalizerOf := func(id string) string {
		return controllers.SecretInUseFinalizerFor(labels.SelectorFromSet(labels.Set{shardLabel: id}))
	}
	key := client.ObjectKey{Namespace: ns.Name, Name: v1alpha1.DefaultProviderAccountSecret}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var secret corev1.Secret
		if err := b.k8s.Get(ctx, key, &secret); err != nil {
			return err
		}
		if !slices.Contains(secret.Finalizers, finalizerOf("a")) && slices.Contains(secret.Finalizers, finalizerOf("b")) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the moved namespace's provider-account Secret has finalizers %v after 2 minutes, want shard b's (%s) and not shard a's: %w",
				secret.Finalizers, finalizerOf("b"), errTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Taken over once shard b itself counts the moved objects Synced (its apimsync_objects): their status
	// says Synced whoever wrote it, b's gauge only once b has reconciled each.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		now, err := syncedBy(managers["b"].metrics)
		if err != nil {
			return err
		}
		if mv.Synced = now - bSynced; mv.Synced >= mv.Objects {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shard b counts %d of the %d moved objects Synced after 2 minutes: %w", mv.Synced, mv.Objects, errTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mv.Seconds = time.Since(start).Seconds()
	time.Sleep(b.cfg.Steady) // anything the move sets off has time to call
	st, err := simStats(b.simURL)
	if err != nil {
		return err
	}
	for _, k := range st.Calls {
		switch k.Method {
		case http.MethodGet:
			mv.Reads += k.Count
			if mv.ReadsBy == nil {
				mv.ReadsBy = map[string]int{}
			}
			mv.ReadsBy[k.Endpoint] += k.Count
		case http.MethodDelete:
			mv.Deletes += k.Count
			mv.Writes += k.Count
		default:
			mv.Writes += k.Count
		}
	}
	if mv.Duplicates, err = b.extraServicesAndBackends(ns); err != nil {
		return err
	}
	// An edit of a moved plan: synced by b, and by b alone.
	if len(ns.Plans) > 0 {
		plan := &v1alpha1.ApplicationPlan{}
		if err := b.editAndWait(ctx, client.ObjectKeyFromObject(ns.Plans[0]), plan, func(o client.Object) {
			o.(*v1alpha1.ApplicationPlan).Spec.Limits[0].Value++
		}); err != nil {
			return err
		}
		calls, err := callsByTenant(managers["b"].metrics)
		if err != nil {
			return err
		}
		tenant := tenantLabelOf(calls, ns.Name)
		mv.EditByB = calls[tenant] - bBefore[tenant]
	}
	b.logf("shards: %s's %d objects moved from a to b in %.1fs: %d reads (%v), %d writes (%d deletes), %d duplicates, %d Synced; b's calls to it until an edit after was Synced: %d",
		ns.Name, mv.Objects, mv.Seconds, mv.Reads, mv.ReadsBy, mv.Writes, mv.Deletes, mv.Duplicates, mv.Synced, mv.EditByB)
	return nil
}

// syncedBy sums a manager's apimsync_objects{state="Synced"} over the kinds.
func syncedBy(metricsURL string) (int, error) {
	families, err := scrape(metricsURL)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range families["apimsync_objects"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "state" && l.GetValue() == v1alpha1.ConditionSynced {
				n += int(m.GetGauge().GetValue())
			}
		}
	}
	return n, nil
}

// callsByTenant sums a manager's apimsync_remote_calls_total by its tenant label.
func callsByTenant(metricsURL string) (map[string]int, error) {
	families, err := scrape(metricsURL)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, m := range families["apimsync_remote_calls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "tenant" {
				out[l.GetValue()] += int(m.GetCounter().GetValue())
			}
		}
	}
	return out, nil
}

// tenantLabelOf returns the tenant label (the normalized admin URL, ending /t/<namespace>) of the
// namespace's tenant among calls' labels, or the label it would have.
func tenantLabelOf(calls map[string]int, namespace string) string {
	for tenant := range calls {
		if strings.HasSuffix(tenant, "/t/"+namespace) {
			return tenant
		}
	}
	return "/t/" + namespace
}

// rows adds the shards phase's rows to the report.
func (sp *ShardsPhase) rows(row func(measure, value, bound, ratio string)) {
	if sp == nil {
		return
	}
	row("shards: two managers, time to all Synced", fmt.Sprintf("%.1f s", sp.Seconds), fmt.Sprintf("%.1f s one manager (%s)", sp.OneManager, sp.OneManagerWhat),
		ratioText(sp.Seconds/max(sp.OneManager, 0.001)))
	for _, s := range sp.Shards {
		row("shards: "+s.Selector+": objects / calls / tenants called", fmt.Sprintf("%d / %d / %d", s.Objects, s.Calls, s.Tenants), "", "")
	}
	row("shards: tenants called by both / calls the simulator counted", fmt.Sprintf("%d / %d", sp.OnBoth, sp.SimCalls), "0 / the managers' sum", "")
	row("shards: calls at rest", fmt.Sprint(sp.AtRest), "0", "")
	mv := sp.Move
	row(fmt.Sprintf("shards: %s's %d objects relabelled a → b: taken over (b counts them Synced) in / by b", mv.Namespace, mv.Objects), fmt.Sprintf("%.1f s / %d", mv.Seconds, mv.Synced), fmt.Sprintf("%d", mv.Objects), "")
	row("shards: the move's calls: reads / writes (deletes) / duplicates", fmt.Sprintf("%d / %d (%d) / %d", mv.Reads, mv.Writes, mv.Deletes, mv.Duplicates), "0 writes, 0 duplicates", "")
	row("shards: the moved tenant's calls, from the move on: a's (an edit, the deletion) / b's until the edit was Synced", fmt.Sprintf("%d / %d", mv.ByA, mv.EditByB), "a: 0", "")
	row("shards: remote objects left after deletion", fmt.Sprint(sp.Left), "0", "")
}
