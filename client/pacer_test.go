package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pacerDo runs one request through p that meets o.
func pacerDo(t *testing.T, p *Pacer, o Outcome) {
	t.Helper()
	release, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	release(o)
}

// pacerRound runs a full window through p: as many requests at once as its limit allows, each meeting
// o. The limit only grows while the window is in use.
func pacerRound(t *testing.T, p *Pacer, o Outcome) {
	t.Helper()
	n := p.Limit()
	releases := make([]func(Outcome), 0, n)
	for range n {
		release, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		releases = append(releases, release)
	}
	for _, release := range releases {
		release(o)
	}
}

// pacerClock is a settable clock for the Now hook, safe for concurrent use.
type pacerClock struct{ ns atomic.Int64 }

func (c *pacerClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *pacerClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestPacerGrowsWhileLatencyHolds(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 4})
	for i := 0; i < 200; i++ {
		pacerRound(t, p, Outcome{Code: 200, Latency: 10 * time.Millisecond})
	}
	if got := p.Limit(); got <= 10 {
		t.Errorf("limit after 200 fast successes = %d, want > 10", got)
	}

	// 4xx other than 429 are answers: they grow the limit as well.
	p = NewPacer(PacerConfig{Initial: 4})
	for i := 0; i < 50; i++ {
		pacerRound(t, p, Outcome{Code: 404, Latency: 10 * time.Millisecond})
	}
	if got := p.Limit(); got <= 4 {
		t.Errorf("limit after 50 fast 404s = %d, want > 4", got)
	}

	p = NewPacer(PacerConfig{Initial: 4, Max: 12})
	for i := 0; i < 500; i++ {
		pacerRound(t, p, Outcome{Code: 200, Latency: 10 * time.Millisecond})
		if got := p.Limit(); got > 12 {
			t.Fatalf("limit after %d successes = %d, above Max 12", i+1, got)
		}
	}
	if got := p.Limit(); got != 12 {
		t.Errorf("limit after 500 fast successes = %d, want Max 12", got)
	}
}

func TestPacerDoesNotGrowWhenLatencyRises(t *testing.T) {
	clock := &pacerClock{}
	p := NewPacer(PacerConfig{Initial: 4, Now: clock.now})
	pacerRound(t, p, Outcome{Code: 200, Latency: 10 * time.Millisecond}) // the baseline: 4 -> 5
	for i := 0; i < 100; i++ {
		clock.advance(100 * time.Millisecond)
		pacerRound(t, p, Outcome{Code: 200, Latency: 25 * time.Millisecond})
	}
	if got := p.Limit(); got != 4 {
		t.Errorf("limit after 100 slow successes (2.5x the best) = %d, want 4", got)
	}
	// Once the 10ms baseline has aged out of the window, 25ms is the new normal and the limit grows again.
	clock.advance(minLatencyWindow)
	for i := 0; i < 20; i++ {
		pacerRound(t, p, Outcome{Code: 200, Latency: 25 * time.Millisecond})
	}
	if got := p.Limit(); got <= 4 {
		t.Errorf("limit after the baseline aged out = %d, want > 4", got)
	}
}

// TestPacerGrowsOnlyWhenUsed: a tenant that sees one request at a time gives no sign of how much more it
// could take, so the limit stays where it is instead of drifting to Max while idle.
func TestPacerGrowsOnlyWhenUsed(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 8})
	for range 200 {
		pacerDo(t, p, Outcome{Code: 200, Latency: 10 * time.Millisecond})
	}
	if got := p.Limit(); got != 8 {
		t.Errorf("limit after 200 requests one at a time = %d, want 8", got)
	}
}

func TestPacerCutsOncePerRound(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 20})
	releases := make([]func(Outcome), 20)
	for i := range releases {
		r, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatalf("Acquire %d: %v", i, err)
		}
		releases[i] = r
	}
	var wg sync.WaitGroup
	for _, r := range releases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r(Outcome{Code: 502, Latency: 5 * time.Millisecond})
		}()
	}
	wg.Wait()
	if got := p.Limit(); got != 10 {
		t.Fatalf("limit after one window of 20 502s = %d, want 10 (one cut)", got)
	}
	// A request started after the cut that still meets 502 shows the cut was not enough: cut again.
	pacerDo(t, p, Outcome{Code: 502})
	if got := p.Limit(); got != 5 {
		t.Errorf("limit after a 502 in the next round = %d, want 5", got)
	}
	for i := 0; i < 10; i++ {
		pacerDo(t, p, Outcome{Code: 502})
	}
	if got := p.Limit(); got != 1 {
		t.Errorf("limit after many rounds of 502 = %d, want Min 1", got)
	}
	// A release called twice counts once.
	r, _ := p.Acquire(context.Background())
	r(Outcome{Code: 200})
	r(Outcome{Code: 200})
	if got := p.InFlight(); got != 0 {
		t.Errorf("InFlight after a double release = %d, want 0", got)
	}
}

