package client

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// BenchmarkPacerAgainstATenantRateLimit paces 150 requests of 16 concurrent workers against a tenant
// that allows 10 requests a second (a token bucket of burst 1, then of burst 10), 30ms away, answering
// 429 with Retry-After (whole seconds to the next token, at least one) beyond it, as the simulator's
// --tenant-rate-limit does. It reports the time against the tenant's bound (requests ÷ rate), mean and
// worst run, and the 429s a run.
func BenchmarkPacerAgainstATenantRateLimit(b *testing.B) {
	for _, burst := range []int{1, 10} {
		b.Run("burst"+string(rune('0'+burst/10))+string(rune('0'+burst%10)), func(b *testing.B) {
			// The worst run is reported with the mean: the bound holds in every run or not at all.
			var sum, worst float64
			var refusals int
			for range b.N {
				elapsed, refused := paceAgainstBucket(b, 10, burst, 150, 16, 30*time.Millisecond)
				ratio := elapsed.Seconds() / (150.0 / 10)
				sum, worst, refusals = sum+ratio, max(worst, ratio), refusals+refused
			}
			b.ReportMetric(sum/float64(b.N), "×bound")
			b.ReportMetric(worst, "worst×bound")
			b.ReportMetric(float64(refusals)/float64(b.N), "429s")
		})
	}
}

func paceAgainstBucket(tb testing.TB, limit float64, burst, requests, workers int, latency time.Duration) (time.Duration, int) {
	p := NewPacer(PacerConfig{})
	bucket := rate.NewLimiter(rate.Limit(limit), burst)
	var mu sync.Mutex
	var left atomic.Int64
	left.Store(int64(requests))
	var refused atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	done := make(chan struct{})
	defer close(done)
	if testing.Verbose() {
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(time.Second):
					tb.Logf("%6.2fs learnt %.2f refused %.2f left %d", time.Since(start).Seconds(), p.LearntRate(), p.refused, left.Load())
				}
			}
		}()
	}
	// send sends one request; it reports whether the tenant answered it (not a 429).
	send := func() bool {
		release, err := p.Acquire(context.Background())
		if err != nil {
			tb.Error(err)
			return true
		}
		time.Sleep(latency / 2)
		mu.Lock()
		now := time.Now()
		ok := bucket.AllowN(now, 1)
		var ra time.Duration
		if !ok {
			r := bucket.ReserveN(now, 1)
			ra = time.Duration(max(math.Ceil(r.DelayFrom(now).Seconds()), 1)) * time.Second
			r.CancelAt(now)
		}
		mu.Unlock()
		time.Sleep(latency / 2)
		if ok {
			left.Add(-1)
			release(Outcome{Code: 200, Latency: latency})
			return true
		}
		refused.Add(1)
		if testing.Verbose() {
			tb.Logf("%6.2fs 429 learnt %.2f refused %.2f limit %d", time.Since(start).Seconds(), p.LearntRate(), p.refused, p.Limit())
		}
		release(Outcome{Code: 429, Latency: latency, RetryAfter: ra})
		return false
	}
	// Each worker takes one of the requests and sends it until it is answered, as a sync retries its
	// call: the run ends with the last request answered. (It used to end when every worker had seen
	// none left, after up to one more request per worker: 16 more than asked, 1.6 s at 10/s.)
	var claimed atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for claimed.Add(1) <= int64(requests) {
				for !send() {
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), int(refused.Load())
}
