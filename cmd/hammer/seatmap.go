package main

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The forms of a seat map (GET /schedules/{id}/seats?form=...): one JSON
// object a seat, or one character a seat, row by row.
const (
	formFull    = "full"
	formCompact = "compact"
)

// seatMapDoc is a seat map in either form: Seats in the full form,
// Sections (and Version) in the compact one.
type seatMapDoc struct {
	ScheduleID int64  `json:"scheduleId"`
	Version    *int64 `json:"version"`
	Seats      []struct {
		SeatID int    `json:"seatId"`
		Status string `json:"status"`
	} `json:"seats"`
	Sections []compactSection `json:"sections"`
}

// compactSection is a section of the compact form; a layout of rows alone
// is one section named "".
type compactSection struct {
	Name string       `json:"name"`
	Rows []compactRow `json:"rows"`
}

// compactRow is a row of the compact form: Status has one character a
// seat, FirstSeatID's first.
type compactRow struct {
	Label       string `json:"label"`
	FirstSeatID int    `json:"firstSeatId"`
	Category    string `json:"category"`
	Status      string `json:"status"`
}

// seatMapRead is a seat map as parseSeatMap read it.
type seatMapRead struct {
	ScheduleID int64
	Form       string // formFull or formCompact: the form the body was in
	Version    int64  // the compact form's; -1 without
	Statuses   map[int]string
}

// compactStatus names the statuses of the compact form's characters.
var compactStatus = [256]string{'a': "available", 'h': "held", 'r': "reserved"}

// parseSeatMap reads a seat map of either form, by what the body holds:
// "sections" is the compact form, "seats" the full one.
func parseSeatMap(data []byte) (seatMapRead, error) {
	var doc seatMapDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return seatMapRead{}, fmt.Errorf("decode body: %w", err)
	}
	m := seatMapRead{ScheduleID: doc.ScheduleID, Form: formFull, Version: -1}
	switch {
	case doc.Sections != nil:
		m.Form = formCompact
		if doc.Version != nil {
			m.Version = *doc.Version
		}
		seats := 0
		for _, s := range doc.Sections {
			for _, r := range s.Rows {
				seats += len(r.Status)
			}
		}
		m.Statuses = make(map[int]string, seats)
		for _, s := range doc.Sections {
			for _, r := range s.Rows {
				for i := 0; i < len(r.Status); i++ {
					st := compactStatus[r.Status[i]]
					if st == "" {
						return seatMapRead{}, fmt.Errorf("row %q of section %q: status %q is not a, h or r", r.Label, s.Name, r.Status[i])
					}
					m.Statuses[r.FirstSeatID+i] = st
				}
			}
		}
	case doc.Seats != nil:
		m.Statuses = make(map[int]string, len(doc.Seats))
		for _, s := range doc.Seats {
			m.Statuses[s.SeatID] = s.Status
		}
	default:
		return seatMapRead{}, errors.New(`decode body: neither "seats" nor "sections"`)
	}
	return m, nil
}
