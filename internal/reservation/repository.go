package reservation

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Repository is the system of record for schedules, reservations and holds,
// one port per aggregate (the use cases that need only one take only it).
// Holds expire by the store's clock: every method decides "active" with it,
// when it reads. Every method wraps a failure to reach the store with
// ErrUnavailable.
type Repository interface {
	ScheduleStore
	SeatStore
	ReservationStore
	HoldStore
}

// ScheduleStore keeps the schedules.
type ScheduleStore interface {
	// CreateSchedule stores s and returns it with its new ID.
	CreateSchedule(ctx context.Context, s Schedule) (Schedule, error)
	// Schedule returns the schedule or ErrScheduleNotFound.
	Schedule(ctx context.Context, id int64) (Schedule, error)
	// ListSchedules returns up to limit schedules with an id below before
	// (every schedule when before is 0), newest (highest id) first.
	ListSchedules(ctx context.Context, before int64, limit int) ([]Schedule, error)
}

// SeatStore tells which seats are taken or claimed, and drops the claims
// of expired holds.
type SeatStore interface {
	// OccupiedSeats lists the seats of a schedule that are reserved or
	// claimed by an active hold (expiry decided by the store's clock), in
	// seat order; every other seat is available.
	OccupiedSeats(ctx context.Context, scheduleID int64) ([]OccupiedSeat, error)
	// UnavailableSeats reports which of seatIDs are taken (an active
	// reservation) or held (an active hold, with its time left), in seat
	// order.
	UnavailableSeats(ctx context.Context, scheduleID int64, seatIDs []int) ([]UnavailableSeat, error)
	// ExpiredClaims lists up to limit seats whose hold has expired but
	// whose claim is still stored.
	ExpiredClaims(ctx context.Context, limit int) ([]SeatRef, error)
	// DropExpiredClaim deletes the seat's claim if it has expired. freed
	// reports that it did and that the seat has no active reservation
	// (it is available now).
	DropExpiredClaim(ctx context.Context, seat SeatRef) (freed bool, err error)
}

// ReservationStore keeps the reservations.
type ReservationStore interface {
	// SeatReservation returns the seat's active reservation, whoever made
	// it, or ErrReservationNotFound when the seat has none.
	SeatReservation(ctx context.Context, scheduleID int64, seatID int) (Reservation, error)
	// InsertReservation stores the reservation and returns it, in one round
	// trip. In the same atomic step it moves the seat's fence forward to
	// r.Fence and refuses with ErrStaleFence if a booking of the seat
	// carried an equal or higher fence (a refused booking writes no fence,
	// which is enough: a booked seat refuses every later write anyway). It
	// returns ErrSeatTaken when the seat already has another user's
	// reservation (the UNIQUE constraint decides, whatever the lock did),
	// as a *SeatTakenError naming that user when it can (the seat is then
	// sealed with their note),
	// the reservation itself when it is r.UserID's (the owner's retry), an
	// *UnavailableSeat with ReasonHeld when an active hold claims the seat
	// (a hold and a booking of one seat take the same claim row, so the
	// store orders them whatever the lock did; its OwnHold is that hold
	// when it is r.UserID's own), ErrScheduleNotFound or
	// ErrSeatNotFound when there is no such seat. The seat's change is
	// recorded for the seat events in the same statement.
	//
	// The fence and the constraint decide, so nothing about the lock
	// needs to cancel it. When ctx ends, or the connection fails, after the
	// statement was sent, it may have committed although the call returns
	// ctx's error or ErrUnavailable: SeatReservation tells.
	InsertReservation(ctx context.Context, r NewReservation) (Reservation, error)
	// Reservation returns the reservation, active or cancelled, or
	// ErrReservationNotFound.
	Reservation(ctx context.Context, id uuid.UUID) (Reservation, error)
	// CancelReservation marks the reservation cancelled (a cancelled one
	// stays as it was) and returns it. In the same step it raises the
	// seat's fence to fence, the cancelling lease's, so a holder older
	// than the cancellation can never book the seat afterwards.
	// ErrReservationNotFound for an unknown id.
	CancelReservation(ctx context.Context, id uuid.UUID, fence int64) (Reservation, error)
	// ReservationByClaim returns the reservation that the request with
	// the idempotency claim made, or ErrReservationNotFound.
	ReservationByClaim(ctx context.Context, claim uuid.UUID) (Reservation, error)
}

// HoldStore keeps the holds and, with them, their seats' claims.
type HoldStore interface {
	// InsertHold stores a hold on h.SeatIDs in one transaction, all or
	// nothing: when any seat has an active reservation or is claimed by
	// another active hold, nothing is stored and the error is a
	// *SeatsUnavailableError listing every such seat. A claim whose hold
	// has expired counts as free and is replaced.
	InsertHold(ctx context.Context, h NewHold) (Hold, error)
	// Hold returns the hold or ErrHoldNotFound.
	Hold(ctx context.Context, id uuid.UUID) (Hold, error)
	// HoldByClaim returns the hold that the request with the idempotency
	// claim made, or ErrHoldNotFound.
	HoldByClaim(ctx context.Context, claim uuid.UUID) (Hold, error)
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
	// ExtendHold moves the expiry of userID's active hold, and of every
	// claim of its seats with it, in one transaction decided by the
	// store's clock: see HoldExtension. ErrHoldNotFound (no such hold of
	// userID's), ErrHoldExpired (also when a claim was lost to expiry
	// before the extension could lock it; nothing changes then),
	// ErrHoldReleased, ErrHoldConfirmed, ErrHoldLifetimeExceeded.
	ExtendHold(ctx context.Context, ext HoldExtension) (Hold, error)
}

// NewReservation is a booking about to be written under a seat lock.
type NewReservation struct {
	ScheduleID int64
	SeatID     int
	UserID     string
	// Fence is the seat lock's fencing token.
	Fence int64
	// Claim is the idempotency claim of the request (uuid.Nil: none),
	// stored with the reservation in the same statement.
	Claim uuid.UUID
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
	// Claim is the idempotency claim of the request (uuid.Nil: none),
	// stored with the hold in the same transaction.
	Claim uuid.UUID
}
