package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/test/simulator"
)

// The faults phase: after the deletion phase has emptied the tenants, the cold apply runs again with the
// simulator answering a share of the requests 503, 429 (with Retry-After) or losing the answers of
// writes, as an ordinary bad day of a 3scale tenant does; then everything is deleted again, faults still
// on. It tells what faults cost: time against the fault-free cold time, calls against the minimal (the
// extra ones by cause), duplicates, and what is left after the deletion.

// DefaultFaults are BENCH_FAULTS=1's rates: a fifth of requests 503, a tenth 429 with Retry-After 1s, a
// fifth of write answers lost.
var DefaultFaults = simulator.Faults{ErrorRate: 0.2, RateLimitRate: 0.1, RetryAfterSeconds: 1, LostResponseRate: 0.2}

// ParseFaults reads BENCH_FAULTS: "" or "0" for none, "1" for DefaultFaults, or comma-separated
// key=value among error, ratelimit, retryafter and lost (e.g. "error=0.2,ratelimit=0.1,retryafter=1,lost=0.2").
func ParseFaults(v string) (*simulator.Faults, error) {
	switch v {
	case "", "0":
		return nil, nil
	case "1":
		f := DefaultFaults
		return &f, nil
	}
	f := &simulator.Faults{}
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("BENCH_FAULTS: %q is not key=number", kv)
		}
		switch k {
		case "error":
			f.ErrorRate = n
		case "ratelimit":
			f.RateLimitRate = n
		case "retryafter":
			f.RetryAfterSeconds = int(n)
		case "lost":
			f.LostResponseRate = n
		default:
			return nil, fmt.Errorf("BENCH_FAULTS: unknown key %q (error, ratelimit, retryafter, lost)", k)
		}
	}
	return f, nil
}

// FaultsPhase is the outcome of the faults phase.
type FaultsPhase struct {
	Faults simulator.Faults `json:"faults"`
	// Cold is the cold apply through the faults; ColdWithout the fault-free cold time of the same run.
	Cold        Phase   `json:"cold"`
	ColdWithout float64 `json:"coldWithoutFaultsSeconds"`
	// Unavailable, TooMany and Lost count the answers the faults made: 503s, 429s, lost answers.
	Unavailable int `json:"unavailable"`
	TooMany     int `json:"tooManyRequests"`
	Lost        int `json:"lostAnswers"`
	// Duplicates counts remote services and backends beyond the workload's, and service and account plans
	// beyond one of each name the workload gives.
	Duplicates int `json:"duplicates"`
	// DeletionSeconds and Left: everything deleted again through the faults, and what stayed in 3scale.
	DeletionSeconds float64 `json:"deletionSeconds"`
	Left            int     `json:"remoteObjectsLeft"`
}

// setFaults sets the simulator's faults (nil: none) on top of the run's own latency and tenant rate limit,
// which every phase keeps.
func (b *bench) setFaults(f *simulator.Faults) error {
	all := simulator.Faults{}
	if f != nil {
		all = *f
	}
	all.Latency, all.TenantRateLimit, all.TenantRateBurst = b.cfg.Latency, b.cfg.RateLimit, b.cfg.RateBurst
	body, err := json.Marshal(all)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPut, b.simURL+"/__sim/faults", bytes.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("setting the simulator's faults: %s", res.Status)
	}
	return nil
}

