package client

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// PacerConfig configures a Pacer. Zero or negative fields take their defaults.
type PacerConfig struct {
	Initial int     // starting concurrency limit (default 4), clamped into [Min, Max]
	Min     int     // lowest limit (default 1)
	Max     int     // highest limit, a hard cap on requests in flight (default 64; raised to Min if lower)
	QPS     float64 // optional hard rate cap in requests/second; 0 = none
	Burst   int     // burst of the QPS cap (default max(1, int(QPS)))
	// BackgroundShare is the share of the tenant's budget that background requests (WithBackground: drift
	// checks) may use, in (0, 1]: that share of the concurrency limit (at least one slot) and, once the
	// tenant's rate is known (the QPS cap or a rate learnt from 429s), that share of the rate. Default 0.2.
	BackgroundShare float64
	Now             func() time.Time // for tests; default time.Now. Pauses are waited on real timers, so it must keep pace with real time.
}

// Outcome is what one request met.
type Outcome struct {
	Code       int           // HTTP status; 0 = no answer (timeout, connection error)
	Latency    time.Duration // <= 0 means not measured: the latency check is skipped
	RetryAfter time.Duration // from a Retry-After header, 0 if none
	// Dropped is a request without an answer whose connection was closed (not a timeout): a proxy or the
	// network dropped it, which says nothing of the tenant's load.
	Dropped bool
}

// minLatencyWindow is how long the best latency seen is remembered. Latency worse than twice that best
// means queues are building up on the tenant, so the limit stops growing before 3scale has to refuse.
// The window lets the baseline rise again when the tenant gets slower for good (more data, busier host).
const minLatencyWindow = 30 * time.Second

// Pacer paces the HTTP calls to one 3scale tenant with an adaptive concurrency limit (AIMD, as TCP's
// congestion window or Netflix's concurrency-limits): the limit grows by about one per round trip while
// the tenant answers quickly, and halves when it says it is overloaded (429, 502-504) or does not answer,
// so that every tenant gets as much concurrency as it can bear and no more. Safe for concurrent use.
type Pacer struct {
	min, max float64
	now      func() time.Time
	limiter  *rate.Limiter // nil without a QPS cap
	share    float64       // BackgroundShare
	bgRate   *rate.Limiter // the background share of the known rate

	mu         sync.Mutex
	limit      float64       // kept fractional so that +1/limit per success adds up
	inFlight   int           // requests holding a slot
	bgInFlight int           // background requests among them
	bgActive   int           // units of background work admitted by TryAdmitBackground
	active     int           // units of work admitted by TryAdmit
	pauseUntil time.Time     // no request starts before this (Retry-After)
	seq        uint64        // number of the last request started
	cutSeq     uint64        // seq when the limit was last cut; only later requests may cut again
	curMin     time.Duration // best latency in the current half window (0 = none yet)
	prevMin    time.Duration // best latency in the previous half window (0 = none)
	winStart   time.Time     // start of the current half window
	wake       chan struct{} // closed (and replaced) to wake all waiters when a slot may have freed
	waiting    int           // requests waiting for a slot

	// The rate the tenant accepts, learnt from its 429s: a concurrency limit cannot pace below one request
	// per round trip, and a SaaS tenant's limit is a rate. 0 until the first 429, then 90% of the rate
	// served, a first guess (the tenant's burst allowance taken as what it answered until then) that
	// grows fourfold a second until a 429 meets the paced rate. That 429 comes late, once the allowance
	// is spent, so the rate it refuses (refused) is the lowest rate at which a token bucket of that
	// allowance would have answered what the tenant answered since the last pause (learnRate), and the
	// learnt rate goes to 90% of it (once per second at most). Successes then raise it by 5% a second
	// (at least one request/s per second) up to 97% of refused, where it holds for rateHold, then
	// probes at 0.5% a second: it settles just under the tenant's limit and probes it rarely, instead
	// of meeting a 429 (and its Retry-After pause of the whole tenant, at least a second) every few
	// seconds. A probe 10% past refused that met no 429 for rateRetryAfter finds a limit raised since
	// (or refused too low): growth is fast again. A 429 that no such bucket explains is no rate: the
	// learnt rate is cut lightly and refused kept.
	learnt  float64 // requests per second; 0 until the first 429
	burst   float64 // the tenant's burst allowance as seen at the first 429
	refused float64
	// topRefused is the highest rate refused so far: refused never goes below half of it.
	topRefused float64
	// lastPaced is when the last request paced by the learnt rate took its slot: the next one goes
	// 1/learnt after it at the earliest. Spacing is decided when the slot is taken, not by tokens
	// reserved ahead: reservations made at one rate and kept while it changed (or across a Retry-After
	// pause) let two requests go closer than 1/learnt, which a tenant with a burst of one refuses.
	lastPaced time.Time
	rateCut   time.Time
	// rateCutSeq is seq when the learnt rate was last cut: a 429 to a request sent before then (already
	// on its way when the cut and the pause came) says nothing of the new rate.
	rateCutSeq uint64
	answered   [512]time.Time // when the last requests answered with success were sent, a ring
	nAnswered  int
	// rateBound is when a request last had to wait for the learnt rate. A 429 while the learnt rate has
	// not paced anything for a while is not about that rate (a tenant answering 429 at random, another
	// client sharing the tenant's budget): the pause is honoured, the rate is not cut, lest it decay.
	rateBound time.Time
	served    servedCounter
}

