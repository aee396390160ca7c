package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// plan says where request i goes. Seats take turns so each gets an even
// share; the k-th request for a seat goes to target (seat+k) mod targets, so
// consecutive requests rotate through the targets and every seat is contended
// through every target.
func plan(i int, seats []int, targets int) (seat, target int) {
	s := i % len(seats)
	k := i / len(seats)
	return seats[s], (s + k) % targets
}

// fire sends cfg.N reservation requests from cfg.C workers that all start
// together, and returns every request's outcome and the wall time. A
// cancelled ctx stops the workers; requests they never sent stay unsent.
func fire(ctx context.Context, hc *http.Client, cfg config, scheduleID int64, users, tokens []string) ([]outcome, time.Duration) {
	outcomes := make([]outcome, cfg.N)
	for i := range outcomes {
		outcomes[i].Seat, _ = plan(i, cfg.Seats, len(cfg.Targets))
	}

	var next atomic.Int64
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for range cfg.C {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= cfg.N {
					return
				}
				seat, t := plan(i, cfg.Seats, len(cfg.Targets))
				outcomes[i] = reserve(ctx, hc, cfg.Timeout, cfg.Targets[t], tokens[i], users[i], scheduleID, seat)
			}
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	done.Wait()
	return outcomes, time.Since(began)
}
