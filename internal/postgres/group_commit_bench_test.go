package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

// BenchmarkLoneBooking books fresh seats one after another, with group
// commit on and off: with nothing else being written, a booking goes at
// once in the one-row statement, so the two must not differ beyond noise
// (an idle store adds no delay).
//
//	go test -run '^$' -bench LoneBooking ./internal/postgres/
func BenchmarkLoneBooking(b *testing.B) {
	for _, writers := range []int{postgres.DefaultGroupWriters, 0} {
		b.Run(fmt.Sprintf("group writers %d", writers), func(b *testing.B) {
			pool := testenv.Pool(b)
			store := postgres.NewStore(pool, postgres.WithGroupWriters(writers))
			tmpl, err := reservation.NewSchedule("Bench", startsAt, reservation.MaxSeatCount)
			if err != nil {
				b.Fatal(err)
			}
			var s reservation.Schedule
			ctx := context.Background()
			seats := 0
			b.ResetTimer()
			for i := range b.N {
				if seats == 0 || seats == reservation.MaxSeatCount {
					b.StopTimer()
					if s, err = store.CreateSchedule(ctx, tmpl); err != nil {
						b.Fatal(err)
					}
					seats = 0
					b.StartTimer()
				}
				seats++
				if _, err := store.InsertReservation(ctx, reservation.NewReservation{
					ScheduleID: s.ID(), SeatID: seats, UserID: "bench", Fence: int64(i + 1),
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
