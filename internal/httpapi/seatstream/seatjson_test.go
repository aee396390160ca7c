package seatstream_test

import (
	"encoding/json"
	"testing"

	"github.com/seatlock/seatlock/internal/httpapi/seatstream"
	"github.com/seatlock/seatlock/internal/reservation"
)

// seatJSON is a seat as the API documents it, for encoding/json to render.
type seatJSON struct {
	SeatID   int    `json:"seatId"`
	Status   string `json:"status"`
	Label    string `json:"label,omitempty"`
	Row      string `json:"row,omitempty"`
	Number   int    `json:"number,omitempty"`
	Category string `json:"category,omitempty"`
}

func seatsOf(t testing.TB) []reservation.Seat {
	layout, err := reservation.NewLayout([]reservation.Row{
		{Label: "A", Seats: 3, Category: "vip"}, {Label: "Ä-10", Seats: 2, Category: "ложа_2"}, {Label: "11", Seats: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	statuses := []reservation.SeatStatus{reservation.SeatAvailable, reservation.SeatHeld, reservation.SeatReserved}
	seats := make([]reservation.Seat, layout.SeatCount())
	for i := range seats {
		place, _ := layout.Place(i + 1)
		seats[i] = reservation.Seat{ID: i + 1, Status: statuses[i%len(statuses)], Place: place}
	}
	return seats
}

// The hand-written seat map is what encoding/json makes of the documented
// shape, seat by seat, non-ASCII labels and categories included; a seat
// the layout has not is written without its place.
func TestSeatMapJSONIsTheDocumentedShape(t *testing.T) {
	t.Parallel()
	seats := append(seatsOf(t), reservation.Seat{ID: 99, Status: reservation.SeatAvailable})
	want := struct {
		ScheduleID int64      `json:"scheduleId"`
		Seats      []seatJSON `json:"seats"`
	}{ScheduleID: 7}
	for _, s := range seats {
		want.Seats = append(want.Seats, seatJSON{SeatID: s.ID, Status: string(s.Status), Label: s.Place.Label,
			Row: s.Place.RowLabel, Number: s.Place.Number, Category: s.Place.Category})
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := seatstream.SeatMapJSON(7, seats); string(got) != string(wantJSON) {
		t.Errorf("SeatMapJSON =\n%s\nwant\n%s", got, wantJSON)
	}
}

func BenchmarkSeatMapJSON(b *testing.B) {
	layout := reservation.SingleRowLayout(reservation.MaxSeatCount)
	seats := make([]reservation.Seat, layout.SeatCount())
	for i := range seats {
		place, _ := layout.Place(i + 1)
		seats[i] = reservation.Seat{ID: i + 1, Status: reservation.SeatAvailable, Place: place}
	}
	b.ReportAllocs()
	for b.Loop() {
		seatstream.SeatMapJSON(7, seats)
	}
}
