package main

import "testing"

const metricsText = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 23
process_open_fds 17
seatlock_booking_outcomes_total{outcome="booked"} 1500
seatlock_booking_outcomes_total{outcome="seat_taken"} 25
seatlock_booking_outcomes_total_other 99
`

func TestSample(t *testing.T) {
	if got := sample(metricsText, "go_goroutines"); got != "23" {
		t.Errorf("go_goroutines = %q", got)
	}
	if got := sample(metricsText, "process_open_fds"); got != "17" {
		t.Errorf("process_open_fds = %q", got)
	}
	if got := sample(metricsText, "go_threads"); got != "" {
		t.Errorf("go_threads = %q, want none", got)
	}
}

func TestSum(t *testing.T) {
	if got := sum(metricsText, "seatlock_booking_outcomes_total"); got != 1525 {
		t.Errorf("sum = %v, want 1525", got)
	}
}