// TestPacerCutsOnOverloadOnly: overload (429, 502, 504, a 503 with Retry-After, a timeout) halves the
// limit; a 503 without Retry-After or a dropped connection, which say little of load, cut it lightly
// (8 → 7); answers about the request itself do not cut it.
func TestPacerCutsOnOverloadOnly(t *testing.T) {
	cases := map[string]struct {
		o    Outcome
		want int
	}{
		"timeout": {Outcome{Code: 0}, 4}, "429": {Outcome{Code: 429}, 4}, "502": {Outcome{Code: 502}, 4}, "504": {Outcome{Code: 504}, 4},
		"503 with Retry-After": {Outcome{Code: 503, RetryAfter: time.Millisecond}, 4},
		"503":                  {Outcome{Code: 503}, 7}, "dropped": {Outcome{Code: 0, Dropped: true}, 7},
		"404": {Outcome{Code: 404}, 8}, "422": {Outcome{Code: 422}, 8}, "409": {Outcome{Code: 409}, 8}, "200": {Outcome{Code: 200}, 8}, "500": {Outcome{Code: 500}, 8},
	}
	for name, tc := range cases {
		p := NewPacer(PacerConfig{Initial: 8})
		tc.o.Latency = time.Millisecond
		pacerDo(t, p, tc.o)
		if got := p.Limit(); got != tc.want {
			t.Errorf("limit after one %s = %d, want %d", name, got, tc.want)
		}
	}
}

func TestPacerRetryAfterPausesEveryone(t *testing.T) {
	t.Parallel()
	p := NewPacer(PacerConfig{Initial: 4})
	r1, _ := p.Acquire(context.Background())
	r2, _ := p.Acquire(context.Background())
	start := time.Now()
	r1(Outcome{Code: 429, RetryAfter: 300 * time.Millisecond})
	r2(Outcome{Code: 429, RetryAfter: 10 * time.Millisecond}) // must not shorten the pause
	if p.TryAdmit() {
		t.Error("TryAdmit during a Retry-After pause = true, want false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with a 50ms deadline during the pause: err = %v, want deadline exceeded", err)
	}
	release, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire after the pause: %v", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("Acquire returned %v after a Retry-After of 300ms", waited)
	}
	release(Outcome{Code: 200})
	if !p.TryAdmit() {
		t.Error("TryAdmit after the pause = false, want true")
	}
}

func TestPacerInFlightNeverExceedsTheLimit(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 4, Max: 5})
	var cur, peak atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				release, err := p.Acquire(context.Background())
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				n := cur.Add(1)
				for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				cur.Add(-1)
				release(Outcome{Code: 200, Latency: time.Millisecond})
			}
		}()
	}
	wg.Wait()
	if got := peak.Load(); got > 5 || got < 2 {
		t.Errorf("peak concurrency = %d, want 2..5 (Max 5)", got)
	}
	if got := p.Limit(); got != 5 {
		t.Errorf("limit = %d, want Max 5", got)
	}
	if got := p.InFlight(); got != 0 {
		t.Errorf("InFlight after all released = %d, want 0", got)
	}
}

func TestPacerCancelledWaiterTakesNoSlot(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 2, Max: 2})
	r1, _ := p.Acquire(context.Background())
	r2, _ := p.Acquire(context.Background())

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Acquire(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled ctx: err = %v, want context.Canceled", err)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with an expiring ctx: err = %v, want context.DeadlineExceeded", err)
	}
	if got := p.InFlight(); got != 2 {
		t.Errorf("InFlight after the waiters gave up = %d, want 2", got)
	}

	// A waiter is woken when a slot frees, and the two that gave up took none.
	got := make(chan error, 1)
	go func() {
		r, err := p.Acquire(context.Background())
		if err == nil {
			r(Outcome{Code: 200}) // before the send, so that the slot is free when the test looks
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Acquire returned (%v) with every slot taken", err)
	case <-time.After(20 * time.Millisecond):
	}
	r1(Outcome{Code: 200})
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("Acquire after a release: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("waiter not woken when a slot freed")
	}
	r2(Outcome{Code: 200})
	if got := p.InFlight(); got != 0 {
		t.Errorf("InFlight at the end = %d, want 0", got)
	}
}

