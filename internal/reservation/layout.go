package reservation

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Limits of a venue layout, checked by NewLayout and published in the
// OpenAPI document.
const (
	MaxRows          = 100
	MaxRowLabelRunes = 8
	MaxCategoryRunes = 32
	// DefaultCategory is the category of a row that names none.
	DefaultCategory = "standard"
	// SingleRowLabel labels the one row of a schedule made from a seat
	// count alone.
	SingleRowLabel = "A"
)

// Row is one row of a venue layout: its label (unique in the layout), how
// many seats it has and their category.
type Row struct {
	Label    string
	Seats    int
	Category string
}

// Layout is a schedule's seats in rows, listed from the front (the stage
// or screen) to the back. Seat ids run 1..SeatCount row by row, each row
// from its first seat to its last, so a seat's id never depends on how its
// row is labelled.
type Layout struct {
	rows  []Row
	first []int // first[i] is the id of row i's first seat
	total int
	// distance[id-1] is seat id's distance from the venue's best point
	// (best_seats.go), weighed by every choice of best seats.
	distance []float64
}

// NewLayout checks rows (1..MaxRows of them, labels short and unique
// ignoring case, taken as they are, untrimmed; at least one seat each, MaxSeatCount seats in all, categories short names;
// a row without a category gets DefaultCategory) and returns the layout,
// or every problem as *InvalidError values joined in one error, each
// naming the row's field (e.g. "layout.rows[2].label").
func NewLayout(rows []Row) (Layout, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &InvalidError{Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	if len(rows) < 1 || len(rows) > MaxRows {
		bad("layout.rows", "must list between 1 and %d rows", MaxRows)
		return Layout{}, errors.Join(errs...)
	}
	checked := make([]Row, len(rows))
	// Labels are unique under Unicode case folding: "k" and the Kelvin
	// sign "K" are one label, as "s" and the long s "ſ" are.
	fold := cases.Fold()
	labels := make(map[string]int, len(rows))
	total := 0
	for i, r := range rows {
		field := fmt.Sprintf("layout.rows[%d]", i)
		switch {
		case r.Label == "":
			bad(field+".label", "must not be empty")
		case strings.ContainsFunc(r.Label, isSpaceOrControl):
			bad(field+".label", "must not contain white space or control characters")
		case utf8.RuneCountInString(r.Label) > MaxRowLabelRunes || !isShortName(r.Label, false):
			bad(field+".label", "must be at most %d letters, digits or '-'", MaxRowLabelRunes)
		default:
			key := fold.String(r.Label)
			if first, dup := labels[key]; dup {
				bad(field+".label", "repeats the label of layout.rows[%d] (labels are compared ignoring case)", first)
			} else {
				labels[key] = i
			}
		}
		if r.Seats < 1 || r.Seats > MaxSeatCount {
			bad(field+".seats", "must be between 1 and %d", MaxSeatCount)
		} else {
			total += r.Seats
		}
		switch {
		case r.Category == "":
			r.Category = DefaultCategory
		case strings.ContainsFunc(r.Category, isSpaceOrControl):
			bad(field+".category", "must not contain white space or control characters")
		case utf8.RuneCountInString(r.Category) > MaxCategoryRunes || !isShortName(r.Category, true):
			bad(field+".category", "must be at most %d letters, digits, '-' or '_'", MaxCategoryRunes)
		}
		checked[i] = r
	}
	if total > MaxSeatCount {
		bad("layout.rows", "must have at most %d seats in all, not %d", MaxSeatCount, total)
	}
	if len(errs) > 0 {
		return Layout{}, errors.Join(errs...)
	}
	return RestoreLayout(checked), nil
}

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// isShortName reports whether s is letters, digits and '-' (and '_' when
// underscore is true): a row label or a category, safe in a URL, a log
// line and a seat label.
func isShortName(s string, underscore bool) bool {
	for _, c := range s {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && (!underscore || c != '_') {
			return false
		}
	}
	return true
}

// SingleRowLayout is the layout of a schedule made from a seat count: one
// row, labelled SingleRowLabel, of the default category.
func SingleRowLayout(seats int) Layout {
	return RestoreLayout([]Row{{Label: SingleRowLabel, Seats: seats, Category: DefaultCategory}})
}

// RestoreLayout rebuilds a stored layout. Only repositories (and the
// constructors above) call it: the rows were checked when stored.
func RestoreLayout(rows []Row) Layout {
	l := Layout{rows: append([]Row(nil), rows...), first: make([]int, len(rows))}
	for i, r := range rows {
		l.first[i] = l.total + 1
		l.total += r.Seats
	}
	l.distance = make([]float64, 0, l.total)
	for i, r := range rows {
		for n := 1; n <= r.Seats; n++ {
			l.distance = append(l.distance, l.seatDistance(i, n))
		}
	}
	return l
}

// Rows returns the rows, front to back.
func (l Layout) Rows() []Row { return append([]Row(nil), l.rows...) }

// SeatCount is how many seats the layout has.
func (l Layout) SeatCount() int { return l.total }

// FirstSeat is the id of row's first seat (row is an index into Rows).
func (l Layout) FirstSeat(row int) int { return l.first[row] }

// Place is where a seat is: its row (an index into Rows, and the row's
// label), its number in the row (from 1), its label (e.g. "C7") and its
// category.
type Place struct {
	SeatID   int
	Row      int
	RowLabel string
	Number   int
	Label    string
	Category string
}

// Place returns where seat id is; false when the layout has no such seat.
func (l Layout) Place(id int) (Place, bool) {
	if id < 1 || id > l.total {
		return Place{}, false
	}
	// The row whose first seat is the last one at or before id.
	lo, hi := 0, len(l.rows)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.first[mid] <= id {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r := l.rows[lo]
	number := id - l.first[lo] + 1
	return Place{SeatID: id, Row: lo, RowLabel: r.Label, Number: number, Label: SeatLabel(r.Label, number), Category: r.Category}, true
}

// SeatLabel is a seat's label: its row's label and its number ("C7"), with
// a '-' between them when the row's label ends in a digit ("10-7", not
// "107").
func SeatLabel(rowLabel string, number int) string {
	if last, _ := utf8.DecodeLastRuneInString(rowLabel); unicode.IsDigit(last) {
		return rowLabel + "-" + strconv.Itoa(number)
	}
	return rowLabel + strconv.Itoa(number)
}

// HasCategory reports whether some row is of category.
func (l Layout) HasCategory(category string) bool {
	for _, r := range l.rows {
		if r.Category == category {
			return true
		}
	}
	return false
}

// RowLabel is the label of row i (from 0) as venues usually letter their
// rows and spreadsheets their columns: A..Z, AA, AB, ... (RowLabel(0) is
// SingleRowLabel). The tools that lay out venues of many rows use it.
func RowLabel(i int) string {
	label := ""
	for i++; i > 0; i = (i - 1) / 26 {
		label = string(rune('A'+(i-1)%26)) + label
	}
	return label
}
