package opsmetrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seatlock/seatlock/internal/opsmetrics"
)

// Every request lands in its series, the same series each time (the
// remembered ones), from many goroutines at once; invented methods share
// one series.
func TestRequestSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := opsmetrics.NewRequests(reg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				m.Request("POST", "/reservations", 409, "seat_taken", time.Millisecond)
				m.Request("POST", "/reservations", 200, "", time.Millisecond)
				m.Request("POST", "/holds", 201, "", time.Millisecond)
				m.Request("BREW", "", 405, "method_not_allowed", time.Millisecond)
				m.Request("WHEN", "", 405, "method_not_allowed", time.Millisecond)
			}
		}()
	}
	for range 8 {
		<-done
	}
	want := `
# HELP seatlock_booking_outcomes_total Answers to POST /reservations by outcome: "booked", or the problem code (seat_taken, seat_locked, ...).
# TYPE seatlock_booking_outcomes_total counter
seatlock_booking_outcomes_total{outcome="booked"} 800
seatlock_booking_outcomes_total{outcome="seat_taken"} 800
# HELP seatlock_hold_outcomes_total Answers to POST /holds (named seats or best available) by outcome: "held", or the problem code (seats_unavailable, not_enough_seats, seats_contended, ...).
# TYPE seatlock_hold_outcomes_total counter
seatlock_hold_outcomes_total{outcome="held"} 800
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "seatlock_booking_outcomes_total", "seatlock_hold_outcomes_total"); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "seatlock_http_request_duration_seconds" {
			continue
		}
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			counts[strings.Join(labels, " ")] = metric.GetHistogram().GetSampleCount()
		}
	}
	wantCounts := map[string]uint64{
		"POST /reservations 409": 800, "POST /reservations 200": 800, "POST /holds 201": 800, "other unmatched 405": 1600,
	}
	if len(counts) != len(wantCounts) {
		t.Fatalf("series %v, want %v", counts, wantCounts)
	}
	for k, n := range wantCounts {
		if counts[k] != n {
			t.Errorf("series %q counted %d, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
}
