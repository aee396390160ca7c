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

// Limits of a venue layout, checked by NewLayout and NewSectionedLayout
// and published in the OpenAPI document.
const (
	// MaxRows is the most rows of a layout of rows, and of each section.
	MaxRows          = 100
	MaxSections      = 500
	MaxRowLabelRunes = 8
	// MaxSectionNameRunes bounds a section's name, which prefixes the
	// label of each of its seats ("114-C7").
	MaxSectionNameRunes = 16
	MaxCategoryRunes    = 32
	// DefaultCategory is the category of a row that names none (and
	// whose section names none).
	DefaultCategory = "standard"
	// SingleRowLabel labels the one row of a schedule made from a seat
	// count alone.
	SingleRowLabel = "A"
)

// Row is one row of a venue layout: its label (unique in its section), how
// many seats it has and their category.
type Row struct {
	Label    string
	Seats    int
	Category string
}

// Section is one part of a venue (a block of a stadium's bowl): its name
// (unique in the layout), the category of its rows that name none, and its
// rows front to back. A layout of rows alone is one section named "".
type Section struct {
	Name     string
	Category string
	Rows     []Row
}

// Layout is a schedule's seats: sections, listed best first, each of
// rows listed from the front (the stage, screen or pitch) to the back.
// Seat ids run 1..SeatCount section by section, row by row, each row from
// its first seat to its last, so a seat's id never depends on how its
// section or row is named.
type Layout struct {
	sections []Section // checked, with every row's category resolved
	rows     []Row     // every row, section by section
	// sectionStart[s] is the index in rows of section s's first row;
	// sectionStart[len(sections)] is len(rows).
	sectionStart []int
	rowSection   []int // rowSection[i] is the section of row i
	first        []int // first[i] is the id of row i's first seat
	total        int
	// distance[id-1] is seat id's distance from its section's best point
	// (best_seats.go), weighed by every choice of best seats.
	distance []float64
}

// NewLayout checks rows (1..MaxRows of them, labels short and unique
// ignoring case, taken as they are, untrimmed; at least one seat each,
// MaxSeatCount seats in all, categories short names; no two seats with
// one label, ignoring case; a row without a category gets
// DefaultCategory) and returns the layout, one section without a name, or
// every problem as *InvalidError values joined in one error, each naming
// the row's field (e.g. "layout.rows[2].label").
func NewLayout(rows []Row) (Layout, error) {
	var c layoutChecker
	checked := c.rows("layout.rows", rows, DefaultCategory, rowsOf{seatLabels: true})
	if c.total > MaxSeatCount {
		c.bad("layout.rows", "must have at most %d seats in all, not %d", MaxSeatCount, c.total)
	}
	if len(c.errs) > 0 {
		return Layout{}, errors.Join(c.errs...)
	}
	return RestoreLayout(checked), nil
}

// NewSectionedLayout checks sections (1..MaxSections of them, names
// short and unique ignoring case; each with a category or none, and rows
// as NewLayout checks them, labels unique within the section; no two
// seats of the layout with one label, ignoring case) and returns
// the layout, or every problem as *InvalidError values joined in one
// error, each naming its field (e.g. "layout.sections[3].rows[0].seats").
// A row without a category gets its section's, or DefaultCategory.
func NewSectionedLayout(sections []Section) (Layout, error) {
	var c layoutChecker
	if len(sections) < 1 || len(sections) > MaxSections {
		c.bad("layout.sections", "must list between 1 and %d sections", MaxSections)
		return Layout{}, errors.Join(c.errs...)
	}
	checked := make([]Section, len(sections))
	names := make(map[string]int, len(sections))
	for i, s := range sections {
		field := fmt.Sprintf("layout.sections[%d]", i)
		of := rowsOf{section: s.Name}
		if c.name(field+".name", s.Name, MaxSectionNameRunes) {
			of.key = fold(s.Name)
			if first, dup := names[of.key]; dup {
				c.bad(field+".name", "repeats the name of layout.sections[%d] (names are compared ignoring case)", first)
			} else {
				names[of.key] = i
				// A section whose name is refused is left out of the
				// seat labels' check: its labels would repeat that
				// refusal.
				of.seatLabels = true
			}
		}
		category := c.category(field+".category", s.Category)
		checked[i] = Section{Name: s.Name, Category: category, Rows: c.rows(field+".rows", s.Rows, category, of)}
	}
	if c.total > MaxSeatCount {
		c.bad("layout.sections", "must have at most %d seats in all, not %d", MaxSeatCount, c.total)
	}
	if len(c.errs) > 0 {
		return Layout{}, errors.Join(c.errs...)
	}
	return RestoreSectionedLayout(checked), nil
}