func TestPacerTryAdmit(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 2})
	for i := 0; i < 5; i++ {
		if !p.TryAdmit() {
			t.Fatalf("TryAdmit %d with limit 2 = false, want true (2*2+1 units)", i+1)
		}
	}
	if p.TryAdmit() {
		t.Fatal("6th TryAdmit with limit 2 = true, want false")
	}
	p.Leave()
	if !p.TryAdmit() {
		t.Fatal("TryAdmit after a Leave = false, want true")
	}
	if p.TryAdmit() {
		t.Fatal("TryAdmit beyond 5 units again = true, want false")
	}

	clock := &pacerClock{}
	p = NewPacer(PacerConfig{Initial: 2, Now: clock.now})
	pacerDo(t, p, Outcome{Code: 503, RetryAfter: time.Minute})
	if p.TryAdmit() {
		t.Error("TryAdmit during a Retry-After pause = true, want false")
	}
	clock.advance(time.Minute)
	if !p.TryAdmit() {
		t.Error("TryAdmit when the pause has ended = false, want true")
	}
}

func TestPacerQPSCap(t *testing.T) {
	t.Parallel()
	p := NewPacer(PacerConfig{Initial: 8, QPS: 20, Burst: 1})
	start := time.Now()
	for i := 0; i < 10; i++ {
		pacerDo(t, p, Outcome{Code: 200})
	}
	// The first goes at once, the nine others 50ms apart: 450ms.
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("10 acquisitions at 20 QPS, burst 1, took %v, want >= 400ms", took)
	}
	pacerDo(t, p, Outcome{Code: 200}) // the bucket is empty again
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := p.Acquire(ctx); err == nil {
		t.Error("Acquire with a deadline shorter than the next token = nil error, want one")
	}
	// The token bucket sees the deadline: it gives up at once rather than wait 50ms for nothing.
	if took := time.Since(start); took >= 40*time.Millisecond {
		t.Errorf("Acquire with a 10ms deadline took %v", took)
	}
	if got := p.InFlight(); got != 0 {
		t.Errorf("InFlight = %d, want 0", got)
	}
}

