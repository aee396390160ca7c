package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// wantStale checks a refusal for a stale fence: ErrStaleFence, and neither
// a conflict nor an outage.
func wantStale(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, reservation.ErrStaleFence) {
		t.Fatalf("%s: error = %v, want ErrStaleFence", what, err)
	}
	if errors.Is(err, reservation.ErrSeatTaken) || errors.Is(err, reservation.ErrUnavailable) {
		t.Errorf("%s: error = %v: a stale fence is neither a taken seat nor an outage", what, err)
	}
}

func wantFence(t *testing.T, got int64, ok bool, want int64, why string) {
	t.Helper()
	if !ok || got != want {
		t.Errorf("stored fence = %d (row %v), want %d: %s", got, ok, want, why)
	}
}

// Fences are kept per seat: a high fence on one seat does not make a lower
// one stale on another seat or another schedule.
func TestFenceIsPerSeat(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	other := mustSchedule(t, store, 10)

	mustReserveFenced(t, store, s.ID(), 1, "alice", 10)
	mustReserveFenced(t, store, s.ID(), 2, "bob", 5)
	mustReserveFenced(t, store, other.ID(), 1, "carol", 3)

	for _, c := range []struct {
		scheduleID int64
		seat       int
		want       int64
	}{{s.ID(), 1, 10}, {s.ID(), 2, 5}, {other.ID(), 1, 3}} {
		got, ok := seatFence(t, pool, c.scheduleID, c.seat)
		wantFence(t, got, ok, c.want, fmt.Sprintf("schedule %d seat %d was booked with it", c.scheduleID, c.seat))
	}
	if n := countReservations(t, pool, s.ID()) + countReservations(t, pool, other.ID()); n != 3 {
		t.Errorf("reservations = %d, want 3", n)
	}
}

// One seat, booked with fence 5, then tried again with a lower and a higher
// fence.
func TestFenceOnBookedSeat(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	const seat = 4

	first := mustReserveFenced(t, store, s.ID(), seat, "alice", 5)
	got, ok := seatFence(t, pool, s.ID(), seat)
	wantFence(t, got, ok, 5, "the booking's fence is recorded with it")

	// An older holder (fence 3) is refused by the fence, before the
	// UNIQUE constraint is even reached.
	_, err := insert(ctx, store, s.ID(), seat, "bob", 3)
	wantStale(t, err, "fence 3 after fence 5")

	// A newer holder (fence 7) passes the fence check, so only the UNIQUE
	// constraint can refuse it.
	_, err = insert(ctx, store, s.ID(), seat, "carol", 7)
	if !errors.Is(err, reservation.ErrSeatTaken) || errors.Is(err, reservation.ErrStaleFence) {
		t.Fatalf("fence 7 after fence 5: error = %v, want ErrSeatTaken (and not ErrStaleFence)", err)
	}
	// The refused booking wrote nothing, so the stored fence is still 5.
	// The store guarantees "the highest fence of a committed booking",
	// not "the highest fence ever presented"; that is enough, because a
	// booked seat refuses every later insert anyway (UNIQUE), and a free
	// seat has only committed fences to compare with.
	got, ok = seatFence(t, pool, s.ID(), seat)
	wantFence(t, got, ok, 5, "a refused booking writes no fence")

	// So fence 6 (below the refused 7) is not stale: it too meets the
	// UNIQUE constraint.
	_, err = insert(ctx, store, s.ID(), seat, "dave", 6)
	if !errors.Is(err, reservation.ErrSeatTaken) {
		t.Errorf("fence 6 after a refused 7: error = %v, want ErrSeatTaken", err)
	}

	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
	if r, err := store.Reservation(ctx, first.ID()); err != nil || r.UserID() != "alice" {
		t.Errorf("the seat's reservation = %+v, %v; want alice's", r, err)
	}
}

