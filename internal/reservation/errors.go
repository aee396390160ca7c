package reservation

import (
	"errors"
	"fmt"
	"time"
)

var (
	ErrScheduleNotFound    = errors.New("reservation: schedule not found")
	ErrSeatNotFound        = errors.New("reservation: seat not found")
	ErrReservationNotFound = errors.New("reservation: reservation not found")
	// ErrSeatTaken reports that the seat already has a reservation.
	ErrSeatTaken = errors.New("reservation: seat already reserved")
	// ErrSeatLocked reports that another request holds the seat's lock; the
	// concrete error is a *SeatLockedError.
	ErrSeatLocked = errors.New("reservation: seat locked by another request")
	// ErrStaleFence reports a write refused by the system of record because
	// a newer holder of the seat's lock has written since: this holder's
	// lease ran out while it worked.
	ErrStaleFence = errors.New("reservation: stale lock fence")
	// ErrUnavailable reports that Redis or PostgreSQL could not be reached in
	// time. Adapters wrap their transport failures with it.
	ErrUnavailable = errors.New("reservation: dependency unavailable")
)

// SeatLockedError is ErrSeatLocked with the lock holder's remaining TTL, from
// which clients learn when to retry.
type SeatLockedError struct {
	RetryAfter time.Duration
}

func (e *SeatLockedError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", ErrSeatLocked, e.RetryAfter)
}

// Is makes errors.Is(err, ErrSeatLocked) true.
func (e *SeatLockedError) Is(target error) bool { return target == ErrSeatLocked }

// InvalidError reports a value that breaks a domain invariant.
type InvalidError struct {
	Field  string
	Detail string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("reservation: invalid %s: %s", e.Field, e.Detail)
}
