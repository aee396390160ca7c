package app_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
)

func TestQueueAdminContract(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	admin := h.token("admin", auth.RoleAdmin)
	path := fmt.Sprintf("/schedules/%d/queue", schedule)

	expectProblem(t, h.do(request{method: http.MethodGet, path: path, token: admin}), http.StatusNotFound, "queue_not_found")
	expectProblem(t, h.do(request{method: http.MethodDelete, path: path, token: admin}), http.StatusNotFound, "queue_not_found")
	expectProblem(t, h.do(request{method: http.MethodPut, path: path, token: h.token("alice", ""), contentType: "application/json",
		body: `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5}`}), http.StatusForbidden, "forbidden")
	expectProblem(t, h.do(request{method: http.MethodGet, path: path, token: h.token("alice", "")}), http.StatusForbidden, "forbidden")
	expectProblem(t, h.putQueue(999_999_999, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5}`), http.StatusNotFound, "schedule_not_found")

	for _, tc := range []struct{ body, field string }{
		{`{"admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"tomorrow","admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"2030-01-01T10:00:00Z"}`, "admitPerSecond"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":0}`, "admitPerSecond"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":10001}`, "admitPerSecond"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5,"maxActive":0}`, "maxActive"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5,"maxActive":1000001}`, "maxActive"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5,"admissionTtlSeconds":59}`, "admissionTtlSeconds"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5,"admissionTtlSeconds":3601}`, "admissionTtlSeconds"},
	} {
		resp := h.putQueue(schedule, tc.body)
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+tc.field+`"`) {
			t.Errorf("%s: the problem does not name %s: %s", tc.body, tc.field, resp.raw)
		}
	}
	expectProblem(t, h.putQueue(schedule, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":"5"}`), http.StatusBadRequest, "malformed_json")

	resp := h.putQueue(schedule, `{"opensAt":"2030-01-01T19:00:00+09:00","admitPerSecond":50,"maxActive":200}`)
	if resp.status != http.StatusOK || resp.body["opensAt"] != "2030-01-01T10:00:00Z" || resp.body["admitPerSecond"] != 50.0 ||
		resp.body["maxActive"] != 200.0 || resp.body["admissionTtlSeconds"] != 600.0 {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	h.mustJoin(0, "alice", schedule)
	h.mustJoin(0, "bob", schedule)
	got := h.do(request{method: http.MethodGet, path: path, token: admin})
	if got.status != http.StatusOK {
		t.Fatalf("get: %d %s", got.status, got.raw)
	}
	if c := queueCounts(t, got); c["prequeue"] != 2 || c["waiting"] != 0 || c["active"] != 0 || c["admitted"] != 0 {
		t.Errorf("counts before the opening: %v", c)
	}
	// Changing a queue that has not opened may move its opening; without
	// maxActive it has no cap.
	resp = h.putQueue(schedule, `{"opensAt":"2031-01-01T10:00:00Z","admitPerSecond":10,"admissionTtlSeconds":60}`)
	if resp.status != http.StatusOK || resp.body["maxActive"] != nil || resp.body["admissionTtlSeconds"] != 60.0 {
		t.Fatalf("put again: %d %s", resp.status, resp.raw)
	}

	if del := h.do(request{method: http.MethodDelete, path: path, token: admin}); del.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", del.status, del.raw)
	}
	expectProblem(t, h.do(request{method: http.MethodGet, path: path, token: admin}), http.StatusNotFound, "queue_not_found")
	expectProblem(t, h.join(0, "carol", schedule), http.StatusNotFound, "queue_not_found")
}

func TestQueueOpenedCannotMove(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	opened := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if resp := h.putQueue(schedule, `{"opensAt":"`+opened+`","admitPerSecond":5}`); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	resp := h.putQueue(schedule, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5}`)
	expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
	if !strings.Contains(resp.raw, `"field":"opensAt"`) {
		t.Errorf("the problem does not name opensAt: %s", resp.raw)
	}
	// The same opening with another rate is a change it may have.
	if resp := h.putQueue(schedule, `{"opensAt":"`+opened+`","admitPerSecond":9}`); resp.status != http.StatusOK {
		t.Fatalf("put the rate: %d %s", resp.status, resp.raw)
	}
}

func TestQueueTickets(t *testing.T) {
	h := newHarness(t, 2)
	schedule := h.createSchedule(10)
	expectProblem(t, h.join(0, "alice", schedule), http.StatusNotFound, "queue_not_found")
	expectProblem(t, h.join(0, "alice", 999_999_999), http.StatusNotFound, "schedule_not_found")
	if resp := h.putQueue(schedule, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5}`); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}

	first := h.join(0, "alice", schedule)
	if first.status != http.StatusCreated || str(first.body, "state") != "prequeue" || first.body["position"] != nil ||
		first.body["estimatedWaitSeconds"] != nil || first.body["opensAt"] != "2030-01-01T10:00:00Z" {
		t.Fatalf("join: %d %s", first.status, first.raw)
	}
	ticket := str(first.body, "ticket")
	if first.header.Get("Location") != "/queue/"+ticket || first.header.Get("Retry-After") != "31" &&
		first.header.Get("Retry-After") != "32" && first.header.Get("Retry-After") != "33" {
		t.Errorf("join's headers: %v", first.header)
	}
	// One place per user: again, on another instance, the same ticket.
	again := h.join(1, "alice", schedule)
	if again.status != http.StatusOK || str(again.body, "ticket") != ticket {
		t.Fatalf("join again: %d %s", again.status, again.raw)
	}
	if got := h.ticket(1, "alice", ticket); got.status != http.StatusOK || str(got.body, "state") != "prequeue" {
		t.Fatalf("get: %d %s", got.status, got.raw)
	}
	expectProblem(t, h.ticket(0, "bob", ticket), http.StatusNotFound, "ticket_not_found")
	expectProblem(t, h.do(request{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token("bob", "")}),
		http.StatusNotFound, "ticket_not_found")
	for _, bad := range []string{"nope", "0-" + strings.Repeat("a", 32), fmt.Sprintf("%d-%s", schedule, strings.Repeat("z", 32)),
		fmt.Sprintf("%d-%s", schedule, strings.Repeat("a", 32))} {
		expectProblem(t, h.ticket(0, "alice", bad), http.StatusNotFound, "ticket_not_found")
	}
	expectProblem(t, h.do(request{method: http.MethodGet, path: "/queue/" + ticket}), http.StatusUnauthorized, "unauthorized")

	// Leaving, then leaving again: 204 both times, and the ticket says so.
	for range 2 {
		if resp := h.do(request{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token("alice", "")}); resp.status != http.StatusNoContent {
			t.Fatalf("leave: %d %s", resp.status, resp.raw)
		}
	}
	if got := h.ticket(0, "alice", ticket); str(got.body, "state") != "left" || got.header.Get("Retry-After") != "" {
		t.Fatalf("after leaving: %d %s %v", got.status, got.raw, got.header)
	}
	if again := h.join(0, "alice", schedule); again.status != http.StatusOK || str(again.body, "state") != "left" {
		t.Fatalf("join after leaving: %d %s", again.status, again.raw)
	}
	// A deleted queue takes its tickets with it.
	h.do(request{method: http.MethodDelete, path: fmt.Sprintf("/schedules/%d/queue", schedule), token: h.token("admin", auth.RoleAdmin)})
	expectProblem(t, h.ticket(0, "alice", ticket), http.StatusNotFound, "ticket_not_found")
}

