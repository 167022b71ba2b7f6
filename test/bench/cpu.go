package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// CPU is the CPU time each process of the run used in a phase, in seconds: the manager, the simulator,
// the control plane (kube-apiserver, etcd) and the bench itself (its client and census cache). With the
// phase's length and the machine's cores it tells whether the run was bound by the machine rather than
// by the tenant: a fast tenant's time bound assumes CPU to spare.
type CPU struct {
	Seconds map[string]float64 `json:"seconds"`
	// Busy is the share of the machine's cores the processes used together over the phase (1: all of
	// them, all the time).
	Busy  float64 `json:"busy"`
	Cores int     `json:"cores"`
}

// cpuSample is the CPU time used so far by each process of the run, by name.
type cpuSample map[string]float64

// sampleCPU reads the CPU time (user + system) of the bench, its children (the control plane's
// kube-apiserver and etcd) and the manager and simulator processes.
func (b *bench) sampleCPU() cpuSample {
	s := cpuSample{}
	self := os.Getpid()
	s.add("bench", self)
	if b.mgr != nil && !b.mgr.ended() {
		s.add("manager", b.mgr.cmd.Process.Pid)
	}
	if b.sim != nil {
		s.add("simulator", b.sim.cmd.Process.Pid)
	}
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		comm, ppid, _, ok := procStat(e)
		if !ok || ppid != self {
			continue
		}
		switch comm {
		case "kube-apiserver", "etcd":
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
			s.add(comm, pid)
		}
	}
	return s
}

func (s cpuSample) add(name string, pid int) {
	if _, _, secs, ok := procStat(fmt.Sprintf("/proc/%d/stat", pid)); ok {
		s[name] += secs
	}
}

// procStat reads a /proc/PID/stat file: the command name, the parent pid and the CPU seconds used (user
// and system, at the kernel's 100 ticks per second).
func procStat(path string) (comm string, ppid int, secs float64, ok bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	text := string(raw)
	open, closing := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || closing < open {
		return "", 0, 0, false
	}
	comm = text[open+1 : closing]
	// After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime.
	f := strings.Fields(text[closing+1:])
	if len(f) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return comm, ppid, (utime + stime) / 100, true
}

// cpuSince is the CPU each process used since an earlier sample, over a phase of the given length.
func (b *bench) cpuSince(before cpuSample, seconds float64) CPU {
	now := b.sampleCPU()
	c := CPU{Seconds: map[string]float64{}, Cores: runtime.NumCPU()}
	total := 0.0
	for name, v := range now {
		d := v - before[name]
		if d < 0 { // a process restarted within the phase: count it from its start
			d = v
		}
		c.Seconds[name] = d
		total += d
	}
	if seconds > 0 {
		c.Busy = total / (seconds * float64(c.Cores))
	}
	return c
}

// String is "manager 12.3 s, kube-apiserver 20.1 s, ... (busy 95 % of 2 cores)".
func (c CPU) String() string {
	if len(c.Seconds) == 0 {
		return "not measured"
	}
	var parts []string
	for _, name := range []string{"manager", "kube-apiserver", "etcd", "simulator", "bench"} {
		if v, ok := c.Seconds[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f s", name, v))
		}
	}
	return fmt.Sprintf("%s (busy %.0f %% of %d cores)", strings.Join(parts, ", "), 100*c.Busy, c.Cores)
}

// APIServerWrites counts the write requests the API server served, from every client, by verb, resource
// and subresource ("PATCH applicationplans/status"), read from its apiserver_request_total.
type APIServerWrites map[string]int

// readAPIServerWrites scrapes the API server's metrics.
func readAPIServerWrites(ctx context.Context, cfg *rest.Config) (APIServerWrites, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the API server's /metrics answered %s", res.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return nil, err
	}
	w := APIServerWrites{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		switch labels["verb"] {
		case "GET", "LIST", "WATCH", "WATCHLIST", "CONNECT":
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		w[key] += int(m.GetCounter().GetValue())
	}
	return w, nil
}

// minus is w less an earlier reading, without the entries that did not move.
func (w APIServerWrites) minus(o APIServerWrites) APIServerWrites {
	d := APIServerWrites{}
	for k, n := range w {
		if n-o[k] > 0 {
			d[k] = n - o[k]
		}
	}
	return d
}
