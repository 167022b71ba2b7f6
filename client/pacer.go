package client

import (
	"context"
	"math"
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
	// per round trip, and a SaaS tenant's limit is a rate. nil until the first 429, then 90% of the rate
	// served, a first guess that grows by 25% a second until a 429 meets the paced rate. That 429 comes
	// late, once the tenant's burst allowance is spent, so the rate it refuses (refused) is estimated
	// from the rate before it and the rate served (learnRate), and the learnt rate goes to 90% of it
	// (once per second at most). Successes then raise it by 5% a second (at least one request/s per
	// second) up to 97% of refused, and past that ten times slower: it settles just under the tenant's
	// limit and probes it rarely, instead of meeting a 429 (and its Retry-After pause of the whole
	// tenant, at least a second) every few seconds. A probe 10% past refused that met no 429 for
	// rateRetryAfter finds a limit raised since (or refused too low): growth is fast again.
	learnt  *rate.Limiter
	refused float64
	rateCut time.Time
	// rateCutSeq is seq when the learnt rate was last cut: a 429 to a request sent before then (already
	// on its way when the cut and the pause came) says nothing of the new rate.
	rateCutSeq uint64
	history    [8]rateSample // the learnt rate at least rateSampleEvery apart, a ring
	sampled    int
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
		learnt, err := p.takeTokens(ctx, bg)
		if err != nil {
			return nil, err
		}
		seq, err := p.takeSlot(ctx, bg, learnt)
		if err != nil {
			return nil, err
		}
		if seq != 0 {
			var once sync.Once
			return func(o Outcome) { once.Do(func() { p.release(seq, bg, o) }) }, nil
		}
		// A Retry-After pause began, or a rate was learnt, while this request waited for its slot: the
		// tokens it holds are from before. Sent the moment the pause ends, all such requests would be a
		// burst the tenant answers with the next 429: take tokens again, after the pause.
	}
}

// takeTokens waits out any Retry-After pause, then takes the request's tokens: of the background share
// (bg), of the QPS cap and of the learnt rate, which it returns (nil while none is learnt).
func (p *Pacer) takeTokens(ctx context.Context, bg bool) (*rate.Limiter, error) {
	// A Retry-After pause is waited out before any token is taken: tokens taken during the pause would
	// all be spent the moment it ends, a burst the tenant answers with the next 429s and the next pause.
	if err := p.waitPause(ctx); err != nil {
		return nil, err
	}
	if bg {
		if err := p.waitBackgroundRate(ctx); err != nil {
			return nil, err
		}
	}
	if p.limiter != nil {
		if err := p.limiter.Wait(ctx); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	learnt := p.learnt
	p.mu.Unlock()
	if learnt != nil {
		if err := p.waitLearnt(ctx, learnt); err != nil {
			return nil, err
		}
	}
	return learnt, nil
}

// takeSlot waits for a slot under the concurrency limit and takes it, returning the request's number.
// It gives up (0) when a Retry-After pause is in force or the learnt rate is no longer the one its tokens
// are from (learnt); it returns ctx.Err() if ctx ends first.
func (p *Pacer) takeSlot(ctx context.Context, bg bool, learnt *rate.Limiter) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if p.pauseUntil.After(p.now()) || p.learnt != learnt {
			return 0, nil
		}
		if float64(p.inFlight) < math.Floor(p.limit) && (!bg || p.bgInFlight < p.backgroundSlots()) {
			p.inFlight++
			if bg {
				p.bgInFlight++
			}
			p.seq++
			return p.seq, nil
		}
		wake := p.wake
		p.waiting++
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-wake:
		}
		p.mu.Lock()
		p.waiting--
	}
}

