package main

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

func TestMemoryLimitFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int64
	}{
		{nil, -1}, // the container's
		{[]string{"--memory-limit", "1Gi"}, 1 << 30},
		{[]string{"--memory-limit", "512M"}, 512e6},
		{[]string{"--memory-limit", "0"}, 0},
	} {
		f, err := parseFlags(c.args)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
		} else if f.memory.bytes != c.want {
			t.Errorf("%v: %d bytes, want %d", c.args, f.memory.bytes, c.want)
		}
	}
	for _, bad := range []string{"lots", "-1Gi", "12", "63Mi"} {
		if _, err := parseFlags([]string{"--memory-limit", bad}); err == nil {
			t.Errorf("--memory-limit %s was accepted", bad)
		}
	}
}

// TestMemoryLimitApplied sets Go's soft limit of this test process, and puts it back.
func TestMemoryLimitApplied(t *testing.T) {
	for _, env := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT"} {
		if v, ok := os.LookupEnv(env); ok {
			os.Unsetenv(env)
			t.Cleanup(func() { os.Setenv(env, v) })
		}
	}
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	apply := func(args ...string) int64 {
		t.Helper()
		f, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.memory.apply(ctx, logr.Discard())
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if now := debug.SetMemoryLimit(-1); now != got {
			t.Fatalf("%v: apply says %d, Go's soft limit is %d", args, got, now)
		}
		return got
	}
	ratio := memoryRatio
	if got, want := apply("--memory-limit", "1Gi"), int64(float64(1<<30)*ratio); got != want {
		t.Errorf("--memory-limit=1Gi: soft limit %d, want 90 %% of it, %d", got, want)
	}
	if got := apply("--memory-limit", "0"); got != math.MaxInt64 {
		t.Errorf("--memory-limit=0: soft limit %d, want none", got)
	}
	// Unset: 90 % of this process's cgroup limit when it has one, else none.
	want := int64(math.MaxInt64)
	if cg, err := memlimit.FromCgroup(); err == nil {
		want = int64(float64(cg) * ratio)
	}
	if got := apply(); got != want {
		t.Errorf("the container's limit: soft limit %d, want %d", got, want)
	}

	os.Setenv("GOMEMLIMIT", "300MiB")
	defer os.Unsetenv("GOMEMLIMIT")
	debug.SetMemoryLimit(300 << 20) // as the runtime reads it at start
	if got := apply("--memory-limit", "1Gi"); got != 300<<20 {
		t.Errorf("GOMEMLIMIT=300MiB and --memory-limit=1Gi: soft limit %d, want GOMEMLIMIT's", got)
	}
}
