package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/auth"
)

// TestSeatLabelsAreUniqueInASchedule: a layout that would give two seats
// one label is refused 422 validation_failed, naming the label of the
// later row whose seats repeat an earlier row's, and no schedule is
// stored. A seat's label is its section's name, its row's label and its
// number, joined by '-' where the parts would otherwise run together, so
// distinct names can still meet: row "1" and row "1-" both label seats
// "1-1", "1-2"; section "1-A" row "B" and section "1" row "A-B" both
// label "1-A-B1". Labels are compared ignoring case, as row labels and
// section names are.
func TestSeatLabelsAreUniqueInASchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("admin", auth.RoleAdmin)
	body := func(layout map[string]any) map[string]any {
		return map[string]any{"title": "Hamlet", "startsAt": "2026-12-24T19:30:00+09:00", "layout": layout}
	}
	rows := func(r ...map[string]any) map[string]any { return map[string]any{"rows": r} }
	sections := func(s ...map[string]any) map[string]any { return map[string]any{"sections": s} }
	for _, tt := range []struct {
		name   string
		layout map[string]any
		field  string
	}{
		{"rows 1 and 1-", rows(row("A", 2), row("1", 3), row("1-", 2)), "layout.rows[2].label"},
		{"rows 1- and 1", rows(row("1-", 1), row("1", 5)), "layout.rows[1].label"},
		{"rows B-2 and b-2-", rows(row("B-2", 1), row("b-2-", 1)), "layout.rows[1].label"},
		{"in a section, rows 1 and 1-", sections(section("North", "", row("1", 2), row("1-", 2))), "layout.sections[0].rows[1].label"},
		{"section 1-A row B, section 1 row A-B", sections(section("1-A", "", row("B", 4)), section("1", "", row("A-B", 4))), "layout.sections[1].rows[0].label"},
		{"section 1 row A-B, section 1-a row b", sections(section("1", "", row("A", 1), row("A-B", 1)), section("1-a", "", row("b", 9))), "layout.sections[1].rows[0].label"},
		{"section 7-1 row A, section 7 row 1-A", sections(section("7-1", "", row("A", 2)), section("2", "", row("A", 2)), section("7", "", row("1-A", 2))), "layout.sections[2].rows[0].label"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := h.countRows("schedules")
			resp := h.postJSON("/schedules", admin, body(tt.layout))
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			errs, _ := resp.body["errors"].([]any)
			if len(errs) != 1 {
				t.Fatalf("errors = %s, want one, for %s", resp.raw, tt.field)
			}
			e := errs[0].(map[string]any)
			if e["field"] != tt.field || !strings.Contains(e["detail"].(string), "seat label") {
				t.Errorf("error = %v, want one for %s that names the seat label", e, tt.field)
			}
			if after := h.countRows("schedules"); after != before {
				t.Errorf("%d schedules stored after the refusal, want %d: none stored", after, before)
			}
		})
	}

	// Names that come close without meeting are fine: "1-1" is not
	// "1-A1", and row 1 of section 1-A ("1-A-1-1") is not row A of
	// section 1 ("1-A1").
	h.createLayout(row("1", 2), row("1-A", 2), row("A1", 2), row("A", 11))
	h.createSections(section("1-A", "", row("1", 2)), section("1", "", row("A", 2)))
}
