package app_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestCancelReservation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(5)
	booked := h.reserve(0, "alice", schedule, 1)
	if booked.status != http.StatusOK || str(booked.body, "status") != "active" {
		t.Fatalf("book: %d %s", booked.status, booked.raw)
	}
	id := str(booked.body, "id")

	expectProblem(t, h.cancel(0, "bob", id), http.StatusNotFound, "reservation_not_found")
	expectProblem(t, h.cancel(0, "alice", "not-a-uuid"), http.StatusNotFound, "reservation_not_found")
	if h.activeRows(schedule, 1) != 1 {
		t.Fatal("another user's cancel touched the reservation")
	}
	if got := h.cancel(0, "alice", id); got.status != http.StatusNoContent || got.raw != "" {
		t.Fatalf("cancel: %d %q, want 204 without a body", got.status, got.raw)
	}
	read := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: h.token("alice", "")})
	if read.status != http.StatusOK || str(read.body, "status") != "cancelled" || str(read.body, "cancelledAt") == "" {
		t.Errorf("GET after cancel: %d %s, want status cancelled with cancelledAt", read.status, read.raw)
	}
	if got := h.cancel(0, "alice", id); got.status != http.StatusNoContent {
		t.Errorf("cancel again: %d %s, want 204", got.status, got.raw)
	}
	again := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: h.token("alice", "")})
	if str(again.body, "cancelledAt") != str(read.body, "cancelledAt") {
		t.Errorf("cancelling again moved cancelledAt: %s then %s", read.raw, again.raw)
	}
	if got := h.seatStatuses(schedule); got[1] != "available" {
		t.Errorf("seat map after cancel: %s, want available", got[1])
	}
}

// Cancelled, a sealed seat is booked again by exactly one of 100 racers
// on two instances.
func TestCancelThenRebookByManyRacers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(1)
	first := h.reserve(0, "alice", schedule, 1)
	if first.status != http.StatusOK {
		t.Fatalf("book: %d %s", first.status, first.raw)
	}
	// Both instances have seen the seat refused as taken (sealed, and
	// remembered for a moment) before the cancellation.
	expectProblem(t, h.reserve(1, "bob", schedule, 1), http.StatusConflict, "seat_taken")
	expectProblem(t, h.reserve(0, "bob", schedule, 1), http.StatusConflict, "seat_taken")
	if got := h.cancel(1, "alice", str(first.body, "id")); got.status != http.StatusNoContent {
		t.Fatalf("cancel: %d %s", got.status, got.raw)
	}

	const racers = 100
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([]response, racers)
	)
	for i := range racers {
		wg.Go(func() {
			<-start
			results[i] = h.reserve(i%2, fmt.Sprintf("racer-%d", i), schedule, 1)
		})
	}
	close(start)
	wg.Wait()
	counts := map[string]int{}
	for _, r := range results {
		counts[fmt.Sprintf("%d %s", r.status, r.code())]++
	}
	if counts["200 "] != 1 || counts["200 "]+counts["409 seat_locked"]+counts["409 seat_taken"] != racers {
		t.Fatalf("outcomes = %v, want exactly one 200 and the rest 409", counts)
	}
	if n := h.activeRows(schedule, 1); n != 1 {
		t.Errorf("active reservations = %d, want 1", n)
	}
	if n := h.reservationRows(schedule, 1); n != 2 {
		t.Errorf("rows = %d, want 2 (the cancelled one kept)", n)
	}
	t.Logf("outcomes: %v", counts)
}

// The fast path never refuses a cancelled seat: right after the
// cancellation, the instance that last refused the seat as taken books it.
func TestCancelledSeatIsNeverRefusedAsTaken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(20)
	for seat := 1; seat <= 20; seat++ {
		booked := h.reserve(0, "alice", schedule, seat)
		expectProblem(t, h.reserve(1, "bob", schedule, seat), http.StatusConflict, "seat_taken")
		if got := h.cancel(0, "alice", str(booked.body, "id")); got.status != http.StatusNoContent {
			t.Fatalf("seat %d: cancel %d %s", seat, got.status, got.raw)
		}
		if got := h.reserve(1, "carol", schedule, seat); got.status != http.StatusOK {
			t.Fatalf("seat %d: booking right after the cancel answered %d %s, want 200", seat, got.status, got.raw)
		}
	}
}

// A cancellation and a booking of the same seat, at the same time, end in
// a state that agrees everywhere: PostgreSQL, the seat map and the lock
// key's marker.
func TestConcurrentCancelAndBook(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	const rounds = 20
	schedule := h.createSchedule(rounds)
	for seat := 1; seat <= rounds; seat++ {
		booked := h.reserve(0, "alice", schedule, seat)
		if booked.status != http.StatusOK {
			t.Fatalf("book: %d %s", booked.status, booked.raw)
		}
		var cancelled, rebooked response
		var wg sync.WaitGroup
		wg.Go(func() { cancelled = h.cancel(seat%2, "alice", str(booked.body, "id")) })
		wg.Go(func() {
			time.Sleep(time.Duration(seat%4) * time.Millisecond)
			rebooked = h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("bob", ""),
				base: (seat + 1) % 2, contentType: "application/json", prefer: "wait=5",
				body: fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat)})
		})
		wg.Wait()
		if cancelled.status != http.StatusNoContent {
			t.Fatalf("seat %d: cancel %d %s", seat, cancelled.status, cancelled.raw)
		}
		switch {
		case rebooked.status == http.StatusOK:
			if h.activeRows(schedule, seat) != 1 || h.seatStatuses(schedule)[seat] != "reserved" {
				t.Errorf("seat %d: bob booked, but rows/map disagree", seat)
			}
		case rebooked.status == http.StatusConflict && (rebooked.code() == "seat_taken" || rebooked.code() == "seat_locked"):
			// Bob came before the cancellation: the seat is free now, and
			// nothing may refuse it.
			if h.activeRows(schedule, seat) != 0 || h.seatStatuses(schedule)[seat] != "available" {
				t.Errorf("seat %d: bob refused (%s) and the seat is not free", seat, rebooked.code())
			}
			if got := h.reserve(seat%2, "carol", schedule, seat); got.status != http.StatusOK {
				t.Errorf("seat %d: after cancel, a booking answered %d %s", seat, got.status, got.raw)
			}
		default:
			t.Errorf("seat %d: bob got %d %s", seat, rebooked.status, rebooked.raw)
		}
		if h.activeRows(schedule, seat) != 1 {
			t.Errorf("seat %d: %d active reservations at the end, want 1", seat, h.activeRows(schedule, seat))
		}
	}
	if locked := h.lockedSeats(schedule, rounds); len(locked) != 0 {
		t.Errorf("seats left locked: %v", locked)
	}
}
