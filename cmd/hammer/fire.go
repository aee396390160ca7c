package main

import (
	"context"
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

// fired is the timed phase's result.
type fired struct {
	outcomes []outcome
	latency  *hdrhistogram.Histogram // every answered or failed request
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
		next, done   atomic.Int64
		ready, ended sync.WaitGroup
		mu           sync.Mutex // guards res when workers hand in their share
		res          = fired{latency: newLatencyHistogram()}
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	start := make(chan struct{})
	var began time.Time
	for range cfg.C {
		ready.Add(1)
		ended.Add(1)
		go func() {
			defer ended.Done()
			hist := newLatencyHistogram()
			var mine []outcome // duration mode
			defer func() {
				mu.Lock()
				res.latency.Merge(hist)
				if cfg.N == 0 {
					outcomes = append(outcomes, mine...)
				}
				mu.Unlock()
			}()
			// Each worker opens its connections before the clock starts,
			// so the timed phase measures requests, not TCP handshakes.
			for _, target := range cfg.Targets {
				_, _, _, _ = a.send(ctx, http.MethodGet, target+"/readyz", "", nil)
			}
			ready.Done()
			<-start
			for runCtx.Err() == nil {
				i := int(next.Add(1) - 1)
				if cfg.N > 0 && i >= cfg.N || cfg.Duration > 0 && time.Since(began) >= cfg.Duration {
					return
				}
				seat, err := w.seat(runCtx, i)
				if err != nil {
					mu.Lock()
					if res.err == nil && ctx.Err() == nil {
						res.err = err
					}
					mu.Unlock()
					stop()
					return
				}
				o := a.reserve(ctx, cfg.Targets[w.target(i, len(cfg.Targets))], users[userOf(i, len(users))], seat)
				_ = hist.RecordValue(max(o.Latency.Microseconds(), minLatencyMicros))
				if cfg.N > 0 {
					outcomes[i] = o
				} else {
					mine = append(mine, o)
				}
				done.Add(1)
			}
		}()
	}
	ready.Wait()
	began = time.Now()
	close(start)
	if onTick != nil {
		stopTicks, ticksDone := make(chan struct{}), make(chan struct{})
		defer func() { close(stopTicks); <-ticksDone }()
		go func() {
			defer close(ticksDone)
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopTicks:
					return
				case <-t.C:
					onTick(done.Load(), time.Since(began))
				}
			}
		}()
	}
	ended.Wait()
	res.wall = time.Since(began)
	res.outcomes = outcomes
	return res
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
