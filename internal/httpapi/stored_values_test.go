package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
)

// storedBookings holds schedules as a store could hand them back,
// whatever they start at.
type storedBookings struct {
	fuzzBookings
	schedules []reservation.Schedule
}

func (s storedBookings) Schedule(_ context.Context, id int64) (reservation.Schedule, error) {
	for _, sc := range s.schedules {
		if sc.ID() == id {
			return sc, nil
		}
	}
	return reservation.Schedule{}, reservation.ErrScheduleNotFound
}

func (s storedBookings) Schedules(context.Context, int64, int) (reservation.SchedulePage, error) {
	return reservation.SchedulePage{Schedules: s.schedules}, nil
}

// Reading never fails on what is stored: a start no RFC 3339 date-time
// can name (the years 10000 and -1 in UTC, as rows stored before starts
// were checked hold) is answered 200 as the nearest one that can.
func TestStoredStartsOutOfRangeAreRead(t *testing.T) {
	t.Parallel()
	bookings := storedBookings{schedules: []reservation.Schedule{
		reservation.RestoreSchedule(1, "Hamlet", time.Date(10000, 1, 1, 23, 58, 59, 0, time.UTC), 5),
		reservation.RestoreSchedule(2, "Hamlet", time.Date(-1, 12, 31, 23, 59, 0, 0, time.UTC), 5),
		reservation.RestoreSchedule(3, "Hamlet", time.Date(2026, 12, 24, 10, 30, 0, 0, time.FixedZone("", 9*3600)), 5),
	}}
	h := httpapi.NewHandler(httpapi.Options{Bookings: bookings, RequestTimeout: 3 * time.Second})
	want := map[string]string{
		"/schedules/1": "9999-12-31T23:59:59.999999Z",
		"/schedules/2": "0001-01-01T00:00:00Z",
		"/schedules/3": "2026-12-24T01:30:00Z",
	}
	for path, start := range want {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var body struct{ StartsAt string }
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.StartsAt != start {
			t.Errorf("GET %s: %d %s, want 200 starting %s", path, rec.Code, rec.Body, start)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/schedules", nil))
	var list struct{ Schedules []struct{ StartsAt string } }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Schedules) != 3 {
		t.Fatalf("GET /schedules: %d %s, want 200 with 3 schedules", rec.Code, rec.Body)
	}
	for i, path := range []string{"/schedules/1", "/schedules/2", "/schedules/3"} {
		if list.Schedules[i].StartsAt != want[path] {
			t.Errorf("listed start %d = %s, want %s", i, list.Schedules[i].StartsAt, want[path])
		}
	}
}
