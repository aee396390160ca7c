package postgres_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/reservation"
)

func TestCreateScheduleRoundTrip(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	paris := time.FixedZone("CEST", 2*60*60)
	tests := []struct {
		name      string
		title     string
		startsAt  time.Time
		seatCount int
	}{
		{"plain", "Hamlet", startsAt, 10},
		{"multibyte title, other zone, microseconds", "Hamlet – Prinz von Dänemark ✓", time.Date(2030, 5, 17, 21, 30, 0, 123456000, paris), 1},
		{"longest title, most seats", strings.Repeat("é", reservation.MaxTitleRunes), startsAt, reservation.MaxSeatCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			s, err := reservation.NewSchedule(tt.title, tt.startsAt, tt.seatCount)
			if err != nil {
				t.Fatal(err)
			}
			created, err := store.CreateSchedule(ctx, s)
			if err != nil {
				t.Fatalf("CreateSchedule: %v", err)
			}
			if created.ID() <= 0 {
				t.Errorf("CreateSchedule ID = %d, want a positive id", created.ID())
			}
			got, err := store.Schedule(ctx, created.ID())
			if err != nil {
				t.Fatalf("Schedule(%d): %v", created.ID(), err)
			}
			if got.ID() != created.ID() || got.Title() != tt.title || got.SeatCount() != tt.seatCount {
				t.Errorf("Schedule = {id %d title %q seats %d}, want {id %d title %q seats %d}",
					got.ID(), got.Title(), got.SeatCount(), created.ID(), tt.title, tt.seatCount)
			}
			if !got.StartsAt().Equal(tt.startsAt) || !created.StartsAt().Equal(tt.startsAt) {
				t.Errorf("startsAt: created %v, read back %v, want %v", created.StartsAt(), got.StartsAt(), tt.startsAt)
			}
		})
	}
}

// CreateSchedule must return the schedule as stored. PostgreSQL keeps
// microseconds, so a start time with nanoseconds is rounded on the way in;
// the caller (and the HTTP response of the create) must see the same value
// a later read returns.
func TestCreateScheduleReturnsStoredStartsAt(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	withNanos := time.Date(2030, 5, 17, 19, 30, 0, 123456789, time.UTC)
	s, err := reservation.NewSchedule("Hamlet", withNanos, 10)
	if err != nil {
		t.Fatal(err)
	}

	created, err := store.CreateSchedule(ctx, s)
	if err != nil {
		t.Fatalf("CreateSchedule: %v", err)
	}
	got, err := store.Schedule(ctx, created.ID())
	if err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	if !created.StartsAt().Equal(got.StartsAt()) {
		t.Errorf("CreateSchedule returned startsAt %s but PostgreSQL stored %s: "+
			"Store.CreateSchedule echoes its input instead of the stored value "+
			"(use RETURNING starts_at, or truncate to microseconds in the domain)",
			created.StartsAt().Format(time.RFC3339Nano), got.StartsAt().Format(time.RFC3339Nano))
	}
}

func TestScheduleUnknownID(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	for _, id := range []int64{0, 1, -1, 1 << 62} {
		_, err := store.Schedule(testContext(t), id)
		if !errors.Is(err, reservation.ErrScheduleNotFound) {
			t.Errorf("Schedule(%d) error = %v, want ErrScheduleNotFound", id, err)
		}
		if errors.Is(err, reservation.ErrUnavailable) {
			t.Errorf("Schedule(%d) error = %v: a missing row is not an outage", id, err)
		}
	}
}

