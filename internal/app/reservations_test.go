package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/reservation"
)

func TestReserveSeat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(3)
	alice := h.token("alice", "")

	resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": schedule, "seatId": 2})
	if resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	if resp.body["userId"] != "alice" || resp.body["seatId"] != float64(2) || resp.body["scheduleId"] != float64(schedule) {
		t.Errorf("reservation body = %s", resp.raw)
	}
	id, _ := resp.body["id"].(string)
	if _, err := time.Parse(time.RFC3339Nano, resp.body["createdAt"].(string)); err != nil || id == "" {
		t.Errorf("id %q / createdAt %v not as documented", id, resp.body["createdAt"])
	}
	if n := h.reservationRows(schedule, 2); n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
	// The lock was given up after the booking, sealed (FAST_PATH): the
	// key holds the seal with its owner's note, never a token, and
	// expires.
	key := reservation.SeatLockKey(schedule, 2)
	if v, want := h.redis.Get(context.Background(), key).Val(), redislock.SealedWith(reservation.OwnerNote("alice")); v != want {
		t.Errorf("seat key holds %q after a finished booking, want the seal %q", v, want)
	}
	if ttl := h.redis.PTTL(context.Background(), key).Val(); ttl <= 0 || ttl > reservation.DefaultSealTTL {
		t.Errorf("seal TTL = %v, want in (0, %v]", ttl, reservation.DefaultSealTTL)
	}

	t.Run("owner reads it", func(t *testing.T) {
		got := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: alice})
		if got.status != http.StatusOK || got.body["id"] != id || got.body["userId"] != "alice" {
			t.Fatalf("GET own reservation: %d %s", got.status, got.raw)
		}
	})
	t.Run("another user gets 404", func(t *testing.T) {
		got := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: h.token("mallory", "")})
		expectProblem(t, got, http.StatusNotFound, "reservation_not_found")
	})
	t.Run("seat map shows it reserved", func(t *testing.T) {
		got := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
		want := fmt.Sprintf(`{"scheduleId":%d,"form":"full","seats":[`+
			`{"seatId":1,"status":"available","label":"A1","row":"A","number":1,"category":"standard"},`+
			`{"seatId":2,"status":"reserved","label":"A2","row":"A","number":2,"category":"standard"},`+
			`{"seatId":3,"status":"available","label":"A3","row":"A","number":3,"category":"standard"}]}`+"\n", schedule)
		if got.status != http.StatusOK || got.raw != want {
			t.Fatalf("seat map: %d %s, want %s", got.status, got.raw, want)
		}
	})
	t.Run("second booking of the seat is seat_taken", func(t *testing.T) {
		got := h.postJSON("/reservations", h.token("bob", ""), map[string]any{"scheduleId": schedule, "seatId": 2})
		expectProblem(t, got, http.StatusConflict, "seat_taken")
		if ra := got.header.Get("Retry-After"); ra != "" {
			t.Errorf("seat_taken carries Retry-After %q; it must not", ra)
		}
		if n := h.reservationRows(schedule, 2); n != 1 {
			t.Errorf("rows = %d after a refused booking, want 1", n)
		}
	})
}

func TestReserveLockedSeat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	key := reservation.SeatLockKey(schedule, 1)
	// Another request holds the seat for 2.5 s more.
	if err := h.redis.Set(context.Background(), key, "another-owner", 2500*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}

	resp := h.postJSON("/reservations", h.token("alice", ""), map[string]any{"scheduleId": schedule, "seatId": 1})
	expectProblem(t, resp, http.StatusConflict, "seat_locked")
	if ra := resp.header.Get("Retry-After"); ra != "3" {
		t.Errorf("Retry-After = %q, want 3 (2.5 s rounded up)", ra)
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("rows = %d while locked, want 0", n)
	}
	if v := h.redis.Get(context.Background(), key).Val(); v != "another-owner" {
		t.Errorf("the holder's lock was touched: value %q", v)
	}

	// A lock without expiry (set by hand) still yields Retry-After >= 1.
	h.redis.Set(context.Background(), key, "operator", 0)
	resp = h.postJSON("/reservations", h.token("alice", ""), map[string]any{"scheduleId": schedule, "seatId": 1})
	expectProblem(t, resp, http.StatusConflict, "seat_locked")
	if ra := resp.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After = %q, want 1", ra)
	}

	// Once the holder is gone the seat can be booked.
	h.redis.Del(context.Background(), key)
	resp = h.postJSON("/reservations", h.token("alice", ""), map[string]any{"scheduleId": schedule, "seatId": 1})
	if resp.status != http.StatusOK {
		t.Fatalf("after the lock was freed: %d %s", resp.status, resp.raw)
	}
}

func TestReserveNotFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(5)
	alice := h.token("alice", "")
	tests := []struct {
		name     string
		schedule int64
		seat     int
		code     string
	}{
		{"unknown schedule", schedule + 1000, 1, "schedule_not_found"},
		{"seat past the last", schedule, 6, "seat_not_found"},
		{"seat far out", schedule, 1 << 40, "seat_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": tt.schedule, "seatId": tt.seat})
			expectProblem(t, resp, http.StatusNotFound, tt.code)
		})
	}
	// No lock key was created for seats that do not exist.
	if keys := h.redis.Keys(context.Background(), fmt.Sprintf("lock:{schedule:%d}:*", schedule)).Val(); len(keys) != 0 {
		t.Errorf("lock keys left behind: %v", keys)
	}
}

func TestGetReservationNotFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	alice := h.token("alice", "")
	for _, id := range []string{"00000000-0000-0000-0000-000000000000", "not-a-uuid", "1"} {
		resp := h.do(request{method: http.MethodGet, path: "/reservations/" + id, token: alice})
		expectProblem(t, resp, http.StatusNotFound, "reservation_not_found")
	}
}

func TestSeatMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(2000)
	resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	if resp.status != http.StatusOK {
		t.Fatalf("seat map: %d %s", resp.status, resp.raw)
	}
	seats := resp.body["seats"].([]any)
	if len(seats) != 2000 {
		t.Fatalf("seats = %d, want 2000", len(seats))
	}
	last := seats[1999].(map[string]any)
	if last["seatId"] != float64(2000) || last["status"] != "available" {
		t.Errorf("last seat = %v", last)
	}
	for _, path := range []string{fmt.Sprintf("/schedules/%d/seats", schedule+1000), "/schedules/abc/seats", "/schedules/-1/seats", "/schedules/99999999999999999999/seats"} {
		expectProblem(t, h.do(request{method: http.MethodGet, path: path}), http.StatusNotFound, "schedule_not_found")
	}
}