// NewPacer returns a Pacer for cfg.
func NewPacer(cfg PacerConfig) *Pacer {
	if cfg.Min <= 0 {
		cfg.Min = 1
	}
	if cfg.Max <= 0 {
		cfg.Max = 64
	}
	cfg.Max = max(cfg.Max, cfg.Min)
	if cfg.Initial <= 0 {
		cfg.Initial = 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BackgroundShare <= 0 || cfg.BackgroundShare > 1 {
		cfg.BackgroundShare = 0.2
	}
	p := &Pacer{min: float64(cfg.Min), max: float64(cfg.Max), now: cfg.Now, wake: make(chan struct{}), share: cfg.BackgroundShare,
		bgRate: rate.NewLimiter(rate.Inf, 1)}
	p.limit = math.Min(math.Max(float64(cfg.Initial), p.min), p.max)
	if cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			cfg.Burst = max(1, int(cfg.QPS))
		}
		p.limiter = rate.NewLimiter(rate.Limit(cfg.QPS), cfg.Burst)
	}
	return p
}

// Acquire waits until a request may be sent: fewer requests in flight than the current limit, any pause
// set by a Retry-After has passed, and the optional QPS cap allows it. It returns ctx.Err() if ctx ends
// first, having taken nothing. The returned release func must be called once with the outcome of the
// request; further calls do nothing. Waiters are not served in FIFO order: all are woken when a slot frees
// and the first to take the lock wins, which is fair enough for a few dozen workers.
//
// The token is taken before the slot, so that no slot is held idle while the rate cap is waited on.
// A background request (WithBackground) also waits for the background share of the budget.
func (p *Pacer) Acquire(ctx context.Context) (release func(Outcome), err error) {
	bg := IsBackground(ctx)
	for {
		if err := p.takeTokens(ctx, bg); err != nil {
			return nil, err
		}
		seq, sent, err := p.takeSlot(ctx, bg)
		if err != nil {
			return nil, err
		}
		if seq != 0 {
			var once sync.Once
			return func(o Outcome) { once.Do(func() { p.release(seq, bg, sent, o) }) }, nil
		}
		// A Retry-After pause began while this request waited for its slot: the tokens it holds are
		// from before. Sent the moment the pause ends, all such requests would be a burst the tenant
		// answers with the next 429: take tokens again, after the pause.
	}
}

// takeTokens waits out any Retry-After pause, then takes the request's tokens: of the background share
// (bg) and of the QPS cap. The learnt rate is kept by takeSlot.
func (p *Pacer) takeTokens(ctx context.Context, bg bool) error {
	// A Retry-After pause is waited out before any token is taken: tokens taken during the pause would
	// all be spent the moment it ends, a burst the tenant answers with the next 429s and the next pause.
	if err := p.waitPause(ctx); err != nil {
		return err
	}
	if bg {
		if err := p.waitBackgroundRate(ctx); err != nil {
			return err
		}
	}
	if p.limiter != nil {
		return p.limiter.Wait(ctx)
	}
	return nil
}

