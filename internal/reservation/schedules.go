package reservation

import (
	"context"
	"fmt"
	"time"
)

// CreateSchedule validates and stores a new schedule. Errors: *InvalidError,
// ErrUnavailable.
func (s *Service) CreateSchedule(ctx context.Context, title string, startsAt time.Time, seatCount int) (Schedule, error) {
	schedule, err := NewSchedule(title, startsAt, seatCount)
	if err != nil {
		return Schedule{}, err
	}
	stored, err := s.repo.CreateSchedule(ctx, schedule)
	if err != nil {
		return Schedule{}, fmt.Errorf("create schedule: %w", err)
	}
	return stored, nil
}

// SeatMap lists every seat of a schedule in seat order with its status.
// Errors: ErrScheduleNotFound, ErrUnavailable.
func (s *Service) SeatMap(ctx context.Context, scheduleID int64) ([]Seat, error) {
	schedule, err := s.schedules.schedule(ctx, scheduleID)
	if err != nil {
		return nil, fmt.Errorf("load schedule: %w", err)
	}
	reserved, err := s.repo.ReservedSeats(ctx, scheduleID)
	if err != nil {
		return nil, fmt.Errorf("list reserved seats: %w", err)
	}
	seats := make([]Seat, schedule.SeatCount())
	for i := range seats {
		seats[i] = Seat{ID: i + 1, Status: SeatAvailable}
	}
	for _, id := range reserved {
		if schedule.HasSeat(id) {
			seats[id-1].Status = SeatReserved
		}
	}
	return seats, nil
}
