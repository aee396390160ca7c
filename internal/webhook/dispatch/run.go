package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/webhook"
)

// newEndpointRefresh is how often at most a fan-out that meets an
// endpoint it has no worker for reads the endpoints again (one whose
// secret cannot be opened stays unknown).
const newEndpointRefresh = 100 * time.Millisecond

// Run fans events out and keeps one worker per enabled endpoint until ctx
// ends, then waits for the workers' attempts under way to be recorded.
func (d *Dispatcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	workers := map[uuid.UUID]*worker{}
	defer func() {
		for _, w := range workers {
			w.stop()
		}
		wg.Wait()
		d.late.Wait()
	}()
	var refreshed time.Time
	refresh := func() {
		refreshed = time.Now()
		list, err := d.endpoints.Active(ctx)
		switch {
		case errors.Is(err, webhook.ErrUnseal):
			// The others are listed: they go on; the one left out waits
			// for its secret to open (AUTH_SECRET as it was when it was
			// sealed), its deliveries pending.
			d.log.Error("webhooks: an endpoint's secret cannot be opened; it gets nothing until it can", "err", err)
		case err != nil:
			if ctx.Err() == nil {
				d.log.Warn("webhooks: cannot read the endpoints", "err", err)
			}
			return
		}
		seen := make(map[uuid.UUID]bool, len(list))
		for _, ep := range list {
			seen[ep.ID] = true
			if w, ok := workers[ep.ID]; ok {
				w.endpoint.Store(&ep)
				continue
			}
			w := d.newWorker(ctx, ep)
			workers[ep.ID] = w
			wg.Go(w.run)
		}
		for id, w := range workers {
			if !seen[id] {
				w.stop()
				delete(workers, id)
			}
		}
	}
	refresh()
	fanOut := time.NewTicker(d.cfg.FanOutEvery)
	defer fanOut.Stop()
	reread := time.NewTicker(d.cfg.EndpointsEvery)
	defer reread.Stop()
	var last time.Time
	full := false // the last fan-out took a full batch: more may be waiting
	for {
		// With no endpoint the events still have to be marked
		// dispatched (nobody wants them), but not at a pace anyone
		// waits on: once a second, and then while batches are full.
		if full || len(workers) > 0 || time.Since(last) >= d.cfg.EndpointsEvery {
			full = d.fanOut(ctx, workers, func() {
				// An endpoint the fan-out has no worker for is new (or
				// another instance saw it enabled first): read the
				// endpoints now, not at the next tick, so that its first
				// events are sent at once and not left to a worker.
				if time.Since(refreshed) >= newEndpointRefresh {
					refresh()
				}
			})
			last = time.Now()
		}
		if full {
			// More are waiting: the next fan-out goes at once, but the
			// endpoints are still read on their clock (an endpoint made
			// during a busy minute would otherwise have no worker here,
			// and all its deliveries would wait for another instance's).
			select {
			case <-ctx.Done():
				return nil
			case <-reread.C:
				refresh()
			default:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-fanOut.C:
		case <-reread.C:
			refresh()
		}
	}
}
