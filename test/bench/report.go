package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"k8s.io/apimachinery/pkg/api/resource"
)

// memoryLimit is the bound of the peak RSS, when the managers ran with a --memory-limit, and the ratio.
func (r *Result) memoryLimit() (string, string) {
	q, err := resource.ParseQuantity(r.Config.MemoryLimit)
	if r.Config.MemoryLimit == "" || err != nil || q.Value() <= 0 {
		return "", ""
	}
	return fmt.Sprintf("%.0f MiB (--memory-limit=%s)", float64(q.Value())/(1<<20), r.Config.MemoryLimit),
		fmt.Sprintf("%.2f", r.ColdPeak.RSSMiB*(1<<20)/float64(q.Value()))
}

// Table renders the result as a markdown table.
func (r *Result) Table() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "apimsync bench: %d objects over %d tenants (seed %d), latency %s, tenant rate limit %s, in-flight cap %d, drift period %s, deletion order %s\n\n",
		c.Objects, c.Tenants, c.Seed, c.Latency, rateText(c.RateLimit), c.MaxInFlight, c.DriftPeriod, c.DeleteOrder)
	fmt.Fprintln(&b, "| measure | value | bound | ratio |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	row := func(name, value, bound, ratio string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, value, bound, ratio)
	}
	cold := r.Cold
	row("cold: calls (writes)", fmt.Sprintf("%d (%d)", cold.Calls.Total(), cold.Calls.Writes), fmt.Sprintf("%d minimal", cold.Minimal.Total()), fmt.Sprintf("%.2f", cold.CallsMin))
	row("cold: time to all Synced", fmt.Sprintf("%.1f s", cold.Seconds), fmt.Sprintf("%.1f s", cold.Bound), ratioText(cold.TimeBnd))
	r.floorRow(row, "cold", cold.Seconds, r.Floor.ColdSeconds, "create, finalizer, Synced status", r.Floor.ColdCPU)
	r.floorRow(row, "cold", cold.Seconds, r.Floor.ColdRunStatusesSeconds, "create, finalizer, the status the cold run wrote", r.Floor.ColdRunStatusesCPU)
	r.floorRow(row, "cold", cold.Seconds, r.Floor.ColdBeforeSeconds, "create, finalizer, Synced status; on a fresh control plane, as the cold run's, just before it", r.Floor.ColdBeforeCPU)
	row("cold: the bench's own creates sent in (16 at a time)", fmt.Sprintf("%.1f s", cold.Sent), "", "")
	row("cold: Kubernetes API writes (per object)", fmt.Sprintf("%d (%.1f)", cold.Kube.Writes, perObject(cold.Kube.Writes, c.Objects)), "", "")
	reconcileRow(row, "cold", cold.Kube, c.Objects)
	row("cold: API server writes, all clients (top)", cold.APIServer.top(6), "", "")
	row("cold: events, by kind and reason (top)", cold.Events.top(6), "", "")
	row("cold: CPU", cold.CPU.String(), "", "")
	row("cold: 429 answers / Retry-After ignored / refused", fmt.Sprintf("%d / %d / %d", cold.TooMany, cold.Ignored, cold.Refused), "", "")
	limit, limitRatio := r.memoryLimit()
	row("cold: peak RSS / heap / goroutines", fmt.Sprintf("%.0f MiB / %.0f MiB / %d", r.ColdPeak.RSSMiB, r.ColdPeak.HeapMiB, r.ColdPeak.Goroutines), limit, limitRatio)
	um := r.Unmanaged
	row("unmanaged: listed (hand-made found / porta's own / other)", fmt.Sprintf("%d (%d of %d / %d / %d)", um.Listed, um.HandMade-um.Missed, um.HandMade, um.PortaOwn, um.Extra),
		fmt.Sprintf("%d hand-made", um.HandMade), "")
	row("unmanaged: calls to list (per tenant)", fmt.Sprintf("%d (%.1f)", um.Calls, float64(um.Calls)/float64(max(c.Tenants, 1))), "", "")
	row("steady: calls in "+c.Steady+" (warm, drift checks off)", fmt.Sprint(r.SteadyWarm.Total()), "0", "")
	row("steady: calls in "+c.Steady+" (after a restart, drift checks off)", fmt.Sprint(r.SteadyAfterRestart.Total()), "0", "")
	edits := make([]string, 0, len(r.Edits))
	for k := range r.Edits {
		edits = append(edits, k)
	}
	sort.Strings(edits)
	for _, k := range edits {
		row("edit of a "+k+": calls", fmt.Sprintf("%d (%d writes)", r.Edits[k].Total(), r.Edits[k].Writes), "", "")
	}
	for _, m := range r.Memory {
		row(fmt.Sprintf("memory at rest, %d objects on %d tenants: RSS / heap / goroutines", m.Objects, m.Tenants), fmt.Sprintf("%.0f MiB / %.0f MiB / %d", m.RSSMiB, m.HeapMiB, m.Goroutines), "", "")
	}
	if perObj, ok := r.MemoryPerObjectKiB(); ok {
		row("memory growth per object (heap)", fmt.Sprintf("%.1f KiB", perObj), "", "")
	}
	if lo, hi := r.memoryEnds(); hi.Tenants > lo.Tenants {
		row("growth per tenant (heap, with its objects / goroutines)", fmt.Sprintf("%.0f KiB / %.1f",
			(hi.HeapMiB-lo.HeapMiB)*1024/float64(hi.Tenants-lo.Tenants), float64(hi.Goroutines-lo.Goroutines)/float64(hi.Tenants-lo.Tenants)), "", "")
	}
	r.Drift.rows(row)
	del := r.Deletion
	row("deletion: calls (refused / 404)", fmt.Sprintf("%d (%d / %d)", del.Calls.Total(), del.Refused, del.NotFound), fmt.Sprintf("%d minimal", del.Minimal.Total()), fmt.Sprintf("%.2f", del.CallsMin))
	row("deletion: 429 answers / Retry-After ignored", fmt.Sprintf("%d / %d", del.TooMany, del.Ignored), "", "")
	row("deletion: Kubernetes API writes (per object)", fmt.Sprintf("%d (%.1f)", del.Kube.Writes, perObject(del.Kube.Writes, c.Objects)), "", "")
	reconcileRow(row, "deletion", del.Kube, c.Objects)
	row("deletion: API server writes, all clients (top)", del.APIServer.top(6), "", "")
	row("deletion: events, by kind and reason (top)", del.Events.top(6), "", "")
	row("deletion: CPU", del.CPU.String(), "", "")
	row("deletion: time until gone", fmt.Sprintf("%.1f s", del.Seconds), fmt.Sprintf("%.1f s", del.Bound), ratioText(del.TimeBnd))
	r.floorRow(row, "deletion", del.Seconds, r.Floor.DeletionSeconds, "delete, finalizer removed", r.Floor.DeletionCPU)
	row("deletion: the bench's own deletes sent in (16 at a time)", fmt.Sprintf("%.1f s", del.Sent), "", "")
	row("deletion: remote objects left", fmt.Sprint(r.LeftAfterDeletion), "0", "")
	r.Faults.rows(row)
	r.Slow.rows(row)
	r.Shards.rows(row)
	return b.String()
}

