package app_test

import (
	"net/http"
	"strings"
	"testing"
)

// A customer who books a seat of their own live hold is told that the hold
// is theirs and how to book it (confirm the hold), not that another
// customer holds it: still 409 seat_held, with the hold's id as holdId.
// Another customer booking the same seat learns nothing about the hold.
func TestBookingASeatOfOwnHoldNamesTheHold(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)

	id := h.mustHold(0, "alice", schedule, 3, 4)

	own := h.reserve(0, "alice", schedule, 3)
	expectProblem(t, own, http.StatusConflict, "seat_held")
	if got := str(own.body, "holdId"); got != id {
		t.Errorf("holdId = %q, want the owner's hold %q (%s)", got, id, own.raw)
	}
	detail := str(own.body, "detail")
	if strings.Contains(detail, "Another customer") || !strings.Contains(detail, "your own hold") ||
		!strings.Contains(detail, "/holds/"+id+"/confirm") {
		t.Errorf("detail = %q, want it to say the seat is in the caller's own hold and to confirm it at /holds/%s/confirm", detail, id)
	}

	other := h.reserve(0, "bob", schedule, 3)
	expectProblem(t, other, http.StatusConflict, "seat_held")
	if _, ok := other.body["holdId"]; ok {
		t.Errorf("another customer's seat_held names the hold: %s", other.raw)
	}
	if detail := str(other.body, "detail"); !strings.Contains(detail, "Another customer") {
		t.Errorf("another customer's detail = %q, want the usual one", detail)
	}

	// What the detail says to do books the seat.
	if confirmed := h.confirm(0, "alice", id); confirmed.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", confirmed.status, confirmed.raw)
	}
	if got := h.seatStatuses(schedule); got[3] != "reserved" || got[4] != "reserved" {
		t.Errorf("seat map after confirming = %v, want 3 and 4 reserved", got)
	}
}
