package app_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
)

// A change made through instance A reaches a stream open on instance B,
// for every kind of change: booking, hold, confirm, release, cancel and
// expiry.
func TestSeatEventsReachEveryInstance(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 2, func(cfg *config.Config) { cfg.HoldTTL = 2 * time.Second })
	schedule := h.createSchedule(10)
	h.reserve(0, "alice", schedule, 1)

	s := h.stream(1, schedule, "")
	snap := snapshotSeats(t, s.next(5*time.Second))
	if len(snap) != 10 || snap[1] != "reserved" || snap[2] != "available" {
		t.Fatalf("snapshot = %v, want 10 seats with seat 1 reserved", snap)
	}

	start := time.Now()
	if got := h.reserve(0, "bob", schedule, 2); got.status != http.StatusOK {
		t.Fatalf("book: %d %s", got.status, got.raw)
	}
	s.seatEvent(2, "reserved", time.Second)
	t.Logf("booking on A seen on B after %s", time.Since(start))

	held := h.hold(0, "carol", schedule, 3, 4)
	s.seatEvent(3, "held", time.Second)
	s.seatEvent(4, "held", time.Second)
	h.confirm(0, "carol", str(held.body, "id"))
	s.seatEvent(3, "reserved", time.Second)
	s.seatEvent(4, "reserved", time.Second)

	released := h.hold(0, "dave", schedule, 5)
	s.seatEvent(5, "held", time.Second)
	h.release(0, "dave", str(released.body, "id"))
	s.seatEvent(5, "available", time.Second)

	booked := h.reserve(0, "erin", schedule, 6)
	s.seatEvent(6, "reserved", time.Second)
	h.cancel(0, "erin", str(booked.body, "id"))
	s.seatEvent(6, "available", time.Second)

	// The hold expires after 2 s; the expiry job (every second, on one
	// instance) announces the seat.
	h.hold(0, "frank", schedule, 7)
	s.seatEvent(7, "held", time.Second)
	s.seatEvent(7, "available", 6*time.Second)
	if got := h.seatStatuses(schedule); got[7] != "available" {
		t.Errorf("seat 7 after expiry: %s", got[7])
	}
}

// A client that reconnects with Last-Event-ID gets exactly the changes it
// missed; one whose id is unknown gets a fresh snapshot.
func TestSeatEventsResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(10)
	first := h.stream(0, schedule, "")
	mark := first.next(5 * time.Second).id
	first.close()

	for seat := 1; seat <= 3; seat++ {
		h.reserve(1, "alice", schedule, seat)
	}
	resumed := h.stream(1, schedule, mark)
	var ids []string
	for seat := 1; seat <= 3; seat++ {
		ev := resumed.next(5 * time.Second)
		if ev.name != "seat" || ev.data != fmt.Sprintf(`{"seatId":%d,"status":"reserved","label":"A%d","row":"A","number":%d,"category":"standard"}`, seat, seat, seat) {
			t.Fatalf("resumed event %d = %+v, want seat %d reserved", seat, ev, seat)
		}
		ids = append(ids, ev.id)
	}
	h.reserve(0, "alice", schedule, 4)
	resumed.seatEvent(4, "reserved", time.Second)

	// From the middle, again: only what follows.
	again := h.stream(0, schedule, ids[1])
	if ev := again.next(5 * time.Second); ev.id != ids[2] {
		t.Errorf("resuming from %s gave %+v, want the event %s", ids[1], ev, ids[2])
	}

	for _, bad := range []string{"garbage", "1-0"} {
		fresh := h.stream(0, schedule, bad)
		if snap := snapshotSeats(t, fresh.next(5*time.Second)); snap[4] != "reserved" {
			t.Errorf("Last-Event-ID %q: snapshot %v, want seat 4 reserved", bad, snap)
		}
	}
}

func TestSeatEventsErrorsAndLimits(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.MaxStreams = 1 })
	schedule := h.createSchedule(3)
	for _, path := range []string{"/schedules/999999999/seats/events", "/schedules/abc/seats/events"} {
		expectProblem(t, h.do(request{method: http.MethodGet, path: path}), http.StatusNotFound, "schedule_not_found")
	}
	open := h.stream(0, schedule, "")
	open.next(5 * time.Second)
	full := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats/events", schedule)})
	expectProblem(t, full, http.StatusServiceUnavailable, "too_many_streams")
	if full.header.Get("Retry-After") == "" {
		t.Error("too_many_streams without Retry-After")
	}
	open.close()
	// The slot is given back when the client goes.
	deadline := time.Now().Add(5 * time.Second)
	for {
		status := h.streamStatus(schedule)
		if status == http.StatusOK {
			break
		}
		if status != http.StatusServiceUnavailable {
			t.Fatalf("stream answered %d", status)
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream slot was not given back 5 s after the client left")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
