package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock/batch"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Store implements reservation.Repository on a pgx pool. All SQL is
// parameterised. Concurrent bookings are written in groups (see
// group_commit.go).
type Store struct {
	pool    retryPool
	writers int
	group   *batch.Queue[*pendingBooking]
	// tracer, when set, makes a span of each group write (WithTracer).
	tracer trace.Tracer
	// events, when set, renders the webhook events written with each
	// change (WithEvents); nil: none is written.
	events EventData
}

var _ reservation.Repository = (*Store)(nil)

// StoreOption tunes NewStore.
type StoreOption func(*Store)

// WithGroupWriters sets how many groups of bookings may be written at once
// (DefaultGroupWriters); 0 turns group commit off: every booking is then a
// statement and a commit of its own.
func WithGroupWriters(n int) StoreOption { return func(s *Store) { s.writers = n } }

// WithTracer makes a span of each group write of bookings (see
// group_commit.go); without it, none is made.
func WithTracer(t trace.Tracer) StoreOption { return func(s *Store) { s.tracer = t } }

// NewStore returns a Store on pool; the schema must be migrated.
func NewStore(pool *pgxpool.Pool, opts ...StoreOption) *Store {
	s := &Store{pool: newRetryPool(pool), writers: DefaultGroupWriters}
	for _, o := range opts {
		o(s)
	}
	s.group = newGroupQueue(s, s.writers)
	return s
}

// CreateSchedule implements reservation.Repository.
func (s *Store) CreateSchedule(ctx context.Context, sc reservation.Schedule) (reservation.Schedule, error) {
	var (
		id       int64
		startsAt time.Time
	)
	layout, err := layoutJSON(sc.Layout())
	if err != nil {
		return reservation.Schedule{}, err
	}
	// RETURNING the stored time: PostgreSQL keeps microseconds, and the
	// answer must match what a later read returns.
	err = s.pool.QueryRow(ctx,
		`INSERT INTO schedules (title, starts_at, seat_count, layout) VALUES ($1, $2, $3, $4) RETURNING id, starts_at`,
		sc.Title(), sc.StartsAt(), sc.SeatCount(), layout).Scan(&id, &startsAt)
	if err != nil {
		return reservation.Schedule{}, wrapText("insert schedule", "title", err)
	}
	return reservation.RestoreLaidOutSchedule(id, sc.Title(), startsAt, sc.Layout()), nil
}

// Schedule implements reservation.Repository.
func (s *Store) Schedule(ctx context.Context, id int64) (reservation.Schedule, error) {
	var (
		title     string
		startsAt  time.Time
		seatCount int
		layout    []byte
	)
	err := s.pool.QueryRow(ctx,
		`SELECT title, starts_at, seat_count, layout FROM schedules WHERE id = $1`, id).
		Scan(&title, &startsAt, &seatCount, &layout)
	if err != nil {
		return oneRow(reservation.Schedule{}, err, reservation.ErrScheduleNotFound, "select schedule")
	}
	return restoreSchedule(id, title, startsAt, seatCount, layout)
}

// ListSchedules implements reservation.Repository.
func (s *Store) ListSchedules(ctx context.Context, before int64, limit int) ([]reservation.Schedule, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := s.pool.Query(ctx,
		`SELECT id, title, starts_at, seat_count, layout FROM schedules WHERE id < $1 ORDER BY id DESC LIMIT $2`, before, limit)
	if err != nil {
		return nil, wrap("list schedules", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.Schedule, error) {
		var (
			id        int64
			title     string
			startsAt  time.Time
			seatCount int
			layout    []byte
		)
		if err := row.Scan(&id, &title, &startsAt, &seatCount, &layout); err != nil {
			return reservation.Schedule{}, err
		}
		return restoreSchedule(id, title, startsAt, seatCount, layout)
	})
	if err != nil {
		return nil, wrap("read schedules", err)
	}
	return list, nil
}

