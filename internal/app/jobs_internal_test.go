package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/periodic"
)

type recordingPruner struct{ freeFor []time.Duration }

func (p *recordingPruner) Prune(_ context.Context, freeFor time.Duration) (int64, error) {
	p.freeFor = append(p.freeFor, freeFor)
	return 3, nil
}

// The lock-row pruning job exists only for a lock store that needs it, and
// prunes rows free for lockRowRetention.
func TestLockRowPruningJob(t *testing.T) {
	locker := lock.New(memlock.New(), lock.Config{})
	logger := slog.New(slog.DiscardHandler)

	withoutPruner, err := newJobs(locker, nil, nil, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withoutPruner.RunOnce(context.Background(), "prune-lock-rows"); !errors.Is(err, periodic.ErrUnknownJob) {
		t.Errorf("prune-lock-rows without a pruner: %v, want ErrUnknownJob", err)
	}

	pruner := &recordingPruner{}
	jobs, err := newJobs(locker, nil, nil, pruner, logger)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := jobs.RunOnce(context.Background(), "prune-lock-rows")
	if err != nil || ev.Outcome != periodic.Ran {
		t.Fatalf("RunOnce = %+v, %v; want Ran", ev, err)
	}
	if len(pruner.freeFor) != 1 || pruner.freeFor[0] != lockRowRetention {
		t.Errorf("Prune calls = %v, want one with %v", pruner.freeFor, lockRowRetention)
	}
}
