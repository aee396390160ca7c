package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// layoutRow is one row of schedules.layout, a JSON array.
type layoutRow struct {
	Label    string `json:"label"`
	Seats    int    `json:"seats"`
	Category string `json:"category"`
}

// layoutSection is one section of a sectioned schedules.layout, a JSON
// object {"sections": [...]}.
type layoutSection struct {
	Name     string      `json:"name"`
	Category string      `json:"category"`
	Rows     []layoutRow `json:"rows"`
}

type sectionedLayout struct {
	Sections []layoutSection `json:"sections"`
}

// layoutJSON is what schedules.layout stores for l: NULL (nil) for the
// layout of a seat count alone, which reads back as that; an array of rows
// for a layout of rows; an object of sections for a layout of sections.
func layoutJSON(l reservation.Layout) ([]byte, error) {
	var stored any
	if l.Sectioned() {
		sections := l.Sections()
		out := sectionedLayout{Sections: make([]layoutSection, len(sections))}
		for i, s := range sections {
			out.Sections[i] = layoutSection{Name: s.Name, Category: s.Category, Rows: toLayoutRows(s.Rows)}
		}
		stored = out
	} else {
		rows := l.Rows()
		if len(rows) == 1 && rows[0].Label == reservation.SingleRowLabel && rows[0].Category == reservation.DefaultCategory {
			return nil, nil
		}
		stored = toLayoutRows(rows)
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encode layout: %w", err)
	}
	return b, nil
}

func toLayoutRows(rows []reservation.Row) []layoutRow {
	out := make([]layoutRow, len(rows))
	for i, r := range rows {
		out[i] = layoutRow(r)
	}
	return out
}

func fromLayoutRows(rows []layoutRow) []reservation.Row {
	out := make([]reservation.Row, len(rows))
	for i, r := range rows {
		out[i] = reservation.Row(r)
	}
	return out
}

// restoreSchedule rebuilds a schedule from its columns; stored is the
// layout column (NULL: one row of seatCount seats).
func restoreSchedule(id int64, title string, startsAt time.Time, seatCount int, stored []byte) (reservation.Schedule, error) {
	if stored == nil {
		return reservation.RestoreSchedule(id, title, startsAt, seatCount), nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(stored), []byte("{")) {
		var sectioned sectionedLayout
		if err := json.Unmarshal(stored, &sectioned); err != nil {
			return reservation.Schedule{}, fmt.Errorf("schedule %d: decode layout: %w", id, err)
		}
		sections := make([]reservation.Section, len(sectioned.Sections))
		for i, s := range sectioned.Sections {
			sections[i] = reservation.Section{Name: s.Name, Category: s.Category, Rows: fromLayoutRows(s.Rows)}
		}
		return reservation.RestoreLaidOutSchedule(id, title, startsAt, reservation.RestoreSectionedLayout(sections)), nil
	}
	var rows []layoutRow
	if err := json.Unmarshal(stored, &rows); err != nil {
		return reservation.Schedule{}, fmt.Errorf("schedule %d: decode layout: %w", id, err)
	}
	return reservation.RestoreLaidOutSchedule(id, title, startsAt, reservation.RestoreLayout(fromLayoutRows(rows))), nil
}
