package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// holdColumns are the columns scanHold reads, in its order; status is
// decided here, by the database's clock. A hold whose expiry was announced
// (AnnounceExpiredHolds) is expired whatever the reading transaction's
// clock, which began earlier, says: a confirmation that waited for the
// announcer's lock must not confirm it.
const holdColumns = `id, schedule_id, seat_ids, user_id, created_at, expires_at,
	CASE WHEN confirmed_at IS NOT NULL THEN 'confirmed'
	     WHEN released_at IS NOT NULL THEN 'released'
	     WHEN expires_at <= now() OR expiry_announced_at IS NOT NULL THEN 'expired'
	     ELSE 'active' END`

func scanHold(row pgx.Row) (reservation.Hold, error) {
	var (
		id                   uuid.UUID
		scheduleID           int64
		seatIDs              []int
		userID               string
		createdAt, expiresAt time.Time
		status               string
	)
	if err := row.Scan(&id, &scheduleID, &seatIDs, &userID, &createdAt, &expiresAt, &status); err != nil {
		return reservation.Hold{}, err
	}
	return reservation.RestoreHold(id, scheduleID, seatIDs, userID, createdAt, expiresAt, reservation.HoldStatus(status)), nil
}

// claimSeats claims the hold's seats: a seat nobody claims is inserted, a
// seat whose claim has expired (a hold's that ran out, or a booking's,
// which expires at once) is taken over in place, a live claim of another
// hold is left alone (and its seat is not returned). The primary key on
// (schedule_id, seat_id) makes two live claims of one seat impossible, and
// makes a hold and a booking of one seat wait for each other, whatever the
// seat locks did. The claimed seats' change is recorded for the seat
// events (one row for them all), and the claimed seats are returned.
const claimSeats = `
WITH claimed AS (
	INSERT INTO seat_claims (schedule_id, seat_id, hold_id, fence, expires_at)
	SELECT $1, c.seat, $2, c.fence, now() + $3 * interval '1 millisecond'
	FROM unnest($4::integer[], $5::bigint[]) AS c(seat, fence)
	ON CONFLICT (schedule_id, seat_id) DO UPDATE
		SET hold_id = EXCLUDED.hold_id, fence = EXCLUDED.fence, expires_at = EXCLUDED.expires_at
		WHERE seat_claims.expires_at <= now()
	RETURNING seat_id
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_ids, status)
	SELECT $1, array_agg(seat_id ORDER BY seat_id), 'held' FROM claimed HAVING count(*) > 0
)
SELECT seat_id FROM claimed`

// unavailableSeats lists which of the seats $2 of schedule $1 are taken
// (an active reservation) or held by a live claim of a hold other than $3.
// The claims of the seats $4 are not looked up: the caller's transaction
// has just taken them, so they are its own (a hold's check would read
// each of its claims only to leave it out).
// Each seat is looked up by its whole key, one seat at a time (the LATERAL
// subquery, kept whole by OFFSET 0): with "seat_id = ANY($2)" the planner
// may take schedule_id alone as the index condition and filter every claim
// of the schedule, which its statistics of a nearly empty table make look
// cheap, and which at a stadium's 80,000 claims reads thousands of rows a
// hold.
const unavailableSeats = `
SELECT s.seat, u.reason, u.wait_ms
FROM unnest($2::integer[]) AS s(seat)
CROSS JOIN LATERAL (
	SELECT 'taken' AS reason, 0::bigint AS wait_ms FROM reservations r
		WHERE r.schedule_id = $1 AND r.seat_id = s.seat AND r.cancelled_at IS NULL
	UNION ALL
	SELECT 'held', ceil(extract(epoch FROM c.expires_at - now()) * 1000)::bigint FROM seat_claims c
		WHERE s.seat <> ALL ($4::integer[])
		  AND c.schedule_id = $1 AND c.seat_id = s.seat AND c.expires_at > now() AND c.hold_id IS DISTINCT FROM $3
	OFFSET 0
) u
ORDER BY 1`