// floorRow adds the row of a phase's time against the control plane's floor, when it was measured.
// With it, the CPU the floor's run used, to set beside the phase's own.
func (r *Result) floorRow(row func(name, value, bound, ratio string), phase string, seconds, floor float64, writes string, cpu CPU) {
	if floor <= 0 {
		return
	}
	row(fmt.Sprintf("%s: time against the control plane's floor (manager stopped, per object: %s)", phase, writes),
		fmt.Sprintf("%.1f s", seconds), fmt.Sprintf("%.1f s", floor), ratioText(seconds/floor))
	if len(cpu.Seconds) > 0 {
		row(fmt.Sprintf("%s: that floor's CPU", phase), cpu.String(), "", "")
	}
}

// top names the n most frequent writes with their counts: "PATCH products/status 2000, ...".
func (w APIServerWrites) top(n int) string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return w[keys[i]] > w[keys[j]] || w[keys[i]] == w[keys[j]] && keys[i] < keys[j] })
	var parts []string
	for i, k := range keys {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, w[k]))
	}
	return strings.Join(parts, ", ")
}

// memoryEnds returns the smallest and the largest size measured at rest (zero values without two).
func (r *Result) memoryEnds() (SizedMemory, SizedMemory) {
	if len(r.Memory) < 2 {
		return SizedMemory{}, SizedMemory{}
	}
	return r.Memory[0], r.Memory[len(r.Memory)-1]
}

