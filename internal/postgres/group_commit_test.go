package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

// bookingGate is a pgx tracer that counts the booking statements (one
// booking alone, or a group in one), and holds the first `hold` of them
// back until opened, so that the bookings sent meanwhile queue behind them.
type bookingGate struct {
	hold     int32
	held     atomic.Int32
	open     chan struct{}
	alone    atomic.Int32 // one-row statements
	grouped  atomic.Int32 // group statements
	inGroups atomic.Int32 // bookings written in group statements
}

func newBookingGate(hold int32) *bookingGate {
	return &bookingGate{hold: hold, open: make(chan struct{})}
}

func (g *bookingGate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(data.SQL, "INSERT INTO reservations") {
		return ctx
	}
	if strings.Contains(data.SQL, "unnest") {
		g.grouped.Add(1)
		if len(data.Args) > 0 {
			if seats, ok := data.Args[1].([]int32); ok {
				g.inGroups.Add(int32(len(seats)))
			}
		}
	} else {
		g.alone.Add(1)
	}
	if g.held.Add(1) <= g.hold {
		<-g.open
	}
	return ctx
}

func (g *bookingGate) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// gatedStore is a Store (with opts) with writers group writers on a pool traced by a
// gate holding back the first hold booking statements, and a plain store
// on the same database for setting up and checking.
func gatedStore(t *testing.T, writers int, hold int32, opts ...postgres.StoreOption) (gated *postgres.Store, plain *postgres.Store, gate *bookingGate) {
	t.Helper()
	plainPool := testenv.Pool(t)
	cfg, err := pgxpool.ParseConfig(plainPool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	gate = newBookingGate(hold)
	cfg.ConnConfig.Tracer = gate
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return postgres.NewStore(pool, append(opts, postgres.WithGroupWriters(writers))...), postgres.NewStore(plainPool), gate
}

// waitPending waits until n bookings are queued behind the held writes.
func waitPending(t *testing.T, store *postgres.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for postgres.PendingBookings(store) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d bookings queued, want %d", postgres.PendingBookings(store), n)
		}
		time.Sleep(time.Millisecond)
	}
}

type outcome struct {
	r   reservation.Reservation
	err error
}

// bookAll sends the bookings at once, each in a goroutine, and returns
// a function that waits for their outcomes.
func bookAll(store *postgres.Store, bookings []reservation.NewReservation) func() []outcome {
	out := make([]outcome, len(bookings))
	var wg sync.WaitGroup
	for i, nr := range bookings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out[i].r, out[i].err = store.InsertReservation(ctx, nr)
		}()
	}
	return func() []outcome { wg.Wait(); return out }
}

// Bookings that arrive while a booking is written go together in one
// statement, and each gets its own outcome: a free seat is booked, a
// booked seat is taken, a held seat is held, a stale fence is refused, a
// seat outside the schedule is not found. One refused row refuses only
// its own request.
func TestGroupCommitGivesEachBookingItsOwnOutcome(t *testing.T) {
	t.Parallel()
	store, plain, gate := gatedStore(t, 1, 1)
	s := mustSchedule(t, plain, 10)
	mustReserve(t, plain, s.ID(), 1, "carol")          // seat 1: taken
	mustHold(t, plain, s.ID(), "dave", time.Minute, 2) // seat 2: held
	stale := mustReserve(t, plain, s.ID(), 3, "erin")  // seat 3: its fence raised by a cancellation
	if _, err := plain.CancelReservation(testContext(t), stale.ID(), nextFence()+1000); err != nil {
		t.Fatal(err)
	}

	// The first booking is held back in PostgreSQL's way; the others queue.
	first := holdFirstBooking(t, store, gate, s.ID())
	group := []reservation.NewReservation{
		{ScheduleID: s.ID(), SeatID: 4, UserID: "alice", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 1, UserID: "bob", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 2, UserID: "bob", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 3, UserID: "bob", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 11, UserID: "bob", Fence: nextFence()},
		{ScheduleID: s.ID() + 1000, SeatID: 1, UserID: "bob", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 5, UserID: "frank", Fence: nextFence()},
	}
	wait := bookAll(store, group)
	waitPending(t, store, len(group))
	close(gate.open)
	if o := first()[0]; o.err != nil {
		t.Fatalf("the first booking: %v", o.err)
	}
	got := wait()

	var held *reservation.UnavailableSeat
	checks := []struct {
		name string
		ok   func(outcome) bool
	}{
		{"booked for alice", func(o outcome) bool { return o.err == nil && o.r.SeatID() == 4 && o.r.UserID() == "alice" }},
		{"ErrSeatTaken naming carol", func(o outcome) bool {
			var taken *reservation.SeatTakenError
			return errors.Is(o.err, reservation.ErrSeatTaken) && errors.As(o.err, &taken) && taken.Owner == "carol"
		}},
		{"a *UnavailableSeat with time left", func(o outcome) bool {
			return errors.As(o.err, &held) && held.RetryAfter > 50*time.Second
		}},
		{"ErrStaleFence", func(o outcome) bool { return errors.Is(o.err, reservation.ErrStaleFence) }},
		{"ErrSeatNotFound", func(o outcome) bool { return errors.Is(o.err, reservation.ErrSeatNotFound) }},
		{"ErrScheduleNotFound", func(o outcome) bool { return errors.Is(o.err, reservation.ErrScheduleNotFound) }},
		{"booked for frank", func(o outcome) bool { return o.err == nil && o.r.SeatID() == 5 && o.r.UserID() == "frank" }},
	}
	for i, c := range checks {
		if !c.ok(got[i]) {
			t.Errorf("booking of seat %d: %+v, %v; want %s", group[i].SeatID, got[i].r, got[i].err, c.name)
		}
	}
	if g, n := gate.grouped.Load(), gate.inGroups.Load(); g != 1 || n != int32(len(group)) {
		t.Errorf("%d group statements with %d bookings, want the %d queued bookings in one", g, n, len(group))
	}
	for seat, want := range map[int]string{4: "alice", 5: "frank", 9: "first"} {
		if r, err := plain.SeatReservation(testContext(t), s.ID(), seat); err != nil || r.UserID() != want {
			t.Errorf("seat %d: %+v, %v; want %s's reservation", seat, r, err, want)
		}
	}
}

