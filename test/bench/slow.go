package bench

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/test/simulator"
)

// The slow-tenant phase: after the tenants were emptied, the workload is applied again twice, first as it
// is, then with one tenant (the first namespace's) answering every call after SlowLatency, as a busy
// on-premises 3scale or a far region does among fast SaaS tenants. The manager's workers are shared by
// all tenants: the other tenants' objects must be Synced as soon as without the slow one (bound 1.1×).
// Each apply is deleted before the next (the slow tenant's latency is lifted for the deletion, which
// would otherwise take minutes and measures nothing new).

// SlowPhase is the outcome of the slow-tenant phase.
type SlowPhase struct {
	Tenant         string  `json:"tenant"`
	LatencySeconds float64 `json:"latencySeconds"`
	// OtherObjects are the other tenants' objects; Without and With the time until they are all Synced,
	// without and with the slow tenant.
	OtherObjects int     `json:"otherObjects"`
	Without      float64 `json:"othersWithoutSeconds"`
	With         float64 `json:"othersWithSeconds"`
	// SlowObjects are the slow tenant's objects, SlowSynced those Synced when the others were.
	SlowObjects int `json:"slowObjects"`
	SlowSynced  int `json:"slowSynced"`
	// Left counts the remote objects left after the last deletion.
	Left int `json:"remoteObjectsLeft"`
}

// slowTenant runs the slow-tenant phase when cfg.SlowLatency is set and there are two tenants or more.
func (b *bench) slowTenant(ctx context.Context) error {
	if b.cfg.SlowLatency <= 0 || len(b.work.Namespaces) < 2 {
		b.logf("slow tenant: skipped (BENCH_SLOW_TENANT unset, or a single tenant)")
		return nil
	}
	slow := b.work.Namespaces[0]
	sp := &SlowPhase{Tenant: slow.Name, LatencySeconds: b.cfg.SlowLatency.Seconds(), SlowObjects: len(slow.Objects())}
	sp.OtherObjects = b.work.Size() - sp.SlowObjects
	b.res.Slow = sp
	var err error
	if sp.Without, _, err = b.othersSynced(ctx, slow.Name, nil); err != nil {
		return err
	}
	b.logf("slow tenant: the other %d objects Synced in %.1fs with every tenant fast", sp.OtherObjects, sp.Without)
	latency := &simulator.Faults{TenantLatency: map[string]time.Duration{slow.Name: b.cfg.SlowLatency}}
	if sp.With, sp.SlowSynced, err = b.othersSynced(ctx, slow.Name, latency); err != nil {
		return err
	}
	b.logf("slow tenant: the other %d objects Synced in %.1fs with %s answering after %s (%d of its %d objects Synced by then)",
		sp.OtherObjects, sp.With, slow.Name, b.cfg.SlowLatency, sp.SlowSynced, sp.SlowObjects)
	sp.Left, err = b.remoteObjects()
	return err
}

// othersSynced applies the whole workload with the simulator's faults set to f, waits until every object
// but the namespace slow's is Synced, and returns how long that took and how many of slow's were Synced
// then; then it deletes everything, faults off, and waits until it is gone.
func (b *bench) othersSynced(ctx context.Context, slow string, f *simulator.Faults) (float64, int, error) {
	if err := b.setFaults(f); err != nil {
		return 0, 0, err
	}
	objs := freshCopies(b.allObjects())
	others := 0
	for _, ns := range b.work.Namespaces {
		if ns.Name != slow {
			others += len(ns.Objects())
		}
	}
	start := time.Now()
	if err := b.apply(ctx, objs, func(ctx context.Context, o client.Object) error { return b.k8s.Create(ctx, o) }); err != nil {
		return 0, 0, err
	}
	deadline := start.Add(b.cfg.Timeout)
	for {
		_, synced, err := b.censusExcept(ctx, slow)
		if err != nil {
			return 0, 0, err
		}
		if synced == others {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d of the other tenants' %d objects Synced after %s: %w", synced, others, b.cfg.Timeout, errTimeout)
		}
		time.Sleep(b.seriesInterval())
	}
	elapsed := time.Since(start).Seconds()
	_, all, err := b.census(ctx)
	if err != nil {
		return 0, 0, err
	}
	if err := b.setFaults(nil); err != nil {
		return 0, 0, err
	}
	if err := b.apply(ctx, objs, func(ctx context.Context, o client.Object) error { return client.IgnoreNotFound(b.k8s.Delete(ctx, o)) }); err != nil {
		return 0, 0, err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(exist, _ int) bool { return exist == 0 }); err != nil {
		return 0, 0, err
	}
	return elapsed, all - others, nil
}

// rows adds the slow-tenant phase's rows to the report.
func (sp *SlowPhase) rows(row func(measure, value, bound, ratio string)) {
	if sp == nil {
		return
	}
	row(fmt.Sprintf("slow tenant: the other %d objects Synced, %s answering after %.1f s", sp.OtherObjects, sp.Tenant, sp.LatencySeconds),
		fmt.Sprintf("%.1f s", sp.With), fmt.Sprintf("%.1f s without it (≤ 1.1×)", sp.Without), ratioText(sp.With/max(sp.Without, 0.001)))
	row("slow tenant: its objects Synced by then / remote objects left after", fmt.Sprintf("%d of %d / %d", sp.SlowSynced, sp.SlowObjects, sp.Left), "0 left", "")
}