// MemoryPerObjectKiB is the heap growth per object between the smallest and the largest size measured.
func (r *Result) MemoryPerObjectKiB() (float64, bool) {
	lo, hi := r.memoryEnds()
	if hi.Objects == lo.Objects {
		return 0, false
	}
	return (hi.HeapMiB - lo.HeapMiB) * 1024 / float64(hi.Objects-lo.Objects), true
}

// Summary is the last line scripts read.
func (r *Result) Summary() string {
	rss := r.ColdPeak.RSSMiB
	for _, m := range r.Memory {
		rss = max(rss, m.RSSMiB)
	}
	return fmt.Sprintf("objects=%d calls/minimal=%.2f time/bound=%s steady_calls=%d rss_mib=%.0f",
		r.Config.Objects, r.Cold.CallsMin, ratioText(r.Cold.TimeBnd), r.SteadyWarm.Total()+r.SteadyAfterRestart.Total(), rss)
}

func perObject(n, objects int) float64 {
	if objects == 0 {
		return 0
	}
	return float64(n) / float64(objects)
}

func rateText(r float64) string {
	if r <= 0 {
		return "none"
	}
	return fmt.Sprintf("%g/s", r)
}

func ratioText(r float64) string {
	if r == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", r)
}

// Write writes results.md, results.json, cold.svg (objects Synced over time, the time bound marked) and,
// after a drift phase, drift.svg (calls per second over the window, the budget marked) into dir.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(r.Table()+"\n"+r.Summary()+"\n"), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	if err := r.chart(filepath.Join(dir, "cold.svg")); err != nil {
		return err
	}
	if len(r.Drift.Series) == 0 {
		return nil
	}
	return r.Drift.chart(filepath.Join(dir, "drift.svg"))
}

// chart draws the cold run: objects Synced over time, with the time bound and the control plane's floor
// as vertical lines.
func (r *Result) chart(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Cold sync of %d objects over %d tenants", r.Config.Objects, r.Config.Tenants)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "objects Synced"
	pts := make(plotter.XYs, 0, len(r.ColdSeries))
	for _, s := range r.ColdSeries {
		pts = append(pts, plotter.XY{X: s.Seconds, Y: float64(s.Synced)})
	}
	if len(pts) > 0 {
		if err := plotutil.AddLines(p, "Synced", pts); err != nil {
			return err
		}
	}
	marks := []struct {
		at     float64
		label  string
		dashes []vg.Length
	}{
		{r.Cold.Bound, fmt.Sprintf("time bound (%.1f s)", r.Cold.Bound), []vg.Length{vg.Points(4), vg.Points(4)}},
		{r.Floor.ColdSeconds, fmt.Sprintf("control plane's floor (%.1f s)", r.Floor.ColdSeconds), []vg.Length{vg.Points(1), vg.Points(3)}},
	}
	for _, m := range marks {
		if m.at <= 0 {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: m.at, Y: 0}, {X: m.at, Y: float64(r.Config.Objects)}})
		if err != nil {
			return err
		}
		line.Dashes = m.dashes
		p.Add(line)
		p.Legend.Add(m.label, line)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

// reconcileRow reports the manager's reconciles in a phase, per object, by result and by controller (top
// 4): the passes over objects the CPU it used went to. None without the manager's metrics.
func reconcileRow(row func(name, value, bound, ratio string), phase string, k KubeRequests, objects int) {
	total, top := topCounts(k.Reconciles, 4)
	if total == 0 {
		return
	}
	_, results := topCounts(k.ReconcileResults, 4)
	row(phase+": reconciles (per object; by result; top controllers; put off for a busy tenant)",
		fmt.Sprintf("%d (%.1f; %s; %s; %d)", total, perObject(total, objects), results, top, k.Deferred), "", "")
}