// TestPacerLearnsTheTenantRate: a 429 sets a first guess near what the tenant served (a concurrency
// limit cannot pace below one request per round trip), over a second at least (a burst allowance answered
// at once is no rate); further 429s within a second are one signal, and a 429 while the rate paced nothing
// cuts nothing. The guess grows fast (25% a second) until a 429 meets the paced rate. That 429 comes late
// (the tenant's burst allowance hid the excess), so the rate refused is taken from the rate before it,
// and the rate goes to 90% of that, grows back fast to 97% of it, then only probes (a tenth of the pace).
// A probe well past the rate refused that met no 429 for long grows fast again.
func TestPacerLearnsTheTenantRate(t *testing.T) {
	clock := &pacerClock{}
	clock.advance(time.Hour)
	p := NewPacer(PacerConfig{Now: clock.now})
	if got := p.LearntRate(); got != 0 {
		t.Fatalf("learnt rate %v before any 429, want none", got)
	}
	for range 40 { // 40 successes over 2s: 20 per second served
		clock.advance(50 * time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	first := p.LearntRate()
	if first < 17 || first > 19 {
		t.Errorf("learnt rate %v after a 429 at 20/s served, want 90%% of it", first)
	}
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	if got := p.LearntRate(); got != first {
		t.Errorf("a second 429 within a second cut the rate again: %v, want %v", got, first)
	}
	for range 10 { // a second at 10/s: no request waits for the learnt rate, which learns nothing
		clock.advance(100 * time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	if got := p.LearntRate(); got != first {
		t.Errorf("learnt rate %v after 10 successes it did not pace, want %v", got, first)
	}
	clock.advance(3 * time.Second)
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	if got := p.LearntRate(); got != first {
		t.Errorf("a 429 while the learnt rate paced nothing cut it: %v, want %v (a random 429 is no rate)", got, first)
	}
	// A tenant with an allowance of five: five answered at once, then a 429.
	clock.advance(2 * time.Second)
	p = NewPacer(PacerConfig{Now: clock.now})
	for range 5 {
		clock.advance(time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	// pacedSuccess is a success at the learnt rate while it paces the tenant (requests wait for it); the
	// rate after it is recorded with its time.
	type point struct {
		at time.Time
		r  float64
	}
	var seen []point
	pacedSuccess := func() {
		pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
		seen = append(seen, point{clock.now(), p.LearntRate()})
	}
	clock.advance(time.Second)
	start := p.LearntRate()
	for range 60 { // paced: each success grows it by 3/s (fourfold a second) until a paced rate is refused
		pacedSuccess()
	}
	grown := p.LearntRate()
	if want := start + 60*3; math.Abs(grown-want) > 0.01 {
		t.Errorf("learnt rate %v after 60 paced successes from %v, want %v", grown, start, want)
	}
	now := clock.now()
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	cut := p.LearntRate()
	// The 429 came late, the tenant's allowance (the 5 requests answered before the first 429) spent:
	// the rate refused is the rate above which the growth sent 4 requests (a bucket of 5 refuses once
	// 4 went above its rate: the fifth token is the request's own).
	excess := func(l float64) float64 {
		sum := 0.0
		for i := 1; i < len(seen); i++ {
			sum += math.Max(seen[i-1].r-l, 0) * seen[i].at.Sub(seen[i-1].at).Seconds()
		}
		return sum + math.Max(seen[len(seen)-1].r-l, 0)*now.Sub(seen[len(seen)-1].at).Seconds()
	}
	if above := excess(cut / 0.9); above < 4*0.7 || above > 4*1.3 {
		t.Errorf("a 429 after a fast growth to %v left %v: %v requests were sent above the rate refused, want the allowance of 4", grown, cut, above)
	}
	if cut > 0.9*grown-1 {
		t.Errorf("a 429 after a fast growth left %v, want well under 90%% of the rate then (%v)", cut, grown)
	}
	refused := cut / 0.9
	// Back fast to 97% of the refused rate (5% a second, at least 1/s per second), then it holds for
	// rateHold.
	for i := 0; p.LearntRate() < 0.97*refused; i++ {
		if i == 1000 {
			t.Fatalf("learnt rate %v after %d successes, want back to 97%% of the refused %v", p.LearntRate(), i, refused)
		}
		pacedSuccess()
	}
	held := p.LearntRate()
	for range 60 {
		pacedSuccess()
	}
	if got := p.LearntRate(); got != held {
		t.Errorf("learnt rate %v after 60 successes at 97%% of the refused %v, want it held at %v", got, refused, held)
	}
	clock.advance(rateHold)
	probing := p.LearntRate()
	for range 100 {
		pacedSuccess()
	}
	if got, most := p.LearntRate(), probing+100*0.005+0.01; got <= probing || got > most {
		t.Errorf("learnt rate %v after 100 successes past the hold from %v, want a slow probe, at most %v (0.5%% a second)", got, probing, most)
	}
	// Probing past the rate refused with no 429 for long: the limit went up, growth is fast again.
	refused = p.refused
	for i := 0; p.LearntRate() < rateRetryShare*refused || clock.now().Sub(p.rateCut) < rateRetryAfter; i++ {
		if i == 20000 {
			t.Fatalf("learnt rate %v after %d probing successes, refused %v", p.LearntRate(), i, refused)
		}
		pacedSuccess()
	}
	pacedSuccess()
	from := p.LearntRate()
	pacedSuccess()
	if step := p.LearntRate() - from; step < max(1/from, 0.05)-1e-9 {
		t.Errorf("growth %v per success past 110%% of the rate refused, want fast again (%v)", step, max(1/from, 0.05))
	}
	clock.advance(2 * time.Second)
	small := NewPacer(PacerConfig{Now: clock.now})
	for range 10 { // a burst allowance answered at once: 10 in 10ms
		clock.advance(time.Millisecond)
		pacerDo(t, small, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacerDo(t, small, Outcome{Code: 429, Latency: time.Millisecond})
	if got := small.LearntRate(); got > 10 {
		t.Errorf("learnt rate %v from a burst of 10 answered in 10ms, want at most 10 a second", got)
	}
}

// TestPacerLearnsARateWithNoBurst: against a tenant that refuses a second request at once (an allowance
// of one), a paced 429 says the rate is between the one that spaced the last request answered and the
// one that spaced the refused request: the learnt rate goes to 90% of the former.
func TestPacerLearnsARateWithNoBurst(t *testing.T) {
	clock := &pacerClock{}
	clock.advance(time.Hour)
	p := NewPacer(PacerConfig{Now: clock.now})
	pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond})
	if got := p.LearntRate(); got != 1 {
		t.Fatalf("learnt rate %v after a 429 with one request served, want the floor of 1/s", got)
	}
	var answered float64
	for p.LearntRate() < 10 { // paced successes: the rate grows fourfold a second
		answered = p.LearntRate()
		pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacedDo(t, p, clock, Outcome{Code: 429, Latency: time.Millisecond})
	if got, want := p.LearntRate(), 0.9*answered; math.Abs(got-want) > 1e-6 {
		t.Errorf("learnt rate %v after a paced 429, want 90%% of the last rate answered (%v)", got, want)
	}
}

// pacedDo runs one request through p that meets o, 1/rate after the last, as one the learnt rate paces.
func pacedDo(t *testing.T, p *Pacer, clock *pacerClock, o Outcome) {
	t.Helper()
	clock.advance(time.Duration(float64(time.Second) / p.LearntRate()))
	p.mu.Lock()
	p.rateBound = clock.now()
	p.mu.Unlock()
	pacerDo(t, p, o)
}

// TestPacerSpacesRequestsEvenly: requests paced by the learnt rate go 1/rate apart, also when the rate
// grows while they wait. (Tokens reserved ahead at the lower rate once let the requests of both rates go
// together, which a tenant with an allowance of one refuses.)
func TestPacerSpacesRequestsEvenly(t *testing.T) {
	t.Parallel()
	p := NewPacer(PacerConfig{Initial: 8})
	p.mu.Lock()
	p.learnt, p.refused, p.rateCut = 10, 10.3, time.Now() // held: successes do not move it
	p.mu.Unlock()
	var mu sync.Mutex
	var sent []time.Time
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				release, err := p.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				sent = append(sent, time.Now())
				if len(sent) == 6 {
					p.mu.Lock()
					p.learnt, p.refused = 20, 20.3 // grown while the others wait
					p.mu.Unlock()
				}
				mu.Unlock()
				release(Outcome{Code: 200, Latency: time.Millisecond})
			}
		})
	}
	wg.Wait()
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(sent); i++ {
		if gap := sent[i].Sub(sent[i-1]); gap < 45*time.Millisecond {
			t.Errorf("requests %d and %d went %v apart, want at least 1/20s", i, i+1, gap)
		}
	}
}

// TestPacerBackgroundShare: background requests (drift checks) get their share of the concurrency limit,
// at least one slot, while other requests still get the rest.
func TestPacerBackgroundShare(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 10, Max: 10, BackgroundShare: 0.2})
	bg := WithBackground(context.Background())
	var held []func(Outcome)
	for range 2 {
		release, err := p.Acquire(bg)
		if err != nil {
			t.Fatalf("background Acquire within the share: %v", err)
		}
		held = append(held, release)
	}
	short, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third background request with a share of 2 slots of 10: err %v, want it to wait", err)
	}
	release, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatalf("a foreground request while the background share is used: %v", err)
	}
	release(Outcome{Code: 200})
	held[0](Outcome{Code: 200})
	release, err = p.Acquire(bg)
	if err != nil {
		t.Fatalf("background Acquire after one of its slots freed: %v", err)
	}
	release(Outcome{Code: 200})
	held[1](Outcome{Code: 200})

	one := NewPacer(PacerConfig{Initial: 1, Max: 1, BackgroundShare: 0.2})
	release, err = one.Acquire(bg)
	if err != nil {
		t.Fatalf("background Acquire with a limit of 1: %v, want the one slot (at least one)", err)
	}
	release(Outcome{Code: 200})
}

