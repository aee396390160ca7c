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

// newJobs returns the service's periodic jobs. Every instance runs the
// Runner; each job executes on one instance per period (ShedLock-style).
func newJobs(locker lock.Locker, store *postgres.Store, logger *slog.Logger) (*periodic.Runner, error) {
	return periodic.New(locker, periodic.Config{Logger: logger}, periodic.Job{
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
	})
}
