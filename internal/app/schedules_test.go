package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/auth"
)

func TestCreateSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	resp := h.postJSON("/schedules", h.token("root", auth.RoleAdmin), map[string]any{
		"title": "  Dune  ", "startsAt": "2026-12-24T19:30:00+09:00", "seatCount": 120,
	})
	if resp.status != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.status, resp.raw)
	}
	if resp.body["title"] != "Dune" || resp.body["startsAt"] != "2026-12-24T10:30:00Z" || resp.body["seatCount"] != float64(120) {
		t.Errorf("body = %s", resp.raw)
	}
	if id, _ := resp.body["id"].(float64); id < 1 {
		t.Errorf("id = %v, want a positive number", resp.body["id"])
	}
}

func TestCreateScheduleNeedsAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	body := map[string]any{"title": "Dune", "startsAt": "2026-12-24T19:30:00Z", "seatCount": 10}
	expectProblem(t, h.postJSON("/schedules", h.token("alice", ""), body), http.StatusForbidden, "forbidden")
	expectProblem(t, h.postJSON("/schedules", h.token("alice", "user"), body), http.StatusForbidden, "forbidden")
	expectProblem(t, h.postJSON("/schedules", "", body), http.StatusUnauthorized, "unauthorized")
	var n int
	if err := h.pool.QueryRow(t.Context(), `SELECT count(*) FROM schedules`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schedules stored = %d (%v), want 0", n, err)
	}
}

func TestCreateScheduleValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("root", auth.RoleAdmin)
	tests := []struct {
		name   string
		body   string
		fields []string // expected errors[].field, in order
	}{
		{"all missing", `{}`, []string{"title", "startsAt", "seatCount"}},
		{"blank title", `{"title":"   ","startsAt":"2026-12-24T19:30:00Z","seatCount":10}`, []string{"title"}},
		{"long title", `{"title":"` + strings.Repeat("가", 201) + `","startsAt":"2026-12-24T19:30:00Z","seatCount":10}`, []string{"title"}},
		{"not a date", `{"title":"Dune","startsAt":"tomorrow","seatCount":10}`, []string{"startsAt"}},
		{"date without zone", `{"title":"Dune","startsAt":"2026-12-24T19:30:00","seatCount":10}`, []string{"startsAt"}},
		{"zero seats", `{"title":"Dune","startsAt":"2026-12-24T19:30:00Z","seatCount":0}`, []string{"seatCount"}},
		{"too many seats", `{"title":"Dune","startsAt":"2026-12-24T19:30:00Z","seatCount":100001}`, []string{"seatCount"}},
		{"negative seats", `{"title":"Dune","startsAt":"2026-12-24T19:30:00Z","seatCount":-5}`, []string{"seatCount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: "/schedules", token: admin, contentType: "application/json", body: tt.body})
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			errs, _ := resp.body["errors"].([]any)
			if len(errs) != len(tt.fields) {
				t.Fatalf("errors = %v, want fields %v", errs, tt.fields)
			}
			for i, want := range tt.fields {
				e := errs[i].(map[string]any)
				if e["field"] != want || e["detail"] == "" {
					t.Errorf("errors[%d] = %v, want field %q with a detail", i, e, want)
				}
			}
		})
	}
	// A 200-character title in a multi-byte script is fine: limits count characters.
	resp := h.do(request{method: http.MethodPost, path: "/schedules", token: admin, contentType: "application/json",
		body: `{"title":"` + strings.Repeat("가", 200) + `","startsAt":"2026-12-24T19:30:00Z","seatCount":2000}`})
	if resp.status != http.StatusCreated {
		t.Errorf("200-character title: %d %s", resp.status, resp.raw)
	}
}

func TestReserveValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	alice := h.token("alice", "")
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"missing both", `{}`, []string{"scheduleId", "seatId"}},
		{"zero ids", `{"scheduleId":0,"seatId":0}`, []string{"scheduleId", "seatId"}},
		{"negative seat", `{"scheduleId":1,"seatId":-1}`, []string{"seatId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: "/reservations", token: alice, contentType: "application/json", body: tt.body})
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			errs, _ := resp.body["errors"].([]any)
			if len(errs) != len(tt.fields) {
				t.Fatalf("errors = %v, want fields %v", errs, tt.fields)
			}
			for i, want := range tt.fields {
				if f := errs[i].(map[string]any)["field"]; f != want {
					t.Errorf("errors[%d].field = %v, want %q", i, f, want)
				}
			}
		})
	}
}
