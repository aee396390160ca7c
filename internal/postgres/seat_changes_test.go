package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// seatChanges lists the schedule's recorded seat changes in id order, as
// "seat:status".
func seatChanges(t *testing.T, pool *pgxpool.Pool, scheduleID int64) []string {
	t.Helper()
	rows, err := pool.Query(testContext(t), `
		SELECT s.seat, c.status FROM seat_changes c
		CROSS JOIN LATERAL unnest(coalesce(c.seat_ids, ARRAY[c.seat_id])) WITH ORDINALITY AS s(seat, n)
		WHERE c.schedule_id = $1 ORDER BY c.id, s.n`, scheduleID)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var (
			seat   int
			status string
		)
		err := row.Scan(&seat, &status)
		return fmt.Sprintf("%d:%s", seat, status), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return changes
}

// Every write that changes a seat records the change in the same
// statement or transaction, and a write that changes nothing records
// nothing.
func TestEveryChangeOfASeatIsRecorded(t *testing.T) {
	for name, writers := range map[string]int{"alone": 0, "in groups": postgres.DefaultGroupWriters} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, pool := newStore(t)
			store := postgres.NewStore(pool, postgres.WithGroupWriters(writers))
			ctx := testContext(t)
			s := mustSchedule(t, store, 10)

			r := mustReserve(t, store, s.ID(), 1, "alice")
			if _, err := insert(ctx, store, s.ID(), 1, "bob", nextFence()); err == nil {
				t.Fatal("bob booked alice's seat")
			}
			if _, err := store.CancelReservation(ctx, r.ID(), nextFence()); err != nil {
				t.Fatal(err)
			}
			if _, err := store.CancelReservation(ctx, r.ID(), nextFence()); err != nil {
				t.Fatal(err)
			}
			confirmed := mustHold(t, store, s.ID(), "carol", time.Minute, 2, 3)
			if _, err := store.ConfirmHold(ctx, confirmed.ID(), "carol"); err != nil {
				t.Fatal(err)
			}
			released := mustHold(t, store, s.ID(), "dave", time.Minute, 4)
			if _, err := store.ReleaseHold(ctx, released.ID(), "dave"); err != nil {
				t.Fatal(err)
			}
			mustHold(t, store, s.ID(), "erin", time.Millisecond, 5)
			time.Sleep(10 * time.Millisecond)
			if freed, err := store.DropExpiredClaim(ctx, reservation.SeatRef{ScheduleID: s.ID(), SeatID: 5}); err != nil || !freed {
				t.Fatalf("DropExpiredClaim = %v, %v", freed, err)
			}

			want := []string{"1:reserved", "1:available", "2:held", "3:held", "2:reserved", "3:reserved",
				"4:held", "4:available", "5:held", "5:available"}
			if got := seatChanges(t, pool, s.ID()); !slices.Equal(got, want) {
				t.Errorf("recorded changes:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// A user who books a seat that is already theirs gets their reservation
// back (a retry whose first answer was lost); anyone else is refused.
func TestBookingYourOwnSeatAgainReturnsYourReservation(t *testing.T) {
	for name, writers := range map[string]int{"alone": 0, "in groups": postgres.DefaultGroupWriters} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, pool := newStore(t)
			store := postgres.NewStore(pool, postgres.WithGroupWriters(writers))
			ctx := testContext(t)
			s := mustSchedule(t, store, 10)
			first := mustReserve(t, store, s.ID(), 7, "alice")

			again, err := insert(ctx, store, s.ID(), 7, "alice", nextFence())
			if err != nil || again.ID() != first.ID() || !again.CreatedAt().Equal(first.CreatedAt()) {
				t.Errorf("alice again = %+v, %v; want her reservation %s", again, err, first.ID())
			}
			if _, err := insert(ctx, store, s.ID(), 7, "bob", nextFence()); !errors.Is(err, reservation.ErrSeatTaken) {
				t.Errorf("bob: %v, want ErrSeatTaken", err)
			}
			if n := countReservations(t, pool, s.ID()); n != 1 {
				t.Errorf("%d reservations, want 1", n)
			}
			if got := seatChanges(t, pool, s.ID()); !slices.Equal(got, []string{"7:reserved"}) {
				t.Errorf("recorded changes = %v, want the one booking", got)
			}
		})
	}
}
