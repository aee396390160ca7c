package app

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/periodic"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// relayJobName names the relay's lock among the job locks (the same key
// scheme and namespace as the periodic jobs).
const relayJobName = "relay-seat-changes"

// openRelay builds the relay of the seat_changes outbox to the live seat
// map's streams (run by Serve with the jobs: one relay at a time across the
// instances, under a lock of its own), registers its metrics, and returns
// what keeps the outbox under SEAT_CHANGES_MAX_BACKLOG. Without a feed (no
// REDIS_URL) there is no live seat map and nothing to relay to: the
// changes are discarded by the same job instead.
//
// The relay reads and deletes through a pool of its own (2 connections): a
// relay held up by a slow PostgreSQL never takes a connection a request
// needs. Its connections plan by index whatever the outbox's statistics
// say (postgres.WithIndexPlans).
//
// The relay's lock is taken through a lock client of its own on the same
// store, without the lock metrics: a standing-by instance asks for it
// every second, which is no seat lock's contention.
func (a *App) openRelay(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, locks backend.Backend, feed *seatfeed.Feed,
	registry prometheus.Registerer, logger *slog.Logger, namespace string) (outboxBound, error) {
	outbox := postgres.NewSeatChanges(pool)
	metrics, err := seatfeed.NewRelayMetrics(registry, outbox, logger)
	if err != nil {
		return nil, err
	}
	if feed == nil {
		return discardOutbox{outbox}, nil
	}
	relayPool, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.WithMaxConns(relayConns), postgres.WithIndexPlans())
	if err != nil {
		return nil, err
	}
	a.closeLast(relayPool.Close)
	locker := lock.New(locks, lock.Config{MaxWait: seatfeed.DefaultRelayStandby, Logger: logger})
	a.closeFirst(locker.Close)
	a.relay = seatfeed.NewRelay(locker, postgres.NewSeatChanges(relayPool), feed, seatfeed.RelayConfig{
		Key:        periodic.Key(namespace + relayJobName),
		Interval:   cfg.SeatRelayInterval,
		MaxBacklog: cfg.SeatChangesMaxBacklog,
		Logger:     logger,
		Metrics:    metrics,
	})
	return a.relay, nil
}

// relayConns is the size of the relay's own pool: one reads and deletes,
// one spare for a connection being replaced.
const relayConns = 2

// runRelay runs the relay until ctx ends; the channel is closed when it
// has stopped (at once when there is none, or no jobs on this instance).
func (a *App) runRelay(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if a.relay == nil || a.noJobs {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		a.relay.Run(ctx)
	}()
	return done
}

// discardOutbox empties the outbox where no live seat map exists.
type discardOutbox struct{ outbox *postgres.SeatChanges }

func (d discardOutbox) EnforceBound(ctx context.Context) (int64, error) { return d.outbox.Trim(ctx, 0) }
