package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/lock/periodic"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
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

	withoutPruner, err := newJobs(locker, nil, nil, nil, nil, nil, nil, logger, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withoutPruner.RunOnce(context.Background(), "prune-lock-rows"); !errors.Is(err, periodic.ErrUnknownJob) {
		t.Errorf("prune-lock-rows without a pruner: %v, want ErrUnknownJob", err)
	}

	pruner := &recordingPruner{}
	jobs, err := newJobs(locker, nil, nil, nil, pruner, nil, nil, logger, "")
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

// Three instances' runners try the purge at once: it runs on one of them,
// the others skip, and the expired keys are gone while live ones stay.
func TestIdempotencyKeyPurgeRunsOnceAcrossRunners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.Pool(t)
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		expiry := "now() + interval '1 hour'"
		if i%2 == 0 {
			expiry = "now() - interval '1 second'"
		}
		_, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (user_id, key, fingerprint, claim, status, locked_until, expires_at)
			VALUES ('alice', $1, '\x00', gen_random_uuid(), 200, now(), `+expiry+`)`, fmt.Sprintf("key-%d", i))
		if err != nil {
			t.Fatal(err)
		}
	}
	store, keys := postgres.NewStore(pool), postgres.NewIdempotencyStore(pool)
	shared := memlock.New() // the lock store all three instances share
	logger := slog.New(slog.DiscardHandler)
	events := make([]periodic.Event, 3)
	var wg sync.WaitGroup
	for i := range events {
		runner, err := newJobs(lock.New(shared, lock.Config{}), store, keys, nil, nil, nil, nil, logger, "")
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			ev, err := runner.RunOnce(ctx, "purge-idempotency-keys")
			if err != nil {
				t.Error(err)
			}
			events[i] = ev
		})
	}
	wg.Wait()
	outcomes := map[periodic.Outcome]int{}
	for _, ev := range events {
		outcomes[ev.Outcome]++
	}
	if outcomes[periodic.Ran] != 1 || outcomes[periodic.Skipped] != 2 {
		t.Errorf("outcomes = %v, want one ran and two skipped", outcomes)
	}
	var left []string
	rows, err := pool.Query(ctx, `SELECT key FROM idempotency_keys ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"key-1", "key-3", "key-5"}) {
		t.Errorf("keys left = %v, want the three live ones", left)
	}
}

// recordingPurge answers the purge of the webhook log with full batches
// twice, then a short one, keeping the cut-offs asked.
type recordingPurge struct{ before []time.Time }

func (p *recordingPurge) PurgeWebhooks(_ context.Context, before time.Time, limit int) (int64, error) {
	p.before = append(p.before, before)
	if len(p.before) < 3 {
		return int64(limit), nil
	}
	return 7, nil
}

// The webhook log's purge deletes past WEBHOOK_RETENTION, in batches
// until one comes short.
func TestWebhookPurgeJob(t *testing.T) {
	locker := lock.New(memlock.New(), lock.Config{})
	purge := &recordingPurge{}
	jobs, err := newJobs(locker, nil, nil, nil, nil, nil, &webhookRetention{log: purge, keep: 72 * time.Hour}, slog.New(slog.DiscardHandler), "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ev, err := jobs.RunOnce(context.Background(), "purge-webhook-deliveries")
	if err != nil || ev.Outcome != periodic.Ran {
		t.Fatalf("RunOnce = %+v, %v; want Ran", ev, err)
	}
	if len(purge.before) != 3 {
		t.Fatalf("%d purge statements, want 3 (two full batches, then a short one)", len(purge.before))
	}
	for _, before := range purge.before {
		if cut := start.Add(-72 * time.Hour); before.Before(cut.Add(-time.Minute)) || before.After(time.Now().Add(-72*time.Hour)) {
			t.Errorf("purged before %v, want 72 h ago (%v)", before, cut)
		}
	}
}
