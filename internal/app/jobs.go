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

// lockPruner is a lock store that can delete its long-free locks.
type lockPruner interface {
	Prune(ctx context.Context, freeFor time.Duration) (int64, error)
}

// newJobs returns the service's periodic jobs. Every instance runs the
// Runner; each job executes on one instance per period (ShedLock-style).
// pruner is nil when the lock store keeps nothing to prune (Redis expires
// its keys by itself).
func newJobs(locker lock.Locker, store *postgres.Store, keys idempotency.Store, expirer holdExpirer, pruner lockPruner,
	logger *slog.Logger, namespace string) (*periodic.Runner, error) {
	jobs := []periodic.Job{pruneSeatFences(store, logger), purgeHolds(store, logger), purgeIdempotencyKeys(keys, logger)}
	if expirer != nil {
		jobs = append(jobs, expireHolds(expirer, logger))
	}
	if pruner != nil {
		jobs = append(jobs, pruneLockRows(pruner, logger))
	}
	return periodic.New(locker, periodic.Config{Logger: logger, Namespace: namespace}, jobs...)
}

func pruneLockRows(pruner lockPruner, logger *slog.Logger) periodic.Job {
	return periodic.Job{
		Name:           "prune-lock-rows",
		Every:          time.Hour,
		LockAtMostFor:  10 * time.Minute,
		LockAtLeastFor: time.Minute,
		Run: func(ctx context.Context) error {
			n, err := pruner.Prune(ctx, lockRowRetention)
			if err == nil {
				logger.InfoContext(ctx, "pruned lock rows", slog.Int64("rows", n))
			}
			return err
		},
	}
}

func pruneSeatFences(store *postgres.Store, logger *slog.Logger) periodic.Job {
	return periodic.Job{
		Name:           "prune-seat-fences",
		Every:          time.Hour,
		LockAtMostFor:  10 * time.Minute,
		LockAtLeastFor: time.Minute,
		Run: func(ctx context.Context) error {
			n, err := store.PruneSeatFences(ctx, time.Now().Add(-fenceRetention))
			if err == nil {
				logger.InfoContext(ctx, "pruned seat fences", slog.Int64("rows", n))
			}
			return err
		},
	}
}

// holdRetention is how long a hold that ended unconfirmed (expired or
// released) stays readable with GET /holds/{id}.
const holdRetention = 24 * time.Hour

// purgeHolds deletes, after holdRetention, the holds that ended
// unconfirmed.
func purgeHolds(store *postgres.Store, logger *slog.Logger) periodic.Job {
	return periodic.Job{
		Name:           "purge-holds",
		Every:          time.Hour,
		LockAtMostFor:  10 * time.Minute,
		LockAtLeastFor: time.Minute,
		Run: func(ctx context.Context) error {
			n, err := store.PurgeHolds(ctx, time.Now().Add(-holdRetention))
			if err == nil && n > 0 {
				logger.InfoContext(ctx, "purged holds", slog.Int64("holds", n))
			}
			return err
		},
	}
}

// holdExpirer clears expired holds' claims and announces their seats.
type holdExpirer interface {
	ExpireHolds(ctx context.Context) (int, error)
}

// expireHolds runs every second on one instance, so that the live seat map
// shows an expired hold's seats available within about a second.
func expireHolds(expirer holdExpirer, logger *slog.Logger) periodic.Job {
	return periodic.Job{
		Name:          "expire-holds",
		Every:         time.Second,
		LockAtMostFor: 30 * time.Second,
		Run: func(ctx context.Context) error {
			n, err := expirer.ExpireHolds(ctx)
			if n > 0 {
				logger.DebugContext(ctx, "announced expired holds", slog.Int("seats", n))
			}
			return err
		},
	}
}

// purgeIdempotencyKeys deletes the Idempotency-Keys older than their
// 24 hours.
func purgeIdempotencyKeys(keys idempotency.Store, logger *slog.Logger) periodic.Job {
	return periodic.Job{
		Name:           "purge-idempotency-keys",
		Every:          10 * time.Minute,
		LockAtMostFor:  5 * time.Minute,
		LockAtLeastFor: time.Minute,
		Run: func(ctx context.Context) error {
			n, err := keys.Purge(ctx)
			if err == nil && n > 0 {
				logger.InfoContext(ctx, "purged idempotency keys", slog.Int64("keys", n))
			}
			return err
		},
	}
}
