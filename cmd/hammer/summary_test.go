package main

import (
	"errors"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	cfg := config{Scenario: scenarioContended, Targets: []string{"http://a"}, N: 6, C: 2, Users: 2, Seats: 2, Verify: true}
	one, two := seatRef{Schedule: 9, Seat: 1}, seatRef{Schedule: 9, Seat: 2}
	w := &workload{fixed: []seatRef{one, two}}
	outcomes := []outcome{
		{Seat: one, Sent: true, Status: 200, Latency: 4 * time.Millisecond},
		{Seat: two, Sent: true, Status: 409, Code: "seat_locked", Latency: 1 * time.Millisecond},
		{Seat: one, Sent: true, Status: 409, Code: "seat_taken", Latency: 2 * time.Millisecond},
		{Seat: two, Sent: true, Err: "connection reset", Latency: 3 * time.Millisecond},
		{Seat: one, Sent: true, Err: "connection reset", Latency: 3 * time.Millisecond},
		{},
	}
	hist := newLatencyHistogram()
	for _, o := range outcomes[:5] {
		_ = hist.RecordValue(o.Latency.Microseconds())
	}
	views := []seatMapView{
		{Target: "http://a", Schedule: 9, Statuses: map[int]string{1: "reserved", 2: "available"}},
		{Target: "http://b", Schedule: 9, Err: errors.New("boom")},
	}

	r := summarize(cfg, "run", w, fired{outcomes: outcomes, latency: hist, wall: 2 * time.Second}, views)

	want := map[string]int{"200": 1, "409 seat_locked": 1, "409 seat_taken": 1, "transport error": 2, "not sent": 1}
	if len(r.Responses) != len(want) {
		t.Errorf("responses %v, want %v", r.Responses, want)
	}
	for k, n := range want {
		if r.Responses[k] != n {
			t.Errorf("responses[%q] = %d, want %d", k, r.Responses[k], n)
		}
	}
	if r.Sent != 5 || r.Throughput != 2.5 {
		t.Errorf("sent %d, throughput %v: want 5 and 2.5/s", r.Sent, r.Throughput)
	}
	// HdrHistogram keeps three significant digits: within 0.1%.
	near := func(got duration, want time.Duration) bool {
		d := time.Duration(got) - want
		return d >= -want/1000 && d <= want/1000
	}
	if !near(r.Latency.P50, 3*time.Millisecond) || !near(r.Latency.Max, 4*time.Millisecond) || !near(r.Latency.P999, 4*time.Millisecond) {
		t.Errorf("latency %+v", r.Latency)
	}
	if len(r.TransportErrs) != 1 {
		t.Errorf("error samples %q, want the one distinct message", r.TransportErrs)
	}
	if r.Seats != (seatTotals{Hammered: 2, WonOnce: 1, NotWon: 1}) || r.Schedules[0] != 9 {
		t.Errorf("seat totals %+v, schedules %v", r.Seats, r.Schedules)
	}
	wantSeats := []seatReport{{seatRef: one, Requests: 3, OK: 1, Map: "reserved/error"}, {seatRef: two, Requests: 2, OK: 0, Map: "available/error"}}
	for i, s := range r.PerSeat {
		if s != wantSeats[i] {
			t.Errorf("seat %d: %+v, want %+v", i, s, wantSeats[i])
		}
	}
}

// A seat's 200s that carry one reservation are one win: its owner asked
// again and was answered with it. Two reservations are two wins, and fail.
func TestSummarizeCountsReservationsNotAnswers(t *testing.T) {
	cfg := config{Scenario: scenarioContended, Targets: []string{"http://a"}, N: 4, C: 2, Users: 2, Seats: 2}
	one, two := seatRef{Schedule: 9, Seat: 1}, seatRef{Schedule: 9, Seat: 2}
	w := &workload{fixed: []seatRef{one, two}}
	outcomes := []outcome{
		{Seat: one, Sent: true, Status: 200, Reservation: "r1"},
		{Seat: one, Sent: true, Status: 200, Reservation: "r1"},
		{Seat: two, Sent: true, Status: 200, Reservation: "r2"},
		{Seat: two, Sent: true, Status: 200, Reservation: "r3"},
	}
	r := summarize(cfg, "run", w, fired{outcomes: outcomes, latency: newLatencyHistogram(), wall: time.Second}, nil)
	if got := r.PerSeat[0]; got.OK != 1 || got.OwnersRetries != 1 {
		t.Errorf("seat 1: %d won, %d owner's retries; want 1 and 1", got.OK, got.OwnersRetries)
	}
	if got := r.PerSeat[1]; got.OK != 2 || got.OwnersRetries != 0 {
		t.Errorf("seat 2: %d won, %d owner's retries; want 2 and 0", got.OK, got.OwnersRetries)
	}
	if v := judge(r, nil); v.Pass {
		t.Error("a seat with two reservations passed the verdict")
	}
}
