package reservation_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

var startsAt = time.Date(2030, 5, 17, 19, 30, 0, 0, time.UTC)

func newService(repo *fakeRepo) *reservation.Service {
	return reservation.NewService(repo, &fakeLocker{j: repo.j}, reservation.Config{}, nil)
}

func TestCreateScheduleRejectsInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		title     string
		startsAt  time.Time
		seatCount int
		field     string
	}{
		{"empty title", "", startsAt, 10, "title"},
		{"blank title", " \t\n ", startsAt, 10, "title"},
		{"title of 201 runes", strings.Repeat("é", 201), startsAt, 10, "title"},
		{"title of 201 runes after trimming", " " + strings.Repeat("a", 201) + " ", startsAt, 10, "title"},
		{"start in year 10000 in UTC", "Hamlet", time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -23*3600)), 10, "startsAt"},
		{"start in year 0", "Hamlet", time.Date(0, 12, 31, 23, 59, 59, 999_999_999, time.UTC), 10, "startsAt"},
		{"no seats", "Hamlet", startsAt, 0, "seatCount"},
		{"negative seats", "Hamlet", startsAt, -1, "seatCount"},
		{"2001 seats", "Hamlet", startsAt, reservation.MaxSeatCount + 1, "seatCount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			svc := newService(newFakeRepo(j))

			s, err := svc.CreateSchedule(context.Background(), tt.title, tt.startsAt, tt.seatCount)

			var invalid *reservation.InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("CreateSchedule error = %v, want *InvalidError", err)
			}
			if invalid.Field != tt.field {
				t.Errorf("InvalidError.Field = %q, want %q", invalid.Field, tt.field)
			}
			if invalid.Detail == "" || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q: want a detail that names %s", err, tt.field)
			}
			if s.ID() != 0 || s.Title() != "" || s.SeatCount() != 0 {
				t.Errorf("CreateSchedule returned %+v with an error", s)
			}
			if calls := j.list(); len(calls) != 0 {
				t.Errorf("repository calls = %q, want none for invalid input", calls)
			}
		})
	}
}

// A start is kept in UTC to the microsecond, from the first instant of
// year 1 (the zero time.Time, not "no start") to the last microsecond of
// 9999, whatever offset it was given in.
func TestScheduleStartsWithinTheYearsRFC3339Names(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		startsAt  time.Time
		wantStart time.Time
	}{
		{"the zero time", time.Time{}, reservation.EarliestStart},
		{"year 1 by an offset", time.Date(1, 1, 1, 1, 0, 0, 0, time.FixedZone("", 3600)), reservation.EarliestStart},
		{"the last nanosecond of 9999", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), reservation.LatestStart},
		{"an offset", time.Date(2026, 12, 24, 19, 30, 0, 1500, time.FixedZone("", 9*3600)), time.Date(2026, 12, 24, 10, 30, 0, 1000, time.UTC)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := reservation.NewSchedule("Hamlet", tt.startsAt, 5)
			if err != nil {
				t.Fatalf("NewSchedule: %v", err)
			}
			if got := s.StartsAt(); got != tt.wantStart {
				t.Errorf("StartsAt = %v, want %v", got, tt.wantStart)
			}
		})
	}
}

func TestCreateScheduleStores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		title     string
		seatCount int
		wantTitle string
	}{
		{"trims the title", "  Hamlet \n", 100, "Hamlet"},
		{"one seat", "Solo", 1, "Solo"},
		{"2000 seats", "Arena", reservation.MaxSeatCount, "Arena"},
		{"title of 200 runes", " " + strings.Repeat("é", 200) + " ", 5, strings.Repeat("é", 200)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			repo := newFakeRepo(j)
			svc := newService(repo)

			s, err := svc.CreateSchedule(context.Background(), tt.title, startsAt, tt.seatCount)
			if err != nil {
				t.Fatalf("CreateSchedule: %v", err)
			}
			if s.ID() == 0 || s.Title() != tt.wantTitle || !s.StartsAt().Equal(startsAt) || s.SeatCount() != tt.seatCount {
				t.Errorf("CreateSchedule = {id %d title %q startsAt %v seats %d}, want stored id, title %q, %v, %d seats",
					s.ID(), s.Title(), s.StartsAt(), s.SeatCount(), tt.wantTitle, startsAt, tt.seatCount)
			}
			stored, err := repo.Schedule(context.Background(), s.ID())
			if err != nil || !reflect.DeepEqual(stored, s) {
				t.Errorf("repository holds %+v (%v), want %+v", stored, err, s)
			}
		})
	}
}

