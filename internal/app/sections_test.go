package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// createSections makes a schedule of sections through the API; sections
// are {name, category?, rows} objects.
func (h *harness) createSections(sections ...map[string]any) int64 {
	h.t.Helper()
	return h.createVenue(map[string]any{"sections": sections})
}

func section(name string, category string, rows ...map[string]any) map[string]any {
	s := map[string]any{"name": name, "rows": rows}
	if category != "" {
		s["category"] = category
	}
	return s
}

func TestScheduleWithSections(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSections(
		section("114", "lower", row("A", 3), row("B", 2, "vip")),
		section("North", "", row("A", 4)))

	got := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d", schedule)})
	if got.status != http.StatusOK || got.body["seatCount"].(float64) != 9 {
		t.Fatalf("GET schedule: %d %s, want 9 seats", got.status, got.raw)
	}
	layout := got.body["layout"].(map[string]any)
	if _, rows := layout["rows"]; rows {
		t.Errorf("a layout of sections also lists rows: %s", got.raw)
	}
	var described []string
	for _, s := range layout["sections"].([]any) {
		s := s.(map[string]any)
		for _, r := range s["rows"].([]any) {
			r := r.(map[string]any)
			described = append(described, fmt.Sprintf("%s/%s %s %v %s %v", s["name"], s["category"], r["label"], r["seats"], r["category"], r["firstSeatId"]))
		}
	}
	if want := "114/lower A 3 lower 1, 114/lower B 2 vip 4, North/standard A 4 standard 6"; strings.Join(described, ", ") != want {
		t.Errorf("sections = %s, want %s", strings.Join(described, ", "), want)
	}

	seats := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	list := seats.body["seats"].([]any)
	for _, tt := range []struct {
		seat                          int
		label, section, row, category string
	}{{1, "114-A1", "114", "A", "lower"}, {5, "114-B2", "114", "B", "vip"}, {9, "North-A4", "North", "A", "standard"}} {
		s := list[tt.seat-1].(map[string]any)
		if s["label"] != tt.label || s["section"] != tt.section || s["row"] != tt.row || s["category"] != tt.category {
			t.Errorf("seat %d = %v, want %s in section %s, row %s, %s", tt.seat, s, tt.label, tt.section, tt.row, tt.category)
		}
	}

	stream := h.stream(0, schedule, "")
	defer stream.close()
	stream.next(5 * time.Second) // snapshot
	if r := h.reserve(0, "alice", schedule, 6); r.status != http.StatusOK {
		t.Fatalf("reserve North-A1: %d %s", r.status, r.raw)
	}
	ev := stream.seatEvent(6, "reserved", 5*time.Second)
	if want := `{"seatId":6,"status":"reserved","label":"North-A1","section":"North","row":"A","number":1,"category":"standard"}`; ev.data != want {
		t.Errorf("seat event = %s, want %s", ev.data, want)
	}
}

func TestSectionsValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("admin", auth.RoleAdmin)
	good := section("1", "", row("A", 5))
	body := func(layout any) map[string]any {
		return map[string]any{"title": "Final", "startsAt": "2026-12-24T19:30:00+09:00", "layout": layout}
	}
	sections := func(s ...map[string]any) map[string]any {
		return map[string]any{"sections": append([]map[string]any{}, s...)}
	}
	many := make([]map[string]any, 501)
	for i := range many {
		many[i] = section(fmt.Sprint(i), "", row("A", 1))
	}
	manyRows := make([]map[string]any, 101)
	for i := range manyRows {
		manyRows[i] = row(fmt.Sprintf("R%d", i), 1)
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"rows and sections", body(map[string]any{"rows": []any{row("A", 1)}, "sections": []any{good}}), "layout.rows"},
		{"neither rows nor sections", body(map[string]any{}), "layout.rows"},
		{"no sections", body(sections()), "layout.sections"},
		{"501 sections", body(sections(many...)), "layout.sections"},
		{"missing name", body(sections(good, map[string]any{"rows": []any{row("A", 1)}})), "layout.sections[1].name"},
		{"empty name", body(sections(section("", "", row("A", 1)))), "layout.sections[0].name"},
		{"name with a space", body(sections(section("Lower 1", "", row("A", 1)))), "layout.sections[0].name"},
		{"long name", body(sections(section(strings.Repeat("x", 17), "", row("A", 1)))), "layout.sections[0].name"},
		{"repeated name", body(sections(section("North", "", row("A", 1)), section("NORTH", "", row("A", 1)))), "layout.sections[1].name"},
		{"empty category", body(sections(map[string]any{"name": "1", "category": "", "rows": []any{row("A", 1)}})), "layout.sections[0].category"},
		{"bad category", body(sections(section("1", "v.i.p", row("A", 1)))), "layout.sections[0].category"},
		{"no rows", body(sections(map[string]any{"name": "1", "rows": []any{}})), "layout.sections[0].rows"},
		{"missing rows", body(sections(map[string]any{"name": "1"})), "layout.sections[0].rows"},
		{"101 rows", body(sections(section("1", "", manyRows...))), "layout.sections[0].rows"},
		{"repeated row label", body(sections(section("1", "", row("A", 1), row("a", 1)))), "layout.sections[0].rows[1].label"},
		{"no seats in the fourth", body(sections(good, section("2", "", row("A", 1)), section("3", "", row("A", 1)), section("4", "", row("A", 0)))), "layout.sections[3].rows[0].seats"},
		{"over 100,000 seats", body(sections(section("1", "", row("A", 99_999)), section("2", "", row("A", 2)))), "layout.sections"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.postJSON("/schedules", admin, tt.body)
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			fields := map[string]bool{}
			for _, e := range resp.body["errors"].([]any) {
				fields[e.(map[string]any)["field"].(string)] = true
			}
			if !fields[tt.field] {
				t.Errorf("errors = %s, want one for %s", resp.raw, tt.field)
			}
		})
	}
}

func TestHoldBestInASection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSections(
		section("1", "", row("A", 4), row("B", 4)),
		section("2", "vip", row("A", 6)),
		section("3", "", row("A", 6)))

	// Left to the service, the best section comes first.
	first := h.holdBest(0, "alice", map[string]any{"scheduleId": schedule, "quantity": 2})
	if ids := seatIDs(t, first); first.status != http.StatusCreated || len(ids) != 2 || ids[1] > 8 || !consecutive(ids) {
		t.Fatalf("best 2: %d %s, want two adjacent seats of section 1", first.status, first.raw)
	}
	// Named, the section's own best seats, labelled with its name.
	in3 := h.holdBest(0, "bob", map[string]any{"scheduleId": schedule, "quantity": 3, "section": "3"})
	ids := seatIDs(t, in3)
	if in3.status != http.StatusCreated || len(ids) != 3 || ids[0] < 15 || !consecutive(ids) {
		t.Fatalf("best 3 in section 3: %d %s, want three adjacent seats of 15..20", in3.status, in3.raw)
	}
	if labels := fmt.Sprint(in3.body["seatLabels"]); !strings.HasPrefix(labels, "[3-A") {
		t.Errorf("seat labels %s, want section 3's", labels)
	}
	// A section and a category that do not meet: no seats.
	none := h.holdBest(0, "carol", map[string]any{"scheduleId": schedule, "quantity": 1, "section": "3", "category": "vip"})
	expectProblem(t, none, http.StatusConflict, "not_enough_seats")
	if none.body["available"].(float64) != 0 {
		t.Errorf("available = %v, want 0", none.body["available"])
	}
	tooMany := h.holdBest(0, "carol", map[string]any{"scheduleId": schedule, "quantity": 4, "section": "3"})
	expectProblem(t, tooMany, http.StatusConflict, "not_enough_seats")
	if tooMany.body["available"].(float64) != 3 {
		t.Errorf("available in section 3 = %v, want 3", tooMany.body["available"])
	}

	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"unknown section", map[string]any{"scheduleId": schedule, "quantity": 1, "section": "9"}},
		{"another case", map[string]any{"scheduleId": schedule, "quantity": 1, "section": "North"}},
		{"empty section", map[string]any{"scheduleId": schedule, "quantity": 1, "section": ""}},
		{"not a name", map[string]any{"scheduleId": schedule, "quantity": 1, "section": "a b"}},
		{"section without quantity", map[string]any{"scheduleId": schedule, "section": "1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.holdBest(0, "dave", tt.body)
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			if !strings.Contains(resp.raw, `"field":"section"`) && !strings.Contains(resp.raw, `"field":"quantity"`) {
				t.Errorf("errors = %s, want one for section (or quantity)", resp.raw)
			}
		})
	}
	plain := h.createLayout(row("A", 4))
	resp := h.holdBest(0, "erin", map[string]any{"scheduleId": plain, "quantity": 1, "section": "1"})
	expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
}

