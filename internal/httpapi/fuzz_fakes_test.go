package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// The fuzz targets drive the real handler over use cases that accept
// every command the domain would, and refuse with errBroken whatever the
// HTTP edge should never have let through; errBroken is answered 500,
// which every target fails on.
var errBroken = errors.New("fuzz: the edge let through a command it must refuse")

// fuzzSchedule is the one schedule the fakes know.
const fuzzSchedule = 7

// fuzzMaxWait is the handler's cap on Prefer: wait.
const fuzzMaxWait = 5 * time.Second

func storable(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

type fuzzBookings struct{}

func (fuzzBookings) CreateLaidOutSchedule(_ context.Context, title string, startsAt time.Time, layout reservation.Layout) (reservation.Schedule, error) {
	s, err := reservation.NewLaidOutSchedule(title, startsAt, layout.Rows())
	if err != nil {
		return reservation.Schedule{}, err
	}
	if !storable(s.Title()) || s.StartsAt().Before(reservation.EarliestStart) || s.StartsAt().After(reservation.LatestStart) {
		return reservation.Schedule{}, errBroken
	}
	for _, r := range s.Layout().Rows() {
		if !storable(r.Label) || !storable(r.Category) {
			return reservation.Schedule{}, errBroken
		}
	}
	return reservation.RestoreLaidOutSchedule(fuzzSchedule, s.Title(), s.StartsAt(), s.Layout()), nil
}

func (fuzzBookings) Schedules(context.Context, int64, int) (reservation.SchedulePage, error) {
	return reservation.SchedulePage{}, nil
}

func (fuzzBookings) Schedule(_ context.Context, id int64) (reservation.Schedule, error) {
	if id != fuzzSchedule {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	return reservation.RestoreSchedule(fuzzSchedule, "Dune", time.Date(2030, 1, 1, 20, 0, 0, 0, time.UTC), 2), nil
}

// fuzzImages shows every schedule's seat 2 reserved.
type fuzzImages struct{}

func (fuzzImages) Image(_ context.Context, s reservation.Schedule) (*seatmap.Image, error) {
	image := seatmap.NewImage(s)
	image.Reset(1, "", "fuzz", []reservation.OccupiedSeat{{ID: 2, Status: reservation.SeatReserved}})
	return image, nil
}

func (fuzzBookings) Reserve(_ context.Context, cmd reservation.ReserveCommand) (reservation.Booked, error) {
	if !storable(cmd.UserID) || cmd.ScheduleID < 1 || cmd.SeatID < 1 || cmd.Wait < 0 || cmd.Wait > fuzzMaxWait {
		return reservation.Booked{}, errBroken
	}
	return reservation.Booked{Reservation: reservation.RestoreReservation(uuid.New(), cmd.ScheduleID, cmd.SeatID, cmd.UserID, time.Now())}, nil
}

func (fuzzBookings) Reservation(context.Context, uuid.UUID, string) (reservation.Reservation, error) {
	return reservation.Reservation{}, reservation.ErrReservationNotFound
}

func (fuzzBookings) CancelReservation(context.Context, uuid.UUID, string) (bool, error) {
	return false, reservation.ErrReservationNotFound
}

type fuzzCheckout struct{}

func (fuzzCheckout) HoldBest(_ context.Context, cmd reservation.BestHoldCommand) (reservation.Held, int, error) {
	// Category "" is any category: the member left out.
	if !storable(cmd.UserID) || cmd.ScheduleID < 1 || cmd.Quantity < 1 || cmd.Quantity > reservation.MaxHoldSeats ||
		cmd.Category != "" && !storable(cmd.Category) {
		return reservation.Held{}, 1, errBroken
	}
	seats := make([]int, cmd.Quantity)
	for i := range seats {
		seats[i] = i + 1
	}
	now := time.Now()
	return reservation.Held{Hold: reservation.RestoreHold(uuid.New(), cmd.ScheduleID, seats, cmd.UserID, now, now.Add(time.Minute), reservation.HoldActive)}, 1, nil
}

func (fuzzCheckout) Hold(_ context.Context, cmd reservation.HoldCommand) (reservation.Held, error) {
	seats := slices.Clone(cmd.SeatIDs)
	slices.Sort(seats)
	if !storable(cmd.UserID) || cmd.ScheduleID < 1 || len(seats) < 1 || len(seats) > reservation.MaxHoldSeats ||
		seats[0] < 1 || len(slices.Compact(seats)) != len(cmd.SeatIDs) {
		return reservation.Held{}, errBroken
	}
	now := time.Now()
	return reservation.Held{Hold: reservation.RestoreHold(uuid.New(), cmd.ScheduleID, cmd.SeatIDs, cmd.UserID, now, now.Add(time.Minute), reservation.HoldActive)}, nil
}

func (fuzzCheckout) HoldByID(context.Context, uuid.UUID, string) (reservation.Hold, error) {
	return reservation.Hold{}, reservation.ErrHoldNotFound
}

func (fuzzCheckout) Confirm(context.Context, uuid.UUID, string) (reservation.Confirmed, error) {
	return reservation.Confirmed{}, reservation.ErrHoldNotFound
}

func (fuzzCheckout) Release(context.Context, uuid.UUID, string) error {
	return reservation.ErrHoldNotFound
}

// fuzzHoldID is the one hold the fakes extend.
const fuzzHoldID = "0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10"

func (fuzzCheckout) Extend(_ context.Context, id uuid.UUID, userID string) (reservation.Hold, error) {
	if id.String() != fuzzHoldID || !storable(userID) {
		return reservation.Hold{}, reservation.ErrHoldNotFound
	}
	now := time.Now()
	return reservation.RestoreHold(id, fuzzSchedule, []int{1}, userID, now, now.Add(time.Minute), reservation.HoldActive), nil
}

// grantingKeys is an idempotency store that grants every claim and keeps
// nothing: a fuzz run sends millions of keys.
type grantingKeys struct{}

func (grantingKeys) Begin(_ context.Context, k idempotency.Key, _ []byte, _ time.Duration) (idempotency.Claim, *idempotency.Response, error) {
	if !idempotency.ValidKey(k.Key) || !storable(k.UserID) {
		return idempotency.Claim{}, nil, errBroken
	}
	return idempotency.Claim{Key: k}, nil, nil
}
func (grantingKeys) Finish(context.Context, idempotency.Claim, idempotency.Response) error {
	return nil
}
func (grantingKeys) Abandon(context.Context, idempotency.Claim) error { return nil }
func (grantingKeys) Admit(context.Context, idempotency.Claim) error   { return nil }
func (grantingKeys) Release(context.Context, idempotency.Claim) error { return nil }
func (grantingKeys) Purge(context.Context) (int64, error)             { return 0, nil }

// fuzzAPI is the handler every fuzz target drives, with tokens for a
// user and an admin.
type fuzzAPI struct {
	handler     http.Handler
	user, admin string
}

func newFuzzAPI(f *testing.F) fuzzAPI {
	f.Helper()
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		f.Fatal(err)
	}
	user, err := auth.Mint(secret, "alice", "", time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	admin, err := auth.Mint(secret, "root", auth.RoleAdmin, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	h := httpapi.NewHandler(httpapi.Options{
		Bookings: fuzzBookings{}, SeatImages: fuzzImages{}, Checkout: fuzzCheckout{}, Idempotency: grantingKeys{}, Verifier: verifier,
		MaxWait: fuzzMaxWait, RequestTimeout: 5 * time.Second,
	})
	return fuzzAPI{handler: h, user: user, admin: admin}
}

func (a fuzzAPI) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	return rec
}

// checkAnswer fails on a 5xx and on an error that is not a well-formed
// problem: whatever a client sends, the answer is exact.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("answered %d: %s", rec.Code, rec.Body)
	}
	var body map[string]any
	if rec.Body.Len() > 0 {
		if !utf8.Valid(rec.Body.Bytes()) || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			t.Fatalf("answered %d with a body that is not a JSON object: %q", rec.Code, rec.Body)
		}
	}
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("answered %d as %q, not a problem: %s", rec.Code, ct, rec.Body)
		}
		if code, _ := body["code"].(string); code == "" {
			t.Fatalf("answered %d without a code: %s", rec.Code, rec.Body)
		}
		if detail, _ := body["detail"].(string); detail == "" {
			t.Fatalf("answered %d without a detail: %s", rec.Code, rec.Body)
		}
	}
	return body
}
