package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/webhook"
)

// eventStore is a Store that writes webhook events, rendered as the API
// does, on a fresh database with an endpoint subscribed to every event
// type (with none, no event is written); tracer (if any) sees its
// statements.
func eventStore(t *testing.T, tracer pgx.QueryTracer, opts ...postgres.StoreOption) (*postgres.Store, *pgxpool.Pool) {
	t.Helper()
	store, pool := unsubscribedEventStore(t, tracer, opts...)
	subscribe(t, pool, webhook.EventTypes()...)
	return store, pool
}

// subscribe makes an enabled endpoint of the events types on pool's
// database.
func subscribe(t *testing.T, pool *pgxpool.Pool, types ...string) webhook.Endpoint {
	t.Helper()
	e, err := postgres.NewWebhookEndpoints(pool, sealer(t)).Create(testContext(t),
		webhook.Endpoint{URL: "https://203.0.113.7/hook", Events: types}, webhook.NewSecret())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return e
}

// sealer seals the test endpoints' secrets.
func sealer(t *testing.T) *webhook.Sealer {
	t.Helper()
	s, err := webhook.NewSealer(sealKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unsubscribedEventStore is eventStore without the endpoint. Its
// schedules are read once (as the use cases' cache does): rendering runs
// inside the change's transaction.
func unsubscribedEventStore(t *testing.T, tracer pgx.QueryTracer, opts ...postgres.StoreOption) (*postgres.Store, *pgxpool.Pool) {
	t.Helper()
	pool := testenv.Pool(t)
	storePool := pool
	if tracer != nil {
		cfg, err := pgxpool.ParseConfig(pool.Config().ConnString())
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.Tracer = tracer
		if storePool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(storePool.Close)
	}
	plain := postgres.NewStore(pool)
	var schedules sync.Map
	data := httpapi.NewEventData(func(ctx context.Context, id int64) (reservation.Schedule, error) {
		if s, ok := schedules.Load(id); ok {
			return s.(reservation.Schedule), nil
		}
		s, err := plain.Schedule(ctx, id)
		if err == nil {
			schedules.Store(id, s)
		}
		return s, err
	})
	return postgres.NewStore(storePool, append([]postgres.StoreOption{postgres.WithEvents(data)}, opts...)...), pool
}

// storedEvent is a row of webhook_events, its data parsed.
type storedEvent struct {
	seq    int64
	typ    string
	object uuid.UUID
	data   any
}

func (e storedEvent) String() string { return fmt.Sprintf("#%d %s %s", e.seq, e.typ, e.object) }

// eventsAfter reads the events written after seq, in seq order.
func eventsAfter(t *testing.T, pool *pgxpool.Pool, seq int64) []storedEvent {
	t.Helper()
	rows, err := pool.Query(testContext(t), `SELECT seq, type, object_id, data::text FROM webhook_events WHERE seq > $1 ORDER BY seq`, seq)
	if err != nil {
		t.Fatal(err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedEvent, error) {
		var (
			e    storedEvent
			data string
		)
		if err := row.Scan(&e.seq, &e.typ, &e.object, &data); err != nil {
			return e, err
		}
		return e, json.Unmarshal([]byte(data), &e.data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func lastSeq(events []storedEvent, since int64) int64 {
	if len(events) == 0 {
		return since
	}
	return events[len(events)-1].seq
}

// wantEvent is an event expected: its type and object, and its data as
// the API shows the object now.
type wantEvent struct {
	typ    string
	object uuid.UUID
	data   any
}

// apiData renders v (a Hold or a Reservation) as the API answers it.
func apiData(t *testing.T, store *postgres.Store, v any) any {
	t.Helper()
	data := httpapi.NewEventData(store.Schedule)
	var (
		raw json.RawMessage
		err error
	)
	switch v := v.(type) {
	case reservation.Hold:
		raw, err = data.Hold(testContext(t), v)
	case reservation.Reservation:
		raw, err = data.Reservation(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	var parsed any
	if err := json.Unmarshal(raw, &parsed); err != nil {
		t.Fatal(err)
	}
	return parsed
}

func holdNow(t *testing.T, store *postgres.Store, id uuid.UUID) wantEvent {
	t.Helper()
	h, err := store.Hold(testContext(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return wantEvent{object: id, data: apiData(t, store, h)}
}

func reservationNow(t *testing.T, store *postgres.Store, id uuid.UUID) wantEvent {
	t.Helper()
	r, err := store.Reservation(testContext(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return wantEvent{object: id, data: apiData(t, store, r)}
}

func (w wantEvent) of(typ string) wantEvent { w.typ = typ; return w }

// expectEvents checks that exactly want were written after seq, in
// order, and returns the last seq.
func expectEvents(t *testing.T, pool *pgxpool.Pool, seq int64, what string, want ...wantEvent) int64 {
	t.Helper()
	got := eventsAfter(t, pool, seq)
	if len(got) != len(want) {
		t.Fatalf("%s: events %v, want %d", what, got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.typ != w.typ || g.object != w.object {
			t.Errorf("%s: event %d is %s, want %s %s", what, i, g, w.typ, w.object)
		}
		if !reflect.DeepEqual(g.data, w.data) {
			t.Errorf("%s: event %s data\n%v\nwant\n%v", what, g, g.data, w.data)
		}
	}
	return lastSeq(got, seq)
}

// Each change of a hold writes its event, with the hold as the API shows
// it after the change; a confirmation writes hold.confirmed, then a
// reservation.created per seat in seat order; a replay writes nothing.
func TestHoldChangesWriteTheirEvents(t *testing.T) {
	t.Parallel()
	store, pool := eventStore(t, nil)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)

	h := mustHold(t, store, s.ID(), "alice", time.Minute, 3, 1, 2)
	seq := expectEvents(t, pool, 0, "InsertHold", holdNow(t, store, h.ID()).of(webhook.HoldCreated))

	booked, err := store.ConfirmHold(ctx, h.ID(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := []wantEvent{holdNow(t, store, h.ID()).of(webhook.HoldConfirmed)}
	for _, r := range booked {
		want = append(want, reservationNow(t, store, r.ID()).of(webhook.ReservationCreated))
	}
	seq = expectEvents(t, pool, seq, "ConfirmHold", want...)
	if got := want[0].data.(map[string]any)["status"]; got != "confirmed" {
		t.Errorf("hold.confirmed's status = %v, want confirmed", got)
	}
	for i, r := range booked {
		if r.SeatID() != i+1 {
			t.Errorf("reservation.created %d is seat %d, want seat order", i, r.SeatID())
		}
	}
	if _, err := store.ConfirmHold(ctx, h.ID(), "alice"); err != nil {
		t.Fatal(err)
	}
	seq = expectEvents(t, pool, seq, "ConfirmHold again")

	if _, err := store.CancelReservation(ctx, booked[1].ID(), nextFence()); err != nil {
		t.Fatal(err)
	}
	seq = expectEvents(t, pool, seq, "CancelReservation", reservationNow(t, store, booked[1].ID()).of(webhook.ReservationCancelled))
	if _, err := store.CancelReservation(ctx, booked[1].ID(), nextFence()); err != nil {
		t.Fatal(err)
	}
	seq = expectEvents(t, pool, seq, "CancelReservation again")

	released := mustHold(t, store, s.ID(), "bob", time.Minute, 5)
	seq = expectEvents(t, pool, seq, "InsertHold", holdNow(t, store, released.ID()).of(webhook.HoldCreated))
	if _, err := store.ReleaseHold(ctx, released.ID(), "bob"); err != nil {
		t.Fatal(err)
	}
	seq = expectEvents(t, pool, seq, "ReleaseHold", holdNow(t, store, released.ID()).of(webhook.HoldReleased))
	if _, err := store.ReleaseHold(ctx, released.ID(), "bob"); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, pool, seq, "ReleaseHold again")
}

// A booking writes reservation.created, alone or in a group; a refused
// booking and the owner's retry of a booked seat write nothing.
func TestBookingsWriteTheirEvents(t *testing.T) {
	t.Parallel()
	for _, writers := range []int{0, postgres.DefaultGroupWriters} {
		t.Run(fmt.Sprintf("writers=%d", writers), func(t *testing.T) {
			t.Parallel()
			store, pool := eventStore(t, nil, postgres.WithGroupWriters(writers))
			s := mustSchedule(t, store, 10)
			r := mustReserve(t, store, s.ID(), 4, "alice")
			seq := expectEvents(t, pool, 0, "booking", reservationNow(t, store, r.ID()).of(webhook.ReservationCreated))
			if _, err := insert(testContext(t), store, s.ID(), 4, "bob", nextFence()); !errors.Is(err, reservation.ErrSeatTaken) {
				t.Fatalf("booking a booked seat: %v", err)
			}
			if again := mustReserve(t, store, s.ID(), 4, "alice"); again.ID() != r.ID() {
				t.Fatalf("the owner's retry: %s, want %s", again.ID(), r.ID())
			}
			mustHold(t, postgres.NewStore(pool), s.ID(), "carol", time.Minute, 5)
			if _, err := insert(testContext(t), store, s.ID(), 5, "bob", nextFence()); err == nil {
				t.Fatal("booking a held seat succeeded")
			}
			expectEvents(t, pool, seq, "refused bookings and a retry")
		})
	}
}

// A change that fails leaves no event: a hold refused for a seat taken,
// or for one live hold too many, and a confirmation that fails after it
// began booking.
func TestRolledBackChangesWriteNoEvent(t *testing.T) {
	t.Parallel()
	store, pool := eventStore(t, nil)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 1, "carol")
	seq := lastSeq(eventsAfter(t, pool, 0), 0)

	if _, err := hold(t, store, s.ID(), "alice", time.Minute, 1, 2); err == nil {
		t.Fatal("a hold of a booked seat succeeded")
	}
	if _, err := store.InsertHold(ctx, reservation.NewHold{ScheduleID: s.ID(), SeatIDs: []int{3}, Fences: []int64{nextFence()},
		UserID: "alice", TTL: time.Minute, MaxLive: 1}); err != nil {
		t.Fatal(err)
	}
	seq = lastSeq(eventsAfter(t, pool, seq), seq)
	if _, err := store.InsertHold(ctx, reservation.NewHold{ScheduleID: s.ID(), SeatIDs: []int{4}, Fences: []int64{nextFence()},
		UserID: "alice", TTL: time.Minute, MaxLive: 1}); !errors.Is(err, reservation.ErrTooManyHolds) {
		t.Fatalf("a second live hold with a cap of 1: %v", err)
	}
	// A seat booked behind the hold's back (as when a seat lock failed):
	// the confirmation books the other seats, then fails on this one.
	h := mustHold(t, store, s.ID(), "dave", time.Minute, 6, 7)
	seq = lastSeq(eventsAfter(t, pool, seq), seq)
	if _, err := pool.Exec(ctx, `INSERT INTO reservations (schedule_id, seat_id, user_id, fence) VALUES ($1, 7, 'eve', $2)`,
		s.ID(), nextFence()); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ConfirmHold(ctx, h.ID(), "dave"); err == nil {
		t.Fatal("confirming a hold whose seat was booked succeeded")
	}
	expired := mustHold(t, store, s.ID(), "dave", time.Millisecond, 8)
	seq = lastSeq(eventsAfter(t, pool, seq), seq)
	time.Sleep(5 * time.Millisecond)
	if _, err := store.ConfirmHold(ctx, expired.ID(), "dave"); !errors.Is(err, reservation.ErrHoldExpired) {
		t.Fatalf("confirming an expired hold: %v", err)
	}
	expectEvents(t, pool, seq, "failed changes")
}

// A group PostgreSQL refuses whole writes no event; each booking written
// again alone writes its own, the one at fault none.
func TestRefusedGroupWritesNoEvent(t *testing.T) {
	t.Parallel()
	gate := newBookingGate(1)
	store, pool := eventStore(t, gate, postgres.WithGroupWriters(1))
	s := mustSchedule(t, postgres.NewStore(pool), 10)
	first := holdFirstBooking(t, store, gate, s.ID())
	group := []reservation.NewReservation{
		{ScheduleID: s.ID(), SeatID: 1, UserID: "alice", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 2, UserID: "bad\x00user", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 3, UserID: "carol", Fence: nextFence()},
	}
	wait := bookAll(store, group)
	waitPending(t, store, len(group))
	close(gate.open)
	booked := []reservation.Reservation{first()[0].r}
	got := wait()
	if got[0].err != nil || got[1].err == nil || got[2].err != nil || gate.grouped.Load() != 1 {
		t.Fatalf("outcomes %v, %v, %v in %d groups; want booked, refused, booked in one refused group",
			got[0].err, got[1].err, got[2].err, gate.grouped.Load())
	}
	booked = append(booked, got[0].r, got[2].r)
	events := eventsAfter(t, pool, 0)
	if len(events) != len(booked) {
		t.Fatalf("events %v, want one per booking", events)
	}
	objects := map[uuid.UUID]bool{}
	for _, e := range events {
		objects[e.object] = e.typ == webhook.ReservationCreated
	}
	for _, r := range booked {
		if !objects[r.ID()] {
			t.Errorf("no reservation.created for %s in %v", r.ID(), events)
		}
	}
}

// Concurrent bookings written in groups get one reservation.created each.
func TestGroupCommitWritesOneEventPerBooking(t *testing.T) {
	t.Parallel()
	const bookings = 200
	gate := newBookingGate(0)
	store, pool := eventStore(t, gate, postgres.WithGroupWriters(2))
	s := mustSchedule(t, postgres.NewStore(pool), bookings)
	all := make([]reservation.NewReservation, bookings)
	for i := range all {
		all[i] = reservation.NewReservation{ScheduleID: s.ID(), SeatID: i + 1, UserID: fmt.Sprintf("user-%d", i), Fence: nextFence()}
	}
	ids := map[uuid.UUID]bool{}
	for i, o := range bookAll(store, all)() {
		if o.err != nil {
			t.Fatalf("booking %d: %v", i, o.err)
		}
		ids[o.r.ID()] = true
	}
	events := eventsAfter(t, pool, 0)
	if len(events) != bookings {
		t.Fatalf("%d events for %d bookings", len(events), bookings)
	}
	for _, e := range events {
		if e.typ != webhook.ReservationCreated || !ids[e.object] {
			t.Errorf("event %s: not one of the bookings' reservation.created", e)
		}
		delete(ids, e.object)
	}
	t.Logf("%d bookings: %d alone, %d groups", bookings, gate.alone.Load(), gate.grouped.Load())
}

// Expired holds are announced once each, however many announcers run; a
// confirmed, released or live hold is never announced.
func TestExpiredHoldsAreAnnouncedOnce(t *testing.T) {
	t.Parallel()
	store, pool := eventStore(t, nil)
	ctx := testContext(t)
	s := mustSchedule(t, store, 40)
	// Confirmed and released before they would have expired, each at once:
	// on a busy machine a second can pass between two holds.
	confirmed := mustHold(t, store, s.ID(), "carol", 3*time.Second, 31)
	if _, err := store.ConfirmHold(ctx, confirmed.ID(), "carol"); err != nil {
		t.Fatal(err)
	}
	released := mustHold(t, store, s.ID(), "dave", 3*time.Second, 32)
	if _, err := store.ReleaseHold(ctx, released.ID(), "dave"); err != nil {
		t.Fatal(err)
	}
	live := mustHold(t, store, s.ID(), "erin", time.Minute, 33)
	var expired []reservation.Hold
	for seat := 1; seat <= 30; seat++ {
		expired = append(expired, mustHold(t, store, s.ID(), fmt.Sprintf("user-%d", seat), 50*time.Millisecond, seat))
	}
	seq := lastSeq(eventsAfter(t, pool, 0), 0)
	// Past every expiry but the live hold's.
	last := expired[len(expired)-1].ExpiresAt()
	for _, h := range []reservation.Hold{confirmed, released} {
		if h.ExpiresAt().After(last) {
			last = h.ExpiresAt()
		}
	}
	time.Sleep(time.Until(last.Add(50 * time.Millisecond)))

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				n, err := store.AnnounceExpiredHolds(ctx, 4)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if total != len(expired) {
		t.Errorf("announcers announced %d holds, want %d", total, len(expired))
	}
	got := eventsAfter(t, pool, seq)
	byHold := map[uuid.UUID]storedEvent{}
	for _, e := range got {
		if _, twice := byHold[e.object]; twice || e.typ != webhook.HoldExpired {
			t.Errorf("event %s: want one hold.expired per hold", e)
		}
		byHold[e.object] = e
	}
	for _, h := range expired {
		e, ok := byHold[h.ID()]
		if !ok {
			t.Errorf("hold %s: no hold.expired", h.ID())
			continue
		}
		if want := holdNow(t, store, h.ID()).data; !reflect.DeepEqual(e.data, want) {
			t.Errorf("hold.expired data %v, want %v", e.data, want)
		}
		if status := e.data.(map[string]any)["status"]; status != "expired" {
			t.Errorf("hold.expired status %v", status)
		}
	}
	if n, err := store.AnnounceExpiredHolds(ctx, 100); err != nil || n != 0 {
		t.Errorf("announcing again: %d, %v; want none left", n, err)
	}
	if _, ok := byHold[live.ID()]; ok {
		t.Error("the live hold was announced expired")
	}
	if len(got) != len(expired) {
		t.Errorf("%d events, want %d (none for the confirmed, released or live hold)", len(got), len(expired))
	}
}

// stmtGate holds back the first statement (or batch of them) containing
// match sent once arm is closed, until release is: tests order a
// transaction against another.
type stmtGate struct {
	match   string
	arm     chan struct{} // closed: the next matching statement is held
	reached chan struct{}
	release chan struct{}
	taken   atomic.Bool
}

func newStmtGate(match string) *stmtGate {
	return &stmtGate{match: match, arm: make(chan struct{}), reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *stmtGate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	g.hold(data.SQL)
	return ctx
}

func (g *stmtGate) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart holds back a batch, all its statements, when one of
// them matches.
func (g *stmtGate) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	var all strings.Builder
	for _, q := range data.Batch.QueuedQueries {
		all.WriteString(q.SQL)
	}
	g.hold(all.String())
	return ctx
}

func (g *stmtGate) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (g *stmtGate) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// hold waits for release the first time sql, sent once armed, matches.
func (g *stmtGate) hold(sql string) {
	select {
	case <-g.arm:
	default:
		return
	}
	if strings.Contains(sql, g.match) && g.taken.CompareAndSwap(false, true) {
		close(g.reached)
		<-g.release
	}
}

// A confirmation that began before the hold expired but reads it after
// the announcer marked it finds it expired; one that locked the hold
// first confirms it, and the announcer leaves it alone. Never both events.
func TestConfirmAndAnnounceAtExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		match string // the confirmation's statement held back
		want  string
	}{
		{"announced first", "FOR UPDATE", webhook.HoldExpired},
		{"locked by the confirmation first", "INSERT INTO webhook_events", webhook.HoldConfirmed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gate := newStmtGate(tc.match)
			store, pool := eventStore(t, gate)
			ctx := testContext(t)
			s := mustSchedule(t, store, 10)
			h := mustHold(t, store, s.ID(), "alice", 300*time.Millisecond, 1, 2)
			seq := lastSeq(eventsAfter(t, pool, 0), 0)
			close(gate.arm)
			done := make(chan error, 1)
			go func() {
				_, err := store.ConfirmHold(ctx, h.ID(), "alice")
				done <- err
			}()
			<-gate.reached
			time.Sleep(time.Until(h.ExpiresAt()) + 20*time.Millisecond)
			n, err := store.AnnounceExpiredHolds(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			close(gate.release)
			err = <-done
			switch tc.want {
			case webhook.HoldExpired:
				if n != 1 || !errors.Is(err, reservation.ErrHoldExpired) {
					t.Errorf("announced %d, confirmation %v; want 1 and ErrHoldExpired", n, err)
				}
			case webhook.HoldConfirmed:
				if n != 0 || err != nil {
					t.Errorf("announced %d, confirmation %v; want 0 and confirmed", n, err)
				}
				if n, err := store.AnnounceExpiredHolds(ctx, 10); n != 0 || err != nil {
					t.Errorf("announcing the confirmed hold: %d, %v", n, err)
				}
			}
			got := eventsAfter(t, pool, seq)
			if len(got) == 0 || got[0].typ != tc.want || got[0].object != h.ID() {
				t.Fatalf("events %v, want %s first", got, tc.want)
			}
			for _, e := range got[1:] {
				if e.typ != webhook.ReservationCreated || tc.want != webhook.HoldConfirmed {
					t.Errorf("event %s after %s", e, tc.want)
				}
			}
		})
	}
}

// Confirmations racing announcers at the moment holds expire: each hold
// gets exactly one of hold.confirmed and hold.expired.
func TestConfirmRacingAnnouncersGetsOneEvent(t *testing.T) {
	t.Parallel()
	const holds = 40
	store, pool := eventStore(t, nil)
	ctx := testContext(t)
	s := mustSchedule(t, store, holds)
	list := make([]reservation.Hold, holds)
	for i := range list {
		list[i] = mustHold(t, store, s.ID(), fmt.Sprintf("user-%d", i), 200*time.Millisecond, i+1)
	}
	seq := lastSeq(eventsAfter(t, pool, 0), 0)
	stop := make(chan struct{})
	var announcers sync.WaitGroup
	for range 3 {
		announcers.Add(1)
		go func() {
			defer announcers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := store.AnnounceExpiredHolds(ctx, 5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var confirms sync.WaitGroup
	for i, h := range list {
		confirms.Add(1)
		go func() {
			defer confirms.Done()
			// Spread around the expiry: some before, some at, some after.
			time.Sleep(time.Until(h.ExpiresAt()) + time.Duration(i%8-4)*2*time.Millisecond)
			_, _ = store.ConfirmHold(ctx, h.ID(), h.UserID())
		}()
	}
	confirms.Wait()
	time.Sleep(50 * time.Millisecond)
	close(stop)
	announcers.Wait()
	if _, err := store.AnnounceExpiredHolds(ctx, holds); err != nil {
		t.Fatal(err)
	}
	ends := map[uuid.UUID][]string{}
	for _, e := range eventsAfter(t, pool, seq) {
		if e.typ == webhook.HoldConfirmed || e.typ == webhook.HoldExpired {
			ends[e.object] = append(ends[e.object], e.typ)
		}
	}
	outcomes := map[string]int{}
	for _, h := range list {
		if got := ends[h.ID()]; len(got) != 1 {
			t.Errorf("hold %s: %v, want exactly one of hold.confirmed and hold.expired", h.ID(), got)
		} else {
			outcomes[got[0]]++
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// A booking's reservation.created data, rendered by the booking's own
// statement, writes createdAt as Go does (UTC, the fraction's trailing
// zeros dropped), whatever the fraction.
func TestReservationCreatedDataWritesTimesAsGo(t *testing.T) {
	_, pool := newStore(t)
	ctx := testContext(t)
	id := uuid.New()
	for _, at := range []time.Time{
		time.Date(2026, 11, 29, 7, 29, 50, 0, time.UTC),
		time.Date(2026, 11, 29, 7, 29, 0, 100_000_000, time.UTC),
		time.Date(2026, 11, 29, 7, 0, 10, 120_000_000, time.UTC),
		time.Date(2026, 11, 29, 7, 29, 20, 123_456_000, time.UTC),
		time.Date(2026, 11, 29, 7, 29, 59, 100_010_000, time.FixedZone("CET", 3600)),
	} {
		var data []byte
		if err := pool.QueryRow(ctx, `SELECT reservation_created_data($1, 7, 12, 'alice', $2)::text`, id, at).Scan(&data); err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID         uuid.UUID `json:"id"`
			ScheduleID int64     `json:"scheduleId"`
			SeatID     int       `json:"seatId"`
			UserID     string    `json:"userId"`
			CreatedAt  string    `json:"createdAt"`
			Status     string    `json:"status"`
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		want, _ := json.Marshal(at.UTC())
		if `"`+got.CreatedAt+`"` != string(want) {
			t.Errorf("createdAt of %v = %q, want %s", at, got.CreatedAt, want)
		}
		if got.ID != id || got.ScheduleID != 7 || got.SeatID != 12 || got.UserID != "alice" || got.Status != "active" {
			t.Errorf("data = %s", data)
		}
	}
}