// Best-available requests for named sections and for any, through two
// instances at once: no seat twice, every hold adjacent in one row, and in
// the section it asked for.
func TestBestAvailableRacesAcrossSections(t *testing.T) {
	t.Parallel()
	h := newRaceHarness(t, 2)
	const sections, rows, perRow = 4, 5, 30
	var layout []map[string]any
	for s := range sections {
		var rs []map[string]any
		for r := range rows {
			rs = append(rs, row(string(rune('A'+r)), perRow))
		}
		layout = append(layout, section(fmt.Sprint(s+1), "", rs...))
	}
	schedule := h.createSections(layout...)
	sectionOf := func(seat int) int { return (seat-1)/(rows*perRow) + 1 }
	rowOf := func(seat int) int { return (seat - 1) / perRow }

	const requests = 160
	type outcome struct {
		status  int
		code    string
		section string
		seats   []int
	}
	outcomes := make([]outcome, requests)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 48)
	for i := range requests {
		body := map[string]any{"scheduleId": schedule, "quantity": 1 + i%6}
		if i%3 != 0 {
			body["section"] = fmt.Sprint(1 + i%sections)
		}
		tokens := h.token(fmt.Sprintf("racer-%d", i), "")
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-gate }()
			raw, _ := json.Marshal(body)
			req, err := http.NewRequest(http.MethodPost, h.bases[i%2]+"/holds", bytes.NewReader(raw))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+tokens)
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = resp.Body.Close() }()
			var got struct {
				Code    string `json:"code"`
				SeatIDs []int  `json:"seatIds"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&got)
			name, _ := body["section"].(string)
			outcomes[i] = outcome{status: resp.StatusCode, code: got.Code, section: name, seats: got.SeatIDs}
		}()
	}
	wg.Wait()
	owner := map[int]int{}
	counts := map[string]int{}
	for i, o := range outcomes {
		counts[fmt.Sprintf("%d %s", o.status, o.code)]++
		switch o.status {
		case http.StatusCreated:
			for _, s := range o.seats {
				if other, taken := owner[s]; taken {
					t.Errorf("seat %d held twice: requests %d and %d", s, other, i)
				}
				owner[s] = i
			}
			if !consecutive(o.seats) || rowOf(o.seats[0]) != rowOf(o.seats[len(o.seats)-1]) {
				t.Errorf("hold %v is not adjacent in one row", o.seats)
			}
			if o.section != "" && fmt.Sprint(sectionOf(o.seats[0])) != o.section {
				t.Errorf("hold %v asked for section %s", o.seats, o.section)
			}
		case http.StatusConflict, http.StatusTooManyRequests:
		default:
			t.Errorf("request %d answered %d %s: only 201, 409 and 429 are expected", i, o.status, o.code)
		}
	}
	t.Logf("outcomes: %v; %d of %d seats held", counts, len(owner), sections*rows*perRow)
	if counts["201 "] < requests/2 {
		t.Errorf("only %d of %d holds succeeded: %v", counts["201 "], requests, counts)
	}
	statuses := h.seatStatuses(schedule)
	for seat := 1; seat <= sections*rows*perRow; seat++ {
		if _, held := owner[seat]; held != (statuses[seat] != "available") {
			t.Errorf("seat %d is %s in the seat map, held by a client: %v", seat, statuses[seat], held)
		}
	}
}
