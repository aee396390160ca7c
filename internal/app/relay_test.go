package app_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A change committed by an instance that died before anything was
// published (its row in the outbox, nothing else) still reaches a stream
// open on another instance, and the outbox's metrics are exported.
func TestCommittedChangeReachesTheStreamFromTheOutbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	schedule := h.createSchedule(5)
	s := h.stream(1, schedule, "")
	s.next(5 * time.Second) // the snapshot

	if _, err := h.pool.Exec(context.Background(),
		`INSERT INTO seat_changes (schedule_id, seat_id, status) VALUES ($1, 3, 'held')`, schedule); err != nil {
		t.Fatal(err)
	}
	s.seatEvent(3, "held", 5*time.Second)

	body := scrape(t, h.bases[0]+"/metrics")
	for _, want := range []string{
		"seatlock_seat_changes_backlog ",
		"seatlock_seat_changes_lag_seconds ",
		"seatlock_seat_changes_relayed_total ",
		"seatlock_seat_changes_dropped_total 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
