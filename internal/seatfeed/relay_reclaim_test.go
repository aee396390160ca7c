package seatfeed_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/testenv"
)

// reclaimCounting is the PostgreSQL outbox with its Reclaim counted, and
// failing when fail is set.
type reclaimCounting struct {
	*postgres.SeatChanges
	calls int
	fail  error
}

func (o *reclaimCounting) Reclaim(ctx context.Context) error {
	o.calls++
	if o.fail != nil {
		return o.fail
	}
	return o.SeatChanges.Reclaim(ctx)
}

// drain runs passes until the outbox is empty.
func drain(t *testing.T, r *seatfeed.Relay) {
	t.Helper()
	for {
		n, err := r.Pass(context.Background())
		if err != nil {
			t.Fatalf("Pass: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

// The relay vacuums the outbox once per ReclaimEvery changes it deleted.
func TestRelayReclaimsEveryReclaimEveryDeletions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outbox := &reclaimCounting{SeatChanges: e.outbox}
	r := seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), outbox, relayFeed(t, e.rdb),
		seatfeed.RelayConfig{BatchSize: 4, ReclaimEvery: 10})
	e.write(schedule(), 5, 25) // passes of 4, 4, 4 | 4, 4, 4 | 1
	drain(t, r)
	if outbox.calls != 2 {
		t.Errorf("Reclaim called %d times for 25 deletions, want 2 (after 12 and after 24)", outbox.calls)
	}
	var vacuums int64
	err := e.pool.QueryRow(context.Background(),
		`SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'seat_changes'`).Scan(&vacuums)
	if err != nil || vacuums != 2 {
		t.Errorf("seat_changes vacuumed %d times (%v), want 2", vacuums, err)
	}
}

// A failed reclaim is logged and tried again ReclaimEvery deletions later;
// the changes are relayed all the same.
func TestRelayReclaimFailureKeepsRelaying(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outbox := &reclaimCounting{SeatChanges: e.outbox, fail: errors.New("vacuum refused")}
	var logs testenv.SyncBuffer
	r := seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), outbox, relayFeed(t, e.rdb),
		seatfeed.RelayConfig{BatchSize: 5, ReclaimEvery: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	e.write(schedule(), 5, 20)
	drain(t, r)
	if n := e.backlog(); n != 0 {
		t.Fatalf("outbox after the passes: %d rows, want none", n)
	}
	if outbox.calls != 4 {
		t.Errorf("Reclaim tried %d times for 20 deletions, want 4", outbox.calls)
	}
	if got := strings.Count(logs.String(), "vacuum refused"); got != 4 {
		t.Errorf("%d warnings name the failure, want 4:\n%s", got, logs.String())
	}
}

// A relay on an outbox that cannot reclaim only deletes.
func TestRelayWithoutReclaimerOnlyDeletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := seatfeed.NewRelay(lock.New(memlock.New(), lock.Config{}), deleteOnly{e.outbox}, relayFeed(t, e.rdb),
		seatfeed.RelayConfig{BatchSize: 5, ReclaimEvery: 5})
	e.write(schedule(), 5, 20)
	drain(t, r)
	var vacuums int64
	err := e.pool.QueryRow(context.Background(),
		`SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'seat_changes'`).Scan(&vacuums)
	if err != nil || vacuums != 0 {
		t.Errorf("seat_changes vacuumed %d times (%v), want 0", vacuums, err)
	}
}

// deleteOnly is the outbox without its Reclaim.
type deleteOnly struct{ seatfeed.Outbox }
