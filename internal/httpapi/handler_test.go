package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
)

var secret = []byte("handler-test-secret-handler-test!")

// fakeBookings answers Reserve with whatever reserve does, as recovered
// when the command resumes a claim (as the use case does when the claim's
// earlier request booked); the other use cases are not exercised here (the
// end-to-end tests cover them).
type fakeBookings struct {
	reserve func(ctx context.Context) (reservation.Reservation, error)
}

func (f fakeBookings) CreateLaidOutSchedule(context.Context, string, time.Time, reservation.Layout) (reservation.Schedule, error) {
	return reservation.Schedule{}, errors.New("not used")
}
func (f fakeBookings) Reserve(ctx context.Context, cmd reservation.ReserveCommand) (reservation.Booked, error) {
	r, err := f.reserve(ctx)
	return reservation.Booked{Reservation: r, Recovered: cmd.Resumed}, err
}
func (f fakeBookings) Reservation(context.Context, uuid.UUID, string) (reservation.Reservation, error) {
	return reservation.Reservation{}, reservation.ErrReservationNotFound
}
func (f fakeBookings) CancelReservation(context.Context, uuid.UUID, string) (bool, error) {
	return false, reservation.ErrReservationNotFound
}
func (f fakeBookings) Schedules(context.Context, int64, int) (reservation.SchedulePage, error) {
	return reservation.SchedulePage{}, errors.New("not used")
}
func (f fakeBookings) Schedule(context.Context, int64) (reservation.Schedule, error) {
	return reservation.Schedule{}, reservation.ErrScheduleNotFound
}

// testAuth returns a verifier of the tests' secret and a token it
// accepts for user with role.
func testAuth(tb testing.TB, user, role string) (*auth.Verifier, string) {
	tb.Helper()
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		tb.Fatal(err)
	}
	token, err := auth.Mint(secret, user, role, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return verifier, token
}

func serve(t *testing.T, reserve func(ctx context.Context) (reservation.Reservation, error), header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	verifier, token := testAuth(t, "alice", "")
	h := httpapi.NewHandler(httpapi.Options{Bookings: fakeBookings{reserve: reserve}, Verifier: verifier, RequestTimeout: 3 * time.Second})
	req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return body
}

func TestUnexpectedErrorIsGeneric500(t *testing.T) {
	rec := serve(t, func(context.Context) (reservation.Reservation, error) {
		return reservation.Reservation{}, errors.New(`pq: relation "secret_table" does not exist at 10.0.0.7:5432`)
	}, nil)
	body := decode(t, rec)
	if rec.Code != http.StatusInternalServerError || body["code"] != "internal" {
		t.Fatalf("got %d %v, want 500 internal", rec.Code, body)
	}
	if strings.Contains(rec.Body.String(), "secret_table") || strings.Contains(rec.Body.String(), "10.0.0.7") {
		t.Errorf("500 body leaks the internal error: %s", rec.Body.String())
	}
	if body["requestId"] == "" || body["requestId"] != rec.Header().Get("X-Request-Id") {
		t.Errorf("requestId %v does not match X-Request-Id %q", body["requestId"], rec.Header().Get("X-Request-Id"))
	}
}

func TestPanicIsGeneric500(t *testing.T) {
	rec := serve(t, func(context.Context) (reservation.Reservation, error) {
		panic("boom: internal invariant at store.go:42")
	}, nil)
	body := decode(t, rec)
	if rec.Code != http.StatusInternalServerError || body["code"] != "internal" {
		t.Fatalf("got %d %v, want 500 internal", rec.Code, body)
	}
	if strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("500 body leaks the panic: %s", rec.Body.String())
	}
}

func TestSeatLockedRetryAfterRoundsUp(t *testing.T) {
	tests := map[time.Duration]string{
		0:                       "1",
		300 * time.Millisecond:  "1",
		time.Second:             "1",
		1200 * time.Millisecond: "2",
		4999 * time.Millisecond: "5",
	}
	for remaining, want := range tests {
		rec := serve(t, func(context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, &reservation.UnavailableSeat{Reason: reservation.ReasonLocked, RetryAfter: remaining}
		}, nil)
		if rec.Code != http.StatusConflict || decode(t, rec)["code"] != "seat_locked" {
			t.Fatalf("remaining %v: got %d %s", remaining, rec.Code, rec.Body.String())
		}
		if got := rec.Header().Get("Retry-After"); got != want {
			t.Errorf("remaining %v: Retry-After = %q, want %q", remaining, got, want)
		}
	}
}

func TestRequestIsBoundedByTimeout(t *testing.T) {
	rec := serve(t, func(ctx context.Context) (reservation.Reservation, error) {
		deadline, ok := ctx.Deadline()
		if !ok || time.Until(deadline) > 3*time.Second {
			t.Errorf("use case ran without the request deadline (ok=%v, %v)", ok, time.Until(deadline))
		}
		return reservation.Reservation{}, errors.Join(reservation.ErrUnavailable, context.DeadlineExceeded)
	}, nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("got %d Retry-After %q, want 503 with Retry-After 2", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestRequestID(t *testing.T) {
	ok := func(context.Context) (reservation.Reservation, error) {
		return reservation.RestoreReservation(uuid.New(), 1, 1, "alice", time.Now()), nil
	}
	rec := serve(t, ok, http.Header{"X-Request-Id": {"client-id.42"}})
	if got := rec.Header().Get("X-Request-Id"); got != "client-id.42" {
		t.Errorf("a plain client id was replaced: %q", got)
	}
	rec = serve(t, ok, http.Header{"X-Request-Id": {"evil\nid with spaces"}})
	if got := rec.Header().Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \n") {
		t.Errorf("an unsafe client id was kept: %q", got)
	}
}
