package app_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
)

// extend asks instance base to extend a hold, with no body unless one is
// given (then as application/json).
func (h *harness) extend(base int, user, holdID string, header map[string]string, body ...string) response {
	h.t.Helper()
	req := request{method: http.MethodPost, path: "/holds/" + holdID + "/extend", token: h.token(user, ""), base: base, header: header}
	if len(body) > 0 {
		req.contentType, req.body = "application/json", body[0]
	}
	return h.do(req)
}

func expiresAt(t *testing.T, resp response) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, str(resp.body, "expiresAt"))
	if err != nil {
		t.Fatalf("expiresAt of %s: %v", resp.raw, err)
	}
	return at
}

func TestExtendHold(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	held := h.hold(0, "alice", schedule, 1, 2)
	if held.status != http.StatusCreated {
		t.Fatalf("hold: %d %s", held.status, held.raw)
	}
	id := str(held.body, "id")
	time.Sleep(10 * time.Millisecond) // now + HOLD_TTL is later than at the hold's making

	extended := h.extend(0, "alice", id, nil)
	if extended.status != http.StatusOK || str(extended.body, "id") != id || str(extended.body, "status") != "active" ||
		str(extended.body, "createdAt") != str(held.body, "createdAt") {
		t.Fatalf("extend: %d %s, want 200 with the active hold", extended.status, extended.raw)
	}
	if !expiresAt(t, extended).After(expiresAt(t, held)) {
		t.Errorf("extended expiresAt %s, want later than %s", str(extended.body, "expiresAt"), str(held.body, "expiresAt"))
	}
	if left := time.Until(expiresAt(t, extended)); left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("extended hold expires in %s, want HOLD_TTL (10m) from now", left)
	}
	// The answer is the hold as GET shows it.
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); got.raw != extended.raw {
		t.Errorf("GET after the extension: %s, want the extension's answer %s", got.raw, extended.raw)
	}

	// No body, or an empty JSON object; nothing else.
	if again := h.extend(0, "alice", id, nil, " {} "); again.status != http.StatusOK {
		t.Errorf("extend with {}: %d %s, want 200", again.status, again.raw)
	}
	expectProblem(t, h.extend(0, "alice", id, nil, `{"seconds":60}`), http.StatusBadRequest, "malformed_json")
	expectProblem(t, h.extend(0, "alice", id, nil, `[]`), http.StatusBadRequest, "malformed_json")
	expectProblem(t, h.do(request{method: http.MethodPost, path: "/holds/" + id + "/extend", token: h.token("alice", ""),
		contentType: "text/plain", body: "{}"}), http.StatusUnsupportedMediaType, "unsupported_media_type")

	// Only the owner extends, and only a hold that exists: 404 as for GET.
	before := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")})
	expectProblem(t, h.extend(0, "bob", id, nil), http.StatusNotFound, "hold_not_found")
	for _, bad := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000", id + "0", id[:35]} {
		expectProblem(t, h.extend(0, "alice", bad, nil), http.StatusNotFound, "hold_not_found")
	}
	expectProblem(t, h.do(request{method: http.MethodPost, path: "/holds/" + id + "/extend"}), http.StatusUnauthorized, "unauthorized")
	if after := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); after.raw != before.raw {
		t.Errorf("refused extensions changed the hold: %s, was %s", after.raw, before.raw)
	}
	resp := h.do(request{method: http.MethodGet, path: "/holds/" + id + "/extend"})
	expectProblem(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := resp.header.Get("Allow"); got != "POST" {
		t.Errorf("Allow = %q, want POST", got)
	}
}

func TestExtendHoldIsIdempotentWithAKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(5)
	id := str(h.hold(0, "alice", schedule, 3).body, "id")
	key := map[string]string{"Idempotency-Key": "more-time-1"}

	first := h.extend(0, "alice", id, key)
	if first.status != http.StatusOK || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("extend: %d %s (replayed %q)", first.status, first.raw, first.header.Get("Idempotent-Replayed"))
	}
	time.Sleep(10 * time.Millisecond)
	replayed := h.extend(0, "alice", id, key)
	if replayed.status != http.StatusOK || replayed.raw != first.raw || replayed.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s (replayed %q), want the first answer %s replayed",
			replayed.status, replayed.raw, replayed.header.Get("Idempotent-Replayed"), first.raw)
	}
	// The replay did not extend again.
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); got.raw != first.raw {
		t.Errorf("hold after the replay: %s, want it as the first extension left it: %s", got.raw, first.raw)
	}
	// The key names the request: another body, or another hold, is refused.
	expectProblem(t, h.extend(0, "alice", id, key, "{}"), http.StatusUnprocessableEntity, "idempotency_key_reused")
	// A new key extends again.
	time.Sleep(10 * time.Millisecond)
	if again := h.extend(0, "alice", id, map[string]string{"Idempotency-Key": "more-time-2"}); again.status != http.StatusOK ||
		!expiresAt(t, again).After(expiresAt(t, first)) {
		t.Errorf("extension with a new key: %d %s, want 200 later than %s", again.status, again.raw, str(first.body, "expiresAt"))
	}
}

