package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// webhookEvent is a row of webhook_events, its data parsed.
type webhookEvent struct {
	id     string // the webhook-id of its messages
	seq    int64
	typ    string
	object string
	data   map[string]any
}

// eventsSince reads the events written after seq, in seq order.
func (h *harness) eventsSince(seq int64) []webhookEvent {
	h.t.Helper()
	rows, err := h.pool.Query(context.Background(),
		`SELECT id::text, seq, type, object_id::text, data::text FROM webhook_events WHERE seq > $1 ORDER BY seq`, seq)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var events []webhookEvent
	for rows.Next() {
		var (
			e    webhookEvent
			data string
		)
		if err := rows.Scan(&e.id, &e.seq, &e.typ, &e.object, &data); err != nil {
			h.t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(data), &e.data); err != nil {
			h.t.Fatal(err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return events
}

// get answers GET path for user.
func (h *harness) get(user, path string) map[string]any {
	h.t.Helper()
	resp := h.do(request{method: http.MethodGet, path: path, token: h.token(user, "")})
	if resp.status != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, resp.status, resp.raw)
	}
	return resp.body
}

// apiEvent is an event expected: its type, object and the object's path,
// whose GET answer its data must equal.
type apiEvent struct{ typ, object, path string }

// expectAPIEvents checks that exactly want were written after seq, in
// order, each with the data GET answers for its object now; it returns
// the last seq.
func (h *harness) expectAPIEvents(seq int64, user, what string, want ...apiEvent) int64 {
	h.t.Helper()
	got := h.eventsSince(seq)
	if len(got) != len(want) {
		h.t.Fatalf("%s: %d events %+v, want %d", what, len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].typ != w.typ || got[i].object != w.object {
			h.t.Errorf("%s: event %d is %s %s, want %s %s", what, i, got[i].typ, got[i].object, w.typ, w.object)
		}
		if answer := h.get(user, w.path+w.object); !reflect.DeepEqual(got[i].data, answer) {
			h.t.Errorf("%s: %s data\n%v\nwant GET's\n%v", what, w.typ, got[i].data, answer)
		}
	}
	if len(got) == 0 {
		return seq
	}
	return got[len(got)-1].seq
}

// Every change through the API writes its event, whose data is what GET
// answers for the object after the change; a replay writes none.
func TestWebhookEventsCarryWhatTheAPIShows(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	h.createWebhook(webhookBody(webhookHook)) // with no endpoint, no event is written
	schedule := h.createLayout(row("A", 4), row("B", 4))

	id := h.mustHold(0, "alice", schedule, 6, 2)
	seq := h.expectAPIEvents(0, "alice", "hold", apiEvent{"hold.created", id, "/holds/"})
	if labels := h.get("alice", "/holds/"+id)["seatLabels"]; !reflect.DeepEqual(labels, []any{"A2", "B2"}) {
		t.Errorf("seatLabels = %v, want the layout's", labels)
	}

	confirmed := h.confirm(0, "alice", id)
	if confirmed.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", confirmed.status, confirmed.raw)
	}
	want := []apiEvent{{"hold.confirmed", id, "/holds/"}}
	for _, r := range confirmed.body["reservations"].([]any) {
		want = append(want, apiEvent{"reservation.created", str(r.(map[string]any), "id"), "/reservations/"})
	}
	seq = h.expectAPIEvents(seq, "alice", "confirm", want...)
	if again := h.confirm(0, "alice", id); again.status != http.StatusOK {
		t.Fatalf("confirm again: %d %s", again.status, again.raw)
	}
	seq = h.expectAPIEvents(seq, "alice", "confirm again")

	booked := h.reserveWithKey(0, "bob", "key-1", schedule, 3, "")
	if booked.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", booked.status, booked.raw)
	}
	rid := str(booked.body, "id")
	seq = h.expectAPIEvents(seq, "bob", "reserve", apiEvent{"reservation.created", rid, "/reservations/"})
	if again := h.reserveWithKey(0, "bob", "key-1", schedule, 3, ""); again.status != http.StatusOK || str(again.body, "id") != rid {
		t.Fatalf("the keyed retry: %d %s", again.status, again.raw)
	}
	seq = h.expectAPIEvents(seq, "bob", "keyed retry")

	for range 2 {
		if resp := h.cancel(0, "bob", rid); resp.status != http.StatusNoContent {
			t.Fatalf("cancel: %d %s", resp.status, resp.raw)
		}
	}
	seq = h.expectAPIEvents(seq, "bob", "cancel twice", apiEvent{"reservation.cancelled", rid, "/reservations/"})

	released := h.mustHold(0, "carol", schedule, 8)
	seq = h.expectAPIEvents(seq, "carol", "hold", apiEvent{"hold.created", released, "/holds/"})
	for range 2 {
		if resp := h.release(0, "carol", released); resp.status != http.StatusNoContent {
			t.Fatalf("release: %d %s", resp.status, resp.raw)
		}
	}
	h.expectAPIEvents(seq, "carol", "release twice", apiEvent{"hold.released", released, "/holds/"})
}

// The periodic job announces a hold that expired, once, with the hold as
// GET shows it (expired).
func TestExpiredHoldIsAnnounced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	h.createWebhook(webhookBody(webhookHook)) // with no endpoint, no event is written
	schedule := h.createLayout(row("A", 4))
	id := h.mustHold(0, "alice", schedule, 1)
	seq := h.expectAPIEvents(0, "alice", "hold", apiEvent{"hold.created", id, "/holds/"})
	// Expire it now rather than wait HOLD_TTL's ten seconds at least.
	if _, err := h.pool.Exec(context.Background(), `
		WITH claims AS (UPDATE seat_claims SET expires_at = now() WHERE hold_id = $1)
		UPDATE holds SET expires_at = now() WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(h.eventsSince(seq)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no hold.expired within 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the job's next runs, on either instance
	h.expectAPIEvents(seq, "alice", "expiry", apiEvent{"hold.expired", id, "/holds/"})
	if status := h.get("alice", "/holds/"+id)["status"]; status != "expired" {
		t.Errorf("status = %v, want expired", status)
	}
}
