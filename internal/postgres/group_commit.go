package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock/batch"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Group commit: bookings that reach a Store while others are being
// written wait for the write in progress to end, then go to PostgreSQL
// together, in one statement (bookSeats): one round trip and one COMMIT,
// so one WAL flush, for all of them, each still with its own fence check,
// hold check and outcome. A booking that finds no write in progress goes
// at once, alone, in the one-row statement: an idle store adds no delay.
// Each caller is answered only after its statement committed. A Store
// that writes webhook events (WithEvents) writes a group's
// reservation.created events in one more statement of the same
// transaction.

// DefaultGroupWriters is how many group writes may run at once (each on a
// connection of its own); more wait and grow the next group.
const DefaultGroupWriters = 2

// maxGroup caps the bookings of one statement.
const maxGroup = 128

// bookSeats is bookSeat for many seats (the arrays, one element a
// booking; no seat twice). It claims, then inserts, in seat order so that
// concurrent groups take the claim rows and the unique index's entries in
// one order, the seats that are free, unheld and whose fence is above the
// seat's; a seat that a concurrent transaction booked meanwhile is skipped
// (ON CONFLICT DO NOTHING) rather than failing the others, and a seat a
// concurrent hold claimed is not inserted; both are settled afterwards as
// the one-row statement's are (seatConflict).
//
// Each seat's active reservation is looked up seat by seat (LATERAL ...
// LIMIT 1, as its fence and hold are): a plain join leaves PostgreSQL free
// to hash or scan the whole of reservations once per group, a plan it
// picks while the table is small (a new database, statistics taken when it
// was empty) and keeps, cached, as the table grows. The group's schedules
// are read once, by id, before the seats (sched): looked up seat by seat,
// a schedules table of a few hundred rows was scanned whole for every
// seat, the plan PostgreSQL prefers for a table of a few pages.
var bookSeats = `
WITH req AS (
	SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::uuid[]) WITH ORDINALITY
		AS r(schedule_id, seat_id, user_id, fence, claim, n)
), sched AS MATERIALIZED (
	SELECT s.id, s.seat_count FROM schedules s WHERE s.id = ANY($1::bigint[])
), seat AS (
	SELECT req.n, req.schedule_id, req.seat_id, req.user_id, req.fence, req.claim, s.id IS NOT NULL AS seat_exists,
		r.fence AS booked_fence, r.id AS booked_id, r.user_id AS booked_by, r.created_at AS booked_at,
		(SELECT f.fence FROM seat_fences f WHERE f.schedule_id = req.schedule_id AND f.seat_id = req.seat_id) AS freed_fence,
		(SELECT ceil(extract(epoch FROM h.expires_at - now()) * 1000)::bigint FROM seat_claims h
			WHERE h.schedule_id = req.schedule_id AND h.seat_id = req.seat_id AND h.expires_at > now()) AS held_ms
	FROM req
	LEFT JOIN sched s ON s.id = req.schedule_id AND req.seat_id BETWEEN 1 AND s.seat_count
	LEFT JOIN LATERAL (SELECT r.fence, r.id, r.user_id, r.created_at FROM reservations r
		WHERE r.schedule_id = req.schedule_id AND r.seat_id = req.seat_id AND r.cancelled_at IS NULL LIMIT 1) r ON true
), claimed AS (
	INSERT INTO seat_claims (schedule_id, seat_id, hold_id, fence, expires_at)
	SELECT schedule_id, seat_id, NULL, fence, '-infinity' FROM seat
	WHERE seat_exists AND booked_fence IS NULL AND held_ms IS NULL AND coalesce(freed_fence, 0) < fence
	ORDER BY schedule_id, seat_id
	ON CONFLICT (schedule_id, seat_id) DO UPDATE
		SET hold_id = NULL, fence = EXCLUDED.fence, expires_at = EXCLUDED.expires_at
		WHERE seat_claims.expires_at <= now()
	RETURNING schedule_id, seat_id
), booked AS (
	INSERT INTO reservations (schedule_id, seat_id, user_id, fence, idempotency_claim)
	SELECT seat.schedule_id, seat.seat_id, seat.user_id, seat.fence, seat.claim
	FROM seat JOIN claimed c ON c.schedule_id = seat.schedule_id AND c.seat_id = seat.seat_id
	ORDER BY seat.schedule_id, seat.seat_id
	ON CONFLICT (schedule_id, seat_id) WHERE cancelled_at IS NULL DO NOTHING
	RETURNING schedule_id, seat_id, user_id, id, created_at
), changed AS (
	INSERT INTO seat_changes (schedule_id, seat_id, status)
	SELECT schedule_id, seat_id, 'reserved' FROM booked ORDER BY schedule_id, seat_id
), evented AS (
	INSERT INTO webhook_events (type, object_id, data)
	SELECT 'reservation.created', id, reservation_created_data(id, schedule_id, seat_id, user_id, created_at)
	FROM booked WHERE $6::boolean AND ` + subscribed(`'reservation.created'`) + `
	ORDER BY schedule_id, seat_id
)
SELECT seat.seat_exists, seat.booked_fence, seat.booked_id, seat.booked_by, seat.booked_at,
	seat.freed_fence, seat.held_ms, b.id, b.created_at
FROM seat LEFT JOIN booked b ON b.schedule_id = seat.schedule_id AND b.seat_id = seat.seat_id
ORDER BY seat.n`