// OccupiedSeats implements reservation.Repository: active reservations and
// unexpired hold claims, by the database's clock.
func (s *Store) OccupiedSeats(ctx context.Context, scheduleID int64) ([]reservation.OccupiedSeat, error) {
	// A flag, not the status's name: a name would be a string allocated
	// for every row, and a sold-out stadium has 80,000.
	rows, err := s.pool.Query(ctx, `
		SELECT seat_id, true FROM reservations WHERE schedule_id = $1 AND cancelled_at IS NULL
		UNION ALL
		SELECT seat_id, false FROM seat_claims WHERE schedule_id = $1 AND expires_at > now()
		ORDER BY 1`, scheduleID)
	if err != nil {
		return nil, wrap("select occupied seats", err)
	}
	seats, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.OccupiedSeat, error) {
		seat := reservation.OccupiedSeat{Status: reservation.SeatHeld}
		var reserved bool
		err := row.Scan(&seat.ID, &reserved)
		if reserved {
			seat.Status = reservation.SeatReserved
		}
		return seat, err
	})
	if err != nil {
		return nil, wrap("read occupied seats", err)
	}
	return seats, nil
}

// SeatReservation implements reservation.Repository. The unique index on
// the active reservations of a seat makes it at most one row.
func (s *Store) SeatReservation(ctx context.Context, scheduleID int64, seatID int) (reservation.Reservation, error) {
	var (
		id        uuid.UUID
		userID    string
		createdAt time.Time
	)
	err := s.pool.QueryRow(ctx,
		`SELECT id, user_id, created_at FROM reservations WHERE schedule_id = $1 AND seat_id = $2 AND cancelled_at IS NULL`,
		scheduleID, seatID).Scan(&id, &userID, &createdAt)
	if err != nil {
		return oneRow(reservation.Reservation{}, err, reservation.ErrReservationNotFound, "select seat reservation")
	}
	return reservation.RestoreReservation(id, scheduleID, seatID, userID, createdAt), nil
}

// bookSeat is a booking in one statement, so one round trip and no
// BEGIN/COMMIT of its own. It finds the seat (a seat outside the schedule
// selects no row), its active reservation if any, its fence — the highest
// of its active reservation's (a booking records its fence in its row) and
// of its seat_fences row (kept for a seat whose reservation was
// cancelled) — and the time left on an active hold of the seat, if any.
//
// When the seat is free, unheld and the fence is above the seat's, it
// takes the seat's claim row (seat_claims), the row every hold of the
// seat takes too: a hold being written at the same time makes it wait,
// and once that hold has committed the claim is live and the booking
// inserts nothing (claimed stays empty). So PostgreSQL orders a hold and a
// booking of one seat whatever the seat locks did. Then it inserts the
// reservation, and the seat's change for the live seat map (seat_changes),
// in the same statement. A concurrent booking of the same seat makes the
// INSERT wait for it on the unique index and then fail (23505);
// seatConflict then settles it.
var bookSeat = `
WITH seat AS (
	SELECT s.id, r.fence AS booked_fence, r.id AS booked_id, r.user_id AS booked_by, r.created_at AS booked_at,
		(SELECT f.fence FROM seat_fences f WHERE f.schedule_id = s.id AND f.seat_id = $2) AS freed_fence,
		(SELECT ceil(extract(epoch FROM h.expires_at - now()) * 1000)::bigint FROM seat_claims h
			WHERE h.schedule_id = s.id AND h.seat_id = $2 AND h.expires_at > now()) AS held_ms
	FROM schedules s
	LEFT JOIN reservations r ON r.schedule_id = s.id AND r.seat_id = $2 AND r.cancelled_at IS NULL
	WHERE s.id = $1 AND $2 BETWEEN 1 AND s.seat_count
), claimed AS (
	INSERT INTO seat_claims (schedule_id, seat_id, hold_id, fence, expires_at)
	SELECT id, $2, NULL, $4, '-infinity' FROM seat
	WHERE booked_fence IS NULL AND held_ms IS NULL AND coalesce(freed_fence, 0) < $4
	ON CONFLICT (schedule_id, seat_id) DO UPDATE
		SET hold_id = NULL, fence = EXCLUDED.fence, expires_at = EXCLUDED.expires_at
		WHERE seat_claims.expires_at <= now()
	RETURNING schedule_id
), booked AS (
	INSERT INTO reservations (schedule_id, seat_id, user_id, fence, idempotency_claim)
	SELECT schedule_id, $2, $3, $4, $5 FROM claimed
	RETURNING id, created_at
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_id, status) SELECT $1, $2, 'reserved' FROM booked
), evented AS (
	INSERT INTO webhook_events (type, object_id, data)
	SELECT 'reservation.created', b.id, reservation_created_data(b.id, $1::bigint, $2::integer, $3::text, b.created_at)
	FROM booked b WHERE $6::boolean AND ` + subscribed(`'reservation.created'`) + `
)
SELECT (SELECT count(*) FROM seat), seat.booked_fence, seat.booked_id, seat.booked_by, seat.booked_at,
	seat.freed_fence, seat.held_ms, b.id, b.created_at
FROM (SELECT 1) AS one LEFT JOIN seat ON true LEFT JOIN booked b ON true`

