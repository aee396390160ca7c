package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/seatlock/seatlock/internal/reservation"
)

// layoutIn is what POST /schedules's layout member takes: rows, or
// sections of rows, never both.
type layoutIn struct {
	Rows     []layoutRowIn     `json:"rows,omitempty"`
	Sections []layoutSectionIn `json:"sections,omitempty"`
}

type layoutSectionIn struct {
	Name     string        `json:"name"`
	Category string        `json:"category,omitempty"`
	Rows     []layoutRowIn `json:"rows"`
}

type layoutRowIn struct {
	Label    string `json:"label"`
	Seats    int    `json:"seats"`
	Category string `json:"category,omitempty"`
}

// sectioned reports whether the layout is one of sections.
func (l layoutIn) sectioned() bool { return l.Sections != nil }

// rowCount is how many rows the layout has in all.
func (l layoutIn) rowCount() int {
	if !l.sectioned() {
		return len(l.Rows)
	}
	n := 0
	for _, s := range l.Sections {
		n += len(s.Rows)
	}
	return n
}

// check applies the API's rules (reservation.NewLayout and
// NewSectionedLayout) and the hammer's own: a layout of rows alone has at
// most maxSeats seats, as the halls the hammer makes.
func (l layoutIn) check() (reservation.Layout, error) {
	toRows := func(in []layoutRowIn) []reservation.Row {
		rows := make([]reservation.Row, len(in))
		for i, r := range in {
			rows[i] = reservation.Row{Label: r.Label, Seats: r.Seats, Category: r.Category}
		}
		return rows
	}
	if !l.sectioned() {
		checked, err := reservation.NewLayout(toRows(l.Rows))
		if err != nil {
			return checked, err
		}
		if n := checked.SeatCount(); n > maxSeats {
			return checked, fmt.Errorf("a layout of rows alone may have at most %d seats, not %d (lay a larger venue out in sections)", maxSeats, n)
		}
		return checked, nil
	}
	sections := make([]reservation.Section, len(l.Sections))
	for i, s := range l.Sections {
		sections[i] = reservation.Section{Name: s.Name, Category: s.Category, Rows: toRows(s.Rows)}
	}
	return reservation.NewSectionedLayout(sections)
}

// sectionName is the name of section i (from 0) of a layout the hammer
// makes: "101", "102", ..., as stadiums number the blocks of a tier.
func sectionName(i int) string { return strconv.Itoa(101 + i) }

// gridLayout is a layout of rows rows of rowSeats seats each, labelled A,
// B, ..., Z, AA, AB, ... from the front, of category ("" for the
// service's default); with sections > 0, that many sections of such rows,
// named by sectionName.
func gridLayout(sections, rows, rowSeats int, category string) layoutIn {
	grid := func() []layoutRowIn {
		out := make([]layoutRowIn, rows)
		for i := range out {
			out[i] = layoutRowIn{Label: reservation.RowLabel(i), Seats: rowSeats, Category: category}
		}
		return out
	}
	if sections == 0 {
		return layoutIn{Rows: grid()}
	}
	l := layoutIn{Sections: make([]layoutSectionIn, sections)}
	for i := range l.Sections {
		l.Sections[i] = layoutSectionIn{Name: sectionName(i), Rows: grid()}
	}
	return l
}

// readLayoutFile reads a JSON file holding what POST /schedules's layout
// member takes ({"rows": [...]} or {"sections": [...]}), strictly: an
// unknown member is an error, as the API's 400 would be.
func readLayoutFile(path string) (layoutIn, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return layoutIn{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l layoutIn
	if err := dec.Decode(&l); err != nil {
		return layoutIn{}, fmt.Errorf("not a layout: %w", err)
	}
	if dec.More() {
		return layoutIn{}, errors.New("not a layout: data after the JSON object")
	}
	switch {
	case l.Rows != nil && l.Sections != nil:
		return layoutIn{}, errors.New(`a layout has "rows" or "sections", not both`)
	case l.Rows == nil && l.Sections == nil:
		return layoutIn{}, errors.New(`a layout needs "rows" or "sections"`)
	}
	return l, nil
}

// venue is a schedule with its layout, as POST /schedules and GET
// /schedules/{id} describe it: rows, or sections of rows.
type venue struct {
	ID        int64 `json:"id"`
	SeatCount int   `json:"seatCount"`
	Layout    struct {
		Rows     []venueRow     `json:"rows,omitempty"`
		Sections []venueSection `json:"sections,omitempty"`
	} `json:"layout"`
}

type venueSection struct {
	Name     string     `json:"name"`
	Category string     `json:"category"`
	Rows     []venueRow `json:"rows"`
}

// venueRow is one row of a venue: its seats are FirstSeat..FirstSeat+Seats-1.
// Section is the name of its section ("" in a layout of rows).
type venueRow struct {
	Section   string `json:"-"`
	Label     string `json:"label"`
	Seats     int    `json:"seats"`
	Category  string `json:"category"`
	FirstSeat int    `json:"firstSeatId"`
}

// rows is every row of the venue, section by section, each knowing its
// section.
func (v venue) rows() []venueRow {
	if len(v.Layout.Sections) == 0 {
		return v.Layout.Rows
	}
	var rows []venueRow
	for _, s := range v.Layout.Sections {
		for _, r := range s.Rows {
			r.Section = s.Name
			rows = append(rows, r)
		}
	}
	return rows
}

// check makes sure the layout numbers seats 1..SeatCount section by
// section, row by row, as the API promises, and, when want is not nil,
// has want's sections and rows.
func (v venue) check(want *layoutIn) error {
	if v.ID <= 0 {
		return fmt.Errorf("answer has id %d, want a positive one", v.ID)
	}
	if v.Layout.Rows != nil && v.Layout.Sections != nil {
		return errors.New("answer's layout has both rows and sections")
	}
	if want != nil {
		sections, rows := v.Layout.Sections, len(v.rows())
		if (sections != nil) != want.sectioned() || len(sections) != len(want.Sections) || rows != want.rowCount() {
			return fmt.Errorf("answer has %d sections and %d rows, want %d and %d", len(sections), rows, len(want.Sections), want.rowCount())
		}
		for i, s := range want.Sections {
			if got := sections[i]; got.Name != s.Name || len(got.Rows) != len(s.Rows) {
				return fmt.Errorf("answer's section %d is %q of %d rows, want %q of %d", i, got.Name, len(got.Rows), s.Name, len(s.Rows))
			}
		}
	}
	next := 1
	for _, r := range v.rows() {
		if r.FirstSeat != next || r.Seats < 1 {
			return fmt.Errorf("row %q starts at seat %d with %d seats, want seat %d and at least one", seatLabel(r, 0), r.FirstSeat, r.Seats, next)
		}
		next += r.Seats
	}
	if next-1 != v.SeatCount {
		return fmt.Errorf("rows have %d seats, seatCount says %d", next-1, v.SeatCount)
	}
	return nil
}

// seatLabel is the label of seat number n (from 1) of row r, as the API
// writes it ("C7", "114-C7"); n 0 names the row itself ("C", "114-C").
func seatLabel(r venueRow, n int) string {
	if n == 0 {
		if r.Section == "" {
			return r.Label
		}
		return r.Section + "-" + r.Label
	}
	return reservation.SectionSeatLabel(r.Section, r.Label, n)
}