// takeSlot waits for a slot under the concurrency limit and, once a rate is learnt, for the time
// 1/learnt after the last paced request; it takes both at once and returns the request's number and
// when it took them. It gives up (0) when a Retry-After pause is in force, and returns ctx.Err() if ctx
// ends first.
func (p *Pacer) takeSlot(ctx context.Context, bg bool) (uint64, time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var due time.Time // the paced time this request waited for, zero if none
	for {
		if err := ctx.Err(); err != nil {
			return 0, time.Time{}, err
		}
		now := p.now()
		if p.pauseUntil.After(now) {
			return 0, time.Time{}, nil
		}
		if float64(p.inFlight) >= math.Floor(p.limit) || bg && p.bgInFlight >= p.backgroundSlots() {
			p.waitWake(ctx, 0)
			continue
		}
		if p.learnt > 0 {
			next := p.lastPaced.Add(time.Duration(float64(time.Second) / p.learnt))
			// A request that waited for next goes then even if the clock (a test's) says otherwise:
			// its timer ran; unless another took that time meanwhile or the rate was cut.
			if now.Before(next) && (due.IsZero() || next.After(due)) {
				p.rateBound = now // this request waits for the learnt rate: it is what paces the tenant now
				due = next
				if !p.waitWake(ctx, next.Sub(now)) {
					due = time.Time{} // woken before its time: it must wait again
				}
				continue
			}
			now = later(now, next)
			p.lastPaced = now
		}
		p.inFlight++
		if bg {
			p.bgInFlight++
		}
		p.seq++
		return p.seq, now, nil
	}
}

