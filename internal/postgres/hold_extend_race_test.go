package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/reservation"
)

// unkeptHolds counts, in one snapshot, the holds that are active but
// whose seats are not all claimed by them until the very same time (a
// hold promising seats it does not keep), and the live claims whose hold
// does not expire with them (seats kept for a hold that has ended, or
// will end before them).
//
// "Active" is judged by the clock read after the snapshot was taken, not
// by now(): now() is when the statement's transaction began, and on a
// busy machine a clean-up or a new hold may commit between that moment
// and the snapshot, freeing seats of holds that had expired by then but
// not yet at now(). Every change the snapshot sees was decided by a clock
// earlier than the one read here.
func unkeptHolds(ctx context.Context, pool *pgxpool.Pool) (holds, strayClaims int, err error) {
	err = pool.QueryRow(ctx, `
		WITH t AS MATERIALIZED (SELECT clock_timestamp() AS now)
		SELECT
			(SELECT count(*) FROM holds h, t
			 WHERE h.confirmed_at IS NULL AND h.released_at IS NULL AND h.expires_at > t.now
			   AND cardinality(h.seat_ids) <> (SELECT count(*) FROM seat_claims c
				WHERE c.hold_id = h.id AND c.expires_at = h.expires_at AND c.seat_id = ANY(h.seat_ids))),
			(SELECT count(*) FROM seat_claims c JOIN holds h ON h.id = c.hold_id, t
			 WHERE c.expires_at > t.now AND (c.expires_at <> h.expires_at OR h.confirmed_at IS NOT NULL OR h.released_at IS NOT NULL))`).
		Scan(&holds, &strayClaims)
	return holds, strayClaims, err
}

// Extensions racing the expiry job, and new holds taking expired seats
// over, never leave a hold active without its claims: every extension
// either moved the hold and all its claims or nothing. The lock lets
// everyone in (grantAll), so PostgreSQL alone keeps it so.
func TestExtensionsRacingExpiryNeverLeaveAHoldWithoutClaims(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	const (
		pairs = 20                    // holds of two seats each: seats 2k-1 and 2k
		ttl   = 60 * time.Millisecond // short enough that holds keep expiring between extensions
		run   = 3 * time.Second
	)
	s := mustSchedule(t, store, 2*pairs)
	svc := reservation.NewService(store, &grantAll{}, reservation.Config{HoldTTL: ttl, HoldMaxLifetime: time.Hour}, nil)

	var (
		mu      sync.Mutex
		targets []uuid.UUID // every hold made, the latest last
	)
	// target picks one of the latest holds: most of them are still live.
	target := func() uuid.UUID {
		mu.Lock()
		defer mu.Unlock()
		return targets[len(targets)-1-rand.IntN(min(len(targets), pairs))]
	}
	// holdPair holds seats 2k-1 and 2k when they are free (their last
	// hold expired), taking the expired claims over in place.
	holdPair := func(k int) error {
		h, err := store.InsertHold(ctx, reservation.NewHold{ScheduleID: s.ID(), SeatIDs: []int{2*k - 1, 2 * k},
			Fences: []int64{nextFence(), nextFence()}, UserID: "alice", TTL: ttl})
		if err != nil {
			return err
		}
		mu.Lock()
		targets = append(targets, h.ID())
		mu.Unlock()
		return nil
	}
	for k := 1; k <= pairs; k++ {
		if err := holdPair(k); err != nil {
			t.Fatal(err)
		}
	}

	var (
		extended, refused, freed, checks atomic.Int64
		failures                         atomic.Int64
		wg                               sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
	deadline := time.Now().Add(run)
	for range 6 { // extenders
		wg.Go(func() {
			for time.Now().Before(deadline) {
				_, err := svc.Extend(ctx, target(), "alice")
				switch {
				case err == nil:
					extended.Add(1)
				case errors.Is(err, reservation.ErrHoldExpired):
					refused.Add(1)
				default:
					fail("Extend: %v", err)
				}
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
			}
		})
	}
	for range 3 { // the expiry job, three instances of it at once
		wg.Go(func() {
			for time.Now().Before(deadline) {
				n, err := svc.ExpireHolds(ctx)
				if err != nil {
					fail("ExpireHolds: %v", err)
				}
				freed.Add(int64(n))
			}
		})
	}
	for range 2 { // buyers holding the seats again once free
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := holdPair(1 + rand.IntN(pairs)); err != nil && !errors.Is(err, reservation.ErrSeatsUnavailable) {
					fail("InsertHold: %v", err)
				}
			}
		})
	}
	wg.Go(func() { // the invariant, checked all along
		for time.Now().Before(deadline) {
			holds, claims, err := unkeptHolds(ctx, pool)
			switch {
			case err != nil:
				fail("check: %v", err)
			case holds > 0 || claims > 0:
				fail("%d active holds without all their claims, %d live claims not expiring with their hold", holds, claims)
			}
			checks.Add(1)
		}
	})
	wg.Wait()

	if holds, claims, err := unkeptHolds(ctx, pool); err != nil || holds > 0 || claims > 0 {
		t.Errorf("at the end: %d active holds without all their claims, %d live claims not expiring with their hold (%v)",
			holds, claims, err)
	}
	t.Logf("%d extensions, %d refused as expired, %d seats freed by the expiry job, %d holds made, %d checks",
		extended.Load(), refused.Load(), freed.Load(), len(targets), checks.Load())
	if extended.Load() == 0 || freed.Load() == 0 {
		t.Errorf("%d extensions and %d seats freed: the race did not happen, the test proves nothing", extended.Load(), freed.Load())
	}
}