// insertHold inserts hold $1; it expires $5 ms after the transaction's
// start (now() is the transaction's clock, so the claims and the user's
// count, which add the same, agree with it to the microsecond).
const insertHold = `
INSERT INTO holds (id, schedule_id, user_id, seat_ids, expires_at, idempotency_claim)
VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', $6)
RETURNING ` + holdColumns

// InsertHold implements reservation.Repository in one transaction: the
// hold, its claims, then a check that none of its seats is reserved or
// claimed by another live hold (run after the claims, so that it sees
// every booking that committed while they waited on a row lock), and last
// the user's count of live holds (live_holds.go); and its hold.created
// event when the Store writes events. The four statements go in one round
// trip, each run once the one before has finished (the check takes its
// snapshot after the claims); the event, rendered from the hold the
// database returns, goes in a second.
func (s *Store) InsertHold(ctx context.Context, nh reservation.NewHold) (reservation.Hold, error) {
	var hold reservation.Hold
	err := s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		id, ttl := uuid.New(), nh.TTL.Milliseconds()
		batch := &pgx.Batch{}
		batch.Queue(insertHold, id, nh.ScheduleID, nh.UserID, nh.SeatIDs, ttl, claimArg(nh.Claim))
		batch.Queue(claimSeats, nh.ScheduleID, id, ttl, nh.SeatIDs, nh.Fences)
		// The check looks only for bookings: every seat is taken as
		// claimed here, so that no claim is read again. A seat the claims
		// could not take is seen in their reply, and the check is then run
		// again for what holds it.
		batch.Queue(unavailableSeats, nh.ScheduleID, nh.SeatIDs, id, nh.SeatIDs)
		batch.Queue(addLiveHold, nh.UserID, id, ttl)
		var (
			claimed     []int
			unavailable []reservation.UnavailableSeat
			live        int
		)
		err := sendBatch(ctx, tx, batch,
			func(r pgx.BatchResults) (err error) { hold, err = scanHold(r.QueryRow()); return err },
			func(r pgx.BatchResults) error {
				rows, err := r.Query()
				if err == nil {
					claimed, err = pgx.CollectRows(rows, pgx.RowTo[int])
				}
				return err
			},
			func(r pgx.BatchResults) (err error) { unavailable, err = collectUnavailable(r.Query()); return err },
			func(r pgx.BatchResults) error { return r.QueryRow().Scan(&live) })
		if err == nil && (len(unavailable) > 0 || len(claimed) < len(nh.SeatIDs)) {
			// Our own claims are not listed; a seat we could not claim
			// shows up as held by the hold that has it.
			unavailable, err = queryUnavailable(ctx, tx, nh.ScheduleID, nh.SeatIDs, id, claimed...)
		}
		switch {
		case err != nil:
			return err
		case len(unavailable) > 0:
			return &reservation.SeatsUnavailableError{Seats: unavailable}
		case nh.MaxLive > 0 && live > nh.MaxLive:
			return reservation.ErrTooManyHolds
		}
		events := s.newEvents()
		events.hold(ctx, webhook.HoldCreated, hold)
		return events.write(ctx, tx)
	})
	var refused *reservation.SeatsUnavailableError
	switch {
	case errors.As(err, &refused):
		return reservation.Hold{}, refused
	case errors.Is(err, reservation.ErrTooManyHolds):
		return reservation.Hold{}, err
	case isViolation(err, pgerrcode.ForeignKeyViolation, "holds_schedule_id_fkey"):
		return reservation.Hold{}, reservation.ErrScheduleNotFound
	case err != nil:
		return reservation.Hold{}, wrap("insert hold", err)
	}
	return hold, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryUnavailable runs unavailableSeats; exceptHold's own claims are not
// listed (uuid.Nil lists every claim), nor are the claims of the seats
// claimedHere, which the transaction q runs has just taken.
func queryUnavailable(ctx context.Context, q querier, scheduleID int64, seatIDs []int, exceptHold uuid.UUID, claimedHere ...int) ([]reservation.UnavailableSeat, error) {
	// Never NULL: no seat is "<> ALL" of a NULL array.
	return collectUnavailable(q.Query(ctx, unavailableSeats, scheduleID, seatIDs, exceptHold, append([]int{}, claimedHere...)))
}

