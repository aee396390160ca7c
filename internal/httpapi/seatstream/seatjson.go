package seatstream

import (
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

// SeatMapJSON renders a schedule's seat map: the body of GET
// /schedules/{id}/seats and the snapshot of its live stream.
func SeatMapJSON(scheduleID int64, seats []reservation.Seat) []byte {
	b := make([]byte, 0, 32+len(seats)*96)
	b = append(b, `{"scheduleId":`...)
	b = strconv.AppendInt(b, scheduleID, 10)
	b = append(b, `,"seats":[`...)
	for i, s := range seats {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendSeat(b, s.ID, s.Status, s.Place)
	}
	return append(b, "]}"...)
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
