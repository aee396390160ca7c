package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// gateRoom is a waiting room whose gate answers as told and counts its
// checks; the rest of the room is watchingRoom's.
type gateRoom struct {
	watchingRoom
	gated  bool
	err    error
	checks *int
}

func (g gateRoom) Check(context.Context, int64, string, string) (bool, error) {
	*g.checks++
	return g.gated, g.err
}

// keyState is how a case's fakeKeys begins.
type keyState struct {
	resumed, admitted bool
	admitErr          error
}

// The gate and the Idempotency-Key: a request the gate refuses, or could
// not check, leaves no key to resume (it is forgotten, whatever the answer,
// the client's leaving included); a request it lets through with an
// admission has that recorded on its key before the booking; a resumed
// claim skips the gate only when its key recorded an admission.
func TestGateAndIdempotencyKeys(t *testing.T) {
	t.Parallel()
	errRedis := errors.New("redis: connection refused")
	for _, tc := range []struct {
		name       string
		gated      bool
		gateErr    error
		keys       keyState
		clientGone bool
		// what is expected
		status, checks, admits int
		code                   string
		booked, forgotten      bool
	}{
		{name: "admission required", gated: true, gateErr: waitroom.ErrAdmissionRequired,
			status: http.StatusForbidden, code: "admission_required", checks: 1, forgotten: true},
		{name: "admission invalid", gated: true, gateErr: waitroom.ErrAdmissionInvalid,
			status: http.StatusForbidden, code: "admission_invalid", checks: 1, forgotten: true},
		{name: "check failed", gated: true, gateErr: errRedis,
			status: http.StatusInternalServerError, code: "internal", checks: 1, forgotten: true},
		{name: "refused, client gone", gated: true, gateErr: waitroom.ErrAdmissionInvalid, clientGone: true,
			status: 499, checks: 1, forgotten: true},
		{name: "admitted", gated: true,
			status: http.StatusOK, checks: 1, admits: 1, booked: true},
		{name: "no queue", gated: false,
			status: http.StatusOK, checks: 1, booked: true},
		{name: "admission not recorded", gated: true, keys: keyState{admitErr: reservation.ErrUnavailable},
			status: http.StatusServiceUnavailable, code: "unavailable", checks: 1, admits: 1, forgotten: true},
		{name: "resumed, admitted before", gated: true, gateErr: waitroom.ErrAdmissionRequired, keys: keyState{resumed: true, admitted: true},
			status: http.StatusOK, booked: true},
		{name: "resumed, never admitted", gated: true, gateErr: waitroom.ErrAdmissionRequired, keys: keyState{resumed: true},
			status: http.StatusForbidden, code: "admission_required", checks: 1, forgotten: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			keys := &fakeKeys{resumed: tc.keys.resumed, admitted: tc.keys.admitted, admitErr: tc.keys.admitErr}
			checks, booked := 0, false
			verifier, token := testAuth(t, "alice", "")
			h := httpapi.NewHandler(httpapi.Options{Verifier: verifier, Idempotency: keys,
				Room: gateRoom{gated: tc.gated, err: tc.gateErr, checks: &checks},
				Bookings: fakeBookings{reserve: func(context.Context) (reservation.Reservation, error) {
					booked = true
					return reservation.RestoreReservation(uuid.New(), 1, 1, "alice", time.Now()), nil
				}}})
			req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Idempotency-Key", "k-1")
			if tc.clientGone {
				ctx, cancel := context.WithCancel(req.Context())
				cancel()
				req = req.WithContext(ctx)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != tc.status || (tc.code != "" && !strings.Contains(rec.Body.String(), `"code":"`+tc.code+`"`)) {
				t.Errorf("answered %d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.code)
			}
			if checks != tc.checks || keys.admits != tc.admits || booked != tc.booked {
				t.Errorf("gate checked %d times, admission recorded %d times, booked %v; want %d, %d, %v",
					checks, keys.admits, booked, tc.checks, tc.admits, tc.booked)
			}
			if tc.forgotten {
				if keys.abandoned != 1 || keys.released != 0 || len(keys.finished) != 0 {
					t.Errorf("key abandoned %d, released %d, finished %d: want it forgotten, nothing left to resume or replay",
						keys.abandoned, keys.released, len(keys.finished))
				}
			} else if keys.abandoned != 0 || keys.released != 0 || len(keys.finished) != 1 {
				t.Errorf("key abandoned %d, released %d, finished %d: want the answer stored", keys.abandoned, keys.released, len(keys.finished))
			}
		})
	}
}
