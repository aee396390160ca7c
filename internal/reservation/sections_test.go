package reservation_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

func mustSections(t testing.TB, sections ...reservation.Section) reservation.Layout {
	t.Helper()
	l, err := reservation.NewSectionedLayout(sections)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSectionedLayoutNumbersSeatsSectionBySection(t *testing.T) {
	l := mustSections(t,
		reservation.Section{Name: "114", Category: "lower", Rows: []reservation.Row{{Label: "A", Seats: 2}, {Label: "B", Seats: 3, Category: "vip"}}},
		reservation.Section{Name: "Upper-2", Rows: []reservation.Row{{Label: "A", Seats: 4}, {Label: "10", Seats: 1}}},
	)
	if l.SeatCount() != 10 || !l.Sectioned() || len(l.Sections()) != 2 || len(l.Rows()) != 4 {
		t.Fatalf("SeatCount %d, Sectioned %v, %d sections, %d rows; want 10, true, 2, 4", l.SeatCount(), l.Sectioned(), len(l.Sections()), len(l.Rows()))
	}
	for _, tt := range []struct {
		seat                          int
		section, row, label, category string
		number, rowIndex              int
	}{
		{1, "114", "A", "114-A1", "lower", 1, 0},
		{3, "114", "B", "114-B1", "vip", 1, 1},
		{5, "114", "B", "114-B3", "vip", 3, 1},
		{6, "Upper-2", "A", "Upper-2-A1", reservation.DefaultCategory, 1, 2},
		{10, "Upper-2", "10", "Upper-2-10-1", reservation.DefaultCategory, 1, 3},
	} {
		p, ok := l.Place(tt.seat)
		if !ok || p.Section != tt.section || p.RowLabel != tt.row || p.Label != tt.label || p.Category != tt.category || p.Number != tt.number || p.Row != tt.rowIndex {
			t.Errorf("Place(%d) = %+v, %v; want section %s, row %s, label %s, number %d, category %s", tt.seat, p, ok, tt.section, tt.row, tt.label, tt.number, tt.category)
		}
	}
	if i, ok := l.SectionIndex("Upper-2"); !ok || i != 1 {
		t.Errorf("SectionIndex(Upper-2) = %d, %v; want 1, true", i, ok)
	}
	if _, ok := l.SectionIndex("upper-2"); ok {
		t.Error("SectionIndex matched a name in another case")
	}
	if lo, hi := l.SectionRows(1); lo != 2 || hi != 4 {
		t.Errorf("SectionRows(1) = %d..%d, want 2..4", lo, hi)
	}
	plain := mustLayout(t, reservation.Row{Label: "A", Seats: 2})
	if plain.Sectioned() {
		t.Error("a layout of rows says it is sectioned")
	}
	if p, _ := plain.Place(1); p.Section != "" || p.Label != "A1" {
		t.Errorf("Place(1) of a layout of rows = %+v, want no section and label A1", p)
	}
}

func TestNewSectionedLayoutRefusesBadSections(t *testing.T) {
	rows := []reservation.Row{{Label: "A", Seats: 2}}
	many := make([]reservation.Section, reservation.MaxSections+1)
	for i := range many {
		many[i] = reservation.Section{Name: fmt.Sprint(i), Rows: rows}
	}
	manyRows := make([]reservation.Row, reservation.MaxRows+1)
	for i := range manyRows {
		manyRows[i] = reservation.Row{Label: reservation.RowLabel(i), Seats: 1}
	}
	for _, tt := range []struct {
		name     string
		sections []reservation.Section
		field    string
	}{
		{"no sections", nil, "layout.sections"},
		{"too many sections", many, "layout.sections"},
		{"empty name", []reservation.Section{{Name: "", Rows: rows}}, "layout.sections[0].name"},
		{"name with a space", []reservation.Section{{Name: "1", Rows: rows}, {Name: "Lower 1", Rows: rows}}, "layout.sections[1].name"},
		{"name after a space", []reservation.Section{{Name: " 1", Rows: rows}}, "layout.sections[0].name"},
		{"long name", []reservation.Section{{Name: strings.Repeat("a", reservation.MaxSectionNameRunes+1), Rows: rows}}, "layout.sections[0].name"},
		{"name with a dot", []reservation.Section{{Name: "1.1", Rows: rows}}, "layout.sections[0].name"},
		{"repeated name", []reservation.Section{{Name: "North", Rows: rows}, {Name: "north", Rows: rows}}, "layout.sections[1].name"},
		{"bad category", []reservation.Section{{Name: "1", Category: "v i p", Rows: rows}}, "layout.sections[0].category"},
		{"no rows", []reservation.Section{{Name: "1"}}, "layout.sections[0].rows"},
		{"too many rows", []reservation.Section{{Name: "1", Rows: manyRows}}, "layout.sections[0].rows"},
		{"repeated row label", []reservation.Section{{Name: "1", Rows: []reservation.Row{{Label: "A", Seats: 1}, {Label: "a", Seats: 1}}}}, "layout.sections[0].rows[1].label"},
		{"no seats", []reservation.Section{{Name: "1", Rows: rows}, {Name: "2", Rows: rows}, {Name: "3", Rows: rows}, {Name: "4", Rows: []reservation.Row{{Label: "A", Seats: 0}}}}, "layout.sections[3].rows[0].seats"},
		{"bad row category", []reservation.Section{{Name: "1", Rows: []reservation.Row{{Label: "A", Seats: 1, Category: "a b"}}}}, "layout.sections[0].rows[0].category"},
		{"too many seats", []reservation.Section{{Name: "1", Rows: []reservation.Row{{Label: "A", Seats: reservation.MaxSeatCount}}}, {Name: "2", Rows: rows}}, "layout.sections"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reservation.NewSectionedLayout(tt.sections)
			var invalid *reservation.InvalidError
			if !errors.As(err, &invalid) || invalid.Field != tt.field {
				t.Fatalf("NewSectionedLayout error = %v, want an *InvalidError for %s", err, tt.field)
			}
		})
	}
}

