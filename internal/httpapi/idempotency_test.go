package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

// fakeKeys is an idempotency.Store that always grants the claim and
// records what became of it.
type fakeKeys struct {
	mu        sync.Mutex
	finished  []idempotency.Response
	abandoned int
	released  int
	admits    int
	// resumed makes Begin hand out resumed claims, admitted ones when
	// admitted is set too.
	resumed, admitted bool
	// admitErr is what Admit answers.
	admitErr error
	// beganCancelled records whether Begin's context was done, and
	// beganUntil its deadline.
	beganCancelled bool
	beganUntil     time.Time
}

func (f *fakeKeys) Begin(ctx context.Context, k idempotency.Key, _ []byte, _ time.Duration) (idempotency.Claim, *idempotency.Response, error) {
	f.beganCancelled = ctx.Err() != nil
	f.beganUntil, _ = ctx.Deadline()
	return idempotency.Claim{Key: k, ID: uuid.New(), Resumed: f.resumed, Admitted: f.resumed && f.admitted}, nil, nil
}

func (f *fakeKeys) Admit(context.Context, idempotency.Claim) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admits++
	return f.admitErr
}

func (f *fakeKeys) Release(context.Context, idempotency.Claim) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released++
	return nil
}

func (f *fakeKeys) Finish(_ context.Context, _ idempotency.Claim, resp idempotency.Response) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = append(f.finished, resp)
	return nil
}

func (f *fakeKeys) Abandon(context.Context, idempotency.Claim) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abandoned++
	return nil
}

func (f *fakeKeys) Purge(context.Context) (int64, error) { return 0, nil }

func serveWithKey(t *testing.T, keys *fakeKeys, reserve func(ctx context.Context) (reservation.Reservation, error)) *httptest.ResponseRecorder {
	t.Helper()
	verifier, token := testAuth(t, "alice", "")
	h := httpapi.NewHandler(httpapi.Options{Bookings: fakeBookings{reserve: reserve}, Verifier: verifier, Idempotency: keys})
	req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", "k-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Answers a retry should see again are stored; a 5xx (and a panic) is not:
// the key is released, keeping its claim, so that the retry resumes it.
func TestIdempotencyStoresFinalAnswersOnly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		reserve  func(ctx context.Context) (reservation.Reservation, error)
		status   int
		finished bool
	}{
		{"booked", func(context.Context) (reservation.Reservation, error) {
			return reservation.RestoreReservation(uuid.New(), 1, 1, "alice", time.Now()), nil
		}, http.StatusOK, true},
		{"taken", func(context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, reservation.ErrSeatTaken
		}, http.StatusConflict, true},
		{"locked", func(context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, &reservation.UnavailableSeat{Reason: reservation.ReasonLocked, RetryAfter: 2 * time.Second}
		}, http.StatusConflict, true},
		{"unavailable", func(context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, reservation.ErrUnavailable
		}, http.StatusServiceUnavailable, false},
		{"unexpected", func(context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, errors.New("boom")
		}, http.StatusInternalServerError, false},
		{"panic", func(context.Context) (reservation.Reservation, error) { panic("boom") }, http.StatusInternalServerError, false},
	} {
		keys := &fakeKeys{}
		rec := serveWithKey(t, keys, tt.reserve)
		if rec.Code != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.status)
		}
		if tt.finished {
			if len(keys.finished) != 1 || keys.abandoned != 0 || keys.released != 0 || keys.finished[0].Status != tt.status ||
				string(keys.finished[0].Body) != rec.Body.String() {
				t.Errorf("%s: finished %+v, abandoned %d; want the answer stored", tt.name, keys.finished, keys.abandoned)
			}
			if got, want := keys.finished[0].Header.Get("Retry-After"), rec.Header().Get("Retry-After"); got != want {
				t.Errorf("%s: stored Retry-After %q, sent %q", tt.name, got, want)
			}
		} else if len(keys.finished) != 0 || keys.abandoned != 0 || keys.released != 1 {
			t.Errorf("%s: finished %d, abandoned %d, released %d; want the key released", tt.name, len(keys.finished), keys.abandoned, keys.released)
		}
	}
}

// The request runs with its claim in its context; an answer the use case
// reports recovered (Booked.Recovered) for a resumed claim goes out, and
// is stored, marked Idempotent-Replayed: true; a fresh one is not marked.
func TestIdempotencyClaimReachesTheUseCase(t *testing.T) {
	t.Parallel()
	for _, resumed := range []bool{false, true} {
		keys := &fakeKeys{resumed: resumed}
		var got idempotency.Claim
		rec := serveWithKey(t, keys, func(ctx context.Context) (reservation.Reservation, error) {
			got, _ = idempotency.ClaimFrom(ctx)
			return reservation.RestoreReservation(uuid.New(), 1, 1, "alice", time.Now()), nil
		})
		if rec.Code != http.StatusOK || got.ID == uuid.Nil || got.Key.Key != "k-1" || got.UserID != "alice" || got.Resumed != resumed {
			t.Errorf("resumed=%v: %d, claim in the use case's context %+v", resumed, rec.Code, got)
		}
		want := ""
		if resumed {
			want = "true"
		}
		if replayed := rec.Header().Get("Idempotent-Replayed"); replayed != want {
			t.Errorf("resumed=%v: Idempotent-Replayed %q, want %q", resumed, replayed, want)
		}
		if len(keys.finished) != 1 || keys.finished[0].Status != http.StatusOK {
			t.Errorf("resumed=%v: finished %+v, want the answer stored", resumed, keys.finished)
		}
	}
}

// A key is claimed even when the client has gone already: a claim
// statement cut off by the client's leaving may still commit after the
// request gave up on it, leaving the key in use, unsettled, for its whole
// running time. The claim keeps the request's deadline.
func TestIdempotencyClaimOutlivesTheClient(t *testing.T) {
	t.Parallel()
	keys := &fakeKeys{}
	verifier, token := testAuth(t, "alice", "")
	h := httpapi.NewHandler(httpapi.Options{Verifier: verifier, Idempotency: keys, RequestTimeout: 3 * time.Second,
		Bookings: fakeBookings{reserve: func(ctx context.Context) (reservation.Reservation, error) {
			return reservation.Reservation{}, ctx.Err()
		}}})
	req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", "k-1")
	ctx, cancel := context.WithCancel(req.Context())
	cancel()
	start := time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	if keys.beganCancelled {
		t.Errorf("the key was claimed under the gone client's context")
	}
	if keys.beganUntil.IsZero() || keys.beganUntil.After(start.Add(3*time.Second+time.Second)) {
		t.Errorf("the claim's deadline is %v, want the request's, about 3 s after %v", keys.beganUntil, start)
	}
	if rec.Code != 499 || keys.released != 1 {
		t.Errorf("answered %d, key released %d times; want 499 and the key released for the retry", rec.Code, keys.released)
	}
}
