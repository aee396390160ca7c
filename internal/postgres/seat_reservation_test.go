package postgres_test

import (
	"errors"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// SeatReservation finds a seat's booking by schedule and seat, whoever made
// it, and tells a free seat apart.
func TestSeatReservation(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	other := mustSchedule(t, store, 10)
	want := mustReserve(t, store, s.ID(), 2, "alice")
	mustReserve(t, store, other.ID(), 3, "bob")

	got, err := store.SeatReservation(ctx, s.ID(), 2)
	if err != nil {
		t.Fatalf("SeatReservation: %v", err)
	}
	if got.ID() != want.ID() || got.ScheduleID() != s.ID() || got.SeatID() != 2 || got.UserID() != "alice" ||
		!got.CreatedAt().Equal(want.CreatedAt()) {
		t.Errorf("SeatReservation = %+v, want %+v", got, want)
	}

	for _, free := range []struct {
		scheduleID int64
		seatID     int
	}{
		{s.ID(), 3},     // booked only in the other schedule
		{other.ID(), 2}, // booked only in this schedule
		{s.ID(), 1},
	} {
		_, err := store.SeatReservation(ctx, free.scheduleID, free.seatID)
		if !errors.Is(err, reservation.ErrReservationNotFound) {
			t.Errorf("SeatReservation(%d, %d) error = %v, want ErrReservationNotFound", free.scheduleID, free.seatID, err)
		}
	}
}