func TestQueueWaitingThenAdmitted(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	// The queue opens in two seconds: who joins now is in the pre-queue.
	opens := time.Now().Add(2 * time.Second).UTC()
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":1}`, opens.Format(time.RFC3339Nano))); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	users := []string{"u0", "u1", "u2", "u3"}
	tickets := map[string]string{}
	for _, u := range users {
		tickets[u] = h.mustJoin(0, u, schedule)
	}
	time.Sleep(time.Until(opens) + 50*time.Millisecond)
	late := h.join(0, "late", schedule)
	if str(late.body, "state") == "prequeue" {
		t.Fatalf("joined after the opening: %s", late.raw)
	}
	// One a second: after the opening every ticket is waiting or
	// admitted, the late one behind all of the pre-queue.
	positions := map[int]bool{}
	for _, u := range users {
		resp := h.ticket(0, u, tickets[u])
		switch str(resp.body, "state") {
		case "waiting":
			pos := int(resp.body["position"].(float64))
			if positions[pos] || pos < 1 || pos > 4 {
				t.Errorf("%s at %d: %s", u, pos, resp.raw)
			}
			positions[pos] = true
			if wait := resp.body["estimatedWaitSeconds"].(float64); wait != float64(pos) {
				t.Errorf("%s at %d is told to wait %vs at 1 a second", u, pos, wait)
			}
			if resp.header.Get("Retry-After") == "" {
				t.Errorf("%s waits with no Retry-After", u)
			}
		case "admitted":
		default:
			t.Errorf("%s: %s", u, resp.raw)
		}
	}
	admission := h.admission("u0", tickets["u0"], 10*time.Second)
	got := h.ticket(0, "u0", tickets["u0"])
	expires, err := time.Parse(time.RFC3339, str(got.body, "admissionExpiresAt"))
	if err != nil || time.Until(expires) < 590*time.Second || time.Until(expires) > 601*time.Second {
		t.Errorf("admissionExpiresAt %q: %v", str(got.body, "admissionExpiresAt"), err)
	}
	if !strings.HasPrefix(admission, tickets["u0"]+".") {
		t.Errorf("admission %q", admission)
	}
}