// queued returns the requests waiting for a slot (for tests).
func (p *Pacer) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// waitLearnt takes a token of the learnt rate, on the pacer's clock, waiting for it if need be; a wait
// is recorded in rateBound. It gives up at once, taking nothing, when ctx would end before the token.
func (p *Pacer) waitLearnt(ctx context.Context, learnt *rate.Limiter) error {
	now := p.now()
	r := learnt.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(now) < delay {
		r.CancelAt(now)
		return context.DeadlineExceeded
	}
	p.mu.Lock()
	p.rateBound = now // this request waits for the learnt rate: it is what paces the tenant now
	p.mu.Unlock()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		r.CancelAt(p.now())
		return ctx.Err()
	case <-timer.C:
		return nil
	}
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
	if p.learnt != nil {
		known = math.Min(known, float64(p.learnt.Limit()))
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

// release frees the slot of request seq (a background one if bg) and adapts the limit to its outcome.
func (p *Pacer) release(seq uint64, bg bool, o Outcome) {
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
	if until := now.Add(o.RetryAfter); o.RetryAfter > 0 && until.After(p.pauseUntil) {
		p.pauseUntil = until
	}
	if o.Code == 429 {
		p.learnRate(now, seq)
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
		if p.learnt != nil && now.Sub(p.rateBound) <= rateBoundWindow {
			// Only a rate that paces requests learns from their success: one that paces nothing would
			// drift up unchecked, and come down only through many 429s.
			r := float64(p.learnt.Limit())
			// Each success adds step/r of the rate, at r successes a second: step of it a second.
			step := max(1/r, 0.05) // 5 % a second, at least one request/s per second
			switch {
			case p.refused == 0:
				step = 0.25 // no paced rate refused yet: the first guess may be far too low, grow by 25 % a second
			case r >= rateRetryShare*p.refused && now.Sub(p.rateCut) >= rateRetryAfter:
				// Well past the rate refused, and no 429 for long (the tenant's burst allowance hides an
				// excess for a while): the limit is higher now; grow fast again.
				p.refused = 1.5 * r
			case r >= rateProbeShare*p.refused:
				step /= 10 // near the rate the tenant refused: probe slowly
			}
			p.learnt.SetLimitAt(now, rate.Limit(r+step))
			p.sample(now, r+step)
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
	rateRetryShare = 1.1
	rateRetryAfter = 30 * time.Second
)

// rateSample is the learnt rate at a time.
type rateSample struct {
	at time.Time
	r  float64
}

// learntBurst is the burst of the learnt rate: one, for the tenant's own burst allowance is unknown and
// may be one (a token bucket of one refuses any two requests closer than 1/rate), and each 429 pauses
// the whole tenant for its Retry-After, at least a second: spacing requests evenly at the learnt rate
// costs nothing, and a burst of two against such a tenant met a 429 at every Retry-After's end.
const learntBurst = 1

// lightCut is the factor a 503 without Retry-After or a dropped connection cuts the limit by.
const lightCut = 0.9

// rateLookback is how long before a 429 the rate it refuses is taken from.
const rateLookback = 1500 * time.Millisecond

// rateSampleEvery is how far apart the samples of the learnt rate are kept.
const rateSampleEvery = 250 * time.Millisecond

// sample records the learnt rate r at now, unless the last sample is more recent than rateSampleEvery.
// Called with p.mu held.
func (p *Pacer) sample(now time.Time, r float64) {
	if p.sampled > 0 && now.Sub(p.history[(p.sampled-1)%len(p.history)].at) < rateSampleEvery {
		return
	}
	p.history[p.sampled%len(p.history)] = rateSample{at: now, r: r}
	p.sampled++
}

// rateAgo returns the learnt rate as it was d before now: the newest sample at least that old, or the
// oldest kept; r when there is none. Called with p.mu held.
func (p *Pacer) rateAgo(now time.Time, d time.Duration, r float64) float64 {
	n := min(p.sampled, len(p.history))
	best, oldest := time.Time{}, time.Time{}
	out, fallback := r, r
	for i := range n {
		s := p.history[i]
		if !s.at.After(now.Add(-d)) && s.at.After(best) {
			best, out = s.at, s.r
		}
		if oldest.IsZero() || s.at.Before(oldest) {
			oldest, fallback = s.at, s.r
		}
	}
	if best.IsZero() {
		return fallback
	}
	return out
}

// learnRate sets the learnt rate after a 429 to request seq: the first time to 90% of the rate the tenant
// served in the last two seconds, later to 90% of the rate refused; at least one request per second. At
// most one cut a second, and only by a request sent after the last cut: the 429s of one burst are one
// signal.
func (p *Pacer) learnRate(now time.Time, seq uint64) {
	if now.Sub(p.rateCut) < time.Second || seq <= p.rateCutSeq {
		return
	}
	if p.learnt == nil {
		p.rateCut = now
		// What was served is only a first guess (a lower bound, the rate of the burst that met the 429
		// unknown): the learnt rate grows fast from it until the next 429 says where the limit is.
		r := math.Max(0.9*p.served.rate(now, 2*time.Second), 1)
		p.learnt = rate.NewLimiter(rate.Limit(r), learntBurst)
		p.sample(now, r)
		return
	}
	// Later cuts start from the learnt rate, not from what was served: what was served is less than the
	// tenant allows whenever work waited (on dependencies, on Retry-After pauses), and cutting from it
	// would compound down to nothing on a tenant that answers 429 now and then.
	if now.Sub(p.rateBound) > rateBoundWindow {
		return
	}
	// The tenant's burst allowance hides an excess for a while, so a 429 comes late: a rate that grows
	// (25% a second at first) is refused well past the limit. The rate refused is taken as the lower of
	// the rate now and the higher of the rate rateLookback ago and the rate served over the last two
	// seconds (all that was sent went through until the allowance ran out). What was served is never a
	// bound on its own: it is less than the tenant allows whenever work waited (on dependencies, on
	// Retry-After pauses), and a tenant answering 429 at random would cut the rate down to nothing.
	cur := float64(p.learnt.Limit())
	p.refused = math.Min(cur, math.Max(p.rateAgo(now, rateLookback, cur), p.served.rate(now, 2*time.Second)))
	p.rateCut, p.rateCutSeq = now, p.seq
	r := math.Max(0.9*p.refused, 1)
	p.learnt.SetLimitAt(now, rate.Limit(r))
	p.sample(now, r)
}

// servedCounter counts successes in slots of servedSlot, the last len(count) slots.
type servedCounter struct {
	slot  [16]int64 // the slot number (time / servedSlot) of each count
	count [16]int
	first time.Time // the first success counted
}

const servedSlot = 250 * time.Millisecond

func (c *servedCounter) add(now time.Time) {
	n := now.UnixNano() / int64(servedSlot)
	i := n % int64(len(c.count))
	if c.slot[i] != n {
		c.slot[i], c.count[i] = n, 0
	}
	c.count[i]++
	if c.first.IsZero() {
		c.first = now
	}
}

// rate is the rate of successes over the last window (at most len(count) slots), over a second at least:
// a tenant's burst allowance answers a few requests at once, which over the few milliseconds they took
// would read as a rate of hundreds a second. 0 when fewer than two.
func (c *servedCounter) rate(now time.Time, window time.Duration) float64 {
	n := now.UnixNano() / int64(servedSlot)
	k := min(int64(window/servedSlot), int64(len(c.count)))
	sum := 0
	for i := range c.count {
		if c.slot[i] > n-k && c.slot[i] <= n {
			sum += c.count[i]
		}
	}
	if sum < 2 {
		return 0
	}
	// The time the counted slots cover: from the start of the oldest to now, or from the first success.
	span := min(now.Sub(time.Unix(0, (n-k+1)*int64(servedSlot))), now.Sub(c.first))
	return float64(sum) / max(span.Seconds(), 1)
}

// LearntRate returns the rate (requests per second) learnt from the tenant's 429s, 0 when none was.
func (p *Pacer) LearntRate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.learnt == nil {
		return 0
	}
	return float64(p.learnt.Limit())
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
