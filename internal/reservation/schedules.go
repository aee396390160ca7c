package reservation

import (
	"context"
	"errors"
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
	return s.storeSchedule(ctx, schedule)
}

// CreateLaidOutSchedule is CreateSchedule for a venue of rows or of
// sections.
func (s *Service) CreateLaidOutSchedule(ctx context.Context, title string, startsAt time.Time, layout Layout) (Schedule, error) {
	var (
		schedule Schedule
		err      error
	)
	if layout.Sectioned() {
		schedule, err = NewSectionedSchedule(title, startsAt, layout.Sections())
	} else {
		schedule, err = NewLaidOutSchedule(title, startsAt, layout.Rows())
	}
	if err != nil {
		return Schedule{}, err
	}
	return s.storeSchedule(ctx, schedule)
}

func (s *Service) storeSchedule(ctx context.Context, schedule Schedule) (Schedule, error) {
	stored, err := s.repo.CreateSchedule(ctx, schedule)
	if err != nil {
		return Schedule{}, fmt.Errorf("create schedule: %w", err)
	}
	return stored, nil
}

// SeatMap lists every seat of a schedule in seat order with its status:
// available, held (an unexpired hold claims it) or reserved.
// Errors: ErrScheduleNotFound, ErrUnavailable.
func (s *Service) SeatMap(ctx context.Context, scheduleID int64) ([]Seat, error) {
	schedule, err := s.schedules.schedule(ctx, scheduleID)
	if err != nil {
		return nil, fmt.Errorf("load schedule: %w", err)
	}
	occupied, err := s.repo.OccupiedSeats(ctx, scheduleID)
	if err != nil {
		return nil, fmt.Errorf("list occupied seats: %w", err)
	}
	layout := schedule.Layout()
	seats := make([]Seat, schedule.SeatCount())
	for i := range seats {
		place, _ := layout.Place(i + 1)
		seats[i] = Seat{ID: i + 1, Status: SeatAvailable, Place: place}
	}
	for _, o := range occupied {
		if schedule.HasSeat(o.ID) {
			seats[o.ID-1].Status = o.Status
		}
	}
	return seats, nil
}

// Limits of a schedule list page.
const (
	DefaultSchedulePage = 20
	MaxSchedulePage     = 100
)

// SchedulePage is one page of the schedule list.
type SchedulePage struct {
	Schedules []Schedule
	// Next is the cursor of the next page (the last schedule's id), or 0
	// on the last page.
	Next int64
}

// Schedules lists schedules newest first (by id, which grows with every
// schedule created), limit at a time, after the cursor after (0 for the
// first page). Errors: *InvalidError for each of limit outside
// 1..MaxSchedulePage and after negative (joined), ErrUnavailable.
func (s *Service) Schedules(ctx context.Context, after int64, limit int) (SchedulePage, error) {
	var errs []error
	if limit < 1 || limit > MaxSchedulePage {
		errs = append(errs, &InvalidError{Field: "limit", Detail: fmt.Sprintf("must be between 1 and %d", MaxSchedulePage)})
	}
	if after < 0 {
		errs = append(errs, &InvalidError{Field: "after", Detail: "must be a schedule id"})
	}
	if len(errs) > 0 {
		return SchedulePage{}, errors.Join(errs...)
	}
	// One more than asked tells whether another page follows.
	list, err := s.repo.ListSchedules(ctx, after, limit+1)
	if err != nil {
		return SchedulePage{}, fmt.Errorf("list schedules: %w", err)
	}
	page := SchedulePage{Schedules: list}
	if len(list) > limit {
		page.Schedules = list[:limit]
		page.Next = list[limit-1].ID()
	}
	return page, nil
}

// Schedule returns one schedule. Errors: ErrScheduleNotFound,
// ErrUnavailable.
func (s *Service) Schedule(ctx context.Context, id int64) (Schedule, error) {
	schedule, err := s.schedules.schedule(ctx, id)
	if err != nil {
		return Schedule{}, fmt.Errorf("load schedule: %w", err)
	}
	return schedule, nil
}
