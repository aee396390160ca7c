package reservation_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/cases"

	"github.com/seatlock/seatlock/internal/reservation"
)

func TestLayoutNumbersSeatsRowByRow(t *testing.T) {
	l := mustLayout(t,
		reservation.Row{Label: "A", Seats: 3, Category: "vip"},
		reservation.Row{Label: "B", Seats: 4},
		reservation.Row{Label: "10", Seats: 2})
	if l.SeatCount() != 9 {
		t.Fatalf("SeatCount = %d, want 9", l.SeatCount())
	}
	for _, tt := range []struct {
		seat                 int
		row, label, category string
		number, rowIndex     int
	}{
		{1, "A", "A1", "vip", 1, 0},
		{3, "A", "A3", "vip", 3, 0},
		{4, "B", "B1", reservation.DefaultCategory, 1, 1},
		{7, "B", "B4", reservation.DefaultCategory, 4, 1},
		{8, "10", "10-1", reservation.DefaultCategory, 1, 2},
		{9, "10", "10-2", reservation.DefaultCategory, 2, 2},
	} {
		p, ok := l.Place(tt.seat)
		if !ok || p.RowLabel != tt.row || p.Label != tt.label || p.Category != tt.category || p.Number != tt.number || p.Row != tt.rowIndex || p.SeatID != tt.seat {
			t.Errorf("Place(%d) = %+v, %v; want row %s, label %s, number %d, category %s", tt.seat, p, ok, tt.row, tt.label, tt.number, tt.category)
		}
	}
	for _, seat := range []int{0, 10, -1} {
		if _, ok := l.Place(seat); ok {
			t.Errorf("Place(%d) found a seat outside the layout", seat)
		}
	}
	if !l.HasCategory("vip") || l.HasCategory("balcony") {
		t.Errorf("HasCategory: vip %v, balcony %v; want true, false", l.HasCategory("vip"), l.HasCategory("balcony"))
	}
}

func TestNewLayoutRefusesBadRows(t *testing.T) {
	many := make([]reservation.Row, reservation.MaxRows+1)
	for i := range many {
		many[i] = reservation.Row{Label: reservation.SeatLabel("R", i), Seats: 1}
	}
	for _, tt := range []struct {
		name  string
		rows  []reservation.Row
		field string
	}{
		{"no rows", nil, "layout.rows"},
		{"too many rows", many, "layout.rows"},
		{"blank label", []reservation.Row{{Label: " ", Seats: 2}}, "layout.rows[0].label"},
		{"long label", []reservation.Row{{Label: "ABCDEFGHI", Seats: 2}}, "layout.rows[0].label"},
		{"label with a space", []reservation.Row{{Label: "A B", Seats: 2}}, "layout.rows[0].label"},
		{"repeated label", []reservation.Row{{Label: "A", Seats: 2}, {Label: "a", Seats: 2}}, "layout.rows[1].label"},
		{"Kelvin sign after k", []reservation.Row{{Label: "k", Seats: 2}, {Label: "\u212a", Seats: 2}}, "layout.rows[1].label"},
		{"long s after S", []reservation.Row{{Label: "S1", Seats: 2}, {Label: "\u017f1", Seats: 2}}, "layout.rows[1].label"},
		{"Greek final sigma after sigma", []reservation.Row{{Label: "\u03c3", Seats: 2}, {Label: "\u03c2", Seats: 2}}, "layout.rows[1].label"},
		{"empty label", []reservation.Row{{Label: "", Seats: 2}}, "layout.rows[0].label"},
		{"label after a space", []reservation.Row{{Label: " A", Seats: 2}}, "layout.rows[0].label"},
		{"label before a newline", []reservation.Row{{Label: "A\n", Seats: 2}}, "layout.rows[0].label"},
		{"label before a tab", []reservation.Row{{Label: "A\t", Seats: 2}}, "layout.rows[0].label"},
		{"label after an ideographic space", []reservation.Row{{Label: "\u3000B", Seats: 2}}, "layout.rows[0].label"},
		{"category after a space", []reservation.Row{{Label: "A", Seats: 2, Category: " vip"}}, "layout.rows[0].category"},
		{"no seats", []reservation.Row{{Label: "A", Seats: 0}}, "layout.rows[0].seats"},
		{"too many seats", []reservation.Row{{Label: "A", Seats: reservation.MaxSeatCount - 500}, {Label: "B", Seats: 501}}, "layout.rows"},
		{"row of too many seats", []reservation.Row{{Label: "A", Seats: reservation.MaxSeatCount + 1}}, "layout.rows[0].seats"},
		{"bad category", []reservation.Row{{Label: "A", Seats: 2, Category: "v i p"}}, "layout.rows[0].category"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reservation.NewLayout(tt.rows)
			var invalid *reservation.InvalidError
			if !errors.As(err, &invalid) || invalid.Field != tt.field || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("NewLayout error = %v, want an *InvalidError for %s", err, tt.field)
			}
		})
	}
}

