package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/reservation"
)

// SQLSTATEs this adapter turns into domain errors.
const (
	uniqueViolation = "23505"
)

// Store implements reservation.Repository on a pgx pool. All SQL is
// parameterised.
type Store struct {
	pool *pgxpool.Pool
}

var _ reservation.Repository = (*Store)(nil)

// NewStore returns a Store on pool; the schema must be migrated.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// CreateSchedule implements reservation.Repository.
func (s *Store) CreateSchedule(ctx context.Context, sc reservation.Schedule) (reservation.Schedule, error) {
	var (
		id       int64
		startsAt time.Time
	)
	// RETURNING the stored time: PostgreSQL keeps microseconds, and the
	// answer must match what a later read returns.
	err := s.pool.QueryRow(ctx,
		`INSERT INTO schedules (title, starts_at, seat_count) VALUES ($1, $2, $3) RETURNING id, starts_at`,
		sc.Title(), sc.StartsAt(), sc.SeatCount()).Scan(&id, &startsAt)
	if err != nil {
		return reservation.Schedule{}, wrap("insert schedule", err)
	}
	return reservation.RestoreSchedule(id, sc.Title(), startsAt, sc.SeatCount()), nil
}

// Schedule implements reservation.Repository.
func (s *Store) Schedule(ctx context.Context, id int64) (reservation.Schedule, error) {
	var (
		title     string
		startsAt  time.Time
		seatCount int
	)
	err := s.pool.QueryRow(ctx,
		`SELECT title, starts_at, seat_count FROM schedules WHERE id = $1`, id).
		Scan(&title, &startsAt, &seatCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	if err != nil {
		return reservation.Schedule{}, wrap("select schedule", err)
	}
	return reservation.RestoreSchedule(id, title, startsAt, seatCount), nil
}

// ReservedSeats implements reservation.Repository.
func (s *Store) ReservedSeats(ctx context.Context, scheduleID int64) ([]int, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT seat_id FROM reservations WHERE schedule_id = $1 ORDER BY seat_id`, scheduleID)
	if err != nil {
		return nil, wrap("select reserved seats", err)
	}
	seats, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, wrap("read reserved seats", err)
	}
	return seats, nil
}

// SeatReservation implements reservation.Repository. The UNIQUE constraint
// on (schedule_id, seat_id) makes it at most one row.
func (s *Store) SeatReservation(ctx context.Context, scheduleID int64, seatID int) (reservation.Reservation, error) {
	var (
		id        uuid.UUID
		userID    string
		createdAt time.Time
	)
	err := s.pool.QueryRow(ctx,
		`SELECT id, user_id, created_at FROM reservations WHERE schedule_id = $1 AND seat_id = $2`,
		scheduleID, seatID).Scan(&id, &userID, &createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return reservation.Reservation{}, reservation.ErrReservationNotFound
	}
	if err != nil {
		return reservation.Reservation{}, wrap("select seat reservation", err)
	}
	return reservation.RestoreReservation(id, scheduleID, seatID, userID, createdAt), nil
}

// bookSeat is a booking in one statement, so one round trip and no
// BEGIN/COMMIT of its own. It finds the seat (a seat outside the schedule
// selects no row) and its fence: the highest of its reservation's (a
// booking records its fence in its row) and of its seat_fences row (kept
// for a seat whose reservation is gone). It inserts only when the seat is
// free and the fence is above the seat's. A concurrent booking of the same
// seat makes the INSERT wait for it on the UNIQUE constraint and then fail
// (23505); seatConflict then tells whether that booking's fence made this
// one stale.
const bookSeat = `
WITH seat AS (
	SELECT s.id,
		(SELECT r.fence FROM reservations r WHERE r.schedule_id = s.id AND r.seat_id = $2) AS booked_fence,
		(SELECT f.fence FROM seat_fences f WHERE f.schedule_id = s.id AND f.seat_id = $2) AS freed_fence
	FROM schedules s WHERE s.id = $1 AND $2 BETWEEN 1 AND s.seat_count
), booked AS (
	INSERT INTO reservations (schedule_id, seat_id, user_id, fence)
	SELECT id, $2, $3, $4 FROM seat
	WHERE booked_fence IS NULL AND coalesce(freed_fence, 0) < $4
	RETURNING id, created_at
)
SELECT (SELECT count(*) FROM seat), (SELECT booked_fence FROM seat), (SELECT freed_fence FROM seat),
	b.id, b.created_at
FROM (SELECT 1) AS one LEFT JOIN booked b ON true`

// InsertReservation implements reservation.Repository in one statement
// (bookSeat). A stale fence is reported before a booked seat: whatever
// the seat's state, a holder that a newer one overtook only learns that.
func (s *Store) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	var (
		seats       int64
		bookedFence *int64
		freedFence  *int64
		id          *uuid.UUID
		createdAt   *time.Time
	)
	err := s.pool.QueryRow(ctx, bookSeat, nr.ScheduleID, nr.SeatID, nr.UserID, nr.Fence).
		Scan(&seats, &bookedFence, &freedFence, &id, &createdAt)
	switch {
	case err == nil && id != nil && createdAt != nil:
		return reservation.RestoreReservation(*id, nr.ScheduleID, nr.SeatID, nr.UserID, *createdAt), nil
	case err == nil && seats == 0:
		return reservation.Reservation{}, s.missingSeat(ctx, nr.ScheduleID)
	case err == nil:
		return reservation.Reservation{}, refusal(nr.Fence, bookedFence, freedFence)
	case isViolation(err, uniqueViolation, "reservations_schedule_seat_key"):
		return reservation.Reservation{}, s.seatConflict(ctx, nr)
	default:
		return reservation.Reservation{}, wrap("insert reservation", err)
	}
}

// refusal says why a booking with fence was not inserted: ErrStaleFence
// when the seat's fence is not below it, else ErrSeatTaken.
func refusal(fence int64, seatFences ...*int64) error {
	for _, f := range seatFences {
		if f != nil && *f >= fence {
			return reservation.ErrStaleFence
		}
	}
	return reservation.ErrSeatTaken
}

// seatConflict settles a booking that lost the UNIQUE constraint to a
// concurrent one: stale if that booking carried a fence not below nr's,
// taken otherwise (and taken if the winner cannot be read).
func (s *Store) seatConflict(ctx context.Context, nr reservation.NewReservation) error {
	var winner int64
	err := s.pool.QueryRow(ctx,
		`SELECT fence FROM reservations WHERE schedule_id = $1 AND seat_id = $2`, nr.ScheduleID, nr.SeatID).Scan(&winner)
	if err != nil {
		return reservation.ErrSeatTaken
	}
	return refusal(nr.Fence, &winner)
}

// missingSeat tells which of schedule or seat was missing after an INSERT
// that selected no row.
func (s *Store) missingSeat(ctx context.Context, scheduleID int64) error {
	if _, err := s.Schedule(ctx, scheduleID); err != nil {
		return err
	}
	return reservation.ErrSeatNotFound
}

// Reservation implements reservation.Repository.
func (s *Store) Reservation(ctx context.Context, id uuid.UUID) (reservation.Reservation, error) {
	var (
		scheduleID int64
		seatID     int
		userID     string
		createdAt  time.Time
	)
	err := s.pool.QueryRow(ctx,
		`SELECT schedule_id, seat_id, user_id, created_at FROM reservations WHERE id = $1`, id).
		Scan(&scheduleID, &seatID, &userID, &createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return reservation.Reservation{}, reservation.ErrReservationNotFound
	}
	if err != nil {
		return reservation.Reservation{}, wrap("select reservation", err)
	}
	return reservation.RestoreReservation(id, scheduleID, seatID, userID, createdAt), nil
}

// Ping checks that PostgreSQL answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// PruneSeatFences deletes the seat_fences rows of schedules that started
// before startedBefore, and returns how many. A booking keeps its fence in
// its own row; seat_fences holds the fence of a seat whose reservation is
// gone (and, from before that column, of bookings). The fence matters only
// while a paused holder might still write, long over once the show has
// started.
func (s *Store) PruneSeatFences(ctx context.Context, startedBefore time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM seat_fences f USING schedules s
		WHERE f.schedule_id = s.id AND s.starts_at < $1`, startedBefore)
	if err != nil {
		return 0, wrap("prune seat fences", err)
	}
	return tag.RowsAffected(), nil
}
