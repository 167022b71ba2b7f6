package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/resource"
)

// memoryRatio is the share of the manager's memory limit that Go's garbage collector aims to stay under
// (its soft limit, GOMEMLIMIT): the rest is headroom for what the Go runtime does not count (stacks of
// threads outside Go, the binary's own pages).
const memoryRatio = 0.9

// memoryFlag is --memory-limit: the memory the manager may use. Unset, it is the container's limit
// (its cgroup's memory.max); "0" leaves Go's collector on GOGC alone.
type memoryFlag struct {
	value string
	bytes int64 // parsed; -1: the container's limit
}

func (m *memoryFlag) bind(fs *flag.FlagSet) {
	m.bytes = -1
	fs.StringVar(&m.value, "memory-limit", "", "Memory the manager may use (a quantity: 512Mi, 2Gi); empty (the default): its container's memory limit, if any. Go's garbage collector collects harder as the manager nears 90 % of it instead of letting garbage double the heap, so a manager near its limit spends CPU on collecting rather than memory, and is less likely to be killed; 0 turns that off. The environment variables GOMEMLIMIT (Go's own) and AUTOMEMLIMIT (off, or a ratio in place of 0.9), when set, win.")
}

func (m *memoryFlag) parse() error {
	if m.value == "" {
		return nil
	}
	q, err := resource.ParseQuantity(m.value)
	if err != nil || q.Sign() < 0 || (q.Sign() > 0 && q.Value() < 64<<20) {
		return fmt.Errorf("--memory-limit must be 0 or a size of at least 64Mi (e.g. 1Gi), got %q", m.value)
	}
	m.bytes = q.Value()
	return nil
}

// noLimit is a provider with no limit: Go's collector on GOGC alone.
func noLimit() (uint64, error) { return 0, memlimit.ErrNoLimit }

// provider says where the limit comes from: the container's, when it has one and it can be read (read
// again every minute, so an in-place resize of the pod is followed), else none; a cgroup that is there
// but cannot be read is said in the log (at each reading).
func (m *memoryFlag) provider(log logr.Logger) (memlimit.Provider, time.Duration) {
	switch {
	case m.bytes < 0:
		return func() (uint64, error) {
			limit, err := memlimit.FromCgroup()
			switch {
			case err == nil:
				return limit, nil
			case !errors.Is(err, memlimit.ErrNoLimit) && !errors.Is(err, memlimit.ErrNoCgroup) && !errors.Is(err, memlimit.ErrCgroupsNotSupported):
				log.Info("cannot read the container's memory limit: no soft memory limit", "reason", err.Error())
			}
			return noLimit()
		}, time.Minute
	case m.bytes == 0:
		return noLimit, 0
	default:
		return memlimit.Limit(uint64(m.bytes)), 0
	}
}

// apply sets Go's soft memory limit to memoryRatio of the manager's memory limit and returns it
// (math.MaxInt64: none). A manager outside any container, or in one without a memory limit, runs as
// before, and says so.
func (m *memoryFlag) apply(ctx context.Context, log logr.Logger) (int64, error) {
	p, refresh := m.provider(log)
	limit, err := memlimit.Set(memlimit.WithProvider(p), memlimit.WithRatio(memoryRatio),
		memlimit.WithRefreshInterval(ctx, refresh), memlimit.WithLogger(slog.New(logr.ToSlogHandler(log.V(1)))))
	if err != nil {
		return limit, err
	}
	source := "--memory-limit"
	if m.bytes < 0 {
		source = "the container's memory limit"
	}
	for _, env := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT"} {
		if v, ok := os.LookupEnv(env); ok {
			source = env + "=" + v
		}
	}
	if limit == math.MaxInt64 {
		log.Info("no soft memory limit: Go's collector on GOGC alone", "from", source)
	} else {
		log.Info("soft memory limit", "bytes", limit, "from", source)
	}
	return limit, nil
}
