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
	// ReservedSeats lists the reserved seat numbers of a schedule.
	ReservedSeats(ctx context.Context, scheduleID int64) ([]int, error)
	// SeatReservation returns the seat's reservation, whoever made it, or
	// ErrReservationNotFound when the seat is free.
	SeatReservation(ctx context.Context, scheduleID int64, seatID int) (Reservation, error)
	// InsertReservation stores the reservation and returns it, in one round
	// trip. In the same atomic step it moves the seat's fence forward to
	// r.Fence and refuses with ErrStaleFence if a booking of the seat
	// carried an equal or higher fence (a refused booking writes no fence,
	// which is enough: a booked seat refuses every later write anyway). It
	// returns ErrSeatTaken when the seat already has a reservation (the
	// UNIQUE constraint decides, whatever the lock did), ErrScheduleNotFound
	// or ErrSeatNotFound when there is no such seat.
	//
	// The fence and the constraint decide, so nothing about the lock
	// needs to cancel it. When ctx ends, or the connection fails, after the
	// statement was sent, it may have committed although the call returns
	// ctx's error or ErrUnavailable: SeatReservation tells.
	InsertReservation(ctx context.Context, r NewReservation) (Reservation, error)
	// Reservation returns the reservation or ErrReservationNotFound.
	Reservation(ctx context.Context, id uuid.UUID) (Reservation, error)
}

// NewReservation is a booking about to be written under a seat lock.
type NewReservation struct {
	ScheduleID int64
	SeatID     int
	UserID     string
	// Fence is the seat lock's fencing token.
	Fence int64
}
