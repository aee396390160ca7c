package reservation

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

var (
	ErrScheduleNotFound    = errors.New("reservation: schedule not found")
	ErrSeatNotFound        = errors.New("reservation: seat not found")
	ErrReservationNotFound = errors.New("reservation: reservation not found")
	// ErrSeatTaken reports that the seat already has a reservation.
	ErrSeatTaken = errors.New("reservation: seat already reserved")
	// ErrSeatLocked reports that another request holds the seat's lock; the
	// concrete error is an *UnavailableSeat with ReasonLocked.
	ErrSeatLocked = errors.New("reservation: seat locked by another request")
	// ErrStaleFence reports a write refused by the system of record because
	// a newer holder of the seat's lock has written since: this holder's
	// lease ran out while it worked.
	ErrStaleFence = errors.New("reservation: stale lock fence")
	// ErrUnavailable reports that Redis or PostgreSQL could not be reached in
	// time. Adapters wrap their transport failures with it.
	ErrUnavailable = errors.New("reservation: dependency unavailable")
)

// InvalidError reports a value that breaks a domain invariant.
type InvalidError struct {
	Field  string
	Detail string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("reservation: invalid %s: %s", e.Field, e.Detail)
}

// Hold errors.
var (
	ErrHoldNotFound = errors.New("reservation: hold not found")
	// ErrHoldExpired reports a hold whose time ran out before it was
	// confirmed: its seats are free again.
	ErrHoldExpired = errors.New("reservation: hold expired")
	// ErrHoldReleased reports a hold its owner released.
	ErrHoldReleased = errors.New("reservation: hold released")
	// ErrHoldConfirmed reports a hold that was confirmed: its seats are
	// reservations now, to be cancelled one by one.
	ErrHoldConfirmed = errors.New("reservation: hold confirmed")
	// ErrHoldLifetimeExceeded reports an extension refused because the
	// hold has reached its longest life (HOLD_MAX_LIFETIME after it was
	// made): it can be confirmed or released, no longer extended.
	ErrHoldLifetimeExceeded = errors.New("reservation: hold lifetime exceeded")
	// ErrTooManyHolds reports a user who has as many live holds as allowed:
	// confirm or release one first.
	ErrTooManyHolds = errors.New("reservation: too many live holds")
	// ErrSeatHeld reports a seat claimed by an active hold; the concrete
	// error is an *UnavailableSeat with ReasonHeld, whose OwnHold names the
	// hold when it is the booking user's own.
	ErrSeatHeld = errors.New("reservation: seat held")
	// ErrSeatsUnavailable reports a hold refused because at least one of
	// its seats is locked, held or taken; the concrete error is a
	// *SeatsUnavailableError.
	ErrSeatsUnavailable = errors.New("reservation: seats unavailable")
)

// UnavailableReason says why a seat cannot be booked or held.
type UnavailableReason string

const (
	// ReasonLocked: another request holds the seat's lock right now.
	ReasonLocked UnavailableReason = "locked"
	// ReasonHeld: another active hold claims the seat.
	ReasonHeld UnavailableReason = "held"
	// ReasonTaken: the seat has a reservation.
	ReasonTaken UnavailableReason = "taken"
)

// UnavailableSeat is a seat that a booking or a hold could not have. As
// an error (a booking of one seat refused) it is ErrSeatLocked,
// ErrSeatHeld or ErrSeatTaken by its Reason, for errors.Is; a refused hold
// lists one per seat in a *SeatsUnavailableError.
type UnavailableSeat struct {
	// SeatID is the seat, when known (a refused booking's command names
	// it; a lock found held may be any of a hold's seats).
	SeatID int
	Reason UnavailableReason
	// RetryAfter is how long the lock or the hold has left; zero for a
	// taken seat (there is nothing to wait for).
	RetryAfter time.Duration
	// OwnHold is, for a seat refused as held (ReasonHeld) to a booking,
	// the hold that claims it when that hold is the booking user's own:
	// they book the seat by confirming it. uuid.Nil when another customer
	// holds the seat (or the store could not tell).
	OwnHold uuid.UUID
}

func (u *UnavailableSeat) Error() string {
	if u.Reason == ReasonTaken {
		return u.reason().Error()
	}
	return fmt.Sprintf("%v (retry after %s)", u.reason(), u.RetryAfter)
}

// Is makes errors.Is true for the sentinel of u's Reason.
func (u *UnavailableSeat) Is(target error) bool { return target == u.reason() }

func (u *UnavailableSeat) reason() error {
	switch u.Reason {
	case ReasonLocked:
		return ErrSeatLocked
	case ReasonHeld:
		return ErrSeatHeld
	default:
		return ErrSeatTaken
	}
}

// SeatsUnavailableError lists every seat of a refused hold that was not
// available, in seat order.
type SeatsUnavailableError struct {
	Seats []UnavailableSeat
}

func (e *SeatsUnavailableError) Error() string {
	return fmt.Sprintf("%v: %d seat(s)", ErrSeatsUnavailable, len(e.Seats))
}

// Is makes errors.Is(err, ErrSeatsUnavailable) true.
func (e *SeatsUnavailableError) Is(target error) bool { return target == ErrSeatsUnavailable }

// RetryAfter is when every seat may be free again: the longest wait of
// any seat, or zero when a seat is taken (waiting will not help).
func (e *SeatsUnavailableError) RetryAfter() time.Duration {
	var longest time.Duration
	for _, s := range e.Seats {
		if s.Reason == ReasonTaken {
			return 0
		}
		longest = max(longest, s.RetryAfter)
	}
	return longest
}
