package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// holdBest asks instance base for the best available seats.
func (h *harness) holdBest(base int, user string, body map[string]any) response {
	h.t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		h.t.Fatal(err)
	}
	return h.do(request{method: http.MethodPost, path: "/holds", token: h.token(user, ""), base: base,
		contentType: "application/json", body: buf.String()})
}

func seatIDs(t *testing.T, resp response) []int {
	t.Helper()
	raw, _ := resp.body["seatIds"].([]any)
	ids := make([]int, len(raw))
	for i, v := range raw {
		ids[i] = int(v.(float64))
	}
	return ids
}

// consecutive reports whether ids follow each other with no gap.
func consecutive(ids []int) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			return false
		}
	}
	return true
}

func TestHoldBestAvailable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	// Rows A (vip), B, C of 10: two-thirds back is between B and C.
	schedule := h.createLayout(row("A", 10, "vip"), row("B", 10), row("C", 10))

	got := h.holdBest(0, "alice", map[string]any{"scheduleId": schedule, "quantity": 3})
	if got.status != http.StatusCreated {
		t.Fatalf("best 3: %d %s", got.status, got.raw)
	}
	ids := seatIDs(t, got)
	if len(ids) != 3 || !consecutive(ids) || (ids[0]-1)/10 != (ids[2]-1)/10 || ids[0] <= 10 {
		t.Errorf("best 3 = %v, want 3 consecutive seats of row B or C", ids)
	}
	labels, _ := got.body["seatLabels"].([]any)
	for i, id := range ids {
		row := "ABC"[(id-1)/10 : (id-1)/10+1]
		if i >= len(labels) || labels[i] != fmt.Sprintf("%s%d", row, (id-1)%10+1) {
			t.Errorf("seatLabels = %v, want the labels of %v", labels, ids)
		}
	}
	if a := got.header.Get("Hold-Attempts"); a != "1" {
		t.Errorf("Hold-Attempts = %q, want 1 with nobody else asking", a)
	}
	statuses := h.seatStatuses(schedule)
	for _, id := range ids {
		if statuses[id] != "held" {
			t.Errorf("seat %d is %s after the hold, want held", id, statuses[id])
		}
	}

	vip := h.holdBest(0, "bob", map[string]any{"scheduleId": schedule, "quantity": 4, "category": "vip"})
	if vip.status != http.StatusCreated {
		t.Fatalf("best 4 vip: %d %s", vip.status, vip.raw)
	}
	if ids := seatIDs(t, vip); len(ids) != 4 || !consecutive(ids) || ids[3] > 10 {
		t.Errorf("best 4 vip = %v, want 4 consecutive seats of row A", ids)
	}

	scattered := h.holdBest(0, "carol", map[string]any{"scheduleId": schedule, "quantity": 10, "adjacent": false})
	if scattered.status != http.StatusCreated || len(seatIDs(t, scattered)) != 10 {
		t.Fatalf("best 10 anywhere: %d %s", scattered.status, scattered.raw)
	}

	// 13 seats are left: no 11 together, in any row.
	none := h.holdBest(0, "dave", map[string]any{"scheduleId": schedule, "quantity": 10})
	expectProblem(t, none, http.StatusConflict, "not_enough_seats")
	if n, ok := none.body["available"].(float64); !ok || n != 13 {
		t.Errorf("available = %v, want 13 free seats", none.body["available"])
	}
	vipLeft := h.holdBest(0, "dave", map[string]any{"scheduleId": schedule, "quantity": 7, "category": "vip", "adjacent": false})
	expectProblem(t, vipLeft, http.StatusConflict, "not_enough_seats")
	if n, _ := vipLeft.body["available"].(float64); n > 6 {
		t.Errorf("vip available = %v, want at most the 6 vip seats left", vipLeft.body["available"])
	}
}

func TestHoldBestAvailableValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createLayout(row("A", 10, "vip"), row("B", 10))
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"seatIds and quantity", map[string]any{"scheduleId": schedule, "seatIds": []int{1}, "quantity": 1}, "seatIds"},
		{"neither", map[string]any{"scheduleId": schedule}, "seatIds"},
		{"quantity 0", map[string]any{"scheduleId": schedule, "quantity": 0}, "quantity"},
		{"quantity 11", map[string]any{"scheduleId": schedule, "quantity": 11}, "quantity"},
		{"category alone", map[string]any{"scheduleId": schedule, "category": "vip"}, "quantity"},
		{"unknown category", map[string]any{"scheduleId": schedule, "quantity": 2, "category": "balcony"}, "category"},
		{"bad category", map[string]any{"scheduleId": schedule, "quantity": 2, "category": "no such"}, "category"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.holdBest(0, "alice", tt.body)
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			if !strings.Contains(resp.raw, `"field":"`+tt.field+`"`) {
				t.Errorf("errors = %s, want one for %s", resp.raw, tt.field)
			}
		})
	}
	if got := h.seatStatuses(schedule); slices.Contains(mapsValues(got), "held") {
		t.Errorf("seat map after refused requests = %v, want nothing held", got)
	}
	missing := h.holdBest(0, "alice", map[string]any{"scheduleId": schedule + 1000000, "quantity": 2})
	expectProblem(t, missing, http.StatusNotFound, "schedule_not_found")
}