// stadium is the venue of the targets: 100 sections (101..200) × 20 rows
// × 40 seats.
func stadium(tb testing.TB) reservation.Layout {
	sections := make([]reservation.Section, 100)
	for s := range sections {
		rows := make([]reservation.Row, 20)
		for r := range rows {
			rows[r] = reservation.Row{Label: reservation.RowLabel(r), Seats: 40}
		}
		sections[s] = reservation.Section{Name: fmt.Sprint(101 + s), Rows: rows}
	}
	return mustSections(tb, sections...)
}

func TestSectionsRepeatRowLabelsAndTakeTheMostSeats(t *testing.T) {
	l := stadium(t)
	if l.SeatCount() != 80_000 {
		t.Fatalf("SeatCount = %d, want 80000", l.SeatCount())
	}
	if p, _ := l.Place(80_000); p.Label != "200-T40" {
		t.Errorf("the last seat is %q, want 200-T40", p.Label)
	}
}

func TestBestBlocksFillTheBestSectionFirst(t *testing.T) {
	row := []reservation.Row{{Label: "A", Seats: 4}, {Label: "B", Seats: 4}}
	l := mustSections(t,
		reservation.Section{Name: "1", Rows: row},
		reservation.Section{Name: "2", Category: "vip", Rows: row},
		reservation.Section{Name: "3", Rows: row})
	taken := map[int]bool{}
	free := func(seat int) bool { return !taken[seat] }
	first := reservation.BestBlocks(l, free, 2, "", true, 8)
	if len(first) == 0 || first[0].Seats[0] > 8 {
		t.Fatalf("best blocks %v; want blocks of section 1 (seats 1..8)", first)
	}
	for _, b := range first {
		if b.Seats[len(b.Seats)-1] > 8 {
			t.Errorf("block %v leaves section 1 while it has blocks", b.Seats)
		}
	}
	for seat := 1; seat <= 7; seat += 2 { // section 1 keeps single seats only
		taken[seat] = true
	}
	if got := reservation.BestBlocks(l, free, 2, "", true, 8); len(got) == 0 || got[0].Seats[0] < 9 || got[0].Seats[0] > 16 {
		t.Errorf("with section 1 broken up, best blocks %v; want section 2's", got)
	}
	if got := reservation.BestBlocks(l, free, 2, reservation.DefaultCategory, true, 8); len(got) == 0 || got[0].Seats[0] < 17 {
		t.Errorf("standard seats: best blocks %v; want section 3's", got)
	}
	three, _ := l.SectionIndex("3")
	if got := reservation.BestBlocksIn(l, free, 2, "", three, true, 8); len(got) == 0 || got[0].Seats[0] < 17 {
		t.Errorf("in section 3: best blocks %v; want section 3's", got)
	}
	if n := reservation.FreeSeatsIn(l, free, "", 0); n != 4 {
		t.Errorf("FreeSeatsIn(section 1) = %d, want 4", n)
	}
	// Not adjacent: a section's own seats first, then across sections.
	if got := reservation.BestBlocksIn(l, free, 3, "", 0, false, 1); len(got) != 1 || got[0].Seats[2] > 8 {
		t.Errorf("3 seats anywhere in section 1: %v", got)
	}
	for seat := 9; seat <= 24; seat++ {
		taken[seat] = seat != 12
	}
	got := reservation.BestBlocks(l, free, 5, "", false, 1)
	if len(got) != 1 || fmt.Sprint(got[0].Seats) != "[2 4 6 8 12]" {
		t.Errorf("5 seats when no section has them: %v, want section 1's four and section 2's one", got)
	}
}

// BenchmarkBestBlocksStadium chooses 4 together in the stadium of the
// targets (100 sections × 20 rows × 40 seats): empty, and with the first
// 99 sections sold out, where every choice passes them first.
func BenchmarkBestBlocksStadium(b *testing.B) {
	l := stadium(b)
	for _, bm := range []struct {
		name string
		free func(seat int) bool
	}{
		{"empty", func(int) bool { return true }},
		{"last section left", func(seat int) bool { return seat > 99*800 }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(reservation.BestBlocks(l, bm.free, 4, "", true, 8)) != 8 {
					b.Fatal("fewer than 8 blocks")
				}
			}
		})
	}
}