// pendingBooking is one caller's booking waiting for its group.
type pendingBooking struct {
	ctx  context.Context
	nr   reservation.NewReservation
	done chan bookingResult // buffered: the writer never waits for the caller
}

type bookingResult struct {
	r   reservation.Reservation
	err error
}

// newGroupQueue is the queue of s's bookings: up to writers groups at
// once, of up to maxGroup bookings, no seat twice in a group (a second
// booking of a seat waits for the next, so each row of a group answers
// exactly one caller).
func newGroupQueue(s *Store, writers int) *batch.Queue[*pendingBooking] {
	type seatKey struct {
		schedule int64
		seat     int
	}
	return batch.NewQueue(writers, maxGroup, s.writeGroup).KeepApart(func(p *pendingBooking) any {
		return seatKey{p.nr.ScheduleID, p.nr.SeatID}
	})
}

// insertInGroup books nr in a group: at once, alone, when fewer than
// writers groups are being written; else with the bookings that arrived
// meanwhile, when a write ends.
func (s *Store) insertInGroup(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	p := &pendingBooking{ctx: ctx, nr: nr, done: make(chan bookingResult, 1)}
	s.group.Add(p)
	select {
	case res := <-p.done:
		return res.r, res.err
	case <-ctx.Done():
		// Withdrawn before its group was taken, nothing is written for
		// it; in a group being written, its outcome is PostgreSQL's, and
		// the caller's look-up (SeatReservation) tells it.
		s.group.Withdraw(p)
		return reservation.Reservation{}, wrap("insert reservation", ctx.Err())
	}
}

// writeGroup writes one group and answers each of its callers once the
// group's span has ended: the span is then recorded before any request it
// wrote goes on, and never ends after the request spans it belongs to.
func (s *Store) writeGroup(group []*pendingBooking) {
	if len(group) == 1 {
		p := group[0]
		ctx, end := s.startGroupSpan(p.ctx, group)
		r, err := s.insertOne(ctx, p.nr)
		end()
		p.done <- bookingResult{r, err}
		return
	}
	ctx, cancel := batch.Context(group, func(p *pendingBooking) context.Context { return p.ctx }, storeWriteLimit)
	defer cancel()
	ctx, end := s.startGroupSpan(ctx, group)
	results, err := s.insertMany(ctx, group)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		// PostgreSQL refused the statement as a whole (say, one booking's
		// text it cannot store): nothing of it was written, so each
		// booking goes again alone, and only the one at fault fails.
		results = make([]bookingResult, len(group))
		for i, p := range group {
			r, err := s.insertOne(p.ctx, p.nr)
			results[i] = bookingResult{r, err}
		}
	case err != nil:
		results = make([]bookingResult, len(group))
		for i := range results {
			results[i] = bookingResult{err: wrap("insert reservations", err)}
		}
	}
	end()
	for i, p := range group {
		p.done <- results[i]
	}
}

