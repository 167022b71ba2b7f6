// Command bench is `make bench`: it runs apimsync's benchmark (test/bench) with the real manager and
// simulator binaries against a local control plane, prints the table and, as its last line,
// `objects=N calls/minimal=R time/bound=T steady_calls=S rss_mib=M`, and writes results.md,
// results.json, cold.svg and drift.svg into BENCH_RESULTS.
//
// Settings (environment): BENCH_OBJECTS (5000), BENCH_TENANTS (10), BENCH_SEED (1), BENCH_LATENCY
// (20ms per call), BENCH_RATE_LIMIT (requests per second per tenant, 0: none; default 0),
// BENCH_RATE_BURST (10), BENCH_MAX_IN_FLIGHT (the manager's default), BENCH_STEADY (5m),
// BENCH_DRIFT_PERIOD (10m; the drift phase's --drift-check-period, 0 skips the phase), BENCH_DRIFT_WINDOW
// (the drift period: how long the drift phase counts calls), BENCH_TIMEOUT (30m), BENCH_RESULTS (test/bench/results/latest),
// BENCH_MANAGER_ARGS (extra manager flags, space-separated), BENCH_SIM_ARGS (extra simulator flags, e.g.
// --trace), BENCH_FAULTS (off; 1, or
// error=R,ratelimit=R,retryafter=S,lost=R: the faults phase), BENCH_BIN (bin), BENCH_FLOOR (1; 0 skips
// measuring the control plane's floor at the end), BENCH_FLOOR_STATUSES (0; 1 measures the floor's cold
// run again with the statuses the cold run wrote), BENCH_FLOOR_BEFORE (0; 1 measures the floor's cold
// run also just before the cold run, on a fresh control plane of its own), BENCH_DELETE_ORDER (applied: owners first, as
// applied; dependants-first: the reverse, plans before their products), BENCH_SLOW_TENANT (0: off; a
// latency such as 2s: the slow-tenant phase, the first tenant answering after it), BENCH_SHARDS (1; 0
// skips the shards phase: two managers by label selector, and a namespace moved between them),
// BENCH_MEMORY_LIMIT (none; a quantity such as 1Gi: every manager's --memory-limit, as a pod's limit),
// BENCH_PROFILE (0: off; a length such as 30s: CPU profiles of the API server, the manager and the
// simulator from the start of the cold run and of the deletion, and of the API server from the start of the floor's runs,
// in BENCH_RESULTS/logs).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/apimsync/apimsync/test/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, out, err := config()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if res != nil {
		if werr := res.Write(out); werr != nil {
			fmt.Fprintln(os.Stderr, "bench: cannot write the results:", werr)
		}
	}
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(res.Table())
	fmt.Printf("\nresults in %s (results.md, results.json, cold.svg)\n", out)
	fmt.Println(res.Summary())
	return nil
}

func config() (bench.Config, string, error) {
	var errs []string
	num := func(name string, def int) int { return setting(&errs, name, def, "a count", strconv.Atoi) }
	float := func(name string, def float64) float64 {
		return setting(&errs, name, def, "a number", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
	}
	dur := func(name string, def time.Duration) time.Duration {
		return setting(&errs, name, def, "a duration", time.ParseDuration)
	}
	text := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return def
	}
	binDir, _ := filepath.Abs(text("BENCH_BIN", "bin"))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// `make bench` sets it; a plain `go run ./cmd/bench` finds the control plane make built.
		_ = os.Setenv("KUBEBUILDER_ASSETS", filepath.Join(binDir, "k8s"))
	}
	out, _ := filepath.Abs(text("BENCH_RESULTS", filepath.Join("test", "bench", "results", "latest")))
	cfg := bench.Config{
		Objects: num("BENCH_OBJECTS", 5000), Tenants: num("BENCH_TENANTS", 10), Seed: int64(num("BENCH_SEED", 1)),
		Latency: dur("BENCH_LATENCY", 20*time.Millisecond), RateLimit: float("BENCH_RATE_LIMIT", 0), RateBurst: num("BENCH_RATE_BURST", 10),
		MaxInFlight: num("BENCH_MAX_IN_FLIGHT", 0), Steady: dur("BENCH_STEADY", 5*time.Minute),
		DriftCheckPeriod: dur("BENCH_DRIFT_PERIOD", 10*time.Minute), Timeout: dur("BENCH_TIMEOUT", 30*time.Minute),
		Floor:            text("BENCH_FLOOR", "1") != "0",
		FloorRunStatuses: text("BENCH_FLOOR_STATUSES", "0") == "1",
		FloorBefore:      text("BENCH_FLOOR_BEFORE", "0") == "1",
		DependantsFirst:  text("BENCH_DELETE_ORDER", "applied") == "dependants-first",
		SlowLatency:      dur("BENCH_SLOW_TENANT", 0),
		Profile:          dur("BENCH_PROFILE", 0),
		NoShards:         text("BENCH_SHARDS", "1") == "0",
		MemoryLimit:      os.Getenv("BENCH_MEMORY_LIMIT"),
		ManagerBin:       filepath.Join(binDir, "manager"), SimBin: filepath.Join(binDir, "apimsync-sim"),
		ManagerArgs: strings.Fields(os.Getenv("BENCH_MANAGER_ARGS")), SimArgs: strings.Fields(os.Getenv("BENCH_SIM_ARGS")), Dir: filepath.Join(out, "logs"), Log: os.Stderr,
	}
	cfg.DriftWindow = dur("BENCH_DRIFT_WINDOW", cfg.DriftCheckPeriod)
	faults, err := bench.ParseFaults(os.Getenv("BENCH_FAULTS"))
	if err != nil {
		errs = append(errs, err.Error())
	}
	cfg.Faults = faults
	if o := text("BENCH_DELETE_ORDER", "applied"); o != "applied" && o != "dependants-first" {
		errs = append(errs, fmt.Sprintf("BENCH_DELETE_ORDER=%q: applied or dependants-first", o))
	}
	if q, err := resource.ParseQuantity(cfg.MemoryLimit); cfg.MemoryLimit != "" && (err != nil || q.Value() < 64<<20) {
		errs = append(errs, fmt.Sprintf("BENCH_MEMORY_LIMIT=%q: a quantity of at least 64Mi, such as 1Gi", cfg.MemoryLimit))
	}
	if cfg.Objects == 0 || cfg.Tenants == 0 {
		errs = append(errs, "BENCH_OBJECTS and BENCH_TENANTS must be positive")
	}
	if len(errs) > 0 {
		return cfg, "", fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return cfg, out, nil
}

// setting reads the environment variable name with parse, def when it is unset; a value that does not
// parse or is negative adds an error naming what was expected.
func setting[T int | float64 | time.Duration](errs *[]string, name string, def T, what string, parse func(string) (T, error)) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := parse(v)
	if err != nil || n < 0 {
		*errs = append(*errs, fmt.Sprintf("%s=%q is not %s", name, v, what))
	}
	return n
}
