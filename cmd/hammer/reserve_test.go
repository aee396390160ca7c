package main

import "testing"

func TestOutcomeKey(t *testing.T) {
	tests := []struct {
		o    outcome
		want string
	}{
		{outcome{Sent: true, Status: 200}, "200"},
		{outcome{Sent: true, Status: 200, BadSuccess: true}, "200 unexpected body"},
		{outcome{Sent: true, Status: 409, Code: "seat_locked"}, "409 seat_locked"},
		{outcome{Sent: true, Status: 409, Code: "seat_taken"}, "409 seat_taken"},
		{outcome{Sent: true, Status: 503, Code: "unavailable"}, "503 unavailable"},
		{outcome{Sent: true, Status: 502}, "502"},
		{outcome{Sent: true, Err: "connection refused"}, "transport error"},
		{outcome{Sent: true, Canceled: true, Err: "context canceled"}, "canceled"},
		{outcome{}, "not sent"},
	}
	for _, tt := range tests {
		if got := tt.o.key(); got != tt.want {
			t.Errorf("%+v.key() = %q, want %q", tt.o, got, tt.want)
		}
	}
}
