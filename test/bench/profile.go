package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// profile starts CPU profiles of cfg.Profile's length, from now, of the API server and, when manager is
// its pprof address, of the manager and the simulator, written into the logs directory as
// <phase>-kube-apiserver.pprof, <phase>-manager.pprof and <phase>-simulator.pprof (read with `go tool pprof`). Set beside the floor's, they show where the CPU the
// manager costs the machine beyond the floor goes. The returned func waits for them; without
// BENCH_PROFILE it does nothing. A profile that cannot be taken is a line in the log, not a failed run.
func (b *bench) profile(ctx context.Context, phase, manager string) (wait func()) {
	if b.cfg.Profile <= 0 {
		return func() {}
	}
	seconds := int(b.cfg.Profile.Seconds())
	var wg sync.WaitGroup
	take := func(process string, hc *http.Client, base string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(b.cfg.Dir, phase+"-"+process+".pprof")
			if err := fetchProfile(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, seconds), path); err != nil {
				b.logf("no CPU profile of the %s in the %s phase: %v", process, phase, err)
				return
			}
			b.logf("%s: a CPU profile of the %s's first %ds, in %s", phase, process, seconds, path)
		}()
	}
	if hc, err := rest.HTTPClientFor(b.env.Config); err == nil {
		take("kube-apiserver", hc, strings.TrimSuffix(b.env.Config.Host, "/"))
	} else {
		b.logf("no CPU profile of the kube-apiserver: %v", err)
	}
	if manager != "" {
		take("manager", http.DefaultClient, "http://"+manager)
		take("simulator", http.DefaultClient, b.simURL) // it serves its profiles with --pprof (start)
	}
	return wg.Wait
}

// fetchProfile writes the profile a pprof endpoint answers into path.
func fetchProfile(ctx context.Context, hc *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
