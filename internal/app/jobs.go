package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/periodic"
	"github.com/seatlock/seatlock/internal/postgres"
)

// fenceRetention is how long after a show starts its seat fences are kept.
// A fence only matters while a paused lock holder might still try to write,
// which is seconds; a day is generous.
const fenceRetention = 24 * time.Hour

// lockRowRetention is how long a row of the PostgreSQL lock table is kept
// once its lock is free. Deleting it only restarts the name's
// fence from the database clock, so the bound is generous, not critical.
const lockRowRetention = 24 * time.Hour

// holdRetention is how long a hold that ended unconfirmed (expired or
// released) stays readable with GET /holds/{id}.
const holdRetention = 24 * time.Hour

// announceBatch is how many expired holds one transaction of the
// announce-expired-holds job announces.
const announceBatch = 500

// announceExpiredHolds announces every hold that expired unannounced,
// announceBatch at a time, and returns how many.
func announceExpiredHolds(ctx context.Context, store *postgres.Store) (int64, error) {
	var total int64
	for {
		n, err := store.AnnounceExpiredHolds(ctx, announceBatch)
		total += int64(n)
		if err != nil || n < announceBatch {
			return total, err
		}
	}
}

// lockPruner is a lock store that can delete its long-free locks.
type lockPruner interface {
	Prune(ctx context.Context, freeFor time.Duration) (int64, error)
}

// holdExpirer clears expired holds' claims and announces their seats.
type holdExpirer interface {
	ExpireHolds(ctx context.Context) (int, error)
}

// outboxBound keeps the seat_changes outbox under its bound
// (seatfeed.Relay.EnforceBound), returning how many changes it dropped.
type outboxBound interface {
	EnforceBound(ctx context.Context) (int64, error)
}

// webhookRetention deletes the delivery log's finished deliveries, and
// the events no pending delivery needs, once older than keep.
type webhookRetention struct {
	log interface {
		PurgeWebhooks(ctx context.Context, before time.Time, limit int) (int64, error)
	}
	keep time.Duration
}

// webhookPurgeBatch is how many rows of each kind one statement deletes:
// a long backlog is deleted in short transactions.
const webhookPurgeBatch = 10_000

func (r *webhookRetention) purge(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := r.log.PurgeWebhooks(ctx, time.Now().Add(-r.keep), webhookPurgeBatch)
		total += n
		if err != nil || n < webhookPurgeBatch {
			return total, err
		}
	}
}

// job is one periodic clean-up: how often it runs, how long its lock is
// held at most and at least, and what it does, returning how many things
// it changed (named by changed in the log).
type job struct {
	name                   string
	every, atMost, atLeast time.Duration
	changed                string
	run                    func(ctx context.Context) (int64, error)
}

// newJobs returns the service's periodic jobs. Every instance runs the
// Runner; each job executes on one instance per period (ShedLock-style).
// pruner is nil when the lock store keeps nothing to prune (Redis expires
// its keys by itself); expirer is nil when holds are off; bound is nil in
// tests that do not need it.
//
// One logging rule for all of them: a run that changed something logs the
// count at info; a failed run is logged by the Runner.
func newJobs(locker lock.Locker, store *postgres.Store, keys idempotency.Store, expirer holdExpirer, pruner lockPruner,
	bound outboxBound, webhooks *webhookRetention, logger *slog.Logger, namespace string) (*periodic.Runner, error) {
	table := []job{
		{"prune-seat-fences", time.Hour, 10 * time.Minute, time.Minute, "seat fences",
			func(ctx context.Context) (int64, error) {
				return store.PruneSeatFences(ctx, time.Now().Add(-fenceRetention))
			}},
		// Holds that ended unconfirmed, after holdRetention.
		{"purge-holds", time.Hour, 10 * time.Minute, time.Minute, "holds",
			func(ctx context.Context) (int64, error) { return store.PurgeHolds(ctx, time.Now().Add(-holdRetention)) }},
		// Every second, so that a hold.expired event follows the
		// expiry within about a second; SKIP LOCKED would let every
		// instance run it, one at a time is enough.
		{"announce-expired-holds", time.Second, 30 * time.Second, 0, "expired holds announced",
			func(ctx context.Context) (int64, error) { return announceExpiredHolds(ctx, store) }},
		// Idempotency keys older than their 24 hours.
		{"purge-idempotency-keys", 10 * time.Minute, 5 * time.Minute, time.Minute, "idempotency keys",
			func(ctx context.Context) (int64, error) { return keys.Purge(ctx) }},
	}
	if expirer != nil {
		// Every second, so that the live seat map shows an expired
		// hold's seats available within about a second.
		table = append(table, job{"expire-holds", time.Second, 30 * time.Second, 0, "expired hold seats",
			func(ctx context.Context) (int64, error) {
				n, err := expirer.ExpireHolds(ctx)
				return int64(n), err
			}})
	}
	if bound != nil {
		// A relay stopped for long must not fill the disk: past the
		// bound the oldest seat changes go (logged as errors by bound).
		table = append(table, job{"bound-seat-changes", 10 * time.Second, 2 * time.Minute, 5 * time.Second,
			"seat changes dropped", bound.EnforceBound})
	}
	if webhooks != nil {
		// Finished deliveries and their events, past WEBHOOK_RETENTION.
		table = append(table, job{"purge-webhook-deliveries", 10 * time.Minute, 5 * time.Minute, time.Minute,
			"webhook deliveries and events", webhooks.purge})
	}
	if pruner != nil {
		table = append(table, job{"prune-lock-rows", time.Hour, 10 * time.Minute, time.Minute, "lock rows",
			func(ctx context.Context) (int64, error) { return pruner.Prune(ctx, lockRowRetention) }})
	}
	jobs := make([]periodic.Job, len(table))
	for i, j := range table {
		jobs[i] = periodic.Job{
			Name: j.name, Every: j.every, LockAtMostFor: j.atMost, LockAtLeastFor: j.atLeast,
			Run: func(ctx context.Context) error {
				n, err := j.run(ctx)
				if err == nil && n > 0 {
					logger.InfoContext(ctx, "job changed "+j.changed, slog.String("job", j.name), slog.Int64("count", n))
				}
				return err
			},
		}
	}
	return periodic.New(locker, periodic.Config{Logger: logger, Namespace: namespace}, jobs...)
}
