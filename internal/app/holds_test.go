package app_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
)

func TestHoldLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)

	held := h.hold(0, "alice", schedule, 2, 1)
	if held.status != http.StatusCreated || str(held.body, "status") != "active" || str(held.body, "userId") != "alice" {
		t.Fatalf("hold: %d %s, want 201 active for alice", held.status, held.raw)
	}
	id := str(held.body, "id")
	if got := held.header.Get("Location"); got != "/holds/"+id {
		t.Errorf("Location = %q, want /holds/%s", got, id)
	}
	if seats := held.body["seatIds"].([]any); len(seats) != 2 || seats[0].(float64) != 1 || seats[1].(float64) != 2 {
		t.Errorf("seatIds = %v, want [1 2]", seats)
	}
	expires, err := time.Parse(time.RFC3339Nano, str(held.body, "expiresAt"))
	if left := time.Until(expires); err != nil || left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("expiresAt = %q (%v), want about HOLD_TTL (10m) from now", str(held.body, "expiresAt"), err)
	}
	if got := h.seatStatuses(schedule); got[1] != "held" || got[2] != "held" || got[3] != "available" {
		t.Errorf("seat map = %v, want 1 and 2 held", got)
	}

	// An overlapping hold is refused whole, naming the held seat.
	overlap := h.hold(0, "bob", schedule, 2, 3)
	if got := unavailableSeats(t, overlap); !maps.Equal(got, map[int]string{2: "held"}) {
		t.Errorf("overlapping hold: seats %v, want 2 held", got)
	}
	if ra, _ := strconv.Atoi(overlap.header.Get("Retry-After")); ra < 500 || ra > 600 {
		t.Errorf("Retry-After = %q, want the hold's time left (about 600)", overlap.header.Get("Retry-After"))
	}
	if got := h.seatStatuses(schedule); got[3] != "available" {
		t.Errorf("seat 3 after a refused hold: %s, want available", got[3])
	}
	// A one-click booking of a held seat is refused while the hold lives.
	booking := h.reserve(0, "bob", schedule, 1)
	expectProblem(t, booking, http.StatusConflict, "seat_held")
	if ra, _ := strconv.Atoi(booking.header.Get("Retry-After")); ra < 500 || ra > 600 {
		t.Errorf("seat_held Retry-After = %q, want the hold's time left", booking.header.Get("Retry-After"))
	}

	// Only the owner sees, confirms or releases it.
	expectProblem(t, h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("bob", "")}),
		http.StatusNotFound, "hold_not_found")
	expectProblem(t, h.confirm(0, "bob", id), http.StatusNotFound, "hold_not_found")
	expectProblem(t, h.release(0, "bob", id), http.StatusNotFound, "hold_not_found")
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); got.status != http.StatusOK ||
		str(got.body, "status") != "active" {
		t.Errorf("owner's GET: %d %s, want 200 active", got.status, got.raw)
	}

	confirmed := h.confirm(0, "alice", id)
	if confirmed.status != http.StatusOK || str(confirmed.body, "holdId") != id {
		t.Fatalf("confirm: %d %s", confirmed.status, confirmed.raw)
	}
	reservations := confirmed.body["reservations"].([]any)
	if len(reservations) != 2 {
		t.Fatalf("confirm booked %d seats, want 2", len(reservations))
	}
	for i, r := range reservations {
		res := r.(map[string]any)
		if res["seatId"].(float64) != float64(i+1) || str(res, "userId") != "alice" || str(res, "status") != "active" {
			t.Errorf("reservation %d = %v", i, res)
		}
		got := h.do(request{method: http.MethodGet, path: "/reservations/" + str(res, "id"), token: h.token("alice", "")})
		if got.status != http.StatusOK {
			t.Errorf("GET confirmed reservation: %d %s", got.status, got.raw)
		}
	}
	if again := h.confirm(0, "alice", id); again.status != http.StatusOK || again.raw != confirmed.raw {
		t.Errorf("confirm again: %d %s, want the same 200 body %s", again.status, again.raw, confirmed.raw)
	}
	expectProblem(t, h.release(0, "alice", id), http.StatusConflict, "hold_confirmed")
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); str(got.body, "status") != "confirmed" {
		t.Errorf("status after confirm: %s", got.raw)
	}
	for seat := 1; seat <= 2; seat++ {
		if n := h.activeRows(schedule, seat); n != 1 {
			t.Errorf("seat %d has %d active reservations, want 1", seat, n)
		}
	}

	// A taken seat is named, and Retry-After is left out: waiting will not
	// help.
	taken := h.hold(0, "bob", schedule, 1, 3)
	if got := unavailableSeats(t, taken); !maps.Equal(got, map[int]string{1: "taken"}) {
		t.Errorf("hold over a booked seat: %v, want 1 taken", got)
	}
	if ra := taken.header.Get("Retry-After"); ra != "" {
		t.Errorf("Retry-After = %q with a taken seat, want none", ra)
	}

	// Released, the seat books at once; releasing again is fine.
	second := h.hold(0, "alice", schedule, 5)
	secondID := str(second.body, "id")
	if got := h.release(0, "alice", secondID); got.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", got.status, got.raw)
	}
	if got := h.release(0, "alice", secondID); got.status != http.StatusNoContent {
		t.Errorf("release again: %d %s, want 204", got.status, got.raw)
	}
	if got := h.reserve(0, "bob", schedule, 5); got.status != http.StatusOK {
		t.Errorf("booking a released seat: %d %s, want 200", got.status, got.raw)
	}
	expectProblem(t, h.confirm(0, "alice", secondID), http.StatusConflict, "hold_released")
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + secondID, token: h.token("alice", "")}); str(got.body, "status") != "released" {
		t.Errorf("status after release: %s", got.raw)
	}
	if locked := h.lockedSeats(schedule, 10); len(locked) != 0 {
		t.Errorf("seats left locked: %v", locked)
	}
}

func TestHoldInputErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	tok := h.token("alice", "")
	post := func(body string) response {
		return h.do(request{method: http.MethodPost, path: "/holds", token: tok, contentType: "application/json", body: body})
	}
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"no seats", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[]}`, schedule), 422, "validation_failed"},
		{"eleven seats", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,2,3,4,5,6,7,8,9,10,11]}`, schedule), 422, "validation_failed"},
		{"a seat twice", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,1]}`, schedule), 422, "validation_failed"},
		{"seat zero", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[0]}`, schedule), 422, "validation_failed"},
		{"no schedule", `{"seatIds":[1]}`, 422, "validation_failed"},
		{"seat outside the schedule", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[3,11]}`, schedule), 404, "seat_not_found"},
		{"unknown schedule", `{"scheduleId":999999999,"seatIds":[1]}`, 404, "schedule_not_found"},
		{"seats not a list", fmt.Sprintf(`{"scheduleId":%d,"seatIds":3}`, schedule), 400, "malformed_json"},
		{"unknown field", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[3],"x":1}`, schedule), 400, "malformed_json"},
	} {
		resp := post(tt.body)
		if resp.status != tt.status || resp.code() != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, resp.status, resp.raw, tt.status, tt.code)
		}
	}
	expectProblem(t, h.do(request{method: http.MethodPost, path: "/holds", contentType: "application/json",
		body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1]}`, schedule)}), http.StatusUnauthorized, "unauthorized")
	for _, path := range []string{"/holds/not-a-uuid", "/holds/00000000-0000-0000-0000-000000000000"} {
		expectProblem(t, h.do(request{method: http.MethodGet, path: path, token: tok}), http.StatusNotFound, "hold_not_found")
		expectProblem(t, h.do(request{method: http.MethodPost, path: path + "/confirm", token: tok}), http.StatusNotFound, "hold_not_found")
		expectProblem(t, h.do(request{method: http.MethodDelete, path: path, token: tok}), http.StatusNotFound, "hold_not_found")
	}
	if got := h.seatStatuses(schedule); slices.Contains(slices.Collect(maps.Values(got)), "held") {
		t.Errorf("a refused request left seats held: %v", got)
	}
}

// Expiry is decided when read: with no clean-up run, an expired hold
// cannot be confirmed and its seat books at once.
func TestHoldExpiresWithoutASweeper(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.HoldTTL = 2 * time.Second }, app.WithoutJobs())
	schedule := h.createSchedule(3)
	id := h.mustHold(0, "alice", schedule, 1)
	time.Sleep(2500 * time.Millisecond)

	var claims int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM seat_claims WHERE hold_id = $1`, id).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if claims != 1 {
		t.Fatalf("the expired hold's claim is gone (%d rows): a sweeper ran, the test proves nothing", claims)
	}
	expectProblem(t, h.confirm(0, "alice", id), http.StatusConflict, "hold_expired")
	if got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: h.token("alice", "")}); str(got.body, "status") != "expired" {
		t.Errorf("status: %s, want expired", got.raw)
	}
	if got := h.seatStatuses(schedule); got[1] != "available" {
		t.Errorf("seat map shows the expired hold's seat as %s, want available", got[1])
	}
	if got := h.reserve(0, "bob", schedule, 1); got.status != http.StatusOK {
		t.Errorf("booking the expired hold's seat: %d %s, want 200", got.status, got.raw)
	}
	if got := h.release(0, "alice", id); got.status != http.StatusNoContent {
		t.Errorf("releasing an expired hold: %d %s, want 204", got.status, got.raw)
	}
}

