package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/apimsync/apimsync/test/simulator"
)

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// process is a child process (the simulator or the manager) whose output goes to a log file.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

func startProcess(bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logFile.Close() }()
	return p, nil
}

// ended reports whether the process has ended.
func (p *process) ended() bool {
	if p == nil {
		return false
	}
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// stop asks the process to end (SIGTERM) and kills it after 30s.
func (p *process) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		err = <-p.done
	}
	p.done <- err // for ended, and for a second stop
}

// waitHTTP waits until url answers 200, or the process ends, or ctx does.
func waitHTTP(ctx context.Context, p *process, url string) error {
	for {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s ended before it was ready: %v", p.cmd.Path, err)
		case <-ctx.Done():
			return fmt.Errorf("%s is not ready at %s: %w", p.cmd.Path, url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// simStats reads the simulator's counters.
func simStats(base string) (simulator.Stats, error) {
	var st simulator.Stats
	res, err := http.Get(base + "/__sim/stats")
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	return st, json.NewDecoder(res.Body).Decode(&st)
}

// resetSimStats zeroes the simulator's counters.
func resetSimStats(base string) error {
	req, _ := http.NewRequest(http.MethodDelete, base+"/__sim/stats", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("reset of the simulator's stats: %s", res.Status)
	}
	return nil
}

// answers counts calls by what they were answered.
type answers struct {
	tooMany, refused, notFound int
}

// callsOf sums the stats' calls into reads and writes, and counts the 429s, the refusals (403, 409,
// 422) and the 404s.
func callsOf(st simulator.Stats) (c Calls, a answers) {
	for _, k := range st.Calls {
		if k.Method == http.MethodGet {
			c.Reads += k.Count
		} else {
			c.Writes += k.Count
		}
		switch k.Code {
		case http.StatusTooManyRequests:
			a.tooMany += k.Count
		case http.StatusForbidden, http.StatusConflict, http.StatusUnprocessableEntity:
			a.refused += k.Count
		case http.StatusNotFound:
			a.notFound += k.Count
		}
	}
	return c, a
}

// Memory is the manager's memory as its metrics endpoint reports it.
type Memory struct {
	RSSMiB  float64 `json:"rssMiB"`
	HeapMiB float64 `json:"heapMiB"`
	// Goroutines is go_goroutines: the workers, the informers and, per tenant, the connections in its
	// pool (two each).
	Goroutines int `json:"goroutines"`
}

// readMemory reads process_resident_memory_bytes, go_memstats_heap_inuse_bytes and go_goroutines from the
// manager's metrics endpoint (parsed with Prometheus' own text parser).
func readMemory(url string) (Memory, error) {
	families, err := scrape(url)
	if err != nil {
		return Memory{}, err
	}
	value := func(name string) (float64, error) {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) == 0 {
			return 0, fmt.Errorf("the manager's metrics have no %s", name)
		}
		return f.GetMetric()[0].GetGauge().GetValue(), nil
	}
	rss, err := value("process_resident_memory_bytes")
	if err != nil {
		return Memory{}, err
	}
	heap, err := value("go_memstats_heap_inuse_bytes")
	if err != nil {
		return Memory{}, err
	}
	goroutines, err := value("go_goroutines")
	if err != nil {
		return Memory{}, err
	}
	return Memory{RSSMiB: rss / (1 << 20), HeapMiB: heap / (1 << 20), Goroutines: int(goroutines)}, nil
}

// memoryScrapeEvery is how many one-second memory samples go between two scrapes of the manager's
// metrics (sampleMemory).
const memoryScrapeEvery = 5

// residentMiB is a process's resident set size (VmRSS in /proc/PID/status), in MiB.
func residentMiB(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kib); err != nil {
				return 0, fmt.Errorf("VmRSS: %w", err)
			}
			return kib / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// scrape reads the manager's metrics endpoint.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	res, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(string(raw)))
}

// KubeRequests counts the manager's requests to the Kubernetes API server (client-go's
// rest_client_requests_total), reads (GET) and writes (every other verb), and the reconciles they came
// from (controller-runtime's controller_runtime_reconcile_total, by controller: one per kind).
type KubeRequests struct {
	Reads      int            `json:"reads"`
	Writes     int            `json:"writes"`
	ByMethod   map[string]int `json:"byMethod"`
	Reconciles map[string]int `json:"reconciles,omitempty"`
	// ReconcileResults counts the same reconciles by result (success, requeue_after, error...).
	ReconcileResults map[string]int `json:"reconcileResults,omitempty"`
	// Deferred counts the reconciles put off because their tenant was busy (apimsync_admission_deferrals_total).
	Deferred int `json:"deferred,omitempty"`
}

// readKubeRequests reads the manager's Kubernetes API requests since it started.
func readKubeRequests(url string) (KubeRequests, error) {
	families, err := scrape(url)
	if err != nil {
		return KubeRequests{}, err
	}
	k := KubeRequests{ByMethod: map[string]int{}, Reconciles: map[string]int{}, ReconcileResults: map[string]int{}}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		k.Reconciles[label(m, "controller")] += int(m.GetCounter().GetValue())
		k.ReconcileResults[label(m, "result")] += int(m.GetCounter().GetValue())
	}
	for _, m := range families["apimsync_admission_deferrals_total"].GetMetric() {
		k.Deferred += int(m.GetCounter().GetValue())
	}
	f, ok := families["rest_client_requests_total"]
	if !ok {
		return k, fmt.Errorf("the manager's metrics have no rest_client_requests_total")
	}
	for _, m := range f.GetMetric() {
		n := int(m.GetCounter().GetValue())
		method := label(m, "method")
		k.ByMethod[method] += n
		if method == http.MethodGet {
			k.Reads += n
		} else {
			k.Writes += n
		}
	}
	return k, nil
}

// label is the value of m's label name ("" without it).
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// minus is k less an earlier reading.
func (k KubeRequests) minus(o KubeRequests) KubeRequests {
	d := KubeRequests{Reads: k.Reads - o.Reads, Writes: k.Writes - o.Writes, ByMethod: map[string]int{}, Reconciles: map[string]int{},
		ReconcileResults: map[string]int{}, Deferred: k.Deferred - o.Deferred}
	for m, n := range k.ByMethod {
		d.ByMethod[m] = n - o.ByMethod[m]
	}
	for c, n := range k.Reconciles {
		d.Reconciles[c] = n - o.Reconciles[c]
	}
	for r, n := range k.ReconcileResults {
		d.ReconcileResults[r] = n - o.ReconcileResults[r]
	}
	return d
}

// topCounts is the sum of counts, and its largest entries as "name n, ..." (top n).
func topCounts(counts map[string]int, top int) (int, string) {
	total := 0
	names := slices.Collect(maps.Keys(counts))
	for _, n := range counts {
		total += n
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	parts := make([]string, 0, top)
	for _, name := range names[:min(top, len(names))] {
		if counts[name] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, counts[name]))
		}
	}
	return total, strings.Join(parts, ", ")
}

// peak keeps the highest memory seen.
func (m *Memory) peak(o Memory) {
	m.RSSMiB, m.HeapMiB, m.Goroutines = max(m.RSSMiB, o.RSSMiB), max(m.HeapMiB, o.HeapMiB), max(m.Goroutines, o.Goroutines)
}

var errTimeout = errors.New("timed out")
