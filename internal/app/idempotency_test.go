package app_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func (h *harness) reserveWithKey(base int, user, key string, schedule int64, seat int, prefer string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPost, path: "/reservations", token: h.token(user, ""), base: base,
		contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat),
		prefer: prefer, header: map[string]string{"Idempotency-Key": key}})
}

func TestIdempotentRetriesBookOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(5)

	var first response
	for i := range 5 {
		got := h.reserveWithKey(i%2, "alice", "order-1", schedule, 1, "")
		if got.status != http.StatusOK {
			t.Fatalf("try %d: %d %s", i, got.status, got.raw)
		}
		replayed := got.header.Get("Idempotent-Replayed")
		if i == 0 {
			first = got
			if replayed != "" {
				t.Errorf("first answer marked Idempotent-Replayed: %q", replayed)
			}
			continue
		}
		if replayed != "true" || got.raw != first.raw {
			t.Errorf("retry %d: replayed=%q body %s, want the first body %s replayed", i, replayed, got.raw, first.raw)
		}
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("rows = %d after 5 retries, want 1", n)
	}

	expectProblem(t, h.reserveWithKey(0, "alice", "order-1", schedule, 2, ""), http.StatusUnprocessableEntity, "idempotency_key_reused")
	if n := h.reservationRows(schedule, 2); n != 0 {
		t.Errorf("a reused key booked seat 2")
	}
	// Keys are per user: bob's order-1 is his own.
	if got := h.reserveWithKey(0, "bob", "order-1", schedule, 2, ""); got.status != http.StatusOK || got.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("bob's order-1: %d %s, want a fresh 200", got.status, got.raw)
	}

	// A 409 is an answer: it is kept and replayed.
	taken := h.reserveWithKey(0, "carol", "order-2", schedule, 1, "")
	expectProblem(t, taken, http.StatusConflict, "seat_taken")
	replay := h.reserveWithKey(1, "carol", "order-2", schedule, 1, "")
	if replay.status != http.StatusConflict || replay.code() != "seat_taken" || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed 409: %d %s (replayed=%q)", replay.status, replay.raw, replay.header.Get("Idempotent-Replayed"))
	}
	if ct := replay.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("replayed Content-Type = %q", ct)
	}
}

func TestIdempotencyKeyFormat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(5)
	for _, key := range []string{"", "has space", strings.Repeat("k", 256), "tab\there", "caf\u00e9"} {
		expectProblem(t, h.reserveWithKey(0, "alice", key, schedule, 1, ""), http.StatusBadRequest, "invalid_idempotency_key")
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Fatalf("an invalid key booked")
	}
	if got := h.reserveWithKey(0, "alice", strings.Repeat("k", 255), schedule, 1, ""); got.status != http.StatusOK {
		t.Errorf("255-character key: %d %s, want 200", got.status, got.raw)
	}
	// A Structured Field string, as the draft writes it, is the same key.
	if got := h.reserveWithKey(0, "alice", `"`+strings.Repeat("k", 255)+`"`, schedule, 1, ""); got.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("quoted key: %d %s, want the replay of the bare key's answer", got.status, got.raw)
	}
}

// Two requests with one key at once: one runs, the other hears that the
// key is in use; then the answer is replayed.
func TestIdempotencyKeyInUse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(3)
	h.holdSeat(schedule, 1, 3*time.Second) // the first request waits for it

	var first response
	var wg sync.WaitGroup
	wg.Go(func() { first = h.reserveWithKey(0, "alice", "slow-order", schedule, 1, "wait=8") })
	// Well inside the first request's wait for the lock, even on a busy
	// machine.
	time.Sleep(time.Second)
	second := h.reserveWithKey(1, "alice", "slow-order", schedule, 1, "wait=5")
	wg.Wait()

	expectProblem(t, second, http.StatusConflict, "idempotency_key_in_use")
	if ra, err := strconv.Atoi(second.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q, want at least 1", second.header.Get("Retry-After"))
	}
	if first.status != http.StatusOK {
		t.Fatalf("first request: %d %s, want 200 once the lock expired", first.status, first.raw)
	}
	third := h.reserveWithKey(1, "alice", "slow-order", schedule, 1, "wait=5")
	if third.status != http.StatusOK || third.raw != first.raw || third.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after the first finished: %d %s, want its answer replayed", third.status, third.raw)
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
}

func TestIdempotentHoldAndConfirm(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(5)
	tok := h.token("alice", "")
	body := fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,2]}`, schedule)
	post := func(path, body, key string) response {
		return h.do(request{method: http.MethodPost, path: path, token: tok, contentType: "application/json", body: body,
			header: map[string]string{"Idempotency-Key": key}})
	}
	first := post("/holds", body, "cart-1")
	again := post("/holds", body, "cart-1")
	if first.status != http.StatusCreated || again.raw != first.raw || again.header.Get("Location") != first.header.Get("Location") {
		t.Fatalf("hold retried: %d %s then %d %s, want one hold replayed", first.status, first.raw, again.status, again.raw)
	}
	id := str(first.body, "id")
	confirmed := post("/holds/"+id+"/confirm", "", "pay-1")
	replayed := post("/holds/"+id+"/confirm", "", "pay-1")
	if confirmed.status != http.StatusOK || replayed.raw != confirmed.raw || replayed.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("confirm retried: %d %s then %s", confirmed.status, confirmed.raw, replayed.raw)
	}
	// The key names the request, path included.
	expectProblem(t, post("/holds", body, "pay-1"), http.StatusUnprocessableEntity, "idempotency_key_reused")
}
