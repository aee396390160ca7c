package seatmap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// seatJSON is a seat as the API documents it, for encoding/json to render.
type seatJSON struct {
	SeatID   int    `json:"seatId"`
	Status   string `json:"status"`
	Label    string `json:"label,omitempty"`
	Section  string `json:"section,omitempty"`
	Row      string `json:"row,omitempty"`
	Number   int    `json:"number,omitempty"`
	Category string `json:"category,omitempty"`
}

type compactJSON struct {
	ScheduleID int64 `json:"scheduleId"`
	Version    int64 `json:"version"`
	Sections   []struct {
		Name string `json:"name"`
		Rows []struct {
			Label       string `json:"label"`
			FirstSeatID int    `json:"firstSeatId"`
			Category    string `json:"category"`
			Status      string `json:"status"`
		} `json:"rows"`
	} `json:"sections"`
}

// layouts are a layout of rows and one of sections, with non-ASCII labels
// and categories and row labels ending in digits.
func layouts(t testing.TB) map[string]reservation.Layout {
	rows, err := reservation.NewLayout([]reservation.Row{
		{Label: "A", Seats: 3, Category: "vip"}, {Label: "Ä-10", Seats: 2, Category: "ложа_2"}, {Label: "11", Seats: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	sections, err := reservation.NewSectionedLayout([]reservation.Section{
		{Name: "114", Category: "lower", Rows: []reservation.Row{{Label: "A", Seats: 2}, {Label: "9", Seats: 3, Category: "vip"}}},
		{Name: "Nord-Ö", Rows: []reservation.Row{{Label: "Ж", Seats: 4}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]reservation.Layout{"rows": rows, "sections": sections}
}

func statusesOf(layout reservation.Layout) []byte {
	codes := []byte{seatmap.CodeAvailable, seatmap.CodeHeld, seatmap.CodeReserved}
	status := make([]byte, layout.SeatCount())
	for i := range status {
		status[i] = codes[i%len(codes)]
	}
	return status
}

// The hand-written seat map is what encoding/json makes of the documented
// shape, seat by seat, non-ASCII labels and categories included.
func TestSeatMapIsTheDocumentedShape(t *testing.T) {
	t.Parallel()
	for name, layout := range layouts(t) {
		t.Run(name, func(t *testing.T) {
			status := statusesOf(layout)
			want := struct {
				ScheduleID int64      `json:"scheduleId"`
				Form       string     `json:"form"`
				Seats      []seatJSON `json:"seats"`
			}{ScheduleID: 7, Form: "full"}
			for id := 1; id <= layout.SeatCount(); id++ {
				p, _ := layout.Place(id)
				want.Seats = append(want.Seats, seatJSON{SeatID: id, Status: string(seatmap.StatusOf(status[id-1])), Label: p.Label,
					Section: p.Section, Row: p.RowLabel, Number: p.Number, Category: p.Category})
			}
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if got := seatmap.AppendSeatMap(nil, 7, layout, status); string(got) != string(wantJSON) {
				t.Errorf("AppendSeatMap =\n%s\nwant\n%s", got, wantJSON)
			}
			// Each seat as its events carry it, too.
			for id := 1; id <= layout.SeatCount(); id++ {
				p, _ := layout.Place(id)
				one, _ := json.Marshal(want.Seats[id-1])
				if got := seatmap.AppendSeat(nil, id, seatmap.StatusOf(status[id-1]), p); string(got) != string(one) {
					t.Errorf("AppendSeat(%d) = %s, want %s", id, got, one)
				}
			}
		})
	}
}

// The compact map says, row by row, what the full one says seat by seat.
func TestCompactSeatMapAgreesWithTheFullOne(t *testing.T) {
	t.Parallel()
	for name, layout := range layouts(t) {
		t.Run(name, func(t *testing.T) {
			status := statusesOf(layout)
			var compact compactJSON
			if err := json.Unmarshal(seatmap.AppendCompactSeatMap(nil, 7, 42, layout, status), &compact); err != nil {
				t.Fatal(err)
			}
			var full struct {
				Seats []seatJSON `json:"seats"`
			}
			if err := json.Unmarshal(seatmap.AppendSeatMap(nil, 7, layout, status), &full); err != nil {
				t.Fatal(err)
			}
			if compact.ScheduleID != 7 || compact.Version != 42 || len(compact.Sections) != layout.SectionCount() {
				t.Fatalf("compact map %+v: want schedule 7, version 42, %d sections", compact, layout.SectionCount())
			}
			seen := 0
			for _, s := range compact.Sections {
				for _, r := range s.Rows {
					for i, code := range []byte(r.Status) {
						seat := full.Seats[r.FirstSeatID+i-1]
						got := fmt.Sprintf("%d %s %s %s%d %s", r.FirstSeatID+i, seatmap.StatusOf(code), s.Name, r.Label, i+1, r.Category)
						want := fmt.Sprintf("%d %s %s %s%d %s", seat.SeatID, seat.Status, seat.Section, seat.Row, seat.Number, seat.Category)
						if got != want {
							t.Errorf("compact seat %s, full seat %s", got, want)
						}
						seen++
					}
				}
			}
			if seen != layout.SeatCount() {
				t.Errorf("the compact map has %d seats, want %d", seen, layout.SeatCount())
			}
		})
	}
}

// stadium is the venue of the targets: 100 sections × 20 rows × 40 seats.
func stadium(tb testing.TB) reservation.Layout {
	sections := make([]reservation.Section, 100)
	for s := range sections {
		rows := make([]reservation.Row, 20)
		for r := range rows {
			rows[r] = reservation.Row{Label: reservation.RowLabel(r), Seats: 40}
		}
		sections[s] = reservation.Section{Name: fmt.Sprint(101 + s), Rows: rows}
	}
	l, err := reservation.NewSectionedLayout(sections)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func BenchmarkSeatMap(b *testing.B) {
	layout := stadium(b)
	status := statusesOf(layout)
	buf := make([]byte, 0, 10<<20)
	b.ReportAllocs()
	for b.Loop() {
		buf = seatmap.AppendSeatMap(buf[:0], 7, layout, status)
	}
	b.ReportMetric(float64(len(buf)), "bytes/map")
}

func BenchmarkCompactSeatMap(b *testing.B) {
	layout := stadium(b)
	status := statusesOf(layout)
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		buf = seatmap.AppendCompactSeatMap(buf[:0], 7, 1, layout, status)
	}
	b.ReportMetric(float64(len(buf)), "bytes/map")
}

// chunks records what is written to it, and fails every write from the
// failAt-th on (never when failAt is 0).
type chunks struct {
	writes [][]byte
	failAt int
}

var errWriteFailed = errors.New("write failed")

func (c *chunks) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	if c.failAt > 0 && len(c.writes) >= c.failAt {
		return 0, errWriteFailed
	}
	return len(p), nil
}

// Written a few rows at a time, a stadium's map is the same bytes as
// appended at once, and no write holds much more than a chunk.
func TestWrittenSeatMapIsTheAppendedOne(t *testing.T) {
	cases := layouts(t)
	cases["stadium"] = stadium(t)
	for name, layout := range cases {
		t.Run(name, func(t *testing.T) {
			status := statusesOf(layout)
			var w chunks
			if err := seatmap.WriteSeatMap(&w, 7, layout, status); err != nil {
				t.Fatal(err)
			}
			want := seatmap.AppendSeatMap(nil, 7, layout, status)
			if got := bytes.Join(w.writes, nil); !bytes.Equal(got, want) {
				t.Fatalf("written %d bytes, appended %d: they differ", len(got), len(want))
			}
			for i, p := range w.writes {
				if len(p) > 64<<10 {
					t.Fatalf("write %d of %d holds %d bytes", i+1, len(w.writes), len(p))
				}
			}
			if name == "stadium" && len(w.writes) < 100 {
				t.Fatalf("a map of %d bytes went out in %d writes", len(want), len(w.writes))
			}
		})
	}
}

// The first write that fails ends the writing, and its error is returned.
func TestWrittenSeatMapStopsAtAFailedWrite(t *testing.T) {
	w := chunks{failAt: 3}
	err := seatmap.WriteSeatMap(&w, 7, stadium(t), statusesOf(stadium(t)))
	if !errors.Is(err, errWriteFailed) {
		t.Fatalf("err = %v, want %v", err, errWriteFailed)
	}
	if len(w.writes) != 3 {
		t.Fatalf("%d writes, want 3: none after the one that failed", len(w.writes))
	}
}
