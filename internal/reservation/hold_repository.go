package reservation

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// HoldRepository is the system of record for holds. Holds expire by the
// store's clock: every method decides "active" with it, when it reads.
// Every method wraps a failure to reach the store with ErrUnavailable.
type HoldRepository interface {
	// Schedule returns the schedule or ErrScheduleNotFound.
	Schedule(ctx context.Context, id int64) (Schedule, error)
	// InsertHold stores a hold on h.SeatIDs in one transaction, all or
	// nothing: when any seat has an active reservation or is claimed by
	// another active hold, nothing is stored and the error is a
	// *SeatsUnavailableError listing every such seat. A claim whose hold
	// has expired counts as free and is replaced.
	InsertHold(ctx context.Context, h NewHold) (Hold, error)
	// UnavailableSeats reports which of seatIDs are taken (an active
	// reservation) or held (an active hold, with its time left), in seat
	// order.
	UnavailableSeats(ctx context.Context, scheduleID int64, seatIDs []int) ([]UnavailableSeat, error)
	// Hold returns the hold or ErrHoldNotFound.
	Hold(ctx context.Context, id uuid.UUID) (Hold, error)
	// ConfirmHold books every seat of userID's hold in one transaction and
	// returns the hold's reservations; for a hold already confirmed, the
	// reservations it made. ErrHoldNotFound (no such hold of userID's),
	// ErrHoldExpired, ErrHoldReleased, or a *SeatsUnavailableError when a
	// seat was booked behind the hold's back (only possible when a seat
	// lock failed), with nothing booked.
	ConfirmHold(ctx context.Context, id uuid.UUID, userID string) ([]Reservation, error)
	// ReleaseHold frees the seats of userID's hold at once and returns the
	// seats it freed (none for a released or expired hold, which it leaves
	// as they are). ErrHoldNotFound, ErrHoldConfirmed.
	ReleaseHold(ctx context.Context, id uuid.UUID, userID string) ([]int, error)
	// ExpiredClaims lists up to limit seats whose hold has expired but
	// whose claim is still stored.
	ExpiredClaims(ctx context.Context, limit int) ([]SeatRef, error)
	// DropExpiredClaim deletes the seat's claim if it has expired. freed
	// reports that it did and that the seat has no active reservation
	// (it is available now).
	DropExpiredClaim(ctx context.Context, seat SeatRef) (freed bool, err error)
}

// SeatRef names one seat of one schedule.
type SeatRef struct {
	ScheduleID int64
	SeatID     int
}

// NewHold is a hold about to be written under its seats' locks.
type NewHold struct {
	ScheduleID int64
	// SeatIDs are sorted and distinct; Fences are their seat locks'
	// fencing tokens, in the same order.
	SeatIDs []int
	Fences  []int64
	UserID  string
	// TTL is how long the hold lives, from the store's clock.
	TTL time.Duration
	// MaxLive is how many live holds the user may have, this one included:
	// past it the insert fails with ErrTooManyHolds, however many holds
	// are made at once.
	MaxLive int
}