// collectUnavailable reads unavailableSeats' rows.
func collectUnavailable(rows pgx.Rows, err error) ([]reservation.UnavailableSeat, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.UnavailableSeat, error) {
		var (
			u      reservation.UnavailableSeat
			reason string
			millis int64
		)
		err := row.Scan(&u.SeatID, &reason, &millis)
		u.Reason, u.RetryAfter = reservation.UnavailableReason(reason), time.Duration(millis)*time.Millisecond
		return u, err
	})
}

// UnavailableSeats implements reservation.Repository.
func (s *Store) UnavailableSeats(ctx context.Context, scheduleID int64, seatIDs []int) ([]reservation.UnavailableSeat, error) {
	seats, err := queryUnavailable(ctx, s.pool, scheduleID, seatIDs, uuid.Nil)
	if err != nil {
		return nil, wrap("select unavailable seats", err)
	}
	return seats, nil
}

// Hold implements reservation.Repository.
func (s *Store) Hold(ctx context.Context, id uuid.UUID) (reservation.Hold, error) {
	h, err := scanHold(s.pool.QueryRow(ctx, `SELECT `+holdColumns+` FROM holds WHERE id = $1`, id))
	return oneRow(h, err, reservation.ErrHoldNotFound, "select hold")
}

// HoldByClaim implements reservation.Repository.
func (s *Store) HoldByClaim(ctx context.Context, claim uuid.UUID) (reservation.Hold, error) {
	h, err := scanHold(s.pool.QueryRow(ctx, `SELECT `+holdColumns+` FROM holds WHERE idempotency_claim = $1`, claim))
	return oneRow(h, err, reservation.ErrHoldNotFound, "select hold by claim")
}

// lockHold reads userID's hold for update, so that confirming and
// releasing one hold are ordered; ErrHoldNotFound for anyone else's.
func lockHold(ctx context.Context, tx pgx.Tx, id uuid.UUID, userID string) (reservation.Hold, error) {
	return ownHold(tx.QueryRow(ctx, lockHoldRow, id), userID)
}

// lockHoldRow reads hold $1 for update.
const lockHoldRow = `SELECT ` + holdColumns + ` FROM holds WHERE id = $1 FOR UPDATE`

// confirmClaims turns hold $1's claims into reservations of user $2 with
// the claims' fences, and records the seats' change (one row). Deleting the claims
// locks them: a hold or a booking that takes an expired claim over
// concurrently either waits for this transaction or has already taken it
// (then the claim is not ours and is not booked).
const confirmClaims = `
WITH claims AS (
	DELETE FROM seat_claims WHERE hold_id = $1 AND expires_at > now()
	RETURNING schedule_id, seat_id, fence
), booked AS (
	INSERT INTO reservations (schedule_id, seat_id, user_id, fence, hold_id)
	SELECT schedule_id, seat_id, $2, fence, $1 FROM claims ORDER BY seat_id
	RETURNING ` + reservationColumns + `
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_ids, status)
	SELECT schedule_id, array_agg(seat_id ORDER BY seat_id), 'reserved' FROM booked GROUP BY schedule_id
)
SELECT ` + reservationColumns + ` FROM booked`

// confirmHold marks hold $1 confirmed, unless it was released (a confirmed
// hold's own confirmation is rolled back before it counts).
const confirmHold = `UPDATE holds SET confirmed_at = now() WHERE id = $1 AND released_at IS NULL RETURNING ` + holdColumns