// waitWake waits, with p.mu released, until a slot may have freed, ctx ends or d (if positive) passes;
// it reports whether d passed. Called with p.mu held.
func (p *Pacer) waitWake(ctx context.Context, d time.Duration) bool {
	wake := p.wake
	p.waiting++
	p.mu.Unlock()
	var timeout <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	passed := false
	select {
	case <-ctx.Done():
	case <-wake:
	case <-timeout:
		passed = true
	}
	p.mu.Lock()
	p.waiting--
	return passed
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// queued returns the requests waiting for a slot (for tests).
func (p *Pacer) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// waitPause waits until no Retry-After pause is in force, or ctx ends.
func (p *Pacer) waitPause(ctx context.Context) error {
	for {
		p.mu.Lock()
		pause := p.pauseUntil.Sub(p.now())
		p.mu.Unlock()
		if pause <= 0 {
			return ctx.Err()
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// backgroundSlots is how many background requests may be in flight: the background share of the limit,
// at least one. Called with p.mu held.
func (p *Pacer) backgroundSlots() int {
	return max(1, int(p.share*math.Floor(p.limit)))
}

// waitBackgroundRate waits for the background share of the tenant's known rate: the QPS cap or the rate
// learnt from its 429s, whichever is lower; no wait while neither is known.
func (p *Pacer) waitBackgroundRate(ctx context.Context) error {
	p.mu.Lock()
	known := math.Inf(1)
	if p.limiter != nil {
		known = float64(p.limiter.Limit())
	}
	if p.learnt > 0 {
		known = math.Min(known, p.learnt)
	}
	p.mu.Unlock()
	if math.IsInf(known, 1) {
		return nil
	}
	if want := rate.Limit(p.share * known); p.bgRate.Limit() != want {
		p.bgRate.SetLimit(want)
	}
	return p.bgRate.Wait(ctx)
}

// release frees the slot of request seq (a background one if bg, sent at sent) and adapts the limit and
// the learnt rate to its outcome.
func (p *Pacer) release(seq uint64, bg bool, sent time.Time, o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Only a window in use says anything about whether the tenant could take a larger one: one request
	// at a time must not let the limit drift to Max while the tenant is idle.
	used := float64(p.inFlight) >= p.limit/2
	p.inFlight--
	if bg {
		p.bgInFlight--
	}
	now := p.now()
	if o.Code == 429 {
		p.learnRate(now, seq, sent) // before this 429's pause: the pause before it bounds what it learns from
	}
	if until := now.Add(o.RetryAfter); o.RetryAfter > 0 && until.After(p.pauseUntil) {
		p.pauseUntil = until
	}
	switch c := o.Code; {
	case c == 503 && o.RetryAfter == 0 || c == 0 && o.Dropped:
		// A 503 without Retry-After (maintenance, a proxy without a backend) or a dropped connection says
		// little of load: halving on each would pin the limit to its floor on a flaky tenant, where 1 in
		// 5 answers is one. A light cut, once per window (equilibrium near ten in flight at that rate).
		if seq > p.cutSeq {
			p.limit = math.Max(p.min, p.limit*lightCut)
			p.cutSeq = p.seq
		}
	case c == 0 || c == 429 || c == 502 || c == 503 || c == 504:
		// All the requests of one window meet the same overload; only one started after the last cut
		// shows that the cut was not enough. Otherwise a burst of 429s would cut the limit to the floor.
		if seq > p.cutSeq {
			p.limit = math.Max(p.min, p.limit*0.5)
			p.cutSeq = p.seq
		}
	case c >= 200 && c < 300 || c >= 400 && c < 500: // 4xx are answers about the request, not overload
		p.served.add(now)
		p.answered[p.nAnswered%len(p.answered)] = sent
		p.nAnswered++
		if p.learnt > 0 && now.Sub(p.rateBound) <= rateBoundWindow {
			// Only a rate that paces requests learns from their success: one that paces nothing would
			// drift up unchecked, and come down only through many 429s.
			r := p.learnt
			// Each success adds step/r of the rate, at r successes a second: step of it a second.
			step := max(1/r, 0.05) // 5 % a second, at least one request/s per second
			switch {
			case p.refused == 0:
				step = 3 // no paced rate refused yet: the first guess may be far too low, grow fourfold a second
			case r >= rateRetryShare*p.refused && now.Sub(p.rateCut) >= rateRetryAfter:
				// Well past the rate refused, and no 429 for long (the tenant's burst allowance hides an
				// excess for a while): the limit is higher now; grow fast again.
				p.refused = 1.5 * r
			case r >= rateProbeShare*p.refused && now.Sub(p.rateCut) < rateHold:
				step = 0 // near the rate the tenant refused, just refused: hold
			case r >= rateProbeShare*p.refused:
				// Near the rate the tenant refused: probe slowly, 0.5% a second. A tenant with a burst of
				// one refuses any request sent less than 1/rate after the last, so a probe past its rate
				// costs a Retry-After pause of the whole tenant, at least a second.
				step = 0.005
			}
			p.learnt = r + step
		}
		if (o.Latency <= 0 || o.Latency <= 2*p.observe(now, o.Latency)) && used {
			p.limit = math.Min(p.max, p.limit+1/p.limit)
		}
	}
	close(p.wake)
	p.wake = make(chan struct{})
}

// rateBoundWindow is how long after a request waited for the learnt rate that rate counts as what paces
// the tenant: successes raise it, 429s cut it.
const rateBoundWindow = 2 * time.Second

// rateProbeShare is the share of the rate last refused up to which the learnt rate grows fast;
// rateRetryShare the share past which a probe that met no 429 for rateRetryAfter forgets it.
const (
	rateProbeShare = 0.97
	rateHold       = 30 * time.Second // how long the learnt rate holds near the rate refused before it probes
	rateRetryShare = 1.1
	rateRetryAfter = 30 * time.Second
)

// lightCut is the factor a 503 without Retry-After or a dropped connection cuts the limit by.
const lightCut = 0.9

// learnRate sets the learnt rate after a 429 to request seq: the first time to 90% of the rate the tenant
// served in the last two seconds, later to 90% of the rate refused; at least one request per second. At
// most one cut a second, and only by a request sent after the last cut: the 429s of one burst are one
// signal.
func (p *Pacer) learnRate(now time.Time, seq uint64, sent time.Time) {
	if now.Sub(p.rateCut) < time.Second || seq <= p.rateCutSeq {
		return
	}
	if p.learnt == 0 {
		p.rateCut = now
		// What was served is only a first guess (a lower bound, the rate of the burst that met the 429
		// unknown): the learnt rate grows fast from it until the next 429 says where the limit is.
		r := math.Max(0.9*p.served.rate(now, 2*time.Second), 1)
		p.learnt = r
		// Requests went as fast as the concurrency limit let them until this 429: the tenant's burst
		// allowance is about what it answered so far.
		p.burst = max(float64(p.served.total), 1)
		return
	}
	// Later cuts start from the learnt rate, not from what was served: what was served is less than the
	// tenant allows whenever work waited (on dependencies, on Retry-After pauses), and cutting from it
	// would compound down to nothing on a tenant that answers 429 now and then.
	if now.Sub(p.rateBound) > rateBoundWindow {
		return
	}
	// The tenant's burst allowance hides an excess for a while, so a 429 comes late: a rate that grows
	// (fourfold a second at first) is refused past the limit, the more so the larger the allowance.
	// The tenant's rate is then at least the lowest rate at which a token bucket of the burst seen at
	// the first 429, full at the end of the last Retry-After pause, would have answered every request
	// answered since (bucketRate). That is the rate refused, for the learnt rate is too high only if
	// such a bucket, at that rate, refuses this request: otherwise no bucket explains the 429 (a
	// tenant answering 429 at random, another client spending the same budget), and the rate is cut
	// lightly, the rate refused kept, lest 429s that are no rate decay it to nothing.
	cur := p.learnt
	need, explained, evidence := p.bucketRate(p.pauseUntil, sent)
	// A bucket explains a 429 on little evidence at almost any rate, down to nothing: fewer requests
	// answered since the pause than twice the allowance (a tenant answering 429 at random, an allowance
	// underestimated by an early random 429), or a tenant sent far less than the learnt rate (requests
	// held back by their dependencies). Taken as the rate refused, such 429s pinned the learnt rate to
	// its floor of 1/s, where the 429s that kept coming held it.
	if !explained || float64(evidence) < 2*p.burst || p.sentRate(sent) < drivenShare*cur {
		p.learnt = math.Max(lightCut*cur, 1)
		return
	}
	// At least half the highest rate refused so far: 429s answered at random between paced requests
	// that a bucket explains (the rate had just grown back after a light cut) would each take the rate
	// refused a little lower, down to nothing over a few hundred of them.
	p.refused = math.Max(math.Min(need, cur), p.topRefused/2)
	p.topRefused = math.Max(p.topRefused, p.refused)
	p.rateCut, p.rateCutSeq = now, p.seq
	p.learnt = math.Max(0.9*p.refused, 1)
}

// drivenShare is the share of the learnt rate the tenant must have been sent, just before a 429, for the
// 429 to say anything of that rate.
const drivenShare = 0.5

// drivenWindow is how many requests answered before a 429 sentRate measures the rate sent over.
const drivenWindow = 2

// sentRate is the rate at which the last drivenWindow requests answered before the one sent at refused
// were sent, up to it; 0 when fewer were answered. Called with p.mu held.
func (p *Pacer) sentRate(refused time.Time) float64 {
	var last []time.Time
	for i := range min(p.nAnswered, len(p.answered)) {
		if t := p.answered[i]; t.Before(refused) {
			last = append(last, t)
		}
	}
	if len(last) < drivenWindow {
		return 0
	}
	slices.SortFunc(last, func(a, b time.Time) int { return b.Compare(a) })
	span := refused.Sub(last[drivenWindow-1]).Seconds()
	if span <= 0 {
		return math.Inf(1)
	}
	return drivenWindow / span
}

// bucketRate returns the lowest rate at which a token bucket of p.burst, full at since, answers every
// request answered since (as sent), whether such a bucket refuses a request sent at refused, and how
// many requests were answered since.
// Called with p.mu held.
func (p *Pacer) bucketRate(since, refused time.Time) (rate float64, explained bool, answered int) {
	var sent []time.Time
	for i := range min(p.nAnswered, len(p.answered)) {
		if t := p.answered[i]; t.After(since) && t.Before(refused) {
			sent = append(sent, t)
		}
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	sent = append(sent, refused)
	// answers reports whether a bucket of rate r answers every request sent, and then whether it has
	// a token left for refused.
	answers := func(r float64) (bool, bool) {
		tokens, last := p.burst, time.Time{}
		for _, t := range sent {
			if !last.IsZero() {
				tokens = math.Min(p.burst, tokens+r*t.Sub(last).Seconds())
			}
			last = t
			if tokens < 1 {
				return t.Equal(refused), false
			}
			tokens--
		}
		return true, true
	}
	lo, hi := 0.0, 1.0
	for ok, _ := answers(hi); !ok && hi < 1e6; ok, _ = answers(hi) {
		hi *= 2
	}
	for range 40 { // bisection: a faster bucket answers more
		if ok, _ := answers((lo + hi) / 2); ok {
			hi = (lo + hi) / 2
		} else {
			lo = (lo + hi) / 2
		}
	}
	_, left := answers(hi)
	return hi, !left, len(sent) - 1
}

// servedCounter counts successes in slots of servedSlot, the last len(count) slots.
type servedCounter struct {
	slot  [16]int64 // the slot number (time / servedSlot) of each count
	count [16]int
	first time.Time // the first success counted
	total int       // successes counted, in all
}

const servedSlot = 250 * time.Millisecond

func (c *servedCounter) add(now time.Time) {
	n := now.UnixNano() / int64(servedSlot)
	i := n % int64(len(c.count))
	if c.slot[i] != n {
		c.slot[i], c.count[i] = n, 0
	}
	c.count[i]++
	c.total++
	if c.first.IsZero() {
		c.first = now
	}
}

// within returns the successes counted over the last window (at most len(count) slots) and the time
// they cover: from the start of the oldest slot to now, or from the first success.
func (c *servedCounter) within(now time.Time, window time.Duration) (int, time.Duration) {
	n := now.UnixNano() / int64(servedSlot)
	k := min(int64(window/servedSlot), int64(len(c.count)))
	sum := 0
	for i := range c.count {
		if c.slot[i] > n-k && c.slot[i] <= n {
			sum += c.count[i]
		}
	}
	return sum, min(now.Sub(time.Unix(0, (n-k+1)*int64(servedSlot))), now.Sub(c.first))
}

// rate is the rate of successes over the last window (at most len(count) slots), over a second at least:
// a tenant's burst allowance answers a few requests at once, which over the few milliseconds they took
// would read as a rate of hundreds a second. 0 when fewer than two.
func (c *servedCounter) rate(now time.Time, window time.Duration) float64 {
	sum, span := c.within(now, window)
	if sum < 2 {
		return 0
	}
	return float64(sum) / max(span.Seconds(), 1)
}

// LearntRate returns the rate (requests per second) learnt from the tenant's 429s, 0 when none was.
func (p *Pacer) LearntRate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.learnt
}

// observe records a latency and returns the best seen in the last 15 to 30 seconds (two half windows).
func (p *Pacer) observe(now time.Time, lat time.Duration) time.Duration {
	if age := now.Sub(p.winStart); age >= minLatencyWindow/2 {
		p.prevMin = p.curMin
		if age >= minLatencyWindow {
			p.prevMin = 0
		}
		p.curMin, p.winStart = 0, now
	}
	if p.curMin == 0 || lat < p.curMin {
		p.curMin = lat
	}
	if p.prevMin > 0 && p.prevMin < p.curMin {
		return p.prevMin
	}
	return p.curMin
}

// Limit returns the current concurrency limit (for metrics and tests).
func (p *Pacer) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.limit) // never below min: every change is clamped
}

// InFlight returns the requests in flight (for metrics and tests).
func (p *Pacer) InFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inFlight
}

// TryAdmit admits one unit of work (a reconcile) when fewer than 2*Limit()+1 are active and no
// Retry-After pause is in force. A worker that starts more work on a tenant than its limit can serve
// only waits in Acquire, while work for other tenants waits behind it; on false the caller requeues the
// work for later and the worker goes to another tenant. The slack of 2*Limit()+1 keeps the tenant's
// window full while some of its reconciles think rather than call.
func (p *Pacer) TryAdmit() bool { return p.tryAdmit(false) }

// Leave undoes one successful TryAdmit.
func (p *Pacer) Leave() { p.leave(false) }

// TryAdmitBackground admits one unit of background work (a drift check) as TryAdmit does, and only while
// fewer background units are active than the background share of the limit allows (at least one): drift
// checks never hold more workers than their budget can serve. Undo it with LeaveBackground.
func (p *Pacer) TryAdmitBackground() bool { return p.tryAdmit(true) }

// LeaveBackground undoes one successful TryAdmitBackground.
func (p *Pacer) LeaveBackground() { p.leave(true) }

func (p *Pacer) tryAdmit(background bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if background && p.bgActive >= p.backgroundSlots() {
		return false
	}
	if p.active >= 2*int(p.limit)+1 || p.now().Before(p.pauseUntil) {
		return false
	}
	p.active++
	if background {
		p.bgActive++
	}
	return true
}

func (p *Pacer) leave(background bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if background && p.bgActive > 0 {
		p.bgActive--
	}
	if p.active > 0 {
		p.active--
	}
}

type backgroundKey struct{}

// progressKey is the context key of a write counter (WithProgress).
type progressKey struct{}

// WithProgress returns a context whose calls count the writes 3scale accepted (2xx answers to anything
// but GET), and that counter: a sync that failed after some of its writes were accepted got somewhere.
func WithProgress(ctx context.Context) (context.Context, *atomic.Int64) {
	n := &atomic.Int64{}
	return context.WithValue(ctx, progressKey{}, n), n
}

// noteProgress counts an accepted write in ctx's counter, if it has one.
func noteProgress(ctx context.Context) {
	if n, ok := ctx.Value(progressKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// WithBackground marks the requests made with ctx as background work (drift checks): the pacer serves
// them within its background share of the tenant's budget (PacerConfig.BackgroundShare).
func WithBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx was marked by WithBackground.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
