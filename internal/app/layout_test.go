package app_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// createLayout makes a schedule of rows through the API; rows are
// {label, seats, category?} objects.
func (h *harness) createLayout(rows ...map[string]any) int64 {
	h.t.Helper()
	return h.createVenue(map[string]any{"rows": rows})
}

// createVenue makes a schedule of layout (rows or sections) through the
// API.
func (h *harness) createVenue(layout map[string]any) int64 {
	h.t.Helper()
	resp := h.postJSON("/schedules", h.token("admin", auth.RoleAdmin), map[string]any{
		"title": "Hamlet", "startsAt": "2026-12-24T19:30:00+09:00", "layout": layout,
	})
	if resp.status != http.StatusCreated {
		h.t.Fatalf("create schedule with a layout: %d %s", resp.status, resp.raw)
	}
	return int64(resp.body["id"].(float64))
}

func row(label string, seats int, category ...string) map[string]any {
	r := map[string]any{"label": label, "seats": seats}
	if len(category) > 0 {
		r["category"] = category[0]
	}
	return r
}

func TestScheduleWithALayout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createLayout(row("A", 4, "vip"), row("B", 6), row("10", 2, "balcony"))

	got := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d", schedule)})
	if got.status != http.StatusOK || got.body["seatCount"].(float64) != 12 {
		t.Fatalf("GET schedule: %d %s, want 12 seats", got.status, got.raw)
	}
	rows := got.body["layout"].(map[string]any)["rows"].([]any)
	want := []string{"A 4 vip 1", "B 6 standard 5", "10 2 balcony 11"}
	for i, r := range rows {
		r := r.(map[string]any)
		if s := fmt.Sprintf("%s %v %s %v", r["label"], r["seats"], r["category"], r["firstSeatId"]); i >= len(want) || s != want[i] {
			t.Errorf("layout row %d = %s, want %s", i, s, want[i])
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("layout = %d rows, want %d", len(rows), len(want))
	}

	seats := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	list := seats.body["seats"].([]any)
	for _, tt := range []struct {
		seat                 int
		label, row, category string
		number               float64
	}{{1, "A1", "A", "vip", 1}, {5, "B1", "B", "standard", 1}, {10, "B6", "B", "standard", 6}, {12, "10-2", "10", "balcony", 2}} {
		s := list[tt.seat-1].(map[string]any)
		if s["seatId"].(float64) != float64(tt.seat) || s["label"] != tt.label || s["row"] != tt.row || s["number"] != tt.number || s["category"] != tt.category {
			t.Errorf("seat %d = %v, want %s, row %s, number %v, %s", tt.seat, s, tt.label, tt.row, tt.number, tt.category)
		}
	}

	// The live seat map's snapshot and events say the same.
	stream := h.stream(0, schedule, "")
	defer stream.close()
	stream.next(5 * time.Second) // snapshot
	if r := h.reserve(0, "alice", schedule, 5); r.status != http.StatusOK {
		t.Fatalf("reserve B1: %d %s", r.status, r.raw)
	}
	ev := stream.seatEvent(5, "reserved", 5*time.Second)
	if want := `{"seatId":5,"status":"reserved","label":"B1","row":"B","number":1,"category":"standard"}`; ev.data != want {
		t.Errorf("seat event = %s, want %s", ev.data, want)
	}
}

func TestScheduleLayoutValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("admin", auth.RoleAdmin)
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = row(fmt.Sprintf("R%d", i), 1)
	}
	base := func(extra map[string]any) map[string]any {
		body := map[string]any{"title": "Hamlet", "startsAt": "2026-12-24T19:30:00+09:00"}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	layout := func(rows ...map[string]any) map[string]any {
		return map[string]any{"rows": append([]map[string]any{}, rows...)}
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"seatCount and layout", base(map[string]any{"seatCount": 5, "layout": layout(row("A", 5))}), "seatCount"},
		{"neither", base(nil), "seatCount"},
		{"no rows", base(map[string]any{"layout": layout()}), "layout.rows"},
		{"101 rows", base(map[string]any{"layout": layout(many...)}), "layout.rows"},
		{"repeated label", base(map[string]any{"layout": layout(row("A", 5), row("a", 5))}), "layout.rows[1].label"},
		{"missing label", base(map[string]any{"layout": layout(map[string]any{"seats": 5})}), "layout.rows[0].label"},
		{"label with a space", base(map[string]any{"layout": layout(row("A B", 5))}), "layout.rows[0].label"},
		{"no seats", base(map[string]any{"layout": layout(row("A", 0))}), "layout.rows[0].seats"},
		{"over 100,000 seats", base(map[string]any{"layout": layout(row("A", 60_000), row("B", 40_001))}), "layout.rows"},
		{"a row of 100,001 seats", base(map[string]any{"layout": layout(row("A", 100_001))}), "layout.rows[0].seats"},
		{"bad category", base(map[string]any{"layout": layout(row("A", 5, "v.i.p"))}), "layout.rows[0].category"},
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