func TestCreateScheduleUnavailable(t *testing.T) {
	t.Parallel()
	repo := newFakeRepo(&journal{})
	repo.fail["CreateSchedule"] = errDBDown
	svc := newService(repo)

	_, err := svc.CreateSchedule(context.Background(), "Hamlet", startsAt, 10)
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("CreateSchedule error = %v, want ErrUnavailable", err)
	}
}

func TestSeatMap(t *testing.T) {
	t.Parallel()
	repo := newFakeRepo(&journal{})
	repo.addSchedule(scheduleID, 5)
	repo.addSchedule(scheduleID+1, 5)
	repo.addReservation(scheduleID, 5, "alice")
	repo.addReservation(scheduleID, 2, "bob")
	repo.addReservation(scheduleID+1, 1, "carol") // another schedule
	svc := newService(repo)

	seats, err := svc.SeatMap(context.Background(), scheduleID)
	if err != nil {
		t.Fatalf("SeatMap: %v", err)
	}
	want := []reservation.Seat{
		rowASeat(1, reservation.SeatAvailable),
		rowASeat(2, reservation.SeatReserved),
		rowASeat(3, reservation.SeatAvailable),
		rowASeat(4, reservation.SeatAvailable),
		rowASeat(5, reservation.SeatReserved),
	}
	if !slices.Equal(seats, want) {
		t.Errorf("SeatMap =\n %v\nwant\n %v", seats, want)
	}
}

func TestSeatMapIgnoresSeatsOutsideTheSchedule(t *testing.T) {
	t.Parallel()
	repo := newFakeRepo(&journal{})
	repo.addSchedule(scheduleID, 2)
	repo.addReservation(scheduleID, 3, "ghost") // not a seat of a 2-seat schedule
	svc := newService(repo)

	seats, err := svc.SeatMap(context.Background(), scheduleID)
	if err != nil {
		t.Fatalf("SeatMap: %v", err)
	}
	want := []reservation.Seat{rowASeat(1, reservation.SeatAvailable), rowASeat(2, reservation.SeatAvailable)}
	if !slices.Equal(seats, want) {
		t.Errorf("SeatMap = %v, want %v", seats, want)
	}
}

// rowASeat is seat id of a schedule made from a seat count (one row A),
// with its place.
func rowASeat(id int, status reservation.SeatStatus) reservation.Seat {
	return reservation.Seat{ID: id, Status: status, Place: reservation.Place{
		SeatID: id, RowLabel: "A", Number: id, Label: reservation.SeatLabel("A", id), Category: reservation.DefaultCategory}}
}

func TestSeatMapErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		id    int64
		fail  string
		want  error
		calls []string
	}{
		{"unknown schedule", scheduleID + 1, "", reservation.ErrScheduleNotFound, []string{"Schedule"}},
		{"schedule lookup unavailable", scheduleID, "Schedule", reservation.ErrUnavailable, []string{"Schedule"}},
		{"occupied seats unavailable", scheduleID, "OccupiedSeats", reservation.ErrUnavailable, []string{"Schedule", "OccupiedSeats"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			repo := newFakeRepo(j)
			repo.addSchedule(scheduleID, 5)
			if tt.fail != "" {
				repo.fail[tt.fail] = errDBDown
			}
			svc := newService(repo)

			seats, err := svc.SeatMap(context.Background(), tt.id)
			if !errors.Is(err, tt.want) {
				t.Fatalf("SeatMap error = %v, want %v", err, tt.want)
			}
			if seats != nil {
				t.Errorf("SeatMap returned %v with an error", seats)
			}
			if got := j.list(); !slices.Equal(got, tt.calls) {
				t.Errorf("calls = %q, want %q", got, tt.calls)
			}
		})
	}
}
