package app_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/webhook"
)

// webhookDrainPatience bounds the wait for every event to reach a receiver
// after a fault: a delivery the dead instance had leased is taken again
// once its lease (WEBHOOK_TIMEOUT + 5 s) has run out.
const webhookDrainPatience = 60 * time.Second

// An instance SIGKILLed while it sends webhooks loses no event: another
// instance sends every event of every committed change, the killed one's
// included, in order per object; the messages the dead instance had sent
// are sent again (at least once). The instance is killed with an attempt
// on the wire, either while its fan-out's transaction is still open (the
// events go back to undispatched) or once the fan-out has given up
// waiting for the attempt and written it pending under a lease (it is
// taken again when the lease runs out).
func TestFaultWebhooksSurviveAnInstanceKilledMidDelivery(t *testing.T) {
	t.Parallel()
	for _, leased := range []bool{false, true} {
		name := "fan-out-open"
		if leased {
			name = "delivery-leased"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			webhooksAcrossAKill(t, leased)
		})
	}
}

func webhooksAcrossAKill(t *testing.T, leased bool) {
	h := newHarnessWith(t, 0, withLocalWebhooks)
	victim := h.startChild(t, map[string]string{
		"WEBHOOK_ALLOW_INSECURE": "true",
		"WEBHOOK_ALLOW_PRIVATE":  "true",
		"WEBHOOK_TIMEOUT":        durationEnv(3 * time.Second),
	})
	h.bases = append(h.bases, victim.base) // instance 0, until killed

	r := newHookReceiver(t)
	// Once held is set, every message waits at the receiver for the gate.
	var held atomic.Bool
	var waiting atomic.Int32
	gate := make(chan struct{})
	r.mu.Lock()
	r.before = func() {
		if held.Load() {
			waiting.Add(1)
			<-gate
		}
	}
	r.mu.Unlock()
	opened := false
	open := func() {
		if !opened {
			opened = true
			held.Store(false)
			close(gate)
		}
	}
	t.Cleanup(open)
	h.createWebhook(webhookBody(r.srv.URL))
	schedule := h.createScheduleDirect(60)

	// Changes whose deliveries the victim finishes and records.
	changes := webhookChanges{h: h, schedule: schedule}
	changes.make(t, 0, 1, 10)
	awaitDispatched(t, h)

	// One more change, whose message the receiver holds up.
	held.Store(true)
	changes.make(t, 0, 11, 11)
	deadline := time.Now().Add(faultPatience)
	for waiting.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no message reached the receiver within %v of the change", faultPatience)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if leased {
		awaitPendingDelivery(t, h)
	}
	victim.kill9(t)
	killedAt := time.Now()
	open()

	// The survivor: it takes over the dead instance's events and sends
	// its own changes' events too.
	h.bases = append(h.bases, h.serve(h.cfg)) // instance 1
	changes.make(t, 1, 12, 20)

	got := expectEveryEventDelivered(t, h, r)
	if got.duplicates == 0 {
		t.Error("no message sent twice: the one the receiver held up was never sent again")
	}
	t.Logf("fault=webhooks-instance-kill-9 leased=%t: %d events, %d messages, %d sent again; every event delivered %v after the kill",
		leased, got.events, got.messages, got.duplicates, time.Since(killedAt).Round(time.Millisecond))
}

// awaitPendingDelivery waits until a delivery is written pending: the
// fan-out has stopped waiting for its attempt.
func awaitPendingDelivery(t *testing.T, h *harness) {
	t.Helper()
	awaitCount(t, h, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`,
		func(n int) bool { return n > 0 }, "a delivery written pending")
}

// awaitCount waits, up to faultPatience, until done accepts the count
// query answers; what says what was awaited.
func awaitCount(t *testing.T, h *harness, query string, done func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(faultPatience)
	for {
		var n int
		if err := h.pool.QueryRow(context.Background(), query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if done(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s after %v: the count is %d", what, faultPatience, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// webhookChanges makes, for each seat of a range, a booking and its
// cancellation, and a hold and its release: two events for each of two
// objects.
type webhookChanges struct {
	h        *harness
	schedule int64
}

// make changes seats from through to on instance base, using the seat
// and the one 30 above it.
func (c webhookChanges) make(t *testing.T, base, from, to int) {
	t.Helper()
	for seat := from; seat <= to; seat++ {
		user := fmt.Sprintf("user-%d", seat)
		booked := c.h.reserve(base, user, c.schedule, seat)
		if booked.status != http.StatusOK {
			t.Fatalf("booking seat %d: %d %s", seat, booked.status, booked.raw)
		}
		if resp := c.h.cancel(base, user, str(booked.body, "id")); resp.status != http.StatusNoContent {
			t.Fatalf("cancelling seat %d: %d %s", seat, resp.status, resp.raw)
		}
		held := c.h.hold(base, user, c.schedule, seat+30)
		if held.status != http.StatusCreated {
			t.Fatalf("holding seat %d: %d %s", seat+30, held.status, held.raw)
		}
		if resp := c.h.release(base, user, str(held.body, "id")); resp.status != http.StatusNoContent {
			t.Fatalf("releasing hold of seat %d: %d %s", seat+30, resp.status, resp.raw)
		}
	}
}

// awaitDispatched waits until every event written so far has been fanned
// out.
func awaitDispatched(t *testing.T, h *harness) {
	t.Helper()
	awaitCount(t, h, `SELECT count(*) FROM webhook_events WHERE NOT dispatched`,
		func(n int) bool { return n == 0 }, "every event fanned out")
}

// deliveryCount is what a receiver got of the events written.
type deliveryCount struct {
	events, messages, duplicates int
}

// expectEveryEventDelivered waits until r has a message of every event
// written (webhookDrainPatience at most), then checks that each object's
// events first arrived in the order they happened.
func expectEveryEventDelivered(t *testing.T, h *harness, r *hookReceiver) deliveryCount {
	t.Helper()
	deadline := time.Now().Add(webhookDrainPatience)
	for {
		events := map[string]webhookEvent{}
		for _, e := range h.eventsSince(0) {
			events[e.id] = e
		}
		r.mu.Lock()
		arrived := make([]string, len(r.got))
		for i, m := range r.got {
			arrived[i] = m.header.Get(webhook.HeaderID)
		}
		r.mu.Unlock()

		seen := map[string]bool{}
		last := map[string]int64{} // object -> seq of its latest event to arrive first
		count := deliveryCount{events: len(events), messages: len(arrived)}
		for _, id := range arrived {
			e, ok := events[id]
			if !ok {
				t.Fatalf("message %q is of no event written", id)
			}
			if seen[id] {
				count.duplicates++
				continue
			}
			seen[id] = true
			if e.seq < last[e.object] {
				t.Errorf("object %s: event %d arrived after event %d", e.object, e.seq, last[e.object])
			}
			last[e.object] = e.seq
		}
		lost := len(events) - len(seen)
		if lost == 0 && len(events) > 0 {
			return count
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never reached the receiver within %v", lost, len(events), webhookDrainPatience)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
