package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/reservation"
)

// EventData renders the data of the webhook events a Store writes: the
// hold or reservation as the API shows it (httpapi.EventData). Hold is
// called inside the change's transaction, so it must not wait on this
// Store's pool for long (a cached schedule, not a query per call).
type EventData interface {
	Hold(ctx context.Context, h reservation.Hold) (json.RawMessage, error)
	Reservation(r reservation.Reservation) (json.RawMessage, error)
}

// WithEvents makes the Store write a webhook event (webhook_events) for
// every hold created, confirmed, released or expired and every
// reservation created or cancelled, in the transaction of the change
// itself (an outbox): a committed change always has its event, a change
// rolled back has none, a replay that changes nothing writes none. data
// renders each event's object. An event is written only while an enabled
// endpoint subscribes to its type (subscribed). Without WithEvents, the
// Store writes no event.
func WithEvents(data EventData) StoreOption { return func(s *Store) { s.events = data } }

// subscribed is the condition on an event type (typ, an SQL expression)
// that some enabled endpoint receives it: an event nobody would receive
// is not written. The change's statement reads the endpoints, and an
// endpoint's created_at is taken once it is visible (WebhookEndpoints.
// Create), so every change that begins at or after it, the changes it is
// given (takeFresh), sees it and writes their events. A sale with no
// endpoint then writes no event and leaves the fan-out nothing to do.
func subscribed(typ string) string {
	return `EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.enabled AND ` + typ + ` = ANY (w.events))`
}

// insertEvents writes a transaction's events in one statement, seq in
// their order, those of a type nobody subscribes to left out.
var insertEvents = `
INSERT INTO webhook_events (type, object_id, data)
SELECT e.type, e.object_id, e.data::json
FROM unnest($1::text[], $2::uuid[], $3::text[]) WITH ORDINALITY AS e(type, object_id, data, n)
WHERE ` + subscribed("e.type") + `
ORDER BY e.n`

// eventList collects the events of one transaction, in order; with no
// EventData it collects none. The first rendering error is kept and
// returned by write, which fails the transaction.
type eventList struct {
	data    EventData
	types   []string
	objects []uuid.UUID
	bodies  []string
	err     error
}

func (s *Store) newEvents() *eventList { return &eventList{data: s.events} }

func (l *eventList) add(typ string, object uuid.UUID, data json.RawMessage, err error) {
	if err != nil {
		l.err = cmp.Or(l.err, fmt.Errorf("render %s event: %w", typ, err))
		return
	}
	l.types, l.objects, l.bodies = append(l.types, typ), append(l.objects, object), append(l.bodies, string(data))
}

// hold adds an event of typ carrying h, as it is after the change.
func (l *eventList) hold(ctx context.Context, typ string, h reservation.Hold) {
	if l.data != nil {
		data, err := l.data.Hold(ctx, h)
		l.add(typ, h.ID(), data, err)
	}
}

// reservation adds an event of typ carrying r, as it is after the change.
func (l *eventList) reservation(typ string, r reservation.Reservation) {
	if l.data != nil {
		data, err := l.data.Reservation(r)
		l.add(typ, r.ID(), data, err)
	}
}

type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// write inserts the events collected, if any, on q (the change's
// transaction).
func (l *eventList) write(ctx context.Context, q execer) error {
	if l.err != nil || len(l.types) == 0 {
		return l.err
	}
	if _, err := q.Exec(ctx, insertEvents, l.types, l.objects, l.bodies); err != nil {
		return fmt.Errorf("insert webhook events: %w", err)
	}
	return nil
}

// dbtx is what a change runs its statements on: the pool, or a
// transaction.
type dbtx interface {
	execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// change runs fn, a change made in one statement, and writes the events
// fn collects with it: in a transaction when the Store writes events,
// else as fn's statement alone (its own transaction, one round trip).
// fn may run again (retryPool.BeginFunc): it must only set its results.
func (s *Store) change(ctx context.Context, fn func(q dbtx, events *eventList) error) error {
	if s.events == nil {
		return fn(s.pool, s.newEvents())
	}
	return s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		events := s.newEvents()
		if err := fn(tx, events); err != nil {
			return err
		}
		return events.write(ctx, tx)
	})
}
