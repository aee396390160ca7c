package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// A booking written while a hold of the same seat is being written (the
// seat lock failed, so nothing kept them apart) waits for the hold's
// transaction on the seat's claim row and is refused seat_held once the
// hold commits; the hold's promise stands and its confirmation books the
// seat. Before the claim row, both committed and the confirmation failed.
func TestBookingBehindAHoldsBackIsRefusedHeld(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)

	// The hold's transaction, stopped after its claim: what InsertHold
	// does, with the COMMIT held back.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var holdID string
	if err := tx.QueryRow(ctx, `INSERT INTO holds (schedule_id, user_id, seat_ids, expires_at)
		VALUES ($1, 'alice', '{2}', now() + interval '1 minute') RETURNING id`, s.ID()).Scan(&holdID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO seat_claims (schedule_id, seat_id, hold_id, fence, expires_at)
		VALUES ($1, 2, $2, $3, now() + interval '1 minute')`, s.ID(), holdID, nextFence()); err != nil {
		t.Fatal(err)
	}

	booked := make(chan error, 1)
	go func() {
		_, err := insert(ctx, store, s.ID(), 2, "mallory", nextFence())
		booked <- err
	}()
	select {
	case err := <-booked:
		t.Fatalf("the booking returned %v while the hold's claim was uncommitted; want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-booked
	var refused *reservation.UnavailableSeat
	if !errors.As(err, &refused) || refused.Reason != reservation.ReasonHeld {
		t.Fatalf("booking behind the hold's back: %v, want seat_held", err)
	}
	if n := countReservations(t, pool, s.ID()); n != 0 {
		t.Errorf("%d reservations after the refused booking, want 0", n)
	}
}

// The other way round: a hold written while a booking of one of its seats
// is uncommitted waits for it, then finds the seat taken and stores
// nothing.
func TestHoldBehindABookingsBackIsRefusedTaken(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)

	// The booking's statement, stopped before its COMMIT.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	fence := nextFence()
	if _, err := tx.Exec(ctx, `INSERT INTO seat_claims (schedule_id, seat_id, hold_id, fence, expires_at)
		VALUES ($1, 3, NULL, $2, '-infinity')`, s.ID(), fence); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO reservations (schedule_id, seat_id, user_id, fence) VALUES ($1, 3, 'mallory', $2)`,
		s.ID(), fence); err != nil {
		t.Fatal(err)
	}

	held := make(chan error, 1)
	go func() {
		_, err := hold(t, store, s.ID(), "alice", time.Minute, 3, 4)
		held <- err
	}()
	select {
	case err := <-held:
		t.Fatalf("the hold returned %v while the booking was uncommitted; want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := refusedSeats(t, <-held)
	if len(got) != 1 || got[0].SeatID != 3 || got[0].Reason != reservation.ReasonTaken {
		t.Errorf("refused = %+v, want seat 3 taken", got)
	}
	if n := queryCount(t, pool, `SELECT count(*) FROM holds WHERE schedule_id = $1`, s.ID()); n != 0 {
		t.Errorf("%d holds stored, want none", n)
	}
}

// Many holds and one-click bookings of the same seats race with no lock at
// all: PostgreSQL alone orders them, so no seat ends both booked by one
// user and held by another, and every hold that was granted confirms.
func TestHoldsAndBookingsRaceWithoutLocks(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	const seats = 60
	s := mustSchedule(t, store, seats)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		holds = map[int]reservation.Hold{}
	)
	for seat := 1; seat <= seats; seat++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			h, err := hold(t, store, s.ID(), fmt.Sprintf("holder-%d", seat), time.Minute, seat)
			if err == nil {
				mu.Lock()
				holds[seat] = h
				mu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			_, _ = insert(ctx, store, s.ID(), seat, fmt.Sprintf("booker-%d", seat), nextFence())
		}()
	}
	wg.Wait()
	booked := 0
	for seat := 1; seat <= seats; seat++ {
		h, held := holds[seat]
		if !held {
			continue
		}
		rs, err := store.ConfirmHold(ctx, h.ID(), h.UserID())
		if err != nil || len(rs) != 1 {
			t.Errorf("seat %d: confirming its granted hold: %v, %v", seat, rs, err)
			continue
		}
		booked++
	}
	if n := countReservations(t, pool, s.ID()); n != seats {
		t.Errorf("%d reservations, want one per seat (%d): every seat was either held or booked", n, seats)
	}
	t.Logf("%d seats went to holds, %d to one-click bookings", booked, seats-booked)
}
