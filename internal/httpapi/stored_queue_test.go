package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// storedRoom answers every read of the one queue with what a store could
// hand back, whatever it opens at.
type storedRoom struct {
	watchingRoom
	opensAt time.Time
}

const storedTicket = "7-3f9a0c2e5b7d4a1e9c8b6a5f4e3d2c1b"

func (r storedRoom) ticket() waitroom.Ticket {
	return waitroom.Ticket{ID: storedTicket, ScheduleID: fuzzSchedule, UserID: "alice", State: waitroom.Prequeue, OpensAt: r.opensAt}
}

func (r storedRoom) Queue(context.Context, int64) (waitroom.Settings, waitroom.Counts, error) {
	return waitroom.Settings{OpensAt: r.opensAt, AdmitPerSecond: 5, AdmissionTTL: waitroom.DefaultAdmissionTTL}, waitroom.Counts{Prequeue: 1}, nil
}
func (r storedRoom) Join(context.Context, int64, string) (waitroom.Ticket, bool, error) {
	return r.ticket(), false, nil
}
func (r storedRoom) Ticket(context.Context, string, string) (waitroom.Ticket, error) {
	return r.ticket(), nil
}
func (r storedRoom) Watch(context.Context, string, string) (*waitroom.Watch, waitroom.Ticket, error) {
	gone := make(chan waitroom.Ticket)
	close(gone)
	return &waitroom.Watch{C: gone}, r.ticket(), nil
}

// Reading a queue never fails on what is stored: an opening no RFC 3339
// date-time can name (as queues put before openings were checked hold) is
// answered as the nearest one that can, by the admin's read, a join, the
// ticket and its stream alike.
func TestStoredOpeningsOutOfRangeAreRead(t *testing.T) {
	t.Parallel()
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	user, err := auth.Mint(secret, "alice", "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := auth.Mint(secret, "root", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for stored, want := range map[time.Time]string{
		time.Date(10000, 1, 1, 22, 59, 0, 0, time.UTC): "9999-12-31T23:59:59.999999Z",
		time.Date(-1, 12, 31, 23, 59, 0, 0, time.UTC):  "0001-01-01T00:00:00Z",
	} {
		h := httpapi.NewHandler(httpapi.Options{Bookings: fuzzBookings{}, Verifier: verifier, RequestTimeout: 3 * time.Second,
			Room: storedRoom{opensAt: stored}})
		for _, tc := range []struct{ method, path, token string }{
			{http.MethodGet, "/schedules/7/queue", admin},
			{http.MethodPost, "/schedules/7/queue", user},
			{http.MethodGet, "/queue/" + storedTicket, user},
		} {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body struct{ OpensAt string }
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.OpensAt != want {
				t.Errorf("%s %s opening %v: %d %s, want 200 opening %s", tc.method, tc.path, stored, rec.Code, rec.Body, want)
			}
		}
		req := httptest.NewRequest(http.MethodGet, "/queue/"+storedTicket+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var data string
		for sc := bufio.NewScanner(rec.Body); sc.Scan(); {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = d
				break
			}
		}
		var event struct{ OpensAt string }
		if rec.Code != http.StatusOK || json.Unmarshal([]byte(data), &event) != nil || event.OpensAt != want {
			t.Errorf("the stream of a ticket opening %v: %d %q, want an event opening %s", stored, rec.Code, rec.Body, want)
		}
	}
}
