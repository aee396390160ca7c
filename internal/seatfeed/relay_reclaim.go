package seatfeed

import (
	"context"
	"log/slog"
)

// DefaultRelayReclaimEvery is how many deleted changes make the relay
// reclaim the outbox's space (RelayConfig.ReclaimEvery).
const DefaultRelayReclaimEvery = 10_000

// Reclaimer is an Outbox that can give back the space of the changes
// deleted from it (postgres.SeatChanges vacuums its table). A relay on an
// outbox without it only deletes.
type Reclaimer interface {
	Reclaim(ctx context.Context) error
}

// reclaimAfter counts n deleted changes and, once ReclaimEvery have been
// deleted since the last time, reclaims the outbox's space. A failed
// reclaim is logged and tried again ReclaimEvery deletions later: the
// changes are relayed either way, and autovacuum reclaims the space too,
// only later.
func (r *Relay) reclaimAfter(ctx context.Context, n int) {
	reclaimer, ok := r.outbox.(Reclaimer)
	if !ok {
		return
	}
	r.deletedSinceReclaim += n
	if r.deletedSinceReclaim < r.cfg.ReclaimEvery {
		return
	}
	r.deletedSinceReclaim = 0
	if err := reclaimer.Reclaim(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("seat relay: reclaiming the outbox's space failed; autovacuum reclaims it later",
			slog.Any("error", err))
	}
}
