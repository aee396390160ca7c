package main

import (
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value", ms(7), 99, 7 * time.Millisecond},
		{"p0 is the minimum", ms(1, 2, 3), 0, 1 * time.Millisecond},
		{"median of odd count", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of even count is the lower middle", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p99 of ten rounds up to the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100 is the max", ms(1, 2, 30), 100, 30 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(p%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	cfg := config{Targets: []string{"http://a"}, N: 6, C: 2, Seats: []int{1, 2}}
	outcomes := []outcome{
		{Seat: 1, Sent: true, Status: 200, Latency: 4 * time.Millisecond},
		{Seat: 2, Sent: true, Status: 409, Code: "seat_locked", Latency: 1 * time.Millisecond},
		{Seat: 1, Sent: true, Status: 409, Code: "seat_taken", Latency: 2 * time.Millisecond},
		{Seat: 2, Sent: true, Err: "connection reset", Latency: 3 * time.Millisecond},
		{Seat: 1, Sent: true, Err: "connection reset", Latency: 3 * time.Millisecond},
		{Seat: 2},
	}
	views := []seatMapView{
		{Target: "http://a", Statuses: map[int]string{1: "reserved", 2: "available"}},
		{Target: "http://b", Err: errors.New("boom")},
	}

	r := summarize(cfg, "run", 9, outcomes, 2*time.Second, views)

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
	if r.Latency.P50 != duration(3*time.Millisecond) || r.Latency.Max != duration(4*time.Millisecond) {
		t.Errorf("latency %+v", r.Latency)
	}
	if len(r.TransportErrors) != 1 {
		t.Errorf("error samples %q, want the one distinct message", r.TransportErrors)
	}
	wantSeats := []seatReport{{Seat: 1, Requests: 3, OK: 1, Map: "reserved/error"}, {Seat: 2, Requests: 2, OK: 0, Map: "available/error"}}
	for i, s := range r.PerSeat {
		if s != wantSeats[i] {
			t.Errorf("seat %d: %+v, want %+v", i, s, wantSeats[i])
		}
	}
}
