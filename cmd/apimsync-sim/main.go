// Command apimsync-sim serves the stateful 3scale Account Management API simulator (test/simulator) on
// a loopback address, for the demo and for trying apimsync without a 3scale tenant; with
// --master-token, also a master account, for trying the Tenant kind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
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
	trace  bool // --trace: Options.Trace is standard error
	pprof  bool // --pprof: Go's profiles at /debug/pprof/
}

// usage introduces the flags (flag's -h).
const usage = `Usage: apimsync-sim [--listen ADDR] --tenant NAME=TOKEN... [--master-token TOKEN] [flags]

Serves the 3scale Account Management API simulator over plain HTTP on a loopback address. A tenant
answers at http://ADDR with its token, or at http://ADDR/t/NAME (its own admin host); GET
/__sim/stats shows the calls. A provider-account Secret for it: adminURL http://ADDR/t/NAME, token
TOKEN, allowInsecureHTTP "true".

With --master-token, a master account answers at http://ADDR/t/master (porta's master portal): POST
/master/api/providers.json makes a tenant whose admin_base_url is http://ADDR/t/SLUG, reachable with
the access token the signup answers. A Tenant's masterAccountRef Secret: adminURL
http://ADDR/t/master, token the master token, allowInsecureHTTP "true".

Example, a tenant and a master account:
  apimsync-sim --listen 127.0.0.1:8081 --tenant demo=demo-token --master-token master-token

Flags:
`

// parse reads the flags and refuses a non-loopback --listen address, a tenant without token, no tenant
// nor master, a tenant that would be master or share its token, and impossible fault settings. Usage
// and flag errors go to standard error.
func parse(args []string) (*config, error) { return parseFlags(args, os.Stderr) }

// parseFlags is parse writing usage and flag errors to out.
func parseFlags(args []string, out io.Writer) (*config, error) {
	c := &config{opts: simulator.Options{Tenants: tenantFlags{}}}
	fs := flag.NewFlagSet("apimsync-sim", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8081", "Loopback address to listen on.")
	fs.Var(tenantFlags(c.opts.Tenants), "tenant", "A tenant as NAME=TOKEN (repeatable).")
	fs.StringVar(&c.opts.MasterToken, "master-token", "", "Serve a master account (tenant \"master\", at /t/master) with this access token; its signups make new tenants at /t/SLUG.")
	fs.Int64Var(&c.opts.Seed, "seed", 1, "Seed of the fault injection.")
	fs.DurationVar(&c.opts.Faults.Latency, "latency", 0, "Latency added to every request.")
	fs.DurationVar(&c.opts.Faults.LatencyJitter, "latency-jitter", 0, "Random extra latency, up to this.")
	fs.Float64Var(&c.opts.Faults.ErrorRate, "error-rate", 0, "Share of requests answered 503.")
	fs.Float64Var(&c.opts.Faults.RateLimitRate, "rate-limit-rate", 0, "Share of requests answered 429.")
	fs.IntVar(&c.opts.Faults.RetryAfterSeconds, "retry-after", 1, "Retry-After of 429 answers, in seconds.")
	fs.Float64Var(&c.opts.Faults.LostResponseRate, "lost-response-rate", 0, "Share of successful writes whose answer is dropped.")
	fs.Float64Var(&c.opts.Faults.TenantRateLimit, "tenant-rate-limit", 0, "Requests per second each tenant may make (a SaaS tenant's API limit); beyond it, 429 with Retry-After. 0: no limit.")
	fs.IntVar(&c.opts.Faults.TenantRateBurst, "tenant-rate-burst", 0, "Burst of --tenant-rate-limit (default 1).")
	fs.BoolVar(&c.trace, "trace", false, "Write one line per API request to standard error: the time it arrived, seconds it took, tenant, method, endpoint template, status (0: answer lost), path.")
	fs.BoolVar(&c.pprof, "pprof", false, "Serve Go's runtime profiles at /debug/pprof/ (e.g. /debug/pprof/profile?seconds=30, a CPU profile): where the simulator's own CPU goes in a benchmark.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(c.opts.Tenants) == 0 && c.opts.MasterToken == "" {
		return nil, errors.New("give at least one --tenant NAME=TOKEN, or --master-token TOKEN")
	}
	if c.opts.MasterToken != "" {
		for name, token := range c.opts.Tenants {
			if name == simulator.MasterTenant || token == c.opts.MasterToken {
				return nil, fmt.Errorf("--tenant %s: with --master-token, no tenant may be named %q or use the master token", name, simulator.MasterTenant)
			}
		}
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

// options are the simulator's options once it listens on addr: with a master account, the tenants
// master makes have their admin host on this listener, http://addr/t/SLUG, so that the admin_base_url
// of a signup reaches the new tenant.
func (c *config) options(addr string) simulator.Options {
	opts := c.opts
	if c.trace {
		opts.Trace = os.Stderr
	}
	if opts.MasterToken != "" {
		opts.PlainHTTP = true
		opts.AdminDomain = func(slug string) string { return addr + "/t/" + slug }
	}
	return opts
}

// handler is sim, with Go's profiles at /debug/pprof/ when --pprof asks for them.
func (c *config) handler(sim http.Handler) http.Handler {
	if !c.pprof {
		return sim
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.Handle("/", sim)
	return mux
}

func main() {
	c, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apimsync-sim:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		log.Fatalf("apimsync-sim: %v", err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Addr: c.listen, Handler: c.handler(simulator.New(c.options(addr))), ReadHeaderTimeout: 10 * time.Second}
	names := make([]string, 0, len(c.opts.Tenants))
	for n := range c.opts.Tenants {
		names = append(names, n)
	}
	sort.Strings(names)
	tenants := "tenants " + strings.Join(names, ", ")
	if len(names) == 0 {
		tenants = "master's tenants only"
	}
	log.Printf("apimsync-sim: serving the 3scale API at http://%s for %s (stats: GET /__sim/stats)", addr, tenants)
	if c.opts.MasterToken != "" {
		log.Printf("apimsync-sim: master account at http://%s/t/master; its new tenants at http://%s/t/SLUG", addr, addr)
	}
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