// Forty 3-seat holds overlap on 15 seats through two instances, and every
// winner confirms: no seat is booked twice, every hold is all or nothing,
// and no seat is left held or locked.
func TestOverlappingHoldsRace(t *testing.T) {
	t.Parallel()
	h := newRaceHarness(t, 2)
	const seatCount, holds = 15, 40
	schedule := h.createSchedule(seatCount)
	seatsOf := func(i int) []int { return []int{i%seatCount + 1, (i+1)%seatCount + 1, (i+4)%seatCount + 1} }

	var (
		wg        sync.WaitGroup
		start     = make(chan struct{})
		held      = make([]response, holds)
		confirmed = make([]response, holds)
	)
	for i := range holds {
		wg.Go(func() {
			<-start
			user := fmt.Sprintf("user-%d", i)
			held[i] = h.hold(i%2, user, schedule, seatsOf(i)...)
			if held[i].status == http.StatusCreated {
				confirmed[i] = h.confirm((i+1)%2, user, str(held[i].body, "id"))
			}
		})
	}
	close(start)
	wg.Wait()

	owner := map[int]string{}
	winners := 0
	for i := range holds {
		user := fmt.Sprintf("user-%d", i)
		switch held[i].status {
		case http.StatusCreated:
			winners++
			if confirmed[i].status != http.StatusOK {
				t.Errorf("hold %d: confirm answered %d %s", i, confirmed[i].status, confirmed[i].raw)
				continue
			}
			got := confirmed[i].body["reservations"].([]any)
			if len(got) != 3 {
				t.Errorf("hold %d confirmed %d seats, want all 3", i, len(got))
			}
			for _, r := range got {
				seat := int(r.(map[string]any)["seatId"].(float64))
				if prev, dup := owner[seat]; dup {
					t.Errorf("seat %d confirmed for %s and %s", seat, prev, user)
				}
				owner[seat] = user
			}
		case http.StatusConflict:
			for seat, reason := range unavailableSeats(t, held[i]) {
				if !slices.Contains(seatsOf(i), seat) || !slices.Contains([]string{"locked", "held", "taken"}, reason) {
					t.Errorf("hold %d refused with seat %d %q", i, seat, reason)
				}
			}
		default:
			t.Errorf("hold %d answered %d %s; only 201 and 409 are expected", i, held[i].status, held[i].raw)
		}
	}
	if winners == 0 {
		t.Fatal("no hold won")
	}
	statuses := h.seatStatuses(schedule)
	for seat := 1; seat <= seatCount; seat++ {
		want, rows := "available", 0
		if _, ok := owner[seat]; ok {
			want, rows = "reserved", 1
		}
		if statuses[seat] != want || h.activeRows(schedule, seat) != rows {
			t.Errorf("seat %d: map says %s with %d rows, want %s with %d", seat, statuses[seat], h.activeRows(schedule, seat), want, rows)
		}
	}
	var stored int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM holds WHERE schedule_id = $1`, schedule).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != winners {
		t.Errorf("%d holds stored for %d winners: a refused hold left a row", stored, winners)
	}
	if locked := h.lockedSeats(schedule, seatCount); len(locked) != 0 {
		t.Errorf("seats left locked: %v", locked)
	}
	t.Logf("%d of %d holds won, %d seats booked", winners, holds, len(owner))
}