// activeSeatIndex is the unique index that allows one active reservation
// per seat.
const activeSeatIndex = "reservations_active_seat_key"

// InsertReservation implements reservation.Repository: alone in one
// statement (bookSeat) when no other booking is being written, else in a
// group (bookSeats). A stale fence is reported before a booked seat, and a
// booked seat before a held one: whatever the seat's state, a holder that
// a newer one overtook only learns that.
func (s *Store) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	if s.writers <= 0 {
		return s.insertOne(ctx, nr)
	}
	return s.insertInGroup(ctx, nr)
}

// insertOne books one seat in one statement (bookSeat), with its
// reservation.created event when the Store writes events.
func (s *Store) insertOne(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	var (
		row   bookingRow
		seats int64
	)
	// The reservation.created event is written by the statement itself
	// (reservation_created_data): a booking is one round trip.
	err := s.pool.QueryRow(ctx, bookSeat, nr.ScheduleID, nr.SeatID, nr.UserID, nr.Fence, claimArg(nr.Claim), s.events != nil).
		Scan(&seats, &row.bookedFence, &row.bookedID, &row.bookedBy, &row.bookedAt,
			&row.freedFence, &row.heldMillis, &row.id, &row.createdAt)
	switch {
	case err == nil:
		row.exists = seats > 0
		return s.outcome(ctx, nr, row)
	case isViolation(err, pgerrcode.UniqueViolation, activeSeatIndex):
		return s.seatConflict(ctx, nr)
	default:
		return reservation.Reservation{}, wrap("insert reservation", err)
	}
}

// bookingRow is what bookSeat and bookSeats say of one booking: whether
// the seat exists, its active reservation, its fences and hold, and the
// reservation if inserted.
type bookingRow struct {
	exists                              bool
	bookedFence, freedFence, heldMillis *int64
	bookedID                            *uuid.UUID
	bookedBy                            *string
	bookedAt                            *time.Time
	id                                  *uuid.UUID
	createdAt                           *time.Time
}

// reservation is the reservation row inserted for nr; only when row.id
// and row.createdAt are set.
func (row bookingRow) reservation(nr reservation.NewReservation) reservation.Reservation {
	return reservation.RestoreReservation(*row.id, nr.ScheduleID, nr.SeatID, nr.UserID, *row.createdAt)
}

// claimArg is an idempotency claim as a nullable uuid: uuid.Nil is none.
func claimArg(claim uuid.UUID) pgtype.UUID {
	return pgtype.UUID{Bytes: claim, Valid: claim != uuid.Nil}
}