// ConfirmHold implements reservation.Repository in one transaction, which
// writes, when the Store writes events, hold.confirmed then one
// reservation.created per seat in seat order; confirming a confirmed hold
// again writes none. The hold is locked and read, its claims booked, the
// hold marked and dropped from its user's live holds in one round trip,
// on the bet that it is active, as the service made sure just before: when
// it is not, all of it is rolled back, and the events go in a second.
func (s *Store) ConfirmHold(ctx context.Context, id uuid.UUID, userID string) ([]reservation.Reservation, error) {
	var booked []reservation.Reservation
	err := s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		var h, confirmed reservation.Hold
		batch := &pgx.Batch{}
		batch.Queue(lockHoldRow, id)
		batch.Queue(confirmClaims, id, userID)
		batch.Queue(confirmHold, id)
		batch.Queue(forgetLiveHold, userID, id)
		err := sendBatch(ctx, tx, batch,
			func(r pgx.BatchResults) (err error) {
				if h, err = ownHold(r.QueryRow(), userID); err != nil {
					return err
				}
				switch h.Status() {
				case reservation.HoldConfirmed:
					return errConfirmed
				case reservation.HoldReleased:
					return reservation.ErrHoldReleased
				case reservation.HoldExpired:
					return reservation.ErrHoldExpired
				}
				return nil
			},
			func(r pgx.BatchResults) (err error) { booked, err = collectReservations(r.Query()); return err },
			func(r pgx.BatchResults) (err error) { confirmed, err = scanHold(r.QueryRow()); return err },
			func(r pgx.BatchResults) error { _, err := r.Exec(); return err })
		if isViolation(err, pgerrcode.UniqueViolation, activeSeatIndex) {
			// Booked behind the hold's back: only when a seat lock
			// failed while the hold was being made.
			// Read on the pool: the transaction has failed.
			taken, qerr := queryUnavailable(ctx, s.pool, h.ScheduleID(), h.SeatIDs(), h.ID())
			if qerr != nil {
				return qerr
			}
			return &reservation.SeatsUnavailableError{Seats: taken}
		}
		if err != nil {
			return err
		}
		if len(booked) != len(h.SeatIDs()) {
			// A claim ran out between reading the hold and booking it.
			return reservation.ErrHoldExpired
		}
		sortBySeat(booked)
		events := s.newEvents()
		events.hold(ctx, webhook.HoldConfirmed, confirmed)
		for _, r := range booked {
			events.reservation(webhook.ReservationCreated, r)
		}
		return events.write(ctx, tx)
	})
	if errors.Is(err, errConfirmed) {
		booked, err = confirmedReservations(ctx, s.pool, id)
	}
	if err != nil {
		return nil, holdError("confirm hold", err)
	}
	return booked, nil
}

// errConfirmed rolls back a confirmation made on the bet that its hold
// was active, when it was confirmed already.
var errConfirmed = errors.New("postgres: the hold is confirmed already")

// ownHold reads a hold of userID's from row: anyone else's, like none, is
// ErrHoldNotFound.
func ownHold(row pgx.Row, userID string) (reservation.Hold, error) {
	h, err := scanHold(row)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !h.OwnedBy(userID) {
		return reservation.Hold{}, reservation.ErrHoldNotFound
	}
	return h, err
}

// holdError passes the domain's errors through and wraps the rest.
func holdError(op string, err error) error {
	var refused *reservation.SeatsUnavailableError
	for _, known := range []error{reservation.ErrHoldNotFound, reservation.ErrHoldExpired,
		reservation.ErrHoldReleased, reservation.ErrHoldConfirmed} {
		if errors.Is(err, known) {
			return known
		}
	}
	if errors.As(err, &refused) {
		return refused
	}
	return wrap(op, err)
}

// confirmedReservations reads the reservations a confirmed hold booked.
func confirmedReservations(ctx context.Context, q querier, id uuid.UUID) ([]reservation.Reservation, error) {
	return collectReservations(q.Query(ctx, `SELECT `+reservationColumns+` FROM reservations WHERE hold_id = $1 ORDER BY seat_id`, id))
}

// collectReservations reads rows of reservationColumns.
func collectReservations(rows pgx.Rows, err error) ([]reservation.Reservation, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.Reservation, error) {
		return scanReservation(row)
	})
}

// releaseClaims deletes hold $1's live claims and records their seats'
// change (one row).
const releaseClaims = `
WITH freed AS (
	DELETE FROM seat_claims WHERE hold_id = $1 AND expires_at > now() RETURNING schedule_id, seat_id
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_ids, status)
	SELECT schedule_id, array_agg(seat_id ORDER BY seat_id), 'available' FROM freed GROUP BY schedule_id
)
SELECT seat_id FROM freed`