// TestPacerBackgroundShareOfAKnownRate: once the tenant's rate is known (here the QPS cap), background
// requests are paced at their share of it.
func TestPacerBackgroundShareOfAKnownRate(t *testing.T) {
	t.Parallel()
	p := NewPacer(PacerConfig{Initial: 8, QPS: 100, Burst: 100, BackgroundShare: 0.2})
	bg := WithBackground(context.Background())
	start := time.Now()
	for range 6 {
		release, err := p.Acquire(bg)
		if err != nil {
			t.Fatal(err)
		}
		release(Outcome{Code: 200})
	}
	// 20/s with a burst of one: the sixth request starts no sooner than 5 intervals of 50ms.
	if took := time.Since(start); took < 240*time.Millisecond {
		t.Errorf("6 background requests at a 20%% share of 100/s took %v, want at least 250ms", took)
	}
	start = time.Now()
	for range 20 {
		pacerDo(t, p, Outcome{Code: 200})
	}
	// Foreground requests are not held to the background share: 20 within the cap's burst start at once.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("20 foreground requests within the burst took %v, want them at once", took)
	}
}

// TestPacerTryAdmitBackground: background work is admitted only within its share of the limit.
func TestPacerTryAdmitBackground(t *testing.T) {
	p := NewPacer(PacerConfig{Initial: 10, Max: 10, BackgroundShare: 0.2})
	for i := range 2 {
		if !p.TryAdmitBackground() {
			t.Fatalf("TryAdmitBackground %d with a share of 2 = false, want true", i+1)
		}
	}
	if p.TryAdmitBackground() {
		t.Fatal("a third TryAdmitBackground with a share of 2 = true, want false")
	}
	if !p.TryAdmit() {
		t.Fatal("TryAdmit while the background share is used = false, want true")
	}
	p.LeaveBackground()
	if !p.TryAdmitBackground() {
		t.Fatal("TryAdmitBackground after a LeaveBackground = false, want true")
	}
}