// outcome is a booking's answer from its row. A stale fence is reported
// before a booked seat, and a booked seat before a held one; a seat
// already booked by the same user is that user's reservation (the owner's
// retry of a booking whose answer it never saw), and one booked by another
// user is a *reservation.SeatTakenError naming them. A free, unheld seat with
// a fresh fence that was not inserted lost the claim row to a hold or the
// unique index to a concurrent booking (bookSeats skips it; bookSeat
// raises the violation instead): seatConflict settles it.
func (s *Store) outcome(ctx context.Context, nr reservation.NewReservation, row bookingRow) (reservation.Reservation, error) {
	switch {
	case row.id != nil && row.createdAt != nil:
		return row.reservation(nr), nil
	case !row.exists:
		return reservation.Reservation{}, s.missingSeat(ctx, nr.ScheduleID)
	}
	if err := refusal(nr.Fence, row.bookedFence, row.freedFence); err != nil {
		if errors.Is(err, reservation.ErrSeatTaken) && row.bookedBy != nil {
			if *row.bookedBy == nr.UserID && row.bookedID != nil && row.bookedAt != nil {
				return reservation.RestoreReservation(*row.bookedID, nr.ScheduleID, nr.SeatID, nr.UserID, *row.bookedAt), nil
			}
			// The owner lets the refused booking seal the seat with
			// the owner's note.
			return reservation.Reservation{}, &reservation.SeatTakenError{Owner: *row.bookedBy}
		}
		return reservation.Reservation{}, err
	}
	if row.heldMillis != nil {
		return reservation.Reservation{}, s.heldSeat(ctx, nr, *row.heldMillis)
	}
	return s.seatConflict(ctx, nr)
}

// heldSeat is the refusal of a booking of a held seat, with millis left on
// the hold. When the hold is the booking user's own, OwnHold names it (one
// look-up of the seat's claim, made only for a refused booking): they are
// told to confirm it rather than that another customer holds the seat. A
// look-up that fails (the hold ended meanwhile, or PostgreSQL did not
// answer) leaves OwnHold unset: the refusal stands either way.
func (s *Store) heldSeat(ctx context.Context, nr reservation.NewReservation, millis int64) error {
	seat := &reservation.UnavailableSeat{SeatID: nr.SeatID, Reason: reservation.ReasonHeld,
		RetryAfter: time.Duration(millis) * time.Millisecond}
	var own uuid.UUID
	err := s.pool.QueryRow(ctx, `
		SELECT c.hold_id FROM seat_claims c JOIN holds h ON h.id = c.hold_id
		WHERE c.schedule_id = $1 AND c.seat_id = $2 AND c.expires_at > now() AND h.user_id = $3`,
		nr.ScheduleID, nr.SeatID, nr.UserID).Scan(&own)
	if err == nil {
		seat.OwnHold = own
	}
	return seat
}

// refusal says why a booking with fence was not inserted: ErrStaleFence
// when the seat's fence is not below it, ErrSeatTaken when the seat has an
// active reservation (booked), nil when neither (a hold refused it).
func refusal(fence int64, booked *int64, freed *int64) error {
	for _, f := range []*int64{booked, freed} {
		if f != nil && *f >= fence {
			return reservation.ErrStaleFence
		}
	}
	if booked != nil {
		return reservation.ErrSeatTaken
	}
	return nil
}

