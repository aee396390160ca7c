package seatmap

import (
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seatlock/seatlock/internal/reservation"
)

// AppendSeat appends one seat as the seat map and every seat event carry
// it, the one place that JSON is written:
//
//	{"seatId":7,"status":"reserved","label":"A7","row":"A","number":7,"category":"standard"}
//
// A seat of a named section carries the section's name before its row
// ("label":"114-A7","section":"114","row":"A"). The place members are left
// out when place is the zero Place (a seat the layout does not have). Written by hand: a seat map of thousands of seats
// is rendered for every snapshot, and a batch of events for every stream
// (BenchmarkSeatMapJSON).
func AppendSeat(b []byte, seatID int, status reservation.SeatStatus, place reservation.Place) []byte {
	b = append(b, `{"seatId":`...)
	b = strconv.AppendInt(b, int64(seatID), 10)
	b = append(b, `,"status":`...)
	b = appendString(b, string(status))
	if place.SeatID != 0 {
		b = append(b, `,"label":`...)
		b = appendString(b, place.Label)
		if place.Section != "" {
			b = append(b, `,"section":`...)
			b = appendString(b, place.Section)
		}
		b = append(b, `,"row":`...)
		b = appendString(b, place.RowLabel)
		b = append(b, `,"number":`...)
		b = strconv.AppendInt(b, int64(place.Number), 10)
		b = append(b, `,"category":`...)
		b = appendString(b, place.Category)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string. Labels and categories are
// letters, digits, '-' and '_' (reservation.NewLayout), but a stored text
// is escaped all the same; invalid UTF-8, which cannot be stored, would
// be written as U+FFFD rather than break the answer (the error says only
// that).
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}

// AppendSeatMap appends the seat map of a schedule of layout whose seats
// have the codes status (status[id-1] for seat id; Image):
// the full form, one object per seat as AppendSeat writes it. The parts of
// a row's seats that do not change from seat to seat are written once a
// row, so a stadium's map costs no allocation per seat.
func AppendSeatMap(b []byte, scheduleID int64, layout reservation.Layout, status []byte) []byte {
	return appendSeatMap(b, scheduleID, layout, status, nil)
}

// seatMapChunk is how much of a full seat map WriteSeatMap holds before
// it writes: some rows of a stadium's 2,000.
const seatMapChunk = 32 << 10

// WriteSeatMap writes what AppendSeatMap appends to w, some rows at a
// time through one buffer of about seatMapChunk bytes, instead of the
// whole map at once (about 100 bytes a seat: 8 MB for a stadium).
func WriteSeatMap(w io.Writer, scheduleID int64, layout reservation.Layout, status []byte) error {
	var err error
	b := appendSeatMap(make([]byte, 0, seatMapChunk+1024), scheduleID, layout, status, func(b []byte) []byte {
		if err == nil {
			_, err = w.Write(b)
		}
		return b[:0]
	})
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

// appendSeatMap is AppendSeatMap; when flush is not nil, it is handed
// what is appended so far at the end of a row once that is seatMapChunk
// bytes or more, and appending goes on to what it returns.
func appendSeatMap(b []byte, scheduleID int64, layout reservation.Layout, status []byte, flush func([]byte) []byte) []byte {
	b = append(b, `{"scheduleId":`...)
	b = strconv.AppendInt(b, scheduleID, 10)
	// form tells the two forms apart: it is the discriminator of the
	// document's oneOf, which a generated client reads to pick the type.
	b = append(b, `,"form":"full","seats":[`...)
	var label, tail []byte
	for i, r := range layout.Rows() {
		section := layout.SectionName(layout.RowSection(i))
		// label: `,"label":"<section>-<row>[-]` before the number;
		// tail: `","section":..,"row":..,"number":` after it.
		label = append(label[:0], `,"label":`...)
		quoted := appendString(nil, reservation.SectionSeatLabel(section, r.Label, 0))
		label = append(label, quoted[:len(quoted)-2]...) // less the number 0 and the closing quote
		tail = append(tail[:0], '"')
		if section != "" {
			tail = append(tail, `,"section":`...)
			tail = appendString(tail, section)
		}
		tail = append(tail, `,"row":`...)
		tail = appendString(tail, r.Label)
		tail = append(tail, `,"number":`...)
		category := appendString([]byte(`,"category":`), r.Category)
		first := layout.FirstSeat(i)
		for n := 1; n <= r.Seats; n++ {
			id := first + n - 1
			if id > 1 {
				b = append(b, ',')
			}
			b = append(b, `{"seatId":`...)
			b = strconv.AppendInt(b, int64(id), 10)
			b = append(b, `,"status":"`...)
			b = append(b, StatusOf(status[id-1])...)
			b = append(b, '"')
			b = append(b, label...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, tail...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, category...)
			b = append(b, '}')
		}
		if flush != nil && len(b) >= seatMapChunk {
			b = flush(b)
		}
	}
	return append(b, "]}"...)
}

// AppendCompactSeatMap appends the compact seat map of a schedule of
// layout at version, whose seats have the codes status: each row once,
// with its first seat's id and a string of one code per seat.
//
//	{"scheduleId":1,"form":"compact","version":42,"sections":[{"name":"114","rows":[
//	  {"label":"A","firstSeatId":1,"category":"standard","status":"aahr"}]}]}
//
// A layout of rows is one section named "".
func AppendCompactSeatMap(b []byte, scheduleID, version int64, layout reservation.Layout, status []byte) []byte {
	b = append(b, `{"scheduleId":`...)
	b = strconv.AppendInt(b, scheduleID, 10)
	b = append(b, `,"form":"compact","version":`...)
	b = strconv.AppendInt(b, version, 10)
	b = append(b, `,"sections":[`...)
	rows := layout.Rows()
	for s := range layout.SectionCount() {
		if s > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, layout.SectionName(s))
		b = append(b, `,"rows":[`...)
		lo, hi := layout.SectionRows(s)
		for i := lo; i < hi; i++ {
			if i > lo {
				b = append(b, ',')
			}
			first := layout.FirstSeat(i)
			b = append(b, `{"label":`...)
			b = appendString(b, rows[i].Label)
			b = append(b, `,"firstSeatId":`...)
			b = strconv.AppendInt(b, int64(first), 10)
			b = append(b, `,"category":`...)
			b = appendString(b, rows[i].Category)
			b = append(b, `,"status":"`...)
			b = append(b, status[first-1:first-1+rows[i].Seats]...)
			b = append(b, `"}`...)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}
