package reservation

import (
	"context"

	"github.com/google/uuid"
)

// Repository is the system of record for schedules and reservations. Every
// method wraps a failure to reach the store with ErrUnavailable.
type Repository interface {
	// CreateSchedule stores s and returns it with its new ID.
	CreateSchedule(ctx context.Context, s Schedule) (Schedule, error)
	// Schedule returns the schedule or ErrScheduleNotFound.
	Schedule(ctx context.Context, id int64) (Schedule, error)
	// ListSchedules returns up to limit schedules with an id below before
	// (every schedule when before is 0), newest (highest id) first.
	ListSchedules(ctx context.Context, before int64, limit int) ([]Schedule, error)
	// OccupiedSeats lists the seats of a schedule that are reserved or
	// claimed by an active hold (expiry decided by the store's clock), in
	// seat order; every other seat is available.
	OccupiedSeats(ctx context.Context, scheduleID int64) ([]Seat, error)
	// SeatReservation returns the seat's active reservation, whoever made
	// it, or ErrReservationNotFound when the seat has none.
	SeatReservation(ctx context.Context, scheduleID int64, seatID int) (Reservation, error)
	// InsertReservation stores the reservation and returns it, in one round
	// trip. In the same atomic step it moves the seat's fence forward to
	// r.Fence and refuses with ErrStaleFence if a booking of the seat
	// carried an equal or higher fence (a refused booking writes no fence,
	// which is enough: a booked seat refuses every later write anyway). It
	// returns ErrSeatTaken when the seat already has a reservation (the
	// UNIQUE constraint decides, whatever the lock did), a *SeatHeldError
	// when an active hold claims the seat, ErrScheduleNotFound or
	// ErrSeatNotFound when there is no such seat.
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
}

// NewReservation is a booking about to be written under a seat lock.
type NewReservation struct {
	ScheduleID int64
	SeatID     int
	UserID     string
	// Fence is the seat lock's fencing token.
	Fence int64
}
