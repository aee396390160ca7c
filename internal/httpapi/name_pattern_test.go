package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seatlock/seatlock/api"
	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/reservation"
)

// nameCandidates are texts on the edges of "letters, digits, '-' (and
// '_')": numbers that are not decimal digits, marks, format and space
// characters that look like nothing, and letters and digits outside
// ASCII and outside the Basic Multilingual Plane.
var nameCandidates = []string{
	"A", "a-1", "B_2", "-", "_", "A1", "vip", "114",
	"ⅷ", "Ⅻ", "〇", // letter numbers (Nl)
	"²", "½", "①", // other numbers (No)
	"٣", "١٢", "०", "０", "𝟎", // decimal digits (Nd) outside ASCII
	"é", "e\u0301", "\u0301", "क्ष", // a precomposed letter; combining marks (Mn)
	"K", "ǅ", "ʰ", "ー", "中", "ａ", "𝐀", "ㅤ", // Kelvin sign, title case, modifier letters, CJK, fullwidth, mathematical, Hangul filler
	"a b", "a\tb", "a\u00a0b", "a\u2028b", "a\u200db", "\u00ad", "a\x00", "a\x7f", // white space, format and control characters
	"‐", "−", "a.b", "a/b", "😀", // dashes that are not '-', punctuation, symbols
	strings.Repeat("x", 8), strings.Repeat("x", 9), strings.Repeat("𝐀", 8), strings.Repeat("𝐀", 9),
	strings.Repeat("y", 16), strings.Repeat("y", 17), strings.Repeat("z", 32), strings.Repeat("z", 33),
}

// The OpenAPI document's patterns for row labels, section names and
// categories admit exactly what the server accepts, character for
// character: a client that checks a layout against the document is never
// refused for a name it passed.
func TestNamePatternsMatchTheServer(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Pattern   string `json:"pattern"`
					MinLength int    `json:"minLength"`
					MaxLength int    `json:"maxLength"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	// documented reports whether the document admits s for a property.
	documented := func(t *testing.T, schema, property string) func(string) bool {
		p, ok := doc.Components.Schemas[schema].Properties[property]
		if !ok || p.Pattern == "" || p.MaxLength == 0 {
			t.Fatalf("%s.%s has no pattern and maxLength", schema, property)
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			t.Fatalf("%s.%s: %v", schema, property, err)
		}
		// JSON Schema counts a string's length in code points.
		return func(s string) bool {
			n := utf8.RuneCountInString(s)
			return n >= p.MinLength && n <= p.MaxLength && re.MatchString(s)
		}
	}

	verifier, admin := testAuth(t, "admin", auth.RoleAdmin)
	h := httpapi.NewHandler(httpapi.Options{Bookings: fakeBookings{}, Verifier: verifier})
	// refusedFields creates a schedule of one section and one row with the
	// given name, label and category, and returns the fields its 422
	// names (the fake store fails a layout the server accepts).
	refusedFields := func(t *testing.T, name, label, category string) []string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"title": "Dune", "startsAt": "2026-12-24T19:30:00Z", "layout": map[string]any{
			"sections": []any{map[string]any{"name": name, "category": category,
				"rows": []any{map[string]any{"label": label, "seats": 1, "category": category}}}}}})
		req := httptest.NewRequest(http.MethodPost, "/schedules", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnprocessableEntity {
			return nil
		}
		var refused struct {
			Errors []struct {
				Field string `json:"field"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &refused); err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, e := range refused.Errors {
			fields = append(fields, e.Field)
		}
		return fields
	}

	for _, tt := range []struct {
		schema, property, field string
		layout                  func(s string) (name, label, category string)
	}{
		{"LayoutSection", "name", "layout.sections[0].name", func(s string) (string, string, string) { return s, "A", "vip" }},
		{"LayoutRow", "label", "layout.sections[0].rows[0].label", func(s string) (string, string, string) { return "114", s, "vip" }},
		{"LayoutSection", "category", "layout.sections[0].category", func(s string) (string, string, string) { return "114", "A", s }},
		{"LayoutRow", "category", "layout.sections[0].rows[0].category", func(s string) (string, string, string) { return "114", "A", s }},
	} {
		t.Run(tt.schema+"."+tt.property, func(t *testing.T) {
			admits := documented(t, tt.schema, tt.property)
			for _, s := range nameCandidates {
				name, label, category := tt.layout(s)
				accepted := !slices.Contains(refusedFields(t, name, label, category), tt.field)
				if admits(s) != accepted {
					t.Errorf("%q (%+q): the document admits it %v, the server accepts it %v", s, s, admits(s), accepted)
				}
			}
		})
	}
	// A best-available hold names a section and a category by the same
	// rules.
	for _, tt := range []struct {
		property string
		command  func(s string) reservation.BestHoldCommand
	}{
		{"section", func(s string) reservation.BestHoldCommand { return reservation.BestHoldCommand{Section: s} }},
		{"category", func(s string) reservation.BestHoldCommand { return reservation.BestHoldCommand{Category: s} }},
	} {
		t.Run("HoldRequest."+tt.property, func(t *testing.T) {
			admits := documented(t, "HoldRequest", tt.property)
			for _, s := range nameCandidates {
				cmd := tt.command(s)
				cmd.UserID, cmd.Quantity = "alice", 1
				accepted := !slices.Contains(problemFields(cmd.Validate()), tt.property)
				if admits(s) != accepted {
					t.Errorf("%q (%+q): the document admits it %v, the server accepts it %v", s, s, admits(s), accepted)
				}
			}
		})
	}
}

// problemFields are the fields err's validation problems name.
func problemFields(err error) []string {
	var fields []string
	for _, f := range problem.InvalidFields(err) {
		fields = append(fields, f.Field)
	}
	return fields
}
