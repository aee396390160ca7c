package reservation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/reservation"
)

func TestReservationLookup(t *testing.T) {
	t.Parallel()
	repo := newFakeRepo(&journal{})
	repo.addSchedule(scheduleID, seatCount)
	mine := repo.addReservation(scheduleID, 3, "alice")
	svc := newService(repo)

	t.Run("owner sees it", func(t *testing.T) {
		t.Parallel()
		r, err := svc.Reservation(context.Background(), mine.ID(), "alice")
		if err != nil {
			t.Fatalf("Reservation: %v", err)
		}
		if r != mine {
			t.Errorf("Reservation = %+v, want %+v", r, mine)
		}
	})

	// Another user must not learn that the id exists: the answer is the
	// very error an unknown id gets.
	var errs []error
	for _, tt := range []struct {
		name   string
		id     uuid.UUID
		userID string
	}{
		{"other user", mine.ID(), "bob"},
		{"unknown id", uuid.New(), "alice"},
		{"empty user", mine.ID(), ""},
	} {
		r, err := svc.Reservation(context.Background(), tt.id, tt.userID)
		if err != reservation.ErrReservationNotFound {
			t.Errorf("%s: Reservation error = %v, want exactly ErrReservationNotFound", tt.name, err)
		}
		if r != (reservation.Reservation{}) {
			t.Errorf("%s: Reservation returned %+v with an error", tt.name, r)
		}
		errs = append(errs, err)
	}
	if errs[0] == nil || errs[0].Error() != errs[1].Error() {
		t.Errorf("other user got %q, unknown id got %q: they must be indistinguishable", errs[0], errs[1])
	}
}

func TestReservationLookupUnavailable(t *testing.T) {
	t.Parallel()
	repo := newFakeRepo(&journal{})
	repo.fail["Reservation"] = errDBDown
	svc := newService(repo)

	_, err := svc.Reservation(context.Background(), uuid.New(), "alice")
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("Reservation error = %v, want ErrUnavailable", err)
	}
	if errors.Is(err, reservation.ErrReservationNotFound) {
		t.Errorf("Reservation error = %v: an outage is not a missing reservation", err)
	}
}