// startGroupSpan is groupSpan when the store traces, with the function that
// ends the span; without a tracer it returns ctx and a function that does
// nothing.
func (s *Store) startGroupSpan(ctx context.Context, group []*pendingBooking) (context.Context, func()) {
	if s.tracer == nil {
		return ctx, func() {}
	}
	ctx, span := s.groupSpan(ctx, group)
	return ctx, func() { span.End() }
}

// The span of a group write and its attributes.
const (
	SpanGroupWrite    = "postgres.group_write"
	AttrGroupSize     = attribute.Key("seatlock.group.size")
	AttrGroupSeat     = attribute.Key("seatlock.seat")
	AttrGroupSchedule = attribute.Key("seatlock.schedule")
)

// groupSpan starts the span of a group write under ctx (which carries the
// write's deadline): a child of the first sampled booking's span, linked
// to the span of every other sampled booking of the group, so that each
// booking's trace leads to the statement that wrote it. A group with no
// sampled booking makes no span (and builds nothing for one): its
// bookings' traces are not kept.
func (s *Store) groupSpan(ctx context.Context, group []*pendingBooking) (context.Context, trace.Span) {
	first := slices.IndexFunc(group, func(p *pendingBooking) bool { return trace.SpanFromContext(p.ctx).IsRecording() })
	if first < 0 {
		return ctx, trace.SpanFromContext(ctx)
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(AttrGroupSize.Int(len(group)))}
	if len(group) == 1 {
		opts = append(opts, trace.WithAttributes(AttrGroupSchedule.Int64(group[0].nr.ScheduleID),
			AttrGroupSeat.Int(group[0].nr.SeatID)))
	}
	for _, p := range group[first+1:] {
		if span := trace.SpanFromContext(p.ctx); span.IsRecording() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: span.SpanContext()}))
		}
	}
	_, span := s.tracer.Start(group[first].ctx, SpanGroupWrite, opts...)
	return trace.ContextWithSpan(ctx, span), span
}

// storeWriteLimit bounds a group's write when its callers set no
// deadline of their own.
const storeWriteLimit = 5 * time.Second

// insertMany writes a group in one statement, and its reservation.created
// events in one more (the same transaction) when the Store writes events,
// and returns each booking's outcome, in the group's order.
func (s *Store) insertMany(ctx context.Context, group []*pendingBooking) ([]bookingResult, error) {
	n := len(group)
	schedules, seats, users, fences := make([]int64, n), make([]int32, n), make([]string, n), make([]int64, n)
	claims := make([]pgtype.UUID, n)
	for i, p := range group {
		schedules[i], seats[i], users[i], fences[i] = p.nr.ScheduleID, int32(p.nr.SeatID), p.nr.UserID, p.nr.Fence
		claims[i] = claimArg(p.nr.Claim)
	}
	found := make([]bookingRow, 0, n)
	// The reservation.created events are written by the statement itself
	// (reservation_created_data): a group is one round trip.
	err := func() error {
		found = found[:0]
		rows, err := s.pool.Query(ctx, bookSeats, schedules, seats, users, fences, claims, s.events != nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if len(found) == n {
				return errors.New("more rows than bookings")
			}
			var row bookingRow
			if err := rows.Scan(&row.exists, &row.bookedFence, &row.bookedID, &row.bookedBy, &row.bookedAt,
				&row.freedFence, &row.heldMillis, &row.id, &row.createdAt); err != nil {
				return err
			}
			found = append(found, row)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(found) != n {
			return errors.New("fewer rows than bookings")
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	// Settled once the group committed: a refused booking's look-ups run
	// on the pool.
	results := make([]bookingResult, n)
	for i, row := range found {
		results[i].r, results[i].err = s.outcome(ctx, group[i].nr, row)
	}
	return results, nil
}
