package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to 10 minutes, to three
// significant digits.
const (
	minLatencyMicros = 1
	maxLatencyMicros = int64(10 * time.Minute / time.Microsecond)
	latencyDigits    = 3
)

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minLatencyMicros, maxLatencyMicros, latencyDigits)
}

// recordLatency adds d to h, in microseconds (at least the histogram's
// least value).
func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(max(d.Microseconds(), minLatencyMicros))
}

// fired is the timed phase's result.
type fired struct {
	outcomes []outcome
	latency  *hdrhistogram.Histogram // every answered or failed request
	began    time.Time               // when the workers started together
	wall     time.Duration
	err      error // the workload could not hand out a seat (fresh-seats)
}

// tick reports progress: requests done so far and the time since the start.
type tick func(done int64, elapsed time.Duration)

// fire sends the run's requests from cfg.C workers that all start together:
// cfg.N of them, or as many as fit in cfg.Duration (requests in flight at
// the end finish). A cancelled ctx stops the workers; with -n, requests
// they never sent stay in the outcomes as not sent. onTick, if not nil, is
// called every 200 ms.
func fire(ctx context.Context, a *api, cfg config, w *workload, users []user, onTick tick) fired {
	var outcomes []outcome
	if cfg.N > 0 {
		outcomes = make([]outcome, cfg.N)
	}
	var (
		mu  sync.Mutex // guards res when workers hand in their share
		res = fired{latency: newLatencyHistogram()}
	)
	res.began, res.wall = drive(ctx, a, cfg.Targets, cfg.C, onTick, func() (stepFunc, func()) {
		hist := newLatencyHistogram()
		var mine []outcome // duration mode
		step := func(runCtx context.Context, i int, elapsed time.Duration) bool {
			stepStart := time.Now()
			if cfg.N > 0 && i >= cfg.N || cfg.Duration > 0 && elapsed >= cfg.Duration {
				return false
			}
			seat, err := w.seat(runCtx, i)
			if err != nil {
				// A schedule still being made when the phase ended (another
				// worker sent the last request, or the duration passed) was
				// cancelled by that end: no request failed.
				if runCtx.Err() != nil {
					return false
				}
				mu.Lock()
				if res.err == nil {
					res.err = err
				}
				mu.Unlock()
				return false
			}
			u := userOf(i, len(users))
			o := a.reserve(ctx, cfg.Targets[w.target(i, len(cfg.Targets))], users[u], seat)
			o.User = u
			recordLatency(hist, o.Latency)
			if cfg.N > 0 {
				outcomes[i] = o
			} else {
				mine = append(mine, o)
			}
			if cfg.AllowUnavailable && o.key() == keyUnavailable {
				pause := unavailablePause(o.RetryAfter)
				if cfg.Duration > 0 { // not past the run's end
					pause = min(pause, cfg.Duration-elapsed-time.Since(stepStart))
				}
				sleepUntil(runCtx, time.Now().Add(pause))
			}
			return true
		}
		finish := func() {
			mu.Lock()
			defer mu.Unlock()
			res.latency.Merge(hist)
			if cfg.N == 0 {
				outcomes = append(outcomes, mine...)
			}
		}
		return step, finish
	})
	res.outcomes = outcomes
	return res
}

// maxUnavailablePause bounds a worker's pause after a 503 unavailable
// (-allow-unavailable): Retry-After asks for seconds (2 s from the
// service), but the first booking after the database is back is what
// longestGapMs measures, and 64 workers pausing this long each ask some
// 128 times a second in all.
const maxUnavailablePause = 500 * time.Millisecond

// unavailablePause is how long a worker waits after a 503 unavailable
// whose Retry-After was retryAfter (0: none): as it says, at most
// maxUnavailablePause, drawn at random below that (full jitter): workers
// refused together would otherwise ask again together, every time, and
// the first of them to book after the outage could come up to a whole
// pause late.
func unavailablePause(retryAfter time.Duration) time.Duration {
	limit := maxUnavailablePause
	if retryAfter > 0 {
		limit = min(retryAfter, limit)
	}
	return rand.N(limit) + 1
}

// stepFunc makes request number i of a timed phase, elapsed after its start,
// and reports whether the phase goes on: false stops every worker (the
// requests they have in flight finish). runCtx ends when the phase is
// stopped or ctx is cancelled.
type stepFunc func(runCtx context.Context, i int, elapsed time.Duration) bool

// drive is the machinery of a timed phase: c workers, one connection each,
// each made by newWorker (its step and the finish it runs when it ends),
// open their connections to every target before the clock starts, then
// start together and take request numbers 0, 1, 2, ... in turn until a
// step says stop or ctx is cancelled. onTick, if not nil, is called every
// 200 ms with the steps done. drive returns when the phase began (the
// workers started together) and its wall time.
func drive(ctx context.Context, a *api, targets []string, c int, onTick tick, newWorker func() (stepFunc, func())) (time.Time, time.Duration) {
	var (
		next, done   atomic.Int64
		ready, ended sync.WaitGroup
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	start := make(chan struct{})
	var began time.Time
	for range c {
		ready.Add(1)
		ended.Add(1)
		step, finish := newWorker()
		go func() {
			defer ended.Done()
			defer finish()
			// Each worker opens its connections before the clock starts,
			// so the timed phase measures requests, not TCP handshakes.
			for _, target := range targets {
				_, _ = a.do(ctx, request{method: http.MethodGet, url: target + "/readyz"})
			}
			ready.Done()
			<-start
			for runCtx.Err() == nil {
				i := int(next.Add(1) - 1)
				if !step(runCtx, i, time.Since(began)) {
					stop()
					return
				}
				done.Add(1)
			}
		}()
	}
	ready.Wait()
	began = time.Now()
	close(start)
	defer tickWhile(onTick, began, &done)()
	ended.Wait()
	return began, time.Since(began)
}

// tickWhile calls onTick with the count of done every 200 ms from start
// until stop; nothing when onTick is nil.
func tickWhile(onTick tick, start time.Time, done *atomic.Int64) (stop func()) {
	if onTick == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				onTick(done.Load(), time.Since(start))
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// userOf is the user who sends request i: every user in turn, and on each
// pass through the users one further on, so that a user does not ask the
// same seat again when the number of users is a multiple of the seats
// raced for (2,000 users on 200 contended seats would otherwise send each
// user back to its own seat: half of a seat's contenders would be its
// winner asking again).
func userOf(i, users int) int {
	return (i + i/users) % users
}
