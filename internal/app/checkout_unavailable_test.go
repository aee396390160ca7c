package app_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// With PostgreSQL or Redis gone, every checkout call that needs it answers
// 503 unavailable, writes nothing, and stores no idempotent answer: once
// the dependency is back, the retry with the same key runs.
func TestCheckoutDependencyDown(t *testing.T) {
	t.Parallel()
	for _, dependency := range []string{"redis", "postgres"} {
		t.Run(dependency, func(t *testing.T) {
			t.Parallel()
			h, proxy := proxied(t, dependency)
			schedule := h.createSchedule(4)
			booked := h.reserve(0, "alice", schedule, 3)
			held := h.hold(0, "alice", schedule, 4)
			if booked.status != http.StatusOK || held.status != http.StatusCreated {
				t.Fatalf("before the cut: %d %s, %d %s", booked.status, booked.raw, held.status, held.raw)
			}

			proxy.Cut()

			for name, resp := range map[string]response{
				"hold":   h.hold(0, "alice", schedule, 1),
				"cancel": h.cancel(0, "alice", str(booked.body, "id")),
				"hold with a key": h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""),
					contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[2]}`, schedule),
					header: map[string]string{"Idempotency-Key": "cart-1"}}),
			} {
				if resp.status != http.StatusServiceUnavailable || resp.code() != "unavailable" {
					t.Errorf("%s: %d %s, want 503 unavailable", name, resp.status, resp.raw)
				}
				expectNoLeak(t, resp)
			}
			// Confirming and releasing take the seats' locks (the live seat
			// map's events follow the seats' changes in order).
			expectProblem(t, h.confirm(0, "alice", str(held.body, "id")), http.StatusServiceUnavailable, "unavailable")
			expectProblem(t, h.release(0, "alice", str(held.body, "id")), http.StatusServiceUnavailable, "unavailable")

			proxy.Restore()
			// Connections broken by the cut are found and replaced as they
			// are used; ready again means a fresh round trip worked.
			deadline := time.Now().Add(10 * time.Second)
			for h.do(request{method: http.MethodGet, path: "/readyz"}).status != http.StatusOK {
				if time.Now().After(deadline) {
					t.Fatal("not ready 10 s after the dependency came back")
				}
				time.Sleep(50 * time.Millisecond)
			}

			retry := h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""),
				contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[2]}`, schedule),
				header: map[string]string{"Idempotency-Key": "cart-1"}})
			if retry.status != http.StatusCreated || retry.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("retry after the outage: %d %s (replayed %q), want a fresh 201: a 503 is never stored",
					retry.status, retry.raw, retry.header.Get("Idempotent-Replayed"))
			}
			if got := h.seatStatuses(schedule); got[1] != "available" || got[3] != "reserved" || got[4] != "held" {
				t.Errorf("seat map after the outage = %v: the failed calls wrote something", got)
			}
			if locked := h.lockedSeats(schedule, 4); len(locked) != 0 {
				t.Errorf("seats left locked: %v", locked)
			}
		})
	}
}