// seatConflict settles a booking that lost the seat to a concurrent write
// its statement could not see: a booking that won the unique index (stale
// if it carried a fence not below nr's, nr's user's reservation if it was
// theirs, taken otherwise) or a hold that won the claim row (held). It
// reads the seat afresh; a seat it cannot read is taken.
func (s *Store) seatConflict(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	var row bookingRow
	err := s.pool.QueryRow(ctx, `
		SELECT r.fence, r.id, r.user_id, r.created_at,
			(SELECT ceil(extract(epoch FROM h.expires_at - now()) * 1000)::bigint FROM seat_claims h
				WHERE h.schedule_id = $1 AND h.seat_id = $2 AND h.expires_at > now())
		FROM (SELECT 1) AS one
		LEFT JOIN reservations r ON r.schedule_id = $1 AND r.seat_id = $2 AND r.cancelled_at IS NULL`,
		nr.ScheduleID, nr.SeatID).Scan(&row.bookedFence, &row.bookedID, &row.bookedBy, &row.bookedAt, &row.heldMillis)
	switch {
	case err != nil:
		return reservation.Reservation{}, reservation.ErrSeatTaken
	case row.bookedFence == nil && row.heldMillis != nil:
		return reservation.Reservation{}, s.heldSeat(ctx, nr, *row.heldMillis)
	case row.bookedFence == nil:
		// Neither booked nor held now: what beat us is gone again, and
		// a retry finds the seat as it is.
		return reservation.Reservation{}, &reservation.UnavailableSeat{SeatID: nr.SeatID,
			Reason: reservation.ReasonLocked, RetryAfter: time.Second}
	}
	row.exists = true
	row.freedFence, row.heldMillis = nil, nil
	return s.outcome(ctx, nr, row)
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
	r, err := scanReservation(s.pool.QueryRow(ctx, `SELECT `+reservationColumns+` FROM reservations WHERE id = $1`, id))
	return oneRow(r, err, reservation.ErrReservationNotFound, "select reservation")
}

// ReservationByClaim implements reservation.Repository.
func (s *Store) ReservationByClaim(ctx context.Context, claim uuid.UUID) (reservation.Reservation, error) {
	r, err := scanReservation(s.pool.QueryRow(ctx,
		`SELECT `+reservationColumns+` FROM reservations WHERE idempotency_claim = $1`, claim))
	return oneRow(r, err, reservation.ErrReservationNotFound, "select reservation by claim")
}

// reservationColumns are the columns scanReservation reads, in its order.
const reservationColumns = `id, schedule_id, seat_id, user_id, created_at, cancelled_at`

func scanReservation(row pgx.Row) (reservation.Reservation, error) {
	var (
		id          uuid.UUID
		scheduleID  int64
		seatID      int
		userID      string
		createdAt   time.Time
		cancelledAt *time.Time
	)
	if err := row.Scan(&id, &scheduleID, &seatID, &userID, &createdAt, &cancelledAt); err != nil {
		return reservation.Reservation{}, err
	}
	r := reservation.RestoreReservation(id, scheduleID, seatID, userID, createdAt)
	if cancelledAt != nil {
		r = r.WithCancelledAt(*cancelledAt)
	}
	return r, nil
}

// cancelReservation marks an active reservation cancelled, raises its
// seat's fence in seat_fences and records the seat's change, in one
// statement; a reservation cancelled before is returned as it is, and the
// last column says which (true: cancelled now).
const cancelReservation = `
WITH cancelled AS (
	UPDATE reservations SET cancelled_at = now() WHERE id = $1 AND cancelled_at IS NULL
	RETURNING ` + reservationColumns + `
), fenced AS (
	INSERT INTO seat_fences (schedule_id, seat_id, fence)
	SELECT schedule_id, seat_id, $2 FROM cancelled
	ON CONFLICT (schedule_id, seat_id) DO UPDATE SET fence = greatest(seat_fences.fence, EXCLUDED.fence)
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_id, status) SELECT schedule_id, seat_id, 'available' FROM cancelled
)
SELECT ` + reservationColumns + `, true FROM cancelled
UNION ALL
SELECT ` + reservationColumns + `, false FROM reservations WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM cancelled)`

// CancelReservation implements reservation.Repository, with the
// reservation.cancelled event when the Store writes events and the
// reservation was active.
func (s *Store) CancelReservation(ctx context.Context, id uuid.UUID, fence int64) (reservation.Reservation, error) {
	var r reservation.Reservation
	err := s.change(ctx, func(q dbtx, events *eventList) error {
		var (
			now bool
			err error
		)
		r, err = scanReservation(withExtra{q.QueryRow(ctx, cancelReservation, id, fence), []any{&now}})
		if err == nil && now {
			events.reservation(webhook.ReservationCancelled, r)
		}
		return err
	})
	return oneRow(r, err, reservation.ErrReservationNotFound, "cancel reservation")
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
