package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// queueSettings reads a queue's settings from a PUT's or GET's answer,
// without its counts.
func queueSettings(t *testing.T, resp response) string {
	t.Helper()
	if resp.status != http.StatusOK {
		t.Fatalf("queue: %d %s", resp.status, resp.raw)
	}
	settings := map[string]any{}
	for _, member := range []string{"opensAt", "admitPerSecond", "maxActive", "admissionTtlSeconds"} {
		settings[member] = resp.body[member]
	}
	out, err := json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Every setting of a queue is checked before it is stored: an opening
// no RFC 3339 date-time can name in UTC (as for a schedule's startsAt) and
// integers past what the settings hold (however large) are 422 naming the
// field, and the queue stays as it was, readable and joinable.
func TestQueueSettingsOutOfRangeAreRefused(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	admin := h.token("admin", auth.RoleAdmin)
	path := fmt.Sprintf("/schedules/%d/queue", schedule)
	put := h.putQueue(schedule, `{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5,"maxActive":7,"admissionTtlSeconds":120}`)
	stored := queueSettings(t, put)
	ticket := h.mustJoin(0, "alice", schedule)

	const valid = `"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":5`
	for _, tc := range []struct{ body, field string }{
		{`{"opensAt":"9999-12-31T23:00:00-23:59","admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"0000-01-01T00:00:00+01:00","admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"0000-01-01T00:00:00Z","admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"0000-12-31T23:59:59.999999999Z","admitPerSecond":5}`, "opensAt"},
		{`{"opensAt":"0001-01-01T00:00:00+00:01","admitPerSecond":5}`, "opensAt"},
		{`{` + valid + `,"admissionTtlSeconds":36028797018964568}`, "admissionTtlSeconds"},
		{`{` + valid + `,"admissionTtlSeconds":18446744073709552}`, "admissionTtlSeconds"},
		{`{` + valid + `,"admissionTtlSeconds":9223372036854775807}`, "admissionTtlSeconds"},
		{`{` + valid + `,"admissionTtlSeconds":-9223372036854775808}`, "admissionTtlSeconds"},
		{`{` + valid + `,"admissionTtlSeconds":-18446744073708951}`, "admissionTtlSeconds"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":9223372036854775807}`, "admitPerSecond"},
		{`{"opensAt":"2030-01-01T10:00:00Z","admitPerSecond":-9223372036854775808}`, "admitPerSecond"},
		{`{` + valid + `,"maxActive":9223372036854775807}`, "maxActive"},
		{`{` + valid + `,"maxActive":-1}`, "maxActive"},
	} {
		resp := h.putQueue(schedule, tc.body)
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+tc.field+`"`) {
			t.Errorf("%s: the problem does not name %s: %s", tc.body, tc.field, resp.raw)
		}
		if got := queueSettings(t, h.do(request{method: http.MethodGet, path: path, token: admin})); got != stored {
			t.Fatalf("after %s the queue is %s, want %s", tc.body, got, stored)
		}
		if again := h.join(0, "alice", schedule); again.status != http.StatusOK || str(again.body, "ticket") != ticket {
			t.Fatalf("after %s a join answers %d %s", tc.body, again.status, again.raw)
		}
	}
	// Integers no int64 holds are malformed, as anywhere in the API.
	expectProblem(t, h.putQueue(schedule, `{`+valid+`,"admissionTtlSeconds":9223372036854775808}`), http.StatusBadRequest, "malformed_json")
	if got := queueSettings(t, h.do(request{method: http.MethodGet, path: path, token: admin})); got != stored {
		t.Fatalf("after a malformed put the queue is %s, want %s", got, stored)
	}

	// The first and last instants RFC 3339 names are openings like any
	// other (to the millisecond, as stored).
	last := h.putQueue(schedule, `{"opensAt":"9999-12-31T23:59:59.999999999Z","admitPerSecond":5}`)
	if last.status != http.StatusOK || last.body["opensAt"] != "9999-12-31T23:59:59.999Z" {
		t.Fatalf("put at the end of 9999: %d %s", last.status, last.raw)
	}
	if got := h.do(request{method: http.MethodGet, path: path, token: admin}); got.status != http.StatusOK || got.body["opensAt"] != "9999-12-31T23:59:59.999Z" {
		t.Fatalf("get at the end of 9999: %d %s", got.status, got.raw)
	}
	first := h.createSchedule(10)
	opened := h.putQueue(first, `{"opensAt":"0001-01-01T00:00:00Z","admitPerSecond":5}`)
	if opened.status != http.StatusOK || opened.body["opensAt"] != "0001-01-01T00:00:00Z" {
		t.Fatalf("put at the start of year 1: %d %s", opened.status, opened.raw)
	}
	if joined := h.join(0, "bob", first); joined.status != http.StatusCreated || joined.body["opensAt"] != "0001-01-01T00:00:00Z" ||
		str(joined.body, "state") == "prequeue" {
		t.Fatalf("join a queue open since year 1: %d %s", joined.status, joined.raw)
	}
}

// A join takes no input: a body is refused as on every bodiless call (415
// unless JSON, 400 with a member), and nothing is joined.
func TestQueueJoinRefusesABody(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	h.openQueue(schedule, 1, `,"maxActive":1`)
	path := fmt.Sprintf("/schedules/%d/queue", schedule)
	for _, tc := range []struct {
		contentType, body string
		status            int
		code              string
	}{
		{"text/plain", "hello", http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"", "hello", http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"application/json", `{"userId":"bob"}`, http.StatusBadRequest, "malformed_json"},
		{"application/json", `[]`, http.StatusBadRequest, "malformed_json"},
		{"application/json", `{`, http.StatusBadRequest, "malformed_json"},
	} {
		resp := h.do(request{method: http.MethodPost, path: path, token: h.token("alice", ""), contentType: tc.contentType, body: tc.body})
		expectProblem(t, resp, tc.status, tc.code)
		got := h.do(request{method: http.MethodGet, path: path, token: h.token("admin", auth.RoleAdmin)})
		if c := queueCounts(t, got); c["waiting"]+c["active"]+c["admitted"] != 0 {
			t.Fatalf("after a join with %q as %q, counts %v", tc.body, tc.contentType, c)
		}
	}
	// No body, or an empty object, is a join.
	if resp := h.do(request{method: http.MethodPost, path: path, token: h.token("alice", ""), contentType: "application/json", body: "{}"}); resp.status != http.StatusCreated {
		t.Fatalf("join with {}: %d %s", resp.status, resp.raw)
	}
	h.mustJoin(0, "bob", schedule)
}

// The queue's DELETEs take no input either: deleting a queue (admin) and
// leaving one's place refuse a body the same way, and change nothing.
func TestQueueDeletesRefuseABody(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	h.openQueue(schedule, 1, "")
	path := fmt.Sprintf("/schedules/%d/queue", schedule)
	ticket := h.mustJoin(0, "alice", schedule)
	admin := h.token("admin", auth.RoleAdmin)
	for _, tc := range []struct {
		contentType, body string
		status            int
		code              string
	}{
		{"text/plain", "hello", http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"application/json", `{"force":true}`, http.StatusBadRequest, "malformed_json"},
	} {
		expectProblem(t, h.do(request{method: http.MethodDelete, path: path, token: admin, contentType: tc.contentType, body: tc.body}),
			tc.status, tc.code)
		if got := h.do(request{method: http.MethodGet, path: path, token: admin}); got.status != http.StatusOK {
			t.Fatalf("after a DELETE with %q as %q, the queue: %d %s", tc.body, tc.contentType, got.status, got.raw)
		}
		expectProblem(t, h.do(request{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token("alice", ""),
			contentType: tc.contentType, body: tc.body}), tc.status, tc.code)
		if got := h.ticket(0, "alice", ticket); got.status != http.StatusOK || str(got.body, "state") == "left" {
			t.Fatalf("after leaving with %q as %q, the ticket: %d %s", tc.body, tc.contentType, got.status, got.raw)
		}
	}
	for _, del := range []request{
		{method: http.MethodDelete, path: "/queue/" + ticket, token: h.token("alice", ""), contentType: "application/json", body: "{}"},
		{method: http.MethodDelete, path: path, token: admin},
	} {
		if resp := h.do(del); resp.status != http.StatusNoContent {
			t.Fatalf("%s %s: %d %s", del.method, del.path, resp.status, resp.raw)
		}
	}
}

// While maxActive is full, the wait hangs on admitted buyers leaving or
// expiring, which nothing measured says: the estimate is null (polled and
// streamed alike), and the buyer is not told to ask every second.
func TestQueueWaitUnknownWhileMaxActiveIsFull(t *testing.T) {
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	h.openQueue(schedule, 10, `,"maxActive":1`)
	alice := h.mustJoin(0, "alice", schedule)
	h.admission("alice", alice, 5*time.Second)
	bob := h.mustJoin(0, "bob", schedule)
	carol := h.mustJoin(0, "carol", schedule)
	for _, tc := range []struct {
		user, ticket string
		position     float64
	}{{"bob", bob, 1}, {"carol", carol, 2}} {
		resp := h.ticket(0, tc.user, tc.ticket)
		wait, present := resp.body["estimatedWaitSeconds"]
		if resp.status != http.StatusOK || str(resp.body, "state") != "waiting" || resp.body["position"] != tc.position ||
			!present || wait != nil {
			t.Fatalf("%s behind a full maxActive: %d %s", tc.user, resp.status, resp.raw)
		}
		if got := resp.header.Get("Retry-After"); got != "10" {
			t.Errorf("%s whose wait is unknown is told to ask again after %q s", tc.user, got)
		}
	}
	stream := h.ticketStream(0, "bob", bob)
	defer stream.close()
	ev := stream.next(5 * time.Second)
	if ev.name != "position" || !strings.Contains(ev.data, `"estimatedWaitSeconds":null`) || !strings.Contains(ev.data, `"position":1`) {
		t.Fatalf("streamed: %+v", ev)
	}

	// Once alice leaves, her place goes to bob.
	if resp := h.do(request{method: http.MethodDelete, path: "/queue/" + alice, token: h.token("alice", "")}); resp.status != http.StatusNoContent {
		t.Fatalf("leave: %d %s", resp.status, resp.raw)
	}
	h.admission("bob", bob, 5*time.Second)
}
