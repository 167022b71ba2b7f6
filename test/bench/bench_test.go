package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSmoke runs the whole bench at a smoke size (100 objects over 2 tenants with a server-side rate
// limit) with the real manager and simulator binaries, and checks the ratios the engine is held to: cold
// calls within 1.3× the minimal, deletion's answered calls within 1.1× with no refused call and its 429s
// within a tenth of the minimal, no Retry-After ignored, no call at rest, the tenants empty at the end; the
// slow-tenant phase runs (one tenant 500ms a call); two shards split the tenants, never call one tenant both,
// and a namespace moved between them by relabelling costs no write and is synced by its new shard alone. Times are reported, not checked: they belong to `make bench`.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the bench smoke run starts a control plane and two binaries")
	}
	bin := t.TempDir()
	for name, pkg := range map[string]string{"manager": "../../cmd/manager", "apimsync-sim": "../../cmd/apimsync-sim"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	res, err := Run(ctx, Config{Objects: 100, Tenants: 2, Seed: 1, Latency: 5 * time.Millisecond, RateLimit: 50, RateBurst: 10,
		Steady: 5 * time.Second, Settle: 3 * time.Second, DriftCheckPeriod: 10 * time.Minute, Timeout: 3 * time.Minute, Floor: true, FloorRunStatuses: true, FloorBefore: true, SlowLatency: 500 * time.Millisecond,
		Profile: time.Second, ManagerBin: filepath.Join(bin, "manager"), SimBin: filepath.Join(bin, "apimsync-sim"), Dir: dir, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	// BENCH_PROFILE: a CPU profile of each process it names, from the start of each run it names.
	for _, name := range []string{"cold-kube-apiserver", "cold-manager", "cold-simulator", "deletion-kube-apiserver", "deletion-manager", "deletion-simulator", "floor-cold-kube-apiserver", "floor-deletion-kube-apiserver"} {
		if fi, err := os.Stat(filepath.Join(dir, name+".pprof")); err != nil || fi.Size() == 0 {
			t.Errorf("CPU profile %s: %v, want one", name, err)
		}
	}
	t.Logf("\n%s\n%s", res.Table(), res.Summary())
	if res.Floor.ColdSeconds <= 0 || res.Floor.DeletionSeconds <= 0 || res.Floor.ColdRunStatusesSeconds <= 0 || res.Floor.ColdBeforeSeconds <= 0 {
		t.Errorf("control plane's floor %+v, want both phases measured, and the cold one with the cold run's statuses and before the cold run", res.Floor)
	}
	if r := res.Cold.CallsMin; r > 1.3 {
		t.Errorf("cold calls %d are %.2f× the minimal %d, want at most 1.3×", res.Cold.Calls.Total(), r, res.Cold.Minimal.Total())
	}
	// Deletion: the answered calls within 1.1× the minimal; the 429s counted apart. The manager was just
	// restarted (edits after restart), so its pacer meets the tenant's limit afresh: a few 429s find it.
	del := res.Deletion
	if answered, minimal := del.Calls.Total()-del.TooMany, del.Minimal.Total(); float64(answered) > 1.1*float64(minimal) {
		t.Errorf("deletion calls answered %d are %.2f× the minimal %d, want at most 1.1×", answered, float64(answered)/float64(minimal), minimal)
	}
	if most := del.Minimal.Total() / 10; del.TooMany > most {
		t.Errorf("%d deletion calls answered 429, want at most %d", del.TooMany, most)
	}
	if del.Ignored != 0 {
		t.Errorf("%d requests ignored a Retry-After during the deletion", del.Ignored)
	}
	if res.Deletion.Refused != 0 || res.Cold.Refused != 0 {
		t.Errorf("%d calls refused on cold sync and %d on deletion, want none", res.Cold.Refused, res.Deletion.Refused)
	}
	if u := res.Unmanaged; u.HandMade == 0 || u.Missed != 0 || u.Extra != 0 {
		t.Errorf("diff --unmanaged after the cold sync: %+v, want every hand-made object listed and nothing of the workload", u)
	}
	if res.Cold.Ignored != 0 {
		t.Errorf("%d requests ignored a Retry-After", res.Cold.Ignored)
	}
	if n := res.SteadyWarm.Total() + res.SteadyAfterRestart.Total(); n != 0 {
		t.Errorf("%d calls at rest, want 0", n)
	}
	if res.LeftAfterDeletion != 0 {
		t.Errorf("%d remote objects left after deletion", res.LeftAfterDeletion)
	}
	if sp := res.Slow; sp == nil || sp.Without <= 0 || sp.With <= 0 || sp.OtherObjects == 0 || sp.Left != 0 {
		t.Errorf("slow-tenant phase %+v, want both applies measured and the tenants empty after", sp)
	}
	if sp := res.Shards; sp == nil {
		t.Errorf("the shards phase did not run")
	} else {
		if sp.OnBoth != 0 || len(sp.Shards) != 2 || sp.Shards[0].Calls == 0 || sp.Shards[1].Calls == 0 || sp.Shards[0].Calls+sp.Shards[1].Calls != sp.SimCalls {
			t.Errorf("two shards: %+v, %d tenants called by both, %d calls counted by the simulator; want each its half, none on both, the managers' calls the simulator's", sp.Shards, sp.OnBoth, sp.SimCalls)
		}
		if sp.AtRest != 0 || sp.Left != 0 {
			t.Errorf("two shards: %d calls at rest, %d remote objects left after deletion; want 0 and 0", sp.AtRest, sp.Left)
		}
		if mv := sp.Move; mv.Reads != 0 || mv.Writes != 0 || mv.Duplicates != 0 || mv.Synced < mv.Objects || mv.ByA != 0 || mv.EditByB == 0 {
			t.Errorf("a namespace moved from shard a to b: %+v; want no call (taken over from status), no duplicate, every object Synced, no call by a after, b syncing an edit", mv)
		}
	}
	if res.ColdPeak.Goroutines == 0 {
		t.Errorf("no goroutine count read from the manager's metrics")
	}
	for name, c := range res.Edits {
		if c.Writes == 0 {
			t.Errorf("edit of a %s made no write", name)
		}
	}
}