func TestSingleRowLayoutIsRowA(t *testing.T) {
	s, err := reservation.NewSchedule("Show", time.Now(), 5)
	if err != nil {
		t.Fatal(err)
	}
	rows := s.Layout().Rows()
	if len(rows) != 1 || rows[0] != (reservation.Row{Label: "A", Seats: 5, Category: reservation.DefaultCategory}) {
		t.Errorf("layout of a seat count = %+v, want one row A of 5 standard seats", rows)
	}
}

func TestRowLabelLettersRowsAsASpreadsheetItsColumns(t *testing.T) {
	for i, want := range map[int]string{0: reservation.SingleRowLabel, 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := reservation.RowLabel(i); got != want {
			t.Errorf("RowLabel(%d) = %q, want %q", i, got, want)
		}
	}
}

// Every seat of a schedule has a label of its own, compared ignoring case
// as row labels and section names are: a layout is refused exactly when
// two of its seats' labels meet (or two sections' names do), whatever
// the names. Small random layouts of names made of "1", "-" and letters
// that fold together ("A" and "a"; "k" and the Kelvin sign; "ß" and "ss")
// are checked against a list of every seat's label.
func TestLayoutsWhoseSeatLabelsMeetAreRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	name := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString([]string{"1", "A", "a", "-", "k", "\u212a", "\u00df", "s"}[rng.IntN(8)])
		}
		return b.String()
	}
	refused := 0
	const rounds = 20000
	for round := range rounds {
		sectioned := rng.IntN(2) == 0
		sections := make([]reservation.Section, 1+rng.IntN(3))
		if !sectioned {
			sections = sections[:1]
		}
		for i := range sections {
			if sectioned {
				sections[i].Name = name()
			}
			for range 1 + rng.IntN(3) {
				sections[i].Rows = append(sections[i].Rows, reservation.Row{Label: name(), Seats: 1 + rng.IntN(12)})
			}
		}
		labels, names := map[string]bool{}, map[string]bool{}
		meet := false
		for _, s := range sections {
			meet = meet || names[cases.Fold().String(s.Name)]
			names[cases.Fold().String(s.Name)] = true
			for _, r := range s.Rows {
				for n := 1; n <= r.Seats; n++ {
					label := cases.Fold().String(reservation.SectionSeatLabel(s.Name, r.Label, n))
					meet = meet || labels[label]
					labels[label] = true
				}
			}
		}
		var err error
		if sectioned {
			_, err = reservation.NewSectionedLayout(sections)
		} else {
			_, err = reservation.NewLayout(sections[0].Rows)
		}
		if (err != nil) != meet {
			t.Fatalf("round %d: %+v: error %v, want one only if two labels or names meet (%v)", round, sections, err, meet)
		}
		if err != nil {
			refused++
		}
	}
	if refused < rounds/20 {
		t.Errorf("only %d of %d layouts refused: too few meet to test the rule", refused, rounds)
	}
}

func TestNewLayoutNamesTheRowWhoseSeatLabelsMeetAnEarlierRows(t *testing.T) {
	for _, tt := range []struct {
		name     string
		sections []reservation.Section
		field    string
	}{
		{"rows 1 and 1-", []reservation.Section{{Rows: []reservation.Row{{Label: "1", Seats: 2}, {Label: "1-", Seats: 2}}}}, "layout.rows[1].label"},
		{"section 1-A row B, section 1 row A-B",
			[]reservation.Section{{Name: "1-A", Rows: []reservation.Row{{Label: "B", Seats: 2}}}, {Name: "1", Rows: []reservation.Row{{Label: "A-B", Seats: 2}}}},
			"layout.sections[1].rows[0].label"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.sections[0].Name == "" {
				_, err = reservation.NewLayout(tt.sections[0].Rows)
			} else {
				_, err = reservation.NewSectionedLayout(tt.sections)
			}
			var invalid *reservation.InvalidError
			if !errors.As(err, &invalid) || invalid.Field != tt.field || !strings.Contains(invalid.Detail, "seat label") {
				t.Fatalf("error = %v, want an *InvalidError for %s about the seat labels", err, tt.field)
			}
		})
	}
}
