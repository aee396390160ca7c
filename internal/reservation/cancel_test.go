package reservation_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// A cancellation takes the seat's lock, lifting its seal, writes under it
// with the lease's fence, and releases it (never seals it again).
func TestCancelReservationUnderTheSeatLock(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	r := repo.addReservation(scheduleID, 4, "alice")
	locker := &fakeLocker{j: j, lastFence: 41}
	svc := reservation.NewService(repo, locker, reservation.Config{LockTTL: lockTTL}, nil)

	if _, err := svc.CancelReservation(context.Background(), r.ID(), "bob"); err != reservation.ErrReservationNotFound {
		t.Fatalf("another user's cancel = %v, want ErrReservationNotFound", err)
	}
	if again, err := svc.CancelReservation(context.Background(), r.ID(), "alice"); err != nil || again {
		t.Fatalf("CancelReservation = again %v, %v; want a first cancellation", again, err)
	}
	want := []string{"Reservation", "Reservation", acquired(4), "CancelReservation", released(4)}
	if got := j.list(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if opts := locker.options(); len(opts) != 1 || !opts[0].Unseal || opts[0].Wait <= 0 {
		t.Errorf("Acquire options = %+v, want one Unseal acquire that may wait", opts)
	}
	if f := repo.fence(scheduleID, 4); f != 42 {
		t.Errorf("seat fence after cancel = %d, want the lease's 42", f)
	}

	// Cancelled already: nothing to lock, nothing to write.
	before := len(j.list())
	if again, err := svc.CancelReservation(context.Background(), r.ID(), "alice"); err != nil || !again {
		t.Errorf("cancelling again = again %v, %v; want again, nil", again, err)
	}
	if got := j.list()[before:]; !slices.Equal(got, []string{"Reservation"}) {
		t.Errorf("cancelling again made calls %q, want only the look-up", got)
	}
}

func TestCancelReservationErrors(t *testing.T) {
	t.Parallel()
	t.Run("seat stays locked", func(t *testing.T) {
		t.Parallel()
		j := &journal{}
		repo := newFakeRepo(j)
		r := repo.addReservation(scheduleID, 4, "alice")
		locker := &fakeLocker{j: j, acquireErr: &lock.HeldError{Remaining: 3e9}}
		_, err := reservation.NewService(repo, locker, reservation.Config{}, nil).CancelReservation(context.Background(), r.ID(), "alice")
		if !errors.Is(err, reservation.ErrSeatLocked) {
			t.Errorf("error = %v, want ErrSeatLocked", err)
		}
		if got, _ := repo.Reservation(context.Background(), r.ID()); got.Cancelled() {
			t.Error("cancelled without the seat lock")
		}
	})
	t.Run("store down", func(t *testing.T) {
		t.Parallel()
		j := &journal{}
		repo := newFakeRepo(j)
		r := repo.addReservation(scheduleID, 4, "alice")
		repo.fail["CancelReservation"] = errDBDown
		locker := &fakeLocker{j: j}
		_, err := reservation.NewService(repo, locker, reservation.Config{}, nil).CancelReservation(context.Background(), r.ID(), "alice")
		if !errors.Is(err, reservation.ErrUnavailable) {
			t.Errorf("error = %v, want ErrUnavailable", err)
		}
		if locker.releases() != 1 {
			t.Errorf("lock released %d times, want once", locker.releases())
		}
	})
}
