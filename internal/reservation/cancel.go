package reservation

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
)

// cancelWait is how long a cancellation waits for a seat lock held by a
// booking attempt in flight (capped by LOCK_MAX_WAIT): such an attempt is
// refused by PostgreSQL and gives the lock up within a round trip or two.
const cancelWait = 5 * time.Second

// CancelReservation cancels the user's reservation; cancelling a cancelled
// one succeeds again, reporting again (so a retry whose first answer was
// lost gets the same answer). Anyone else gets ErrReservationNotFound.
//
// The seat's lock is taken for the change, lifting a seal (Options.Unseal)
// that marks the seat booked, and released afterwards: with the seal
// gone before PostgreSQL frees the seat, and the lock held across both, no
// request is refused as seat_taken for a seat that is free, and a booking
// attempt in flight is ordered entirely before or after the cancellation.
// The cancellation raises the seat's fence to its own lease's.
//
// Errors: ErrReservationNotFound, *UnavailableSeat (the seat stayed locked
// for cancelWait), ErrUnavailable, or ctx's error.
func (s *Service) CancelReservation(ctx context.Context, id uuid.UUID, userID string) (again bool, err error) {
	r, err := s.Reservation(ctx, id, userID)
	if err != nil {
		return false, err
	}
	if r.Cancelled() {
		return true, nil
	}
	lease, err := s.locker.Acquire(ctx, SeatLockKey(r.ScheduleID(), r.SeatID()),
		lock.Options{TTL: s.lockTTL, Wait: cancelWait, Unseal: true})
	if err != nil {
		return false, lockError(err)
	}
	defer s.endLease(ctx, lease, false)
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	if _, err := s.repo.CancelReservation(write, id, lease.Fence()); err != nil {
		return false, fmt.Errorf("cancel reservation: %w", err)
	}
	s.expect(r.ScheduleID(), []int{r.SeatID()}, SeatAvailable)
	return false, nil
}
