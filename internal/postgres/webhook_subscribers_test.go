package postgres_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// A change writes an event only of a type some enabled endpoint
// subscribes to: with no endpoint, none; then only the subscribed type;
// none while that endpoint is disabled. Holds and their changes, a booking
// alone and a group of bookings alike.
func TestEventsAreWrittenOnlyForSubscribers(t *testing.T) {
	t.Parallel()
	gate := newBookingGate(1)
	store, pool := unsubscribedEventStore(t, gate, postgres.WithGroupWriters(1))
	ctx := testContext(t)
	s := mustSchedule(t, postgres.NewStore(pool), 20)
	changeEverything := func(seat int) {
		t.Helper()
		h := mustHold(t, store, s.ID(), "alice", time.Minute, seat, seat+1)
		booked, err := store.ConfirmHold(ctx, h.ID(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.CancelReservation(ctx, booked[0].ID(), nextFence()); err != nil {
			t.Fatal(err)
		}
		released := mustHold(t, store, s.ID(), "bob", time.Minute, seat+2)
		if _, err := store.ReleaseHold(ctx, released.ID(), "bob"); err != nil {
			t.Fatal(err)
		}
	}

	first := holdFirstBooking(t, store, gate, s.ID())
	wait := bookAll(store, []reservation.NewReservation{
		{ScheduleID: s.ID(), SeatID: 2, UserID: "carol", Fence: nextFence()},
		{ScheduleID: s.ID(), SeatID: 3, UserID: "dave", Fence: nextFence()},
	})
	waitPending(t, store, 2)
	close(gate.open)
	for i, o := range append(first(), wait()...) {
		if o.err != nil {
			t.Fatalf("grouped booking %d: %v", i, o.err)
		}
	}
	if gate.grouped.Load() != 1 {
		t.Fatalf("%d groups, want the two bookings in one", gate.grouped.Load())
	}
	changeEverything(4)
	seq := expectEvents(t, pool, 0, "no endpoint")

	e := subscribe(t, pool, webhook.HoldReleased)
	changeEverything(10)
	mustReserve(t, store, s.ID(), 13, "erin")
	events := eventsAfter(t, pool, seq)
	if len(events) != 1 || events[0].typ != webhook.HoldReleased {
		t.Fatalf("subscribed to %s: events %v, want that one", webhook.HoldReleased, events)
	}
	seq = lastSeq(events, seq)

	disabled := false
	if _, err := postgres.NewWebhookEndpoints(pool, sealer(t)).Update(ctx, e.ID, webhook.EndpointChange{Enabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	changeEverything(14)
	expectEvents(t, pool, seq, "its endpoint disabled")
}

// Every change that began at or after an endpoint's CreatedAt (a moment
// before its creation returned), which the fan-out gives it, wrote its
// event, however many changes ran while it was made.
func TestEveryChangeBegunAfterAnEndpointIsMadeWritesItsEvent(t *testing.T) {
	t.Parallel()
	const writers, seats = 8, 4000
	store, pool := unsubscribedEventStore(t, nil)
	ctx := testContext(t)
	s := mustSchedule(t, postgres.NewStore(pool), seats)

	// The events' rendering reads the schedule once, on the pool the
	// writers' transactions hold: read it before they start.
	mustHold(t, store, s.ID(), "first", time.Minute, seats)

	var (
		next atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for !stop.Load() {
				seat := int(next.Add(1))
				if seat >= seats {
					return
				}
				if _, err := hold(t, store, s.ID(), fmt.Sprintf("user-%d", w), time.Minute, seat); err != nil {
					t.Errorf("hold of seat %d: %v", seat, err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// holdsMade waits for n more holds to begin, or the writers to end.
	holdsMade := func(n int64) {
		for at := next.Load(); next.Load() < at+n; {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
	holdsMade(200)
	e := subscribe(t, pool, webhook.HoldCreated)
	holdsMade(200)
	stop.Store(true)
	<-done
	if t.Failed() {
		return
	}

	var after, missing int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (
			SELECT 1 FROM webhook_events ev WHERE ev.object_id = h.id AND ev.type = 'hold.created'))
		FROM holds h WHERE h.created_at >= $1`, e.CreatedAt).Scan(&after, &missing); err != nil {
		t.Fatal(err)
	}
	if after == 0 || missing != 0 {
		t.Fatalf("%d of the %d holds begun once the endpoint was made have no event", missing, after)
	}
	t.Logf("%d holds in all, %d begun after the endpoint was made", min(next.Load(), seats), after)
}
