package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/apimsync/apimsync/test/simulator"
)

// driftBucket is the resolution of the drift phase's call rate.
const driftBucket = 10 * time.Second

// DriftBudget mirrors the manager's default --drift-check-budget.
const DriftBudget = 0.2

// Drift is the drift phase: the manager restarted with drift checks on, nothing changed, calls counted
// per tenant in 10-second buckets over the window. Every call is a drift check's.
type Drift struct {
	Window string `json:"window"`
	Calls  int    `json:"calls"`
	// MeanPerTenant and PeakPerTenant are calls per second to one tenant: the mean over the window and
	// tenants, and the highest 10-second bucket of any tenant.
	MeanPerTenant float64 `json:"meanPerTenant"`
	PeakPerTenant float64 `json:"peakPerTenant"`
	// Capacity is one tenant's request budget (calls per second): the lower of its rate limit and the
	// in-flight cap ÷ latency; Budget the share drift checks may use (--drift-check-budget).
	Capacity float64 `json:"capacityPerTenant"`
	Budget   float64 `json:"budget"`
	// PerObject is the calls per object per period: what one drift check costs, on average.
	PerObject float64 `json:"callsPerObjectPerPeriod"`
	// ByEndpoint counts the calls per verb, path template and answer.
	ByEndpoint map[string]int `json:"byEndpoint"`
	// Series is the calls per second of the busiest tenant and the mean tenant, per bucket.
	Series []DriftPoint `json:"series"`
}

// DriftPoint is one bucket of the drift phase.
type DriftPoint struct {
	Seconds float64 `json:"seconds"`
	Peak    float64 `json:"peakTenant"`
	Mean    float64 `json:"meanTenant"`
}

// drift restarts the manager with drift checks on and samples the calls per tenant every bucket over
// the drift window. Skipped when the drift period or window is 0.
func (b *bench) drift(ctx context.Context) error {
	if b.cfg.DriftCheckPeriod <= 0 || b.cfg.DriftWindow <= 0 {
		b.logf("drift: skipped (no drift period or window)")
		return nil
	}
	b.driftChecks = true
	if err := b.restart(ctx, ""); err != nil {
		return err
	}
	if err := resetSimStats(b.simURL); err != nil {
		return err
	}
	d := &b.res.Drift
	d.Window, d.Budget = b.cfg.DriftWindow.String(), DriftBudget
	if r := b.pacing().Rate(); !math.IsInf(r, 1) {
		d.Capacity = r
	}
	prev := map[string]int{}
	tenants := len(b.work.Namespaces)
	start := time.Now()
	for elapsed := time.Duration(0); elapsed < b.cfg.DriftWindow; elapsed = time.Since(start) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(driftBucket):
		}
		st, err := simStats(b.simURL)
		if err != nil {
			return err
		}
		now := byTenant(st)
		pt := DriftPoint{Seconds: time.Since(start).Seconds()}
		sum := 0
		for tenant, n := range now {
			delta := n - prev[tenant]
			sum += delta
			pt.Peak = math.Max(pt.Peak, float64(delta)/driftBucket.Seconds())
		}
		pt.Mean = float64(sum) / driftBucket.Seconds() / float64(tenants)
		prev = now
		d.Series = append(d.Series, pt)
		d.Calls += sum
		d.PeakPerTenant = math.Max(d.PeakPerTenant, pt.Peak)
	}
	window := time.Since(start)
	d.MeanPerTenant = float64(d.Calls) / window.Seconds() / float64(tenants)
	d.PerObject = float64(d.Calls) / float64(b.work.Size()) * b.cfg.DriftCheckPeriod.Seconds() / window.Seconds()
	if st, err := simStats(b.simURL); err == nil {
		d.ByEndpoint = byEndpoint(st)
	}
	// The phases after this one run with drift checks off again.
	b.driftChecks = false
	if err := b.restart(ctx, ""); err != nil {
		return err
	}
	b.logf("drift: %d calls in %s (%.1f per object per period), %.2f/s per tenant on average, %.2f/s at the peak (budget %.0f%% of %.1f/s)",
		d.Calls, d.Window, d.PerObject, d.MeanPerTenant, d.PeakPerTenant, 100*d.Budget, d.Capacity)
	return nil
}

// byTenant sums the simulator's calls per tenant.
func byTenant(st simulator.Stats) map[string]int {
	out := map[string]int{}
	for _, c := range st.Calls {
		out[c.Tenant] += c.Count
	}
	return out
}

// rows adds the drift phase's rows to the table.
func (d Drift) rows(row func(name, value, bound, ratio string)) {
	if d.Window == "" {
		return
	}
	budget := d.Budget * d.Capacity
	row("drift checks: calls in "+d.Window+" (per object per period)", fmt.Sprintf("%d (%.1f)", d.Calls, d.PerObject), "", "")
	row("drift checks: calls/s per tenant, mean / peak 10 s", fmt.Sprintf("%.2f / %.2f", d.MeanPerTenant, d.PeakPerTenant),
		fmt.Sprintf("%.1f (%.0f%% of %.1f)", budget, 100*d.Budget, d.Capacity), ratioText(d.PeakPerTenant/budget))
}

// chart draws the drift phase's call rate: the busiest and the mean tenant per bucket, and the budget
// when it is within sight.
func (d Drift) chart(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Drift checks over %s: calls per second to one tenant", d.Window)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "calls/s"
	peak, mean := make(plotter.XYs, 0, len(d.Series)), make(plotter.XYs, 0, len(d.Series))
	for _, s := range d.Series {
		peak = append(peak, plotter.XY{X: s.Seconds, Y: s.Peak})
		mean = append(mean, plotter.XY{X: s.Seconds, Y: s.Mean})
	}
	if len(peak) > 0 {
		if err := plotutil.AddLines(p, "busiest tenant", peak, "mean tenant", mean); err != nil {
			return err
		}
	}
	if budget := d.Budget * d.Capacity; budget > 0 && budget <= 4*d.PeakPerTenant && len(d.Series) > 0 {
		end := d.Series[len(d.Series)-1].Seconds
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: budget}, {X: end, Y: budget}})
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("budget (%.0f%% of %.1f/s)", 100*d.Budget, d.Capacity), line)
	}
	p.Y.Min = 0              // the legend goes bottom right, under the lines
	p.Y.Max = 1.25 * p.Y.Max // and the title clear of them
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}
