package main

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/seatlock/seatlock/internal/reservation"
)

// The venue best-available, seat-map and on-sale make by default:
// make compare's 2,000 seats, 40 rows of 50, sold to parties of one to
// six.
const (
	defaultRows     = 40
	defaultRowSeats = 50
	defaultQuantity = "1-6"
)

// venueConfig is the venue a scenario makes: Rows rows of RowSeats seats
// (of Category, when given); with Sections, that many sections of such
// rows; or the layout of LayoutFile.
type venueConfig struct {
	Rows       int    `json:"rows,omitempty"`
	RowSeats   int    `json:"rowSeats,omitempty"`
	Sections   int    `json:"sections,omitempty"`
	LayoutFile string `json:"layoutFile,omitempty"`
	Category   string `json:"category,omitempty"`
	file       *layoutIn
}

// bestConfig is what best-available requests ask for on a fresh venue
// (venueConfig; the category, when given, is asked for by every
// request): a quantity drawn from MinQuantity..MaxQuantity by a generator
// seeded with Seed.
type bestConfig struct {
	venueConfig
	MinQuantity int    `json:"minQuantity"`
	MaxQuantity int    `json:"maxQuantity"`
	Adjacent    bool   `json:"adjacent"`
	Seed        uint64 `json:"seed"`
}

// venue defines the flags of the venue a scenario makes; the returned
// func checks them into v (parseVenue).
func (f *flags) venue(v *venueConfig) func() error {
	rows := f.Int("rows", defaultRows, fmt.Sprintf("rows of the fresh venue, of each section with -sections, 1..%d", reservation.MaxRows))
	rowSeats := f.Int("row-seats", defaultRowSeats, fmt.Sprintf("seats in each row; %d seats at most in a venue of rows alone", maxSeats))
	sections := f.Int("sections", 0, fmt.Sprintf("lay the venue out in this many sections (named 101, 102, ...), each of -rows rows of -row-seats seats, "+
		"1..%d, %d seats at most in all; 0: rows alone", reservation.MaxSections, reservation.MaxSeatCount))
	file := f.String("layout", "", `the venue's layout from this JSON file, what POST /schedules's "layout" takes ({"rows": [...]} or {"sections": [...]}), `+
		"instead of -rows, -row-seats and -sections")
	category := f.String("category", "", "the category of the venue's rows, asked for by every best-available request; default none asked (rows standard)")
	return func() (err error) {
		*v, err = parseVenue(*rows, *rowSeats, *sections, *file, *category, f.given)
		return err
	}
}

// best defines the flags of best-available requests on a fresh venue,
// checked into b.
func (f *flags) best(b *bestConfig) {
	venue := f.venue(&b.venueConfig)
	quantity := f.String("quantity", defaultQuantity, "seats each request asks for, N or MIN-MAX within 1..10, drawn at random")
	f.BoolVar(&b.Adjacent, "adjacent", true, "ask for consecutive seats of one row")
	f.Uint64Var(&b.Seed, "seed", 1, "seed of the quantities (and of best-available's explicit blocks)")
	f.check(func() error {
		if err := venue(); err != nil {
			return err
		}
		return b.parseQuantity(*quantity)
	})
}

// parseVenue checks the venue's flags: a grid of rows (-rows × -row-seats,
// at most maxSeats seats, as the halls the hammer makes), of sections of
// such rows (-sections: the API's limits, reservation.MaxSections
// sections of reservation.MaxRows rows, reservation.MaxSeatCount seats in
// all), or a layout file (-layout, which excludes the others), and a
// -category the layout has. given names the flags given on the command
// line.
func parseVenue(rows, rowSeats, sections int, file, category string, given map[string]bool) (venueConfig, error) {
	v := venueConfig{Rows: rows, RowSeats: rowSeats, Sections: sections, Category: category}
	if file != "" {
		if given["rows"] || given["row-seats"] || given["sections"] {
			return v, usagef("-layout excludes -rows, -row-seats and -sections")
		}
		l, err := readLayoutFile(file)
		if err != nil {
			return v, usagef("-layout %s: %v", file, err)
		}
		checked, err := l.check()
		if err != nil {
			return v, usagef("-layout %s: %v", file, err)
		}
		if category != "" && !checked.HasCategory(category) {
			return v, usagef("-category %q: the layout of %s has no row of that category", category, file)
		}
		return venueConfig{LayoutFile: file, Category: category, file: &l}, nil
	}
	switch {
	case sections < 0 || sections > reservation.MaxSections:
		return v, usagef("-sections must be 0..%d", reservation.MaxSections)
	case rows < 1 || rows > reservation.MaxRows:
		return v, usagef("-rows must be 1..%d", reservation.MaxRows)
	case sections == 0 && (rowSeats < 1 || rowSeats > maxSeats):
		return v, usagef("-row-seats must be 1..%d", maxSeats)
	case rowSeats < 1 || rowSeats > reservation.MaxSeatCount:
		return v, usagef("-row-seats must be 1..%d", reservation.MaxSeatCount)
	case sections == 0 && rows*rowSeats > maxSeats:
		return v, usagef("-rows × -row-seats must be at most %d seats, not %d (lay a larger venue out in -sections)", maxSeats, rows*rowSeats)
	case sections*rows*rowSeats > reservation.MaxSeatCount:
		return v, usagef("-sections × -rows × -row-seats must be at most %d seats, not %d", reservation.MaxSeatCount, sections*rows*rowSeats)
	}
	if _, err := v.layout().check(); err != nil {
		return v, usagef("-category %q: %v", category, err)
	}
	return v, nil
}