// TestPacerRetakesTokensAfterAPause: requests that waited for a slot while a 429 set a pause and a
// first learnt rate hold tokens from before: after the pause they take tokens of the learnt rate again,
// instead of all going at once (a burst the tenant would answer with the next 429).
func TestPacerRetakesTokensAfterAPause(t *testing.T) {
	t.Parallel()
	p := NewPacer(PacerConfig{Min: 1, Max: 1, Initial: 1})
	first, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	sent := make(chan time.Time, waiters)
	for range waiters {
		go func() {
			release, err := p.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				sent <- time.Time{}
				return
			}
			sent <- time.Now()
			release(Outcome{Code: 200, Latency: time.Millisecond})
		}()
	}
	// Let the waiters queue for the only slot, having taken their tokens (no rate was learnt yet).
	for p.queued() < waiters {
		time.Sleep(time.Millisecond)
	}
	pauseEnd := time.Now().Add(100 * time.Millisecond)
	first(Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: 100 * time.Millisecond})
	if got := p.LearntRate(); got != 1 {
		t.Fatalf("learnt rate %v after a 429 with nothing served, want the floor of 1/s", got)
	}
	var times []time.Time
	for range waiters {
		times = append(times, <-sent)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	if times[0].Before(pauseEnd) {
		t.Errorf("a request went %v before the pause ended", pauseEnd.Sub(times[0]))
	}
	// At 1/s, evenly spaced: the second request after the pause goes a second after the first.
	if gap := times[1].Sub(pauseEnd); gap < 800*time.Millisecond {
		t.Errorf("request 2 went %v after the pause, want about a second later (the learnt rate)", gap)
	}
}

