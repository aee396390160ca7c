package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// putQueue puts a queue in front of schedule's sale through instance 0.
func (h *harness) putQueue(schedule int64, body string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPut, path: fmt.Sprintf("/schedules/%d/queue", schedule),
		token: h.token("admin", auth.RoleAdmin), contentType: "application/json", body: body})
}

// openQueue puts a queue that opened a second ago, admitting rate a
// second.
func (h *harness) openQueue(schedule int64, rate int, extra string) {
	h.t.Helper()
	body := fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":%d%s}`, time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano), rate, extra)
	if resp := h.putQueue(schedule, body); resp.status != http.StatusOK {
		h.t.Fatalf("put queue: %d %s", resp.status, resp.raw)
	}
}

// join puts user in schedule's queue through instance base.
func (h *harness) join(base int, user string, schedule int64) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPost, path: fmt.Sprintf("/schedules/%d/queue", schedule), token: h.token(user, ""), base: base})
}

// mustJoin joins and returns the ticket.
func (h *harness) mustJoin(base int, user string, schedule int64) string {
	h.t.Helper()
	resp := h.join(base, user, schedule)
	if resp.status != http.StatusCreated {
		h.t.Fatalf("join %s: %d %s", user, resp.status, resp.raw)
	}
	return str(resp.body, "ticket")
}

func (h *harness) ticket(base int, user, ticket string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodGet, path: "/queue/" + ticket, token: h.token(user, ""), base: base})
}

// admission waits until user's ticket is admitted and returns its
// admission.
func (h *harness) admission(user, ticket string, wait time.Duration) string {
	h.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		resp := h.ticket(0, user, ticket)
		if resp.status != http.StatusOK {
			h.t.Fatalf("ticket: %d %s", resp.status, resp.raw)
		}
		if str(resp.body, "state") == "admitted" {
			return str(resp.body, "admission")
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s not admitted within %s: %s", user, wait, resp.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// holdAdmitted holds seats with an Admission header.
func (h *harness) holdAdmitted(user, admission string, schedule int64, seat int) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPost, path: "/holds", token: h.token(user, ""), contentType: "application/json",
		body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[%d]}`, schedule, seat), header: map[string]string{"Admission": admission}})
}

// ticketStream follows user's ticket live on instance base.
func (h *harness) ticketStream(base int, user, ticket string) *eventStream {
	h.t.Helper()
	return h.streamWith(base, "/queue/"+ticket+"/events", http.Header{"Authorization": {"Bearer " + h.token(user, "")}})
}

// jsonHas reports whether the JSON object data has member with value.
func jsonHas(data, member, value string) bool {
	var body map[string]any
	return json.Unmarshal([]byte(data), &body) == nil && body[member] == value
}

func queueCounts(t *testing.T, resp response) map[string]float64 {
	t.Helper()
	counts, ok := resp.body["counts"].(map[string]any)
	if !ok {
		t.Fatalf("no counts: %s", resp.raw)
	}
	out := map[string]float64{}
	for k, v := range counts {
		out[k] = v.(float64)
	}
	return out
}