// parseQuantity checks -quantity: a range within 1..10 that an adjacent
// hold can have in one row of the venue.
func (b *bestConfig) parseQuantity(quantity string) error {
	lo, hi, ok := strings.Cut(quantity, "-")
	if !ok {
		hi = lo
	}
	var errLo, errHi error
	b.MinQuantity, errLo = strconv.Atoi(strings.TrimSpace(lo))
	b.MaxQuantity, errHi = strconv.Atoi(strings.TrimSpace(hi))
	switch longest := b.longestRow(b.Category); {
	case errLo != nil || errHi != nil || b.MinQuantity < 1 || b.MaxQuantity > reservation.MaxHoldSeats || b.MinQuantity > b.MaxQuantity:
		return usagef("-quantity must be N or MIN-MAX with 1 <= MIN <= MAX <= %d, not %q", reservation.MaxHoldSeats, quantity)
	case b.Adjacent && b.MaxQuantity > longest && b.file == nil:
		return usagef("-quantity: %d adjacent seats do not fit in a row of %d (-row-seats)", b.MaxQuantity, longest)
	case b.Adjacent && b.MaxQuantity > longest:
		return usagef("-quantity: %d adjacent seats do not fit in the longest row of %s%s (%d seats)",
			b.MaxQuantity, b.LayoutFile, categoryNote(b.Category), longest)
	}
	return nil
}

// layout is what POST /schedules is sent as the venue's layout.
func (v venueConfig) layout() layoutIn {
	if v.file != nil {
		return *v.file
	}
	return gridLayout(v.Sections, v.Rows, v.RowSeats, v.Category)
}

// capacity is the layout's number of seats.
func (v venueConfig) capacity() int {
	if v.file == nil {
		return max(v.Sections, 1) * v.Rows * v.RowSeats
	}
	n := 0
	for _, r := range v.file.Rows {
		n += r.Seats
	}
	for _, s := range v.file.Sections {
		for _, r := range s.Rows {
			n += r.Seats
		}
	}
	return n
}

// describe says what the venue is, for the text report.
func (v venueConfig) describe() string {
	switch {
	case v.file != nil:
		l := v.layout()
		shape := fmt.Sprintf("%d rows", l.rowCount())
		if l.sectioned() {
			shape = fmt.Sprintf("%d sections, %s", len(l.Sections), shape)
		}
		return fmt.Sprintf("layout %s: %s, %d seats%s", v.LayoutFile, shape, v.capacity(), categoryNote(v.Category))
	case v.Sections > 0:
		return fmt.Sprintf("%d sections × %d rows × %d seats = %d seats%s", v.Sections, v.Rows, v.RowSeats, v.capacity(), categoryNote(v.Category))
	}
	return fmt.Sprintf("%d rows × %d seats = %d seats%s", v.Rows, v.RowSeats, v.capacity(), categoryNote(v.Category))
}

// longestRow is the most seats a row of the venue has (of category, when
// not "").
func (v venueConfig) longestRow(category string) int {
	l := v.layout()
	longest := 0
	consider := func(sectionCategory string, rows []layoutRowIn) {
		for _, r := range rows {
			if c := cmp.Or(r.Category, sectionCategory, reservation.DefaultCategory); category == "" || c == category {
				longest = max(longest, r.Seats)
			}
		}
	}
	consider("", l.Rows)
	for _, s := range l.Sections {
		consider(s.Category, s.Rows)
	}
	return longest
}

func categoryNote(category string) string {
	if category == "" {
		return ""
	}
	return ", category " + category
}