// layoutChecker gathers every problem of a layout and counts its seats.
type layoutChecker struct {
	errs  []error
	total int
	// seatLabels maps the folded label prefix (seatLabelPrefix) of each
	// row checked so far to the row's field.
	seatLabels map[string]string
}

func (c *layoutChecker) bad(field, format string, args ...any) {
	c.errs = append(c.errs, &InvalidError{Field: field, Detail: fmt.Sprintf(format, args...)})
}

// rowsOf is the section whose rows layoutChecker.rows checks.
type rowsOf struct {
	section, key string // its name ("" in a layout of rows), and folded
	// seatLabels asks for the check that no seat of its rows has the
	// label of a seat of a row checked before (seatLabel).
	seatLabels bool
}

// rows checks the rows at field, of section of, labels unique among them;
// a row without a category gets category.
func (c *layoutChecker) rows(field string, rows []Row, category string, of rowsOf) []Row {
	if len(rows) < 1 || len(rows) > MaxRows {
		c.bad(field, "must list between 1 and %d rows", MaxRows)
		return nil
	}
	checked := make([]Row, len(rows))
	labels := make(map[string]int, len(rows))
	for i, r := range rows {
		rowField := fmt.Sprintf("%s[%d]", field, i)
		if c.name(rowField+".label", r.Label, MaxRowLabelRunes) {
			key := fold(r.Label)
			if first, dup := labels[key]; dup {
				c.bad(rowField+".label", "repeats the label of %s[%d] (labels are compared ignoring case)", field, first)
			} else {
				labels[key] = i
				if of.seatLabels {
					c.seatLabel(rowField, of, r.Label, key)
				}
			}
		}
		if r.Seats < 1 || r.Seats > MaxSeatCount {
			c.bad(rowField+".seats", "must be between 1 and %d", MaxSeatCount)
		} else {
			c.total += r.Seats
		}
		if r.Category == "" {
			r.Category = category
		} else {
			r.Category = c.category(rowField+".category", r.Category)
		}
		checked[i] = r
	}
	return checked
}

// seatLabel checks that the seats of the row at field, labelled label
// (folded: labelKey) in section of, have labels no seat of a row checked
// before has, ignoring case. A seat's label is its row's prefix
// (seatLabelPrefix) followed by its number's digits, and a prefix never
// ends in a digit, so the digits are exactly the label's trailing ones:
// two seats' labels are one only when their rows' prefixes are, whatever
// the numbers (every row has a seat 1). One key a row, not one a seat, is
// therefore the whole check. The key is made of the parts already folded:
// case folding maps each character on its own, and never to or from a
// digit or '-', so that is the whole prefix folded.
func (c *layoutChecker) seatLabel(field string, of rowsOf, label, labelKey string) {
	if c.seatLabels == nil {
		c.seatLabels = map[string]string{}
	}
	key := seatLabelPrefix(of.key, labelKey)
	if first, dup := c.seatLabels[key]; dup {
		c.bad(field+".label", "gives its seats the labels of %s's (%q): seat labels are unique in a schedule, compared ignoring case",
			first, SectionSeatLabel(of.section, label, 1))
		return
	}
	c.seatLabels[key] = field
}

// name checks a row's label or a section's name: not empty, no white
// space or control character, at most most runes of letters, digits and
// '-'. It reports whether the name is good.
func (c *layoutChecker) name(field, name string, most int) bool {
	switch {
	case name == "":
		c.bad(field, "must not be empty")
	case strings.ContainsFunc(name, isSpaceOrControl):
		c.bad(field, "must not contain white space or control characters")
	case utf8.RuneCountInString(name) > most || !isShortName(name, false):
		c.bad(field, "must be at most %d letters, digits or '-'", most)
	default:
		return true
	}
	return false
}

// category checks a category ("" takes DefaultCategory) and returns it.
func (c *layoutChecker) category(field, category string) string {
	switch {
	case category == "":
		return DefaultCategory
	case strings.ContainsFunc(category, isSpaceOrControl):
		c.bad(field, "must not contain white space or control characters")
	case utf8.RuneCountInString(category) > MaxCategoryRunes || !isShortName(category, true):
		c.bad(field, "must be at most %d letters, digits, '-' or '_'", MaxCategoryRunes)
	}
	return category
}

// fold is the key under which names and labels are unique: Unicode case
// folding, so "k" and the Kelvin sign "K" are one label, as "s" and the
// long s "ſ" are.
func fold(s string) string { return cases.Fold().String(s) }

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// isShortName reports whether s is letters, digits and '-' (and '_' when
// underscore is true): a row label or a category, safe in a URL, a log
// line and a seat label. A digit is a decimal digit (Unicode's Nd, of any
// script), not any number: the OpenAPI document's patterns say
// [\p{L}\p{Nd}-], and a test holds them to this.
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