func TestQueueGatesTheSeats(t *testing.T) {
	h := newHarness(t, 2)
	schedule := h.createSchedule(10)
	other := h.createSchedule(10)
	// Before the queue: a hold needs no admission.
	before := h.mustHold(0, "carol", schedule, 9)
	h.openQueue(schedule, 100, "")
	h.openQueue(other, 100, "")

	// Both instances refuse a request without an admission at once (the
	// change is announced), naming the queue.
	for base := range h.bases {
		resp := h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""), base: base, contentType: "application/json",
			body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1]}`, schedule)})
		expectProblem(t, resp, http.StatusForbidden, "admission_required")
		if resp.body["queue"] != fmt.Sprintf("/schedules/%d/queue", schedule) {
			t.Errorf("the problem names no queue: %s", resp.raw)
		}
		expectProblem(t, h.reserve(base, "alice", schedule, 1), http.StatusForbidden, "admission_required")
		expectProblem(t, h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""), base: base,
			contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"quantity":2}`, schedule)}),
			http.StatusForbidden, "admission_required")
	}
	// Acting on one's own hold needs none.
	if resp := h.confirm(1, "carol", before); resp.status != http.StatusOK {
		t.Fatalf("confirm an existing hold: %d %s", resp.status, resp.raw)
	}

	alice := h.admission("alice", h.mustJoin(0, "alice", schedule), 10*time.Second)
	bob := h.admission("bob", h.mustJoin(1, "bob", schedule), 10*time.Second)
	aliceOther := h.admission("alice", h.mustJoin(0, "alice", other), 10*time.Second)

	for name, tc := range map[string]struct{ user, admission string }{
		"forged":                {"alice", "forged"},
		"altered signature":     {"alice", alice[:len(alice)-2] + "AA"},
		"altered expiry":        {"alice", strings.Replace(alice, ".", ".9", 1)},
		"another user's":        {"alice", bob},
		"another schedule's":    {"alice", aliceOther},
		"empty parts":           {"alice", ".."},
		"the owner's, but late": {"alice", tamperExpiry(alice)},
	} {
		resp := h.holdAdmitted(tc.user, tc.admission, schedule, 1)
		expectProblem(t, resp, http.StatusForbidden, "admission_invalid")
		if t.Failed() {
			t.Fatalf("%s: %s", name, resp.raw)
		}
	}
	if resp := h.holdAdmitted("alice", alice, schedule, 1); resp.status != http.StatusCreated {
		t.Fatalf("admitted hold: %d %s", resp.status, resp.raw)
	}
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("bob", ""), base: 1, contentType: "application/json",
		body: fmt.Sprintf(`{"scheduleId":%d,"seatId":2}`, schedule), header: map[string]string{"Admission": bob}})
	if resp.status != http.StatusOK {
		t.Fatalf("admitted reservation: %d %s", resp.status, resp.raw)
	}
	// Giving the admission up ends it at once, on every instance.
	ticket, _, _ := strings.Cut(bob, ".")
	if resp := h.do(request{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token("bob", "")}); resp.status != http.StatusNoContent {
		t.Fatalf("leave: %d %s", resp.status, resp.raw)
	}
	for base := range h.bases {
		resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("bob", ""), base: base, contentType: "application/json",
			body: fmt.Sprintf(`{"scheduleId":%d,"seatId":3}`, schedule), header: map[string]string{"Admission": bob}})
		expectProblem(t, resp, http.StatusForbidden, "admission_invalid")
	}
	if n := h.reservationRows(schedule, 3); n != 0 {
		t.Fatalf("a refused reservation stored %d rows", n)
	}
	// Reads stay open.
	if resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)}); resp.status != http.StatusOK {
		t.Fatalf("seat map: %d", resp.status)
	}
	// Deleting the queue opens the sale to everyone again, on every
	// instance.
	h.do(request{method: http.MethodDelete, path: fmt.Sprintf("/schedules/%d/queue", schedule), token: h.token("admin", auth.RoleAdmin)})
	deadline := time.Now().Add(5 * time.Second)
	for seat, base := 4, 0; base < len(h.bases); seat++ {
		resp := h.reserve(base, "dave", schedule, seat)
		if resp.status == http.StatusOK {
			base++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the queue's deletion, instance %d: %d %s", base, resp.status, resp.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tamperExpiry moves an admission's expiry back an hour, keeping its
// signature: no longer the one the service signed.
func tamperExpiry(admission string) string {
	parts := strings.Split(admission, ".")
	var exp int64
	_, _ = fmt.Sscan(parts[1], &exp)
	parts[1] = fmt.Sprint(exp - 3600)
	return strings.Join(parts, ".")
}

// TestQueueMetrics: the rounds of admission are counted, with each wait.
func TestQueueMetrics(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	h.openQueue(schedule, 100, "")
	for _, u := range []string{"alice", "bob", "carol"} {
		h.admission(u, h.mustJoin(0, u, schedule), 10*time.Second)
	}
	h.mustJoin(0, "dave", schedule) // may still wait when the metrics are read
	resp, err := h.client.Get(h.bases[0] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	metrics := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		var name string
		var value float64
		if _, err := fmt.Sscan(line, &name, &value); err == nil {
			metrics[name] = value
		}
	}
	if metrics["seatlock_queue_admitted_total"] < 3 || metrics["seatlock_queue_admission_wait_seconds_count"] < 3 ||
		metrics["seatlock_queue_active"] < 3 || metrics["seatlock_queue_waiting"] > 1 {
		t.Fatalf("queue metrics: %v", metrics)
	}
}

// TestQueueWithoutRedis: a deployment without Redis has no waiting room:
// its endpoints say so (501 queue_unsupported), tickets are not found, and
// holds and bookings need no admission.
func TestQueueWithoutRedis(t *testing.T) {
	h := newHarnessWith(t, 1, func(cfg *config.Config) {
		cfg.LockBackend = config.BackendPostgres
		cfg.RedisURL = ""
	})
	schedule := h.createSchedule(10)
	expectProblem(t, h.putQueue(schedule, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5}`), http.StatusNotImplemented, "queue_unsupported")
	expectProblem(t, h.join(0, "alice", schedule), http.StatusNotImplemented, "queue_unsupported")
	expectProblem(t, h.ticket(0, "alice", fmt.Sprintf("%d-%s", schedule, strings.Repeat("a", 32))), http.StatusNotFound, "ticket_not_found")
	if resp := h.hold(0, "alice", schedule, 1); resp.status != http.StatusCreated {
		t.Fatalf("hold without Redis: %d %s", resp.status, resp.raw)
	}
}
