package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// The forms of a seat map (GET /schedules/{id}/seats?form=...): one JSON
// object a seat, or one character a seat, row by row.
const (
	formFull    = "full"
	formCompact = "compact"
)

// seatsURL is GET /schedules/{id}/seats of schedule on target, in form.
func seatsURL(target string, schedule int64, form string) string {
	u := target + "/schedules/" + strconv.FormatInt(schedule, 10) + "/seats"
	if form == formCompact {
		u += "?form=" + formCompact
	}
	return u
}

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

// seatMapCount counts a seat map's seats by status (Error: why it was not
// read).
type seatMapCount struct {
	Reserved  int    `json:"reserved"`
	Held      int    `json:"held"`
	Available int    `json:"available"`
	Error     string `json:"error,omitempty"`
}

// countSeatMap counts the statuses of the seat map read after the sale.
func countSeatMap(statuses map[int]string, err error) seatMapCount {
	var c seatMapCount
	if err != nil {
		c.Error = err.Error()
		return c
	}
	if statuses == nil {
		c.Error = "not read"
		return c
	}
	for _, st := range statuses {
		switch st {
		case "reserved":
			c.Reserved++
		case "held":
			c.Held++
		case "available":
			c.Available++
		}
	}
	return c
}

// wireSize is one seat map's size as it came over the wire: GET
// /schedules/{id}/seats in Form, asked with Accept-Encoding: gzip.
type wireSize struct {
	// Form is the form asked for, FormSeen the one the body was in (a
	// server without the compact form answers the full one).
	Form     string `json:"form"`
	FormSeen string `json:"formSeen,omitempty"`
	// Encoding is the answer's Content-Encoding ("" when not compressed);
	// Bytes the body's size as sent, Decoded its size decompressed.
	Encoding string `json:"contentEncoding,omitempty"`
	Bytes    int    `json:"bytes"`
	Decoded  int    `json:"decodedBytes"`
	Error    string `json:"error,omitempty"`
}

// String is the size for the text report: "compact 1234 B gzip (80123 B
// decoded)".
func (w wireSize) String() string {
	switch {
	case w.Error != "":
		return w.Form + ": " + w.Error
	case w.FormSeen != w.Form:
		return fmt.Sprintf("%s: the %s form answered, %s", w.Form, w.FormSeen, w.bytes())
	}
	return w.Form + " " + w.bytes()
}

func (w wireSize) bytes() string {
	if w.Encoding == "" {
		return fmt.Sprintf("%d B, not compressed", w.Bytes)
	}
	return fmt.Sprintf("%d B %s (%d B decoded)", w.Bytes, w.Encoding, w.Decoded)
}

// seatMapWire reads schedule's seat map in form through target with
// Accept-Encoding: gzip, as a browser does, and measures its body before
// and after decompression.
func (a *api) seatMapWire(ctx context.Context, target string, schedule int64, form string) wireSize {
	w := wireSize{Form: form}
	res, err := a.do(ctx, request{method: http.MethodGet, url: seatsURL(target, schedule, form), header: []string{"Accept-Encoding", "gzip"}, read: []string{"Content-Encoding"}})
	switch {
	case err != nil:
		w.Error = err.Error()
		return w
	case res.Status != http.StatusOK:
		w.Error = "HTTP " + strconv.Itoa(res.Status)
		return w
	}
	w.Encoding, w.Bytes = res.Header[0], res.Size
	body, err := decode(res.Body, w.Encoding)
	if err != nil {
		w.Error = err.Error()
		return w
	}
	w.Decoded = len(body)
	m, err := parseSeatMap(body)
	switch {
	case err != nil:
		w.Error = err.Error()
	case m.ScheduleID != schedule:
		w.Error = fmt.Sprintf("answer is for schedule %d, want %d", m.ScheduleID, schedule)
	default:
		w.FormSeen = m.Form
	}
	return w
}

// decode undoes a body's Content-Encoding (gzip, or none).
func decode(body []byte, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(zr, maxBody))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("answered with Content-Encoding %q to Accept-Encoding: gzip", encoding)
}

// wireReport is the seat map of the best-available venue on the wire,
// compact and full, at the start of the run (empty) and at its end.
type wireReport struct {
	Start []wireSize `json:"start"`
	End   []wireSize `json:"end,omitempty"`
}

// seatMapWires measures schedule's seat map through target in both forms.
func (a *api) seatMapWires(ctx context.Context, target string, schedule int64) []wireSize {
	return []wireSize{a.seatMapWire(ctx, target, schedule, formCompact), a.seatMapWire(ctx, target, schedule, formFull)}
}
