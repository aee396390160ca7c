package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// leaveEarly sends one request over a connection of its own and leaves
// before the answer, as a client that gives up does: "hang up" closes the
// connection as soon as the request is written, "half-close" shuts its
// sending side and reads whatever comes back.
func (h *harness) leaveEarly(base int, how string, header map[string]string, method, path, body string) {
	h.t.Helper()
	u, err := url.Parse(h.bases[base])
	if err != nil {
		h.t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, u.Host, len(body))
	for name, value := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", name, value)
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		h.t.Fatal(err)
	}
	switch how {
	case "hang up":
		return
	case "half-close":
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			h.t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, bufio.NewReader(conn))
	default:
		h.t.Fatalf("no way to leave called %q", how)
	}
}

// TestQueueGateHoldsForAResumedKey: a buyer who never queued sends a hold
// or a booking for a queued schedule with an Idempotency-Key and a bogus
// Admission, and leaves before the answer; the same request sent again
// with the same key and no Admission, to the other instance, is refused
// like a new one (403 admission_required), and nothing is held or booked.
func TestQueueGateHoldsForAResumedKey(t *testing.T) {
	h := newHarness(t, 2)
	schedule := h.createSchedule(40)
	h.openQueue(schedule, 100, "")
	const user = "mallory"
	token := h.token(user, "")
	calls := []struct{ name, path, body string }{
		{"best-available hold", "/holds", fmt.Sprintf(`{"scheduleId":%d,"quantity":2}`, schedule)},
		{"named hold", "/holds", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[3,4]}`, schedule)},
		{"booking", "/reservations", fmt.Sprintf(`{"scheduleId":%d,"seatId":7}`, schedule)},
	}
	const tries = 20
	for _, how := range []string{"hang up", "half-close"} {
		for _, call := range calls {
			through := map[string]int{}
			for i := range tries {
				key := fmt.Sprintf("walk-around-%s-%s-%d", strings.ReplaceAll(how, " ", ""), strings.ReplaceAll(call.name, " ", ""), i)
				h.leaveEarly(0, how, map[string]string{"Authorization": "Bearer " + token, "Idempotency-Key": key, "Admission": "x.1.y"},
					http.MethodPost, call.path, call.body)
				resp := h.retryWhileKeyInUse(request{method: http.MethodPost, path: call.path, token: token, base: 1,
					contentType: "application/json", body: call.body, header: map[string]string{"Idempotency-Key": key}})
				if resp.status != http.StatusForbidden || resp.code() != "admission_required" {
					through[fmt.Sprintf("%d %s", resp.status, resp.code())]++
				}
			}
			if len(through) > 0 {
				t.Errorf("%s, %s: of %d retries without an admission, these were not refused admission_required: %v",
					how, call.name, tries, through)
			}
		}
	}
	var holds, bookings int
	if err := h.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM holds WHERE user_id = $1),
		(SELECT count(*) FROM reservations WHERE user_id = $1)`, user).Scan(&holds, &bookings); err != nil {
		t.Fatal(err)
	}
	if holds != 0 || bookings != 0 {
		t.Fatalf("a buyer who never queued made %d holds and %d bookings", holds, bookings)
	}
}

// retryWhileKeyInUse sends req until its key is no longer in use by an
// earlier request still running (409 idempotency_key_in_use).
func (h *harness) retryWhileKeyInUse(req request) response {
	h.t.Helper()
	deadline := time.Now().Add(faultPatience)
	for {
		resp := h.do(req)
		if resp.status != http.StatusConflict || resp.code() != "idempotency_key_in_use" || time.Now().After(deadline) {
			return resp
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQueueResumedKeyFinishesAnAdmittedRequest: an admitted buyer's hold
// commits and its answer is lost; the buyer's admission ends (they leave
// the queue); the retry with the same key and no admission finishes the
// request the gate let through (the key recorded it), recovering the hold,
// while the same hold under a new key is refused.
func TestQueueResumedKeyFinishesAnAdmittedRequest(t *testing.T) {
	t.Parallel()
	const user = "alice"
	h, _, pgProxy := faultyHarness(t)
	installCommitGate(t, h, user)
	schedule := h.createScheduleDirect(4)
	// Warm up: connections open, the schedule cached.
	if resp := h.reserve(0, "carol", schedule, 4); resp.status != http.StatusOK {
		t.Fatalf("booking before the fault: %d %s", resp.status, resp.raw)
	}
	h.openQueue(schedule, 100, "")
	admission := h.admission(user, h.mustJoin(0, user, schedule), 10*time.Second)

	k := keyed{method: http.MethodPost, path: "/holds", key: "cart-1", admission: admission,
		body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,2]}`, schedule)}
	h.loseCommitReply(pgProxy, user, k)
	ticket, _, _ := strings.Cut(admission, ".")
	if resp := h.do(request{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token(user, "")}); resp.status != http.StatusNoContent {
		t.Fatalf("leave the queue: %d %s", resp.status, resp.raw)
	}

	k.admission = ""
	got := h.retryAfterLoss(user, k)
	h.expectRecovered(user, k, got, http.StatusCreated)
	var holds int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM holds WHERE user_id = $1`, user).Scan(&holds); err != nil || holds != 1 {
		t.Fatalf("%d holds (%v), want the one recovered", holds, err)
	}
	k.key = "cart-2"
	expectProblem(t, h.send(user, k), http.StatusForbidden, "admission_required")
}