// holdFirstBooking sends a booking of seat 9 that gate holds back, and
// returns what waits for its outcome.
func holdFirstBooking(t *testing.T, store *postgres.Store, gate *bookingGate, scheduleID int64) func() []outcome {
	t.Helper()
	first := bookAll(store, []reservation.NewReservation{{ScheduleID: scheduleID, SeatID: 9, UserID: "first", Fence: nextFence()}})
	waitHeld(t, gate, 1)
	return first
}

func waitHeld(t *testing.T, gate *bookingGate, n int32) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for gate.held.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d booking statements sent, want %d held", gate.held.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A group that PostgreSQL refuses as a whole (a user id with a NUL byte,
// which it cannot store) is written again one booking at a time: only the
// booking at fault fails, with the 422 the one-row statement gives.
func TestGroupRefusedWholeIsWrittenAgainAlone(t *testing.T) {
	t.Parallel()
	store, plain, gate := gatedStore(t, 1, 1)
	s := mustSchedule(t, plain, 10)
	first := holdFirstBooking(t, store, gate, s.ID())
	group := []reservation.NewReservation{
		{ScheduleID: s.ID(), SeatID: 1, UserID: "alice", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 2, UserID: "bad\x00user", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 3, UserID: "carol", Fence: nextFence()},
	}
	wait := bookAll(store, group)
	waitPending(t, store, len(group))
	close(gate.open)
	first()
	got := wait()
	var invalid *reservation.InvalidError
	if got[0].err != nil || got[2].err != nil || !errors.As(got[1].err, &invalid) || invalid.Field != "userId" {
		t.Errorf("outcomes %v, %v, %v; want booked, a userId InvalidError, booked", got[0].err, got[1].err, got[2].err)
	}
	if gate.grouped.Load() != 1 {
		t.Errorf("%d group statements, want the one refused", gate.grouped.Load())
	}
}

// Under load, bookings share statements and commits: 200 bookings queued
// behind two held writes take a handful of statements, each one
// autocommitted transaction.
func TestGroupCommitWritesManyBookingsInFewTransactions(t *testing.T) {
	t.Parallel()
	const bookings = 200
	store, plain, gate := gatedStore(t, 2, 2)
	s := mustSchedule(t, plain, bookings)
	all := make([]reservation.NewReservation, bookings)
	for i := range all {
		all[i] = reservation.NewReservation{ScheduleID: s.ID(), SeatID: i + 1, UserID: fmt.Sprintf("user-%d", i), Fence: nextFence()}
	}
	wait := bookAll(store, all[:2])
	waitHeld(t, gate, 2)
	waitRest := bookAll(store, all[2:])
	waitPending(t, store, bookings-2)
	close(gate.open)
	for i, o := range append(wait(), waitRest()...) {
		if o.err != nil {
			t.Fatalf("booking %d: %v", i, o.err)
		}
	}
	occupied, err := plain.OccupiedSeats(testContext(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	rows := len(occupied)
	statements := gate.alone.Load() + gate.grouped.Load()
	if rows != bookings || statements > 6 {
		t.Errorf("%d rows in %d statements (%d alone, %d groups), want %d rows in at most 6", rows, statements,
			gate.alone.Load(), gate.grouped.Load(), bookings)
	}
	t.Logf("%d bookings: %d statements and commits (%d alone, %d groups)", bookings, statements, gate.alone.Load(), gate.grouped.Load())
}

// A booking whose caller gives up while it waits for a group is never
// written.
func TestBookingWithdrawnBeforeItsGroupIsNotWritten(t *testing.T) {
	t.Parallel()
	store, plain, gate := gatedStore(t, 1, 1)
	s := mustSchedule(t, plain, 10)
	first := holdFirstBooking(t, store, gate, s.ID())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: s.ID(), SeatID: 1, UserID: "gone", Fence: nextFence()})
		done <- err
	}()
	waitPending(t, store, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("withdrawn booking: %v, want context.Canceled", err)
	}
	close(gate.open)
	first()
	if _, err := plain.SeatReservation(testContext(t), s.ID(), 1); !errors.Is(err, reservation.ErrReservationNotFound) {
		t.Errorf("seat of the withdrawn booking: %v, want no reservation", err)
	}
	if gate.grouped.Load() != 0 || gate.alone.Load() != 1 {
		t.Errorf("%d alone, %d groups: want only the first booking written", gate.alone.Load(), gate.grouped.Load())
	}
}
