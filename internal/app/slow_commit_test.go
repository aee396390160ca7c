package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// A booking whose statement is answered after the seat lock's TTL has run out
// still answers 200 with its reservation: PostgreSQL committed it (the fence
// and the UNIQUE constraint decided), so telling the client seat_locked
// would send it retrying into seat_taken for its own seat.
//
// PostgreSQL's replies reach the instance through a fault proxy that delays
// each by 700 ms. The schedule is read before the lock is taken; the booking
// is one statement (committed on its own) whose reply alone outlasts the
// 600 ms lease, so it comes after the lease's local expiry whatever the
// load.
func TestSlowCommitPastLeaseIsBooked(t *testing.T) {
	t.Parallel()
	const (
		lockTTL    = 600 * time.Millisecond
		replyDelay = 700 * time.Millisecond
	)
	h := newHarness(t, 0)
	cfg := h.cfg
	cfg.LockTTL = lockTTL
	target, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := lockenv.NewProxy(t, target.Host)
	target.Host = proxy.Addr()
	cfg.DatabaseURL = target.String()
	h.bases = append(h.bases, h.serve(cfg))
	schedule := h.createScheduleDirect(2)
	alice, bob := h.token("alice", ""), h.token("bob", "")

	proxy.AddToxic(lockenv.Toxic{Name: "slow-replies", Type: "latency", Stream: "downstream",
		Attributes: map[string]any{"latency": replyDelay.Milliseconds()}})
	start := time.Now()
	resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": schedule, "seatId": 1})
	took := time.Since(start)
	proxy.RemoveToxic("slow-replies")

	if resp.status != http.StatusOK {
		t.Fatalf("POST /reservations after %v: %d %s, want 200 with the reservation", took, resp.status, resp.raw)
	}
	if took < 2*replyDelay {
		t.Fatalf("the request took %v, less than two delayed replies (schedule, booking): the scenario did not happen", took)
	}
	id, _ := resp.body["id"].(string)
	if resp.body["userId"] != "alice" || resp.body["seatId"] != float64(1) || id == "" {
		t.Errorf("reservation = %s, want alice's seat 1", resp.raw)
	}

	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Fatalf("rows for the seat = %d, want exactly 1", n)
	}
	var owner, storedID string
	err = h.pool.QueryRow(context.Background(),
		`SELECT id::text, user_id FROM reservations WHERE schedule_id = $1 AND seat_id = 1`, schedule).Scan(&storedID, &owner)
	if err != nil || storedID != id || owner != "alice" {
		t.Errorf("stored row = %s for %q (%v), want %s for alice", storedID, owner, err, id)
	}
	got := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: alice})
	if got.status != http.StatusOK || got.body["id"] != id {
		t.Errorf("GET /reservations/%s: %d %s, want 200 with it", id, got.status, got.raw)
	}
	again := h.postJSON("/reservations", bob, map[string]any{"scheduleId": schedule, "seatId": 1})
	expectProblem(t, again, http.StatusConflict, "seat_taken")
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("rows for the seat after a second booking = %d, want 1", n)
	}
}
