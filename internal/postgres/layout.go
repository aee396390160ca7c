package postgres

import (
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

// layoutJSON is what schedules.layout stores for l: NULL (nil) for the
// layout of a seat count alone, which reads back as that.
func layoutJSON(l reservation.Layout) ([]byte, error) {
	rows := l.Rows()
	if len(rows) == 1 && rows[0].Label == reservation.SingleRowLabel && rows[0].Category == reservation.DefaultCategory {
		return nil, nil
	}
	out := make([]layoutRow, len(rows))
	for i, r := range rows {
		out[i] = layoutRow(r)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode layout: %w", err)
	}
	return b, nil
}

// restoreSchedule rebuilds a schedule from its columns; stored is the
// layout column (NULL: one row of seatCount seats).
func restoreSchedule(id int64, title string, startsAt time.Time, seatCount int, stored []byte) (reservation.Schedule, error) {
	if stored == nil {
		return reservation.RestoreSchedule(id, title, startsAt, seatCount), nil
	}
	var rows []layoutRow
	if err := json.Unmarshal(stored, &rows); err != nil {
		return reservation.Schedule{}, fmt.Errorf("schedule %d: decode layout: %w", id, err)
	}
	layout := make([]reservation.Row, len(rows))
	for i, r := range rows {
		layout[i] = reservation.Row(r)
	}
	return reservation.RestoreLaidOutSchedule(id, title, startsAt, reservation.RestoreLayout(layout)), nil
}
