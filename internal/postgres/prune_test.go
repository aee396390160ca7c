package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

func TestPruneSeatFencesOfStartedShows(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	store := postgres.NewStore(pool)
	ctx := context.Background()
	schedule := func(startsAt time.Time) int64 {
		s, err := reservation.NewSchedule("Dune", startsAt, 3)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := store.CreateSchedule(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return stored.ID()
	}
	past, future := schedule(time.Now().Add(-48*time.Hour)), schedule(time.Now().Add(48*time.Hour))
	// Fences of seats whose reservations are gone (bookings keep theirs
	// in their own row), and one booking.
	for i, id := range []int64{past, past, future} {
		if _, err := pool.Exec(ctx, `INSERT INTO seat_fences (schedule_id, seat_id, fence) VALUES ($1, $2, 5)`, id, i+1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: past, SeatID: 3, UserID: "u", Fence: 1}); err != nil {
		t.Fatal(err)
	}

	n, err := store.PruneSeatFences(ctx, time.Now().Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneSeatFences = %d, %v; want the 2 fences of the started show", n, err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM seat_fences WHERE schedule_id = $1`, future).Scan(&left); err != nil || left != 1 {
		t.Errorf("fences of the future show = %d (%v), want 1 kept", left, err)
	}
	// The bookings themselves stay, and still refuse a second booking.
	if _, err := store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: past, SeatID: 3, UserID: "v", Fence: 2}); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Errorf("booking a booked seat after pruning: %v, want ErrSeatTaken", err)
	}
}
