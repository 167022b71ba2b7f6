// Command apimsync-sim serves the stateful 3scale Account Management API simulator (test/simulator) on
// a loopback address, for the demo and for trying apimsync without a 3scale tenant.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/apimsync/apimsync/test/simulator"
)

// tenantFlags collects repeated --tenant NAME=TOKEN flags. Its String never shows a token.
type tenantFlags map[string]string

func (t tenantFlags) String() string { return fmt.Sprintf("%d tenants", len(t)) }

func (t tenantFlags) Set(v string) error {
	name, token, ok := strings.Cut(v, "=")
	if !ok || name == "" || token == "" {
		return fmt.Errorf("want NAME=TOKEN, got %q", v)
	}
	t[name] = token
	return nil
}

// config is the parsed command line.
type config struct {
	listen string
	opts   simulator.Options
}

// parse reads the flags and refuses a non-loopback --listen address, a tenant without token and
// impossible fault settings.
func parse(args []string) (*config, error) {
	c := &config{opts: simulator.Options{Tenants: tenantFlags{}}}
	fs := flag.NewFlagSet("apimsync-sim", flag.ContinueOnError)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8081", "Loopback address to listen on.")
	fs.Var(tenantFlags(c.opts.Tenants), "tenant", "A tenant as NAME=TOKEN (repeatable).")
	fs.Int64Var(&c.opts.Seed, "seed", 1, "Seed of the fault injection.")
	fs.DurationVar(&c.opts.Faults.Latency, "latency", 0, "Latency added to every request.")
	fs.DurationVar(&c.opts.Faults.LatencyJitter, "latency-jitter", 0, "Random extra latency, up to this.")
	fs.Float64Var(&c.opts.Faults.ErrorRate, "error-rate", 0, "Share of requests answered 503.")
	fs.Float64Var(&c.opts.Faults.RateLimitRate, "rate-limit-rate", 0, "Share of requests answered 429.")
	fs.IntVar(&c.opts.Faults.RetryAfterSeconds, "retry-after", 1, "Retry-After of 429 answers, in seconds.")
	fs.Float64Var(&c.opts.Faults.LostResponseRate, "lost-response-rate", 0, "Share of successful writes whose answer is dropped.")
	fs.Float64Var(&c.opts.Faults.TenantRateLimit, "tenant-rate-limit", 0, "Requests per second each tenant may make (a SaaS tenant's API limit); beyond it, 429 with Retry-After. 0: no limit.")
	fs.IntVar(&c.opts.Faults.TenantRateBurst, "tenant-rate-burst", 0, "Burst of --tenant-rate-limit (default 1).")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(c.opts.Tenants) == 0 {
		return nil, errors.New("give at least one --tenant NAME=TOKEN")
	}
	if err := checkFaults(c.opts.Faults); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--listen must be a loopback address, got %q", c.listen)
	}
	return c, nil
}

// checkFaults refuses fault settings the simulator cannot honour.
func checkFaults(f simulator.Faults) error {
	for name, rate := range map[string]float64{"--error-rate": f.ErrorRate, "--rate-limit-rate": f.RateLimitRate, "--lost-response-rate": f.LostResponseRate} {
		if rate < 0 || rate > 1 {
			return fmt.Errorf("%s must be between 0 and 1, got %v", name, rate)
		}
	}
	if f.ErrorRate+f.RateLimitRate > 1 {
		return fmt.Errorf("--error-rate plus --rate-limit-rate must be at most 1, got %v", f.ErrorRate+f.RateLimitRate)
	}
	if f.Latency < 0 || f.LatencyJitter < 0 || f.RetryAfterSeconds < 0 || f.TenantRateLimit < 0 || f.TenantRateBurst < 0 {
		return errors.New("--latency, --latency-jitter, --retry-after, --tenant-rate-limit and --tenant-rate-burst cannot be negative")
	}
	return nil
}

func main() {
	c, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apimsync-sim:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: c.listen, Handler: simulator.New(c.opts), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		log.Fatalf("apimsync-sim: %v", err)
	}
	names := make([]string, 0, len(c.opts.Tenants))
	for n := range c.opts.Tenants {
		names = append(names, n)
	}
	sort.Strings(names)
	log.Printf("apimsync-sim: serving the 3scale API at http://%s for tenants %s (stats: GET /__sim/stats)", ln.Addr(), strings.Join(names, ", "))
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("apimsync-sim: %v", err)
	}
}