// A holder paused past its lease (fence 7) cannot write after the newer
// holder (fence 8) that took the lock over and booked the seat.
func TestFenceStaleWriterAfterNewerHolder(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	const seat = 2

	mustReserveFenced(t, store, s.ID(), seat, "newer", 8)
	_, err := insert(ctx, store, s.ID(), seat, "paused", 7)
	wantStale(t, err, "fence 7 after fence 8")

	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want exactly 1", n)
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT user_id FROM reservations WHERE schedule_id = $1 AND seat_id = $2`, s.ID(), seat).Scan(&owner); err != nil || owner != "newer" {
		t.Errorf("seat owner = %q (%v), want newer", owner, err)
	}
	got, ok := seatFence(t, pool, s.ID(), seat)
	wantFence(t, got, ok, 8, "a stale writer does not move the fence back")
}

// A fence equal to the stored one is stale too: fences are unique per
// acquisition, so an equal one is a replay, not a new holder.
func TestFenceEqualIsStale(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)

	mustReserveFenced(t, store, s.ID(), 6, "alice", 9)
	_, err := insert(testContext(t), store, s.ID(), 6, "alice", 9)
	wantStale(t, err, "fence 9 after fence 9")

	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
}

// Fences may be any int64 the lock mints: the Redis adapter starts them
// from the clock in microseconds, well beyond 32 bits.
func TestFenceLargeValues(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	const big = int64(1) << 52

	mustReserveFenced(t, store, s.ID(), 1, "alice", big)
	got, ok := seatFence(t, pool, s.ID(), 1)
	wantFence(t, got, ok, big, "stored as bigint")
	_, err := insert(testContext(t), store, s.ID(), 1, "bob", big-1)
	wantStale(t, err, "big-1 after big")
}

// A booking that fails for want of a seat leaves no fence behind, so it
// cannot make a later, legitimate holder look stale; and it answers the
// same errors as before fences existed.
func TestFenceFailedBookingLeavesNoFence(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	tests := []struct {
		name       string
		scheduleID int64
		seatID     int
		want       error
	}{
		{"seat after the last", s.ID(), 11, reservation.ErrSeatNotFound},
		{"seat 0", s.ID(), 0, reservation.ErrSeatNotFound},
		{"negative seat", s.ID(), -3, reservation.ErrSeatNotFound},
		{"unknown schedule", s.ID() + 1000, 1, reservation.ErrScheduleNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := insert(testContext(t), store, tt.scheduleID, tt.seatID, "alice", 100)
			if !errors.Is(err, tt.want) {
				t.Fatalf("InsertReservation error = %v, want %v", err, tt.want)
			}
			if errors.Is(err, reservation.ErrStaleFence) || errors.Is(err, reservation.ErrUnavailable) {
				t.Errorf("InsertReservation error = %v: want only %v", err, tt.want)
			}
			if _, ok := seatFence(t, pool, tt.scheduleID, tt.seatID); ok {
				t.Errorf("a seat_fences row exists for schedule %d seat %d after a failed booking", tt.scheduleID, tt.seatID)
			}
		})
	}
	if n := countRows(t, pool, "seat_fences"); n != 0 {
		t.Errorf("seat_fences rows = %d, want 0", n)
	}
	if n := countRows(t, pool, "reservations"); n != 0 {
		t.Errorf("reservations = %d, want 0", n)
	}
	// A lower fence on a real seat is not stale after those failures.
	mustReserveFenced(t, store, s.ID(), 10, "bob", 1)
}

// A seat booked before fences existed (schema version 1) has no fence row:
// any fence passes the check, and the UNIQUE constraint still refuses.
func TestFenceSeatBookedWithoutFenceRow(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	if _, err := pool.Exec(ctx, `INSERT INTO reservations (schedule_id, seat_id, user_id) VALUES ($1, 3, 'legacy')`, s.ID()); err != nil {
		t.Fatal(err)
	}

	_, err := insert(ctx, store, s.ID(), 3, "alice", 1)
	if !errors.Is(err, reservation.ErrSeatTaken) {
		t.Fatalf("InsertReservation error = %v, want ErrSeatTaken", err)
	}
	if n := countRows(t, pool, "seat_fences"); n != 0 {
		t.Errorf("the refused booking left %d seat_fences rows", n)
	}
}

// Twenty holders with fences 1..20 race for one fresh seat. Exactly one
// books it; every other one is refused by the fence or by the UNIQUE
// constraint. Because a losing insert waits for the winner on the UNIQUE
// constraint and then compares fences, and only a committed booking leaves
// its fence behind, the outcome is fully ordered by the winner's fence w:
// every fence below w is stale, every fence above w meets the UNIQUE
// constraint, and the stored fence is w.
func TestFenceConcurrentHoldersOneSeat(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	const holders, seat = 20, 7

	start := make(chan struct{})
	errs := make([]error, holders+1) // indexed by fence
	var wg sync.WaitGroup
	for fence := 1; fence <= holders; fence++ {
		wg.Go(func() {
			<-start
			_, errs[fence] = insert(ctx, store, s.ID(), seat, fmt.Sprintf("user-%d", fence), int64(fence))
		})
	}
	close(start)
	wg.Wait()

	winner := 0
	for fence := 1; fence <= holders; fence++ {
		err := errs[fence]
		switch {
		case err == nil && winner != 0:
			t.Errorf("fences %d and %d both booked the seat", winner, fence)
		case err == nil:
			winner = fence
		case !errors.Is(err, reservation.ErrSeatTaken) && !errors.Is(err, reservation.ErrStaleFence):
			t.Errorf("fence %d: error = %v, want ErrSeatTaken or ErrStaleFence", fence, err)
		}
	}
	if winner == 0 {
		t.Fatal("no holder booked the seat")
	}
	t.Logf("fence %d won", winner)
	for fence := 1; fence <= holders; fence++ {
		switch err := errs[fence]; {
		case fence < winner && !errors.Is(err, reservation.ErrStaleFence):
			t.Errorf("fence %d below the winner's %d: error = %v, want ErrStaleFence", fence, winner, err)
		case fence > winner && !errors.Is(err, reservation.ErrSeatTaken):
			t.Errorf("fence %d above the winner's %d: error = %v, want ErrSeatTaken", fence, winner, err)
		}
	}
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want exactly 1", n)
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT user_id FROM reservations WHERE schedule_id = $1`, s.ID()).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("user-%d", winner); owner != want {
		t.Errorf("seat belongs to %q, but fence %d was told it won", owner, winner)
	}
	got, ok := seatFence(t, pool, s.ID(), seat)
	wantFence(t, got, ok, int64(winner), "only the winner's transaction committed")
}
