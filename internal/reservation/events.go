package reservation

import (
	"context"
	"log/slog"
	"time"
)

// SeatEvents is told of every change of a seat's status: booked, held,
// confirmed, released, expired, cancelled. The use cases call it while
// they hold the seat's lock, after PostgreSQL has the change, so the
// events of one seat come in the order of its changes.
type SeatEvents interface {
	SeatsChanged(ctx context.Context, scheduleID int64, seats []Seat) error
}

// publishTimeout bounds telling SeatEvents, which runs even when the
// request's client has gone: the change happened.
const publishTimeout = time.Second

// noEvents is the SeatEvents of a service that streams nothing.
type noEvents struct{}

func (noEvents) SeatsChanged(context.Context, int64, []Seat) error { return nil }

// publish tells s.events of a change; a failure is logged, never returned:
// the change is made, and a live seat map that missed it is corrected by
// its next snapshot.
func (s *Service) publish(ctx context.Context, scheduleID int64, status SeatStatus, seatIDs ...int) {
	if len(seatIDs) == 0 {
		return
	}
	seats := make([]Seat, len(seatIDs))
	for i, id := range seatIDs {
		seats[i] = Seat{ID: id, Status: status}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := s.events.SeatsChanged(ctx, scheduleID, seats); err != nil {
		s.log.WarnContext(ctx, "seat change not published", slog.Int64("schedule", scheduleID), slog.Any("error", err))
	}
}