// TestPacerA429NoBucketExplainsCutsLightly: a 429 that no token bucket of the tenant's allowance would
// have answered (too few requests since the last pause to spend it) is not about the rate: the learnt
// rate is cut lightly and the rate refused kept, so that 429s answered at random do not decay it.
func TestPacerA429NoBucketExplainsCutsLightly(t *testing.T) {
	clock := &pacerClock{}
	clock.advance(time.Hour)
	p := NewPacer(PacerConfig{Now: clock.now})
	for range 5 { // an allowance of five
		clock.advance(time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	clock.advance(2 * time.Second) // the pause is over: the tenant's bucket is full again
	for range 2 {
		pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
	}
	before, refused := p.LearntRate(), p.refused
	pacedDo(t, p, clock, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	wantLightCut(t, p, before, refused, "a 429 two requests after a pause, against an allowance of five")
}

// pacerRefusedPast20 is a pacer against a tenant with an allowance of one, whose learnt rate grew past
// 20/s and met a paced 429 with a second's Retry-After.
func pacerRefusedPast20(t *testing.T) (*Pacer, *pacerClock) {
	t.Helper()
	clock := &pacerClock{}
	clock.advance(time.Hour)
	p := NewPacer(PacerConfig{Now: clock.now})
	pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond}) // an allowance of one
	for p.LearntRate() < 20 {
		pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacedDo(t, p, clock, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	return p, clock
}

// TestPacerRateRefusedKeepsHalfItsHighest: 429s answered at random just as the rate grows back after
// a pause (which a token bucket of one explains: the refused request went faster than any answered
// since) do not take the rate refused below half the highest one refused.
func TestPacerRateRefusedKeepsHalfItsHighest(t *testing.T) {
	p, clock := pacerRefusedPast20(t)
	top := p.refused
	if top < 10 {
		t.Fatalf("rate refused %v after a paced 429 past 20/s", top)
	}
	for range 30 {
		clock.advance(2 * time.Second) // past the pause
		p.mu.Lock()
		p.learnt *= 0.8 // lower than before: the next successes regrow it
		p.mu.Unlock()
		for range 3 {
			pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
		}
		pacedDo(t, p, clock, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	}
	if p.refused < top/2 {
		t.Errorf("rate refused %v after 30 cycles of 429s as the rate regrew, want at least half of %v", p.refused, top)
	}
}

// TestPacerA429WhileLittleIsSentCutsLightly: a 429 that comes while the tenant is sent far less than the
// learnt rate (requests held back by their dependencies, a tenant answering 429 at random) says nothing
// of that rate, even though a bucket explains it: the learnt rate is cut lightly and the rate refused
// kept. (Taking the rate sent as the rate refused pinned the learnt rate to its floor of 1/s.)
func TestPacerA429WhileLittleIsSentCutsLightly(t *testing.T) {
	p, clock := pacerRefusedPast20(t)
	clock.advance(2 * time.Second) // past the pause
	for range 3 {                  // a request every 900ms: far under the learnt rate
		clock.advance(900 * time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	clock.advance(600 * time.Millisecond) // sooner than the others: a bucket of one at their rate refuses it
	p.mu.Lock()
	p.rateBound = clock.now() // a request waited for the learnt rate a moment ago
	p.mu.Unlock()
	before, refused := p.LearntRate(), p.refused
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	wantLightCut(t, p, before, refused, fmt.Sprintf("a 429 with a request sent every 900ms, the learnt rate %v", before))
}

// TestPacerA429OnLittleEvidenceCutsLightly: a 429 three requests after a pause, against an allowance
// seen as three, is explained by a bucket at almost any rate, down to nothing: on so little evidence
// the learnt rate is cut lightly and the rate refused kept (the learnt rate once fell to its floor of
// 1/s that way, where random 429s held it).
func TestPacerA429OnLittleEvidenceCutsLightly(t *testing.T) {
	clock := &pacerClock{}
	clock.advance(time.Hour)
	p := NewPacer(PacerConfig{Now: clock.now})
	for range 3 { // an allowance of three, as the first 429 makes it
		clock.advance(time.Millisecond)
		pacerDo(t, p, Outcome{Code: 200, Latency: time.Millisecond})
	}
	pacerDo(t, p, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	clock.advance(2 * time.Second) // past the pause
	p.mu.Lock()
	p.learnt = 20
	p.mu.Unlock()
	for range 3 {
		pacedDo(t, p, clock, Outcome{Code: 200, Latency: time.Millisecond})
	}
	before, refused := p.LearntRate(), p.refused
	pacedDo(t, p, clock, Outcome{Code: 429, Latency: time.Millisecond, RetryAfter: time.Second})
	wantLightCut(t, p, before, refused, fmt.Sprintf("a 429 three requests after a pause at %v/s, against an allowance of three", before))
}

// wantLightCut checks that the 429 described by what cut the learnt rate lightly, from before, and kept
// the rate refused.
func wantLightCut(t *testing.T, p *Pacer, before, refused float64, what string) {
	t.Helper()
	if got := p.LearntRate(); math.Abs(got-lightCut*before) > 1e-9 || p.refused != refused {
		t.Errorf("%s: learnt rate %v, refused %v; want %v, %v", what, got, p.refused, lightCut*before, refused)
	}
}