// RestoreLayout rebuilds a stored layout of rows. Only repositories (and
// the constructors above) call it: the rows were checked when stored.
func RestoreLayout(rows []Row) Layout {
	return RestoreSectionedLayout([]Section{{Rows: rows}})
}

// RestoreSectionedLayout rebuilds a stored layout of sections, as
// RestoreLayout does one of rows.
func RestoreSectionedLayout(sections []Section) Layout {
	l := Layout{sections: make([]Section, len(sections)), sectionStart: make([]int, 0, len(sections)+1)}
	for s, sec := range sections {
		sec.Rows = append([]Row(nil), sec.Rows...)
		l.sections[s] = sec
		l.sectionStart = append(l.sectionStart, len(l.rows))
		for _, r := range sec.Rows {
			l.rows = append(l.rows, r)
			l.rowSection = append(l.rowSection, s)
			l.first = append(l.first, l.total+1)
			l.total += r.Seats
		}
	}
	l.sectionStart = append(l.sectionStart, len(l.rows))
	l.distance = make([]float64, 0, l.total)
	for i, r := range l.rows {
		for n := 1; n <= r.Seats; n++ {
			l.distance = append(l.distance, l.seatDistance(i, n))
		}
	}
	return l
}

// Rows returns every row, section by section, front to back.
func (l Layout) Rows() []Row { return append([]Row(nil), l.rows...) }

// Sections returns the sections, best first; a layout of rows alone has
// one, named "".
func (l Layout) Sections() []Section {
	out := make([]Section, len(l.sections))
	for i, s := range l.sections {
		out[i] = Section{Name: s.Name, Category: s.Category, Rows: append([]Row(nil), s.Rows...)}
	}
	return out
}

// Sectioned reports whether the layout was made of named sections
// (NewSectionedLayout) rather than of rows alone.
func (l Layout) Sectioned() bool {
	return len(l.sections) > 1 || len(l.sections) == 1 && l.sections[0].Name != ""
}

// SectionRows returns the indexes into Rows of section s's rows: lo..hi-1.
func (l Layout) SectionRows(s int) (lo, hi int) { return l.sectionStart[s], l.sectionStart[s+1] }

// RowSection is the index into Sections of row's section.
func (l Layout) RowSection(row int) int { return l.rowSection[row] }

// SectionCount is how many sections the layout has (1 for a layout of
// rows).
func (l Layout) SectionCount() int { return len(l.sections) }

// SectionName is section s's name ("" in a layout of rows).
func (l Layout) SectionName(s int) string { return l.sections[s].Name }

// SectionIndex returns the index of the section named name (exactly), or
// false.
func (l Layout) SectionIndex(name string) (int, bool) {
	for i, s := range l.sections {
		if s.Name == name {
			return i, true
		}
	}
	return 0, false
}

// SeatCount is how many seats the layout has.
func (l Layout) SeatCount() int { return l.total }

// FirstSeat is the id of row's first seat (row is an index into Rows).
func (l Layout) FirstSeat(row int) int { return l.first[row] }

// Place is where a seat is: its section's name ("" in a layout of rows),
// its row (an index into Rows, and the row's label), its number in the
// row (from 1), its label (e.g. "C7", or "114-C7" in section 114) and its
// category.
type Place struct {
	SeatID   int
	Section  string
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
	section := l.sections[l.rowSection[lo]].Name
	return Place{SeatID: id, Section: section, Row: lo, RowLabel: r.Label, Number: number,
		Label: SectionSeatLabel(section, r.Label, number), Category: r.Category}, true
}

// SeatLabel is a seat's label: its row's label and its number ("C7"), with
// a '-' between them when the row's label ends in a digit ("10-7", not
// "107").
func SeatLabel(rowLabel string, number int) string {
	return SectionSeatLabel("", rowLabel, number)
}

// SectionSeatLabel is the label of a seat in a section: the section's
// name, '-' and SeatLabel ("114-C7"); SeatLabel alone when the section
// has no name.
func SectionSeatLabel(section, rowLabel string, number int) string {
	return seatLabelPrefix(section, rowLabel) + strconv.Itoa(number)
}

// seatLabelPrefix is what the label of each seat of a row has before the
// seat's number: the section's name and '-' (when it has one), the row's
// label, and '-' when the label ends in a digit. It never ends in a digit.
func seatLabelPrefix(section, rowLabel string) string {
	prefix := rowLabel
	if last, _ := utf8.DecodeLastRuneInString(rowLabel); unicode.IsDigit(last) {
		prefix += "-"
	}
	if section != "" {
		prefix = section + "-" + prefix
	}
	return prefix
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