// ReleaseHold implements reservation.Repository in one transaction, with
// the hold.released event when the Store writes events and the hold was
// active (releasing again, or an expired hold, writes none).
func (s *Store) ReleaseHold(ctx context.Context, id uuid.UUID, userID string) ([]int, error) {
	var freed []int
	err := s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		h, err := lockHold(ctx, tx, id, userID)
		if err != nil {
			return err
		}
		switch h.Status() {
		case reservation.HoldConfirmed:
			return reservation.ErrHoldConfirmed
		case reservation.HoldActive:
			released, err := scanHold(tx.QueryRow(ctx, `UPDATE holds SET released_at = now() WHERE id = $1 RETURNING `+holdColumns, id))
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, releaseClaims, id)
			if err != nil {
				return err
			}
			if freed, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, forgetLiveHold, userID, id); err != nil {
				return err
			}
			events := s.newEvents()
			events.hold(ctx, webhook.HoldReleased, released)
			return events.write(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return nil, holdError("release hold", err)
	}
	slices.Sort(freed)
	return freed, nil
}

// ExpiredClaims implements reservation.Repository.
func (s *Store) ExpiredClaims(ctx context.Context, limit int) ([]reservation.SeatRef, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT schedule_id, seat_id FROM seat_claims WHERE expires_at <= now() AND hold_id IS NOT NULL
		ORDER BY expires_at LIMIT $1`, limit)
	if err != nil {
		return nil, wrap("select expired claims", err)
	}
	seats, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.SeatRef, error) {
		var seat reservation.SeatRef
		err := row.Scan(&seat.ScheduleID, &seat.SeatID)
		return seat, err
	})
	if err != nil {
		return nil, wrap("read expired claims", err)
	}
	return seats, nil
}

// DropExpiredClaim implements reservation.Repository in one statement.
func (s *Store) DropExpiredClaim(ctx context.Context, seat reservation.SeatRef) (bool, error) {
	var freed bool
	err := s.pool.QueryRow(ctx, `
		WITH dropped AS (
			DELETE FROM seat_claims
			WHERE schedule_id = $1 AND seat_id = $2 AND expires_at <= now() AND hold_id IS NOT NULL RETURNING 1
		), outcome AS (
			SELECT EXISTS (SELECT 1 FROM dropped) AND NOT EXISTS (
				SELECT 1 FROM reservations WHERE schedule_id = $1 AND seat_id = $2 AND cancelled_at IS NULL) AS freed
		), changed AS (
			INSERT INTO seat_changes (schedule_id, seat_id, status) SELECT $1, $2, 'available' FROM outcome WHERE freed
		)
		SELECT freed FROM outcome`,
		seat.ScheduleID, seat.SeatID).Scan(&freed)
	if err != nil {
		return false, wrap("drop expired claim", err)
	}
	return freed, nil
}

// PurgeHolds deletes the holds that ended, unconfirmed, before
// endedBefore, with whatever claims they still had, in one statement (an
// expired claim is normally cleared within a second by ExpireHolds, which
// announces its seat; a claim another hold took over since names that
// hold and stays). An expired hold whose hold.expired event is not
// written yet (AnnounceExpiredHolds) is kept. It returns how many holds.
func (s *Store) PurgeHolds(ctx context.Context, endedBefore time.Time) (int64, error) {
	var purged int64
	err := s.pool.QueryRow(ctx, `
		WITH purged AS (
			DELETE FROM holds WHERE confirmed_at IS NULL AND least(expires_at, coalesce(released_at, expires_at)) < $1
				AND (released_at IS NOT NULL OR expiry_announced_at IS NOT NULL)
			RETURNING id
		), claims AS (
			DELETE FROM seat_claims c USING purged WHERE c.hold_id = purged.id
		)
		SELECT count(*) FROM purged`,
		endedBefore).Scan(&purged)
	if err != nil {
		return 0, wrap("purge holds", err)
	}
	return purged, nil
}

func sortBySeat(rs []reservation.Reservation) {
	slices.SortFunc(rs, func(a, b reservation.Reservation) int { return a.SeatID() - b.SeatID() })
}
