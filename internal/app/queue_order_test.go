package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// TestQueueOrderAcrossInstances: buyers join through two instances, half
// before the opening and half after; the pre-queue comes first, the late
// ones follow in the order they joined, and admission, by both instances'
// rounds, follows the line exactly.
func TestQueueOrderAcrossInstances(t *testing.T) {
	h := newHarness(t, 2)
	schedule := h.createSchedule(10)
	opens := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":1}`, opens)); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	var buyers []*queueBuyer
	for i := range 30 {
		u := fmt.Sprint("early", i)
		buyers = append(buyers, &queueBuyer{user: u, ticket: h.mustJoin(i%2, u, schedule), early: true})
	}
	for h.ticketState(buyers[0]) == "prequeue" {
		time.Sleep(20 * time.Millisecond)
	}
	for i := range 30 {
		u := fmt.Sprint("late", i)
		buyers = append(buyers, &queueBuyer{user: u, ticket: h.mustJoin(i%2, u, schedule)})
	}
	// The line, read while at most one buyer a second is admitted: read
	// again when an admission moved it during the read (two at one
	// position).
	for read := 0; ; read++ {
		seen := map[int]bool{}
		again := false
		for _, b := range buyers {
			resp := h.ticket(read%2, b.user, b.ticket)
			pos, _ := resp.body["position"].(float64)
			if str(resp.body, "state") == "admitted" {
				pos = 0
			}
			if seen[int(pos)] {
				again = true
			}
			seen[int(pos)] = true
			b.order = int(pos)
		}
		if !again {
			break
		}
		if read == 5 {
			t.Fatal("the line kept moving while it was read")
		}
	}
	inLine := append([]*queueBuyer(nil), buyers...)
	sort.Slice(inLine, func(i, j int) bool { return inLine[i].order < inLine[j].order })
	for i, b := range inLine {
		if b.early != (i < 30) {
			t.Fatalf("%s is %dth in line", b.user, i+1)
		}
	}
	for i := 30; i < 60; i++ {
		if inLine[i].user != fmt.Sprint("late", i-30) {
			t.Fatalf("late buyers out of their order: %s at %d", inLine[i].user, i+1)
		}
	}
	// Faster now; a buyer admitted means everyone before them in line was.
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":25}`, opens)); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	h.expectAdmittedInOrder(inLine, 30*time.Second)
}

type queueBuyer struct {
	user, ticket string
	early        bool
	order        int // place in the line
}

// expectAdmittedInOrder waits until every buyer of inLine (in line
// order) is admitted, and fails when one is seen admitted while one before
// them is not: the tickets are read from the back, so a buyer read
// admitted had been admitted before everyone read after them was read.
func (h *harness) expectAdmittedInOrder(inLine []*queueBuyer, wait time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		admitted, seen := 0, -1 // seen: the last buyer read admitted
		for i := len(inLine) - 1; i >= 0; i-- {
			state := h.ticketState(inLine[i])
			if state == "admitted" {
				admitted++
				seen = i
			} else if seen >= 0 {
				h.t.Fatalf("%s (%dth) is %s after %s (%dth) was admitted", inLine[i].user, i+1, state,
					inLine[seen].user, seen+1)
			}
		}
		if admitted == len(inLine) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("only %d of %d admitted", admitted, len(inLine))
		}
	}
}

// ticketState is a buyer's ticket's state.
func (h *harness) ticketState(b *queueBuyer) string {
	h.t.Helper()
	resp := h.ticket(0, b.user, b.ticket)
	if resp.status != http.StatusOK {
		h.t.Fatalf("ticket of %s: %d %s", b.user, resp.status, resp.raw)
	}
	return str(resp.body, "state")
}

// TestQueueRateOverInstances: two instances run rounds of admission; the
// queue admits at its rate, not twice it.
func TestQueueRateOverInstances(t *testing.T) {
	h := newHarness(t, 2)
	schedule := h.createSchedule(10)
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":50}`, opens)); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	for i := range 400 {
		h.mustJoin(i%2, fmt.Sprint("buyer", i), schedule)
	}
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":50}`, time.Now().UTC().Format(time.RFC3339Nano))); resp.status != http.StatusOK {
		t.Fatalf("open: %d %s", resp.status, resp.raw)
	}
	admitted := func() (float64, time.Time) {
		resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/queue", schedule), token: h.token("admin", auth.RoleAdmin)})
		return queueCounts(t, resp)["admitted"], time.Now()
	}
	time.Sleep(500 * time.Millisecond)
	first, began := admitted()
	time.Sleep(4 * time.Second)
	last, ended := admitted()
	rate := (last - first) / ended.Sub(began).Seconds()
	if rate < 50*0.85 || rate > 50*1.15 {
		t.Fatalf("admitted %.1f a second: want 50 ± 15%%", rate)
	}
}

// TestQueueEvents follows a ticket live: position events while it waits,
// then one admitted event with the admission, and the stream ends.
func TestQueueEvents(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":2}`, opens)); resp.status != http.StatusOK {
		t.Fatalf("put: %d %s", resp.status, resp.raw)
	}
	for i := range 5 {
		h.mustJoin(0, fmt.Sprint("ahead", i), schedule)
	}
	early := h.mustJoin(0, "early", schedule)
	before := h.ticketStream(0, "early", early)
	if first := before.next(5 * time.Second); first.name != "position" || !jsonHas(first.data, "state", "prequeue") {
		t.Fatalf("first event before the opening: %+v", first)
	}
	before.close()
	if resp := h.putQueue(schedule, fmt.Sprintf(`{"opensAt":%q,"admitPerSecond":2}`, time.Now().UTC().Format(time.RFC3339Nano))); resp.status != http.StatusOK {
		t.Fatalf("open: %d %s", resp.status, resp.raw)
	}
	// Alice joins after the pre-queue: sixth or seventh in line.
	ticket := h.mustJoin(0, "alice", schedule)
	stream := h.ticketStream(0, "alice", ticket)
	var positions []float64
	for {
		ev := stream.next(10 * time.Second)
		var body map[string]any
		if err := json.Unmarshal([]byte(ev.data), &body); err != nil {
			t.Fatal(err)
		}
		if ev.name == "admitted" {
			if body["state"] != "admitted" || body["admission"] == "" {
				t.Fatalf("admitted event: %s", ev.data)
			}
			break
		}
		if ev.name != "position" || body["state"] != "waiting" {
			t.Fatalf("event: %+v", ev)
		}
		positions = append(positions, body["position"].(float64))
	}
	// Two a second, read every half second: every position shows.
	if len(positions) < 3 || !sort.SliceIsSorted(positions, func(i, j int) bool { return positions[i] > positions[j] }) {
		t.Fatalf("positions: %v", positions)
	}
	if ev, open := <-stream.events; open && !ev.comment {
		t.Fatalf("the stream goes on after admission: %+v", ev)
	}
	// Someone else's ticket has no stream.
	resp := h.do(request{method: http.MethodGet, path: "/queue/" + ticket + "/events", token: h.token("bob", "")})
	expectProblem(t, resp, http.StatusNotFound, "ticket_not_found")
}
