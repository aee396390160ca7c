package httpapi

import (
	"slices"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/reservation"
)

func fieldsOf(err error) []string {
	if err == nil {
		return nil
	}
	var names []string
	for _, f := range err.(*problem.Error).Fields {
		names = append(names, f.Field)
	}
	return names
}

// One 422 names every bad field in the order of the request's members:
// those only the edge can judge (a member missing, a date that does not
// parse) and, for the others, the domain's verdict.
func TestValidateNamesEveryBadFieldOnce(t *testing.T) {
	t.Parallel()
	v := newValidator()
	ptr := func(s string) *string { return &s }
	zero := 0
	for _, tt := range []struct {
		name string
		req  createScheduleRequest
		want []string
	}{
		{"all missing", createScheduleRequest{}, []string{"title", "startsAt", "seatCount"}},
		{"blank, unparsed, no seats", createScheduleRequest{Title: ptr("  "), StartsAt: ptr("x"), SeatCount: &zero}, []string{"title", "startsAt", "seatCount"}},
		{"control character", createScheduleRequest{Title: ptr("Du\x00ne"), StartsAt: ptr("2026-12-24T19:30:00Z"), SeatCount: &zero}, []string{"title", "seatCount"}},
	} {
		startsAt, _ := time.Parse(time.RFC3339Nano, value(tt.req.StartsAt))
		_, invalid := reservation.NewSchedule(value(tt.req.Title), startsAt, value(tt.req.SeatCount))
		if got := fieldsOf(validate(v, &tt.req, invalid)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: fields %v, want %v", tt.name, got, tt.want)
		}
	}

	scheduleID := int64(0)
	for _, tt := range []struct {
		name string
		req  holdRequest
		want []string
	}{
		{"all missing", holdRequest{}, []string{"scheduleId", "seatIds"}},
		{"bad schedule and seats", holdRequest{ScheduleID: &scheduleID, SeatIDs: []int{0, 5, -1}}, []string{"scheduleId", "seatIds[0]", "seatIds[2]"}},
		{"repeated seat", holdRequest{ScheduleID: &scheduleID, SeatIDs: []int{0, 0}}, []string{"scheduleId", "seatIds"}},
		{"no seats", holdRequest{ScheduleID: &scheduleID, SeatIDs: []int{}}, []string{"scheduleId", "seatIds"}},
	} {
		cmd := reservation.HoldCommand{ScheduleID: value(tt.req.ScheduleID), SeatIDs: tt.req.SeatIDs, UserID: "alice"}
		if got := fieldsOf(validate(v, &tt.req, cmd.Validate())); !slices.Equal(got, tt.want) {
			t.Errorf("%s: fields %v, want %v", tt.name, got, tt.want)
		}
	}
}
