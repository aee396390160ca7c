package reservation

import "time"

// SeatChange is one committed change of a seat's status, as the store's
// outbox records it in the transaction that made it, for the live seat
// map.
type SeatChange struct {
	// Pos is the change's position: for one seat, positions follow the
	// order of its commits.
	Pos        int64
	ScheduleID int64
	SeatID     int
	Status     SeatStatus
	CreatedAt  time.Time
}