// The extension moves the seats' claims with the hold: after the hold's
// first expiry has passed, its seats are still refused to others (with
// the expiry job running), until the new one.
func TestExtendedHoldKeepsItsSeatsPastItsFirstExpiry(t *testing.T) {
	t.Parallel()
	// Wide margins: the checks between the two expiries must be done
	// before the second; with 8 s (2 s left at the midpoint) a busy
	// clean-clone run once sent bob's hold past it, and it took seat 2.
	const ttl = 20 * time.Second
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.HoldTTL = ttl })
	schedule := h.createSchedule(3)
	held := h.hold(0, "alice", schedule, 1, 2)
	if held.status != http.StatusCreated {
		t.Fatalf("hold: %d %s", held.status, held.raw)
	}
	id := str(held.body, "id")
	first := expiresAt(t, held)

	// Halfway through, alice asks for more time: the hold now ends about
	// ttl/2 after its first expiry.
	time.Sleep(time.Until(first.Add(-ttl / 2)))
	extended := h.extend(0, "alice", id, nil)
	if extended.status != http.StatusOK {
		t.Fatalf("extend: %d %s", extended.status, extended.raw)
	}
	second := expiresAt(t, extended)
	if gap := second.Sub(first); gap < ttl/4 {
		t.Fatalf("the extension moved the expiry by %s only: the machine is too slow for this test's margins", gap)
	}

	// Between the two expiries, well clear of both.
	time.Sleep(time.Until(first.Add(second.Sub(first) / 2)))
	if left := time.Until(second); left < ttl/8 {
		t.Fatalf("only %s left on the extended hold: the test overslept its margin", left)
	}
	booking := h.reserve(0, "bob", schedule, 1)
	expectProblem(t, booking, http.StatusConflict, "seat_held")
	if ra, _ := strconv.Atoi(booking.header.Get("Retry-After")); ra < 1 || ra > int((ttl/2).Seconds())+1 {
		t.Errorf("seat_held Retry-After = %q, want the extended hold's time left", booking.header.Get("Retry-After"))
	}
	if got := unavailableSeats(t, h.hold(0, "bob", schedule, 2, 3)); got[2] != "held" || len(got) != 1 {
		t.Errorf("bob's hold of seats 2 and 3: %v, want 2 held", got)
	}
	if got := h.seatStatuses(schedule); got[1] != "held" || got[2] != "held" {
		t.Errorf("seat map between the two expiries: %v, want 1 and 2 held", got)
	}
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); str(got.body, "status") != "active" {
		t.Errorf("hold between the two expiries: %s, want active", got.raw)
	}
	// And it confirms.
	if got := h.confirm(0, "alice", id); got.status != http.StatusOK {
		t.Errorf("confirm of the extended hold: %d %s, want 200", got.status, got.raw)
	}
}

func TestExtendHoldRefusals(t *testing.T) {
	t.Parallel()
	// Without the expiry job: it would take the expired seat's lock for a
	// moment, and the booking below could meet it (seat_locked).
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.HoldTTL = time.Second }, app.WithoutJobs())
	schedule := h.createSchedule(10)

	expired := str(h.hold(0, "alice", schedule, 1).body, "id")
	released := str(h.hold(0, "alice", schedule, 2).body, "id")
	if got := h.release(0, "alice", released); got.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", got.status, got.raw)
	}
	confirmed := str(h.hold(0, "alice", schedule, 3).body, "id")
	if got := h.confirm(0, "alice", confirmed); got.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", got.status, got.raw)
	}
	time.Sleep(2 * time.Second) // the 1 s hold has expired

	expectProblem(t, h.extend(0, "alice", expired, nil), http.StatusConflict, "hold_expired")
	expectProblem(t, h.extend(0, "alice", released, nil), http.StatusConflict, "hold_released")
	expectProblem(t, h.extend(0, "alice", confirmed, nil), http.StatusConflict, "hold_confirmed")
	// Someone else's ended hold is not found, whatever its state.
	expectProblem(t, h.extend(0, "bob", confirmed, nil), http.StatusNotFound, "hold_not_found")
	if got := h.reserve(0, "bob", schedule, 1); got.status != http.StatusOK {
		t.Errorf("booking the expired hold's seat after a refused extension: %d %s, want 200", got.status, got.raw)
	}
}

// A hold made with its whole life (HOLD_MAX_LIFETIME = HOLD_TTL) cannot be
// extended: 409 hold_lifetime_exceeded, and the hold is as it was.
func TestExtendHoldBeyondItsLifetime(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.HoldTTL, cfg.HoldMaxLifetime = time.Minute, time.Minute })
	schedule := h.createSchedule(3)
	held := h.hold(0, "alice", schedule, 1)
	id := str(held.body, "id")
	time.Sleep(10 * time.Millisecond)

	expectProblem(t, h.extend(0, "alice", id, map[string]string{"Idempotency-Key": "longer"}), http.StatusConflict, "hold_lifetime_exceeded")
	got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")})
	if str(got.body, "status") != "active" || str(got.body, "expiresAt") != str(held.body, "expiresAt") {
		t.Errorf("hold after the refusal: %s, want it active as made: %s", got.raw, held.raw)
	}
	// The refusal is an answer like any other: a retry with the key replays it.
	replayed := h.extend(0, "alice", id, map[string]string{"Idempotency-Key": "longer"})
	expectProblem(t, replayed, http.StatusConflict, "hold_lifetime_exceeded")
	if replayed.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry of a refused extension: not marked replayed")
	}
}