func mapsValues(m map[int]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestHoldBestAvailableIsIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createLayout(row("A", 20))
	send := func() response {
		return h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""), contentType: "application/json",
			header: map[string]string{"Idempotency-Key": "best-2"},
			body:   fmt.Sprintf(`{"scheduleId":%d,"quantity":2}`, schedule)})
	}
	first, again := send(), send()
	if first.status != http.StatusCreated || again.status != http.StatusCreated || str(first.body, "id") != str(again.body, "id") {
		t.Fatalf("same key twice: %d %s / %d %s, want the same hold", first.status, first.raw, again.status, again.raw)
	}
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay lacks Idempotent-Replayed: true")
	}
	held := 0
	for _, s := range h.seatStatuses(schedule) {
		if s == "held" {
			held++
		}
	}
	if held != 2 {
		t.Errorf("%d seats held, want 2: the replay held nothing more", held)
	}
}

// raceOutcome is one request of the race, as seen by its client.
type raceOutcome struct {
	kind   string // best, explicit, booking
	status int
	code   string
	seats  []int
}

// TestBestAvailableRacesHoldsAndBookings: 500 best-available requests
// (quantities 1 to 6) race 100 explicit-seat holds and 100 one-click
// bookings for one 600-seat layout (12 rows of 50) across two instances.
// No seat is held or booked twice, every best-available hold is
// consecutive in one row, no seat is left locked, and every answer is
// 201/200, 409 or 429.
func TestBestAvailableRacesHoldsAndBookings(t *testing.T) {
	t.Parallel()
	h := newRaceHarness(t, 2)
	rows := make([]map[string]any, 12)
	for i := range rows {
		rows[i] = row(string(rune('A'+i)), 50)
	}
	schedule := h.createLayout(rows...)
	const perRow, seatCount = 50, 600

	type job struct {
		kind string
		body string
	}
	var jobs []job
	for i := range 500 {
		jobs = append(jobs, job{"best", fmt.Sprintf(`{"scheduleId":%d,"quantity":%d}`, schedule, 1+i%6)})
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 100 {
		first := 1 + rng.IntN(seatCount-2)
		jobs = append(jobs, job{"explicit", fmt.Sprintf(`{"scheduleId":%d,"seatIds":[%d,%d]}`, schedule, first, first+1)})
	}
	for range 100 {
		jobs = append(jobs, job{"booking", fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, 1+rng.IntN(seatCount))})
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	tokens := make([]string, len(jobs))
	for i := range jobs {
		tokens[i] = h.token(fmt.Sprintf("racer-%d", i), "")
	}
	outcomes := make([]raceOutcome, len(jobs))
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	gate := make(chan struct{}, 64)
	for i, j := range jobs {
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-gate }()
			path := "/holds"
			if j.kind == "booking" {
				path = "/reservations"
			}
			req, err := http.NewRequest(http.MethodPost, h.bases[i%2]+path, strings.NewReader(j.body))
			if err != nil {
				errs <- err
				return
			}
			req.Header.Set("Authorization", "Bearer "+tokens[i])
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer func() { _ = resp.Body.Close() }()
			raw, _ := io.ReadAll(resp.Body)
			var body struct {
				Code    string `json:"code"`
				SeatIDs []int  `json:"seatIds"`
				SeatID  int    `json:"seatId"`
			}
			_ = json.Unmarshal(raw, &body)
			o := raceOutcome{kind: j.kind, status: resp.StatusCode, code: body.Code, seats: body.SeatIDs}
			if j.kind == "booking" && resp.StatusCode == http.StatusOK {
				o.seats = []int{body.SeatID}
			}
			outcomes[i] = o
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("request failed: %v", err)
	}

	owner := map[int]int{}
	counts := map[string]int{}
	for i, o := range outcomes {
		counts[fmt.Sprintf("%s %d %s", o.kind, o.status, o.code)]++
		switch o.status {
		case http.StatusCreated, http.StatusOK:
			for _, s := range o.seats {
				if other, taken := owner[s]; taken {
					t.Errorf("seat %d granted twice: requests %d and %d", s, other, i)
				}
				owner[s] = i
			}
			if o.kind == "best" && (!consecutive(o.seats) || (o.seats[0]-1)/perRow != (o.seats[len(o.seats)-1]-1)/perRow) {
				t.Errorf("best-available hold %v is not consecutive in one row", o.seats)
			}
		case http.StatusConflict, http.StatusTooManyRequests:
		default:
			t.Errorf("request %d (%s) answered %d %s: only 201/200, 409 and 429 are expected", i, o.kind, o.status, o.code)
		}
	}
	t.Logf("outcomes: %v; %d of %d seats granted", counts, len(owner), seatCount)
	if counts["best 201 "] == 0 {
		t.Errorf("no best-available hold succeeded: %v", counts)
	}
	if locked := h.lockedSeats(schedule, seatCount); len(locked) > 0 {
		t.Errorf("seats left locked: %v", locked)
	}
	// PostgreSQL agrees: what the clients were granted is what is held
	// or reserved, and nothing else.
	statuses := h.seatStatuses(schedule)
	for seat := 1; seat <= seatCount; seat++ {
		_, granted := owner[seat]
		if busy := statuses[seat] != "available"; busy != granted {
			t.Errorf("seat %d is %s in the seat map, granted to a client: %v", seat, statuses[seat], granted)
		}
		if n := h.activeRows(schedule, seat); n > 1 {
			t.Errorf("seat %d has %d active reservations", seat, n)
		}
	}
}