func TestInsertReservationThenSameSeatIsTaken(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)

	r, err := insert(ctx, store, s.ID(), 3, "alice", nextFence())
	if err != nil {
		t.Fatalf("first InsertReservation: %v", err)
	}
	if r.ID() == uuid.Nil || r.ScheduleID() != s.ID() || r.SeatID() != 3 || r.UserID() != "alice" || r.CreatedAt().IsZero() {
		t.Errorf("InsertReservation = {id %v schedule %d seat %d user %q at %v}, want a stored reservation of seat 3 for alice",
			r.ID(), r.ScheduleID(), r.SeatID(), r.UserID(), r.CreatedAt())
	}

	// A newer fence (a later, legitimate holder): only the UNIQUE
	// constraint can refuse it.
	_, err = insert(ctx, store, s.ID(), 3, "bob", nextFence())
	if !errors.Is(err, reservation.ErrSeatTaken) {
		t.Fatalf("second InsertReservation error = %v, want ErrSeatTaken from the UNIQUE constraint", err)
	}
	if errors.Is(err, reservation.ErrUnavailable) {
		t.Errorf("second InsertReservation error = %v: a conflict is not an outage", err)
	}
	// The refusal names the seat's owner, whose note the seat is sealed
	// with.
	var taken *reservation.SeatTakenError
	if !errors.As(err, &taken) || taken.Owner != "alice" {
		t.Errorf("second InsertReservation error = %v, want a *SeatTakenError naming alice", err)
	}
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT user_id FROM reservations WHERE schedule_id = $1 AND seat_id = 3`, s.ID()).Scan(&owner); err != nil || owner != "alice" {
		t.Errorf("seat 3 belongs to %q (%v), want alice", owner, err)
	}
}

func TestInsertReservationSameSeatOtherSchedule(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	a := mustSchedule(t, store, 5)
	b := mustSchedule(t, store, 5)

	mustReserve(t, store, a.ID(), 1, "alice")
	mustReserve(t, store, b.ID(), 1, "alice")

	if na, nb := countReservations(t, pool, a.ID()), countReservations(t, pool, b.ID()); na != 1 || nb != 1 {
		t.Errorf("reservations per schedule = %d, %d; want 1, 1: seat uniqueness is per schedule", na, nb)
	}
}

func TestInsertReservationMissingSeat(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	tests := []struct {
		name       string
		scheduleID int64
		seatID     int
		want       error
	}{
		{"seat 0", s.ID(), 0, reservation.ErrSeatNotFound},
		{"negative seat", s.ID(), -1, reservation.ErrSeatNotFound},
		{"seat after the last", s.ID(), 11, reservation.ErrSeatNotFound},
		{"unknown schedule", s.ID() + 1000, 1, reservation.ErrScheduleNotFound},
		{"unknown schedule, seat 0", s.ID() + 1000, 0, reservation.ErrScheduleNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := insert(testContext(t), store, tt.scheduleID, tt.seatID, "alice", nextFence())
			if !errors.Is(err, tt.want) {
				t.Errorf("InsertReservation(%d, %d) error = %v, want %v", tt.scheduleID, tt.seatID, err, tt.want)
			}
		})
	}
	if total := countRows(t, pool, "reservations"); total != 0 {
		t.Errorf("reservations = %d, want none", total)
	}
	// Their fence updates were rolled back with them.
	if total := countRows(t, pool, "seat_fences"); total != 0 {
		t.Errorf("seat_fences rows = %d, want none after failed bookings", total)
	}
	// The boundary seat itself is bookable.
	mustReserve(t, store, s.ID(), 10, "alice")
}

func TestOccupiedSeatsOrdered(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	other := mustSchedule(t, store, 10)
	empty := mustSchedule(t, store, 10)
	for _, seat := range []int{7, 1, 10, 3} {
		mustReserve(t, store, s.ID(), seat, "alice")
	}
	cancelled := mustReserve(t, store, s.ID(), 5, "alice")
	if _, err := store.CancelReservation(ctx, cancelled.ID(), nextFence()); err != nil {
		t.Fatal(err)
	}
	mustHold(t, store, s.ID(), "bob", time.Minute, 4, 2)
	mustHold(t, store, s.ID(), "carol", time.Millisecond, 6) // expired by the time it is read
	mustReserve(t, store, other.ID(), 2, "bob")
	time.Sleep(5 * time.Millisecond)

	got, err := store.OccupiedSeats(ctx, s.ID())
	if err != nil {
		t.Fatalf("OccupiedSeats: %v", err)
	}
	want := []reservation.OccupiedSeat{
		{ID: 1, Status: reservation.SeatReserved}, {ID: 2, Status: reservation.SeatHeld},
		{ID: 3, Status: reservation.SeatReserved}, {ID: 4, Status: reservation.SeatHeld},
		{ID: 7, Status: reservation.SeatReserved}, {ID: 10, Status: reservation.SeatReserved},
	}
	if !slices.Equal(got, want) {
		t.Errorf("OccupiedSeats = %v, want %v", got, want)
	}
	for _, id := range []int64{empty.ID(), empty.ID() + 1000} {
		got, err := store.OccupiedSeats(ctx, id)
		if err != nil || len(got) != 0 {
			t.Errorf("OccupiedSeats(%d) = %v, %v; want none", id, got, err)
		}
	}
}

func TestReservationByID(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	want := mustReserve(t, store, s.ID(), 2, "alice")

	got, err := store.Reservation(ctx, want.ID())
	if err != nil {
		t.Fatalf("Reservation: %v", err)
	}
	if got.ID() != want.ID() || got.ScheduleID() != s.ID() || got.SeatID() != 2 || got.UserID() != "alice" ||
		!got.CreatedAt().Equal(want.CreatedAt()) {
		t.Errorf("Reservation = %+v, want %+v", got, want)
	}

	_, err = store.Reservation(ctx, uuid.New())
	if !errors.Is(err, reservation.ErrReservationNotFound) {
		t.Errorf("Reservation(unknown) error = %v, want ErrReservationNotFound", err)
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	if err := store.Ping(testContext(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
