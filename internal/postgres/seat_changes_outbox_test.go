package postgres_test

import (
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// The outbox hands out the oldest changes in id order, forgets what was
// deleted, measures its backlog, and trims to a bound from the oldest.
func TestSeatChangesOutbox(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	outbox := postgres.NewSeatChanges(pool)
	ctx := testContext(t)
	if rows, age, err := outbox.Backlog(ctx); err != nil || rows != 0 || age != 0 {
		t.Fatalf("empty Backlog = %d, %s, %v", rows, age, err)
	}
	s := mustSchedule(t, store, 10)
	for seat := 1; seat <= 5; seat++ {
		mustReserve(t, store, s.ID(), seat, "alice")
	}

	pending, err := outbox.Pending(ctx, 3)
	if err != nil || len(pending) != 3 {
		t.Fatalf("Pending(3) = %d rows, %v", len(pending), err)
	}
	for i, c := range pending {
		if c.ScheduleID != s.ID() || c.SeatID != i+1 || c.Status != reservation.SeatReserved || c.CreatedAt.IsZero() {
			t.Errorf("change %d = %+v", i, c)
		}
		if i > 0 && c.Pos <= pending[i-1].Pos {
			t.Errorf("ids out of order: %d after %d", c.Pos, pending[i-1].Pos)
		}
	}
	time.Sleep(20 * time.Millisecond)
	rows, age, err := outbox.Backlog(ctx)
	if err != nil || rows != 5 || age < 20*time.Millisecond || age > time.Minute {
		t.Fatalf("Backlog = %d, %s, %v; want 5 rows at least 20ms old", rows, age, err)
	}

	if err := outbox.Delete(ctx, []int64{pending[0].Pos, pending[1].Pos}); err != nil {
		t.Fatal(err)
	}
	if err := outbox.Delete(ctx, []int64{pending[0].Pos}); err != nil { // again: nothing left to delete
		t.Fatal(err)
	}
	rest, err := outbox.Pending(ctx, 10)
	if err != nil || len(rest) != 3 || rest[0].Pos != pending[2].Pos {
		t.Fatalf("after Delete, Pending = %+v, %v", rest, err)
	}

	// Bound of 2: the oldest of the 3 goes.
	if dropped, err := outbox.Trim(ctx, 2); err != nil || dropped != 1 {
		t.Fatalf("Trim(2) = %d, %v; want 1", dropped, err)
	}
	if dropped, err := outbox.Trim(ctx, 2); err != nil || dropped != 0 {
		t.Fatalf("Trim(2) again = %d, %v; want 0", dropped, err)
	}
	kept, err := outbox.Pending(ctx, 10)
	if err != nil || len(kept) != 2 || kept[0].SeatID != 4 || kept[1].SeatID != 5 {
		t.Fatalf("after Trim, Pending = %+v, %v; want seats 4 and 5", kept, err)
	}
	if dropped, err := outbox.Trim(ctx, 0); err != nil || dropped != 2 {
		t.Fatalf("Trim(0) = %d, %v; want 2", dropped, err)
	}
	if rows, age, err := outbox.Backlog(ctx); err != nil || rows != 0 || age != 0 {
		t.Fatalf("Backlog after Trim(0) = %d, %s, %v", rows, age, err)
	}
}

// A hold's seats change in one row: Pending hands out a change for each
// seat, in seat order, at the row's one position, and deleting that
// position deletes them all.
func TestSeatChangesOfOneHoldShareTheirRow(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	outbox := postgres.NewSeatChanges(pool)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 1, "alice")
	h := mustHold(t, store, s.ID(), "bob", time.Minute, 9, 3, 7)
	if _, err := store.ReleaseHold(ctx, h.ID(), "bob"); err != nil {
		t.Fatal(err)
	}
	if rows := queryCount(t, pool, `SELECT count(*) FROM seat_changes`); rows != 3 {
		t.Fatalf("%d rows for a booking, a hold of 3 seats and its release, want 3", rows)
	}

	pending, err := outbox.Pending(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		seat   int
		status reservation.SeatStatus
	}{{1, reservation.SeatReserved}, {3, reservation.SeatHeld}, {7, reservation.SeatHeld}, {9, reservation.SeatHeld}}
	if len(pending) != len(want) {
		t.Fatalf("Pending(2) = %+v, want the booking's change and the hold's three", pending)
	}
	for i, w := range want {
		if c := pending[i]; c.SeatID != w.seat || c.Status != w.status || c.ScheduleID != s.ID() {
			t.Errorf("change %d = %+v, want seat %d %s", i, c, w.seat, w.status)
		}
	}
	if held := pending[1].Pos; pending[2].Pos != held || pending[3].Pos != held || held <= pending[0].Pos {
		t.Errorf("positions %d %d %d %d: want the hold's seats at one, after the booking's", pending[0].Pos, held, pending[2].Pos, pending[3].Pos)
	}

	if err := outbox.Delete(ctx, []int64{pending[0].Pos, pending[1].Pos, pending[2].Pos, pending[3].Pos}); err != nil {
		t.Fatal(err)
	}
	rest, err := outbox.Pending(ctx, 10)
	if err != nil || len(rest) != 3 || rest[0].Status != reservation.SeatAvailable || rest[0].SeatID != 3 || rest[2].SeatID != 9 {
		t.Fatalf("after Delete, Pending = %+v, %v; want the release's three seats", rest, err)
	}
}
