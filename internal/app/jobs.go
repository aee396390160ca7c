package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/periodic"
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
func newJobs(locker lock.Locker, store *postgres.Store, pruner lockPruner, logger *slog.Logger) (*periodic.Runner, error) {
	jobs := []periodic.Job{pruneSeatFences(store, logger)}
	if pruner != nil {
		jobs = append(jobs, pruneLockRows(pruner, logger))
	}
	return periodic.New(locker, periodic.Config{Logger: logger}, jobs...)
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
