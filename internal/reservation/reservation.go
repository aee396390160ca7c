package reservation

import (
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Reservation is one user's booking of one seat of one schedule.
type Reservation struct {
	id         uuid.UUID
	scheduleID int64
	seatID     int
	userID     string
	createdAt  time.Time
	// cancelledAt is zero while the reservation is active.
	cancelledAt time.Time
}

// RestoreReservation rebuilds a stored reservation. Only repositories call it.
func RestoreReservation(id uuid.UUID, scheduleID int64, seatID int, userID string, createdAt time.Time) Reservation {
	return Reservation{id: id, scheduleID: scheduleID, seatID: seatID, userID: userID, createdAt: createdAt}
}

func (r Reservation) ID() uuid.UUID        { return r.id }
func (r Reservation) ScheduleID() int64    { return r.scheduleID }
func (r Reservation) SeatID() int          { return r.seatID }
func (r Reservation) UserID() string       { return r.userID }
func (r Reservation) CreatedAt() time.Time { return r.createdAt }

// CancelledAt is when the reservation was cancelled; zero while active.
func (r Reservation) CancelledAt() time.Time { return r.cancelledAt }

// Cancelled reports whether the reservation was cancelled.
func (r Reservation) Cancelled() bool { return !r.cancelledAt.IsZero() }

// WithCancelledAt returns r cancelled at t. Only repositories call it.
func (r Reservation) WithCancelledAt(t time.Time) Reservation {
	r.cancelledAt = t
	return r
}

// OwnedBy reports whether userID made this reservation.
func (r Reservation) OwnedBy(userID string) bool { return r.userID == userID }

// SeatLockKey is the lock key of one seat, the name operators look up and
// clear with redis-cli; the hash tag keeps all keys of a schedule in one
// Redis Cluster slot.
func SeatLockKey(scheduleID int64, seatID int) string {
	// Appended, not fmt.Sprintf: every booking request makes one.
	b := make([]byte, 0, 48)
	b = append(b, "lock:{schedule:"...)
	b = strconv.AppendInt(b, scheduleID, 10)
	b = append(b, "}:seat:"...)
	b = strconv.AppendInt(b, int64(seatID), 10)
	return string(b)
}

// SeatStatus is what the seat map says of one seat.
type SeatStatus string

const (
	SeatAvailable SeatStatus = "available"
	SeatReserved  SeatStatus = "reserved"
	// SeatHeld is a seat claimed by an unexpired, unconfirmed hold.
	SeatHeld SeatStatus = "held"
)

// Seat is one entry of a seat map.
type Seat struct {
	ID     int
	Status SeatStatus
	// Place is where the seat is in its schedule's layout (set by
	// Service.SeatMap).
	Place Place
}

// OccupiedSeat is a seat that is reserved or held, by its id: what seat
// images are loaded from. A seat image of a sold-out stadium loads 80,000
// of them, so it is a fifth of a Seat's size: no Place.
type OccupiedSeat struct {
	ID     int
	Status SeatStatus
}
