package reservation_test

import (
	"slices"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// freeExcept is a free func where the listed seats are taken.
func freeExcept(taken ...int) func(int) bool {
	return func(seat int) bool { return !slices.Contains(taken, seat) }
}

func mustLayout(t *testing.T, rows ...reservation.Row) reservation.Layout {
	t.Helper()
	l, err := reservation.NewLayout(rows)
	if err != nil {
		t.Fatalf("NewLayout: %v", err)
	}
	return l
}

func TestBestBlocksTakeTheRowCentreAtTwoThirdsDepth(t *testing.T) {
	// Four rows of 10: two-thirds of the way back is row C (index 2).
	l := mustLayout(t,
		reservation.Row{Label: "A", Seats: 10}, reservation.Row{Label: "B", Seats: 10},
		reservation.Row{Label: "C", Seats: 10}, reservation.Row{Label: "D", Seats: 10})
	got := reservation.BestBlocks(l, freeExcept(), 2, "", true, 3)
	if len(got) != 3 {
		t.Fatalf("BestBlocks = %d blocks, want 3", len(got))
	}
	if want := []int{25, 26}; !slices.Equal(got[0].Seats, want) { // C5, C6
		t.Errorf("best block = %v, want %v (the middle of row C)", got[0].Seats, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Distance < got[i-1].Distance {
			t.Errorf("block %d (%v, %.2f) is closer than block %d before it (%.2f)", i, got[i].Seats, got[i].Distance, i-1, got[i-1].Distance)
		}
	}
	seen := map[int]bool{}
	for _, b := range got {
		for _, s := range b.Seats {
			if seen[s] {
				t.Fatalf("seat %d is in two blocks: %+v", s, got)
			}
			seen[s] = true
		}
	}
}

func TestBestBlocksAvoidStrandingASeatWithinATier(t *testing.T) {
	// Row of 12, seats 1-3 taken. The closest 4 (5-8, mean 1.0 seat from
	// the centre) would leave seat 4 alone; 4-7 and 6-9 (1.25) are of the
	// same tier and strand nothing.
	l := mustLayout(t, reservation.Row{Label: "A", Seats: 12})
	got := reservation.BestBlocks(l, freeExcept(1, 2, 3), 4, "", true, 8)
	if len(got) == 0 || got[0].Strands != 0 {
		t.Fatalf("best block = %+v, want one that strands no seat", got)
	}
	if want := []int{4, 5, 6, 7}; !slices.Equal(got[0].Seats, want) {
		t.Errorf("best block = %v, want %v", got[0].Seats, want)
	}
	for _, b := range got {
		if slices.Equal(b.Seats, []int{5, 6, 7, 8}) && b.Strands != 1 {
			t.Errorf("block 5-8 strands %d seats, want 1 (seat 4)", b.Strands)
		}
	}
}

func TestBestBlocksKeepToACategoryAndAdjacency(t *testing.T) {
	l := mustLayout(t,
		reservation.Row{Label: "A", Seats: 6, Category: "vip"},
		reservation.Row{Label: "B", Seats: 6},
		reservation.Row{Label: "C", Seats: 6})
	for _, b := range reservation.BestBlocks(l, freeExcept(), 3, "vip", true, 8) {
		for _, s := range b.Seats {
			if s > 6 {
				t.Errorf("vip block %v has seat %d, outside row A", b.Seats, s)
			}
		}
		if b.Seats[2]-b.Seats[0] != 2 {
			t.Errorf("block %v is not consecutive", b.Seats)
		}
	}
	// Row B: 3 taken in the middle; no 4 together in B, but scattered
	// seats are found.
	free := freeExcept(1, 2, 3, 4, 5, 6, 9, 13, 14, 15, 16, 17, 18)
	l2 := mustLayout(t, reservation.Row{Label: "A", Seats: 6}, reservation.Row{Label: "B", Seats: 6}, reservation.Row{Label: "C", Seats: 6})
	if got := reservation.BestBlocks(l2, free, 4, "", true, 8); len(got) != 0 {
		t.Errorf("adjacent 4 = %+v, want none (runs of 2 and 3 only)", got)
	}
	got := reservation.BestBlocks(l2, free, 4, "", false, 8)
	if len(got) != 1 || !slices.Equal(got[0].Seats, []int{7, 8, 10, 11}) && !slices.Equal(got[0].Seats, []int{8, 10, 11, 12}) &&
		!slices.Equal(got[0].Seats, []int{7, 8, 10, 12}) && !slices.Equal(got[0].Seats, []int{7, 10, 11, 12}) {
		t.Errorf("scattered 4 = %+v, want one block of four of seats 7, 8, 10, 11, 12", got)
	}
	if n := reservation.FreeSeats(l2, free, ""); n != 5 {
		t.Errorf("FreeSeats = %d, want 5", n)
	}
}

func TestBestBlocksNoneWhenNothingFits(t *testing.T) {
	l := mustLayout(t, reservation.Row{Label: "A", Seats: 5})
	if got := reservation.BestBlocks(l, freeExcept(3), 3, "", true, 8); len(got) != 0 {
		t.Errorf("BestBlocks = %+v, want none: two runs of 2", got)
	}
	if got := reservation.BestBlocks(l, freeExcept(), 6, "", true, 8); len(got) != 0 {
		t.Errorf("BestBlocks = %+v, want none: 6 seats in a row of 5", got)
	}
}

// BenchmarkBestBlocks weighs a choice of 4 together in the 2,000-seat
// layout of the on-sale targets (40 rows of 50): empty (the most windows
// to weigh), and with a seat in 8 and in 13 taken.
func BenchmarkBestBlocks(b *testing.B) {
	rows := make([]reservation.Row, 40)
	for i := range rows {
		rows[i] = reservation.Row{Label: reservation.SeatLabel("R", i+1), Seats: 50}
	}
	l, err := reservation.NewLayout(rows)
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		free func(seat int) bool
	}{
		{"empty", func(int) bool { return true }},
		{"gaps", func(seat int) bool { return seat%8 != 0 && seat%13 != 0 }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(reservation.BestBlocks(l, bm.free, 4, "", true, 8)) != 8 {
					b.Fatal("fewer than 8 blocks")
				}
			}
		})
	}
}
