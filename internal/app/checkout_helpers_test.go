package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// hold asks for a hold of seats through instance base.
func (h *harness) hold(base int, user string, schedule int64, seats ...int) response {
	h.t.Helper()
	ids := make([]string, len(seats))
	for i, s := range seats {
		ids[i] = fmt.Sprint(s)
	}
	return h.do(request{method: http.MethodPost, path: "/holds", token: h.token(user, ""), base: base,
		contentType: "application/json",
		body:        fmt.Sprintf(`{"scheduleId":%d,"seatIds":[%s]}`, schedule, strings.Join(ids, ","))})
}

// mustHold holds seats for user through instance base and returns the
// hold's id; an answer other than 201 fails the test.
func (h *harness) mustHold(base int, user string, schedule int64, seats ...int) string {
	h.t.Helper()
	held := h.hold(base, user, schedule, seats...)
	if held.status != http.StatusCreated {
		h.t.Fatalf("hold: %d %s", held.status, held.raw)
	}
	return str(held.body, "id")
}

func (h *harness) confirm(base int, user, holdID string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPost, path: "/holds/" + holdID + "/confirm", token: h.token(user, ""), base: base})
}

func (h *harness) release(base int, user, holdID string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodDelete, path: "/holds/" + holdID, token: h.token(user, ""), base: base})
}

func (h *harness) reserve(base int, user string, schedule int64, seat int) response {
	h.t.Helper()
	return h.do(request{method: http.MethodPost, path: "/reservations", token: h.token(user, ""), base: base,
		contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat)})
}

func (h *harness) cancel(base int, user, reservationID string) response {
	h.t.Helper()
	return h.do(request{method: http.MethodDelete, path: "/reservations/" + reservationID, token: h.token(user, ""), base: base})
}

// seatStatuses reads the seat map through instance 0: seat id -> status.
func (h *harness) seatStatuses(schedule int64) map[int]string {
	h.t.Helper()
	h.settle(schedule)
	resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	if resp.status != http.StatusOK {
		h.t.Fatalf("seat map: %d %s", resp.status, resp.raw)
	}
	out := map[int]string{}
	for _, s := range resp.body["seats"].([]any) {
		seat := s.(map[string]any)
		out[int(seat["seatId"].(float64))] = seat["status"].(string)
	}
	return out
}

// settle waits, up to 5 s, until instance 0's image of schedule has
// every change committed so far: the relay has emptied the outbox of the
// schedule's changes and the image's version has reached the stream's
// count of them. The seat map shows a change made through another
// instance once its seat event arrives.
func (h *harness) settle(schedule int64) {
	h.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var pending int
		if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM seat_changes WHERE schedule_id = $1`, schedule).Scan(&pending); err != nil {
			h.t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var added int64
	if info, err := h.redis.XInfoStream(ctx, seatfeed.StreamKey(schedule)).Result(); err == nil {
		added = info.EntriesAdded
	}
	for time.Now().Before(deadline) {
		resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats?form=compact", schedule)})
		if v, _ := resp.body["version"].(float64); resp.status != http.StatusOK || int64(v) >= added {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedSeats lists the seats of schedule whose lock key holds an owner's
// token (a seal, which marks a booked seat, is not a lock).
func (h *harness) lockedSeats(schedule int64, seatCount int) []int {
	h.t.Helper()
	var locked []int
	for seat := 1; seat <= seatCount; seat++ {
		v, err := h.redis.Get(context.Background(), reservation.SeatLockKey(schedule, seat)).Result()
		if err == nil && !redislock.IsSeal(v) {
			locked = append(locked, seat)
		}
	}
	return locked
}

// activeRows counts a seat's active reservations.
func (h *harness) activeRows(schedule int64, seat int) int {
	h.t.Helper()
	var n int
	err := h.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM reservations WHERE schedule_id = $1 AND seat_id = $2 AND cancelled_at IS NULL`,
		schedule, seat).Scan(&n)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// storedBooking is an active reservation's row: its id and its user.
type storedBooking struct{ id, user string }

// activeBookings reads schedule's active reservations: seat -> its rows
// (two are a seat booked twice).
func (h *harness) activeBookings(schedule int64) map[int][]storedBooking {
	h.t.Helper()
	rows, err := h.pool.Query(context.Background(), `SELECT seat_id, id::text, user_id FROM reservations
		WHERE schedule_id = $1 AND cancelled_at IS NULL`, schedule)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[int][]storedBooking{}
	for rows.Next() {
		var seat int
		var b storedBooking
		if err := rows.Scan(&seat, &b.id, &b.user); err != nil {
			h.t.Fatal(err)
		}
		out[seat] = append(out[seat], b)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// unavailableSeats reads a seats_unavailable problem: seat id -> reason.
func unavailableSeats(t *testing.T, resp response) map[int]string {
	t.Helper()
	expectProblem(t, resp, http.StatusConflict, "seats_unavailable")
	out := map[int]string{}
	seats, _ := resp.body["seats"].([]any)
	for _, s := range seats {
		seat := s.(map[string]any)
		out[int(seat["seatId"].(float64))] = seat["reason"].(string)
	}
	if len(out) == 0 {
		t.Fatalf("seats_unavailable without seats: %s", resp.raw)
	}
	return out
}

func str(body map[string]any, key string) string {
	s, _ := body[key].(string)
	return s
}
