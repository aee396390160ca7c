package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// holdSeat takes the seat's lock as another API instance would.
func (h *harness) holdSeat(schedule int64, seat int, ttl time.Duration) lock.Lease {
	h.t.Helper()
	backend := redislock.New(h.redis)
	h.t.Cleanup(func() { _ = backend.Close() })
	lease, err := lock.New(backend, lock.Config{}).Acquire(context.Background(),
		reservation.SeatLockKey(schedule, seat), lock.Options{TTL: ttl})
	if err != nil {
		h.t.Fatalf("hold seat: %v", err)
	}
	return lease
}

func (h *harness) reserveWaiting(schedule int64, seat int, user, prefer string) (response, time.Duration) {
	h.t.Helper()
	start := time.Now()
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token(user, ""),
		contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat), prefer: prefer})
	return resp, time.Since(start)
}

func TestPreferWaitGetsTheHoldersOutcome(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	holder := h.holdSeat(schedule, 1, 10*time.Second)
	store := postgres.NewStore(h.pool)
	go func() {
		// The holder books the seat after ~300 ms and releases.
		time.Sleep(300 * time.Millisecond)
		if _, err := store.InsertReservation(context.Background(), reservation.NewReservation{
			ScheduleID: schedule, SeatID: 1, UserID: "holder", Fence: holder.Fence(),
		}); err != nil {
			t.Errorf("holder's booking: %v", err)
		}
		_ = holder.Release(context.Background())
	}()

	resp, elapsed := h.reserveWaiting(schedule, 1, "waiter", "wait=2")
	expectProblem(t, resp, http.StatusConflict, "seat_taken")
	if elapsed > 1500*time.Millisecond {
		t.Errorf("answered after %v; the holder released after ~300ms", elapsed)
	}
	if got := resp.header.Get("Preference-Applied"); got != "wait=2" {
		t.Errorf("Preference-Applied = %q, want wait=2", got)
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
	t.Logf("waiter answered %v after asking", elapsed)
}

func TestPreferWaitBooksWhenTheHolderGivesUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	holder := h.holdSeat(schedule, 1, 10*time.Second)
	time.AfterFunc(200*time.Millisecond, func() { _ = holder.Release(context.Background()) })

	resp, elapsed := h.reserveWaiting(schedule, 1, "waiter", "wait=5")
	if resp.status != http.StatusOK || resp.body["userId"] != "waiter" {
		t.Fatalf("got %d %v, want 200 for the waiter", resp.status, resp.body)
	}
	if elapsed > 2*time.Second {
		t.Errorf("answered after %v; the holder released after ~200ms", elapsed)
	}
}

func TestPreferWaitTimesOutAsSeatLocked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	h.holdSeat(schedule, 1, 10*time.Second)

	resp, elapsed := h.reserveWaiting(schedule, 1, "waiter", "wait=2")
	expectProblem(t, resp, http.StatusConflict, "seat_locked")
	if elapsed < 2*time.Second || elapsed > 4*time.Second {
		t.Errorf("answered after %v, want about 2s", elapsed)
	}
	if ra := resp.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q after a timed-out wait", ra)
	}
}

func TestPreferWaitIsCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	resp, _ := h.reserveWaiting(schedule, 1, "alice", "wait=3600")
	if resp.status != http.StatusOK {
		t.Fatalf("free seat with a long wait: %d %v", resp.status, resp.body)
	}
	if got := resp.header.Get("Preference-Applied"); got != "wait=10" {
		t.Errorf("Preference-Applied = %q, want wait=10 (LOCK_MAX_WAIT)", got)
	}
}
