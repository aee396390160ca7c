package reservation_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

func TestScheduleHasSeat(t *testing.T) {
	t.Parallel()
	s := reservation.RestoreSchedule(1, "Hamlet", startsAt, 10)
	for seat, want := range map[int]bool{-1: false, 0: false, 1: true, 5: true, 10: true, 11: false} {
		if got := s.HasSeat(seat); got != want {
			t.Errorf("HasSeat(%d) on 10 seats = %v, want %v", seat, got, want)
		}
	}
	if (reservation.Schedule{}).HasSeat(1) {
		t.Error("a schedule without seats has seat 1")
	}
}

func TestSeatLockKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schedule int64
		seat     int
		want     string
	}{
		{1, 1, "lock:{schedule:1}:seat:1"},
		{7, 3, "lock:{schedule:7}:seat:3"},
		{9007199254740993, 2000, "lock:{schedule:9007199254740993}:seat:2000"},
	}
	for _, tt := range tests {
		if got := reservation.SeatLockKey(tt.schedule, tt.seat); got != tt.want {
			t.Errorf("SeatLockKey(%d, %d) = %q, want %q", tt.schedule, tt.seat, got, tt.want)
		}
	}
}

func TestNewScheduleIsUnstored(t *testing.T) {
	t.Parallel()
	s, err := reservation.NewSchedule(" Hamlet ", startsAt, 3)
	if err != nil {
		t.Fatalf("NewSchedule: %v", err)
	}
	if s.ID() != 0 || s.Title() != "Hamlet" || !s.StartsAt().Equal(startsAt) || s.SeatCount() != 3 {
		t.Errorf("NewSchedule = %+v, want unstored Hamlet with 3 seats", s)
	}
}

func TestUnavailableSeat(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("reserve: %w", &reservation.UnavailableSeat{Reason: reservation.ReasonLocked, RetryAfter: 2 * time.Second})
	if !errors.Is(err, reservation.ErrSeatLocked) {
		t.Errorf("errors.Is(%v, ErrSeatLocked) = false", err)
	}
	if errors.Is(err, reservation.ErrSeatTaken) {
		t.Errorf("errors.Is(%v, ErrSeatTaken) = true", err)
	}
	if !strings.Contains(err.Error(), "2s") {
		t.Errorf("message %q does not say when to retry", err)
	}
}

func TestReservationOwnedBy(t *testing.T) {
	t.Parallel()
	r := reservation.RestoreReservation([16]byte{1}, 1, 1, "alice", startsAt)
	if !r.OwnedBy("alice") || r.OwnedBy("bob") || r.OwnedBy("") || r.OwnedBy("Alice") {
		t.Error("OwnedBy must be true for exactly the user who booked")
	}
}
