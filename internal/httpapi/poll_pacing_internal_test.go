package httpapi

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/waitroom"
)

// A waiting buyer asks again when its turn should come, so that a
// queue's polls follow its admissions, not its crowd.
func TestPollingFollowsTheEstimatedWait(t *testing.T) {
	waiting := func(wait time.Duration) waitroom.Ticket {
		return waitroom.Ticket{State: waitroom.Waiting, Position: 1, EstimatedWait: wait}
	}
	tests := []struct {
		name   string
		ticket waitroom.Ticket
		want   string
	}{
		{"at the head", waiting(200 * time.Millisecond), "1"},
		{"due now", waiting(0), "1"},
		{"a few seconds back", waiting(2500 * time.Millisecond), "3"},
		{"further back", waiting(20 * time.Second), "20"},
		{"far back: at most 30 s", waiting(10 * time.Minute), "30"},
		{"behind maxActive, wait unknown", waitroom.Ticket{State: waitroom.Waiting, Position: 7, EstimatedWaitUnknown: true}, "10"},
		{"admitted", waitroom.Ticket{State: waitroom.Admitted}, ""},
		{"expired", waitroom.Ticket{State: waitroom.Expired}, ""},
		{"left", waitroom.Ticket{State: waitroom.Left}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			setRetryAfter(w, tt.ticket)
			if got := w.Header().Get("Retry-After"); got != tt.want {
				t.Errorf("Retry-After = %q, want %q", got, tt.want)
			}
		})
	}
}

// Before the opening everyone asks at the opening, spread over a few
// seconds so that they do not all ask in the same one.
func TestPrequeuePollsAtTheOpening(t *testing.T) {
	opensIn := 12 * time.Second
	seen := map[int]bool{}
	for range 200 {
		w := httptest.NewRecorder()
		setRetryAfter(w, waitroom.Ticket{State: waitroom.Prequeue, OpensAt: time.Now().Add(opensIn)})
		after, err := strconv.Atoi(w.Header().Get("Retry-After"))
		if err != nil {
			t.Fatalf("Retry-After = %q: %v", w.Header().Get("Retry-After"), err)
		}
		if after < 12 || after > 15 {
			t.Fatalf("Retry-After = %d s for an opening in %v, want 12 to 15", after, opensIn)
		}
		seen[after] = true
	}
	if len(seen) < 2 {
		t.Errorf("every buyer was told the same second (%v): the opening's polls are not spread", seen)
	}
}
