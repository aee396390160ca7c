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
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	checkViolation      = "23514"
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

// SeatReserved implements reservation.Repository.
func (s *Store) SeatReserved(ctx context.Context, scheduleID int64, seatID int) (bool, error) {
	var exists bool
	err := s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM reservations WHERE schedule_id = $1 AND seat_id = $2)`,
		scheduleID, seatID).Scan(&exists)
	if err != nil {
		return false, wrap("check seat", err)
	}
	return exists, nil
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

// InsertReservation implements reservation.Repository: one transaction that
// first moves the seat's fence forward (refusing a stale one), then inserts.
// The INSERT selects from schedules so that a seat outside the schedule is
// refused by the same statement, with no window between check and write.
func (s *Store) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	var r reservation.Reservation
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := advanceFence(ctx, tx, nr); err != nil {
			return err
		}
		var (
			id        uuid.UUID
			createdAt time.Time
		)
		err := tx.QueryRow(ctx, `
			INSERT INTO reservations (schedule_id, seat_id, user_id)
			SELECT id, $2, $3 FROM schedules WHERE id = $1 AND $2 BETWEEN 1 AND seat_count
			RETURNING id, created_at`,
			nr.ScheduleID, nr.SeatID, nr.UserID).Scan(&id, &createdAt)
		if err != nil {
			return err
		}
		r = reservation.RestoreReservation(id, nr.ScheduleID, nr.SeatID, nr.UserID, createdAt)
		return nil
	})
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, reservation.ErrStaleFence):
		return reservation.Reservation{}, err
	case isViolation(err, uniqueViolation, "reservations_schedule_seat_key"):
		return reservation.Reservation{}, reservation.ErrSeatTaken
	case isViolation(err, foreignKeyViolation, "reservations_schedule_id_fkey"),
		isViolation(err, foreignKeyViolation, "seat_fences_schedule_id_fkey"):
		return reservation.Reservation{}, reservation.ErrScheduleNotFound
	case isViolation(err, checkViolation, "seat_fences_seat_id_check"), errors.Is(err, pgx.ErrNoRows):
		return reservation.Reservation{}, s.missingSeat(ctx, nr.ScheduleID)
	default:
		return reservation.Reservation{}, wrap("insert reservation", err)
	}
}

// advanceFence records nr.Fence as the seat's fence if it is higher than the
// one stored; the row lock it takes also orders concurrent bookings of the
// seat. ErrStaleFence when a newer holder already wrote.
func advanceFence(ctx context.Context, tx pgx.Tx, nr reservation.NewReservation) error {
	var fence int64
	err := tx.QueryRow(ctx, `
		INSERT INTO seat_fences (schedule_id, seat_id, fence) VALUES ($1, $2, $3)
		ON CONFLICT (schedule_id, seat_id) DO UPDATE SET fence = EXCLUDED.fence
		WHERE seat_fences.fence < EXCLUDED.fence
		RETURNING fence`,
		nr.ScheduleID, nr.SeatID, nr.Fence).Scan(&fence)
	if errors.Is(err, pgx.ErrNoRows) {
		return reservation.ErrStaleFence
	}
	return err
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

// PruneSeatFences deletes the seat fences of schedules that started before
// startedBefore, and returns how many. A fence row exists only next to a
// committed reservation, whose UNIQUE constraint refuses every later write
// to the seat anyway; the fence matters only while a paused holder might
// still write, long over once the show has started.
func (s *Store) PruneSeatFences(ctx context.Context, startedBefore time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM seat_fences f USING schedules s
		WHERE f.schedule_id = s.id AND s.starts_at < $1`, startedBefore)
	if err != nil {
		return 0, wrap("prune seat fences", err)
	}
	return tag.RowsAffected(), nil
}
