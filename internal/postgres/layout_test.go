package postgres_test

import (
	"reflect"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Every kind of layout reads back as it was made: a seat count alone, rows,
// and sections (whose rows keep the category they were given or took from
// their section).
func TestLayoutsRoundTrip(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	rows, err := reservation.NewLaidOutSchedule("Rows", startsAt, []reservation.Row{{Label: "A", Seats: 3, Category: "vip"}, {Label: "B", Seats: 2}})
	if err != nil {
		t.Fatal(err)
	}
	sectioned, err := reservation.NewSectionedSchedule("Stadium", startsAt, []reservation.Section{
		{Name: "114", Category: "lower", Rows: []reservation.Row{{Label: "A", Seats: 40_000}, {Label: "B", Seats: 4, Category: "vip"}}},
		{Name: "North", Rows: []reservation.Row{{Label: "A", Seats: 59_996}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := reservation.NewSchedule("Count", startsAt, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []reservation.Schedule{rows, sectioned, plain} {
		t.Run(s.Title(), func(t *testing.T) {
			ctx := testContext(t)
			created, err := store.CreateSchedule(ctx, s)
			if err != nil {
				t.Fatalf("CreateSchedule: %v", err)
			}
			got, err := store.Schedule(ctx, created.ID())
			if err != nil {
				t.Fatal(err)
			}
			want := s.Layout()
			if !reflect.DeepEqual(got.Layout().Sections(), want.Sections()) || got.Layout().Sectioned() != want.Sectioned() || got.SeatCount() != s.SeatCount() {
				t.Errorf("layout read back as %+v (sectioned %v), want %+v (sectioned %v)",
					got.Layout().Sections(), got.Layout().Sectioned(), want.Sections(), want.Sectioned())
			}
		})
	}
}