// faults runs the faults phase when cfg.Faults is set.
func (b *bench) faults(ctx context.Context) error {
	if b.cfg.Faults == nil {
		b.logf("faults: skipped (BENCH_FAULTS unset)")
		return nil
	}
	fp := &FaultsPhase{Faults: *b.cfg.Faults, ColdWithout: b.res.Cold.Seconds}
	b.res.Faults = fp
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	if err := b.setFaults(b.cfg.Faults); err != nil {
		return err
	}
	defer func() { _ = b.setFaults(nil) }()
	start := time.Now()
	objs := b.allObjects()
	fresh := freshCopies(objs)
	if err := b.apply(ctx, fresh, func(ctx context.Context, o client.Object) error { return b.k8s.Create(ctx, o) }); err != nil {
		return err
	}
	lastLog := time.Now()
	if err := b.waitCensus(ctx, b.seriesInterval(), func(_, synced int) bool {
		if time.Since(lastLog) > 10*time.Second {
			b.logf("faults: %d/%d Synced after %.0fs", synced, len(objs), time.Since(start).Seconds())
			lastLog = time.Now()
		}
		return synced == len(objs)
	}); err != nil {
		return err
	}
	elapsed := time.Since(start)
	var minimal []Calls
	for _, ns := range b.work.Namespaces {
		minimal = append(minimal, ns.MinimalCold())
	}
	ph, err := b.phase(elapsed, minimal)
	if err != nil {
		return err
	}
	fp.Cold = ph
	st, err := simStats(b.simURL)
	if err != nil {
		return err
	}
	for _, k := range st.Calls {
		switch k.Code {
		case http.StatusServiceUnavailable:
			fp.Unavailable += k.Count
		case http.StatusTooManyRequests:
			fp.TooMany += k.Count
		case 0:
			fp.Lost += k.Count
		}
	}
	// Counted with the faults off: the bench's own reads must not meet them.
	if err := b.setFaults(nil); err != nil {
		return err
	}
	for _, ns := range b.work.Namespaces {
		extra, err := b.extraServicesAndBackends(ns)
		if err != nil {
			return err
		}
		fp.Duplicates += extra
		plans, err := b.remotePlans(ns)
		if err != nil {
			return err
		}
		for _, n := range plans {
			fp.Duplicates += max(n-1, 0)
		}
	}
	b.logf("faults: %d objects in %.1fs (fault-free cold %.1fs), %d calls (minimal %d): %d 503, %d 429, %d lost; %d duplicates",
		len(objs), ph.Seconds, fp.ColdWithout, ph.Calls.Total(), ph.Minimal.Total(), fp.Unavailable, fp.TooMany, fp.Lost, fp.Duplicates)

	// Everything deleted again, through the faults.
	if err := b.setFaults(b.cfg.Faults); err != nil {
		return err
	}
	start = time.Now()
	if err := b.apply(ctx, fresh, func(ctx context.Context, o client.Object) error { return client.IgnoreNotFound(b.k8s.Delete(ctx, o)) }); err != nil {
		return err
	}
	if err := b.waitCensus(ctx, 200*time.Millisecond, func(exist, _ int) bool { return exist == 0 }); err != nil {
		return err
	}
	fp.DeletionSeconds = time.Since(start).Seconds()
	if err := b.setFaults(nil); err != nil {
		return err
	}
	if fp.Left, err = b.remoteObjects(); err != nil {
		return err
	}
	b.logf("faults: deleted in %.1fs, %d remote objects left", fp.DeletionSeconds, fp.Left)
	return nil
}

// extraServicesAndBackends counts the services and backends of ns's tenant beyond the workload's: the
// duplicates a lost answer or a second shard would have made.
func (b *bench) extraServicesAndBackends(ns Namespace) (int, error) {
	services, err := b.remoteCount(ns.Name, "/admin/api/services.json")
	if err != nil {
		return 0, err
	}
	backends, err := b.remoteCount(ns.Name, "/admin/api/backend_apis.json")
	if err != nil {
		return 0, err
	}
	return max(services-len(ns.Products), 0) + max(backends-len(ns.Backends), 0), nil
}

// freshCopies returns copies of objs that can be created again (fresh).
func freshCopies(objs []client.Object) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = fresh(o)
	}
	return out
}

// rows adds the faults phase's rows to the report.
func (fp *FaultsPhase) rows(row func(measure, value, bound, ratio string)) {
	if fp == nil {
		return
	}
	f := fp.Faults
	row("faults: rates (503 / 429 with Retry-After / lost answers)", fmt.Sprintf("%.2f / %.2f (%ds) / %.2f", f.ErrorRate, f.RateLimitRate, f.RetryAfterSeconds, f.LostResponseRate), "", "")
	row("faults: cold time to all Synced", fmt.Sprintf("%.1f s", fp.Cold.Seconds), fmt.Sprintf("%.1f s fault-free", fp.ColdWithout), ratioText(fp.Cold.Seconds/max(fp.ColdWithout, 0.001)))
	row("faults: cold calls (writes)", fmt.Sprintf("%d (%d)", fp.Cold.Calls.Total(), fp.Cold.Calls.Writes), fmt.Sprintf("%d minimal", fp.Cold.Minimal.Total()), fmt.Sprintf("%.2f", fp.Cold.CallsMin))
	row("faults: answers the faults made (503 / 429 / lost)", fmt.Sprintf("%d / %d / %d", fp.Unavailable, fp.TooMany, fp.Lost), "", "")
	row("faults: duplicates (services, backends, service and account plans)", fmt.Sprint(fp.Duplicates), "0", "")
	row("faults: deletion time / remote objects left", fmt.Sprintf("%.1f s / %d", fp.DeletionSeconds, fp.Left), "0 left", "")
}
